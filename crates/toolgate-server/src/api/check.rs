//! `POST /v1/check`: a ToolCall in, a Decision out; with `?wait=`, an
//! escalation is held open until an operator resolves it.

use crate::api::{query, read_json};
use crate::app::App;
use crate::auth::Role;
use crate::error::ApiError;
use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use serde::Deserialize;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;
use toolgate_core::approval::{ApprovalId, ApprovalState};
use toolgate_core::model::{Decision, Layer, ToolCall, Verdict};
use toolgate_core::normalize::kind_of;
use toolgate_core::time::rfc3339_ms;

/// Longest `?wait=` honoured.
pub const MAX_WAIT: Duration = Duration::from_secs(600);
/// How often a waiter re-reads the approval in case an event was missed.
const RECHECK_EVERY: Duration = Duration::from_secs(2);

#[derive(Debug, Deserialize)]
struct CheckQuery {
    wait: Option<String>,
}

/// `POST /v1/check[?wait=30s]` (agent).
pub async fn check(
    State(app): State<Arc<App>>,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Decision>, ApiError> {
    app.authenticate(&headers, None, Role::Agent).await?;
    let q: CheckQuery = query(&uri)?;
    let wait = q.wait.as_deref().map(parse_wait).transpose()?;
    let value = read_json(&headers, body, false).await?;
    let call =
        toolgate_core::input::tool_call(value).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let mut decision = decide(&app, call.clone()).await?;
    link(&app, &mut decision);
    match (wait, decision.decision, &decision.approval) {
        (Some(wait), Verdict::Escalate, Some(a)) => {
            let id = ApprovalId::parse(&a.id).map_err(|e| ApiError::internal(e.to_string()))?;
            Ok(Json(wait_for(&app, call, decision, id, wait).await?))
        }
        _ => Ok(Json(decision)),
    }
}

fn parse_wait(text: &str) -> Result<Duration, ApiError> {
    let d = humantime::parse_duration(text.trim()).map_err(|e| {
        ApiError::bad_request(format!(
            "bad wait {text:?} ({e}): give a duration such as 30s or 2m"
        ))
    })?;
    if d > MAX_WAIT {
        return Err(ApiError::bad_request(format!(
            "wait {text} is longer than the most allowed ({}s)",
            MAX_WAIT.as_secs()
        )));
    }
    Ok(d)
}

/// Decides one call through the group-commit worker and counts it.
pub async fn decide(app: &App, call: ToolCall) -> Result<Decision, ApiError> {
    let start = Instant::now();
    let tool = kind_of(&call.tool).as_str();
    let d = app.checker.check(call).await?;
    count(app, &d, tool, start.elapsed());
    Ok(d)
}

/// Counts a recorded decision in the stats and metrics (every decision the
/// audit log holds for this daemon is counted once).
fn count(app: &App, d: &Decision, tool: &'static str, took: Duration) {
    app.stats.record(
        app.clock.now_ms().div_euclid(1000),
        d.decision,
        took.as_micros() as u64,
    );
    metrics::counter!(
        "toolgate_checks_total",
        "decision" => d.decision.as_str(),
        "risk" => d.risk.as_str(),
        "layer" => d.layer.as_str(),
        "tool" => tool,
    )
    .increment(1);
    metrics::histogram!("toolgate_check_duration_seconds").record(took.as_secs_f64());
}

/// Points the approval at the control UI.
fn link(app: &App, d: &mut Decision) {
    if let Some(a) = d.approval.as_mut()
        && a.approve_url.is_none()
    {
        a.approve_url = Some(format!("http://{}/#approval/{}", app.listen, a.id));
    }
}

/// What a waiter learned about its approval.
enum Outcome {
    /// Approved or denied: re-check the call, which consumes or refuses it.
    Resolved,
    /// It can no longer be approved (expired, or used by another retry).
    Gone(&'static str),
    /// The wait ran out.
    TimedOut,
    /// The daemon is stopping.
    Stopping,
}

/// Holds an escalation open until it is resolved, the wait runs out or the
/// daemon stops. If another retry of the same call used the approval first,
/// the re-check escalates again and this keeps waiting on the new one.
async fn wait_for(
    app: &Arc<App>,
    call: ToolCall,
    mut escalated: Decision,
    mut id: ApprovalId,
    wait: Duration,
) -> Result<Decision, ApiError> {
    // A bounded number of long polls: past it, answer the escalation now.
    let Ok(_slot) = app.waiters.clone().try_acquire_owned() else {
        return Ok(escalated);
    };
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + wait;
    let mut events = app.events.subscribe();
    let mut stopping = app.shutdown.subscribe();
    loop {
        let outcome = wait_once(app, id, deadline, &mut events, &mut stopping).await?;
        let (why, label) = match outcome {
            Outcome::Resolved => {
                let mut d = decide(app, call.clone()).await?;
                link(app, &mut d);
                // Still escalated: another retry used the approval (a new
                // id), or it went back to pending on new terms (the same
                // id). Either way this call keeps waiting.
                match (
                    &d.decision,
                    d.approval.as_ref().map(|a| ApprovalId::parse(&a.id)),
                ) {
                    (Verdict::Escalate, Some(Ok(next))) => {
                        if next == id {
                            // Pace re-checks of the same approval, in case
                            // its state reads as settled while the gate
                            // still escalates (each re-check is audited).
                            tokio::time::sleep(RECHECK_EVERY).await;
                        }
                        id = next;
                        escalated = d;
                        continue;
                    }
                    _ => return Ok(d),
                }
            }
            Outcome::Gone(what) => (
                format!(
                    "approval {id} was {what} while this call waited; retry the call to ask again"
                ),
                what,
            ),
            Outcome::Stopping => (
                format!(
                    "toolgate is shutting down; approval {id} stays pending: retry the exact call \
                     once it is approved"
                ),
                "shutdown",
            ),
            Outcome::TimedOut => (
                format!(
                    "no operator resolved approval {id} within {}; it stays pending until {}: \
                     retry the exact call once it is approved",
                    humantime::format_duration(Duration::from_secs(wait.as_secs())),
                    escalated
                        .approval
                        .as_ref()
                        .map(|a| a.expires_at.clone())
                        .unwrap_or_else(|| rfc3339_ms(app.clock.now_ms()))
                ),
                "timeout",
            ),
        };
        let waited_ms = started.elapsed().as_millis() as i64;
        let mut d = Decision::new(
            Verdict::Block,
            escalated.risk,
            escalated.score,
            Layer::Approval,
            &why,
        );
        // Still pending: say which approval an operator may yet grant.
        if matches!(label, "timeout" | "shutdown") {
            d.approval = escalated.approval.clone();
        }
        let gate = app.gate.load_full();
        let record_start = Instant::now();
        let tool = kind_of(&call.tool).as_str();
        let recorded = tokio::task::spawn_blocking(move || {
            gate.record_wait_end(&call, &id, label, waited_ms, d)
        })
        .await
        .map_err(|_| ApiError::internal("recording the end of the wait failed"))??;
        count(app, &recorded, tool, record_start.elapsed());
        app.committed.notify_one();
        return Ok(recorded);
    }
}

/// Waits for the next thing that settles approval `id`.
async fn wait_once(
    app: &App,
    id: ApprovalId,
    deadline: tokio::time::Instant,
    events: &mut tokio::sync::broadcast::Receiver<crate::app::Event>,
    stopping: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<Outcome, ApiError> {
    let id_text = id.to_string();
    // It may have been settled before we started listening.
    if let Some(o) = current(app, id).await? {
        return Ok(o);
    }
    loop {
        let recheck = tokio::time::sleep(RECHECK_EVERY);
        let found = tokio::select! {
            ev = events.recv() => match ev {
                Ok(e) => match &e.approval {
                    Some((eid, name)) if *eid == id_text => match name.as_str() {
                        // Consumed by another retry of the same call: the
                        // re-check asks again, and this call waits on that.
                        "approved" | "denied" | "consumed" => Some(Outcome::Resolved),
                        "expired" => Some(Outcome::Gone("expired")),
                        _ => None,
                    },
                    _ => None,
                },
                Err(RecvError::Lagged(_)) => current(app, id).await?,
                Err(RecvError::Closed) => Some(Outcome::Stopping),
            },
            _ = recheck => current(app, id).await?,
            _ = tokio::time::sleep_until(deadline) => Some(Outcome::TimedOut),
            _ = async { let _ = stopping.wait_for(|s| *s).await; } => Some(Outcome::Stopping),
        };
        if let Some(o) = found {
            return Ok(o);
        }
    }
}

/// Reads the approval's state without taking the write lock.
async fn current(app: &App, id: ApprovalId) -> Result<Option<Outcome>, ApiError> {
    let store = app.store.clone();
    let now = app.clock.now_ms();
    let approval = tokio::task::spawn_blocking(move || store.read_approval(&id))
        .await
        .map_err(|_| ApiError::internal("reading the approval failed"))??;
    let Some(a) = approval else {
        return Ok(Some(Outcome::Gone("removed")));
    };
    Ok(match a.state {
        ApprovalState::Pending if now >= a.expires_ms => Some(Outcome::Gone("expired")),
        ApprovalState::Pending => None,
        ApprovalState::Approved | ApprovalState::Denied | ApprovalState::Consumed => {
            Some(Outcome::Resolved)
        }
        ApprovalState::Expired => Some(Outcome::Gone("expired")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_parse_and_are_bounded() {
        assert_eq!(parse_wait("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_wait("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_wait("forever").unwrap_err().code, "bad_request");
        assert!(parse_wait("11m").unwrap_err().message.contains("longer"));
    }
}
