//! One operator request to a running daemon, for the commands that ask it
//! for something (`toolgate ui`, `toolgate channels test`): the address
//! checked, a short timeout, and the daemon's own error message when it
//! refuses.

use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use std::time::Duration;

/// How long one request may take.
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

/// The daemon answered, and refused: its message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub String);

/// POSTs to `base` + `path` with `token` and returns the JSON answer. A
/// refusal is a [`Refused`] error carrying the daemon's message; anything
/// else (no daemon there, no answer) is another error.
pub(crate) fn post(base: &str, path: &str, token: &str) -> Result<Value> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start")?;
    runtime.block_on(async {
        let resp = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .context("cannot set up the HTTP client")?
            .post(format!("{base}{path}"))
            .bearer_auth(token)
            .send()
            .await
            .with_context(|| {
                format!("cannot reach the daemon at {base}: is `toolgate serve` running there?")
            })?;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            return Err(Refused(crate::approvals_remote::error_message(status, &body)).into());
        }
        Ok(body)
    })
}
