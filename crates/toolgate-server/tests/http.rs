//! The daemon over real HTTP on loopback: every endpoint, with right, wrong
//! and missing tokens, and with bad input of every kind.

use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use toolgate_core::paths::Env;
use toolgate_core::{Signals, detect};
use toolgate_gate::{Clock, SystemClock};
use toolgate_server::{PolicySource, Server, ServerConfig, Tokens};
use toolgate_store_sqlite::{SqliteStore, SyncMode};

const AGENT: &str = "agent-token-for-tests-0123456789";
const OPERATOR: &str = "operator-token-for-tests-0123456789";
const DEFAULT_POLICY: &str = include_str!("../../../policies/default.toml");

struct Daemon {
    url: String,
    store: Arc<SqliteStore>,
    /// The policy file and the store; removed when the last holder drops
    /// (a restarted daemon shares it).
    dir: Arc<tempfile::TempDir>,
    http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// A reqwest client (reqwest is built without a TLS provider of its own).
fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// A fresh directory, removed with everything in it when the guard drops.
fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("tg-http-")
        .tempdir()
        .unwrap()
}

fn loader_for(path: &Path) -> toolgate_server::PolicyLoader {
    let path = path.to_path_buf();
    Arc::new(move || {
        let env = toolgate_bundle::LoadEnv {
            home: "/home/t".into(),
            cwd: "/home/t/proj".into(),
            posture: &|| detect(&Signals::default()),
        };
        toolgate_bundle::load(Some(&path), &env).map_err(|e| e.to_string())
    })
}

/// Starts a daemon on a free port with `policy` written to a file it watches.
async fn start(policy: &str) -> Daemon {
    start_with(policy, None).await
}

/// [`start`], signing the audit log's checkpoints with `key` if given.
async fn start_with(policy: &str, key: Option<Arc<toolgate_gate::DaemonKey>>) -> Daemon {
    start_in(Arc::new(temp_dir()), policy, key).await
}

/// [`start_with`] on the policy file and store in `dir` (a restart when
/// another daemon used it before).
async fn start_in(
    dir: Arc<tempfile::TempDir>,
    policy: &str,
    key: Option<Arc<toolgate_gate::DaemonKey>>,
) -> Daemon {
    let policy_path = dir.path().join("policy.toml");
    std::fs::write(&policy_path, policy).unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("state"), SyncMode::Normal).unwrap());
    let config = ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        store: store.clone(),
        clock: Arc::new(SystemClock),
        tokens: Tokens::new(AGENT, OPERATOR).unwrap(),
        policy: PolicySource {
            loader: loader_for(&policy_path),
        },
        base: Env::new("/home/t", "/home/t/proj"),
        link_key: None,
    };
    let server = Server::bind(config).await.unwrap();
    if let Some(key) = key {
        server.sign_audit_with(key);
    }
    let url = format!("http://{}", server.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    Daemon {
        url,
        store,
        dir,
        http: client(),
        stop: Some(stop),
    }
}

impl Daemon {
    async fn post(
        &self,
        path: &str,
        token: Option<&str>,
        body: impl Into<reqwest::Body>,
    ) -> (StatusCode, Value) {
        let r = self.http.post(format!("{}{path}", self.url)).body(body);
        send(r, token).await
    }

    /// `/metrics` as an operator: the Prometheus text (asserts a 200).
    async fn metrics(&self) -> String {
        let m = self
            .http
            .get(format!("{}/metrics", self.url))
            .bearer_auth(OPERATOR)
            .send()
            .await
            .unwrap();
        assert_eq!(m.status(), StatusCode::OK);
        m.text().await.unwrap()
    }

