//! The open-loop schedule: when each request is meant to be sent.
//!
//! Request `i` is due at `start + offset(i)`, a fixed function of the rate,
//! whatever the daemon does. Latency is measured from that intended time, so
//! a stall that delays later sends is charged to every request it delays
//! (no coordinated omission). The arithmetic is integer (rate in milli-requests
//! per second, offsets in nanoseconds), so the schedule never drifts.
//!
//! [`Pacer`] releases due requests from a dedicated OS thread. It sleeps with
//! `clock_nanosleep` (microsecond precision) rather than a tokio timer, whose
//! wheel rounds every deadline up to the next millisecond: that rounding alone
//! would add up to a millisecond of "latency" against a 1 ms bar.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

const NANOS_PER_SEC_MILLI: u128 = 1_000_000_000_000; // ns per second × 1000

/// A fixed request rate and the intended send offsets it implies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Schedule {
    /// The rate in thousandths of a request per second (5000 req/s = 5_000_000).
    rate_milli: u64,
}

impl Schedule {
    /// A schedule at `rate` requests per second. The rate must be positive,
    /// finite and at most ten million per second.
    pub(crate) fn new(rate: f64) -> anyhow::Result<Self> {
        anyhow::ensure!(
            rate.is_finite() && rate > 0.0 && rate <= 10_000_000.0,
            "--rate must be a number of requests per second between 0.001 and 10000000, not {rate}"
        );
        let rate_milli = (rate * 1000.0).round() as u64;
        anyhow::ensure!(
            rate_milli > 0,
            "--rate {rate} is below 0.001 requests per second"
        );
        Ok(Self { rate_milli })
    }

    /// The rate in requests per second.
    pub(crate) fn rate(&self) -> f64 {
        self.rate_milli as f64 / 1000.0
    }

    /// When request `i` is due, in nanoseconds after the start.
    pub(crate) fn offset_ns(&self, i: u64) -> u64 {
        let ns = u128::from(i) * NANOS_PER_SEC_MILLI / u128::from(self.rate_milli);
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    /// How many requests are due `elapsed_ns` after the start: the number of
    /// `i` with `offset_ns(i) <= elapsed_ns` (request 0 is due at once).
    pub(crate) fn due(&self, elapsed_ns: u64) -> u64 {
        // offset(i) = floor(i·K/r) ≤ e  ⇔  i·K < (e+1)·r  ⇔  i < ceil((e+1)·r / K)
        let bound = (u128::from(elapsed_ns) + 1) * u128::from(self.rate_milli);
        let count = bound.div_ceil(NANOS_PER_SEC_MILLI);
        u64::try_from(count).unwrap_or(u64::MAX)
    }

    /// How many requests are due strictly before `span` has elapsed: the
    /// number of requests a phase of that length sends.
    pub(crate) fn count_before(&self, span: Duration) -> u64 {
        let ns = u64::try_from(span.as_nanos()).unwrap_or(u64::MAX);
        if ns == 0 { 0 } else { self.due(ns - 1) }
    }
}

/// One request the pacer has released: its index and intended send time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job {
    /// The request's position in the schedule, from 0.
    pub index: u64,
    /// When the request was meant to be sent.
    pub intended: Instant,
}

/// The thread that releases requests at their intended times.
pub(crate) struct Pacer {
    /// Ends with how late the thread woke for each measured request.
    handle: std::thread::JoinHandle<Vec<u64>>,
    stop: Arc<AtomicBool>,
}

impl Pacer {
    /// Starts releasing requests `0..total` of `schedule`, measured from
    /// `start`, into `tx`. Each request is released as soon as it is due
    /// (several at once if the thread woke late); the queue is unbounded, so
    /// a slow daemon never holds the pacer back. Requests from `warmup_n` on
    /// are measured: the thread keeps how late it released each.
    pub(crate) fn spawn(
        schedule: Schedule,
        start: Instant,
        warmup_n: u64,
        total: u64,
        tx: UnboundedSender<Job>,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("toolgate-load-pacer".into())
            .spawn(move || {
                tighten_timer_slack();
                let mut lags = Vec::new();
                let mut released = 0u64;
                while released < total && !stop_flag.load(Ordering::Relaxed) {
                    let elapsed = nanos_since(start);
                    let due = schedule.due(elapsed).min(total);
                    while released < due {
                        let offset = schedule.offset_ns(released);
                        let intended = start + Duration::from_nanos(offset);
                        if released >= warmup_n {
                            lags.push(elapsed.saturating_sub(offset));
                        }
                        if tx
                            .send(Job {
                                index: released,
                                intended,
                            })
                            .is_err()
                        {
                            return lags; // the workers are gone
                        }
                        released += 1;
                    }
                    if released < total {
                        precise_sleep_until(
                            start + Duration::from_nanos(schedule.offset_ns(released)),
                        );
                    }
                }
                lags
            })
            .expect("spawn the pacer thread");
        Self { handle, stop }
    }

