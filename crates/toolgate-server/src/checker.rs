//! Group commit for checks: handlers queue calls; one worker thread takes
//! every call waiting (up to [`MAX_BATCH`]), decides and records them in one
//! transaction, and answers each. Under load one fsync covers many calls,
//! which is what lets durable audit keep up with thousands of checks a
//! second; when idle a batch is a single call and waits for nothing.

use crate::error::ApiError;
use arc_swap::ArcSwap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use tokio::sync::{Notify, oneshot};
use toolgate_core::model::{Decision, ToolCall};
use toolgate_store::Gate;

/// Most calls recorded in one transaction.
pub const MAX_BATCH: usize = 256;

/// Calls that may wait for the worker before new ones are turned away (503).
pub const QUEUE_DEPTH: usize = 8192;

struct Job {
    call: ToolCall,
    reply: oneshot::Sender<Result<Decision, ApiError>>,
}

/// The handle handlers use to have calls decided.
#[derive(Clone)]
pub struct Checker {
    queue: SyncSender<Job>,
}

impl Checker {
    /// Starts the worker thread. It decides with whatever gate `gate` holds
    /// when a batch starts (so a policy reload applies to the next batch),
    /// and wakes `committed` after each commit.
    pub fn start(gate: Arc<ArcSwap<Gate>>, committed: Arc<Notify>) -> std::io::Result<Checker> {
        let (queue, jobs) = std::sync::mpsc::sync_channel(QUEUE_DEPTH);
        std::thread::Builder::new()
            .name("toolgate-commit".into())
            .spawn(move || work(jobs, gate, committed))?;
        Ok(Checker { queue })
    }

    /// Decides and durably records one call.
    pub async fn check(&self, call: ToolCall) -> Result<Decision, ApiError> {
        let (reply, answer) = oneshot::channel();
        match self.queue.try_send(Job { call, reply }) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                return Err(ApiError::unavailable(
                    "toolgate is overloaded (too many checks waiting): retry shortly",
                ));
            }
            Err(TrySendError::Disconnected(_)) => {
                return Err(ApiError::unavailable(
                    "toolgate is shutting down: retry shortly",
                ));
            }
        }
        answer
            .await
            .unwrap_or_else(|_| Err(ApiError::internal("the commit worker stopped")))
    }
}

fn work(jobs: Receiver<Job>, gate: Arc<ArcSwap<Gate>>, committed: Arc<Notify>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        let calls: Vec<ToolCall> = batch.iter().map(|j| j.call.clone()).collect();
        let gate = gate.load_full();
        // A panic deciding one call must not take the daemon's only writer
        // down with it: the batch fails, the worker goes on.
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| gate.check_batch(&calls)));
        match result {
            Ok(Ok(decisions)) => {
                for (job, d) in batch.into_iter().zip(decisions) {
                    let _ = job.reply.send(Ok(d));
                }
            }
            Ok(Err(e)) => {
                let e = ApiError::from(e);
                for job in batch {
                    let _ = job.reply.send(Err(e.clone()));
                }
            }
            Err(_) => {
                tracing::error!(calls = calls.len(), "deciding a batch panicked");
                for job in batch {
                    let _ = job.reply.send(Err(ApiError::internal(
                        "toolgate failed deciding this call",
                    )));
                }
            }
        }
        committed.notify_one();
    }
}
