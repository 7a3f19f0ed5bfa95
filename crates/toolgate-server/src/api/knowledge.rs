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
use toolgate_core::time::rfc3339_ms;
use toolgate_store::AckError;

/// `POST /v1/knowledge/ack` with `{"id": "<id>", "by": "…"}` (agent or
/// operator). 404 when nothing was shown under the id, 409 when it was
/// shown too long ago.
pub async fn ack(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let role = app.tokens.authorize(&headers, None, Role::Agent)?;
    let value = read_json(&headers, body, false).await?;
    let id = value.get("id").and_then(Value::as_str).ok_or_else(|| {
        ApiError::bad_request(
            "send {\"id\": \"<id>\"} with the id from the TOOLGATE_ACK line".to_string(),
        )
    })?;
    let by = value
        .get("by")
        .and_then(Value::as_str)
        .map(|b| b.chars().take(128).collect::<String>())
        .unwrap_or_else(|| match role {
            Role::Agent => "agent".to_string(),
            Role::Operator => "operator".to_string(),
        });
    let gate = app.gate.load_full();
    let id = id.to_string();
    let ttl = gate.knowledge().settings().cooldown.as_millis() as i64;
    let result = tokio::task::spawn_blocking(move || gate.acknowledge(&id, &by))
        .await
        .map_err(|_| ApiError::internal("acknowledging failed"))?;
    match result {
        Ok(shown) => Ok(Json(json!({
            "acknowledged": shown.keys,
            "scope": shown.scope,
            "until": rfc3339_ms(app.clock.now_ms().saturating_add(ttl)),
        }))),
        Err(e @ AckError::Unknown(_)) => Err(ApiError::not_found(e.to_string())),
        Err(e @ AckError::Expired(_)) => Err(ApiError::refused(e.to_string())),
        Err(AckError::Store(e)) => Err(e.into()),
    }
}
