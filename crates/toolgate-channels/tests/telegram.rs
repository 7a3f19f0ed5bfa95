//! Telegram against a local fake of the Bot API, and its webhook updates.

mod common;

use common::{APPROVAL, Fake, Reply, assert_clean, closed_base, notice, now_secs};
use serde_json::json;
use std::time::Duration;
use toolgate_channels::telegram::{self, accept, parse_update, verify_webhook};
use toolgate_channels::{
    CallbackError, Channel, ClientOptions, DeliveryError, MemoryReplayGuard, Resolution,
    TelegramChannel,
};

const TOKEN: &str = "123456789:AAHsecretTELEGRAMtoken_xyz-987";
const WEBHOOK_SECRET: &str = "tg-webhook-secret_0123456789";

fn sent() -> Reply {
    Reply::json(
        200,
        json!({ "ok": true, "result": { "message_id": 77, "chat": { "id": -1001234, "type": "supergroup" }, "text": "x" } }),
    )
}

fn channel(fake: &Fake) -> TelegramChannel {
    TelegramChannel::new(TOKEN, "-1001234", &fake.options()).unwrap()
}

#[tokio::test]
async fn sends_a_message_with_an_inline_keyboard() {
    let fake = Fake::start(sent()).await;
    let ch = channel(&fake);
    assert_eq!((ch.kind(), ch.target().as_str()), ("telegram", "-1001234"));
    let delivered = ch.deliver(&notice()).await.unwrap();
    assert_eq!(
        delivered.message_ref,
        json!({ "chat_id": -1001234, "message_id": 77 })
    );

    let seen = fake.only();
    assert_eq!(seen.path, format!("/bot{TOKEN}/sendMessage"));
    assert_eq!(seen.header("authorization"), None);
    let body = seen.json();
    assert_eq!(body["chat_id"], -1001234);
    let text = body["text"].as_str().unwrap();
    assert!(text.contains("rm -rf ./build") && text.contains("R3"));
    assert!(text.contains("2025-12-31T23:59:59Z"), "{text}");
    assert!(body.get("parse_mode").is_none(), "plain text: no markup");
    let keyboard = body["reply_markup"]["inline_keyboard"].as_array().unwrap();
    let row = keyboard[0].as_array().unwrap();
    assert_eq!(row.len(), 2);
    assert_eq!(row[0]["callback_data"], format!("a:{APPROVAL}"));
    assert_eq!(row[1]["callback_data"], format!("d:{APPROVAL}"));
    for button in row {
        assert!(button["callback_data"].as_str().unwrap().len() <= telegram::MAX_CALLBACK_DATA);
    }
}

#[tokio::test]
async fn mentions_are_broken_and_a_long_command_keeps_its_flagged_tail() {
    let fake = Fake::start(sent()).await;
    let ch = channel(&fake);
    ch.deliver(&common::tricky_notice()).await.unwrap();
    let body = fake.only().json();
    assert!(body.get("parse_mode").is_none());
    let text = body["text"].as_str().unwrap();
    assert!(text.chars().count() <= 4096);
    assert!(
        text.contains("rm -rf ~") && text.contains("characters cut"),
        "{text}"
    );
    assert!(
        !text.contains("@everyone") && !text.contains("@here"),
        "{text}"
    );
    assert!(text.contains("@\u{2060}everyone"));
}

#[tokio::test]
async fn resolution_edits_the_text_and_removes_the_keyboard() {
    let fake = Fake::start(sent()).await;
    let ch = channel(&fake);
    let delivered = ch.deliver(&notice()).await.unwrap();
    ch.resolved(&delivered, &notice(), &Resolution::Expired)
        .await
        .unwrap();
    let edit = &fake.seen()[1];
    assert_eq!(edit.path, format!("/bot{TOKEN}/editMessageText"));
    let body = edit.json();
    assert_eq!(body["chat_id"], -1001234);
    assert_eq!(body["message_id"], 77);
    assert_eq!(body["reply_markup"]["inline_keyboard"], json!([]));
    assert!(body["text"].as_str().unwrap().contains("Expired"));

    // Editing again to the same text: Telegram says "not modified", which
    // is success.
    fake.script([Reply::json(
        400,
        json!({ "ok": false, "error_code": 400, "description": "Bad Request: message is not modified: specified new message content and reply markup are exactly the same" }),
    )]);
    ch.resolved(&delivered, &notice(), &Resolution::Expired)
        .await
        .unwrap();
}

