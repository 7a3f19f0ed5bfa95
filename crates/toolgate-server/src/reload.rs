//! Policy hot reload: on a change to a file the policy in force was read
//! from (the policy file and the scope profile it names; editors replace
//! files, so their directories are watched) and on SIGHUP. A policy that fails
//! to load or fails its `[[test]]` cases is rejected, logged, audited and
//! shown in `/v1/state`; the old one stays in force.

use crate::app::App;
use serde_json::json;
use std::sync::Arc;
use tokio::sync::mpsc;
use toolgate_core::{AuditEvent, AuditKind, rfc3339_ms};

/// Starts watching the files the policy in force was read from (the policy
/// file and the scope profile it names; the built-in default has none) and
/// SIGHUP; each trigger reloads. [`crate::watchers::Watchers::stop`] ends the watching.
pub fn start(app: &Arc<App>) {
    let (tx, mut rx) = mpsc::channel::<&'static str>(4);
    app.watchers.start(tx.clone());
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
    drop(tx);
    let app = app.clone();
    tokio::spawn(async move {
        while let Some(why) = rx.recv().await {
            reload(&app, why).await;
        }
    });
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
        Ok(bundle) => {
            origin = bundle.origin().to_string();
            // Watch what this policy was read from before it is in force, so
            // a change to a profile it newly names is not missed.
            app.watchers.follow(bundle.sources());
            app.install(bundle.into_engine());
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
            "error": error.map(|e| toolgate_core::redact_text(e).into_owned()),
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
