//! Slack against a local fake of the Web API, and its callbacks.

mod common;

use common::{APPROVAL, Fake, Reply, assert_clean, closed_base, notice, now_secs};
use serde_json::{Value, json};
use std::time::Duration;
use toolgate_channels::slack::{self, accept, parse_interaction, verify_request};
use toolgate_channels::{
    CallbackError, Channel, ClientOptions, DeliveryError, MemoryReplayGuard, Resolution,
    SlackChannel,
};

const TOKEN: &str = "xoxb-1111-2222-SECRETSLACKTOKEN";
const SIGNING: &str = "8f742231b10e8888abcd99yyyzzz85a5";

fn posted() -> Reply {
    Reply::json(
        200,
        json!({ "ok": true, "channel": "C0123", "ts": "1700000000.000100" }),
    )
}

fn channel(fake: &Fake) -> SlackChannel {
    SlackChannel::new(TOKEN, "C0123", &fake.options()).unwrap()
}

fn actions_of(blocks: &Value) -> Vec<Value> {
    blocks
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "actions")
        .cloned()
        .collect()
}

#[tokio::test]
async fn posts_blocks_with_two_buttons_and_bearer_auth() {
    let fake = Fake::start(posted()).await;
    let ch = channel(&fake);
    assert_eq!((ch.kind(), ch.target().as_str()), ("slack", "C0123"));
    let delivered = ch.deliver(&notice()).await.unwrap();
    assert_eq!(
        delivered.message_ref,
        json!({ "channel": "C0123", "ts": "1700000000.000100" })
    );

    let seen = fake.only();
    assert_eq!(seen.path, "/chat.postMessage");
    assert_eq!(
        seen.header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );
    assert!(
        seen.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let body = seen.json();
    assert_eq!(body["channel"], "C0123");
    assert!(body["text"].as_str().unwrap().contains("Bash"));
    let text = body["blocks"].to_string();
    assert!(text.contains("R3") && text.contains("deletes files outside the sandbox"));
    assert!(text.contains("claude-code") && text.contains("0 of 2 approvals"));
    // The summary's `<!channel>` is escaped, so it notifies no one.
    assert!(text.contains("&lt;!channel&gt;") && !text.contains("<!channel>"));
    assert!(!body["text"].as_str().unwrap().contains("<!channel>"));
    let actions = actions_of(&body["blocks"]);
    assert_eq!(actions.len(), 1);
    let buttons = actions[0]["elements"].as_array().unwrap();
    assert_eq!(buttons.len(), 2);
    assert_eq!(buttons[0]["action_id"], slack::APPROVE_ACTION);
    assert_eq!(buttons[0]["style"], "primary");
    assert_eq!(buttons[0]["value"], APPROVAL);
    assert_eq!(buttons[1]["action_id"], slack::DENY_ACTION);
    assert_eq!(buttons[1]["style"], "danger");
    assert_eq!(buttons[1]["value"], APPROVAL);
}

#[tokio::test]
async fn tricky_text_is_literal_and_a_long_command_keeps_its_flagged_tail() {
    let fake = Fake::start(posted()).await;
    let ch = channel(&fake);
    let n = common::tricky_notice();
    ch.deliver(&n).await.unwrap();
    let body = fake.only().json();
    assert_eq!(body["mrkdwn"], false);
    assert_eq!(body["parse"], "none");
    let all = body.to_string();
    for trick in ["<!channel>", "<!here>", "<@U", "<#C", "<http://evil", "<@&"] {
        assert!(!all.contains(trick), "{trick} reached Slack unescaped");
    }
    let text = body["text"].as_str().unwrap();
    assert!(
        text.contains("rm -rf ~") && text.contains("characters cut"),
        "{text}"
    );
    let blocks = body["blocks"].as_array().unwrap();
    let command = blocks[1]["text"]["text"].as_str().unwrap();
    assert!(command.starts_with("```ls aaa"), "{command}");
    assert!(
        command.contains("rm -rf ~") && command.contains("characters cut"),
        "{command}"
    );
    assert!(command.chars().count() <= 3000);
    // Inside a code block: `*x*` keeps its asterisks.
    assert!(command.contains("*x*"), "{command}");
    for b in blocks {
        if let Some(t) = b["text"]["text"].as_str() {
            assert!(t.chars().count() <= 3000);
        }
        for f in b["fields"].as_array().into_iter().flatten() {
            let t = f["text"].as_str().unwrap();
            assert!(t.chars().count() <= 2000);
            assert!(!t.contains('<') || t.contains("<!date^"), "{t}");
        }
    }
    assert_eq!(blocks[0]["text"]["type"], "plain_text");
}

#[tokio::test]
async fn resolution_updates_the_message_and_drops_the_buttons() {
    let fake = Fake::start(posted()).await;
    let ch = channel(&fake);
    let delivered = ch.deliver(&notice()).await.unwrap();
    let approved = Resolution::Approved {
        by: vec!["alice".into(), "bob".into()],
    };
    ch.resolved(&delivered, &notice(), &approved).await.unwrap();
    let update = &fake.seen()[1];
    assert_eq!(update.path, "/chat.update");
    assert_eq!(
        update.header("authorization"),
        Some(&*format!("Bearer {TOKEN}"))
    );
    let body = update.json();
    assert_eq!(body["channel"], "C0123");
    assert_eq!(body["ts"], "1700000000.000100");
    assert!(actions_of(&body["blocks"]).is_empty());
    assert!(
        body["blocks"]
            .to_string()
            .contains("Approved by alice and bob.")
    );

    let foreign = toolgate_channels::Delivered {
        kind: "telegram".into(),
        target: "1".into(),
        message_ref: json!({ "chat_id": 1, "message_id": 2 }),
    };
    let e = ch
        .resolved(&foreign, &notice(), &approved)
        .await
        .unwrap_err();
    assert!(matches!(e, DeliveryError::Invalid { .. }) && !e.is_retryable());
}

#[tokio::test]
async fn failures_are_classified_and_never_show_the_token() {
    let fake = Fake::start(posted()).await;
    fake.script([
        Reply::Slow(Duration::from_secs(3)),
        Reply::text(503, "unavailable"),
        Reply::Raw(429, vec![("retry-after", "30".into())], String::new()),
        Reply::json(200, json!({ "ok": false, "error": "channel_not_found" })),
        Reply::json(200, json!({ "ok": false, "error": "internal_error" })),
        Reply::json(
            400,
            json!({ "ok": false, "error": format!("invalid_auth {TOKEN}") }),
        ),
        Reply::text(200, "<html>not slack</html>"),
        Reply::json(200, json!({ "ok": true })),
        Reply::json(200, json!({ "channel": "C0123" })),
    ]);
    let ch = channel(&fake);
    let mut errors = Vec::new();
    for _ in 0..9 {
        errors.push(ch.deliver(&notice()).await.unwrap_err());
    }
    assert!(
        matches!(errors[0], DeliveryError::Timeout { .. }),
        "{}",
        errors[0]
    );
    assert!(matches!(errors[1], DeliveryError::Server { .. }));
    assert_eq!(errors[2].retry_after(), Some(Duration::from_secs(30)));
    assert!(errors[3].to_string().contains("channel_not_found"));
    assert!(matches!(errors[4], DeliveryError::Server { .. }));
    assert!(matches!(errors[5], DeliveryError::Refused { .. }));
    assert!(errors[5].to_string().contains("invalid_auth"));
    assert!(matches!(errors[6], DeliveryError::Malformed { .. }));
    assert!(
        matches!(errors[7], DeliveryError::Malformed { .. }),
        "ok without ts"
    );
    assert!(
        matches!(errors[8], DeliveryError::Malformed { .. }),
        "no ok field"
    );
    let retryable: Vec<bool> = errors.iter().map(DeliveryError::is_retryable).collect();
    assert_eq!(
        retryable,
        [true, true, true, false, true, false, false, false, false]
    );
    for e in &errors {
        assert_clean(&e.to_string(), &[TOKEN]);
    }

    let options = ClientOptions {
        api_base: Some(closed_base().await),
        timeout: Duration::from_millis(300),
    };
    let down = SlackChannel::new(TOKEN, "C0123", &options).unwrap();
    let e = down.deliver(&notice()).await.unwrap_err();
    assert!(e.is_retryable(), "{e}");
    assert_clean(&e.to_string(), &[TOKEN]);
    assert_clean(&format!("{down:?}"), &[TOKEN]);
}

/// A `block_actions` body as Slack sends it.
fn interaction(action_id: &str, value: &str, trigger: &str) -> Vec<u8> {
    let payload = json!({
        "type": "block_actions",
        "user": { "id": "U0ALICE", "username": "alice" },
        "trigger_id": trigger,
        "channel": { "id": "C0123" },
        "message": { "ts": "1700000000.000100" },
        "container": { "type": "message", "message_ts": "1700000000.000100", "channel_id": "C0123" },
        "response_url": "https://hooks.example.invalid/actions/T/1/x",
        "actions": [{ "action_id": action_id, "value": value, "action_ts": "1700000001.1" }],
    });
    form_urlencoded::Serializer::new(String::new())
        .append_pair("payload", &payload.to_string())
        .finish()
        .into_bytes()
}

fn sign(ts: i64, body: &[u8]) -> String {
    use hmac::{Hmac, KeyInit, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SIGNING.as_bytes()).unwrap();
    mac.update(format!("v0:{ts}:").as_bytes());
    mac.update(body);
    let bytes = mac.finalize().into_bytes();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("v0={hex}")
}

#[test]
fn slacks_documented_example_verifies() {
    // The example from Slack's "Verifying requests" guide.
    let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    let ts = "1531420618";
    let sig = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
    assert!(verify_request(SIGNING, Some(ts), Some(sig), body, 1_531_420_618 + 10).is_ok());
}

#[test]
fn a_signed_press_is_a_vote_and_anything_else_is_refused() {
    let now = now_secs();
    let body = interaction(slack::DENY_ACTION, APPROVAL, "trig-1");
    let sig = sign(now, &body);
    let ts = now.to_string();
    let guard = MemoryReplayGuard::default();

    let vote = accept(SIGNING, Some(&ts), Some(&sig), &body, now, &guard).unwrap();
    assert_eq!(vote.kind, "slack");
    assert_eq!(vote.user, "U0ALICE");
    assert_eq!(vote.approval_id, APPROVAL);
    assert!(!vote.approve);
    assert_eq!(
        vote.message_ref,
        json!({ "channel": "C0123", "ts": "1700000000.000100" })
    );
    assert_eq!(
        vote.ack["response_url"],
        "https://hooks.example.invalid/actions/T/1/x"
    );
    let delivered = toolgate_channels::Delivered {
        kind: "slack".into(),
        target: "C0123".into(),
        message_ref: json!({ "channel": "C0123", "ts": "1700000000.000100" }),
    };
    assert!(vote.came_from(&delivered));

    // The same request again: refused.
    assert_eq!(
        accept(SIGNING, Some(&ts), Some(&sig), &body, now, &guard),
        Err(CallbackError::Replayed)
    );
    // Tampered body, wrong secret, stale, missing headers.
    let approve = interaction(slack::APPROVE_ACTION, APPROVAL, "trig-1");
    assert!(matches!(
        verify_request(SIGNING, Some(&ts), Some(&sig), &approve, now),
        Err(CallbackError::BadSignature { .. })
    ));
    assert!(verify_request("other-secret", Some(&ts), Some(&sig), &body, now).is_err());
    let old = now - 301;
    assert!(matches!(
        verify_request(
            SIGNING,
            Some(&old.to_string()),
            Some(&sign(old, &body)),
            &body,
            now
        ),
        Err(CallbackError::Stale { .. })
    ));
    assert!(matches!(
        verify_request(SIGNING, None, Some(&sig), &body, now),
        Err(CallbackError::MissingHeader { .. })
    ));
    assert!(matches!(
        verify_request(SIGNING, Some(&ts), None, &body, now),
        Err(CallbackError::MissingHeader { .. })
    ));
    assert!(verify_request(SIGNING, Some(&ts), Some("v0=zz"), &body, now).is_err());
    assert!(verify_request("", Some(&ts), Some(&sig), &body, now).is_err());
}

#[test]
fn payloads_that_are_not_votes_are_refused() {
    // A key given twice is refused, whichever copy a reader would keep.
    let dup = format!(
        "payload={}",
        form_urlencoded::byte_serialize(
            br#"{"type":"block_actions","type":"view_submission","actions":[]}"#
        )
        .collect::<String>()
    );
    let e = parse_interaction(dup.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("appears twice"), "{e}");
    let two = "payload=%7B%7D&payload=%7B%7D";
    assert!(parse_interaction(two.as_bytes()).is_err());
    assert!(matches!(
        parse_interaction(&interaction("other_app_button", APPROVAL, "t")),
        Err(CallbackError::NotAVote { .. })
    ));
    assert!(matches!(
        parse_interaction(&interaction(slack::APPROVE_ACTION, "../../etc", "t")),
        Err(CallbackError::BadApprovalId { .. })
    ));
    assert!(matches!(
        parse_interaction(&interaction(
            slack::APPROVE_ACTION,
            &APPROVAL.to_uppercase(),
            "t"
        )),
        Err(CallbackError::BadApprovalId { .. })
    ));
    assert!(matches!(
        parse_interaction(b"payload=not-json"),
        Err(CallbackError::Malformed { .. })
    ));
    assert!(matches!(
        parse_interaction(b"nopayload=1"),
        Err(CallbackError::Malformed { .. })
    ));
    let modal = form_urlencoded::Serializer::new(String::new())
        .append_pair("payload", r#"{"type":"view_submission"}"#)
        .finish();
    assert!(matches!(
        parse_interaction(modal.as_bytes()),
        Err(CallbackError::NotAVote { .. })
    ));
    let no_user = form_urlencoded::Serializer::new(String::new())
        .append_pair(
            "payload",
            &json!({"type":"block_actions","trigger_id":"t","channel":{"id":"C1"},
                    "message":{"ts":"1.2"},
                    "actions":[{"action_id":"toolgate_approve","value":APPROVAL}]})
            .to_string(),
        )
        .finish();
    assert!(matches!(
        parse_interaction(no_user.as_bytes()),
        Err(CallbackError::Malformed { .. })
    ));
}
