//! `POST /v1/hooks/claude-code`: Claude Code's `http` hook type. Claude
//! treats a non-2xx answer or a broken body as a non-blocking error and
//! runs the call, so every failure here (bad token, bad input, toolgate
//! failing) is answered 200 with a `deny` and the reason: fail closed.

use crate::api::read_json;
use crate::app::App;
use crate::auth::Role;
use crate::error::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::hooks::claude_code;

/// The longest a hook answer may take. Claude's own hook timeout (10 s in
/// the install snippet) would otherwise expire first and, without
/// `onFailure: "block"`, run the call; past this toolgate answers `deny`.
pub const HOOK_DEADLINE: Duration = Duration::from_secs(8);

#[derive(Debug, Deserialize)]
struct HookQuery {
    token: Option<String>,
}

/// `POST /v1/hooks/claude-code` (agent; the token may also be given as
/// `?token=` for hook configurations that cannot send headers).
pub async fn claude_code(
    State(app): State<Arc<App>>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Json<Value> {
    let answered = tokio::time::timeout(HOOK_DEADLINE, answer(&app, &uri, &headers, body)).await;
    match answered {
        Ok(Ok(v)) => Json(v),
        Ok(Err(e)) => Json(claude_code::reply_error(&format!(
            "toolgate: {}",
            e.message
        ))),
        Err(_) => Json(claude_code::reply_error(&format!(
            "toolgate: no decision within {} s (the daemon is overloaded or its store is \
             locked); the call was not allowed",
            HOOK_DEADLINE.as_secs()
        ))),
    }
}

async fn answer(app: &App, uri: &Uri, headers: &HeaderMap, body: Body) -> Result<Value, ApiError> {
    let q: HookQuery = crate::api::query(uri)?;
    app.tokens
        .authorize(headers, q.token.as_deref(), Role::Agent)?;
    let payload = read_json(headers, body, false).await?;
    let Some(call) =
        claude_code::to_call(&payload).map_err(|e| ApiError::bad_request(e.to_string()))?
    else {
        // An event toolgate has no opinion on: an empty object changes nothing.
        return Ok(json!({}));
    };
    let decision = crate::api::check::decide(app, call).await?;
    Ok(claude_code::reply(&decision))
}
