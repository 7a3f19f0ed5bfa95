//! Approvals routed to chat channels, end to end against local fakes of
//! the services: an escalation fans out to a webhook, Slack and Telegram
//! (Telegram down), a Slack button press resolves an agent's waiting
//! check, a replayed press and an expired link are refused, and one person
//! never meets a quorum of two.

use axum::routing::post;
use hmac::{KeyInit, Mac};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolgate_channels::{LinkAction, LinkSigner};
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy};
use toolgate_gate::SystemClock;
use toolgate_server::{PolicySource, Server, ServerConfig, Tokens};
use toolgate_store_sqlite::{SqliteStore, SyncMode};

/// Where the team reaches the daemon in these tests (a proxy in front of it).
const PUBLIC_URL: &str = "https://toolgate.example.test/tg";
const AGENT: &str = "agent-token-for-channel-tests-0123";
const OPERATOR: &str = "operator-token-for-channel-tests-0123";
const SIGNING: &str = "slack-signing-secret-for-tests";
const LINK_KEY: &[u8] = b"a link key of at least thirty-two bytes, for tests";

/// What the fake services received: (path, body).
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// A fake Slack Web API and webhook receiver on one port.
async fn fake_services() -> (String, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let record = |path: &'static str, answer: Value| {
        let seen = seen.clone();
        post(move |body: String| {
            let seen = seen.clone();
            let answer = answer.clone();
            async move {
                seen.lock().unwrap().push((path.to_string(), body));
                axum::Json(answer)
            }
        })
    };
    let app = axum::Router::new()
        .route(
            "/api/chat.postMessage",
            record(
                "slack.post",
                json!({"ok": true, "channel": "C01", "ts": "1700000000.000100"}),
            ),
        )
        .route(
            "/api/chat.update",
            record("slack.update", json!({"ok": true})),
        )
        .route("/hook", record("webhook", json!({})));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

/// A port nothing listens on: the Telegram that is down.
async fn dead_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}")
}

struct Daemon {
    url: String,
    store: Arc<SqliteStore>,
    http: reqwest::Client,
    /// Removed when the daemon drops.
    _dir: tempfile::TempDir,
}

async fn start(policy: String) -> Daemon {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::Builder::new()
        .prefix("tg-chan-")
        .tempdir()
        .unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("state"), SyncMode::Normal).unwrap());
    let loader: toolgate_server::PolicyLoader = Arc::new(move || {
        Policy::from_toml_str(&policy, "test.toml")
            .map(|p| toolgate_bundle::Bundle::unsourced(Engine::new(p)))
            .map_err(|e| e.to_string())
    });
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        store: store.clone(),
        clock: Arc::new(SystemClock),
        tokens: Tokens::new(AGENT, OPERATOR).unwrap(),
        policy: PolicySource { loader },
        base: Env::new("/home/t", "/home/t/proj"),
        link_key: Some(LINK_KEY.to_vec()),
    };
    let server = Server::bind(config).await.unwrap();
    // As behind the recommended TLS proxy: links must not point at loopback.
    server.set_public_url(PUBLIC_URL).unwrap();
    let url = format!("http://{}", server.local_addr().unwrap());
    tokio::spawn(server.run(std::future::pending()));
    Daemon {
        url,
        store,
        http: reqwest::Client::new(),
        _dir: dir,
    }
}

