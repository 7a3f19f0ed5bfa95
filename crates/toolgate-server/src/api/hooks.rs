//! `POST /v1/hooks/{runtime}`: a runtime's hook payload over HTTP, answered
//! in that runtime's own reply format (Claude Code's `http` hook type uses
//! `/v1/hooks/claude-code`). Claude treats a non-2xx answer or a broken body
//! as a non-blocking error and runs the call, so every failure here (bad
//! token, bad input, toolgate failing) is answered 200 with the runtime's
//! fail-closed denial and the reason. HTTP carries no exit code: the JSON
//! answer is the whole answer (every runtime's `deny` stops the call).

use crate::api::read_json;
use crate::app::App;
use crate::auth::Role;
use crate::error::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::hooks::{ReplyContext, Runtime};

/// The longest a hook answer may take. Claude's own hook timeout (10 s in
/// the install snippet) would otherwise expire first and, without
/// `onFailure: "block"`, run the call; past this toolgate answers `deny`.
pub const HOOK_DEADLINE: Duration = Duration::from_secs(8);

#[derive(Debug, Deserialize)]
struct HookQuery {
    token: Option<String>,
}

/// `POST /v1/hooks/{runtime}` (agent; the token may also be given as
/// `?token=` for hook configurations that cannot send headers).
pub async fn hook(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let runtime = Runtime::parse(&name).ok_or_else(|| {
        ApiError::not_found(format!(
            "no hook for runtime {name:?}: use one of {}",
            Runtime::names()
        ))
    })?;
    let answered =
        tokio::time::timeout(HOOK_DEADLINE, answer(&app, runtime, &uri, &headers, body)).await;
    Ok(Json(match answered {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            runtime
                .reply_error(&format!("toolgate: {}", e.message))
                .stdout
        }
        Err(_) => {
            runtime
                .reply_error(&format!(
                    "toolgate: no decision within {} s (the daemon is overloaded or its store \
                     is locked); the call was not allowed",
                    HOOK_DEADLINE.as_secs()
                ))
                .stdout
        }
    }))
}

async fn answer(
    app: &App,
    runtime: Runtime,
    uri: &Uri,
    headers: &HeaderMap,
    body: Body,
) -> Result<Value, ApiError> {
    let q: HookQuery = crate::api::query(uri)?;
    app.tokens
        .authorize(headers, q.token.as_deref(), Role::Agent)?;
    let payload = read_json(headers, body, false).await?;
    let Some(hc) = runtime
        .to_call(&payload)
        .map_err(|e| ApiError::bad_request(e.to_string()))?
    else {
        // An event toolgate has no opinion on: an empty object changes nothing.
        return Ok(runtime.no_opinion().stdout);
    };
    let settings = app.gate.load().engine().policy().hooks().clone();
    let decision = crate::api::check::decide(app, hc.call).await?;
    let ctx = ReplyContext {
        mode: hc.mode.as_deref(),
        host_prompt: settings.host_prompt,
        allow_is_final: settings.allow_is_final,
    };
    Ok(runtime.reply(&decision, &ctx).stdout)
}
