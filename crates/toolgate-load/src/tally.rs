//! What a run measured: the [`Tally`] each worker (or the direct engine)
//! fills and the run merges, and the part of a Decision it reads.
//!
//! A leaf (it imports no other module of the crate): `run` drives the
//! workers and reports, `direct` is the engine `run` may pick instead, and
//! both fill a `Tally`. Kept in `run`, it made `direct` import the module
//! that starts it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// What one run measured. Latencies are in nanoseconds until `run::Report`
/// turns them into microseconds.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Measured requests sent (handed to a connection).
    pub sent: u64,
    /// 2xx answers.
    pub ok: u64,
    /// Non-2xx answers, by status code.
    pub statuses: BTreeMap<u16, u64>,
    /// Requests with no answer within the timeout.
    pub timeouts: u64,
    /// Requests that failed on the connection, by message.
    pub io_errors: BTreeMap<String, u64>,
    /// Measured requests never sent: still queued when the run's deadline
    /// passed, because every connection was busy (the daemon fell behind).
    pub unsent: u64,
    /// The `decision` field of 2xx answers, counted.
    pub decisions: BTreeMap<String, u64>,
    /// Latency of each 2xx answer, from the intended send time.
    pub latency_ns: Vec<u64>,
    /// How late each measured request was handed to a connection: the
    /// pacer's timer lateness plus any wait for a free connection.
    pub send_lag_ns: Vec<u64>,
    /// How late the pacer woke for each measured request (timer lateness
    /// alone: the generator's own error).
    pub timer_lag_ns: Vec<u64>,
    /// The most measured requests that were due at once while every
    /// connection was busy.
    pub max_queued: u64,
    /// The daemon's own `elapsed_us` of each decision.
    pub server_us: Vec<u64>,
    /// The first non-2xx body seen, for the error message.
    pub first_error_body: Option<(u16, String)>,
    /// When the last measured answer (or failure) arrived.
    pub last_done: Option<Instant>,
}

impl Tally {
    /// Records a measured request's answer, `done` being when its last
    /// byte arrived.
    pub(crate) fn answer(&mut self, intended: Instant, done: Instant, status: u16, body: &[u8]) {
        self.last_done = self.last_done.max(Some(done));
        if !(200..300).contains(&status) {
            *self.statuses.entry(status).or_default() += 1;
            if self.first_error_body.is_none() {
                self.first_error_body = Some((status, String::from_utf8_lossy(body).into_owned()));
            }
            return;
        }
        self.ok += 1;
        self.latency_ns
            .push(nanos(done.saturating_duration_since(intended)));
        match serde_json::from_slice::<DecisionView>(body) {
            Ok(DecisionView {
                decision,
                elapsed_us,
            }) => {
                let d = decision.as_deref().unwrap_or("(no decision)");
                match self.decisions.get_mut(d) {
                    Some(n) => *n += 1,
                    None => {
                        self.decisions.insert(d.to_owned(), 1);
                    }
                }
                if let Some(us) = elapsed_us {
                    self.server_us.push(us);
                }
            }
            Err(_) => *self.decisions.entry("(not a Decision)".into()).or_default() += 1,
        }
    }

    /// Records a measured request that got no answer: the connection failed.
    pub(crate) fn failed(&mut self, done: Instant, why: String) {
        self.last_done = self.last_done.max(Some(done));
        *self.io_errors.entry(why).or_default() += 1;
    }

    /// Adds another tally's counts and samples to this one.
    pub(crate) fn merge(&mut self, other: Tally) {
        self.sent += other.sent;
        self.ok += other.ok;
        for (k, v) in other.statuses {
            *self.statuses.entry(k).or_default() += v;
        }
        self.timeouts += other.timeouts;
        for (k, v) in other.io_errors {
            *self.io_errors.entry(k).or_default() += v;
        }
        self.unsent += other.unsent;
        for (k, v) in other.decisions {
            *self.decisions.entry(k).or_default() += v;
        }
        self.latency_ns.extend(other.latency_ns);
        self.send_lag_ns.extend(other.send_lag_ns);
        self.timer_lag_ns.extend(other.timer_lag_ns);
        self.max_queued = self.max_queued.max(other.max_queued);
        self.server_us.extend(other.server_us);
        if self.first_error_body.is_none() {
            self.first_error_body = other.first_error_body;
        }
        self.last_done = self.last_done.max(other.last_done);
    }
}

/// The part of a Decision the generator reads.
#[derive(Deserialize)]
pub(crate) struct DecisionView<'a> {
    /// The verdict, borrowed from the body when it needs no unescaping.
    #[serde(borrow)]
    pub decision: Option<std::borrow::Cow<'a, str>>,
    /// The daemon's own time for the decision.
    pub elapsed_us: Option<u64>,
}

/// A duration in nanoseconds, saturating (a run never lasts 584 years).
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