impl Daemon {
    async fn send(&self, r: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let resp = r.send().await.unwrap();
        let status = resp.status();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn check(&self, command: &str, wait: Option<&str>) -> Value {
        let url = match wait {
            Some(w) => format!("{}/v1/check?wait={w}", self.url),
            None => format!("{}/v1/check", self.url),
        };
        let call = json!({"tool": "exec", "params": {"command": command}, "session": "s1", "requester": {"id": "carol"}});
        let (s, v) = self
            .send(
                self.http
                    .post(url)
                    .bearer_auth(AGENT)
                    .body(call.to_string()),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v
    }

    async fn approval(&self, id: &str) -> Value {
        let r = self
            .http
            .get(format!("{}/v1/approvals/{id}", self.url))
            .bearer_auth(OPERATOR);
        self.send(r).await.1
    }

    /// Presses a Slack button as `user` on approval `id`, signed now.
    async fn press(
        &self,
        user: &str,
        id: &str,
        approve: bool,
        trigger: &str,
    ) -> (StatusCode, Value, String, String) {
        let payload = json!({
            "type": "block_actions",
            "trigger_id": trigger,
            "user": {"id": user},
            "channel": {"id": "C01"},
            "message": {"ts": "1700000000.000100"},
            "response_url": "http://127.0.0.1:9/unused",
            "actions": [{
                "action_id": if approve { "toolgate_approve" } else { "toolgate_deny" },
                "value": id,
                "action_ts": "1700000001.000200"
            }]
        });
        let body: String = form_urlencoded_body(&payload.to_string());
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            .to_string();
        let sig = slack_signature(&ts, &body);
        let (s, v) = self.replay(&ts, &sig, &body).await;
        (s, v, ts, sig)
    }

    async fn replay(&self, ts: &str, sig: &str, body: &str) -> (StatusCode, Value) {
        let r = self
            .http
            .post(format!("{}/v1/channels/ops-slack/callback", self.url))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("x-slack-request-timestamp", ts)
            .header("x-slack-signature", sig)
            .body(body.to_string());
        self.send(r).await
    }
}

fn form_urlencoded_body(payload: &str) -> String {
    let mut out = String::from("payload=");
    for b in payload.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn slack_signature(ts: &str, body: &str) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SIGNING.as_bytes()).unwrap();
    mac.update(format!("v0:{ts}:{body}").as_bytes());
    format!("v0={}", toolgate_core::hex(&mac.finalize().into_bytes()))
}

async fn until(what: &str, mut f: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not happen within 10 s");
}

#[tokio::test]
async fn an_escalation_fans_out_and_a_slack_press_resolves_the_waiting_call() {
    let (base, seen) = fake_services().await;
    let telegram = dead_port().await;
    // Variables only this test reads (the process environment is shared).
    unsafe {
        std::env::set_var("TGT_CHAN_SLACK_TOKEN", "xoxb-test-token");
        std::env::set_var("TGT_CHAN_SLACK_SIGNING", SIGNING);
        std::env::set_var("TGT_CHAN_TG_TOKEN", "123456:telegram-test-token");
        std::env::set_var("TGT_CHAN_TG_SECRET", "telegram-webhook-secret");
        std::env::set_var("TGT_CHAN_HOOK_SECRET", "webhook-secret-for-tests-0123");
    }
    let policy = format!(
        r#"[approvals]
require_user = []

[[approvals.routing.target]]
name = "ops-slack"
kind = "slack"
channel = "C01"
bot_token_env = "TGT_CHAN_SLACK_TOKEN"
signing_secret_env = "TGT_CHAN_SLACK_SIGNING"
api_base = "{base}/api"

[[approvals.routing.target]]
name = "ops-telegram"
kind = "telegram"
chat_id = 42
bot_token_env = "TGT_CHAN_TG_TOKEN"
webhook_secret_env = "TGT_CHAN_TG_SECRET"
api_base = "{telegram}"
timeout = "1s"

[[approvals.routing.target]]
name = "mail-relay"
kind = "webhook"
url = "{base}/hook"
secret_env = "TGT_CHAN_HOOK_SECRET"
links_for = "alice"
"#
    );
    let d = start(policy).await;
    let clock = SystemClock;
    toolgate_gate::add_operator(&*d.store, &clock, "alice", &["slack:UALICE".into()], "test")
        .unwrap();
    toolgate_gate::add_operator(&*d.store, &clock, "bob", &["slack:UBOB".into()], "test").unwrap();

    // An agent's call waits for its approval.
    let waiting = {
        let (url, http) = (d.url.clone(), d.http.clone());
        tokio::spawn(async move {
            // A trailing comment with a right-to-left override: people in
            // chat must see it, not have it reorder what they approve.
            let call = json!({"tool": "exec", "params": {"command": "git push origin main #\u{202e}niam"}, "session": "s1", "requester": {"id": "carol"}});
            let resp = http
                .post(format!("{url}/v1/check?wait=20s"))
                .bearer_auth(AGENT)
                .body(call.to_string())
                .send()
                .await
                .unwrap();
            resp.json::<Value>().await.unwrap()
        })
    };
    // It reaches Slack and the webhook; Telegram, down, is retried.
    until("the Slack message and the webhook", async || {
        let s = seen.lock().unwrap();
        s.iter().any(|(p, _)| p == "slack.post") && s.iter().any(|(p, _)| p == "webhook")
    })
    .await;
    let (slack_post, hook) = {
        let s = seen.lock().unwrap();
        let get = |p: &str| s.iter().find(|(x, _)| x == p).unwrap().1.clone();
        (get("slack.post"), get("webhook"))
    };
    assert!(
        slack_post.contains("toolgate_approve") && slack_post.contains("git push origin main"),
        "{slack_post}"
    );
    assert!(
        !slack_post.contains("/v1/links/"),
        "links never go to a shared chat: {slack_post}"
    );
    assert!(
        slack_post.contains(&format!("{PUBLIC_URL}/#approval/"))
            && !slack_post.contains("127.0.0.1"),
        "the dashboard link is the public URL's: {slack_post}"
    );
    let hook: Value = serde_json::from_str(&hook).unwrap();
    assert_eq!(hook["type"], "approval.requested");
    let summary = hook["approval"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("#\\u{202e}niam") && !summary.contains('\u{202e}'),
        "{summary}"
    );
    let id = hook["approval"]["approval_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        hook["approval"]["approve_url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{PUBLIC_URL}/v1/links/")),
        "{hook}"
    );
    until("Telegram reported as failing", async || {
        let v = d.approval(&id).await;
        v["deliveries"].as_array().is_some_and(|a| {
            a.iter().any(|t| {
                t["name"] == "ops-telegram"
                    && t["state"].to_string().to_lowercase().contains("retry")
            }) && a
                .iter()
                .any(|t| t["name"] == "ops-slack" && t["state"].to_string().contains("delivered"))
        })
    })
    .await;

    let state = d
        .send(
            d.http
                .get(format!("{}/v1/state", d.url))
                .bearer_auth(OPERATOR),
        )
        .await
        .1;
    assert_eq!(
        state["deliveries"][&id]["ops-slack"]["state"]["state"], "delivered",
        "{state}"
    );
    assert!(state["deliveries"][&id]["ops-telegram"]["state"]["state"] != "delivered");
    let ready: Vec<(&str, bool)> = state["routing"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["ready"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        ready,
        [
            ("ops-slack", true),
            ("ops-telegram", true),
            ("mail-relay", true)
        ]
    );

    // A press by someone who is not an operator counts for nothing.
    let (s, v, _, _) = d.press("UMALLORY", &id, true, "trigger-0").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["text"].as_str().unwrap().contains("not linked"), "{v}");
    assert_eq!(d.approval(&id).await["state"], "pending");

    // alice approves in Slack: the waiting call is allowed.
    let (s, v, ts, sig) = d.press("UALICE", &id, true, "trigger-1").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(v["text"].as_str().unwrap().contains("alice"), "{v}");
    let answer = tokio::time::timeout(Duration::from_secs(15), waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answer["decision"], "allow", "{answer}");
    let shown = d.approval(&id).await;
    assert_eq!(shown["votes"][0]["identity"], "alice");
    assert_eq!(shown["votes"][0]["channel"], "slack");

    // The same press again is refused, signature and all.
    let body = form_urlencoded_body(
        &json!({
            "type": "block_actions", "trigger_id": "trigger-1", "user": {"id": "UALICE"},
            "channel": {"id": "C01"}, "message": {"ts": "1700000000.000100"},
            "response_url": "http://127.0.0.1:9/unused",
            "actions": [{"action_id": "toolgate_approve", "value": id, "action_ts": "1700000001.000200"}]
        })
        .to_string(),
    );
    let (s, _) = d.replay(&ts, &sig, &body).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    // And a forged one.
    let (s, _) = d.replay(&ts, "v0=00", &body).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);

