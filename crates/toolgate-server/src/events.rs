//! Background tasks: tailing the audit log into live events and metrics,
//! expiring approvals on time, and closing the per-second stats buckets.

use crate::app::{App, Event};
use crate::records::live_event;
use crate::stats::{Outcome, Totals};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use toolgate_core::hex;

/// How often the audit log is read when nothing in this process committed
/// (votes and checks by other processes show up within this), on a store
/// that cannot say when another process commits (SQLite: the CLI voting).
const TAIL_EVERY: Duration = Duration::from_millis(250);
/// The same, on a store that wakes the tailer when another process commits
/// (PostgreSQL's notifications): only a safety net.
const TAIL_EVERY_WATCHED: Duration = Duration::from_secs(2);
/// How long the tailer lets commits gather after being woken.
const TAIL_COALESCE: Duration = Duration::from_millis(20);
/// Most rows read per tail pass.
const TAIL_BATCH: usize = 2_000;
/// How often due approvals are expired and open ones counted.
const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// Approvals remembered for time-to-decision.
const REMEMBERED: usize = 10_000;

/// Starts every background task.
pub fn spawn_all(app: &Arc<App>) {
    tokio::spawn(crate::dispatch::run(
        app.clone(),
        app.approval_changes.subscribe(),
    ));
    let committed = app.committed.clone();
    let watched = app
        .store
        .watch_commits(Arc::new(move || committed.notify_one()));
    tokio::spawn(tail(
        app.clone(),
        if watched {
            TAIL_EVERY_WATCHED
        } else {
            TAIL_EVERY
        },
    ));
    tokio::spawn(sweep(app.clone()));
    tokio::spawn(tick(app.clone()));
}

async fn tail(app: Arc<App>, every: Duration) {
    // From the head read when the daemon was bound, before any request.
    let head = app.audit_head.lock().unwrap_or_else(|p| p.into_inner()).0;
    seed_stats(&app, head).await;
    let mut next = head + 1;
    let mut created: HashMap<String, Instant> = HashMap::new();
    loop {
        tokio::select! {
            _ = app.committed.notified() => {
                // Under load commits come hundreds of times a second: let a
                // few gather so one read serves them all.
                tokio::time::sleep(TAIL_COALESCE).await;
            }
            _ = tokio::time::sleep(every) => {}
        }
        let store = app.store.clone();
        let from = next;
        let read = tokio::task::spawn_blocking(move || {
            let mut rows = Vec::new();
            let head = store.scan_audit(from, &mut |r| {
                rows.push(r);
                rows.len() < TAIL_BATCH
            });
            head.map(|h| (rows, h))
        })
        .await;
        let (rows, head) = match read {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "cannot read the audit log for live events");
                continue;
            }
            Err(_) => continue,
        };
        for row in &rows {
            next = row.seq + 1;
            // Most rows are layer verdicts, which nothing here shows. The
            // canonical text puts `kind` right after `data`, and quotes
            // inside strings are escaped, so this test is exact.
            if is_verdict(&row.entry) {
                continue;
            }
            let Ok(entry) = serde_json::from_str::<Value>(&row.entry) else {
                continue;
            };
            count_outcome(&entry, &mut created);
            count_decision(&app, &entry);
            if let Some(line) = crate::activity::line(&entry, &app.base_url()) {
                tracing::info!(target: "toolgate::approvals", "{line}");
            }
            route(&app, &entry);
            note_knowledge_error(&app, &entry);
            if let Some((json, approval)) = live_event(&entry) {
                app.publish(Event {
                    text: json.to_string().into(),
                    approval,
                });
            }
        }
        if let Some((seq, hash)) = head {
            metrics::gauge!("toolgate_audit_entries").set(seq as f64);
            *app.audit_head.lock().unwrap_or_else(|p| p.into_inner()) = (seq, hex(&hash));
        }
        if rows.len() >= TAIL_BATCH {
            // More is waiting: go again without sleeping.
            app.committed.notify_one();
        }
    }
}

