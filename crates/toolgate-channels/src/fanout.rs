//! Fan-out: one notice to every target at once, each retried on its own
//! schedule so a dead or slow target never holds up the others, and every
//! attempt reported so the daemon can show per-target delivery status.

use crate::channel::{Channel, Delivered, DeliveryError};
use crate::crypto::random_below_or_eq;
use crate::notice::{Notice, Resolution};
use serde::Serialize;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;

/// How hard to try one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included; 0 is read as 1.
    pub attempts: u32,
    /// The wait after the first failure; it doubles after each one.
    pub first_delay: Duration,
    /// The longest wait between tries. A service asking (429
    /// Retry-After) for longer than this is not retried: the target is
    /// reported failed rather than held past what the policy allows.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 5 tries, waiting about 1 s, 2 s, 4 s and 8 s between them, at most
    /// 60 s: a minute or so of trying, well within an approval's life.
    fn default() -> Self {
        RetryPolicy {
            attempts: 5,
            first_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed try number `attempt` (1-based): exponential
    /// backoff with "equal jitter" (half fixed, half random, so targets
    /// that failed together do not retry in lockstep), raised to the
    /// service's `retry_after` when it asked for longer. `None` when the
    /// service asked for more than `max_delay`.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Option<Duration> {
        let exp = attempt.saturating_sub(1).min(31);
        let base = self
            .first_delay
            .saturating_mul(1u32 << exp)
            .min(self.max_delay);
        let half = base / 2;
        let jitter = Duration::from_nanos(random_below_or_eq(
            u64::try_from(half.as_nanos()).unwrap_or(u64::MAX),
        ));
        let wait = half + jitter;
        match retry_after {
            Some(asked) if asked > self.max_delay => None,
            Some(asked) => Some(wait.max(asked)),
            None => Some(wait),
        }
    }
}

/// Which message a status is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Delivering the approval request.
    Request,
    /// Updating it with the outcome.
    Resolution,
}

/// Where one target's delivery stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum DeliveryState {
    /// Not tried yet.
    Pending,
    /// Done; for a request, store this to update the message later (for a
    /// resolution it is the record that was updated).
    Delivered(Delivered),
    /// Try `attempt` failed with a retryable error; the next is in
    /// `next_in_ms`.
    Retrying {
        /// The try that failed, 1-based.
        attempt: u32,
        /// Milliseconds until the next try.
        next_in_ms: u64,
        /// What went wrong, safe to show.
        error: String,
    },
    /// Given up: a permanent error, or retries exhausted.
    Failed {
        /// What went wrong and what to do, safe to show.
        error: String,
    },
}

/// One report about one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetStatus {
    /// The adapter's [`Channel::kind`].
    pub kind: &'static str,
    /// The adapter's [`Channel::target`].
    pub target: String,
    /// Request or resolution.
    pub phase: Phase,
    /// Where it stands.
    pub state: DeliveryState,
    /// Tries made so far.
    pub attempts: u32,
}

type Report = Arc<dyn Fn(TargetStatus) + Send + Sync>;

/// Delivers `notice` to every target concurrently. `report` is called with
/// `Pending` for each target first, then after every try; it must be quick
/// (it runs on the delivery tasks). Returns each target's final status, in
/// the order of `targets`, once all are delivered or failed. Dropping the
/// returned future cancels the tries still under way. Needs a tokio
/// runtime with time enabled.
pub async fn fan_out(
    targets: &[Arc<dyn Channel>],
    notice: &Notice,
    retry: RetryPolicy,
    report: impl Fn(TargetStatus) + Send + Sync + 'static,
) -> Vec<TargetStatus> {
    let notice = Arc::new(notice.clone());
    let jobs = targets.iter().map(|channel| {
        let label = targets_label(&**channel);
        let (channel, notice) = (channel.clone(), notice.clone());
        let op = move || {
            let (channel, notice) = (channel.clone(), notice.clone());
            async move { channel.deliver(&notice).await }
        };
        (label, op)
    });
    run_all(jobs.collect(), Phase::Request, retry, Arc::new(report)).await
}

