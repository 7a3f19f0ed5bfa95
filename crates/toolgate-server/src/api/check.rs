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
use toolgate_core::{Decision, ToolCall, Verdict, kind_of};
use toolgate_gate::{GiveUp, Look, Next, RECHECK_EVERY, Waiter};

/// Longest `?wait=` honoured.
pub const MAX_WAIT: Duration = Duration::from_secs(600);

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
) -> Result<Json<serde_json::Value>, ApiError> {
    app.authenticate(&headers, None, Role::Agent).await?;
    let q: CheckQuery = query(&uri)?;
    let wait = q.wait.as_deref().map(parse_wait).transpose()?;
    let value = read_json(&headers, body, false).await?;
    let call =
        toolgate_core::tool_call(value, &[]).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let mut decision = decide(&app, call.clone()).await?;
    link(&app, &mut decision);
    let decision = match (wait, decision.decision) {
        (Some(wait), Verdict::Escalate) => wait_for(&app, call, decision, wait).await?,
        _ => decision,
    };
    Ok(Json(answer(&decision)))
}

/// The Decision as the answer carries it, with `outcome`: how a person
/// reads it (`hold` for a knowledge hold, which is a `block` to the
/// runtime: the agent reads what it was shown and retries).
fn answer(d: &Decision) -> serde_json::Value {
    let mut v = serde_json::to_value(d).unwrap_or(serde_json::Value::Null);
    let outcome = crate::stats::Outcome::of(d.decision.as_str(), d.layer.as_str());
    if let (Some(o), Some(map)) = (outcome, v.as_object_mut()) {
        map.insert(
            "outcome".into(),
            serde_json::to_value(o).unwrap_or(serde_json::Value::Null),
        );
    }
    v
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

/// Decides one call through the group-commit worker and counts it; an
/// escalation then goes to the automated approvers (rules, model), off the
/// commit thread, whose votes may settle it at once.
pub async fn decide(app: &App, call: ToolCall) -> Result<Decision, ApiError> {
    let start = Instant::now();
    // A runtime's hook names itself as the agent (`claude-code`, …).
    if let Some(rt) = call
        .agent
        .as_deref()
        .and_then(toolgate_core::hooks::Runtime::parse)
    {
        app.canaries.hook_seen(rt.as_str(), app.clock.now_ms());
    }
    let tool = kind_of(&call.tool).as_str();
    let d = app.checker.check(call.clone()).await?;
    count(app, &d, tool, start.elapsed());
    if d.decision != Verdict::Escalate {
        return Ok(d);
    }
    let gate = app.gate.load_full();
    let escalated = d.clone();
    let settled = tokio::task::spawn_blocking(move || gate.run_factors(&call, d))
        .await
        .map_err(|_| ApiError::internal("asking the automated approvers failed"))??;
    if settled != escalated {
        // Their votes settled it and the call was recorded again.
        app.committed.notify_one();
        count(app, &settled, tool, start.elapsed());
    }
    Ok(settled)
}

/// Times a decision this daemon recorded, and counts it in the metrics
/// (the dashboard's counts come from the audit tail, which sees every
/// process's decisions).
fn count(app: &App, d: &Decision, tool: &'static str, took: Duration) {
    app.stats
        .latency(app.clock.now_ms().div_euclid(1000), took.as_micros() as u64);
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
        a.approve_url = Some(format!("{}/#approval/{}", app.base_url(), a.id));
    }
}

/// Holds an escalation open until it is resolved, the wait runs out or the
/// daemon stops, following the rules of [`Waiter`]; events from the audit
/// tail wake it, and it looks at the store at least every
/// [`RECHECK_EVERY`] (a missed event costs at most that).
async fn wait_for(
    app: &Arc<App>,
    call: ToolCall,
    escalated: Decision,
    wait: Duration,
) -> Result<Decision, ApiError> {
    let Some(mut waiter) = Waiter::new(escalated.clone(), wait) else {
        return Ok(escalated);
    };
    // A bounded number of long polls: past it, answer the escalation now.
    let Ok(_slot) = app.waiters.clone().try_acquire_owned() else {
        return Ok(escalated);
    };
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + wait;
    let _waiting = app.waiting.enter(
        waiter.id().to_string(),
        app.clock.now_ms() + wait.as_millis() as i64,
    );
    let mut events = app.events.subscribe();
    let mut stopping = app.shutdown.subscribe();
    let why = loop {
        match wait_once(app, &waiter, deadline, &mut events, &mut stopping).await? {
            Look::Wait => continue,
            Look::Gone(why) => break why,
            Look::Recheck => {
                let mut d = decide(app, call.clone()).await?;
                link(app, &mut d);
                match waiter.rechecked(d) {
                    Next::Answer(d) => return Ok(*d),
                    Next::Wait { pause } => tokio::time::sleep(pause).await,
                }
            }
        }
    };
    let (label, block) = waiter.give_up(why);
    let id = waiter.id();
    let waited_ms = started.elapsed().as_millis() as i64;
    let gate = app.gate.load_full();
    let record_start = Instant::now();
    let tool = kind_of(&call.tool).as_str();
    let recorded = tokio::task::spawn_blocking(move || {
        gate.record_wait_end(&call, &id, label, waited_ms, block)
    })
    .await
    .map_err(|_| ApiError::internal("recording the end of the wait failed"))??;
    count(app, &recorded, tool, record_start.elapsed());
    app.committed.notify_one();
    Ok(recorded)
}

/// Waits for the next thing that settles the waiter's approval.
async fn wait_once(
    app: &App,
    waiter: &Waiter,
    deadline: tokio::time::Instant,
    events: &mut tokio::sync::broadcast::Receiver<crate::app::Event>,
    stopping: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<Look, ApiError> {
    let id_text = waiter.id().to_string();
    // It may have been settled before we started listening.
    let look = current(app, waiter).await?;
    if look != Look::Wait {
        return Ok(look);
    }
    loop {
        let recheck = tokio::time::sleep(RECHECK_EVERY);
        let look = tokio::select! {
            ev = events.recv() => match ev {
                Ok(e) => match &e.approval {
                    Some((eid, name)) if *eid == id_text => waiter.look_event(name),
                    _ => Look::Wait,
                },
                Err(RecvError::Lagged(_)) => current(app, waiter).await?,
                Err(RecvError::Closed) => Look::Gone(GiveUp::Stopping),
            },
            _ = recheck => current(app, waiter).await?,
            _ = tokio::time::sleep_until(deadline) => Look::Gone(GiveUp::Timeout),
            _ = async { let _ = stopping.wait_for(|s| *s).await; } => Look::Gone(GiveUp::Stopping),
        };
        if look != Look::Wait {
            return Ok(look);
        }
    }
}

/// Reads the approval's state without taking the write lock.
async fn current(app: &App, waiter: &Waiter) -> Result<Look, ApiError> {
    let store = app.store.clone();
    let id = waiter.id();
    let approval = tokio::task::spawn_blocking(move || store.read_approval(&id))
        .await
        .map_err(|_| ApiError::internal("reading the approval failed"))??;
    Ok(waiter.look(approval.as_ref(), app.clock.now_ms()))
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
