//! One request to a running daemon, for the commands that ask it for
//! something (`toolgate ui`, `toolgate channels test`, `toolgate check
//! --url`): the address checked, a timeout, and the daemon's own error
//! message when it refuses.

use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use std::time::Duration;

/// How long one request may take, unless the caller says.
const TIMEOUT: Duration = Duration::from_secs(15);

/// `base` without a trailing `/`, when it is an http(s) address; else an
/// error that says what to give.
pub(crate) fn base_url(base: &str) -> Result<&str> {
    let base = base.trim_end_matches('/');
    if base.starts_with("http://") || base.starts_with("https://") {
        Ok(base)
    } else {
        Err(anyhow!(
            "--url {base:?}: give the daemon's address, such as http://127.0.0.1:7878"
        ))
    }
}

/// The daemon answered, and refused: its HTTP status and message.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Refused {
    /// The HTTP status (401: the token was not accepted).
    pub status: u16,
    /// What the daemon said.
    pub message: String,
}

/// POSTs to `base` + `path` with `token` and no body; see [`post_json`].
pub(crate) fn post(base: &str, path: &str, token: &str) -> Result<Value> {
    post_json(base, path, token, None, TIMEOUT)
}

/// POSTs `body` (when given) to `base` + `path` with `token`, waiting at
/// most `timeout`, and returns the JSON answer. A refusal is a [`Refused`]
/// error carrying the daemon's message; anything else (no daemon there, no
/// answer) is another error.
pub(crate) fn post_json(
    base: &str,
    path: &str,
    token: &str,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<Value> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start")?;
    runtime.block_on(async {
        let mut req = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .context("cannot set up the HTTP client")?
            .post(format!("{base}{path}"))
            .bearer_auth(token);
        if let Some(body) = body {
            req = req.json(body);
        }
        let resp = req.send().await.with_context(|| {
            format!("cannot reach the daemon at {base}: is `toolgate serve` running there?")
        })?;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(Refused {
                status: status.as_u16(),
                message: crate::approvals_remote::error_message(status, &body),
            }
            .into());
        }
        Ok(body)
    })
}