#[tokio::test]
async fn answers_callback_queries() {
    let fake = Fake::start(Reply::json(200, json!({ "ok": true, "result": true }))).await;
    channel(&fake)
        .answer_callback_query("4382bfdwdsb323b2d9", Some("Vote counted"))
        .await
        .unwrap();
    let seen = fake.only();
    assert_eq!(seen.path, format!("/bot{TOKEN}/answerCallbackQuery"));
    assert_eq!(
        seen.json(),
        json!({ "callback_query_id": "4382bfdwdsb323b2d9", "text": "Vote counted" })
    );
}

#[tokio::test]
async fn failures_are_classified_and_never_show_the_token_in_the_url() {
    let fake = Fake::start(sent()).await;
    fake.script([
        Reply::Slow(Duration::from_secs(3)),
        Reply::json(502, json!({ "ok": false, "error_code": 502, "description": "Bad Gateway" })),
        Reply::json(
            429,
            json!({ "ok": false, "error_code": 429, "description": "Too Many Requests: retry after 12", "parameters": { "retry_after": 12 } }),
        ),
        Reply::json(
            400,
            json!({ "ok": false, "error_code": 400, "description": format!("Bad Request: chat not found for /bot{TOKEN}/sendMessage") }),
        ),
        Reply::json(403, json!({ "ok": false, "error_code": 403, "description": "Forbidden: bot was kicked" })),
        Reply::text(200, "not json at all"),
        Reply::json(200, json!({ "ok": true, "result": { "chat": { "id": 1 } } })),
        Reply::text(500, "<html>gateway</html>"),
    ]);
    let ch = channel(&fake);
    let mut errors = Vec::new();
    for _ in 0..8 {
        errors.push(ch.deliver(&notice()).await.unwrap_err());
    }
    assert!(matches!(errors[0], DeliveryError::Timeout { .. }));
    assert!(matches!(errors[1], DeliveryError::Server { .. }));
    assert_eq!(errors[2].retry_after(), Some(Duration::from_secs(12)));
    assert!(
        errors[3].to_string().contains("chat not found"),
        "{}",
        errors[3]
    );
    assert!(
        errors[3].to_string().contains("<redacted>"),
        "{}",
        errors[3]
    );
    assert!(matches!(errors[4], DeliveryError::Refused { .. }));
    assert!(matches!(errors[5], DeliveryError::Malformed { .. }));
    assert!(
        matches!(errors[6], DeliveryError::Malformed { .. }),
        "no message_id"
    );
    assert!(matches!(errors[7], DeliveryError::Server { .. }));
    let retryable: Vec<bool> = errors.iter().map(DeliveryError::is_retryable).collect();
    assert_eq!(
        retryable,
        [true, true, true, false, false, false, false, true]
    );
    for e in &errors {
        assert_clean(&e.to_string(), &[TOKEN, "AAHsecret"]);
        assert_clean(&format!("{e:?}"), &[TOKEN, "AAHsecret"]);
    }

    // Nothing listening: reqwest's error would name the URL, token and
    // all; the adapter's must not.
    let options = ClientOptions {
        api_base: Some(closed_base().await),
        timeout: Duration::from_millis(300),
    };
    let down = TelegramChannel::new(TOKEN, "-1001234", &options).unwrap();
    let e = down.deliver(&notice()).await.unwrap_err();
    assert!(matches!(e, DeliveryError::Connection { .. }), "{e}");
    assert_clean(&e.to_string(), &[TOKEN, "AAHsecret"]);
    assert_clean(&format!("{e:?}"), &[TOKEN, "AAHsecret"]);
    assert_clean(&format!("{down:?}"), &[TOKEN, "AAHsecret"]);
}

