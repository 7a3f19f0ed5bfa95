//! Discord against a local fake of the REST API, and its Ed25519-signed
//! interactions with keys made here.

mod common;

use common::{APPROVAL, Fake, Reply, assert_clean, closed_base, notice, now_secs};
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{Value, json};
use std::time::Duration;
use toolgate_channels::discord::{self, accept, parse_interaction, verify};
use toolgate_channels::{
    CallbackAuth, CallbackError, Channel, ClientOptions, DeliveryError, DiscordChannel, Inbound,
    MemoryReplayGuard, Resolution,
};

const TOKEN: &str = "MTIzNDU2Nzg5MDEy.SECRET.discordBotToken";

fn created() -> Reply {
    Reply::json(
        200,
        json!({ "id": "1100000000000000001", "channel_id": "999000111222333444", "content": "x" }),
    )
}

fn channel(fake: &Fake) -> DiscordChannel {
    DiscordChannel::new(TOKEN, "999000111222333444", &fake.options()).unwrap()
}

fn key() -> SigningKey {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).unwrap();
    SigningKey::from_bytes(&seed)
}

fn public_hex(key: &SigningKey) -> String {
    key.verifying_key()
        .to_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn sign(key: &SigningKey, ts: &str, body: &[u8]) -> String {
    let mut message = ts.as_bytes().to_vec();
    message.extend_from_slice(body);
    key.sign(&message)
        .to_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn posts_an_embed_with_two_buttons_and_bot_auth() {
    let fake = Fake::start(created()).await;
    let ch = channel(&fake);
    assert_eq!(ch.kind(), "discord");
    assert_eq!(ch.target(), "999000111222333444");
    let delivered = ch.deliver(&notice()).await.unwrap();
    assert_eq!(
        delivered.message_ref,
        json!({ "channel_id": "999000111222333444", "message_id": "1100000000000000001" })
    );

    let seen = fake.only();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.path, "/channels/999000111222333444/messages");
    assert_eq!(seen.header("authorization"), Some(&*format!("Bot {TOKEN}")));
    let body = seen.json();
    assert_eq!(body["allowed_mentions"], json!({ "parse": [] }));
    let description = body["embeds"][0]["description"].as_str().unwrap();
    assert!(description.contains("rm \\-rf ./build"), "{description}");
    assert!(description.contains("\\<!channel\\>"), "{description}");
    assert!(body["embeds"].to_string().contains("R3"));
    let row = &body["components"][0];
    assert_eq!(row["type"], 1);
    let buttons = row["components"].as_array().unwrap();
    assert_eq!(buttons.len(), 2);
    assert_eq!(buttons[0]["type"], 2);
    assert_eq!(
        buttons[0]["custom_id"],
        format!("toolgate_approve:{APPROVAL}")
    );
    assert_eq!(buttons[0]["style"], 3);
    assert_eq!(buttons[1]["custom_id"], format!("toolgate_deny:{APPROVAL}"));
    assert_eq!(buttons[1]["style"], 4);
}

#[tokio::test]
async fn tricky_text_is_escaped_and_a_long_command_keeps_its_flagged_tail() {
    let fake = Fake::start(created()).await;
    let ch = channel(&fake);
    ch.deliver(&common::tricky_notice()).await.unwrap();
    let body = fake.only().json();
    assert_eq!(body["allowed_mentions"], json!({ "parse": [] }));
    let embed = &body["embeds"][0];
    let description = embed["description"].as_str().unwrap();
    assert!(description.chars().count() <= 4096);
    assert!(description.contains("rm \\-rf \\~"), "{description}");
    assert!(description.contains("characters cut"), "{description}");
    // Every `<`, `@`, `[` the agent wrote is escaped (toolgate's own
    // dashboard link and `<t:…>` time are the only markup).
    let mut texts = vec![body["content"].as_str().unwrap().to_string()];
    texts.push(embed["title"].as_str().unwrap().to_string());
    texts.push(
        description
            .replace("[Open in the dashboard](", "")
            .replace("**Reason:**", ""),
    );
    for f in embed["fields"].as_array().unwrap() {
        texts.push(f["value"].as_str().unwrap().replace("<t:", ""));
    }
    for t in &texts {
        for (i, c) in t.char_indices() {
            if matches!(c, '<' | '@' | '[' | '*' | '_' | '`') {
                assert_eq!(t[..i].chars().last(), Some('\\'), "unescaped {c:?} in {t}");
            }
        }
    }
    assert!(embed["title"].as_str().unwrap().chars().count() <= 256);
}

#[tokio::test]
async fn resolution_patches_the_message_and_removes_the_components() {
    let fake = Fake::start(created()).await;
    let ch = channel(&fake);
    let delivered = ch.deliver(&notice()).await.unwrap();
    let denied = Resolution::Denied {
        by: "bob".into(),
        reason: None,
    };
    ch.resolved(&delivered, &notice(), &denied).await.unwrap();
    let patch = &fake.seen()[1];
    assert_eq!(patch.method, "PATCH");
    assert_eq!(
        patch.path,
        "/channels/999000111222333444/messages/1100000000000000001"
    );
    assert_eq!(
        patch.header("authorization"),
        Some(&*format!("Bot {TOKEN}"))
    );
    let body = patch.json();
    assert_eq!(body["components"], json!([]));
    assert!(body.to_string().contains("Denied by bob."));

    // Ids from storage go into the path, so only digits pass.
    let mut evil = delivered.clone();
    evil.message_ref["message_id"] = json!("1/../../guilds/1");
    let e = ch.resolved(&evil, &notice(), &denied).await.unwrap_err();
    assert!(matches!(e, DeliveryError::Invalid { .. }));
    assert_eq!(fake.seen().len(), 2, "nothing was sent");
}

#[tokio::test]
async fn failures_are_classified_and_never_show_the_token() {
    let fake = Fake::start(created()).await;
    fake.script([
        Reply::Slow(Duration::from_secs(3)),
        Reply::text(500, "oops"),
        Reply::json(429, json!({ "message": "You are being rate limited.", "retry_after": 1.5, "global": false })),
        Reply::Raw(429, vec![("retry-after", "4".into())], "{}".into()),
        Reply::json(403, json!({ "message": "Missing Access", "code": 50001 })),
        Reply::json(401, json!({ "message": format!("401: Unauthorized {TOKEN}"), "code": 0 })),
        Reply::text(200, "not json"),
        Reply::json(200, json!({ "channel_id": "1" })),
    ]);
    let ch = channel(&fake);
    let mut errors = Vec::new();
    for _ in 0..8 {
        errors.push(ch.deliver(&notice()).await.unwrap_err());
    }
    assert!(matches!(errors[0], DeliveryError::Timeout { .. }));
    assert!(matches!(errors[1], DeliveryError::Server { .. }));
    assert_eq!(errors[2].retry_after(), Some(Duration::from_millis(1500)));
    assert_eq!(errors[3].retry_after(), Some(Duration::from_secs(4)));
    assert!(
        errors[4].to_string().contains("50001 Missing Access"),
        "{}",
        errors[4]
    );
    assert!(matches!(errors[5], DeliveryError::Refused { .. }));
    assert!(matches!(errors[6], DeliveryError::Malformed { .. }));
    assert!(matches!(errors[7], DeliveryError::Malformed { .. }));
    let retryable: Vec<bool> = errors.iter().map(DeliveryError::is_retryable).collect();
    assert_eq!(
        retryable,
        [true, true, true, true, false, false, false, false]
    );
    for e in &errors {
        assert_clean(&e.to_string(), &[TOKEN]);
    }

    let options = ClientOptions {
        api_base: Some(closed_base().await),
        timeout: Duration::from_millis(300),
    };
    let down = DiscordChannel::new(TOKEN, "1", &options).unwrap();
    let e = down.deliver(&notice()).await.unwrap_err();
    assert!(e.is_retryable());
    assert_clean(&e.to_string(), &[TOKEN]);
    assert_clean(&format!("{down:?}"), &[TOKEN]);
}

fn press(id: &str, custom_id: &str, in_guild: bool) -> Vec<u8> {
    let mut body = json!({
        "type": 3,
        "id": id,
        "application_id": "555",
        "token": "interaction-token",
        "channel_id": "999000111222333444",
        "data": { "custom_id": custom_id, "component_type": 2 },
        "message": { "id": "1100000000000000001", "channel_id": "999000111222333444" },
    });
    let user = json!({ "id": "222333444555666777", "username": "carol" });
    if in_guild {
        body["member"] = json!({ "user": user });
    } else {
        body["user"] = user;
    }
    body.to_string().into_bytes()
}

#[test]
fn a_signed_press_is_a_vote_once() {
    let key = key();
    let public = public_hex(&key);
    let guard = MemoryReplayGuard::default();
    let now = now_secs();
    let ts = now.to_string();
    let body = press(
        "1200000000000000001",
        &format!("toolgate_approve:{APPROVAL}"),
        true,
    );
    let sig = sign(&key, &ts, &body);

    let Inbound::Vote(vote) = accept(&public, Some(&sig), Some(&ts), &body, now, &guard).unwrap()
    else {
        panic!("a press is a vote");
    };
    assert_eq!(vote.kind, "discord");
    assert_eq!(vote.user, "222333444555666777");
    assert_eq!(vote.approval_id, APPROVAL);
    assert!(vote.approve);
    assert_eq!(
        vote.message_ref,
        json!({ "channel_id": "999000111222333444", "message_id": "1100000000000000001" })
    );
    assert_eq!(vote.replay_key, "discord:1200000000000000001");
    assert_eq!(
        accept(&public, Some(&sig), Some(&ts), &body, now, &guard),
        Err(CallbackError::Replayed)
    );

    // In a DM the presser is `user`, not `member.user`.
    let dm = press(
        "1200000000000000002",
        &format!("toolgate_deny:{APPROVAL}"),
        false,
    );
    let Inbound::Vote(vote) = parse_interaction(&dm).unwrap() else {
        panic!("a press is a vote");
    };
    assert_eq!(vote.user, "222333444555666777");
    assert!(!vote.approve);
}

#[test]
fn bad_signatures_other_keys_and_stale_timestamps_are_refused() {
    let key = key();
    let public = public_hex(&key);
    let now = now_secs();
    let ts = now.to_string();
    let body = press("1", &format!("toolgate_approve:{APPROVAL}"), true);
    let sig = sign(&key, &ts, &body);
    assert!(verify(&public, Some(&sig), Some(&ts), &body, now).is_ok());

    let mut tampered = body.clone();
    let last = tampered.len() - 2;
    tampered[last] ^= 1;
    assert_eq!(
        verify(&public, Some(&sig), Some(&ts), &tampered, now),
        Err(CallbackError::BadSignature { what: "signature" })
    );
    let other = sign(&self::key(), &ts, &body);
    assert!(verify(&public, Some(&other), Some(&ts), &body, now).is_err());
    // The timestamp is signed: changing it breaks the signature.
    let later = (now + 1).to_string();
    assert!(verify(&public, Some(&sig), Some(&later), &body, now).is_err());
    let old = (now - 400).to_string();
    assert!(matches!(
        verify(
            &public,
            Some(&sign(&key, &old, &body)),
            Some(&old),
            &body,
            now
        ),
        Err(CallbackError::Stale { .. })
    ));
    assert!(matches!(
        verify(&public, None, Some(&ts), &body, now),
        Err(CallbackError::MissingHeader { .. })
    ));
    assert!(matches!(
        verify(&public, Some(&sig), None, &body, now),
        Err(CallbackError::MissingHeader { .. })
    ));
    assert!(verify(&public, Some("abcd"), Some(&ts), &body, now).is_err());
    assert!(matches!(
        verify("nothex", Some(&sig), Some(&ts), &body, now),
        Err(CallbackError::Misconfigured { .. })
    ));
}

#[test]
fn pings_are_answered_and_odd_interactions_refused() {
    // A key given twice is refused, whichever copy a reader would keep.
    let e = toolgate_channels::discord::parse_interaction(br#"{"type":1,"type":3}"#).unwrap_err();
    assert!(e.to_string().contains("appears twice"), "{e}");
    let key = key();
    let now = now_secs();
    let ts = now.to_string();
    let ping = br#"{"type":1,"id":"1300000000000000001"}"#;
    let auth = CallbackAuth::discord(&public_hex(&key)).unwrap();
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(discord::TIMESTAMP_HEADER, ts.parse().unwrap());
    headers.insert(
        discord::SIGNATURE_HEADER,
        sign(&key, &ts, ping).parse().unwrap(),
    );
    let guard = MemoryReplayGuard::default();
    assert_eq!(auth.accept(&headers, ping, now, &guard), Ok(Inbound::Ping));
    assert_eq!(discord::pong(), json!({ "type": 1 }));
    // An unsigned ping, as Discord sends to test the endpoint: refused.
    headers.remove(discord::SIGNATURE_HEADER);
    assert!(auth.accept(&headers, ping, now, &guard).is_err());

    let command = br#"{"type":2,"id":"1","data":{"name":"x"}}"#;
    assert!(matches!(
        parse_interaction(command),
        Err(CallbackError::NotAVote { .. })
    ));
    assert!(matches!(
        parse_interaction(&press("1", "someone_else:xyz", true)),
        Err(CallbackError::NotAVote { .. })
    ));
    assert!(matches!(
        parse_interaction(&press("1", "toolgate_approve:ABC", true)),
        Err(CallbackError::BadApprovalId { .. })
    ));
    assert!(matches!(
        parse_interaction(b"[]"),
        Err(CallbackError::Malformed { .. })
    ));
    let mut no_user: Value =
        serde_json::from_slice(&press("1", &format!("toolgate_approve:{APPROVAL}"), true)).unwrap();
    no_user.as_object_mut().unwrap().remove("member");
    assert!(matches!(
        parse_interaction(no_user.to_string().as_bytes()),
        Err(CallbackError::Malformed { .. })
    ));
}