/// Most recent decisions read to draw the last ten minutes at start.
const SEED_RECENT: usize = 50_000;

/// Starts the dashboard's counts from the decisions the log holds up to
/// `head` (the tail counts those after it): totals from the decisions
/// index, and the chart's last ten minutes from the newest decisions.
async fn seed_stats(app: &Arc<App>, head: u64) {
    let store = app.store.clone();
    let now_s = app.clock.now_ms().div_euclid(1000);
    let read = tokio::task::spawn_blocking(move || {
        let counts = store.decision_counts(head)?;
        let rows = store.decisions(
            &toolgate_store::DecisionFields::default(),
            head.saturating_add(1),
            SEED_RECENT,
        )?;
        Ok::<_, toolgate_store::StoreError>((counts, rows))
    })
    .await;
    let (counts, rows) = match read {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "cannot count the decisions the audit log holds: the dashboard counts from now on");
            return;
        }
        Err(_) => return,
    };
    let mut totals = Totals::default();
    for c in counts {
        if let Some(o) = Outcome::of(&c.decision, &c.layer) {
            totals.add(o, c.count);
        }
    }
    let first = now_s - crate::stats::HISTORY_SECS as i64;
    let mut recent = Vec::new();
    for row in rows {
        let Ok(entry) = serde_json::from_str::<Value>(&row.entry) else {
            continue;
        };
        let Some((t, o)) = decision_outcome(&entry) else {
            continue;
        };
        if t < first {
            break;
        }
        recent.push((t, o));
    }
    app.stats.seed(totals, &recent, now_s);
}

/// A decision entry's second (from its `ts`) and outcome.
fn decision_outcome(entry: &Value) -> Option<(i64, Outcome)> {
    let (outcome, _) = Outcome::of_entry(entry)?;
    let ts = entry.get("ts").and_then(Value::as_str)?;
    let t = toolgate_core::parse_rfc3339_ms(ts)?.div_euclid(1000);
    Some((t, outcome))
}

/// Counts a decision any process recorded, as seen now; a runtime's hook
/// naming itself as the agent marks that runtime's hook as seen.
fn count_decision(app: &App, entry: &Value) {
    let Some((outcome, data)) = Outcome::of_entry(entry) else {
        return;
    };
    let now = app.clock.now_ms();
    app.stats.count(now.div_euclid(1000), outcome);
    if let Some(rt) = data
        .get("call")
        .and_then(|c| c.get("agent"))
        .and_then(Value::as_str)
        .and_then(toolgate_core::hooks::Runtime::parse)
    {
        app.canaries.hook_seen(rt.as_str(), now);
    }
}

/// Tells the router an approval changed (it reads the approval itself).
fn route(app: &App, entry: &Value) {
    let Some(event) = entry
        .get("kind")
        .and_then(Value::as_str)
        .and_then(|k| k.strip_prefix("approval."))
    else {
        return;
    };
    let Some(change) = crate::routing::Change::from_audit(event) else {
        return;
    };
    let id = entry
        .get("data")
        .and_then(|d| d.get("approval"))
        .and_then(Value::as_str)
        .and_then(|id| toolgate_core::ApprovalId::parse(id).ok());
    if let Some(id) = id {
        let _ = app
            .approval_changes
            .send(crate::routing::ApprovalChange { id, change });
    }
}

/// A knowledge source failure recorded by any process (an in-process hook
/// too) makes the daemon's `/v1/state` show the layer as degraded.
fn note_knowledge_error(app: &App, entry: &Value) {
    if entry.get("kind").and_then(Value::as_str) != Some("knowledge.error") {
        return;
    }
    // Seen within a quarter of a second of being recorded: now is when.
    let at = app.clock.now_ms();
    let what = entry
        .get("data")
        .and_then(|d| d.get("errors"))
        .and_then(Value::as_str)
        .unwrap_or("a knowledge source failed");
    app.gate.load().knowledge().stats().saw_error(at, what);
}

