//! `POST /v1/channels/{target}/callback`: button presses from Slack,
//! Telegram and Discord. No bearer token: each is verified by its
//! service's signature (or secret token), refused if stale or replayed
//! (single-use keys in the store, so a restart does not reopen them), and
//! counts only as the toolgate operator whose chat account pressed it.

use crate::app::App;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;
use toolgate_channels::{ChannelVote, Inbound, ReplayGuard, discord};
use toolgate_core::ApprovalId;
use toolgate_gate::{Clock, VoteInput, VoteOutcome};
use toolgate_store::Store;

/// Largest callback body read.
const MAX_CALLBACK: usize = 64 * 1024;

/// Single-use keys kept in the store: a replayed callback is refused even
/// by another daemon on the same store, or after a restart.
struct StoreGuard {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
}

impl ReplayGuard for StoreGuard {
    fn first_use(&self, key: &str, keep_until_secs: i64) -> bool {
        toolgate_gate::use_once(
            &*self.store,
            &*self.clock,
            &format!("callback:{key}"),
            keep_until_secs.saturating_mul(1000),
        )
        // Cannot tell: treat it as a replay.
        .unwrap_or(false)
    }
}

fn answer(kind: &str, status: StatusCode, text: &str) -> Response {
    let body = match kind {
        "slack" => json!({"response_type": "ephemeral", "replace_original": false, "text": text}),
        "discord" => discord::ephemeral(text),
        _ => json!({"text": text}),
    };
    (status, axum::Json(body)).into_response()
}

/// Verifies, reads and records one button press for routing target `name`.
pub async fn callback(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let router = app.router.load_full();
    let Some(target) = router.target(&name) else {
        return answer("", StatusCode::NOT_FOUND, "no such routing target");
    };
    let Some(auth) = target.auth.clone() else {
        return answer(
            "",
            StatusCode::NOT_FOUND,
            "this routing target takes no callbacks (not ready, or a webhook)",
        );
    };
    let kind = auth.kind();
    let Ok(bytes) =
        http_body_util::BodyExt::collect(http_body_util::Limited::new(body, MAX_CALLBACK))
            .await
            .map(|b| b.to_bytes())
    else {
        return answer(
            kind,
            StatusCode::PAYLOAD_TOO_LARGE,
            "the callback body is too large",
        );
    };
    let guard = StoreGuard {
        store: app.store.clone(),
        clock: app.clock.clone(),
    };
    let now = app.clock.now_ms().div_euclid(1000);
    let accepted =
        tokio::task::spawn_blocking(move || auth.accept(&headers, &bytes, now, &guard)).await;
    let inbound = match accepted {
        Ok(Ok(i)) => i,
        Ok(Err(e)) => {
            let status = if e.is_unauthenticated() {
                StatusCode::UNAUTHORIZED
            } else {
                StatusCode::BAD_REQUEST
            };
            tracing::warn!(target = %name, error = %e, "channel callback refused");
            return answer(kind, status, &e.to_string());
        }
        Err(_) => return answer(kind, StatusCode::INTERNAL_SERVER_ERROR, "internal error"),
    };
    match inbound {
        Inbound::Ping => (StatusCode::OK, axum::Json(discord::pong())).into_response(),
        Inbound::Vote(vote) => {
            let query = vote.ack.get("callback_query_id").cloned();
            let (status, text) = match record(&app, &name, *vote).await {
                Ok(text) => (StatusCode::OK, text),
                Err(refused) => refused,
            };
            match (kind, query) {
                // Telegram takes one Bot API call as the webhook's answer:
                // answering the query stops the button's spinner and shows
                // the presser the outcome.
                ("telegram", Some(id)) if status == StatusCode::OK => (
                    StatusCode::OK,
                    axum::Json(json!({
                        "method": "answerCallbackQuery",
                        "callback_query_id": id,
                        "text": text.chars().take(190).collect::<String>(),
                    })),
                )
                    .into_response(),
                _ => answer(kind, status, &text),
            }
        }
    }
}

/// Records the press as its operator's vote; the text is for the presser.
async fn record(
    app: &App,
    target: &str,
    vote: ChannelVote,
) -> Result<String, (StatusCode, String)> {
    let refused = |t: String| (StatusCode::OK, t);
    // A press on a message this daemon did not send for that approval (a
    // crafted payload) is refused; after a restart nothing is remembered,
    // and the operator's identity still decides.
    if let Some(d) = app.deliveries.delivered(&vote.approval_id, target)
        && !vote.came_from(&d)
    {
        return Err((
            StatusCode::BAD_REQUEST,
            "this button does not belong to that approval's message".into(),
        ));
    }
    let id = ApprovalId::parse(&vote.approval_id)
        .map_err(|e| (StatusCode::BAD_REQUEST, e.to_string()))?;
    let who = format!("{}:{}", vote.kind, vote.user);
    let (store, clock) = (app.store.clone(), app.clock.clone());
    let kind = vote.kind;
    let approve = vote.approve;
    let result = tokio::task::spawn_blocking(move || {
        let Some(op) = toolgate_gate::operator_for_identity(&*store, &who)? else {
            return Ok(Err(format!(
                "{who} is not linked to a toolgate operator, so this press counts for nothing; an administrator can link it: toolgate operators add NAME --identity {who}"
            )));
        };
        let input = VoteInput {
            identity: op.name.clone(),
            approve,
            reason: None,
            channel: kind.to_string(),
            relayed: false,
        };
        match toolgate_gate::vote(&*store, &*clock, &id, input) {
            Ok(o) => Ok(Ok((op.name, o))),
            Err(toolgate_store::StoreError::Refused(r)) => Ok(Err(r.to_string())),
            Err(toolgate_store::StoreError::NotFound(_)) => Ok(Err("no such approval".into())),
            Err(e) => Err(e),
        }
    })
    .await
    .map_err(|_| (StatusCode::INTERNAL_SERVER_ERROR, "internal error".to_string()))?
    .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    app.committed.notify_one();
    match result {
        Err(why) => Err(refused(why)),
        Ok((name, VoteOutcome::Approved { .. })) => Ok(format!("Approved, as {name}.")),
        Ok((name, VoteOutcome::Denied)) => Ok(format!("Denied, as {name}.")),
        Ok((name, VoteOutcome::Recorded { have, need, .. })) => {
            Ok(format!("Recorded your approval, {name}: {have} of {need}."))
        }
    }
}