    // The Slack message is updated with the outcome.
    until("the Slack message updated", async || {
        seen.lock()
            .unwrap()
            .iter()
            .any(|(p, b)| p == "slack.update" && b.contains("alice"))
    })
    .await;

    // An expired link is refused, on GET and on POST.
    let signer = LinkSigner::new(LINK_KEY).unwrap();
    let old = signer
        .sign(&id, "alice", LinkAction::Approve, 1_000)
        .unwrap();
    for r in [
        d.http.get(format!("{}/v1/links/{old}", d.url)),
        d.http.post(format!("{}/v1/links/{old}", d.url)),
    ] {
        let resp = r.send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(
            resp.text()
                .await
                .unwrap()
                .to_lowercase()
                .contains("expired")
        );
    }
}

#[tokio::test]
async fn one_person_pressing_twice_never_meets_a_quorum_of_two_and_a_link_works_once() {
    let (base, _seen) = fake_services().await;
    unsafe {
        std::env::set_var("TGT_CHAN2_SLACK_TOKEN", "xoxb-test-token");
        std::env::set_var("TGT_CHAN2_SLACK_SIGNING", SIGNING);
    }
    let policy = format!(
        r#"[[approvals.routing.target]]
name = "ops-slack"
kind = "slack"
channel = "C01"
bot_token_env = "TGT_CHAN2_SLACK_TOKEN"
signing_secret_env = "TGT_CHAN2_SLACK_SIGNING"
api_base = "{base}/api"
"#
    );
    let d = start(policy).await;
    let clock = SystemClock;
    let (_, alice_token) =
        toolgate_gate::add_operator(&*d.store, &clock, "alice", &["slack:UALICE".into()], "test")
            .unwrap();
    toolgate_gate::add_operator(&*d.store, &clock, "bob", &["slack:UBOB".into()], "test").unwrap();

    // R4: two people.
    let v = d.check("git push --force origin main", None).await;
    assert_eq!(v["approval"]["min_approvals"], 2, "{v}");
    let id = v["approval"]["id"].as_str().unwrap().to_string();
    let (s, v, _, _) = d.press("UALICE", &id, true, "t-a1").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (_, v, _, _) = d.press("UALICE", &id, true, "t-a2").await;
    assert!(v["text"].as_str().unwrap().contains("already voted"), "{v}");
    let r = d
        .http
        .post(format!("{}/v1/approvals/{id}/approve", d.url))
        .bearer_auth(&alice_token);
    let (s, _) = d.send(r).await;
    assert_eq!(s, StatusCode::CONFLICT);
    let shown = d.approval(&id).await;
    assert_eq!(
        (shown["state"].as_str(), shown["have"].as_u64()),
        (Some("pending"), Some(1))
    );

    // bob's link approves, once.
    let signer = LinkSigner::new(LINK_KEY).unwrap();
    let link = signer
        .sign(&id, "bob", LinkAction::Approve, 4_000_000_000)
        .unwrap();
    let page = d
        .http
        .get(format!("{}/v1/links/{link}", d.url))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_link_page_is_locked_down(page.headers());
    assert_eq!(
        d.approval(&id).await["state"],
        "pending",
        "opening a link votes nothing"
    );
    let used = d
        .http
        .post(format!("{}/v1/links/{link}", d.url))
        .send()
        .await
        .unwrap();
    assert_eq!(used.status(), StatusCode::OK);
    assert_link_page_is_locked_down(used.headers());
    let shown = d.approval(&id).await;
    assert_eq!(shown["state"], "approved", "{shown}");
    assert_eq!(shown["votes"][1]["channel"], "link");
    let again = d
        .http
        .post(format!("{}/v1/links/{link}", d.url))
        .send()
        .await
        .unwrap();
    assert_ne!(again.status(), StatusCode::OK);
    assert_link_page_is_locked_down(again.headers());
    // A link that does not verify gets the same page headers.
    let bad = d
        .http
        .get(format!("{}/v1/links/not-a-link", d.url))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    assert_link_page_is_locked_down(bad.headers());
    let body = bad.text().await.unwrap();
    assert!(
        !body.contains("<script") && !body.contains("style="),
        "{body}"
    );
}

