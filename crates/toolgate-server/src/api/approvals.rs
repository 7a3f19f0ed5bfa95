//! Operators' approval endpoints: list, show, approve, deny.

use crate::api::{query, read_json};
use crate::app::App;
use crate::auth::{Principal, Role};
use crate::error::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::ApprovalId;
use toolgate_gate::{VoteInput, VoteOutcome};

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
    app.authenticate(&headers, None, Role::Operator).await?;
    let q: ListQuery = query(&uri)?;
    let limit = q.limit.unwrap_or(100).clamp(1, MAX_LIMIT);
    let all = q.all.unwrap_or(false);
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let views =
        tokio::task::spawn_blocking(move || toolgate_gate::list(&*store, &*clock, all, limit))
            .await
            .map_err(|_| ApiError::internal("listing approvals failed"))??;
    let approvals: Vec<Value> = views.iter().map(|v| with_deliveries(&app, v)).collect();
    Ok(Json(json!({ "approvals": approvals })))
}

/// An approval view with where its notices stand, target by target
/// (`deliveries`: empty when no routing target took it).
fn with_deliveries(app: &App, view: &toolgate_gate::ApprovalView) -> Value {
    let mut v = serde_json::to_value(view).unwrap_or(Value::Null);
    let id = view.approval.id.to_string();
    // An agent waits through this daemon (`?wait`), or in a process of its
    // own that marked the approval (a hook's hold); a lapsed mark is none.
    let now = app.clock.now_ms();
    let marked = view.approval.waiting_until_ms.filter(|&u| u > now);
    match app.waiting.until_ms(&id).max(marked) {
        Some(until) => v["waiting_until_ms"] = json!(until),
        None => {
            if let Some(o) = v.as_object_mut() {
                o.remove("waiting_until_ms");
            }
        }
    }
    v["deliveries"] = app
        .deliveries
        .status(&id)
        .into_iter()
        .map(|(name, s)| {
            let mut s = serde_json::to_value(s).unwrap_or(Value::Null);
            s["name"] = json!(name);
            s
        })
        .collect();
    v
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
    app.authenticate(&headers, None, Role::Operator).await?;
    let id = parse_id(id)?;
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let view = tokio::task::spawn_blocking(move || toolgate_gate::show(&*store, &*clock, &id))
        .await
        .map_err(|_| ApiError::internal("reading the approval failed"))??;
    Ok(Json(with_deliveries(&app, &view)))
}

/// An `as` in a vote must name the authenticated identity: it once chose
/// the voter's name freely, which let one token meet a quorum of two.
fn check_as(as_name: Option<&str>, who: &Principal) -> Result<(), ApiError> {
    let Some(name) = as_name.map(str::trim).filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    if name.len() > MAX_NAME || name.chars().any(char::is_control) {
        return Err(ApiError::bad_request(format!(
            "\"as\" must be a name of at most {MAX_NAME} characters without control characters"
        )));
    }
    if name.eq_ignore_ascii_case(&who.identity) {
        return Ok(());
    }
    let how = if who.person {
        "your own token"
    } else {
        "the shared operator token, which is one identity"
    };
    Err(ApiError::forbidden(format!(
        "votes count as the person whose token cast them: this one is {:?} ({how}), not {name:?}; give each approver their own token with `toolgate operators add NAME` and drop \"as\"",
        who.identity
    )))
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
    // Only an operator may vote: an agent holding its own token can never
    // approve what it asked for. The vote is the authenticated person's.
    let who = app.authenticate(&headers, None, Role::Operator).await?;
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
    check_as(body.as_name.as_deref(), &who)?;
    let channel = match headers
        .get("x-toolgate-channel")
        .and_then(|v| v.to_str().ok())
    {
        Some("ui") => "ui",
        _ => "http",
    };
    let input = VoteInput {
        identity: who.identity,
        approve,
        reason: body.reason,
        channel: channel.to_string(),
        relayed: false,
    };
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let (outcome, view) = tokio::task::spawn_blocking(move || {
        let outcome = toolgate_gate::vote(&*store, &*clock, &id, input)?;
        let view = toolgate_gate::show(&*store, &*clock, &id)?;
        Ok::<_, toolgate_store::StoreError>((outcome, view))
    })
    .await
    .map_err(|_| ApiError::internal("recording the vote failed"))??;
    app.committed.notify_one();
    let mut out = outcome_json(&outcome);
    out["have"] = json!(view.have);
    out["need"] = json!(view.need);
    out["approval"] = serde_json::to_value(&view).unwrap_or(Value::Null);
    Ok(Json(out))
}

/// What a vote (or a bypass of one approval, which is a vote) achieved, as
/// the answer's `outcome` and its figures.
pub(super) fn outcome_json(outcome: &VoteOutcome) -> Value {
    match *outcome {
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
    }
}
