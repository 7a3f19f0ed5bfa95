//! Signed one-time approve/deny links (for email or any channel without
//! buttons): bound to the approval and to one operator, expiring with the
//! approval, usable once. Opening a link only shows what it would do: mail
//! scanners fetch links, so the vote is cast by the page's POST.

use crate::app::App;
use crate::error::ApiError;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use std::sync::Arc;
use toolgate_channels::{LinkAction, LinkClaims};
use toolgate_core::ApprovalId;
use toolgate_gate::{VoteInput, VoteOutcome};

/// Approve and deny links for `operator` on approval `id`, valid until the
/// approval expires (`None` when they cannot be signed).
pub fn pair(
    app: &App,
    id: &str,
    operator: &str,
    expires_ms: i64,
) -> (Option<String>, Option<String>) {
    let until = expires_ms.div_euclid(1000);
    let url = |action| {
        app.links
            .sign(id, operator, action, until)
            .ok()
            .map(|token| format!("{}/v1/links/{token}", app.base_url()))
    };
    (url(LinkAction::Approve), url(LinkAction::Deny))
}

/// The link page's Content Security Policy: no script, no style, no
/// image, nothing fetched; its one form posts back to itself; no page may
/// frame it (a framed page could trick a click on its button).
const LINK_PAGE_CSP: &str =
    "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Every answer of the link endpoints: the page may hold an approval's
/// command and its URL holds a one-time token, so it is never cached,
/// framed, or named to another site in a `Referer`.
fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><meta charset=utf-8><meta name=viewport content=\"width=device-width\">\
         <meta name=referrer content=no-referrer><title>toolgate: {title}</title><body>\
         <h1>{title}</h1>{body}</body>"
    );
    let mut r = (status, Html(html)).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(LINK_PAGE_CSP),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn verify(app: &App, token: &str) -> Result<LinkClaims, Box<Response>> {
    app.links
        .verify(token, app.clock.now_ms().div_euclid(1000))
        .map_err(|e| {
            Box::new(page(
                StatusCode::BAD_REQUEST,
                "This link cannot be used",
                &format!("<p>{}</p>", escape(&e.to_string())),
            ))
        })
}

/// `GET /v1/links/{token}`: what the link would do, and a button to do it.
pub async fn show(State(app): State<Arc<App>>, Path(token): Path<String>) -> Response {
    let claims = match verify(&app, &token) {
        Ok(c) => c,
        Err(page) => return *page,
    };
    let Ok(id) = ApprovalId::parse(&claims.approval_id) else {
        return page(StatusCode::BAD_REQUEST, "This link cannot be used", "");
    };
    let store = app.store.clone();
    let approval = tokio::task::spawn_blocking(move || store.read_approval(&id)).await;
    let Ok(Ok(Some(a))) = approval else {
        return page(StatusCode::NOT_FOUND, "No such approval", "");
    };
    let verb = match claims.action {
        LinkAction::Approve => "Approve",
        LinkAction::Deny => "Deny",
    };
    page(
        StatusCode::OK,
        &format!("{verb} this call?"),
        &format!(
            "<p><code>{}</code></p><p>{} · {}</p><p>As <b>{}</b>. The link works once.</p>\
             <form method=post><button type=submit>{verb}</button></form>",
            escape(&a.summary),
            escape(a.risk.as_str()),
            escape(&a.reason),
            escape(&claims.operator)
        ),
    )
}

/// `POST /v1/links/{token}`: casts the link's vote, once, as the operator
/// it was signed for (who must still be an operator).
pub async fn submit(State(app): State<Arc<App>>, Path(token): Path<String>) -> Response {
    let claims = match verify(&app, &token) {
        Ok(c) => c,
        Err(page) => return *page,
    };
    match cast(&app, claims).await {
        Ok(text) => page(StatusCode::OK, "Done", &format!("<p>{}</p>", escape(&text))),
        Err(e) => page(
            e.status,
            "Not recorded",
            &format!("<p>{}</p>", escape(&e.message)),
        ),
    }
}

async fn cast(app: &App, claims: LinkClaims) -> Result<String, ApiError> {
    let id =
        ApprovalId::parse(&claims.approval_id).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let approve = claims.action == LinkAction::Approve;
    let outcome = tokio::task::spawn_blocking(move || {
        let active = store
            .read_operators()?
            .into_iter()
            .any(|o| o.active() && o.name == claims.operator);
        if !active {
            return Ok(Err(format!(
                "{} is not an operator any more",
                claims.operator
            )));
        }
        let keep = claims.expires_at_secs.saturating_mul(1000);
        if !toolgate_gate::use_once(&*store, &*clock, &claims.replay_key(), keep)? {
            return Ok(Err("this link was used already".to_string()));
        }
        let input = VoteInput {
            identity: claims.operator.clone(),
            approve,
            reason: None,
            channel: "link".to_string(),
            relayed: false,
        };
        toolgate_gate::vote(&*store, &*clock, &id, input).map(Ok)
    })
    .await
    .map_err(|_| ApiError::internal("recording the vote failed"))??;
    app.committed.notify_one();
    match outcome {
        Err(refused) => Err(ApiError::refused(refused)),
        Ok(VoteOutcome::Approved { .. }) => {
            Ok("Approved: the agent may retry the call once.".into())
        }
        Ok(VoteOutcome::Denied) => Ok("Denied.".into()),
        Ok(VoteOutcome::Recorded { have, need, .. }) => {
            Ok(format!("Your approval is recorded ({have} of {need})."))
        }
    }
}
