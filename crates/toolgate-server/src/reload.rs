//! Policy hot reload: on a change to the policy file (editors replace
//! files, so the directory is watched) and on SIGHUP. A policy that fails
//! to load or fails its `[[test]]` cases is rejected, logged, audited and
//! shown in `/v1/state`; the old one stays in force.

use crate::app::App;
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use toolgate_core::audit::{AuditEvent, AuditKind};
use toolgate_core::time::rfc3339_ms;

/// Quiet time before a burst of file events counts as one change.
const DEBOUNCE: Duration = Duration::from_millis(150);

/// Starts watching the policy file (if any), the scope profile it names
/// (if any) and SIGHUP; each trigger reloads. Returns the watchers, which
/// must be kept alive.
pub fn start(app: &Arc<App>) -> Option<Box<dyn std::any::Any + Send>> {
    let (tx, mut rx) = mpsc::channel::<&'static str>(4);
    let mut keep: Vec<Box<dyn std::any::Any + Send>> = Vec::new();
    // The policy file, and the scope profile it names (a change to either
    // reloads both).
    let profile = app
        .gate
        .load()
        .engine()
        .policy()
        .profile()
        .map(|p| PathBuf::from(&p.origin));
    for path in app.source.watch.iter().cloned().chain(profile) {
        match watch(&path, tx.clone()) {
            Ok(w) => keep.push(w),
            Err(e) => tracing::warn!(
                error = %e,
                path = %path.display(),
                "cannot watch the policy or profile file; reload with SIGHUP"
            ),
        }
    }
    let keep: Option<Box<dyn std::any::Any + Send>> =
        (!keep.is_empty()).then(|| Box::new(keep) as Box<dyn std::any::Any + Send>);
    #[cfg(unix)]
    {
        let tx = tx.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut hup) = signal(SignalKind::hangup()) else {
                return;
            };
            while hup.recv().await.is_some() {
                let _ = tx.send("SIGHUP").await;
            }
        });
    }
    let app = app.clone();
    tokio::spawn(async move {
        while let Some(why) = rx.recv().await {
            reload(&app, why).await;
        }
    });
    keep
}

fn watch(
    path: &Path,
    tx: mpsc::Sender<&'static str>,
) -> notify::Result<Box<dyn std::any::Any + Send>> {
    let file = path.file_name().map(|f| f.to_os_string());
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |res: DebounceEventResult| {
        let Ok(events) = res else { return };
        // Only changes count: reading the file (which every reload does)
        // reports access events, and reacting to those would reload forever.
        let touches = events.iter().any(|e| {
            matches!(
                e.kind,
                EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
            ) && e
                .paths
                .iter()
                .any(|p| p.file_name().map(|f| f.to_os_string()) == file)
        });
        if touches {
            let _ = tx.try_send("file change");
        }
    })?;
    debouncer.watch(&dir, RecursiveMode::NonRecursive)?;
    Ok(Box::new(debouncer))
}

/// Loads the policy again and swaps it in, or keeps the old one and says
/// why not. Either way the attempt is audited.
pub async fn reload(app: &Arc<App>, why: &str) {
    let loader = app.source.loader.clone();
    let loaded = tokio::task::spawn_blocking(move || loader())
        .await
        .unwrap_or_else(|_| Err("loading the policy panicked".to_string()));
    let mut origin = app.policy_status().origin;
    let (result, error) = match loaded {
        Ok(engine) => {
            origin = engine.policy().origin().to_string();
            app.install(engine);
            let now = rfc3339_ms(app.clock.now_ms());
            app.set_policy_status(|s| {
                s.origin = origin.clone();
                s.loaded = now;
                s.reloads += 1;
                s.last_error = None;
            });
            tracing::info!(origin = %origin, trigger = why, "policy reloaded");
            ("reloaded", None)
        }
        Err(e) => {
            tracing::error!(origin = %origin, trigger = why, error = %e, "new policy rejected; keeping the old one");
            app.set_policy_status(|s| s.last_error = Some(e.clone()));
            ("rejected", Some(e))
        }
    };
    metrics::counter!("toolgate_policy_reloads_total", "result" => result).increment(1);
    record(app, result, &origin, error.as_deref(), why).await;
}

/// Appends a `policy.loaded` audit entry (which the live feed also shows).
pub async fn record(app: &Arc<App>, result: &str, origin: &str, error: Option<&str>, why: &str) {
    let event = AuditEvent {
        ts_ms: app.clock.now_ms(),
        trace: toolgate_gate::random_hex().unwrap_or_default(),
        kind: AuditKind::PolicyLoaded,
        data: json!({
            "result": result,
            "origin": origin,
            "error": error.map(|e| toolgate_core::redact::redact_text(e).into_owned()),
            "trigger": why,
        }),
    };
    let store = app.store.clone();
    let done = tokio::task::spawn_blocking(move || {
        let mut tx = store.begin()?;
        tx.append(&event)?;
        tx.commit()
    })
    .await;
    match done {
        Ok(Ok(())) => app.committed.notify_one(),
        Ok(Err(e)) => tracing::error!(error = %e, "cannot audit the policy load"),
        Err(_) => tracing::error!("auditing the policy load panicked"),
    }
}
