//! The daemon's signed audit checkpoints (`docs/audit.md`): one at start,
//! one whenever [`toolgate_gate::CHECKPOINT_EVERY`] entries (written by any
//! process on the store) follow the last, one every
//! [`toolgate_gate::CHECKPOINT_SECS`] seconds while the log grows, and one
//! at shutdown. Each is one short write transaction of its own.

use crate::app::App;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolgate_gate::{CHECKPOINT_EVERY, CHECKPOINT_SECS, DaemonKey};

/// How often the head is looked at (it is kept in memory by the audit
/// tail, so looking costs nothing).
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// Signs a checkpoint now; the sequence number the log's head has after.
async fn sign(app: &Arc<App>, key: &Arc<DaemonKey>, why: &'static str) -> Option<u64> {
    let (store, clock, key) = (app.store.clone(), app.clock.clone(), key.clone());
    let written = tokio::task::spawn_blocking(move || {
        toolgate_gate::write_checkpoint(&*store, &*clock, &key, why)
            .and_then(|seq| Ok(seq.or(store.audit_head()?.map(|(s, _)| s))))
    })
    .await;
    match written {
        Ok(Ok(head)) => head,
        Ok(Err(e)) => {
            // Nothing is lost: the next checkpoint vouches for these
            // entries too; only `audit verify` may see a longer unsigned
            // tail meanwhile.
            tracing::warn!(error = %e, why, "cannot write a signed audit checkpoint");
            None
        }
        Err(_) => None,
    }
}

/// Signs at start, then as the log grows, until the daemon shuts down.
pub(crate) fn spawn(app: &Arc<App>, key: Arc<DaemonKey>) {
    let app = app.clone();
    let mut stop = app.shutdown.subscribe();
    tokio::spawn(async move {
        let mut last = sign(&app, &key, "start").await.unwrap_or(0);
        let mut last_at = Instant::now();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(LOOK_EVERY) => {}
                _ = stop.changed() => return,
            }
            let head = app.audit_head.lock().unwrap_or_else(|p| p.into_inner()).0;
            let due = head > last
                && (head - last >= CHECKPOINT_EVERY
                    || last_at.elapsed() >= Duration::from_secs(CHECKPOINT_SECS));
            if due {
                last = sign(&app, &key, "interval").await.unwrap_or(head);
                last_at = Instant::now();
            }
        }
    });
}

/// The checkpoint at shutdown, once requests are done.
pub(crate) async fn at_shutdown(app: &Arc<App>, key: &Arc<DaemonKey>) {
    sign(app, key, "shutdown").await;
}