    /// Stops releasing requests, waits for the thread to end, and returns
    /// how late it woke for each measured request (ns).
    pub(crate) fn stop(self) -> Vec<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

fn nanos_since(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Sleeps the current thread until `at` (no-op if it has passed), with the
/// OS timer's precision: tens of microseconds, not tokio's millisecond.
pub(crate) fn precise_sleep_until(at: Instant) {
    let now = Instant::now();
    if at > now {
        std::thread::sleep(at - now);
    }
}

/// Linux delays a sleeping thread's wake-up by up to its timer slack (50 µs by
/// default) to batch wake-ups. For the pacer that is pure send lag, so it asks
/// for 1 ns through `/proc/<tid>/timerslack_ns`; best effort, elsewhere a no-op.
pub(crate) fn tighten_timer_slack() {
    let Ok(link) = std::fs::read_link("/proc/thread-self") else {
        return;
    };
    if let Some(tid) = link.file_name() {
        let path = std::path::Path::new("/proc")
            .join(tid)
            .join("timerslack_ns");
        let _ = std::fs::write(path, "1");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_evenly_spaced_without_drift() {
        let s = Schedule::new(5000.0).unwrap();
        assert_eq!(s.offset_ns(0), 0);
        assert_eq!(s.offset_ns(1), 200_000);
        assert_eq!(s.offset_ns(5000), 1_000_000_000);
        assert_eq!(s.offset_ns(50_000), 10_000_000_000);
        // A rate whose interval is not a whole number of nanoseconds.
        let s = Schedule::new(3.0).unwrap();
        assert_eq!(s.offset_ns(1), 333_333_333);
        assert_eq!(s.offset_ns(3), 1_000_000_000);
        assert_eq!(s.offset_ns(3_000_000), 1_000_000_000_000_000);
    }

    #[test]
    fn due_is_the_inverse_of_offset() {
        for rate in [
            0.5,
            1.0,
            3.0,
            7.0,
            999.9,
            1000.0,
            5000.0,
            33_333.0,
            1_000_000.0,
        ] {
            let s = Schedule::new(rate).unwrap();
            for i in 0..2000u64 {
                let at = s.offset_ns(i);
                assert_eq!(
                    s.due(at),
                    i + 1,
                    "rate {rate}, request {i} due at its offset"
                );
                if i > 0 && at > s.offset_ns(i - 1) {
                    assert_eq!(
                        s.due(at - 1),
                        i,
                        "rate {rate}, request {i} not due just before"
                    );
                }
            }
        }
    }

    #[test]
    fn a_phase_sends_rate_times_length_requests() {
        let s = Schedule::new(5000.0).unwrap();
        assert_eq!(s.count_before(Duration::from_secs(10)), 50_000);
        assert_eq!(s.count_before(Duration::from_secs(2)), 10_000);
        assert_eq!(
            s.count_before(Duration::from_secs(12)) - s.count_before(Duration::from_secs(2)),
            50_000
        );
        assert_eq!(s.count_before(Duration::ZERO), 0);
        let s = Schedule::new(3.0).unwrap();
        assert_eq!(s.count_before(Duration::from_secs(1)), 3);
        assert_eq!(s.count_before(Duration::from_millis(1001)), 4);
        let s = Schedule::new(0.5).unwrap();
        assert_eq!(s.count_before(Duration::from_secs(10)), 5);
    }

    #[test]
    fn the_rate_must_be_sane() {
        assert!(Schedule::new(0.0).is_err());
        assert!(Schedule::new(-5.0).is_err());
        assert!(Schedule::new(f64::NAN).is_err());
        assert!(Schedule::new(f64::INFINITY).is_err());
        assert!(Schedule::new(0.0001).is_err());
        assert_eq!(Schedule::new(1234.5).unwrap().rate(), 1234.5);
    }

    #[test]
    fn the_pacer_releases_every_request_in_order_near_its_time() {
        let s = Schedule::new(20_000.0).unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let start = Instant::now();
        let pacer = Pacer::spawn(s, start, 500, 2000, tx);
        for i in 0..2000u64 {
            let job = rx.blocking_recv().expect("a job");
            let now = Instant::now();
            assert_eq!(job.index, i);
            assert_eq!(job.intended, start + Duration::from_nanos(s.offset_ns(i)));
            assert!(now >= job.intended, "released before its time");
        }
        pacer.stop();
        assert!(
            rx.blocking_recv().is_none(),
            "nothing after the last request"
        );
        // 2000 requests at 20k/s take 100 ms; no wall-clock bar, only sanity.
        assert!(start.elapsed() >= Duration::from_nanos(s.offset_ns(1999)));
    }
}
