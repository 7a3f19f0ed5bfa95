//! The control UI: static files compiled into the binary, served
//! with headers that keep other sites from framing or scripting it (the
//! approve button must not be clickjackable).

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../ui/index.html");
const APP_JS: &str = include_str!("../ui/app.js");
const APP_CSS: &str = include_str!("../ui/app.css");
const PANELS_JS: &str = include_str!("../ui/panels.js");
const FORMAT_JS: &str = include_str!("../ui/format.js");
const DOM_JS: &str = include_str!("../ui/dom.js");
const PANELS_CSS: &str = include_str!("../ui/panels.css");

/// Content Security Policy: only our own files and our own WebSocket.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// `GET /`.
pub async fn index() -> Response {
    asset(INDEX, "text/html; charset=utf-8")
}

/// `GET /app.js`.
pub async fn app_js() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

/// `GET /panels.js`.
pub async fn panels_js() -> Response {
    asset(PANELS_JS, "text/javascript; charset=utf-8")
}

/// `GET /dom.js`.
pub async fn dom_js() -> Response {
    asset(DOM_JS, "text/javascript; charset=utf-8")
}

/// `GET /format.js`.
pub async fn format_js() -> Response {
    asset(FORMAT_JS, "text/javascript; charset=utf-8")
}

/// `GET /panels.css`.
pub async fn panels_css() -> Response {
    asset(PANELS_CSS, "text/css; charset=utf-8")
}

/// `GET /app.css`.
pub async fn app_css() -> Response {
    asset(APP_CSS, "text/css; charset=utf-8")
}
