//! Operators' approval endpoints: list, show, approve, deny.

use crate::api::{query, read_json};
use crate::app::App;
use crate::auth::Role;
use crate::error::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::approval::ApprovalId;
use toolgate_store::{VoteInput, VoteOutcome};

/// Most approvals one listing returns.
const MAX_LIMIT: usize = 1000;
/// Longest operator name accepted in `as`.
const MAX_NAME: usize = 100;

#[derive(Debug, Deserialize)]
struct ListQuery {
    all: Option<bool>,
    limit: Option<usize>,
}

/// `GET /v1/approvals[?all=true&limit=N]` (operator).
pub async fn list(
    State(app): State<Arc<App>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    app.tokens.authorize(&headers, None, Role::Operator)?;
    let q: ListQuery = query(&uri)?;
    let limit = q.limit.unwrap_or(100).clamp(1, MAX_LIMIT);
    let all = q.all.unwrap_or(false);
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let views =
        tokio::task::spawn_blocking(move || toolgate_store::list(&*store, &*clock, all, limit))
            .await
            .map_err(|_| ApiError::internal("listing approvals failed"))??;
    Ok(Json(json!({ "approvals": views })))
}

fn parse_id(id: Result<Path<String>, PathRejection>) -> Result<ApprovalId, ApiError> {
    let Path(text) = id.map_err(|_| {
        ApiError::not_found("no such approval: an id is 32 hex characters from GET /v1/approvals")
    })?;
    ApprovalId::parse(&text).map_err(|e| ApiError::not_found(format!("no approval {text:?}: {e}")))
}

/// `GET /v1/approvals/{id}` (operator).
pub async fn show(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    app.tokens.authorize(&headers, None, Role::Operator)?;
    let id = parse_id(id)?;
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let view = tokio::task::spawn_blocking(move || toolgate_store::show(&*store, &*clock, &id))
        .await
        .map_err(|_| ApiError::internal("reading the approval failed"))??;
    Ok(Json(serde_json::to_value(view).unwrap_or(Value::Null)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct VoteBody {
    reason: Option<String>,
    #[serde(rename = "as")]
    as_name: Option<String>,
}

/// `POST /v1/approvals/{id}/approve` (operator).
pub async fn approve(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    cast(app, id, headers, body, true).await
}

/// `POST /v1/approvals/{id}/deny` (operator).
pub async fn deny(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    cast(app, id, headers, body, false).await
}

async fn cast(
    app: Arc<App>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Body,
    approve: bool,
) -> Result<Json<Value>, ApiError> {
    // Only the operator token may vote: an agent holding its own token can
    // never approve what it asked for.
    app.tokens.authorize(&headers, None, Role::Operator)?;
    let id = parse_id(id)?;
    let value = read_json(&headers, body, true).await?;
    let body: VoteBody = if value.is_null() {
        VoteBody::default()
    } else {
        serde_json::from_value(value).map_err(|e| {
            ApiError::bad_request(format!(
                "the body must be {{\"reason\": \"…\", \"as\": \"name\"}} (both optional): {e}"
            ))
        })?
    };
    let identity = match body.as_name.as_deref().map(str::trim) {
        None | Some("") => "operator".to_string(),
        Some(n) if n.len() > MAX_NAME || n.chars().any(char::is_control) => {
            return Err(ApiError::bad_request(format!(
                "\"as\" must be a name of at most {MAX_NAME} characters without control characters"
            )));
        }
        Some(n) => n.to_string(),
    };
    let input = VoteInput {
        identity,
        approve,
        reason: body.reason,
        channel: "http".to_string(),
        relayed: false,
    };
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let (outcome, view) = tokio::task::spawn_blocking(move || {
        let outcome = toolgate_store::vote(&*store, &*clock, &id, input)?;
        let view = toolgate_store::show(&*store, &*clock, &id)?;
        Ok::<_, toolgate_store::StoreError>((outcome, view))
    })
    .await
    .map_err(|_| ApiError::internal("recording the vote failed"))??;
    app.committed.notify_one();
    let mut out = match outcome {
        VoteOutcome::Approved { usable_until_ms } => {
            json!({"outcome": "approved", "usable_until_ms": usable_until_ms})
        }
        VoteOutcome::Recorded {
            have,
            need,
            user_missing,
        } => {
            json!({"outcome": "recorded", "have": have, "need": need, "user_missing": user_missing})
        }
        VoteOutcome::Denied => json!({"outcome": "denied"}),
    };
    out["have"] = json!(view.have);
    out["need"] = json!(view.need);
    out["approval"] = serde_json::to_value(&view).unwrap_or(Value::Null);
    Ok(Json(out))
}
