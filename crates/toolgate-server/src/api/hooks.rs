//! `POST /v1/hooks/{runtime}`: a runtime's hook payload over HTTP, answered
//! in that runtime's own reply format (Claude Code's `http` hook type uses
//! `/v1/hooks/claude-code`). Claude treats a non-2xx answer or a broken body
//! as a non-blocking error and runs the call, so every failure here (bad
//! token, bad input, toolgate failing) is answered 200 with the runtime's
//! fail-closed denial and the reason, and so is a runtime name toolgate
//! does not know (in Claude Code's shape). HTTP carries no exit code: the
//! JSON answer is the whole answer (every runtime's `deny` stops the call).

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
    let Some(runtime) = Runtime::parse(&name) else {
        return Ok(Json(unknown_runtime(&name)));
    };
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

/// The answer for a hook route naming no runtime toolgate knows: a 200
/// denial in Claude Code's shape (the one runtime that calls these routes
/// itself), which Claude honours; a 404 would run the call unless the
/// entry sets `onFailure: "block"`. The other runtimes read `deny` in it
/// too, or fail closed on a shape they do not know.
fn unknown_runtime(name: &str) -> Value {
    let shown: String = name.chars().take(64).collect();
    Runtime::ClaudeCode
        .reply_error(&format!(
            "toolgate: no hook for runtime {shown:?} at this address (use /v1/hooks/<runtime>, \
             one of {}); the call was not allowed",
            Runtime::names()
        ))
        .stdout
}

/// The fallback's answer for a path under `/v1/hooks/` that no route
/// matched (`/v1/hooks/`, `/v1/hooks/a/b`): the same denial, with 200.
pub fn unknown_hook_path(path: &str) -> Option<axum::response::Response> {
    use axum::response::IntoResponse;
    let rest = path.strip_prefix("/v1/hooks")?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    Some(Json(unknown_runtime(rest.trim_start_matches('/'))).into_response())
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
