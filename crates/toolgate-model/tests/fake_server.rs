//! The client against a fake OpenAI-compatible server on 127.0.0.1:0: what
//! it sends, and how every kind of answer (or lack of one) comes out.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolgate_core::{RiskClass, ToolCall};
use toolgate_model::{
    Abstention, ContextPackage, ModelClient, ModelConfig, ModelOutcome, SCHEMA_NAME, SYSTEM_PROMPT,
    StaticAssessment,
};

const AWS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const GH_TOKEN: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const API_KEY: &str = "sk-test-4f8a1c0e9b7d";

/// What the fake server does with every request.
#[derive(Clone)]
enum Reply {
    /// A 200 chat completion whose first message has this content.
    Content(String),
    /// This status and raw body.
    Raw(u16, String),
    /// Sleeps this long, then answers with a valid assessment.
    Slow(Duration),
    /// Answers with the request's Authorization header in the body, as a
    /// careless server's error page might.
    EchoAuth(u16),
}

/// One request as the fake server saw it.
#[derive(Clone, Debug)]
struct Seen {
    auth: Option<String>,
    body: String,
}

#[derive(Clone)]
struct Fake {
    reply: Reply,
    seen: Arc<Mutex<Vec<Seen>>>,
}

async fn handle(
    State(fake): State<Fake>,
    headers: HeaderMap,
    body: String,
) -> (StatusCode, String) {
    let auth = headers
        .get("authorization")
        .map(|v| v.to_str().unwrap_or("<binary>").to_string());
    fake.seen.lock().unwrap().push(Seen {
        auth: auth.clone(),
        body,
    });
    match fake.reply {
        Reply::Content(content) => (StatusCode::OK, completion(&content)),
        Reply::Raw(code, body) => (StatusCode::from_u16(code).unwrap(), body),
        Reply::Slow(pause) => {
            tokio::time::sleep(pause).await;
            (StatusCode::OK, completion(GOOD))
        }
        Reply::EchoAuth(code) => (
            StatusCode::from_u16(code).unwrap(),
            format!("bad credentials: {}", auth.unwrap_or_default()),
        ),
    }
}

fn completion(content: &str) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "tiny",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
    })
    .to_string()
}

const GOOD: &str = r#"{"risk_class":"R3","confidence":0.91,"labels":["network-egress","external-mutation"],"rationale":"pushes to a remote repository"}"#;

/// Starts a fake server; returns its `/v1` base URL and what it saw.
async fn serve(reply: Reply) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let app = Router::new()
        .route("/v1/chat/completions", post(handle))
        .with_state(Fake {
            reply,
            seen: seen.clone(),
        });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), seen)
}

fn config(base_url: &str) -> ModelConfig {
    let mut c = ModelConfig::new(base_url, "tiny-risk-model");
    c.timeout = Duration::from_millis(500);
    c
}

fn client(base_url: &str) -> ModelClient {
    ModelClient::new(config(base_url), None).unwrap()
}

fn package() -> ContextPackage {
    let call = ToolCall {
        tool: "exec".into(),
        params: json!({
            "command": format!("AWS_ACCESS_KEY_ID={AWS_KEY} git push https://x:{GH_TOKEN}@github.com/o/r"),
            "env": {"GITHUB_TOKEN": GH_TOKEN},
        })
        .as_object()
        .unwrap()
        .clone(),
        agent: Some("builder".into()),
        session: Some("sess-42".into()),
        channel: Some("cli".into()),
        ..ToolCall::default()
    };
    ContextPackage::from_call(
        &call,
        StaticAssessment {
            risk_class: RiskClass::R3,
            reasons: vec!["git push to a remote".into()],
        },
    )
    .with_targets(["github.com"])
    .with_summary("publish the release branch")
    .with_sandboxed(Some(false))
}