/// Approval outcomes and time from request to decision, from the audit log
/// (so votes cast by the CLI count too).
fn count_outcome(entry: &Value, created: &mut HashMap<String, Instant>) {
    let Some(kind) = entry.get("kind").and_then(Value::as_str) else {
        return;
    };
    let Some(event) = kind.strip_prefix("approval.") else {
        return;
    };
    let Some(id) = entry
        .get("data")
        .and_then(|d| d.get("approval"))
        .and_then(Value::as_str)
    else {
        return;
    };
    match event {
        "created" => {
            if created.len() >= REMEMBERED {
                created.clear();
            }
            created.insert(id.to_string(), Instant::now());
        }
        "approved" | "denied" | "expired" | "consumed" => {
            metrics::counter!("toolgate_approval_outcomes_total", "outcome" => event.to_string())
                .increment(1);
            if event != "consumed"
                && let Some(t) = created.remove(id)
            {
                metrics::histogram!("toolgate_approval_decision_seconds", "outcome" => event.to_string())
                    .record(t.elapsed().as_secs_f64());
            }
        }
        _ => {}
    }
}

async fn sweep(app: Arc<App>) {
    loop {
        tokio::time::sleep(SWEEP_EVERY).await;
        let (store, clock) = (app.store.clone(), app.clock.clone());
        let counted = tokio::task::spawn_blocking(move || {
            toolgate_gate::expire_due(&*store, &*clock)?;
            store.count_open_approvals()
        })
        .await;
        match counted {
            Ok(Ok(n)) => {
                app.pending.store(n, Ordering::Relaxed);
                metrics::gauge!("toolgate_pending_approvals").set(n as f64);
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "cannot expire or count approvals"),
            Err(_) => {}
        }
        crate::api::bypass::refresh(&app).await;
        for w in app.canaries.sweep(app.clock.now_ms()) {
            crate::api::canary::announce(&app, &w);
        }
        app.committed.notify_one();
    }
}

async fn tick(app: Arc<App>) {
    let mut every = tokio::time::interval(Duration::from_secs(1));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        every.tick().await;
        let now = app.clock.now_ms().div_euclid(1000);
        for b in app.stats.tick(now) {
            let mut v = serde_json::to_value(b).unwrap_or(Value::Null);
            v["type"] = Value::from("stats");
            app.publish(Event {
                text: v.to_string().into(),
                approval: None,
            });
        }
    }
}

/// Whether a stored audit entry is a layer verdict, from its canonical text.
/// Keys are sorted, so `data` (where a call's params, chosen by the agent,
/// sit) comes first and the entry's own `kind` is the *last* `,"kind":"`;
/// only what follows it (kind, seq, trace, ts) is toolgate's.
fn is_verdict(canonical: &str) -> bool {
    const KIND: &str = ",\"kind\":\"";
    canonical
        .rfind(KIND)
        .is_some_and(|i| canonical[i + KIND.len()..].starts_with("verdict\",\"seq\":"))
}

#[cfg(test)]
mod tests {
    use super::is_verdict;
    use serde_json::json;
    use toolgate_core::{AuditEvent, AuditKind};

    fn text(kind: AuditKind, data: serde_json::Value) -> String {
        AuditEvent {
            ts_ms: 1,
            trace: "t".into(),
            kind,
            data,
        }
        .canonical(7)
    }

    #[test]
    fn verdicts_are_told_apart_from_their_text() {
        assert!(is_verdict(&text(
            AuditKind::Verdict,
            json!({"layer": "exec"})
        )));
        assert!(!is_verdict(&text(
            AuditKind::Decision,
            json!({"layer": "exec"})
        )));
        // A value that spells the marker is escaped, so it cannot match.
        let tricky = json!({"reason": ",\"kind\":\"verdict\",\"seq\":"});
        assert!(!is_verdict(&text(AuditKind::Decision, tricky)));
        // Nor can params whose keys spell it (they sit inside `data`).
        let keys = json!({"call": {"params": {"a": 1, "kind": "verdict", "seq": 0}}});
        assert!(!is_verdict(&text(AuditKind::Decision, keys)));
    }
}
