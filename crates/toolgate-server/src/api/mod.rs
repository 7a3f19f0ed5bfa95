//! The HTTP handlers, one module per area, and the request plumbing they
//! share: reading bodies within limits and parsing query strings into
//! errors clients can act on.

pub mod approvals;
pub mod bypass;
pub mod canary;
pub mod channel_test;
pub mod channels;
pub mod check;
pub mod hooks;
pub mod knowledge;
pub mod read;
pub mod session;

use crate::error::ApiError;
use axum::body::Body;
use axum::http::{HeaderMap, Uri, header};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Largest request body accepted.
pub const MAX_BODY: usize = 1 << 20;

/// A body must arrive within this, `?wait` or not.
pub const BODY_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads a JSON body: at most [`MAX_BODY`] bytes, UTF-8, nesting within
/// `toolgate_core::MAX_JSON_DEPTH`. `empty_ok` turns an empty body
/// into `null` (for endpoints whose body is optional).
pub async fn read_json(headers: &HeaderMap, body: Body, empty_ok: bool) -> Result<Value, ApiError> {
    let too_large = || {
        ApiError::too_large(format!(
            "the body is larger than {} KiB: send one tool call per request",
            MAX_BODY / 1024
        ))
    };
    if let Some(len) = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        && len > MAX_BODY as u64
    {
        return Err(too_large());
    }
    let read = tokio::time::timeout(BODY_READ_TIMEOUT, axum::body::to_bytes(body, MAX_BODY));
    let bytes = read
        .await
        .map_err(|_| {
            ApiError::bad_request(format!(
                "the body did not arrive within {} s",
                BODY_READ_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| {
            // A chunked body has no Content-Length to check up front: the
            // limit shows up as the read error's source.
            let over = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
            if over {
                too_large()
            } else {
                ApiError::bad_request(format!("cannot read the request body: {e}"))
            }
        })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        if empty_ok {
            return Ok(Value::Null);
        }
        return Err(ApiError::bad_request(
            "the body is empty: send a JSON object like {\"tool\":\"exec\",\"params\":{\"command\":\"ls\"}}",
        ));
    }
    toolgate_core::parse_json(&bytes).map_err(|e| ApiError::bad_request(e.to_string()))
}

/// Parses the query string into `T`; unknown keys are ignored, wrong values
/// are a 400 naming the problem.
pub fn query<T: DeserializeOwned>(uri: &Uri) -> Result<T, ApiError> {
    axum::extract::Query::<T>::try_from_uri(uri)
        .map(|axum::extract::Query(t)| t)
        .map_err(|e| ApiError::bad_request(format!("bad query string: {}", e.body_text())))
}