    async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        send(self.http.get(format!("{}{path}", self.url)), token).await
    }

    /// The id of the open approval whose summary is `summary`, once a
    /// waiting call has created it (polls for up to 5 s).
    async fn open_approval(&self, summary: &str) -> String {
        for _ in 0..100 {
            let (_, v) = self.get("/v1/approvals", Some(OPERATOR)).await;
            let found = v["approvals"]
                .as_array()
                .and_then(|a| a.iter().find(|x| x["summary"] == summary))
                .and_then(|a| a["id"].as_str())
                .map(str::to_string);
            if let Some(id) = found {
                return id;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("no open approval for {summary:?} within 5 s");
    }

    /// Adds a named operator; returns their token.
    fn add_operator(&self, name: &str) -> String {
        toolgate_gate::add_operator(&*self.store, &SystemClock, name, &[], "test")
            .unwrap()
            .1
    }

    async fn check(&self, call: Value) -> Value {
        let (s, v) = self.post("/v1/check", Some(AGENT), call.to_string()).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        v
    }
}

/// Sends a request (with the token, if any) and reads a JSON answer.
async fn send(mut r: reqwest::RequestBuilder, token: Option<&str>) -> (StatusCode, Value) {
    if let Some(t) = token {
        r = r.bearer_auth(t);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    let v = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:?}"));
    (status, v)
}

fn exec(cmd: &str) -> Value {
    json!({"tool": "exec", "params": {"command": cmd}, "session": "s1", "requester": {"id": "alice"}})
}

fn error_code(v: &Value) -> &str {
    v["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("no error code in {v}"))
}

#[tokio::test]
async fn check_decides_and_records() {
    let d = start(DEFAULT_POLICY).await;
    let v = d.check(exec("ls -la")).await;
    assert_eq!(v["decision"], "allow");
    assert!(v["audit_seq"].as_u64().unwrap() > 0);
    assert_eq!(v["outcome"], "allow", "{v}");
    let v = d.check(exec("rm -rf /")).await;
    assert_eq!(v["decision"], "block");
    assert_eq!(v["outcome"], "block", "{v}");
    assert!(
        v["block_reason"]
            .as_str()
            .unwrap()
            .starts_with("TOOLGATE_BLOCK|")
    );
    let v = d.check(exec("git push origin main")).await;
    assert_eq!(v["decision"], "escalate");
    let id = v["approval"]["id"].as_str().unwrap();
    assert_eq!(id.len(), 32);
    assert_eq!(
        v["approval"]["approve_url"],
        format!("{}/#approval/{id}", d.url)
    );
    // The operator token may check too.
    let (s, _) = d
        .post("/v1/check", Some(OPERATOR), exec("ls").to_string())
        .await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test]
async fn tokens_are_required_and_roles_enforced() {
    let d = start(DEFAULT_POLICY).await;
    let body = exec("ls").to_string();
    let (s, v) = d.post("/v1/check", None, body.clone()).await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let (s, v) = d
        .post("/v1/check", Some("not-a-token-at-all-xxxxxx"), body.clone())
        .await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let (s, _) = d
        .post("/v1/check", Some(&AGENT[..AGENT.len() - 1]), body)
        .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    // Operator-only endpoints refuse the agent token and no token.
    for path in [
        "/v1/approvals",
        "/v1/decisions",
        "/v1/state",
        "/v1/audit/verify",
    ] {
        let (s, v) = d.get(path, Some(AGENT)).await;
        assert_eq!(
            (s, error_code(&v)),
            (StatusCode::FORBIDDEN, "forbidden"),
            "{path}"
        );
        let (s, _) = d.get(path, None).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{path}");
    }
    let m = d
        .http
        .get(format!("{}/metrics", d.url))
        .bearer_auth(AGENT)
        .send()
        .await
        .unwrap();
    assert_eq!(m.status(), StatusCode::FORBIDDEN);
    // An agent can never approve or deny, whatever it sends.
    let id = d.check(exec("git push origin main")).await["approval"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for verb in ["approve", "deny"] {
        let (s, v) = d
            .post(&format!("/v1/approvals/{id}/{verb}"), Some(AGENT), "{}")
            .await;
        assert_eq!((s, error_code(&v)), (StatusCode::FORBIDDEN, "forbidden"));
    }
    let (_, v) = d.get(&format!("/v1/approvals/{id}"), Some(OPERATOR)).await;
    assert_eq!(v["state"], "pending");
    assert_eq!(v["votes"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn bad_input_gets_a_clear_4xx_and_the_server_keeps_serving() {
    let d = start(DEFAULT_POLICY).await;
    let big = format!(
        r#"{{"tool":"exec","params":{{"command":"{}"}}}}"#,
        "a".repeat(2 << 20)
    );
    let (s, v) = d.post("/v1/check", Some(AGENT), big).await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    );
    let deep = format!(
        r#"{{"tool":"exec","params":{{"a":{}1{}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let (s, v) = d.post("/v1/check", Some(AGENT), deep).await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    assert!(v["error"]["message"].as_str().unwrap().contains("deeper"));
    let (s, v) = d
        .post(
            "/v1/check",
            Some(AGENT),
            b"{\"tool\":\"exec\",\"params\":{\"command\":\"ls \xff\"}}".to_vec(),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["error"]["message"].as_str().unwrap().contains("UTF-8"));
    for (body, needle) in [
        (r#"{"tool": 3}"#, "must be a string"),
        (r#"{"tool": "exec", "params": "rm -rf /"}"#, "params"),
        (r#"{"params": {}}"#, "missing \"tool\""),
        (r#"[1, 2]"#, "JSON object"),
        (
            r#"{"tool": "exec", "params": {}, "session": {"a": 1}}"#,
            "not a ToolCall",
        ),
        (r#"{"tool": "Bash"}"#, "missing \"params\""),
        (
            r#"{"tool": "exec", "param": {"command": "rm -rf /"}}"#,
            "did you mean \"params\"",
        ),
        (r#"{"tool": "exec""#, "not valid JSON"),
        ("", "empty"),
    ] {
        let (s, v) = d.post("/v1/check", Some(AGENT), body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");
        let m = v["error"]["message"].as_str().unwrap();
        assert!(m.contains(needle), "{body}: {m}");
    }
    let (s, v) = d
        .post(
            "/v1/check?wait=forever",
            Some(AGENT),
            exec("ls").to_string(),
        )
        .await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    let (s, v) = d.get("/v1/decisions?limit=lots", Some(OPERATOR)).await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    let (s, v) = d.get("/v1/nothing-here", Some(OPERATOR)).await;
    assert_eq!((s, error_code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    let (s, v) = d.get("/v1/check", Some(AGENT)).await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );
    let (s, v) = d.post("/v1/approvals/zz/approve", Some(OPERATOR), "").await;
    assert_eq!((s, error_code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    let (s, v) = d
        .post(
            &format!("/v1/approvals/{}/approve", "0".repeat(32)),
            Some(OPERATOR),
            "",
        )
        .await;
    assert_eq!((s, error_code(&v)), (StatusCode::NOT_FOUND, "not_found"));
    // Still serving.
    assert_eq!(d.check(exec("ls")).await["decision"], "allow");
}

#[tokio::test]
async fn an_oversized_chunked_body_is_a_413() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let d = start(DEFAULT_POLICY).await;
    let mut s = tokio::net::TcpStream::connect(d.url.trim_start_matches("http://"))
        .await
        .unwrap();
    // No Content-Length: the limit can only be found while reading.
    let head = format!(
        "POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {AGENT}\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("10000\r\n{}\r\n", "a".repeat(0x10000));
    for _ in 0..20 {
        if s.write_all(chunk.as_bytes()).await.is_err() {
            break; // the server may stop reading once over the limit
        }
    }
    let _ = s.write_all(b"0\r\n\r\n").await;
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("payload_too_large"), "{answer}");
}

#[tokio::test]
async fn operators_approve_and_deny_and_the_retry_consumes() {
    let d = start(DEFAULT_POLICY).await;
    let call = exec("git push origin main");
    let id = d.check(call.clone()).await["approval"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (s, v) = d.get("/v1/approvals", Some(OPERATOR)).await;
    assert_eq!(s, StatusCode::OK);
    let listed = v["approvals"].as_array().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["summary"], "git push origin main");
    let alice = d.add_operator("alice");
    let bob = d.add_operator("bob");
    // The requester cannot approve their own call.
    let (s, v) = d
        .post(&format!("/v1/approvals/{id}/approve"), Some(&alice), "")
        .await;
    assert_eq!((s, error_code(&v)), (StatusCode::CONFLICT, "refused"));
    // A typed name cannot make a vote someone else's.
    let (s, v) = d
        .post(
            &format!("/v1/approvals/{id}/approve"),
            Some(OPERATOR),
            r#"{"as": "bob"}"#,
        )
        .await;
    assert_eq!((s, error_code(&v)), (StatusCode::FORBIDDEN, "forbidden"));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("operators add")
    );
    let (s, v) = d
        .post(
            &format!("/v1/approvals/{id}/approve"),
            Some(OPERATOR),
            r#"{"as": 5}"#,
        )
        .await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    let (s, v) = d
        .post(
            &format!("/v1/approvals/{id}/approve"),
            Some(&bob),
            r#"{"as": "bob", "reason": "release"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["outcome"], "approved");
    assert_eq!(v["approval"]["state"], "approved");
    assert_eq!(v["approval"]["votes"][0]["identity"], "bob");
    assert_eq!(v["approval"]["votes"][0]["channel"], "http");
    assert_eq!(d.check(call.clone()).await["decision"], "allow");
    // Used once: the next identical call needs a new approval.
    let again = d.check(call).await;
    assert_eq!(again["decision"], "escalate");
    let id2 = again["approval"]["id"].as_str().unwrap().to_string();
    assert_ne!(id2, id);
    let (s, v) = d
        .post(&format!("/v1/approvals/{id2}/deny"), Some(OPERATOR), "")
        .await;
    assert_eq!((s, v["outcome"].as_str()), (StatusCode::OK, Some("denied")));
    assert_eq!(
        d.check(exec("git push origin main")).await["decision"],
        "block"
    );
    let (_, all) = d.get("/v1/approvals?all=true", Some(OPERATOR)).await;
    assert_eq!(all["approvals"].as_array().unwrap().len(), 2);
    let (_, open) = d.get("/v1/approvals", Some(OPERATOR)).await;
    assert_eq!(open["approvals"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn one_person_never_meets_a_quorum_of_two() {
    let d = start(DEFAULT_POLICY).await;
    let call = exec("git push --force origin main");
    let first = d.check(call.clone()).await;
    assert_eq!(first["approval"]["min_approvals"], 2, "{first}");
    let id = first["approval"]["id"].as_str().unwrap().to_string();
    let bob = d.add_operator("bob");
    let approve = format!("/v1/approvals/{id}/approve");
    let (s, v) = d.post(&approve, Some(&bob), "").await;
    assert_eq!(
        (s, v["outcome"].as_str()),
        (StatusCode::OK, Some("recorded"))
    );
    // bob again, and bob's name under the shared token: neither counts.
    let (s, v) = d.post(&approve, Some(&bob), "").await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::CONFLICT, "refused"),
        "{v}"
    );
    let (s, v) = d.post(&approve, Some(OPERATOR), r#"{"as": "bob"}"#).await;
    assert_eq!((s, error_code(&v)), (StatusCode::FORBIDDEN, "forbidden"));
    let (s, v) = d.post(&approve, Some(OPERATOR), r#"{"as": "carol"}"#).await;
    assert_eq!((s, error_code(&v)), (StatusCode::FORBIDDEN, "forbidden"));
    let (_, v) = d.get(&format!("/v1/approvals/{id}"), Some(OPERATOR)).await;
    assert_eq!(
        (v["state"].as_str(), v["have"].as_u64()),
        (Some("pending"), Some(1))
    );
    // The shared token is not a second person: the administrator never
    // counts at R4, and says what to do instead.
    let (s, v) = d
        .post(&approve, Some(OPERATOR), r#"{"as": "operator"}"#)
        .await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::CONFLICT, "refused"),
        "{v}"
    );
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("not a named operator"), "{message}");
    assert!(message.contains("operators add"), "{message}");
    let (_, v) = d.get(&format!("/v1/approvals/{id}"), Some(OPERATOR)).await;
    assert_eq!(
        (v["state"].as_str(), v["have"].as_u64()),
        (Some("pending"), Some(1))
    );
    // A second named operator completes it.
    let carol = d.add_operator("carol");
    let (s, v) = d.post(&approve, Some(&carol), "").await;
    assert_eq!(
        (s, v["outcome"].as_str()),
        (StatusCode::OK, Some("approved")),
        "{v}"
    );
    let who: Vec<(&str, bool)> = v["approval"]["votes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["identity"].as_str().unwrap(), v["named"] == true))
        .collect();
    assert_eq!(who, [("bob", true), ("carol", true)]);
    assert_eq!(d.check(call).await["decision"], "allow");
}

#[tokio::test]
async fn the_administrator_alone_approves_only_where_one_approval_is_enough() {
    // R3, quorum 1: the shared token is the break-glass approver.
    let d = start(DEFAULT_POLICY).await;
    let r3 = exec("git push origin main");
    let v = d.check(r3.clone()).await;
    let (s, v) = d
        .post(
            &format!(
                "/v1/approvals/{}/approve",
                v["approval"]["id"].as_str().unwrap()
            ),
            Some(OPERATOR),
            "",
        )
        .await;
    assert_eq!(
        (s, v["outcome"].as_str()),
        (StatusCode::OK, Some("approved")),
        "{v}"
    );
    assert_eq!(d.check(r3).await["decision"], "allow");
    let d = start("[approvals]\nquorum = { R3 = 2 }\n").await;
    // A quorum of two below R4: the administrator is not one of the two.
    let r3 = exec("kubectl apply -f prod.yaml");
    let v = d.check(r3.clone()).await;
    assert_eq!(v["approval"]["min_approvals"], 2, "{v}");
    let approve = format!(
        "/v1/approvals/{}/approve",
        v["approval"]["id"].as_str().unwrap()
    );
    let (s, v) = d.post(&approve, Some(OPERATOR), "").await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::CONFLICT, "refused"),
        "{v}"
    );
    let bob = d.add_operator("bob");
    let (s, v) = d.post(&approve, Some(&bob), "").await;
    assert_eq!(
        (s, v["outcome"].as_str()),
        (StatusCode::OK, Some("recorded")),
        "{v}"
    );
    assert_eq!(d.check(r3.clone()).await["decision"], "escalate");
    // Its denial still stops anything.
    let (s, v) = d
        .post(&approve.replace("/approve", "/deny"), Some(OPERATOR), "")
        .await;
    assert_eq!(
        (s, v["outcome"].as_str()),
        (StatusCode::OK, Some("denied")),
        "{v}"
    );
    assert_eq!(d.check(r3).await["decision"], "block");
}

#[tokio::test]
async fn no_linked_identity_of_the_requester_approves_their_call() {
    let d = start(DEFAULT_POLICY).await;
    // alice's chat accounts, linked to her toolgate name.
    let (_, alice) = toolgate_gate::add_operator(
        &*d.store,
        &SystemClock,
        "alice",
        &["slack:U0ALICE1".into(), "email:Alice@Example.com".into()],
        "test",
    )
    .unwrap();
    let bob = d.add_operator("bob");
    // The forms a runtime sends the requester in: OpenClaw's bare sender id,
    // a qualified one in other case, an email address in other case, a
    // mention; and a session key carrying her id.
    let requesters = [
        json!({"requester": {"id": "U0ALICE1"}}),
        json!({"requester": {"id": "slack:u0alice1"}}),
        json!({"requester": {"id": "ALICE@example.COM"}}),
        json!({"requester": {"id": "<@U0ALICE1>"}}),
        json!({"requester": {"id": "x"}, "session": "agent:main:slack:direct:U0ALICE1"}),
    ];
    for (i, who) in requesters.iter().enumerate() {
        let mut call = json!({"tool": "exec", "params": {"command": format!("kubectl apply -f prod{i}.yaml")}, "session": "s1"});
        for (k, v) in who.as_object().unwrap() {
            call[k] = v.clone();
        }
        let v = d.check(call.clone()).await;
        let id = v["approval"]["id"].as_str().unwrap().to_string();
        let approve = format!("/v1/approvals/{id}/approve");
        let (s, v) = d.post(&approve, Some(&alice), "").await;
        assert_eq!(
            (s, error_code(&v)),
            (StatusCode::CONFLICT, "refused"),
            "{who}: {v}"
        );
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("separation of duties"),
            "{v}"
        );
        // Not by bypass either.
        let body = json!({"approval": id, "reason": "incident 7: must ship now"});
        let (s, v) = d.post("/v1/bypass", Some(&alice), body.to_string()).await;
        assert_eq!(
            (s, error_code(&v)),
            (StatusCode::CONFLICT, "refused"),
            "{who}: {v}"
        );
        // Someone else may.
        let (s, v) = d.post(&approve, Some(&bob), "").await;
        assert_eq!(
            (s, v["outcome"].as_str()),
            (StatusCode::OK, Some("approved")),
            "{who}: {v}"
        );
    }
}

#[tokio::test]
async fn a_persons_token_says_who_they_are_until_removed() {
    let d = start(DEFAULT_POLICY).await;
    let carol = d.add_operator("carol");
    let (s, v) = d.get("/v1/whoami", Some(&carol)).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        v,
        json!({"identity": "carol", "role": "operator", "person": true})
    );
    let (_, v) = d.get("/v1/whoami", Some(OPERATOR)).await;
    assert_eq!(
        v,
        json!({"identity": "operator", "role": "operator", "person": false})
    );
    let (_, v) = d.get("/v1/whoami", Some(AGENT)).await;
    assert_eq!(v["role"], "agent");
    // A person's token reads what operators read.
    let (s, _) = d.get("/v1/approvals", Some(&carol)).await;
    assert_eq!(s, StatusCode::OK);
    toolgate_gate::remove_operator(&*d.store, &SystemClock, "carol", "test").unwrap();
    let (s, v) = d.get("/v1/approvals", Some(&carol)).await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no longer")
    );
    // Anything else shaped like one is refused as well.
    let (s, _) = d
        .get("/v1/whoami", Some("tgo_0123456789abcdef0123456789abcdef"))
        .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_waiting_check_returns_allow_once_approved() {
    let d = Arc::new(start(DEFAULT_POLICY).await);
    let call = exec("git push origin main");
    let waiter = {
        let d = d.clone();
        let call = call.clone();
        tokio::spawn(async move {
            d.post("/v1/check?wait=20s", Some(AGENT), call.to_string())
                .await
        })
    };
    // Find the approval the waiting call created, then approve it.
    let id = d.open_approval("git push origin main").await;
    assert!(!waiter.is_finished());
    let (s, _) = d
        .post(&format!("/v1/approvals/{id}/approve"), Some(OPERATOR), "")
        .await;
    assert_eq!(s, StatusCode::OK);
    let (s, v) = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["layer"], "approval");
}

#[tokio::test]
async fn a_waiting_check_is_blocked_when_denied_or_when_time_runs_out() {
    let d = Arc::new(start(DEFAULT_POLICY).await);
    let (s, v) = d
        .post(
            "/v1/check?wait=1s",
            Some(AGENT),
            exec("git push origin main").to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["decision"], "block");
    assert_eq!(v["layer"], "approval");
    assert!(v["reason"].as_str().unwrap().contains("within 1s"), "{v}");
    // The timeout is recorded as a decision.
    let (_, page) = d
        .get(
            "/v1/decisions?decision=block&layer=approval",
            Some(OPERATOR),
        )
        .await;
    assert_eq!(page["decisions"].as_array().unwrap().len(), 1);

    let waiter = {
        let d = d.clone();
        tokio::spawn(async move {
            d.post(
                "/v1/check?wait=20s",
                Some(AGENT),
                exec("git push --force origin feature").to_string(),
            )
            .await
        })
    };
    let id = d.open_approval("git push --force origin feature").await;
    d.post(&format!("/v1/approvals/{id}/deny"), Some(OPERATOR), "")
        .await;
    let (_, v) = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(v["decision"], "block", "{v}");
}

#[tokio::test]
async fn decisions_filter_and_page() {
    let d = start(DEFAULT_POLICY).await;
    for i in 0..7 {
        d.check(exec(&format!("ls dir{i}"))).await;
    }
    d.check(exec("rm -rf /")).await;
    let (_, v) = d.get("/v1/decisions?limit=3", Some(OPERATOR)).await;
    let page = v["decisions"].as_array().unwrap();
    assert_eq!(page.len(), 3);
    assert_eq!(page[0]["decision"], "block");
    let before = v["next_before"].as_u64().expect("more pages");
    let (_, v2) = d
        .get(
            &format!("/v1/decisions?limit=3&before={before}"),
            Some(OPERATOR),
        )
        .await;
    let page2 = v2["decisions"].as_array().unwrap();
    assert_eq!(page2.len(), 3);
    assert!(page2[0]["seq"].as_u64().unwrap() < page[2]["seq"].as_u64().unwrap());
    let (_, allowed) = d
        .get("/v1/decisions?decision=allow&limit=100", Some(OPERATOR))
        .await;
    assert_eq!(allowed["decisions"].as_array().unwrap().len(), 7);
    assert!(allowed["next_before"].is_null());
    let (_, none) = d.get("/v1/decisions?tool=Bash", Some(OPERATOR)).await;
    assert_eq!(none["decisions"].as_array().unwrap().len(), 0);
}

/// `/v1/state` once its `totals` are `want` (the audit tail counts what
/// was recorded within a fraction of a second), or as it last read after
/// ten seconds of polling.
async fn state_with_totals(d: &Daemon, want: &Value) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        let (s, v) = d.get("/v1/state", Some(OPERATOR)).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        if &v["totals"] == want {
            return v;
        }
        last = v;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    last
}

/// Records a decision as a hook deciding in its own process does: straight
/// into the store, never through the daemon.
fn record_elsewhere(store: &SqliteStore, decision: &str, layer: &str) {
    use toolgate_store::Store;
    let event = toolgate_core::AuditEvent {
        ts_ms: SystemClock.now_ms(),
        trace: "elsewhere".into(),
        kind: toolgate_core::AuditKind::Decision,
        data: json!({
            "decision": decision, "layer": layer, "risk": "R2", "reason": "r",
            "call": {"tool": "Bash", "agent": "claude-code", "params": {"command": "x"}},
        }),
    };
    let mut tx = store.begin().unwrap();
    tx.append(&event).unwrap();
    tx.commit().unwrap();
}

#[tokio::test]
async fn counts_are_the_logs_whoever_decided_and_survive_a_restart() {
    let d = start(DEFAULT_POLICY).await;
    d.check(exec("ls")).await;
    d.check(exec("ls -la")).await;
    record_elsewhere(&d.store, "escalate", "exec");
    record_elsewhere(&d.store, "block", "knowledge");
    record_elsewhere(&d.store, "block", "exec");
    let want = json!({"allow": 2, "hold": 1, "escalate": 1, "block": 1});
    let v = state_with_totals(&d, &want).await;
    assert_eq!(v["totals"], want, "{v}");
    // The feed says the same: every decision, a knowledge block read as a hold.
    let (_, feed) = d.get("/v1/decisions?limit=100", Some(OPERATOR)).await;
    let outcomes: Vec<&str> = feed["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes.len(), 5, "{feed}");
    for o in ["allow", "hold", "escalate", "block"] {
        let n = outcomes.iter().filter(|&&x| x == o).count() as u64;
        assert_eq!(n, want[o].as_u64().unwrap(), "{o} in {outcomes:?}");
    }
    // The last ten minutes hold them too.
    let in_series = |v: &Value, k: &str| -> u64 {
        v["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[k].as_u64().unwrap())
            .sum()
    };
    // A hook that named itself reported to the integrations panel.
    assert!(
        v["integrations"].to_string().contains("claude-code"),
        "{}",
        v["integrations"]
    );

    // A restarted daemon starts from what the log holds.
    let dir = d.dir.clone();
    drop(d);
    let d = start_in(dir, DEFAULT_POLICY, None).await;
    let v = state_with_totals(&d, &want).await;
    assert_eq!(v["totals"], want, "after a restart: {v}");
    let mut recent = Value::Null;
    for _ in 0..40 {
        let (_, v) = d.get("/v1/state", Some(OPERATOR)).await;
        if in_series(&v, "allow") == 2 {
            recent = v;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(in_series(&recent, "allow"), 2, "the chart after a restart");
    assert_eq!(in_series(&recent, "hold"), 1);
    d.check(exec("ls")).await;
    let want = json!({"allow": 3, "hold": 1, "escalate": 1, "block": 1});
    let v = state_with_totals(&d, &want).await;
    assert_eq!(v["totals"], want, "{v}");
}

#[tokio::test]
async fn state_audit_protocol_metrics_and_ui() {
    let d = start(DEFAULT_POLICY).await;
    d.check(exec("ls")).await;
    let v = state_with_totals(
        &d,
        &json!({"allow": 1, "hold": 0, "escalate": 0, "block": 0}),
    )
    .await;
    assert_eq!(v["totals"]["allow"], 1, "{v}");
    assert!(
        v["policy"]["origin"]
            .as_str()
            .unwrap()
            .ends_with("policy.toml")
    );
    assert!(v["store"].as_str().unwrap().starts_with("sqlite:"));
    let (_, v) = d.get("/v1/audit/verify", Some(OPERATOR)).await;
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["entries"].as_u64().unwrap() >= 2);
    let p = d
        .http
        .get(format!("{}/v1/protocol", d.url))
        .bearer_auth(AGENT)
        .send()
        .await
        .unwrap();
    assert_eq!(p.status(), StatusCode::OK);
    assert!(p.text().await.unwrap().contains("TOOLGATE_ESCALATE|<id>|"));
    let p = d
        .http
        .get(format!("{}/v1/protocol", d.url))
        .send()
        .await
        .unwrap();
    assert_eq!(p.status(), StatusCode::UNAUTHORIZED);
    let text = d.metrics().await;
    assert!(text.contains("toolgate_checks_total{"), "{text}");
    assert!(text.contains("toolgate_check_duration_seconds_bucket"));
    let ui = d.http.get(format!("{}/", d.url)).send().await.unwrap();
    assert_eq!(ui.status(), StatusCode::OK);
    let csp = ui.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("frame-ancestors 'none'"));
    assert_eq!(ui.headers()["x-frame-options"], "DENY");
    assert!(ui.text().await.unwrap().contains("<html"));
}

#[tokio::test]
async fn the_claude_code_hook_fails_closed() {
    let d = start(DEFAULT_POLICY).await;
    let pre = |cmd: &str| {
        json!({"session_id": "abc", "transcript_path": "/tmp/t", "cwd": "/home/t/proj",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": cmd}, "tool_use_id": "toolu_1"})
        .to_string()
    };
    let decision = |v: &Value| {
        v["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or("none")
            .to_string()
    };
    let (s, v) = d
        .post("/v1/hooks/claude-code", Some(AGENT), pre("ls"))
        .await;
    // Allowed: no decision, so Claude's own permission rules still apply.
    assert_eq!((s, decision(&v).as_str()), (StatusCode::OK, "none"));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    let (_, v) = d
        .post("/v1/hooks/claude-code", Some(AGENT), pre("rm -rf /"))
        .await;
    assert_eq!(decision(&v), "deny");
    let (_, v) = d
        .post(
            "/v1/hooks/claude-code",
            Some(AGENT),
            pre("git push origin main"),
        )
        .await;
    // An escalation is denied (Claude's `ask` runs it in bypassPermissions).
    assert_eq!(decision(&v), "deny");
    // Token in the query string, for hook configs without headers.
    let (_, v) = d
        .post(
            &format!("/v1/hooks/claude-code?token={AGENT}"),
            None,
            pre("ls"),
        )
        .await;
    assert_eq!(decision(&v), "none", "{v}");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    // Every failure is a 200 deny: Claude would run the call on anything else.
    for (token, body) in [
        (None, pre("ls")),
        (Some("wrong-token-xxxxxxxxxxxx"), pre("ls")),
        (Some(AGENT), "{not json".to_string()),
        (
            Some(AGENT),
            r#"{"hook_event_name": "PreToolUse"}"#.to_string(),
        ),
    ] {
        let (s, v) = d.post("/v1/hooks/claude-code", token, body.clone()).await;
        assert_eq!(s, StatusCode::OK);
        assert_eq!(decision(&v), "deny", "{body}: {v}");
    }
    let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}});
    let (_, v) = d
        .post("/v1/hooks/claude-code", Some(AGENT), post.to_string())
        .await;
    assert_ne!(decision(&v), "deny");
    // Every runtime has its route, answering in its own format.
    let gemini = json!({"hook_event_name": "BeforeTool", "tool_name": "mcp_fsx_write_file",
        "tool_input": {"path": "/etc/cron.d/x", "content": "x"},
        "mcp_context": {"server_name": "fsx", "tool_name": "write_file"}});
    let (s, v) = d
        .post("/v1/hooks/gemini", Some(AGENT), gemini.to_string())
        .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["decision"], "deny", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("mcp__fsx__write_file"),
        "{v}"
    );
    let (_, v) = d
        .post("/v1/hooks/codex", Some(AGENT), pre("rm -rf /"))
        .await;
    assert_eq!(decision(&v), "deny");
    let (_, v) = d.post("/v1/hooks/codex", None, pre("ls")).await;
    assert_eq!(decision(&v), "deny", "a refused token is a denial: {v}");
    // A runtime toolgate does not know (a misspelled hook URL) is a 200
    // denial in Claude Code's shape, which Claude honours (it runs the call
    // on a 404 unless the entry sets `onFailure: "block"`); it names the
    // known runtimes. So is a path under /v1/hooks/ no route matches.
    for path in [
        "/v1/hooks/openclaw",
        "/v1/hooks/claude",
        "/v1/hooks/",
        "/v1/hooks/a/b",
    ] {
        let (s, v) = d.post(path, Some(AGENT), pre("ls")).await;
        assert_eq!(s, StatusCode::OK, "{path}: {v}");
        assert_eq!(decision(&v), "deny", "{path}: {v}");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert!(
            v.to_string().contains("claude-code, codex, gemini, cursor"),
            "{path}: {v}"
        );
    }
}

async fn ws_connect(
    d: &Daemon,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    let url = format!("{}/ws", d.url.replace("http://", "ws://"));
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

async fn next_json<S>(ws: &mut S) -> Value
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("an event within 10 s")
            .expect("the socket stays open")
            .unwrap();
        if let Message::Text(t) = msg {
            return serde_json::from_str(&t).unwrap();
        }
    }
}

#[tokio::test]
async fn live_events_reach_authenticated_websocket_clients() {
    let d = start(DEFAULT_POLICY).await;
    let mut ws = ws_connect(&d).await;
    ws.send(Message::Text(json!({"token": OPERATOR}).to_string().into()))
        .await
        .unwrap();
    assert_eq!(next_json(&mut ws).await["type"], "hello");
    let id = d.check(exec("git push origin main")).await["approval"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut seen_decision = false;
    let mut seen_created = false;
    while !(seen_decision && seen_created) {
        let e = next_json(&mut ws).await;
        match e["type"].as_str() {
            Some("decision") if e["approval"] == id.as_str() => {
                assert_eq!(e["decision"], "escalate");
                assert_eq!(e["call"]["params"]["command"], "git push origin main");
                seen_decision = true;
            }
            Some("approval") if e["id"] == id.as_str() => {
                assert_eq!(e["event"], "created");
                seen_created = true;
            }
            _ => {}
        }
    }
    d.post(&format!("/v1/approvals/{id}/approve"), Some(OPERATOR), "")
        .await;
    loop {
        let e = next_json(&mut ws).await;
        if e["type"] == "approval" && e["event"] == "approved" {
            assert_eq!(e["id"], id.as_str());
            break;
        }
    }
    // Stats arrive once a second.
    loop {
        if next_json(&mut ws).await["type"] == "stats" {
            break;
        }
    }

    // An agent token (or garbage) as the first message closes the socket.
    for token in [AGENT, "nope"] {
        let mut ws = ws_connect(&d).await;
        ws.send(Message::Text(json!({"token": token}).to_string().into()))
            .await
            .unwrap();
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap();
        match msg {
            Some(Ok(Message::Close(Some(f)))) => assert_eq!(u16::from(f.code), 4401),
            other => panic!("expected a 4401 close, got {other:?}"),
        }
    }
    // A plain GET is told to use a WebSocket.
    let (s, v) = d.get("/ws", Some(OPERATOR)).await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
}

#[tokio::test]
async fn the_policy_reloads_on_change_and_a_bad_one_is_rejected() {
    let d = start(DEFAULT_POLICY).await;
    assert_eq!(d.check(exec("cowsay hi")).await["decision"], "allow");
    let path = d.dir.path().join("policy.toml");
    let stricter =
        DEFAULT_POLICY.replacen("always_ask = []", "always_ask = [\"exec(cowsay:*)\"]", 1);
    assert_ne!(
        stricter, DEFAULT_POLICY,
        "the default policy has an empty always_ask list"
    );
    std::fs::write(&path, stricter).unwrap();
    let mut reloaded = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if d.check(exec("cowsay hi")).await["decision"] != "allow" {
            reloaded = true;
            break;
        }
    }
    assert!(reloaded, "the changed policy was not picked up");
    // One change is one reload (or a couple, as the editor's writes land),
    // never a loop: reading the file must not count as changing it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, state) = d.get("/v1/state", Some(OPERATOR)).await;
    let reloads = state["policy"]["reloads"].as_u64().unwrap();
    assert!(
        (1..=3).contains(&reloads),
        "{reloads} reloads after one write"
    );
    assert!(state["policy"]["last_error"].is_null());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, state) = d.get("/v1/state", Some(OPERATOR)).await;
    assert_eq!(
        state["policy"]["reloads"].as_u64().unwrap(),
        reloads,
        "reloads kept coming"
    );

    std::fs::write(&path, "[rules]\ndeny = [\"exec(\"]\n").unwrap();
    let mut rejected = Value::Null;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, state) = d.get("/v1/state", Some(OPERATOR)).await;
        if !state["policy"]["last_error"].is_null() {
            rejected = state["policy"]["last_error"].clone();
            break;
        }
    }
    assert!(rejected.is_string(), "the broken policy was not reported");
    // The old (stricter) policy is still in force.
    assert_ne!(d.check(exec("cowsay hi")).await["decision"], "allow");
    // Both attempts are in the audit log.
    let (_, v) = d.get("/v1/audit/verify", Some(OPERATOR)).await;
    assert_eq!(v["ok"], true);
}

/// An emptied policy file (nothing but blanks and comments) is rejected on
/// reload like any broken one: the stricter policy in force stays, and the
/// error says how to get the built-in default on purpose.
#[tokio::test]
async fn an_emptied_policy_is_rejected_on_reload_and_the_old_one_stays() {
    let stricter =
        DEFAULT_POLICY.replacen("always_ask = []", "always_ask = [\"exec(cowsay:*)\"]", 1);
    let d = start(&stricter).await;
    assert_eq!(d.check(exec("cowsay hi")).await["decision"], "escalate");
    let path = d.dir.path().join("policy.toml");
    for empty in ["", "# nothing left\n\n   \n"] {
        std::fs::write(&path, empty).unwrap();
        let mut rejected = Value::Null;
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let state = d.policy_state().await;
            if state["last_error"].is_string() {
                rejected = state["last_error"].clone();
                break;
            }
        }
        let why = rejected
            .as_str()
            .expect("the emptied policy was not rejected");
        assert!(
            why.contains("empty") && why.contains("remove --policy"),
            "{why}"
        );
        assert_eq!(d.check(exec("cowsay hi")).await["decision"], "escalate");
        // Back to a good policy clears the error before the next round.
        std::fs::write(&path, &stricter).unwrap();
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if d.policy_state().await["last_error"].is_null() {
                break;
            }
        }
    }
}

/// A daemon loading through the guard (as `toolgate serve` does) rejects a
/// reload once the policy became writable by others, and keeps the policy
/// it had. (As root: a root-owned file passes the guard at start.)
#[tokio::test]
async fn a_policy_made_writable_is_rejected_on_reload() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() != Some(0) {
        eprintln!("skipped: needs root to own a policy the guard accepts");
        return;
    }
    let dir = temp_dir();
    let path = dir.path().join("policy.toml");
    let stricter =
        DEFAULT_POLICY.replacen("always_ask = []", "always_ask = [\"exec(cowsay:*)\"]", 1);
    std::fs::write(&path, &stricter).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let guarded = {
        let path = path.clone();
        Arc::new(move || {
            let env = toolgate_bundle::LoadEnv {
                home: "/home/t".into(),
                cwd: "/".into(),
                posture: &|| detect(&Signals::default()),
            };
            toolgate_bundle::load_guarded(
                Some(&path),
                &env,
                toolgate_bundle::PolicyGuard::Refuse(toolgate_bundle::Writers::AnyButRoot),
            )
            .map_err(|e| e.to_string())
        }) as toolgate_server::PolicyLoader
    };
    let store = Arc::new(SqliteStore::open(&dir.path().join("state"), SyncMode::Normal).unwrap());
    let server = Server::bind(ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        store: store.clone(),
        clock: Arc::new(SystemClock),
        tokens: Tokens::new(AGENT, OPERATOR).unwrap(),
        policy: PolicySource { loader: guarded },
        base: Env::new("/home/t", "/home/t/proj"),
        link_key: None,
    })
    .await
    .unwrap();
    let url = format!("http://{}", server.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let d = Daemon {
        url,
        store,
        dir: Arc::new(dir),
        http: client(),
        stop: Some(stop),
    };
    assert_eq!(d.check(exec("cowsay hi")).await["decision"], "escalate");
    assert_eq!(std::fs::metadata(&path).unwrap().uid(), 0);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    // What an agent would write: the same policy, made lax.
    std::fs::write(&path, DEFAULT_POLICY).unwrap();
    let mut rejected = Value::Null;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let state = d.policy_state().await;
        if state["last_error"].is_string() {
            rejected = state["last_error"].clone();
            break;
        }
    }
    let why = rejected
        .as_str()
        .expect("the writable policy was not rejected");
    assert!(
        why.contains("group or others") && why.contains("--allow-writable-policy"),
        "{why}"
    );
    assert_eq!(d.check(exec("cowsay hi")).await["decision"], "escalate");
}

/// A scope profile that permits reading only; `marker` makes each write a
/// change.
fn profile(marker: &str) -> String {
    format!(
        "---\nversion: 1\nprovider: {{name: {marker}}}\nscope:\n  permitted_actions: [read]\n---\n# {marker}\n"
    )
}

fn policy_naming(profile: &str) -> String {
    format!("profile = \"{profile}\"\n")
}

fn shown(paths: &[&Path]) -> Value {
    Value::from(
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>(),
    )
}

impl Daemon {
    async fn policy_state(&self) -> Value {
        let (status, state) = self.get("/v1/state", Some(OPERATOR)).await;
        assert_eq!(status, StatusCode::OK);
        state["policy"].clone()
    }

    /// Waits (up to 10 s) until the reload count passes `after`.
    async fn reloads_past(&self, after: u64) -> bool {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if self.policy_state().await["reloads"].as_u64().unwrap() > after {
                return true;
            }
        }
        false
    }

    /// The reload count once no reload has come for 1.5 s.
    async fn settled_reloads(&self) -> u64 {
        let mut last = self.policy_state().await["reloads"].as_u64().unwrap();
        loop {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let now = self.policy_state().await["reloads"].as_u64().unwrap();
            if now == last {
                return now;
            }
            last = now;
        }
    }
}

/// The daemon watches the files the policy in force was read from: when a
/// reload makes the policy name another scope profile, a change to the new
/// profile reloads and a change to the old one no longer does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_names_another_profile_moves_the_watch_to_it() {
    let d = start("[rules]\n").await;
    let (policy, one, two) = (
        d.dir.path().join("policy.toml"),
        d.dir.path().join("one.profile.md"),
        d.dir.path().join("two.profile.md"),
    );
    let state = d.policy_state().await;
    assert_eq!(state["sources"], shown(&[&policy]), "{state}");
    assert_eq!(state["watched"], shown(&[&policy]), "{state}");
    std::fs::write(&one, profile("one")).unwrap();
    std::fs::write(&two, profile("two")).unwrap();

    std::fs::write(&policy, policy_naming("one.profile.md")).unwrap();
    assert!(d.reloads_past(0).await, "naming a profile was missed");
    let named_one = d.settled_reloads().await;
    let state = d.policy_state().await;
    assert_eq!(state["sources"], shown(&[&policy, &one]), "{state}");
    assert_eq!(state["watched"], shown(&[&one, &policy]), "{state}");

    // The policy now names the second profile.
    std::fs::write(&policy, policy_naming("two.profile.md")).unwrap();
    assert!(d.reloads_past(named_one).await, "the switch was missed");
    let named_two = d.settled_reloads().await;
    let state = d.policy_state().await;
    assert_eq!(state["sources"], shown(&[&policy, &two]), "{state}");
    assert_eq!(state["watched"], shown(&[&policy, &two]), "{state}");

    // A change to the profile it names now reloads ...
    std::fs::write(&two, profile("two-edited")).unwrap();
    assert!(
        d.reloads_past(named_two).await,
        "a change to the newly named profile did not reload"
    );
    let edited = d.settled_reloads().await;

    // ... and a change to the one it no longer names does not.
    std::fs::write(&one, profile("one-edited")).unwrap();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(
        d.policy_state().await["reloads"].as_u64().unwrap(),
        edited,
        "the profile the policy no longer names still reloads it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_reload_keeps_the_policy_and_what_is_watched() {
    let d = start("[rules]\n").await;
    let policy = d.dir.path().join("policy.toml");
    // A policy naming a profile that is not there is rejected.
    std::fs::write(&policy, policy_naming("missing.profile.md")).unwrap();
    let mut error = Value::Null;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        error = d.policy_state().await["last_error"].clone();
        if !error.is_null() {
            break;
        }
    }
    let text = error.as_str().expect("the rejected reload is reported");
    assert!(text.contains("missing.profile.md"), "{text}");
    let state = d.policy_state().await;
    assert_eq!(state["reloads"], 0, "{state}");
    assert_eq!(state["sources"], shown(&[&policy]), "{state}");
    assert_eq!(state["watched"], shown(&[&policy]), "{state}");
    // The policy file is still watched: fixing it reloads and clears the
    // error.
    std::fs::write(&policy, "[rules]\n").unwrap();
    assert!(d.reloads_past(0).await, "fixing the policy did not reload");
    assert!(d.policy_state().await["last_error"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_answers_deny_in_time_when_the_store_is_locked() {
    let d = start(DEFAULT_POLICY).await;
    // Another process holding the write lock: checks cannot be recorded.
    let other = SqliteStore::open(&d.dir.path().join("state"), SyncMode::Normal).unwrap();
    let (locked, is_locked) = tokio::sync::oneshot::channel();
    let held = tokio::task::spawn_blocking(move || {
        use toolgate_store::Store;
        let tx = other.begin().unwrap();
        let _ = locked.send(());
        std::thread::sleep(Duration::from_secs(12));
        drop(tx);
    });
    is_locked.await.unwrap();
    let started = std::time::Instant::now();
    let body = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": "rm -rf /"}, "session_id": "s"});
    let resp = client()
        .post(format!("{}/v1/hooks/claude-code", d.url))
        .bearer_auth(AGENT)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    assert!(
        started.elapsed() < Duration::from_secs(11),
        "{:?}",
        started.elapsed()
    );
    held.await.unwrap();
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_dropped() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let d = start(DEFAULT_POLICY).await;
    let mut s = tokio::net::TcpStream::connect(d.url.trim_start_matches("http://"))
        .await
        .unwrap();
    s.write_all(b"POST /v1/check HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // And one that sends nothing at all.
    let mut silent = tokio::net::TcpStream::connect(d.url.trim_start_matches("http://"))
        .await
        .unwrap();
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut buf)).await;
    assert!(
        closed.is_ok(),
        "the half-open request was still held after 20 s"
    );
    let closed = tokio::time::timeout(Duration::from_secs(5), silent.read_to_end(&mut buf)).await;
    assert!(closed.is_ok(), "the silent connection was still held");
    // And the daemon still serves everyone else.
    assert_eq!(d.check(exec("ls")).await["decision"], "allow");
}

#[tokio::test]
async fn waiters_on_the_same_call_each_get_an_answer() {
    let d = Arc::new(start(DEFAULT_POLICY).await);
    let call = exec("git push origin main");
    let spawn_waiter = || {
        let d = d.clone();
        let call = call.clone();
        tokio::spawn(async move {
            d.post("/v1/check?wait=8s", Some(AGENT), call.to_string())
                .await
        })
    };
    let (a, b) = (spawn_waiter(), spawn_waiter());
    let id = d.open_approval("git push origin main").await;
    // Let the second waiter join the same approval.
    tokio::time::sleep(Duration::from_millis(300)).await;
    d.post(&format!("/v1/approvals/{id}/approve"), Some(OPERATOR), "")
        .await;
    let mut answers: Vec<String> = Vec::new();
    for w in [a, b] {
        let (_, v) = tokio::time::timeout(Duration::from_secs(25), w)
            .await
            .unwrap()
            .unwrap();
        answers.push(v["decision"].as_str().unwrap().to_string());
    }
    answers.sort();
    // One ran; the other asked again, kept waiting, and timed out blocked.
    assert_eq!(answers, vec!["allow", "block"]);
    let (_, open) = d.get("/v1/approvals", Some(OPERATOR)).await;
    assert_eq!(
        open["approvals"].as_array().unwrap().len(),
        1,
        "the second call's request is pending"
    );
}

#[tokio::test]
async fn big_calls_are_stored_cut_and_odd_paths_get_json() {
    let d = start(DEFAULT_POLICY).await;
    let pad = "x".repeat(900_000);
    let call = json!({"tool": "exec", "params": {"command": "git push origin main", "pad": pad}});
    assert_eq!(d.check(call).await["decision"], "escalate");
    let (_, v) = d.get("/v1/approvals", Some(OPERATOR)).await;
    let stored = v["approvals"][0]["call"]["params"]["pad"].as_str().unwrap();
    assert!(stored.len() < 10_000, "{} bytes kept", stored.len());
    assert!(stored.contains("cut by toolgate: 900000 bytes"));
    let (s, v) = d.get("/v1/approvals/%FF%FE", Some(OPERATOR)).await;
    assert_eq!((s, error_code(&v)), (StatusCode::NOT_FOUND, "not_found"));
}

#[tokio::test]
async fn stopping_releases_waiting_calls_with_a_recorded_block() {
    let mut d = start(DEFAULT_POLICY).await;
    let url = d.url.clone();
    let waiter = tokio::spawn(async move {
        let resp = client()
            .post(format!("{url}/v1/check?wait=60s"))
            .bearer_auth(AGENT)
            .body(exec("git push origin main").to_string())
            .send()
            .await
            .unwrap();
        resp.json::<Value>().await.unwrap()
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = d.stop.take().unwrap().send(());
    let v = tokio::time::timeout(Duration::from_secs(15), waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(v["decision"], "block", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("shutting down"));
    assert!(v["audit_seq"].as_u64().is_some());
}

#[tokio::test]
async fn canaries_show_in_state_and_bad_reports_are_refused() {
    let d = start(DEFAULT_POLICY).await;
    let report = |event: &str| {
        json!({"runtime": "openclaw", "instance": "host-1", "event": event}).to_string()
    };
    let (s, v) = d.post("/v1/canary", None, report("start")).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{v}");
    for event in ["start", "activity", "hook"] {
        let (s, v) = d.post("/v1/canary", Some(AGENT), report(event)).await;
        assert_eq!(s, StatusCode::OK, "{v}");
    }
    let tamper = json!({"runtime": "openclaw", "instance": "host-1", "event": "tamper",
        "detail": "plugin other-guard runs after toolgate"});
    let (s, _) = d.post("/v1/canary", Some(AGENT), tamper.to_string()).await;
    assert_eq!(s, StatusCode::OK);
    let (s, v) = d
        .post(
            "/v1/canary",
            Some(AGENT),
            json!({"runtime": "openclaw", "instance": "x", "event": "exploded"}).to_string(),
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(error_code(&v) == "bad_request");
    let (_, v) = d.get("/v1/state", Some(OPERATOR)).await;
    let i = &v["integrations"][0];
    assert_eq!(i["runtime"], "openclaw");
    assert!(i["first_hook_ms"].as_i64().is_some(), "{i}");
    assert!(i["first_activity_ms"].as_i64().is_some(), "{i}");
    assert_eq!(
        i["warnings"][0], "plugin other-guard runs after toolgate",
        "{i}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn knowledge_holds_are_acknowledged_over_http_and_counted() {
    let sops_tmp = temp_dir();
    let sops = sops_tmp.path();
    std::fs::write(
        sops.join("fleet.ai.sop"),
        "## Preflight\ncheck uptime first\n## Credentials\npw Hunter2-xyz\n",
    )
    .unwrap();
    let policy = format!(
        "[knowledge]\nsop_dirs = [{:?}]\n[[knowledge.rule]]\npattern = 'ssh'\nsop = \"fleet\"\n",
        sops.display().to_string()
    );
    let d = start(&policy).await;
    let call = |cmd: &str| {
        json!({"tool": "exec", "params": {"command": cmd}, "session": "s1"}).to_string()
    };
    let (s, v) = d
        .post("/v1/check", Some(AGENT), call("ssh web1 uptime"))
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["decision"], "block", "{v}");
    assert_eq!(v["layer"], "knowledge", "{v}");
    // A block to the runtime, a hold to a person.
    assert_eq!(v["outcome"], "hold", "{v}");
    let line = v["block_reason"].as_str().unwrap();
    assert!(line.starts_with("TOOLGATE_ACK|"), "{line}");
    let id = line.split('|').nth(1).unwrap().to_string();
    let ctx = v["context"].as_str().unwrap();
    assert!(
        ctx.contains("check uptime first") && !ctx.contains("Hunter2"),
        "{ctx}"
    );

    let ack = |id: &str| json!({"id": id, "session": "s1"}).to_string();
    let (s, _) = d.post("/v1/knowledge/ack", None, ack(&id)).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let (s, v) = d.post("/v1/knowledge/ack", Some(AGENT), "{}").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = d.post("/v1/knowledge/ack", Some(AGENT), ack("00ff")).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    let other = json!({"id": id, "session": "s2"}).to_string();
    let (s, v) = d.post("/v1/knowledge/ack", Some(AGENT), other).await;
    assert_eq!(s, StatusCode::CONFLICT, "another session: {v}");
    let (s, v) = d.post("/v1/knowledge/ack", Some(AGENT), ack(&id)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["scope"], "session:s1", "{v}");
    assert_eq!(v["acknowledged"].as_array().unwrap().len(), 1, "{v}");

    // Another call the SOP covers, same session: runs.
    let (_, v) = d
        .post("/v1/check", Some(AGENT), call("ssh web2 df -h"))
        .await;
    assert_eq!(v["decision"], "allow", "{v}");

    let (_, v) = d.get("/v1/state", Some(OPERATOR)).await;
    let k = &v["knowledge"];
    assert_eq!(k["enforcement"], "strict", "{k}");
    assert_eq!(k["status"], "ok", "{k}");
    assert_eq!(k["stats"]["held"], 1, "{k}");
    assert_eq!(k["stats"]["acked_explicitly"], 1, "{k}");
    assert_eq!(k["stats"]["interceptions"], 2, "{k}");
    let text = d.metrics().await;
    assert!(text.contains("toolgate_knowledge_held_total 1"), "{text}");
    assert!(text.contains("toolgate_knowledge_acks_total{how=\"explicit\"} 1"));
    assert!(text.contains("toolgate_knowledge_lookup_seconds_count 2"));
    let (_, v) = d.get("/v1/decisions", Some(OPERATOR)).await;
    assert!(!v.to_string().contains("Hunter2"));
}

/// What the fake model endpoint answers.
#[derive(Clone, Copy)]
enum ModelReply {
    /// At once: R1 with high confidence.
    Confident,
    /// After 2 s (the policy's timeout is 300 ms).
    Slow,
    /// 500.
    Broken,
}

/// A fake OpenAI-compatible endpoint; returns its `/v1` base URL, the
/// reply setting and the number of requests it got.
async fn fake_model() -> (
    String,
    Arc<std::sync::Mutex<ModelReply>>,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    use axum::routing::post;
    let reply = Arc::new(std::sync::Mutex::new(ModelReply::Confident));
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (r, h) = (reply.clone(), hits.clone());
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |body: String| {
            let (r, h) = (r.clone(), h.clone());
            async move {
                h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                assert!(body.contains("toolgate_risk"), "{body}");
                let mode = *r.lock().unwrap();
                let content = r#"{"risk_class":"R1","confidence":0.93,"labels":["read-only"],"rationale":"lists a directory"}"#;
                let ok = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}).to_string();
                match mode {
                    ModelReply::Confident => (axum::http::StatusCode::OK, ok),
                    ModelReply::Slow => {
                        tokio::time::sleep(Duration::from_secs(2)).await;
                        (axum::http::StatusCode::OK, ok)
                    }
                    ModelReply::Broken => (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "down".into()),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    (url, reply, hits)
}

#[tokio::test]
async fn the_model_stage_votes_on_unsure_calls_and_abstains_on_a_timeout() {
    let (url, reply, hits) = fake_model().await;
    // A threshold so low that `ls` escalates on its score alone: unsure.
    let policy = format!(
        r#"[risk]
escalation_threshold = 2

[approvals]
allowed_approvers = ["user_request", "llm_evaluation"]
require_user = []

[approvals.model]
base_url = "{url}"
model = "fake"
timeout = "300ms"
max_auto_approve = "R2"
"#
    );
    let d = start(&policy).await;
    let hit_count = || hits.load(std::sync::atomic::Ordering::SeqCst);

    // Unsure, and the model is confident it is R1: its vote meets the quorum.
    let v = d.check(exec("ls -la")).await;
    assert_eq!(
        (v["decision"].as_str(), v["layer"].as_str()),
        (Some("allow"), Some("approval")),
        "{v}"
    );
    assert!(
        v["reason"].as_str().unwrap().contains("llm_evaluation"),
        "{v}"
    );
    assert_eq!(hit_count(), 1);
    let (_, list) = d.get("/v1/approvals?all=true", Some(OPERATOR)).await;
    let vote = &list["approvals"][0]["votes"][0];
    assert_eq!(
        (vote["identity"].as_str(), vote["kind"].as_str()),
        (Some("llm_evaluation"), Some("llm_evaluation"))
    );
    assert!(vote["reason"].as_str().unwrap().contains("R1"), "{vote}");

    // Slow: it abstains at its timeout and the static decision stands (had
    // it waited, the slow answer would have approved).
    *reply.lock().unwrap() = ModelReply::Slow;
    let v = d.check(exec("ls -l /tmp")).await;
    assert_eq!(v["decision"], "escalate", "{v}");
    assert_eq!(hit_count(), 2);
    // Retrying the same call joins its approval: the model is not asked
    // (nor waited for) again on the same terms.
    *reply.lock().unwrap() = ModelReply::Confident;
    assert_eq!(d.check(exec("ls -l /tmp")).await["decision"], "escalate");
    assert_eq!(hit_count(), 2, "asked again about the same approval");

    // Down: the same.
    *reply.lock().unwrap() = ModelReply::Broken;
    assert_eq!(d.check(exec("ls -l /var")).await["decision"], "escalate");
    assert_eq!(hit_count(), 3);

    // Sure cases are never sent: a catalogue finding, a block.
    *reply.lock().unwrap() = ModelReply::Confident;
    assert_eq!(
        d.check(exec("git push --force origin main")).await["decision"],
        "escalate"
    );
    assert_eq!(d.check(exec("rm -rf /")).await["decision"], "block");
    assert_eq!(hit_count(), 3, "the model was asked about a clear case");
}

#[tokio::test]
async fn an_emergency_bypass_lifts_named_layers_until_it_ends_and_can_approve_one_call() {
    // A threshold so low that `ls` escalates on its score alone.
    let d = start("[risk]\nescalation_threshold = 2\n").await;
    assert_eq!(d.check(exec("ls -la")).await["decision"], "escalate");

    // Operators only, with a reason, and never the layers that judge what
    // a call does.
    let body = r#"{"layers": ["risk"], "for": "10m", "reason": "incident 42: deploys blocked"}"#;
    let (s, _) = d.post("/v1/bypass", Some(AGENT), body).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, v) = d
        .post(
            "/v1/bypass",
            Some(OPERATOR),
            r#"{"layers": ["risk"], "reason": "x"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let (s, v) = d
        .post(
            "/v1/bypass",
            Some(OPERATOR),
            r#"{"layers": ["exec"], "reason": "incident 42: all of it"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be bypassed"),
        "{v}"
    );

    let alice = d.add_operator("alice");
    let (s, v) = d.post("/v1/bypass", Some(&alice), body).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let id = v["bypass"]["id"].as_str().unwrap().to_string();
    assert_eq!(v["bypass"]["by"], "alice");
    let (_, state) = d.get("/v1/state", Some(OPERATOR)).await;
    assert_eq!(state["bypasses"][0]["id"], id.as_str(), "{state}");

    let v = d.check(exec("ls -la /srv")).await;
    assert_eq!(v["decision"], "allow", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("incident 42"), "{v}");
    // What the catalogue finds stays.
    assert_eq!(d.check(exec("rm -rf /")).await["decision"], "block");
    assert_eq!(
        d.check(exec("git push --force origin main")).await["decision"],
        "escalate"
    );

    let (s, v) = d
        .post(&format!("/v1/bypass/{id}/end"), Some(OPERATOR), "")
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(d.check(exec("ls -la /opt")).await["decision"], "escalate");
    let (_, state) = d.get("/v1/state", Some(OPERATOR)).await;
    assert_eq!(state["bypasses"], json!([]));

    // One approval: the bypass is one person's vote, counted once; R4
    // needs two named operators, whoever bypasses.
    let call = exec("git push --force origin main");
    let first = d.check(call.clone()).await;
    let approval = first["approval"]["id"].as_str().unwrap().to_string();
    let bypass_one = json!({"approval": approval, "reason": "incident 42: hotfix must ship"});
    // Not by the person who asked for the call.
    let (s, v) = d
        .post("/v1/bypass", Some(&alice), bypass_one.to_string())
        .await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::CONFLICT, "refused"),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("separation of duties"),
        "{v}"
    );
    // Not by the shared token: the administrator is no named person.
    let (s, v) = d
        .post("/v1/bypass", Some(OPERATOR), bypass_one.to_string())
        .await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::CONFLICT, "refused"),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a named operator"),
        "{v}"
    );
    let bob = d.add_operator("bob");
    let (s, v) = d
        .post("/v1/bypass", Some(&bob), bypass_one.to_string())
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (
            v["outcome"].as_str(),
            v["have"].as_u64(),
            v["need"].as_u64()
        ),
        (Some("recorded"), Some(1), Some(2)),
        "{v}"
    );
    assert_eq!(v["approval"]["state"], "pending");
    assert_eq!(
        d.check(call.clone()).await["decision"],
        "escalate",
        "one bypass is one person"
    );
    // bob again counts once.
    let (s, v) = d
        .post("/v1/bypass", Some(&bob), bypass_one.to_string())
        .await;
    assert_eq!(
        (s, error_code(&v)),
        (StatusCode::CONFLICT, "refused"),
        "{v}"
    );
    // A second named person completes it, by bypass or vote.
    let carol = d.add_operator("carol");
    let (s, v) = d
        .post("/v1/bypass", Some(&carol), bypass_one.to_string())
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["outcome"], "approved", "{v}");
    assert_eq!(v["approval"]["state"], "approved");
    let retry = d.check(call).await;
    assert_eq!(retry["decision"], "allow", "{retry}");

    // Everything is in the audit chain.
    let (_, list) = d.get("/v1/bypass", Some(OPERATOR)).await;
    assert_eq!(list["bypasses"].as_array().unwrap().len(), 1);
    let (s, v) = d.get("/v1/audit/verify", Some(OPERATOR)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
}

/// `/healthz` needs no token and says only whether the daemon can serve.
#[tokio::test]
async fn healthz_answers_without_a_token() {
    let d = start(DEFAULT_POLICY).await;
    let (s, v) = d.get("/healthz", None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["status"], "ok");
    assert!(v["version"].is_string());
    assert_eq!(v.as_object().unwrap().len(), 2, "nothing more: {v}");
}

/// While an agent's `?wait` holds an escalation open, the approval says
/// until when (`waiting_until_ms`, for the UI's "agent waiting"); once the
/// wait ends it no longer does.
#[tokio::test]
async fn an_approval_says_while_an_agent_waits_on_it() {
    let d = start(DEFAULT_POLICY).await;
    let http = d.http.clone();
    let url = format!("{}/v1/check?wait=2s", d.url);
    let waiting = tokio::spawn(async move {
        http.post(url)
            .bearer_auth(AGENT)
            .json(&exec("git push origin main"))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    });
    let mut seen = None;
    for _ in 0..100 {
        let (_, v) = d.get("/v1/approvals", Some(OPERATOR)).await;
        if let Some(a) = v["approvals"].as_array().and_then(|a| a.first())
            && a["waiting_until_ms"].is_i64()
        {
            seen = Some(a.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seen = seen.expect("the waiting agent never showed on the approval");
    let until = seen["waiting_until_ms"].as_i64().unwrap();
    let created = seen["created_ms"].as_i64().unwrap();
    assert!((1_000..=3_000).contains(&(until - created)), "{seen}");
    let answer = waiting.await.unwrap();
    assert_eq!(answer["decision"], "block", "{answer}");
    let (_, v) = d.get("/v1/approvals", Some(OPERATOR)).await;
    let a = &v["approvals"][0];
    assert!(
        a.get("waiting_until_ms").is_none(),
        "still shown as waiting: {a}"
    );
}

/// Trades a sign-in code for the session cookie; returns `name=value`.
async fn sign_in(d: &Daemon, code: &str) -> (StatusCode, Option<String>, Value) {
    let resp = d
        .http
        .post(format!("{}/v1/session", d.url))
        .header("X-Toolgate-Channel", "ui")
        .body(json!({ "code": code }).to_string())
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let cookie = resp
        .headers()
        .get("set-cookie")
        .map(|v| v.to_str().unwrap().to_string());
    if let Some(c) = &cookie {
        assert!(
            c.contains("HttpOnly") && c.contains("SameSite=Strict"),
            "{c}"
        );
    }
    let cookie = cookie.map(|c| c.split(';').next().unwrap().to_string());
    (status, cookie, resp.json().await.unwrap())
}

/// A sign-in link's code, minted by `token`'s holder.
async fn sign_in_code(d: &Daemon, token: &str) -> String {
    let (s, v) = d.post("/v1/session/links", Some(token), "").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let path = v["path"].as_str().unwrap();
    assert!(v["url"].as_str().unwrap().ends_with(path), "{v}");
    path.strip_prefix("/#signin/").unwrap().to_string()
}

#[tokio::test]
async fn a_sign_in_link_opens_one_browser_session_that_only_the_ui_can_use() {
    let d = start(DEFAULT_POLICY).await;
    // Only an operator may mint a link.
    let (s, _) = d.post("/v1/session/links", Some(AGENT), "").await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, _) = d.post("/v1/session/links", None, "").await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);

    let code = sign_in_code(&d, OPERATOR).await;
    let (s, cookie, v) = sign_in(&d, &code).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["identity"], "operator");
    let cookie = cookie.expect("a session cookie");
    // The code works once.
    let (s, again, v) = sign_in(&d, &code).await;
    assert_eq!(
        (s, again.is_none()),
        (StatusCode::UNAUTHORIZED, true),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("toolgate ui")
    );

    let get = |headers: &[(&str, &str)]| {
        let mut r = d.http.get(format!("{}/v1/approvals", d.url));
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        send(r, None)
    };
    let ui = [("Cookie", cookie.as_str()), ("X-Toolgate-Channel", "ui")];
    assert_eq!(get(&ui).await.0, StatusCode::OK);
    // Without the page's own header, or from another origin or site, the
    // cookie counts for nothing.
    assert_eq!(get(&ui[..1]).await.0, StatusCode::FORBIDDEN);
    let port = d.url.rsplit(':').next().unwrap();
    assert!(
        cookie.starts_with(&format!("toolgate_session_{port}=")),
        "{cookie}"
    );
    for (k, v) in [
        ("Origin", "http://127.0.0.1:1"),
        ("Origin", "null"),
        ("Sec-Fetch-Site", "same-site"),
        ("Sec-Fetch-Site", "cross-site"),
    ] {
        let (s, v) = get(&[ui[0], ui[1], (k, v)]).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{k}: {v}");
    }
    assert_eq!(
        get(&[ui[0], ui[1], ("Origin", d.url.as_str())]).await.0,
        StatusCode::OK
    );
    // The cookie votes as the one who signed in.
    let id = d.check(exec("git push origin main")).await["approval"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = d
        .http
        .post(format!("{}/v1/approvals/{id}/approve", d.url))
        .header("Cookie", cookie.as_str())
        .header("X-Toolgate-Channel", "ui");
    let (s, v) = send(r, None).await;
    assert_eq!(s, StatusCode::OK, "{v}");

    // The WebSocket handshake carries the cookie; a cross-site page's
    // handshake (another Origin) is refused before upgrading.
    let ws_url = format!("{}/ws", d.url.replace("http://", "ws://"));
    let handshake = |origin: &str| {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = ws_url.as_str().into_client_request().unwrap();
        req.headers_mut().insert("Cookie", cookie.parse().unwrap());
        req.headers_mut().insert("Origin", origin.parse().unwrap());
        tokio_tungstenite::connect_async(req)
    };
    let (mut ws, _) = handshake(&d.url).await.unwrap();
    assert_eq!(next_json(&mut ws).await["type"], "hello");
    assert!(handshake("http://evil.example").await.is_err());

    // Signing out ends the session for good.
    let r = d
        .http
        .delete(format!("{}/v1/session", d.url))
        .header("Cookie", cookie.as_str());
    let (s, _) = send(r, None).await;
    assert_eq!(s, StatusCode::OK);
    let (s, v) = get(&ui).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{v}");
}

#[tokio::test]
async fn a_persons_browser_session_votes_as_them_until_they_are_removed() {
    let d = start(DEFAULT_POLICY).await;
    let dana = d.add_operator("dana");
    let code = sign_in_code(&d, &dana).await;
    let (_, cookie, v) = sign_in(&d, &code).await;
    assert_eq!(
        (v["identity"].as_str(), v["person"].as_bool()),
        (Some("dana"), Some(true))
    );
    let cookie = cookie.unwrap();
    let whoami = || {
        let r = d
            .http
            .get(format!("{}/v1/whoami", d.url))
            .header("Cookie", cookie.as_str())
            .header("X-Toolgate-Channel", "ui");
        send(r, None)
    };
    assert_eq!(whoami().await.1["identity"], "dana");
    toolgate_gate::remove_operator(&*d.store, &SystemClock, "dana", "test").unwrap();
    let (s, v) = whoami().await;
    assert_eq!(s, StatusCode::UNAUTHORIZED, "{v}");
    // A sign-in without the page's header (a form posted by another site)
    // is refused before the code is even looked at.
    let code = sign_in_code(&d, OPERATOR).await;
    let r = d
        .http
        .post(format!("{}/v1/session", d.url))
        .body(json!({ "code": code }).to_string());
    assert_eq!(send(r, None).await.0, StatusCode::FORBIDDEN);
    assert_eq!(sign_in(&d, &code).await.0, StatusCode::OK);
}

#[tokio::test]
async fn an_approval_lists_every_finding_with_the_sub_command_it_is_about() {
    let d = start(DEFAULT_POLICY).await;
    let v = d
        .check(exec(
            "echo hi && git push --force origin main; ssh prod systemctl restart web",
        ))
        .await;
    let id = v["approval"]["id"].as_str().unwrap();
    let (s, a) = d.get(&format!("/v1/approvals/{id}"), Some(OPERATOR)).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    let findings: Vec<(&str, &str)> = a["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| (f["risk"].as_str().unwrap(), f["command"].as_str().unwrap()))
        .collect();
    // Strongest first; the harmless `echo` is not a finding.
    assert_eq!(
        findings,
        [
            ("R4", "git push --force origin main"),
            ("R3", "systemctl restart web")
        ]
    );
}

#[tokio::test]
async fn a_runtimes_hook_calls_show_as_its_last_hook() {
    let d = start(DEFAULT_POLICY).await;
    let (_, st) = d.get("/v1/state", Some(OPERATOR)).await;
    assert_eq!(st["integrations"], json!([]));
    let mut call = exec("ls");
    call["agent"] = json!("claude-code");
    d.check(call).await;
    // An agent name that is no runtime's lists nothing.
    let mut other = exec("ls");
    other["agent"] = json!("my-bot");
    d.check(other).await;
    let (_, st) = d.get("/v1/state", Some(OPERATOR)).await;
    let rows = st["integrations"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{st}");
    assert_eq!(rows[0]["runtime"], "claude-code");
    assert_eq!(rows[0]["instance"], "hooks via this daemon");
    assert!(rows[0]["last_hook_ms"].as_i64().unwrap() > 0, "{st}");
    assert_eq!(rows[0]["warnings"], json!([]));
}

#[tokio::test]
async fn a_hold_in_another_process_shows_as_an_agent_waiting() {
    let d = start(DEFAULT_POLICY).await;
    let v = d.check(exec("git push origin main")).await;
    let id = toolgate_core::ApprovalId::parse(v["approval"]["id"].as_str().unwrap()).unwrap();
    let waiting = |v: &Value| v["waiting_until_ms"].as_i64();
    let until = toolgate_gate::SystemClock.now_ms() + 60_000;
    // What a hook's hold writes on the approval it waits on.
    toolgate_gate::mark_waiting(&*d.store, &id, Some(until)).unwrap();
    let (_, a) = d.get(&format!("/v1/approvals/{id}"), Some(OPERATOR)).await;
    assert_eq!(waiting(&a), Some(until), "{a}");
    // A mark whose time has passed (a killed hook) is no wait.
    toolgate_gate::mark_waiting(&*d.store, &id, Some(1)).unwrap();
    let (_, a) = d.get(&format!("/v1/approvals/{id}"), Some(OPERATOR)).await;
    assert_eq!(waiting(&a), None, "{a}");
}

/// A bypass of one approval is a vote: where the policy names its
/// operators, nobody else may bypass either (the issue: any operator could).
#[tokio::test]
async fn a_bypass_of_one_approval_honours_the_named_operators() {
    let d = start("[approvals]\noperators = [\"bob\"]\n").await;
    let mallory = d.add_operator("mallory");
    let bob = d.add_operator("bob");
    let call = exec("kubectl apply -f prod.yaml");
    let id = d.check(call.clone()).await["approval"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let body = json!({"approval": id, "reason": "incident 9: the fix must go out"}).to_string();
    for who in [mallory.as_str(), OPERATOR] {
        let (s, v) = d.post("/v1/bypass", Some(who), body.clone()).await;
        assert_eq!(
            (s, error_code(&v)),
            (StatusCode::CONFLICT, "refused"),
            "{v}"
        );
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not one of the operators"),
            "{v}"
        );
    }
    assert_eq!(d.check(call.clone()).await["decision"], "escalate");
    // Every attempt is on the record, refused ones too.
    let (_, audit) = d.get("/v1/audit/verify", Some(OPERATOR)).await;
    assert_eq!(audit["ok"], true, "{audit}");
    let (s, v) = d.post("/v1/bypass", Some(&bob), body).await;
    assert_eq!(
        (s, v["outcome"].as_str()),
        (StatusCode::OK, Some("approved")),
        "{v}"
    );
    assert_eq!(d.check(call).await["decision"], "allow");
}

/// The flood of the issue over HTTP: one session sends distinct risky calls
/// as fast as it can; it gets its share of approvals, then blocks saying why,
/// while another session's escalation still gets an approval.
#[tokio::test]
async fn one_session_cannot_take_every_open_approval() {
    let d = start("[approvals]\nmax_open_per_session = 5\n").await;
    let flood = |i: usize| json!({"tool": "exec", "params": {"command": format!("kubectl delete pod web-{i}")}, "session": "flood", "agent": "main"});
    let mut escalated = 0;
    let mut blocked = 0;
    for i in 0..40 {
        let v = d.check(flood(i)).await;
        match v["decision"].as_str() {
            Some("escalate") => escalated += 1,
            Some("block") => {
                blocked += 1;
                let reason = v["reason"].as_str().unwrap();
                assert!(reason.contains("max_open_per_session = 5"), "{reason}");
                assert!(reason.contains("toolgate approvals list"), "{reason}");
            }
            other => panic!("{other:?}: {v}"),
        }
    }
    assert_eq!((escalated, blocked), (5, 35));
    // Identical calls fold into their approval: no new one.
    let again = d.check(flood(0)).await;
    assert_eq!(again["decision"], "escalate", "{again}");
    let (_, open) = d.get("/v1/approvals", Some(OPERATOR)).await;
    assert_eq!(open["approvals"].as_array().unwrap().len(), 5);
    // Another session is not held up.
    let other = json!({"tool": "exec", "params": {"command": "kubectl delete pod api-1"}, "session": "other", "agent": "main"});
    let v = d.check(other).await;
    assert_eq!(v["decision"], "escalate", "{v}");
}

/// The daemon signs the audit log: at start, and at shutdown, so a log
/// left by a stopped daemon is signed through its last entry; its
/// `/v1/audit/verify` checks the signatures with its own key.
#[tokio::test]
async fn the_daemon_signs_audit_checkpoints_and_verifies_them() {
    let key = Arc::new(toolgate_gate::DaemonKey::from_seed([5; 32]));
    let mut d = start_with(DEFAULT_POLICY, Some(key.clone())).await;
    for i in 0..3 {
        let (s, _) = d
            .post(
                "/v1/check",
                Some(AGENT),
                json!({"tool": "exec", "params": {"command": format!("ls d{i}")}}).to_string(),
            )
            .await;
        assert_eq!(s, StatusCode::OK);
    }
    // The start checkpoint is written in the background.
    let mut v = Value::Null;
    for _ in 0..100 {
        v = d.get("/v1/audit/verify", Some(OPERATOR)).await.1;
        if v["signatures"]["valid"].as_u64().unwrap_or(0) >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["signatures"]["checked"], true, "{v}");
    assert!(v["signatures"]["valid"].as_u64().unwrap() >= 1, "{v}");
    // Stopped, the daemon signs once more: nothing is left unsigned.
    let _ = d.stop.take().unwrap().send(());
    let rule = toolgate_gate::SigningRule {
        keys: vec![key.public()],
        max_unsigned: 0,
    };
    let mut last = None;
    for _ in 0..100 {
        last = Some(toolgate_gate::verify_signed(&*d.store, &rule));
        if matches!(last, Some(Ok(_))) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, sigs) = last.unwrap().unwrap();
    assert_eq!(sigs.unsigned_tail, 0);
    assert!(sigs.valid >= 2, "{sigs:?}");
}

/// A key given twice in any JSON an agent sends is refused: `/v1/check`
/// answers 400 naming it, the hook endpoint a denial (what the runtime
/// obeys), whichever copy a reader would keep.
#[tokio::test]
async fn a_repeated_json_key_is_refused_at_every_entry_point() {
    let d = start(DEFAULT_POLICY).await;
    for body in [
        r#"{"tool":"exec","params":{"command":"rm -rf /","command":"ls"}}"#,
        r#"{"tool":"exec","params":{"command":"ls"},"params":{"command":"rm -rf /"}}"#,
        r#"{"tool":"exec","params":{"command":"ls","env":{"A":"1","\u0041":"2"}}}"#,
    ] {
        let (s, v) = d.post("/v1/check", Some(AGENT), body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert!(v.to_string().contains("appears twice"), "{v}");
    }
    let hook = r#"{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"rm -rf /","command":"ls"}}"#;
    let (s, v) = d.post("/v1/hooks/claude-code", Some(AGENT), hook).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    assert!(v.to_string().contains("appears twice"), "{v}");
}