fn malformed(outcome: &ModelOutcome) -> &str {
    match outcome {
        ModelOutcome::Abstained(Abstention::Malformed(why)) => why,
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn a_good_answer_is_assessed_and_the_request_is_complete_and_redacted() {
    let (url, seen) = serve(Reply::Content(GOOD.into())).await;
    let client = ModelClient::new(config(&url), Some(API_KEY.into())).unwrap();
    let outcome = client.assess(&package()).await;

    let a = outcome.assessment().expect("assessed");
    assert_eq!(a.risk_class(), RiskClass::R3);
    assert_eq!(a.confidence(), 0.91);
    assert_eq!(a.labels(), ["network-egress", "external-mutation"]);
    assert_eq!(a.rationale(), "pushes to a remote repository");

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert_eq!(
        req.auth.as_deref(),
        Some(format!("Bearer {API_KEY}").as_str())
    );
    // Nothing secret anywhere in what was sent.
    assert!(!req.body.contains(AWS_KEY), "{}", req.body);
    assert!(!req.body.contains(GH_TOKEN), "{}", req.body);
    assert!(!req.body.contains(API_KEY));

    let body: Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(body["model"], "tiny-risk-model");
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(body["max_tokens"], 300);
    let format = &body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], SCHEMA_NAME);
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(
        format["json_schema"]["schema"]["properties"]["risk_class"]["enum"],
        json!(["R0", "R1", "R2", "R3", "R4"])
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[0]["content"], SYSTEM_PROMPT);
    assert_eq!(messages[1]["role"], "user");
    let ctx: Value = serde_json::from_str(messages[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(ctx["tool"], "exec");
    assert_eq!(ctx["agent"], "builder");
    assert_eq!(ctx["session"], "sess-42");
    assert_eq!(ctx["targets"], json!(["github.com"]));
    assert_eq!(ctx["summary"], "publish the release branch");
    assert_eq!(ctx["sandboxed"], false);
    assert_eq!(ctx["static_assessment"]["risk_class"], "R3");
    assert_eq!(ctx["args"]["env"]["GITHUB_TOKEN"], "[REDACTED:token]");
}

#[tokio::test]
async fn no_key_configured_sends_no_authorization() {
    let (url, seen) = serve(Reply::Content(GOOD.into())).await;
    assert!(client(&url).assess(&package()).await.assessment().is_some());
    assert_eq!(seen.lock().unwrap()[0].auth, None);
}

#[tokio::test]
async fn a_fenced_answer_is_accepted() {
    let (url, _) = serve(Reply::Content(format!("```json\n{GOOD}\n```"))).await;
    let outcome = client(&url).assess(&package()).await;
    assert_eq!(outcome.assessment().unwrap().risk_class(), RiskClass::R3);
}

#[tokio::test]
async fn a_slow_server_times_out_promptly() {
    let (url, _) = serve(Reply::Slow(Duration::from_secs(10))).await;
    let mut c = config(&url);
    c.timeout = Duration::from_millis(200);
    let client = ModelClient::new(c, None).unwrap();
    let start = Instant::now();
    let outcome = client.assess(&package()).await;
    assert_eq!(outcome, ModelOutcome::Abstained(Abstention::Timeout));
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn a_body_that_stalls_times_out_too() {
    // Headers arrive at once; the body never finishes.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 64 * 1024];
        let _ = sock.read(&mut buf).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n{\"choices\":";
        sock.write_all(head.as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(10)).await;
    });
    let mut c = config(&format!("http://{addr}/v1"));
    c.timeout = Duration::from_millis(200);
    let client = ModelClient::new(c, None).unwrap();
    let start = Instant::now();
    let outcome = client.assess(&package()).await;
    assert_eq!(outcome, ModelOutcome::Abstained(Abstention::Timeout));
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn server_errors_are_http_status() {
    let (url, _) = serve(Reply::Raw(500, "internal error".into())).await;
    assert_eq!(
        client(&url).assess(&package()).await,
        ModelOutcome::Abstained(Abstention::HttpStatus(500))
    );
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let (url, _) = serve(Reply::Raw(307, String::new())).await;
    assert_eq!(
        client(&url).assess(&package()).await,
        ModelOutcome::Abstained(Abstention::HttpStatus(307))
    );
}

#[tokio::test]
async fn a_refused_key_is_http_status_and_never_shown() {
    let (url, seen) = serve(Reply::EchoAuth(401)).await;
    let client = ModelClient::new(config(&url), Some(API_KEY.into())).unwrap();
    let outcome = client.assess(&package()).await;
    assert_eq!(
        outcome,
        ModelOutcome::Abstained(Abstention::HttpStatus(401))
    );
    // The server did get the key (and echoed it); the outcome never shows it.
    assert!(
        seen.lock().unwrap()[0]
            .auth
            .as_deref()
            .unwrap()
            .contains(API_KEY)
    );
    let ModelOutcome::Abstained(why) = &outcome else {
        unreachable!()
    };
    let text = format!("{why} {outcome:?} {client:?}");
    assert!(!text.contains(API_KEY), "{text}");
    assert!(text.contains("api_key_env"), "{text}");
}

#[tokio::test]
async fn bodies_that_are_not_an_answer_are_malformed() {
    let cases = [
        (Reply::Raw(200, "<html>hello</html>".into()), "not a chat completion"),
        (Reply::Raw(200, r#"{"object":"chat.completion"}"#.into()), "choices"),
        (Reply::Content("I think this is fine.".into()), "not a JSON object"),
        (
            Reply::Content(
                r#"{"risk_class":"R0","confidence":0.9,"labels":[],"rationale":"","decision":"allow"}"#
                    .into(),
            ),
            "unknown field",
        ),
        (
            Reply::Content(
                r#"{"risk_class":"R9","confidence":0.9,"labels":[],"rationale":""}"#.into(),
            ),
            "R9",
        ),
        (
            Reply::Content(
                r#"{"risk_class":"R0","confidence":1.7,"labels":[],"rationale":""}"#.into(),
            ),
            "1.7",
        ),
        (Reply::Raw(200, "x".repeat(300 * 1024)), "larger than"),
    ];
    for (reply, says) in cases {
        let (url, _) = serve(reply).await;
        let outcome = client(&url).assess(&package()).await;
        let why = malformed(&outcome);
        assert!(why.contains(says), "{why}");
        let sentence = match &outcome {
            ModelOutcome::Abstained(a) => a.to_string(),
            _ => unreachable!(),
        };
        assert!(sentence.starts_with("the model's answer was not a valid assessment"));
    }
}

#[tokio::test]
async fn low_confidence_abstains() {
    let (url, _) = serve(Reply::Content(
        r#"{"risk_class":"R0","confidence":0.3,"labels":[],"rationale":"unclear"}"#.into(),
    ))
    .await;
    assert_eq!(
        client(&url).assess(&package()).await,
        ModelOutcome::Abstained(Abstention::LowConfidence(0.3))
    );
}

#[tokio::test]
async fn a_closed_port_is_unreachable() {
    // Bind to learn a free port, then close it so nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let outcome = client(&format!("http://{addr}/v1"))
        .assess(&package())
        .await;
    match &outcome {
        ModelOutcome::Abstained(Abstention::Unreachable(why)) => {
            // e.g. "error sending request for url (…): client error (Connect):
            // tcp connect error: Connection refused (os error 111)"
            assert!(why.contains("connect"), "{why}");
            assert!(outcome_text(&outcome).contains("base_url"));
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

fn outcome_text(outcome: &ModelOutcome) -> String {
    match outcome {
        ModelOutcome::Abstained(a) => a.to_string(),
        ModelOutcome::Assessed(_) => String::new(),
    }
}

#[test]
fn assess_blocking_works_from_plain_threads() {
    // The fake server lives on a runtime of its own; the test thread has none.
    let server_rt = tokio::runtime::Runtime::new().unwrap();
    let (url, seen) = server_rt.block_on(serve(Reply::Content(GOOD.into())));
    let client = client(&url);
    for _ in 0..2 {
        let outcome = client.assess_blocking(&package());
        assert_eq!(outcome.assessment().unwrap().risk_class(), RiskClass::R3);
    }
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[test]
fn assess_blocking_times_out_promptly() {
    let server_rt = tokio::runtime::Runtime::new().unwrap();
    let (url, _) = server_rt.block_on(serve(Reply::Slow(Duration::from_secs(10))));
    let mut c = config(&url);
    c.timeout = Duration::from_millis(200);
    let client = ModelClient::new(c, None).unwrap();
    let start = Instant::now();
    assert_eq!(
        client.assess_blocking(&package()),
        ModelOutcome::Abstained(Abstention::Timeout)
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    // Shut the server down without waiting for its sleeping handler.
    server_rt.shutdown_background();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assess_blocking_inside_a_runtime_does_not_panic() {
    let (url, _) = serve(Reply::Content(GOOD.into())).await;
    let client = client(&url);
    let outcome = client.assess_blocking(&package());
    assert_eq!(outcome.assessment().unwrap().risk_class(), RiskClass::R3);
    // Dropping the client (and its runtime) inside this runtime is fine too.
    drop(client);
}

#[test]
fn config_from_toml_feeds_a_client() {
    let c = ModelConfig::from_toml(
        "base_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"m\"\ntimeout = \"250ms\"\n",
    )
    .unwrap();
    let client = ModelClient::new(c, None).unwrap();
    assert_eq!(client.config().timeout, Duration::from_millis(250));
    let err = ModelConfig::from_toml(
        "base_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"m\"\nmin_confidence = 1.5\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("min_confidence"), "{err}");
}