/// The one-time link page: strict CSP (no script, nothing loaded, no
/// framing), never cached, never framed, never a referrer.
fn assert_link_page_is_locked_down(h: &reqwest::header::HeaderMap) {
    let csp = h["content-security-policy"].to_str().unwrap();
    for directive in [
        "default-src 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    assert_eq!(h["cache-control"], "no-store");
    assert_eq!(h["x-frame-options"], "DENY");
    assert_eq!(h["referrer-policy"], "no-referrer");
    assert_eq!(h["x-content-type-options"], "nosniff");
}

#[tokio::test]
async fn a_telegram_press_is_answered_in_the_webhook_reply_and_counted_once() {
    unsafe {
        std::env::set_var("TGT_CHAN3_TG_TOKEN", "123456:telegram-test-token");
        std::env::set_var("TGT_CHAN3_TG_SECRET", "telegram-webhook-secret-3");
    }
    let dead = dead_port().await;
    let policy = format!(
        r#"[approvals]
require_user = []

[[approvals.routing.target]]
name = "team-telegram"
kind = "telegram"
chat_id = 42
bot_token_env = "TGT_CHAN3_TG_TOKEN"
webhook_secret_env = "TGT_CHAN3_TG_SECRET"
api_base = "{dead}"
"#
    );
    let d = start(policy).await;
    toolgate_gate::add_operator(
        &*d.store,
        &SystemClock,
        "dan",
        &["telegram:555".into()],
        "test",
    )
    .unwrap();
    let id = d.check("git push origin main", None).await["approval"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let update = json!({"update_id": 1, "callback_query": {
        "id": "cbq-1", "from": {"id": 555, "is_bot": false, "first_name": "Dan"},
        "data": format!("a:{id}"), "message": {"message_id": 10, "chat": {"id": 42}}
    }})
    .to_string();
    let post = |secret: &'static str| {
        d.http
            .post(format!("{}/v1/channels/team-telegram/callback", d.url))
            .header("content-type", "application/json")
            .header("x-telegram-bot-api-secret-token", secret)
            .body(update.clone())
    };
    let (s, _) = d.send(post("wrong-secret")).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, v) = d.send(post("telegram-webhook-secret-3")).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["method"], "answerCallbackQuery", "{v}");
    assert_eq!(v["callback_query_id"], "cbq-1");
    assert!(v["text"].as_str().unwrap().contains("dan"), "{v}");
    let shown = d.approval(&id).await;
    assert_eq!(shown["state"], "approved", "{shown}");
    assert_eq!(shown["votes"][0]["channel"], "telegram");
    let (s, _) = d.send(post("telegram-webhook-secret-3")).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "a replayed update");
}

