//! Read-only endpoints: decisions, state, audit verification, protocol
//! text and metrics.

use crate::api::query;
use crate::app::App;
use crate::auth::Role;
use crate::error::ApiError;
use crate::records::decisions as read_decisions;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, Uri, header};
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::{hex, rfc3339_ms};

#[derive(Debug, Deserialize)]
struct DecisionsQuery {
    #[serde(flatten)]
    filter: toolgate_store::DecisionFields,
    before: Option<u64>,
    limit: Option<usize>,
}

/// `GET /v1/decisions` (operator).
pub async fn decisions(
    State(app): State<Arc<App>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    app.authenticate(&headers, None, Role::Operator).await?;
    let q: DecisionsQuery = query(&uri)?;
    let limit = q.limit.unwrap_or(50).clamp(1, 500);
    let before = q.before.unwrap_or(u64::MAX);
    let store = app.store.clone();
    let page =
        tokio::task::spawn_blocking(move || read_decisions(&*store, &q.filter, before, limit))
            .await
            .map_err(|_| ApiError::internal("reading decisions failed"))??;
    Ok(Json(
        json!({"decisions": page.decisions, "next_before": page.next_before}),
    ))
}

/// `GET /v1/state` (operator).
pub async fn state(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    app.authenticate(&headers, None, Role::Operator).await?;
    let now = app.clock.now_ms();
    let (length, head_hash) = app
        .audit_head
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "started": rfc3339_ms(app.started_ms),
        "uptime_s": (now - app.started_ms).max(0) / 1000,
        "listen": app.listen,
        "public_url": app.public_url.get(),
        "store": app.store.location(),
        "policy": app.policy_view(),
        "audit": {"length": length, "head_hash": head_hash},
        "pending_approvals": app.pending(),
        // Over the whole audit log, whichever process decided; `block`
        // does not include knowledge holds, which are `hold`.
        "totals": app.stats.totals(),
        "series": app.stats.series(),
        "integrations": app.canaries.view(now),
        "knowledge": knowledge_state(&app, now),
        "posture": app.posture,
        "bypasses": *app.bypasses.lock().unwrap_or_else(|p| p.into_inner()),
        "routing": app.router.load().view(),
        "deliveries": app.deliveries.open(),
    })))
}

/// The knowledge layer's settings, health and counters: `degraded` while
/// a source failed in the last minute.
fn knowledge_state(app: &App, now: i64) -> Value {
    let gate = app.gate.load();
    let kb = gate.knowledge();
    let s = kb.settings();
    let snap = kb.stats().snapshot();
    let recent_error = snap
        .last_error
        .as_ref()
        .is_some_and(|(at, _)| now.saturating_sub(*at) < 60_000);
    json!({
        "enforcement": s.enforcement.as_str(),
        "status": if !s.enabled() { "disabled" } else if recent_error { "degraded" } else { "ok" },
        "fail_open": s.fail_open,
        "show_credentials": s.show_credentials,
        "cooldown_s": s.cooldown.as_secs(),
        "sop_dirs": kb.sop_dirs().iter().map(|d| d.display().to_string()).collect::<Vec<_>>(),
        "rules": s.rules().len(),
        "thresholds": {
            "critical": s.thresholds.critical,
            "routine": s.thresholds.routine,
            "experimental": s.thresholds.experimental,
        },
        "last_error": snap.last_error.as_ref().map(|(at, what)| json!({
            "at": rfc3339_ms(*at),
            "error": what,
        })),
        "stats": snap,
    })
}

/// `GET /v1/audit/verify` (operator): walks the whole chain.
pub async fn verify(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    app.authenticate(&headers, None, Role::Operator).await?;
    let store = app.store.clone();
    // The daemon's own key checks the checkpoints it signed.
    let rule = match app.audit_key.get() {
        Some(key) => toolgate_gate::SigningRule::key(key.public()),
        None => toolgate_gate::SigningRule::unkeyed(),
    };
    let result = tokio::task::spawn_blocking(move || toolgate_gate::verify_signed(&*store, &rule))
        .await
        .map_err(|_| ApiError::internal("verifying the audit log failed"))?;
    Ok(Json(match result {
        Ok((v, sigs)) => json!({
            "ok": true,
            "entries": v.entries,
            "head_seq": v.head_seq,
            "head_hash": hex(&v.head_hash),
            "signatures": sigs,
        }),
        Err(toolgate_store::StoreError::Chain(b)) => {
            json!({"ok": false, "seq": b.seq, "why": b.why})
        }
        Err(e) => return Err(e.into()),
    }))
}

/// `GET /v1/whoami` (any token): who the token says the caller is — the
/// role, and the identity votes are recorded under.
pub async fn whoami(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let who = app.authenticate(&headers, None, Role::Agent).await?;
    Ok(Json(json!({
        "identity": who.identity,
        "role": who.role.as_str(),
        "person": who.person,
    })))
}

/// `GET /v1/protocol` (agent): the rules text for the agent's prompt.
pub async fn protocol(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    app.authenticate(&headers, None, Role::Agent).await?;
    let text = toolgate_core::protocol_text(app.gate.load().engine().policy());
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text))
}

/// `GET /healthz` (no token: for load balancers and supervisors): 200
/// `{"status":"ok","version":…}` when the store answers a read, else 503
/// with what failed. Says nothing about calls, approvals or policy.
pub async fn healthz(State(app): State<Arc<App>>) -> impl IntoResponse {
    let store = app.store.clone();
    let read = tokio::task::spawn_blocking(move || store.audit_head().map(|_| ())).await;
    let version = env!("CARGO_PKG_VERSION");
    match read {
        Ok(Ok(())) => (
            axum::http::StatusCode::OK,
            axum::Json(serde_json::json!({"status": "ok", "version": version})),
        ),
        Ok(Err(e)) => (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(serde_json::json!({
                "status": "unavailable",
                "version": version,
                "error": format!("the store cannot be read: {e}"),
            })),
        ),
        Err(_) => (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(serde_json::json!({
                "status": "unavailable",
                "version": version,
                "error": "the store read did not finish",
            })),
        ),
    }
}

/// `GET /metrics` (operator): Prometheus text.
pub async fn metrics(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    app.authenticate(&headers, None, Role::Operator).await?;
    let mut text = crate::metrics::render();
    text.push_str(&crate::metrics::knowledge(
        &app.gate.load().knowledge().stats().snapshot(),
    ));
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text))
}
