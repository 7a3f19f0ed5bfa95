//! Targets from TOML, secrets from the environment.

mod common;

use common::{Fake, Reply, assert_clean, now_secs};
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;
use toolgate_channels::{ChannelConfig, ConfigError, Inbound, MemoryReplayGuard};

#[derive(Deserialize)]
struct File {
    approvals: Approvals,
}
#[derive(Deserialize)]
struct Approvals {
    routing: Routing,
}
#[derive(Deserialize)]
struct Routing {
    target: Vec<ChannelConfig>,
}

fn parse(text: &str) -> Result<Vec<ChannelConfig>, toml::de::Error> {
    toml::from_str::<File>(text).map(|f| f.approvals.routing.target)
}

const ALL: &str = r#"
[[approvals.routing.target]]
name = "ops-slack"
kind = "slack"
channel = "C0123"
bot_token_env = "SLACK_BOT_TOKEN"
signing_secret_env = "SLACK_SIGNING_SECRET"
timeout = "2s"

[[approvals.routing.target]]
name = "hook"
kind = "webhook"
url = "https://hooks.example.invalid/toolgate"
secret_env = "HOOK_SECRET"

[[approvals.routing.target]]
name = "tg"
kind = "telegram"
chat_id = -1001234
bot_token_env = "TG_TOKEN"
webhook_secret_env = "TG_SECRET"

[[approvals.routing.target]]
name = "dc"
kind = "discord"
channel_id = "999000111222333444"
bot_token_env = "DC_TOKEN"
public_key = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
"#;

fn env() -> HashMap<&'static str, &'static str> {
    HashMap::from([
        ("SLACK_BOT_TOKEN", "xoxb-SECRET-slack"),
        ("SLACK_SIGNING_SECRET", "SECRET-signing"),
        ("HOOK_SECRET", "SECRET-hook-0123456789"),
        ("TG_TOKEN", "1:SECRETtg"),
        ("TG_SECRET", "SECRET-tg-webhook\n"),
        ("DC_TOKEN", "SECRET.discord"),
    ])
}

#[test]
fn every_kind_parses_and_builds() {
    let targets = parse(ALL).unwrap();
    let env = env();
    let lookup = |k: &str| env.get(k).map(|v| v.to_string());
    let kinds: Vec<_> = targets.iter().map(|t| (t.name(), t.kind())).collect();
    assert_eq!(
        kinds,
        [
            ("ops-slack", "slack"),
            ("hook", "webhook"),
            ("tg", "telegram"),
            ("dc", "discord")
        ]
    );
    let ChannelConfig::Slack(slack) = &targets[0] else {
        panic!()
    };
    assert_eq!(slack.timeout, Some(Duration::from_secs(2)));
    let ChannelConfig::Telegram(tg) = &targets[2] else {
        panic!()
    };
    assert_eq!(tg.chat_id, "-1001234");
    for t in &targets {
        let channel = t.build(&lookup).unwrap();
        assert_eq!(channel.kind(), t.kind());
        let auth = t.callback_auth(&lookup).unwrap();
        assert_eq!(auth.is_some(), t.kind() != "webhook");
        if let Some(auth) = auth {
            assert_clean(&format!("{auth:?}"), &["SECRET"]);
        }
    }
    assert_eq!(
        targets[1].build(&lookup).unwrap().target(),
        "hooks.example.invalid/toolgate"
    );
}

#[test]
fn unknown_fields_and_bad_values_are_refused() {
    let typo = ALL.replacen(
        "bot_token_env = \"SLACK_BOT_TOKEN\"",
        "bot_tokn_env = \"X\"",
        1,
    );
    assert!(
        parse(&typo)
            .unwrap_err()
            .to_string()
            .contains("bot_tokn_env")
    );
    let inline = ALL.replacen(
        "channel = \"C0123\"",
        "channel = \"C0123\"\nbot_token = \"xoxb-1\"",
        1,
    );
    assert!(
        parse(&inline).is_err(),
        "a token in the file is an unknown field"
    );
    let kind = ALL.replacen("kind = \"webhook\"", "kind = \"email\"", 1);
    assert!(parse(&kind).is_err());
    let timeout = ALL.replacen("timeout = \"2s\"", "timeout = \"2 fortnights\"", 1);
    assert!(
        parse(&timeout)
            .unwrap_err()
            .to_string()
            .contains("not a duration")
    );
    let long = ALL.replacen("timeout = \"2s\"", "timeout = \"10m\"", 1);
    assert!(parse(&long).is_err());
}