/// A call OpenClaw makes for a Slack user carries their bare id as the
/// requester; that user's own button press, as the operator linked to the
/// account, is refused. A flood of identical calls is one approval and one
/// chat message; a flood of distinct ones is held at the session's share.
#[tokio::test]
async fn the_requesters_own_press_is_refused_and_a_flood_sends_few_messages() {
    let (base, seen) = fake_services().await;
    unsafe {
        std::env::set_var("TGT_CHAN4_SLACK_TOKEN", "xoxb-test-token");
        std::env::set_var("TGT_CHAN4_SLACK_SIGNING", SIGNING);
    }
    let policy = format!(
        r#"[approvals]
max_open_per_session = 3

[[approvals.routing.target]]
name = "ops-slack"
kind = "slack"
channel = "C01"
bot_token_env = "TGT_CHAN4_SLACK_TOKEN"
signing_secret_env = "TGT_CHAN4_SLACK_SIGNING"
api_base = "{base}/api"
"#
    );
    let d = start(policy).await;
    let clock = SystemClock;
    toolgate_gate::add_operator(&*d.store, &clock, "alice", &["slack:UALICE".into()], "test")
        .unwrap();
    toolgate_gate::add_operator(&*d.store, &clock, "bob", &["slack:UBOB".into()], "test").unwrap();
    let check = async |command: &str, requester: &str| {
        let call = json!({"tool": "exec", "params": {"command": command}, "session": "agent:main:slack:direct:x", "requester": {"id": requester}});
        let (s, v) = d
            .send(
                d.http
                    .post(format!("{}/v1/check", d.url))
                    .bearer_auth(AGENT)
                    .body(call.to_string()),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v
    };
    let v = check("git push origin main", "UALICE").await;
    let id = v["approval"]["id"].as_str().unwrap().to_string();
    let (s, v, _, _) = d.press("UALICE", &id, true, "t-own").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert!(
        v["text"].as_str().unwrap().contains("separation of duties"),
        "{v}"
    );
    assert_eq!(d.approval(&id).await["state"], "pending");
    let (_, v, _, _) = d.press("UBOB", &id, true, "t-bob").await;
    assert!(v["text"].as_str().unwrap().contains("as bob"), "{v}");
    assert_eq!(d.approval(&id).await["state"], "approved");

    // 50 identical calls: one approval, one message.
    let posts = || {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == "slack.post")
            .count()
    };
    let before = posts();
    let mut ids = std::collections::BTreeSet::new();
    for _ in 0..50 {
        let v = check("npm publish", "carol").await;
        ids.insert(v["approval"]["id"].as_str().unwrap().to_string());
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    // 50 distinct ones from the same session: its share (3 open: the
    // approved one not yet used, the identical one, one more), then blocked.
    let mut blocked = 0;
    for i in 0..50 {
        if check(&format!("docker push img:{i}"), "carol").await["decision"] == "block" {
            blocked += 1;
        }
    }
    assert_eq!(blocked, 49);
    until("the messages for the new approvals", async || {
        posts() >= before + 2
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(posts(), before + 2, "one message per approval, no more");
}

#[tokio::test]
async fn a_test_message_reaches_a_target_or_says_why_it_cannot() {
    let (base, seen) = fake_services().await;
    let telegram = dead_port().await;
    // Variables only this test reads (the process environment is shared).
    unsafe {
        std::env::set_var("TGT_TEST_SLACK_TOKEN", "xoxb-test-token");
        std::env::set_var("TGT_TEST_SLACK_SIGNING", SIGNING);
        std::env::set_var("TGT_TEST_TG_TOKEN", "123456:telegram-test-token");
        std::env::set_var("TGT_TEST_TG_SECRET", "telegram-webhook-secret");
        std::env::remove_var("TGT_TEST_UNSET_TOKEN");
    }
    let policy = format!(
        r#"[[approvals.routing.target]]
name = "ops-slack"
kind = "slack"
channel = "C01"
bot_token_env = "TGT_TEST_SLACK_TOKEN"
signing_secret_env = "TGT_TEST_SLACK_SIGNING"
api_base = "{base}/api"

[[approvals.routing.target]]
name = "ops-telegram"
kind = "telegram"
chat_id = 42
bot_token_env = "TGT_TEST_TG_TOKEN"
webhook_secret_env = "TGT_TEST_TG_SECRET"
api_base = "{telegram}"
timeout = "1s"

[[approvals.routing.target]]
name = "unready"
kind = "slack"
channel = "C02"
bot_token_env = "TGT_TEST_UNSET_TOKEN"
signing_secret_env = "TGT_TEST_SLACK_SIGNING"
"#
    );
    let d = start(policy).await;
    let test = |name: &str, token: &str| {
        d.http
            .post(format!("{}/v1/channels/{name}/test", d.url))
            .bearer_auth(token.to_string())
    };
    let (s, v) = d.send(test("ops-slack", OPERATOR)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["delivered"], true, "{v}");
    let post = {
        let s = seen.lock().unwrap();
        s.iter()
            .find(|(p, _)| p == "slack.post")
            .map(|(_, b)| b.clone())
            .unwrap_or_default()
    };
    assert!(
        post.contains("toolgate test message") && post.contains(&format!("{PUBLIC_URL}/")),
        "{post}"
    );
    // Unreachable: what went wrong, from the service's side.
    let (s, v) = d.send(test("ops-telegram", OPERATOR)).await;
    assert_eq!(s, StatusCode::BAD_GATEWAY, "{v}");
    assert!(v.to_string().contains("ops-telegram"), "{v}");
    // Not ready: which variable is missing.
    let (s, v) = d.send(test("unready", OPERATOR)).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(v.to_string().contains("TGT_TEST_UNSET_TOKEN"), "{v}");
    // Unknown: the names there are.
    let (s, v) = d.send(test("nope", OPERATOR)).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert!(v.to_string().contains("ops-slack"), "{v}");
    // Operators only.
    let (s, _) = d.send(test("ops-slack", AGENT)).await;
    assert!(
        s == StatusCode::FORBIDDEN || s == StatusCode::UNAUTHORIZED,
        "{s}"
    );
}
