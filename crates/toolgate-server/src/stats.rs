//! Per-second counts and latency of the daemon's checks, for the control
//! UI's charts: the last ten minutes in one-second buckets.

use serde::Serialize;
use std::collections::VecDeque;
use std::sync::Mutex;
use toolgate_core::Verdict;

/// Seconds of history kept.
pub const HISTORY_SECS: usize = 600;

/// One second of checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// The second (Unix time).
    pub t: i64,
    /// Calls allowed.
    pub allow: u64,
    /// Calls blocked.
    pub block: u64,
    /// Calls escalated.
    pub escalate: u64,
    /// Median latency in microseconds (0 when empty).
    pub p50_us: u64,
    /// 99th percentile latency in microseconds (0 when empty).
    pub p99_us: u64,
}

#[derive(Default)]
struct Inner {
    open: Bucket,
    latencies: Vec<u64>,
    closed: VecDeque<Bucket>,
    totals: [u64; 3],
}

/// The counters. Cheap to update from many handlers at once.
#[derive(Default)]
pub struct Stats {
    inner: Mutex<Inner>,
}

impl Stats {
    /// Counts one check answered at Unix second `t` after `latency_us`.
    pub fn record(&self, t: i64, verdict: Verdict, latency_us: u64) {
        let mut closed_now = Vec::new();
        let mut s = self.lock();
        if s.open.t != t {
            roll(&mut s, t, &mut closed_now);
        }
        let i = index(verdict);
        s.totals[i] += 1;
        match verdict {
            Verdict::Allow => s.open.allow += 1,
            Verdict::Block => s.open.block += 1,
            Verdict::Escalate => s.open.escalate += 1,
        }
        s.latencies.push(latency_us);
    }

    /// Closes every bucket before second `now` and returns them (oldest
    /// first), including empty seconds, so charts show quiet time as zero.
    pub fn tick(&self, now: i64) -> Vec<Bucket> {
        let mut out = Vec::new();
        let mut s = self.lock();
        if s.open.t < now {
            roll(&mut s, now, &mut out);
        }
        out
    }

    /// The closed buckets, oldest first.
    pub fn series(&self) -> Vec<Bucket> {
        self.lock().closed.iter().copied().collect()
    }

    /// Totals since start: allow, block, escalate.
    pub fn totals(&self) -> [u64; 3] {
        self.lock().totals
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn index(v: Verdict) -> usize {
    match v {
        Verdict::Allow => 0,
        Verdict::Block => 1,
        Verdict::Escalate => 2,
    }
}

/// Closes the open bucket (and the empty seconds up to `t`), opening `t`.
fn roll(s: &mut Inner, t: i64, out: &mut Vec<Bucket>) {
    if s.open.t != 0 && s.open.t < t {
        let mut b = s.open;
        let mut l = std::mem::take(&mut s.latencies);
        l.sort_unstable();
        b.p50_us = percentile(&l, 50);
        b.p99_us = percentile(&l, 99);
        push(s, b, out);
        // Empty seconds between the last check and now, capped at the history.
        let gap = (t - b.t - 1).clamp(0, HISTORY_SECS as i64);
        for k in (0..gap).rev() {
            push(
                s,
                Bucket {
                    t: t - 1 - k,
                    ..Bucket::default()
                },
                out,
            );
        }
    }
    s.latencies.clear();
    s.open = Bucket {
        t,
        ..Bucket::default()
    };
}

fn push(s: &mut Inner, b: Bucket, out: &mut Vec<Bucket>) {
    if s.closed.len() == HISTORY_SECS {
        s.closed.pop_front();
    }
    s.closed.push_back(b);
    out.push(b);
}

/// The `p`th percentile of sorted values (nearest rank); 0 when empty.
pub fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50), 50);
        assert_eq!(percentile(&v, 99), 99);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[], 50), 0);
    }

    #[test]
    fn seconds_close_with_counts_and_gaps() {
        let s = Stats::default();
        s.record(100, Verdict::Allow, 10);
        s.record(100, Verdict::Block, 30);
        s.record(100, Verdict::Allow, 20);
        s.record(103, Verdict::Escalate, 5);
        let closed = s.series();
        assert_eq!(closed.len(), 3, "{closed:?}");
        assert_eq!(closed[0].t, 100);
        assert_eq!((closed[0].allow, closed[0].block), (2, 1));
        assert_eq!(closed[0].p50_us, 20);
        assert_eq!(closed[0].p99_us, 30);
        assert_eq!(
            closed[1],
            Bucket {
                t: 101,
                ..Bucket::default()
            }
        );
        assert_eq!(closed[2].t, 102);
        let ticked = s.tick(105);
        assert_eq!(
            ticked.iter().map(|b| b.t).collect::<Vec<_>>(),
            vec![103, 104]
        );
        assert_eq!(ticked[0].escalate, 1);
        assert_eq!(s.totals(), [2, 1, 1]);
    }

    #[test]
    fn history_is_bounded() {
        let s = Stats::default();
        s.record(1, Verdict::Allow, 1);
        s.tick(10_000);
        assert_eq!(s.series().len(), HISTORY_SECS);
    }
}
