//! Emergency bypass (docs/approvals.md), operators only: lift named layers for a
//! while, or cast one person's approving vote on one approval, always with a
//! reason; layer bypasses are listed in `/v1/state` and shown as a banner in
//! the control UI until they lapse.

use crate::api::read_json;
use crate::app::{App, Event};
use crate::auth::Role;
use crate::error::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::{ApprovalId, parse_layer};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StartBody {
    layers: Option<Vec<String>>,
    approval: Option<String>,
    #[serde(rename = "for")]
    duration: Option<String>,
    reason: Option<String>,
}

const BODY_HELP: &str = "send {\"layers\": [\"knowledge\"], \"for\": \"30m\", \"reason\": \"…\"} to lift layers, or {\"approval\": \"<id>\", \"reason\": \"…\"} to cast your approving vote on one approval";

/// `GET /v1/bypass` (operator): every bypass, newest first, and which are
/// active.
pub async fn list(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    app.authenticate(&headers, None, Role::Operator).await?;
    let store = app.store.clone();
    let mut all = tokio::task::spawn_blocking(move || store.read_bypasses())
        .await
        .map_err(|_| ApiError::internal("reading the bypasses failed"))??;
    all.sort_by_key(|b| std::cmp::Reverse(b.started_ms));
    let now = app.clock.now_ms();
    let active: Vec<&str> = all
        .iter()
        .filter(|b| b.active(now))
        .map(|b| b.id.as_str())
        .collect();
    Ok(Json(json!({"bypasses": all, "active": active})))
}

/// `POST /v1/bypass` (operator): starts a bypass of layers, or bypasses one
/// approval, as the authenticated operator: their approving vote, counted
/// once (`outcome` says whether it completed the quorum; a refusal is a
/// 409 `refused`, as for a vote).
pub async fn start(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let who = app.authenticate(&headers, None, Role::Operator).await?;
    let value = read_json(&headers, body, false).await?;
    let body: StartBody = serde_json::from_value(value)
        .map_err(|e| ApiError::bad_request(format!("{BODY_HELP}: {e}")))?;
    let reason = body.reason.unwrap_or_default();
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let out = match (body.layers, body.approval) {
        (Some(names), None) => {
            let layers = names
                .iter()
                .map(|n| {
                    parse_layer(n).ok_or_else(|| {
                        ApiError::bad_request(format!(
                            "{n:?} is not a layer: use knowledge, risk or posture"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let text = body.duration.as_deref().unwrap_or("15m");
            let duration = humantime::parse_duration(text.trim()).map_err(|e| {
                ApiError::bad_request(format!(
                    "bad \"for\" {text:?} ({e}): give a duration such as 30m"
                ))
            })?;
            let b = tokio::task::spawn_blocking(move || {
                toolgate_gate::start_bypass(
                    &*store,
                    &*clock,
                    &layers,
                    duration,
                    &reason,
                    &who.identity,
                )
            })
            .await
            .map_err(|_| ApiError::internal("starting the bypass failed"))??;
            json!({"bypass": b})
        }
        (None, Some(id)) => {
            let id = ApprovalId::parse(&id)
                .map_err(|e| ApiError::not_found(format!("no approval {id:?}: {e}")))?;
            let (a, outcome) = tokio::task::spawn_blocking(move || {
                toolgate_gate::bypass_approval(&*store, &*clock, &id, &reason, &who.identity)
            })
            .await
            .map_err(|_| ApiError::internal("bypassing the approval failed"))??;
            app.committed.notify_one();
            let mut out = super::approvals::outcome_json(&outcome);
            out["approval"] = serde_json::to_value(&a).unwrap_or(Value::Null);
            out
        }
        _ => return Err(ApiError::bad_request(BODY_HELP)),
    };
    refresh(&app).await;
    Ok(Json(out))
}

/// `POST /v1/bypass/{id}/end` (operator): ends a bypass now.
pub async fn end(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let who = app.authenticate(&headers, None, Role::Operator).await?;
    let Path(id) = id.map_err(|_| ApiError::not_found("no such bypass"))?;
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let b = tokio::task::spawn_blocking(move || {
        toolgate_gate::end_bypass(&*store, &*clock, &id, &who.identity)
    })
    .await
    .map_err(|_| ApiError::internal("ending the bypass failed"))??;
    refresh(&app).await;
    Ok(Json(json!({"bypass": b})))
}

/// Reads the bypasses again, hands them to the gate (which then never reads
/// them on a call's path) and tells live clients; done after every change
/// here and every second by the sweep, so changes made elsewhere (the CLI)
/// apply within a second.
pub async fn refresh(app: &App) {
    let store = app.store.clone();
    let read = tokio::task::spawn_blocking(move || store.read_bypasses()).await;
    let list = match read {
        Ok(Ok(list)) => list,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "cannot read the emergency bypasses");
            return;
        }
        Err(_) => return,
    };
    let now = app.clock.now_ms();
    let active: Vec<_> = list.iter().filter(|b| b.active(now)).cloned().collect();
    app.gate.load().feed_bypasses(list);
    let mut current = app.bypasses.lock().unwrap_or_else(|p| p.into_inner());
    if *current != active {
        *current = active.clone();
        drop(current);
        app.publish(Event {
            text: json!({"type": "bypass", "active": active})
                .to_string()
                .into(),
            approval: None,
        });
    }
}
