//! `POST /v1/canary` (agent): integrations report that they are loaded, that
//! their agent is active and that their hook fired (see `crate::canary`).

use crate::api::read_json;
use crate::app::{App, Event};
use crate::auth::Role;
use crate::canary::{CanaryReport, Warning};
use crate::error::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};
use std::sync::Arc;

/// `POST /v1/canary` (agent).
pub async fn canary(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    app.authenticate(&headers, None, Role::Agent).await?;
    let value = read_json(&headers, body, false).await?;
    let report: CanaryReport = serde_json::from_value(value).map_err(|e| {
        ApiError::bad_request(format!(
            "not a canary report ({e}): send {{\"runtime\":\"openclaw\",\"instance\":\"…\",\
             \"event\":\"start|activity|hook|tamper\",\"detail\":\"…\"}}"
        ))
    })?;
    let now = app.clock.now_ms();
    if let Some(w) = app
        .canaries
        .report(report, now)
        .map_err(ApiError::bad_request)?
    {
        announce(&app, &w);
    }
    Ok(Json(json!({"ok": true})))
}

/// Logs a canary warning and sends it to `/ws` clients.
pub fn announce(app: &App, w: &Warning) {
    tracing::warn!(runtime = %w.runtime, instance = %w.instance, "{}", w.text);
    app.publish(Event {
        text: w.event_json().to_string().into(),
        approval: None,
    });
}