#[test]
fn missing_secrets_name_the_variable_and_never_echo_values() {
    let targets = parse(ALL).unwrap();
    let nothing = |_: &str| None;
    for t in &targets {
        let e = t.build(&nothing).err().unwrap();
        let text = e.to_string();
        assert!(matches!(e, ConfigError::MissingEnv { .. }), "{text}");
        assert!(text.contains(t.name()), "{text}");
        assert!(
            text.contains("_TOKEN") || text.contains("HOOK_SECRET"),
            "{text}"
        );
    }
    let e = targets[0].callback_auth(&nothing).unwrap_err();
    assert!(e.to_string().contains("SLACK_SIGNING_SECRET"), "{e}");

    // A token pasted where the variable's name belongs is not repeated.
    let pasted = ALL.replacen("\"SLACK_BOT_TOKEN\"", "\"xoxb-123-PASTED/secret\"", 1);
    let t = &parse(&pasted).unwrap()[0];
    let e = t.build(&|_| Some("x".into())).err().unwrap();
    assert!(e.to_string().contains("bot_token_env"), "{e}");
    assert_clean(&e.to_string(), &["PASTED"]);

    // A bad api_base and a bad public key name the target.
    let base = ALL.replacen("timeout = \"2s\"", "api_base = \"ftp://x\"", 1);
    let env = env();
    let lookup = |k: &str| env.get(k).map(|v| v.to_string());
    let e = parse(&base).unwrap()[0].build(&lookup).err().unwrap();
    assert!(
        e.to_string().contains("ops-slack") && e.to_string().contains("api_base"),
        "{e}"
    );
    let key = ALL.replacen("d75a98", "zz5a98", 1);
    let e = parse(&key).unwrap()[3].callback_auth(&lookup).unwrap_err();
    assert!(
        e.to_string().contains("\"dc\"") && e.to_string().contains("public"),
        "{e}"
    );
    assert_clean(&e.to_string(), &["SECRET"]);
}

#[tokio::test]
async fn a_built_target_delivers_and_its_auth_accepts_a_real_callback() {
    let fake = Fake::start(Reply::json(
        200,
        json!({ "ok": true, "result": { "message_id": 3, "chat": { "id": -1001234 } } }),
    ))
    .await;
    let text = ALL.replacen(
        "webhook_secret_env = \"TG_SECRET\"",
        &format!(
            "webhook_secret_env = \"TG_SECRET\"\napi_base = \"{}\"",
            fake.base
        ),
        1,
    );
    let target = &parse(&text).unwrap()[2];
    let env = env();
    let lookup = |k: &str| env.get(k).map(|v| v.to_string());
    let channel = target.build(&lookup).unwrap();
    channel.deliver(&common::notice()).await.unwrap();
    assert!(fake.only().path.starts_with("/bot1:SECRETtg/"));

    let auth = target.callback_auth(&lookup).unwrap().unwrap();
    let body = json!({ "update_id": 1, "callback_query": {
        "id": "q9", "from": { "id": 42 }, "data": format!("a:{}", common::APPROVAL),
        "message": { "message_id": 3, "chat": { "id": -1001234 } } } })
    .to_string();
    let mut headers = reqwest::header::HeaderMap::new();
    // The variable's trailing newline was trimmed.
    headers.insert(
        toolgate_channels::telegram::SECRET_HEADER,
        "SECRET-tg-webhook".parse().unwrap(),
    );
    let guard = MemoryReplayGuard::default();
    let Ok(Inbound::Vote(vote)) = auth.accept(&headers, body.as_bytes(), now_secs(), &guard) else {
        panic!("a vote");
    };
    assert_eq!(vote.user, "42");
    assert!(
        auth.accept(&headers, body.as_bytes(), now_secs(), &guard)
            .is_err()
    );
}