#[test]
fn bad_settings_are_refused_without_echoing_the_token() {
    let o = ClientOptions::default();
    let e = TelegramChannel::new("123:abc/../evil", "-1", &o).unwrap_err();
    assert_clean(&e.to_string(), &["abc/../evil"]);
    assert!(TelegramChannel::new(TOKEN, "not a chat", &o).is_err());
    assert!(TelegramChannel::new(TOKEN, "@my_channel", &o).is_ok());
}

fn update(data: &str, query_id: &str) -> Vec<u8> {
    json!({
        "update_id": 10000,
        "callback_query": {
            "id": query_id,
            "from": { "id": 1111111, "is_bot": false, "first_name": "Alice" },
            "message": { "message_id": 77, "chat": { "id": -1001234, "type": "supergroup" }, "date": 1700000000 },
            "chat_instance": "-42",
            "data": data,
        }
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_press_with_the_secret_token_is_a_vote_once() {
    let guard = MemoryReplayGuard::default();
    let now = now_secs();
    let body = update(&format!("a:{APPROVAL}"), "q-1");
    let vote = accept(WEBHOOK_SECRET, Some(WEBHOOK_SECRET), &body, now, &guard).unwrap();
    assert_eq!(vote.kind, "telegram");
    assert_eq!(vote.user, "1111111");
    assert_eq!(vote.approval_id, APPROVAL);
    assert!(vote.approve);
    assert_eq!(
        vote.message_ref,
        json!({ "chat_id": -1001234, "message_id": 77 })
    );
    assert_eq!(vote.ack, json!({ "callback_query_id": "q-1" }));
    assert_eq!(
        accept(WEBHOOK_SECRET, Some(WEBHOOK_SECRET), &body, now, &guard),
        Err(CallbackError::Replayed)
    );
    let deny = parse_update(&update(&format!("d:{APPROVAL}"), "q-2")).unwrap();
    assert!(!deny.approve);
}

#[test]
fn wrong_or_missing_secrets_and_odd_updates_are_refused() {
    // A key given twice is refused, whichever copy a reader would keep.
    let dup = br#"{"update_id":1,"callback_query":{"id":"q","data":"a:0123456789abcdef0123456789abcdef","data":"d:0123456789abcdef0123456789abcdef","from":{"id":1}}}"#;
    let e = parse_update(dup).unwrap_err();
    assert!(e.to_string().contains("appears twice"), "{e}");
    assert!(verify_webhook(WEBHOOK_SECRET, Some(WEBHOOK_SECRET)).is_ok());
    assert!(matches!(
        verify_webhook(WEBHOOK_SECRET, Some("tg-webhook-secret_0123456780")),
        Err(CallbackError::BadSignature { .. })
    ));
    assert!(matches!(
        verify_webhook(WEBHOOK_SECRET, None),
        Err(CallbackError::MissingHeader { .. })
    ));
    assert!(
        verify_webhook("", Some("")).is_err(),
        "an empty secret verifies nothing"
    );
    let e = verify_webhook(WEBHOOK_SECRET, Some("nope")).unwrap_err();
    assert_clean(&e.to_string(), &[WEBHOOK_SECRET]);

    assert!(matches!(
        parse_update(&update("x:whatever", "q")),
        Err(CallbackError::NotAVote { .. })
    ));
    assert!(matches!(
        parse_update(&update("a:not-an-id", "q")),
        Err(CallbackError::BadApprovalId { .. })
    ));
    assert!(matches!(
        parse_update(br#"{"update_id":1,"message":{"text":"hi"}}"#),
        Err(CallbackError::NotAVote { .. })
    ));
    assert!(matches!(
        parse_update(b"{not json"),
        Err(CallbackError::Malformed { .. })
    ));
    assert!(matches!(
        parse_update(
            br#"{"callback_query":{"id":"q","data":"a:0123456789abcdef0123456789abcdef"}}"#
        ),
        Err(CallbackError::Malformed { .. })
    ));
}