/// Updates every delivered message with `resolution`, concurrently and
/// with the same retries and reports as [`fan_out`]. `deliveries` pairs
/// each channel with the [`Delivered`] its request produced.
pub async fn fan_out_resolved(
    deliveries: &[(Arc<dyn Channel>, Delivered)],
    notice: &Notice,
    resolution: &Resolution,
    retry: RetryPolicy,
    report: impl Fn(TargetStatus) + Send + Sync + 'static,
) -> Vec<TargetStatus> {
    let shared = Arc::new((notice.clone(), resolution.clone()));
    let jobs = deliveries.iter().map(|(channel, delivered)| {
        let (channel, delivered, shared) = (channel.clone(), delivered.clone(), shared.clone());
        let label = targets_label(&*channel);
        let op = move || {
            let (channel, delivered, shared) = (channel.clone(), delivered.clone(), shared.clone());
            async move {
                let (notice, resolution) = &*shared;
                channel.resolved(&delivered, notice, resolution).await?;
                Ok(delivered)
            }
        };
        (label, op)
    });
    run_all(jobs.collect(), Phase::Resolution, retry, Arc::new(report)).await
}

fn targets_label(channel: &dyn Channel) -> (&'static str, String) {
    (channel.kind(), channel.target())
}

async fn run_all<F, Fut>(
    jobs: Vec<((&'static str, String), F)>,
    phase: Phase,
    retry: RetryPolicy,
    report: Report,
) -> Vec<TargetStatus>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = Result<Delivered, DeliveryError>> + Send + 'static,
{
    let status = move |(kind, target): &(&'static str, String), state, attempts| TargetStatus {
        kind,
        target: target.clone(),
        phase,
        state,
        attempts,
    };
    let mut finals: Vec<TargetStatus> = jobs
        .iter()
        .map(|(label, _)| status(label, DeliveryState::Pending, 0))
        .collect();
    for pending in &finals {
        report(pending.clone());
    }
    // One task per target, so one target's waits and timeouts never delay
    // another's tries; the set aborts them all if this future is dropped.
    let mut tasks = JoinSet::new();
    let mut ids = std::collections::HashMap::new();
    for (index, (label, op)) in jobs.into_iter().enumerate() {
        let report = report.clone();
        let handle = tasks.spawn(async move {
            let mut attempts = 0;
            let max = retry.attempts.max(1);
            loop {
                attempts += 1;
                let (state, done) = match op().await {
                    Ok(delivered) => (DeliveryState::Delivered(delivered), true),
                    Err(e) => next_step(&e, attempts, max, &retry),
                };
                let now = status(&label, state, attempts);
                report(now.clone());
                if done {
                    return now;
                }
                if let DeliveryState::Retrying { next_in_ms, .. } = now.state {
                    tokio::time::sleep(Duration::from_millis(next_in_ms)).await;
                }
            }
        });
        ids.insert(handle.id(), index);
    }
    while let Some(joined) = tasks.join_next_with_id().await {
        match joined {
            Ok((id, last)) => finals[ids[&id]] = last,
            // An adapter panicked: its target failed, the others go on.
            Err(e) => {
                let slot = &mut finals[ids[&e.id()]];
                slot.state = DeliveryState::Failed {
                    error: format!("the adapter stopped unexpectedly ({e}); see the logs"),
                };
                report(slot.clone());
            }
        }
    }
    finals
}

/// After a failed try: retry (and when) or give up.
fn next_step(
    e: &DeliveryError,
    attempt: u32,
    max: u32,
    retry: &RetryPolicy,
) -> (DeliveryState, bool) {
    if !e.is_retryable() {
        return (
            DeliveryState::Failed {
                error: e.to_string(),
            },
            true,
        );
    }
    if attempt >= max {
        let error = format!("{e} (gave up after {attempt} tries)");
        return (DeliveryState::Failed { error }, true);
    }
    match retry.delay(attempt, e.retry_after()) {
        Some(wait) => (
            DeliveryState::Retrying {
                attempt,
                next_in_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                error: e.to_string(),
            },
            false,
        ),
        None => {
            let error = format!(
                "{e} (that is longer than the retry policy's {} ms limit, so it is not retried)",
                retry.max_delay.as_millis()
            );
            (DeliveryState::Failed { error }, true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_with_jitter_and_cap() {
        let p = RetryPolicy {
            attempts: 10,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        for _ in 0..50 {
            let d1 = p.delay(1, None).unwrap();
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d3 = p.delay(3, None).unwrap();
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400));
            let d9 = p.delay(9, None).unwrap();
            assert!(d9 >= Duration::from_millis(500) && d9 <= Duration::from_millis(1000));
        }
        assert!(p.delay(40, None).unwrap() <= Duration::from_millis(1000));
    }

    #[test]
    fn retry_after_raises_the_wait_or_ends_the_tries() {
        let p = RetryPolicy {
            attempts: 3,
            first_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(5),
        };
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(p.delay(1, Some(Duration::from_secs(6))), None);
    }
}
