//! `POST /v1/knowledge/ack` (agent): acknowledge knowledge shown with a
//! `TOOLGATE_ACK|<id>|…` answer, so calls it covers run for the cooldown.

use crate::api::read_json;
use crate::app::App;
use crate::auth::Role;
use crate::error::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::rfc3339_ms;
use toolgate_gate::AckError;

/// `POST /v1/knowledge/ack` with `{"id": "<id>", "session": "…"}` (agent:
/// the held call's session or agent) or `{"id": "<id>", "by": "…"}`
/// (operator). 404 when nothing was shown under the id, 409 when it was
/// shown too long ago or, for an agent, to another session.
pub async fn ack(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let who = app.authenticate(&headers, None, Role::Agent).await?;
    let value = read_json(&headers, body, false).await?;
    let id = value.get("id").and_then(Value::as_str).ok_or_else(|| {
        ApiError::bad_request(
            "send {\"id\": \"<id>\"} with the id from the TOOLGATE_ACK line".to_string(),
        )
    })?;
    // An agent acknowledges for itself: the held call's session (or agent)
    // must be named, and the acknowledgement is recorded as the agent's.
    // An operator may acknowledge any, as who their token says they are.
    let (by, scope) = match who.role {
        Role::Agent => {
            let call = toolgate_core::ToolCall {
                session: value
                    .get("session")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                agent: value
                    .get("agent")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                ..Default::default()
            };
            let scope = toolgate_gate::ack_scope(&call);
            (format!("agent ({scope})"), Some(scope))
        }
        // Recorded as the authenticated person; with the shared token, a
        // `by` is kept beside it as what they said, not as who they are.
        Role::Operator => {
            let said = value
                .get("by")
                .and_then(Value::as_str)
                .map(|b| b.chars().take(128).collect::<String>())
                .filter(|b| !b.trim().is_empty() && !who.person);
            let by = match said {
                Some(said) => format!("{} (says {said})", who.identity),
                None => who.identity.clone(),
            };
            (by, None)
        }
    };
    let gate = app.gate.load_full();
    let id = id.to_string();
    let ttl = gate.knowledge().settings().cooldown.as_millis() as i64;
    let result = tokio::task::spawn_blocking(move || gate.acknowledge(&id, &by, scope.as_deref()))
        .await
        .map_err(|_| ApiError::internal("acknowledging failed"))?;
    match result {
        Ok(shown) => Ok(Json(json!({
            "acknowledged": shown.keys,
            "scope": shown.scope,
            "until": rfc3339_ms(app.clock.now_ms().saturating_add(ttl)),
        }))),
        Err(e @ AckError::Unknown(_)) => Err(ApiError::not_found(e.to_string())),
        Err(e @ (AckError::Expired(_) | AckError::OtherScope(_))) => {
            Err(ApiError::refused(e.to_string()))
        }
        Err(AckError::Store(e)) => Err(e.into()),
    }
}
