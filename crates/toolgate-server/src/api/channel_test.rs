//! `POST /v1/channels/{target}/test` (operator): sends a test message
//! through one routing target, with the daemon's own settings and secrets,
//! so whoever sets up a channel sees at once whether (and how) requests
//! will reach it. The message says it is a test; its buttons act on no
//! approval (a press is answered "no such approval").

use crate::app::App;
use crate::auth::Role;
use crate::error::ApiError;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_channels::Notice;

/// How long the test message says it waits (it waits for nothing).
const SHOWN_TTL_MS: i64 = 5 * 60 * 1000;

/// Sends the test message; 404 for an unknown target, 409 for one that
/// is not ready (with why), 502 when the service refused or could not be
/// reached (with what it said).
pub async fn test(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let who = app.authenticate(&headers, None, Role::Operator).await?;
    let router = app.router.load_full();
    let Some(target) = router.target(&name) else {
        let names: Vec<&str> = router
            .targets
            .iter()
            .map(|t| t.spec.name.as_str())
            .collect();
        return Err(ApiError::not_found(if names.is_empty() {
            format!(
                "no routing target {name:?}: the policy in force names none ([[approvals.routing.target]], docs/channels.md)"
            )
        } else {
            format!(
                "no routing target {name:?}: the policy names {}",
                names.join(", ")
            )
        }));
    };
    let Some(channel) = target.channel.clone() else {
        return Err(ApiError::refused(format!(
            "routing target {name:?} is not ready: {}",
            target.error.as_deref().unwrap_or("it could not be set up")
        )));
    };
    let notice = Notice {
        approval_id: "0".repeat(32),
        summary: format!("toolgate test message, sent by {}", who.identity),
        tool: "test".into(),
        risk: "R0".into(),
        reason: format!(
            "a test of routing target {name}: approval requests will arrive here like this; its buttons act on nothing"
        ),
        agent: None,
        session: None,
        have: 0,
        need: 1,
        expires_at_ms: app.clock.now_ms() + SHOWN_TTL_MS,
        approve_url: None,
        deny_url: None,
        dashboard_url: Some(format!("{}/", app.base_url())),
        flagged: Vec::new(),
    };
    match channel.deliver(&notice).await {
        Ok(d) => Ok(Json(json!({
            "target": name,
            "kind": d.kind,
            "to": d.target,
            "delivered": true,
        }))),
        Err(e) => Err(ApiError::bad_gateway(format!(
            "routing target {name:?} ({}): {e}",
            channel.kind()
        ))),
    }
}
