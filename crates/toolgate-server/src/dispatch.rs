//! Sends approvals where `[approvals.routing]` says (docs/channels.md): each
//! pending approval goes to the chat channels and webhooks the router names
//! (toolgate-channels adapters), fanned out with per-target retries; when it
//! is resolved anywhere, the messages are updated. Driven by the typed
//! stream of approval changes, whose content is read from the store, never
//! from audit text.

use crate::app::App;
use crate::routing::{ApprovalChange, Change, Routed};
use std::sync::Arc;
use tokio::sync::broadcast;
use toolgate_channels::{
    Channel, Delivered, DeliveryState, Notice, Resolution, TargetStatus, fan_out, fan_out_resolved,
};
use toolgate_core::{Approval, ApprovalState, Routing, kind_of};

/// Routes approval changes as they come, until the stream closes.
pub(crate) async fn run(app: Arc<App>, mut changes: broadcast::Receiver<ApprovalChange>) {
    loop {
        match changes.recv().await {
            Ok(change) => {
                let app = app.clone();
                tokio::spawn(async move { handle(&app, change).await });
            }
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(missed = n, "the approval router fell behind");
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

async fn handle(app: &Arc<App>, change: ApprovalChange) {
    // Without a routing target (the default) there is nothing to send or
    // update, and nothing to remember.
    if app
        .router
        .load()
        .targets
        .iter()
        .all(|t| t.channel.is_none())
    {
        return;
    }
    let store = app.store.clone();
    let id = change.id;
    let approval = match tokio::task::spawn_blocking(move || store.read_approval(&id)).await {
        Ok(Ok(Some(a))) => a,
        Ok(Err(e)) => {
            tracing::warn!(approval = %id, error = %e, "cannot read an approval to route it");
            return;
        }
        _ => return,
    };
    match change.change {
        Change::Created if approval.state == ApprovalState::Pending => {
            request(app, &approval).await
        }
        Change::Created => {}
        Change::Approved | Change::Denied | Change::Expired => resolve(app, &approval).await,
    }
}

/// The notice for `a`, as every target sees it (links added per target).
/// The agent's text in it shows its control and bidirectional characters
/// as escapes: what people approve in chat reads as what runs.
fn notice(app: &App, a: &Approval) -> Notice {
    use toolgate_core::visible_line;
    let tool = a.call.get("tool").and_then(|t| t.as_str()).unwrap_or("?");
    let shown = |t: &str| visible_line(t).into_owned();
    Notice {
        approval_id: a.id.to_string(),
        summary: shown(&a.summary),
        tool: shown(tool),
        risk: a.risk.as_str().to_string(),
        reason: shown(&a.reason),
        agent: a.agent.as_deref().map(shown),
        session: a.session.as_deref().map(shown),
        have: 0,
        need: a.quorum.min_approvals,
        expires_at_ms: a.expires_ms,
        approve_url: None,
        deny_url: None,
        dashboard_url: Some(format!("{}/#approval/{}", app.base_url(), a.id)),
        flagged: flagged(a),
    }
}

/// The sub-commands the findings are about, strongest first, once each:
/// what a chat notice must show however long the command.
fn flagged(a: &Approval) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in a.findings.iter().filter_map(|f| f.command.as_deref()) {
        let c = toolgate_core::visible_line(c).into_owned();
        if !c.trim().is_empty() && !out.contains(&c) && out.len() < 8 {
            out.push(c);
        }
    }
    out
}

async fn request(app: &Arc<App>, a: &Approval) {
    let router = app.router.load_full();
    let tool = a.call.get("tool").and_then(|t| t.as_str()).unwrap_or("");
    let channel = a.call.get("channel").and_then(|c| c.as_str());
    let kind = kind_of(tool).as_str();
    let routing = Routing {
        mode: router.mode,
        targets: router.targets.iter().map(|t| t.spec.clone()).collect(),
    };
    let names: Vec<String> = routing
        .targets_for(a.risk, tool, kind, a.agent.as_deref(), channel)
        .into_iter()
        .map(|t| t.name.clone())
        .collect();
    let chosen: Vec<&Routed> = router
        .targets
        .iter()
        .filter(|t| t.channel.is_some() && names.contains(&t.spec.name))
        .collect();
    if chosen.is_empty() {
        return;
    }
    let id = a.id.to_string();
    let base = notice(app, a);
    app.deliveries.with(|m| {
        m.entry(id.clone()).or_default().notice = Some(base.clone());
    });
    let mut jobs = Vec::new();
    for t in chosen {
        let Some(channel) = t.channel.clone() else {
            continue;
        };
        let mut n = base.clone();
        if let Some(op) = &t.spec.links_for {
            let (approve, deny) = crate::links::pair(app, &id, op, a.expires_ms);
            n.approve_url = approve;
            n.deny_url = deny;
        }
        let (app, id, name) = (app.clone(), id.clone(), t.spec.name.clone());
        let retry = router.retry;
        jobs.push(async move {
            let report = {
                let (deliveries, id, name) = (app.deliveries.clone(), id.clone(), name.clone());
                move |s: TargetStatus| deliveries.report(&id, &name, s)
            };
            let out = fan_out(std::slice::from_ref(&channel), &n, retry, report).await;
            for s in out {
                if let DeliveryState::Delivered(d) = s.state {
                    // Resolved while this one was on its way: update it now.
                    let late = app.deliveries.with(|m| {
                        let sent = m.entry(id.clone()).or_default();
                        sent.delivered
                            .push((name.clone(), channel.clone(), d.clone()));
                        sent.resolution.clone()
                    });
                    if let Some(resolution) = late {
                        update(&app, &id, &name, channel.clone(), d, &n, &resolution).await;
                    }
                }
            }
        });
    }
    futures_join(jobs).await;
}

/// Replaces one delivered request with the outcome.
async fn update(
    app: &Arc<App>,
    id: &str,
    name: &str,
    channel: Arc<dyn Channel>,
    delivered: Delivered,
    notice: &Notice,
    resolution: &Resolution,
) {
    let retry = app.router.load().retry;
    let report = {
        let (deliveries, id, name) = (app.deliveries.clone(), id.to_string(), name.to_string());
        move |s: TargetStatus| deliveries.report(&id, &format!("{name} (update)"), s)
    };
    fan_out_resolved(&[(channel, delivered)], notice, resolution, retry, report).await;
}

async fn resolve(app: &Arc<App>, a: &Approval) {
    let said = a.resolution.clone().unwrap_or_default();
    let resolution = match a.state {
        ApprovalState::Approved | ApprovalState::Consumed => Resolution::Approved {
            by: match said.strip_prefix("approved by ") {
                Some(names) => names.split(", ").map(str::to_string).collect(),
                None => vec![said],
            },
        },
        ApprovalState::Denied => {
            let rest = said.strip_prefix("denied by ").unwrap_or(&said);
            let (by, reason) = match rest.split_once(": ") {
                Some((by, reason)) => (by.to_string(), Some(reason.to_string())),
                None => (rest.to_string(), None),
            };
            Resolution::Denied { by, reason }
        }
        ApprovalState::Expired => Resolution::Expired,
        ApprovalState::Pending => return,
    };
    let id = a.id.to_string();
    let taken = app.deliveries.with(|m| {
        // Recorded even before any request was delivered, so one still on
        // its way is updated when it lands.
        let sent = m.entry(id.clone()).or_default();
        if sent.resolution.is_some() {
            return None;
        }
        sent.resolution = Some(resolution.clone());
        Some((sent.notice.clone()?, sent.delivered.clone()))
    });
    let Some((notice, delivered)) = taken else {
        return;
    };
    let jobs = delivered.into_iter().map(|(name, channel, d)| {
        let (app, id, notice, resolution) =
            (app.clone(), id.clone(), notice.clone(), resolution.clone());
        async move { update(&app, &id, &name, channel, d, &notice, &resolution).await }
    });
    futures_join(jobs.collect()).await;
}

/// Runs the futures concurrently and returns their outputs in order.
async fn futures_join<F>(jobs: Vec<F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = jobs.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        if let Ok(v) = h.await {
            out.push(v);
        }
    }
    out
}
