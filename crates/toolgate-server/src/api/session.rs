//! The control UI's sign-in: one-time links and browser sessions (see
//! [`crate::session`] for why it is built this way).

use crate::api::read_json;
use crate::app::App;
use crate::auth::Role;
use crate::error::ApiError;
use crate::session::{CHANNEL_HEADER, clear_cookie, cookie, cross_site, set_cookie};
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::rfc3339_ms;

/// The path of a sign-in link for `code`, to append to the daemon's
/// address: a URL fragment, which browsers keep to themselves.
pub fn link_path(code: &str) -> String {
    format!("/#signin/{code}")
}

/// `POST /v1/session/links` (operator): a one-time sign-in link for the
/// caller, who the browser it opens in will then vote as.
pub async fn mint(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let who = app.authenticate(&headers, None, Role::Operator).await?;
    let now = app.clock.now_ms();
    let code = app
        .sessions
        .mint_code(&who, now)
        .map_err(|e| ApiError::internal(format!("no random sign-in code: {e}")))?;
    let path = link_path(&code);
    Ok(Json(json!({
        "url": format!("{}{path}", app.base_url()),
        "path": path,
        "identity": who.identity,
        "expires": rfc3339_ms(now.saturating_add(crate::session::CODE_TTL_MS)),
    })))
}

/// `POST /v1/session` `{"code": …}` (no token: the code is the
/// credential): trades a sign-in code for the session cookie, once.
pub async fn open(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // Another site must not sign a browser into its own session either.
    if !headers.contains_key(CHANNEL_HEADER) {
        return Err(ApiError::forbidden(
            "sign in from the control UI: open the link `toolgate ui` prints",
        ));
    }
    if let Some(why) = cross_site(&headers) {
        return Err(ApiError::forbidden(format!(
            "{why}: sign in on the daemon's own page"
        )));
    }
    let body = read_json(&headers, body, false).await?;
    let code = body.get("code").and_then(Value::as_str).ok_or_else(|| {
        ApiError::bad_request("send {\"code\": \"<the code from the sign-in link>\"}")
    })?;
    let opened = app
        .sessions
        .redeem(code, app.clock.now_ms())
        .map_err(|e| ApiError::internal(format!("no random session secret: {e}")))?
        .ok_or_else(|| {
            ApiError::unauthorized(
                "this sign-in link was used already or has expired (a link works once, for 15 \
                 minutes): run `toolgate ui` for a new one",
            )
        })?;
    let max_age = crate::session::SESSION_TTL_MS / 1000;
    let mut resp = Json(json!({
        "identity": opened.principal.identity,
        "role": opened.principal.role.as_str(),
        "person": opened.principal.person,
        "expires": rfc3339_ms(opened.expires_ms),
    }))
    .into_response();
    let cookie = set_cookie(&app.cookie, &opened.secret, max_age);
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(|_| ApiError::internal("bad cookie"))?,
    );
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(resp)
}

/// `DELETE /v1/session`: signs this browser out (ends the session and
/// clears the cookie). Idempotent.
pub async fn close(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(secret) = cookie(&headers, &app.cookie) {
        app.sessions.end(secret);
    }
    let mut resp = Json(json!({"signed_out": true})).into_response();
    if let Ok(v) = HeaderValue::from_str(&clear_cookie(&app.cookie)) {
        resp.headers_mut().insert(header::SET_COOKIE, v);
    }
    resp
}
