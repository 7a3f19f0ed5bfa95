//! A scriptable fake HTTP service on 127.0.0.1 for the adapter tests: it
//! records every request and answers from a queue of scripted replies.
#![allow(dead_code)] // each test file uses a different part

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolgate_channels::{ClientOptions, Notice};

/// One request the fake received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Seen {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("the adapter sent JSON")
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// A status, extra headers and a body.
    Raw(u16, Vec<(&'static str, String)>, String),
    /// Wait this long, then answer 200 `{}` (long after any client
    /// timeout in these tests).
    Slow(Duration),
}

impl Reply {
    pub(crate) fn json(status: u16, body: serde_json::Value) -> Reply {
        Reply::Raw(
            status,
            vec![("content-type", "application/json".into())],
            body.to_string(),
        )
    }

    pub(crate) fn text(status: u16, body: &str) -> Reply {
        Reply::Raw(status, vec![], body.to_string())
    }
}

#[derive(Clone)]
struct Shared {
    seen: Arc<Mutex<Vec<Seen>>>,
    script: Arc<Mutex<VecDeque<Reply>>>,
    default: Reply,
}

/// A running fake service.
pub(crate) struct Fake {
    pub base: String,
    shared: Shared,
}

impl Fake {
    /// Starts a fake answering `default` once its script runs out.
    pub(crate) async fn start(default: Reply) -> Fake {
        let shared = Shared {
            seen: Arc::default(),
            script: Arc::default(),
            default,
        };
        let app = Router::new().fallback(answer).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Fake {
            base: format!("http://{addr}"),
            shared,
        }
    }

    /// Queues replies to use before the default.
    pub(crate) fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.shared.script.lock().unwrap().extend(replies);
    }

    /// Everything received so far.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// The one request received (panics otherwise).
    pub(crate) fn only(&self) -> Seen {
        let seen = self.seen();
        assert_eq!(seen.len(), 1, "expected exactly one request: {seen:?}");
        seen[0].clone()
    }

    /// Options pointing an adapter here with a short timeout.
    pub(crate) fn options(&self) -> ClientOptions {
        ClientOptions {
            api_base: Some(self.base.clone()),
            timeout: Duration::from_millis(300),
        }
    }
}

async fn answer(
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    shared.seen.lock().unwrap().push(Seen {
        method,
        path: uri.path().to_string(),
        headers,
        body: body.to_vec(),
    });
    let reply = shared
        .script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| shared.default.clone());
    match reply {
        Reply::Slow(wait) => {
            tokio::time::sleep(wait).await;
            (StatusCode::OK, "{}").into_response()
        }
        Reply::Raw(status, extra, body) => {
            let mut response = (StatusCode::from_u16(status).unwrap(), body).into_response();
            for (name, value) in extra {
                response.headers_mut().insert(
                    HeaderName::from_static(name),
                    HeaderValue::from_str(&value).unwrap(),
                );
            }
            response
        }
    }
}

/// An address on which nothing listens (bound, then released).
pub(crate) async fn closed_base() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

pub(crate) const APPROVAL: &str = "0123456789abcdef0123456789abcdef";

/// A notice with every field set.
pub(crate) fn notice() -> Notice {
    Notice {
        approval_id: APPROVAL.into(),
        summary: "rm -rf ./build <!channel>".into(),
        tool: "Bash".into(),
        risk: "R3".into(),
        reason: "deletes files outside the sandbox".into(),
        agent: Some("claude-code".into()),
        session: Some("sess-42".into()),
        have: 0,
        need: 2,
        expires_at_ms: 1_767_225_599_000,
        approve_url: Some("https://gate.example.invalid/l/abc".into()),
        deny_url: Some("https://gate.example.invalid/l/def".into()),
        dashboard_url: Some("https://gate.example.invalid/approvals/x".into()),
        flagged: vec!["rm -rf ./build".into()],
    }
}

/// A notice an attacker wrote: a command whose dangerous tail lies far
/// past any chat limit, and text trying every mention, link and markup
/// trick. Its flagged part is the tail.
#[allow(dead_code)]
pub(crate) fn tricky_notice() -> Notice {
    let mut n = notice();
    n.summary = format!(
        "ls {} ; rm -rf ~ <!channel> <@U024BE7LH> <#C024BE7LR> @everyone @here <@&123> \
         [innocent](http://evil.test) <http://evil.test|innocent> *x* _y_ ~z~ `w`",
        "a".repeat(6000)
    );
    n.flagged = vec!["rm -rf ~".into()];
    n.tool = "Bash <!here> @everyone".into();
    n.reason = "<!channel> @everyone [docs](http://evil.test) <http://evil.test|ok>".into();
    n.agent = Some("<@U1> @here".into());
    n
}

pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Asserts `text` holds none of `secrets`.
pub(crate) fn assert_clean(text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "a secret leaked into an error: {text}"
        );
    }
}
