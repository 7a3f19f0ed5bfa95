//! The one error type of the HTTP API: every failure becomes a JSON body
//! `{"error": {"code", "message"}}` with a matching status, so clients can
//! branch on `code` and people can read `message`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolgate_store::StoreError;

/// An API failure: what kind (the status and code) and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A stable machine-readable code (`bad_request`, `unauthorized`, …).
    pub code: &'static str,
    /// A sentence for a person.
    pub message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 401: no token, or one that is not toolgate's.
    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// 403: a valid token whose role may not do this.
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404: no such thing.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 405: the path exists, the method does not.
    pub fn method_not_allowed(message: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            message,
        )
    }

    /// 409: the approval rules refuse this vote.
    pub fn refused(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, "refused", message)
    }

    /// 502: a service toolgate called on the caller's behalf (a chat
    /// channel) refused or could not be reached; the message says which.
    pub fn bad_gateway(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_GATEWAY, "bad_gateway", message)
    }

    /// 413: the body is over the limit.
    pub fn too_large(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", message)
    }

    /// 503: overloaded or shutting down; retry.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }

    /// 504: the request took longer than the server allows.
    pub fn timeout(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::GATEWAY_TIMEOUT, "timeout", message)
    }

    /// 500: toolgate itself failed; the message says where.
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::NotFound(id) => ApiError::not_found(format!(
                "no approval {id}: list open ones with GET /v1/approvals"
            )),
            StoreError::Refused(r) => ApiError::refused(r.to_string()),
            StoreError::Operators(m) => ApiError::bad_request(m),
            other => {
                tracing::error!(error = %other, "store failure");
                ApiError::internal(format!("toolgate's state store failed: {other}"))
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code, "message": self.message}});
        (self.status, axum::Json(body)).into_response()
    }
}
