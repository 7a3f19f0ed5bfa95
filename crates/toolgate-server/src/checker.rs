//! Checks in two halves. The engine's judgement is CPU work with no lock:
//! it runs on the blocking pool, at most a few at a time (so one agent
//! sending huge commands uses its share of the CPU, not the writer). The
//! record is I/O under the store's write lock: one `toolgate-commit` thread
//! takes every judged call waiting (up to [`MAX_BATCH`]) and records them
//! in one transaction, so under load one fsync covers many calls; idle, a
//! batch is a single call and waits for nothing.

use crate::error::ApiError;
use arc_swap::ArcSwap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, oneshot};
use toolgate_core::{Decision, ToolCall};
use toolgate_gate::{Gate, Judged};

/// Most calls recorded in one transaction.
pub const MAX_BATCH: usize = 256;

/// Judged calls that may wait for the writer before new ones are turned
/// away (503).
pub const QUEUE_DEPTH: usize = 8192;

/// How long a call may wait for a judging slot before it is turned away
/// (503): long enough to ride out a burst, short enough that a hook gets a
/// real answer before its own deadline.
pub const JUDGE_WAIT: Duration = Duration::from_secs(5);

/// Calls whose strings add up to at most this are judged inline.
pub const INLINE_JUDGE_BYTES: usize = 512;

/// The bytes of text in a call's params (keys and string values), stopping
/// once past the inline limit.
fn call_size(call: &ToolCall) -> usize {
    fn walk(v: &serde_json::Value, total: &mut usize) {
        if *total > INLINE_JUDGE_BYTES {
            return;
        }
        // Every value counts at least its own punctuation, so a body of
        // empty arrays is not "small".
        *total += 2;
        match v {
            serde_json::Value::String(s) => *total += s.len(),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, total)),
            serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| {
                *total += k.len();
                walk(x, total)
            }),
            _ => *total += 6,
        }
    }
    let mut total = call.tool.len();
    call.params.iter().for_each(|(k, v)| {
        total += k.len();
        walk(v, &mut total)
    });
    total
}

struct Job {
    gate: Arc<Gate>,
    judged: Judged,
    reply: oneshot::Sender<Result<Decision, ApiError>>,
}

/// The handle handlers use to have calls decided.
#[derive(Clone)]
pub struct Checker {
    gate: Arc<ArcSwap<Gate>>,
    judging: Arc<Semaphore>,
    queue: SyncSender<Job>,
}

impl Checker {
    /// Starts the writer thread. Each call is judged and recorded by the
    /// gate `gate` holds when it arrives (a reload applies to later calls),
    /// and `committed` is woken after each commit.
    pub fn start(gate: Arc<ArcSwap<Gate>>, committed: Arc<Notify>) -> std::io::Result<Checker> {
        let (queue, jobs) = std::sync::mpsc::sync_channel(QUEUE_DEPTH);
        std::thread::Builder::new()
            .name("toolgate-commit".into())
            .spawn(move || work(jobs, committed))?;
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Ok(Checker {
            gate,
            judging: Arc::new(Semaphore::new(cores * 2)),
            queue,
        })
    }

    /// Decides and durably records one call.
    pub async fn check(&self, call: ToolCall) -> Result<Decision, ApiError> {
        let overloaded = || {
            ApiError::unavailable("toolgate is overloaded (too many checks waiting): retry shortly")
        };
        let gate = self.gate.load_full();
        // Small calls are judged right here: a few microseconds, less than
        // handing them to another thread. Big ones (long commands, many
        // arguments) take a bounded slot on the blocking pool.
        let judged = if call_size(&call) <= INLINE_JUDGE_BYTES {
            gate.judge(call)
        } else {
            let permit = tokio::time::timeout(JUDGE_WAIT, self.judging.clone().acquire_owned())
                .await
                .map_err(|_| overloaded())?
                .map_err(|_| ApiError::unavailable("toolgate is shutting down: retry shortly"))?;
            let judge_gate = gate.clone();
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                judge_gate.judge(call)
            })
            .await
            .map_err(|_| ApiError::internal("toolgate failed judging this call"))?
        };
        let (reply, answer) = oneshot::channel();
        match self.queue.try_send(Job {
            gate,
            judged,
            reply,
        }) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(overloaded()),
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

fn work(jobs: Receiver<Job>, committed: Arc<Notify>) {
    let mut pending: Option<Job> = None;
    loop {
        let first = match pending.take() {
            Some(j) => j,
            None => match jobs.recv() {
                Ok(j) => j,
                Err(_) => return,
            },
        };
        // One batch: calls judged by the same gate, still awaited by
        // someone (a caller that gave up gets no answer, so the call cannot
        // run, and recording it would only claim it was answered).
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(j) if Arc::ptr_eq(&j.gate, &batch[0].gate) => batch.push(j),
                Ok(j) => {
                    pending = Some(j);
                    break;
                }
                Err(_) => break,
            }
        }
        batch.retain(|j| !j.reply.is_closed());
        if batch.is_empty() {
            continue;
        }
        record(batch);
        committed.notify_one();
    }
}

fn record(batch: Vec<Job>) {
    let gate = batch[0].gate.clone();
    let (judged, replies): (Vec<Judged>, Vec<_>) =
        batch.into_iter().map(|j| (j.judged, j.reply)).unzip();
    match record_guarded(&gate, &judged) {
        Ok(decisions) => answer(replies, decisions),
        // One bad call must not fail its neighbours: record each alone.
        Err(_) if judged.len() > 1 => {
            for (j, reply) in judged.into_iter().zip(replies) {
                match record_guarded(&gate, std::slice::from_ref(&j)) {
                    Ok(d) => answer(vec![reply], d),
                    Err(e) => {
                        let _ = reply.send(Err(e));
                    }
                }
            }
        }
        Err(e) => {
            for reply in replies {
                let _ = reply.send(Err(e.clone()));
            }
        }
    }
}

/// Records a batch; a panic becomes an error, so the daemon's only writer
/// goes on.
fn record_guarded(gate: &Gate, judged: &[Judged]) -> Result<Vec<Decision>, ApiError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| gate.record_batch(judged))) {
        Ok(Ok(d)) => Ok(d),
        Ok(Err(e)) => Err(ApiError::from(e)),
        Err(_) => {
            tracing::error!(calls = judged.len(), "recording a batch panicked");
            Err(ApiError::internal("toolgate failed recording this call"))
        }
    }
}

fn answer(replies: Vec<oneshot::Sender<Result<Decision, ApiError>>>, decisions: Vec<Decision>) {
    for (reply, d) in replies.into_iter().zip(decisions) {
        let consumed = d.layer == toolgate_core::Layer::Approval
            && d.decision == toolgate_core::Verdict::Allow;
        if let Err(Ok(d)) = reply.send(Ok(d))
            && consumed
        {
            // The caller gave up after the approval was used: the call will
            // not run, and the operator should know why it is gone.
            tracing::warn!(
                audit_seq = d.audit_seq,
                "an approval was used by a call whose caller had already gone; it must be asked again"
            );
        }
    }
}
