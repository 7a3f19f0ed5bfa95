//! Per-second counts of the decisions the audit log records, and the
//! latency of this daemon's own checks, for the control UI's tiles and
//! charts: totals over the whole log and the last ten minutes in one-second
//! buckets.
//!
//! The counts come from the store, not from this process: the audit tail
//! counts every decision any process records (an in-process hook, a CLI
//! check, another replica), and a starting daemon begins from the counts
//! the log already holds (`seed`), so the numbers agree with the feed and
//! survive restarts. Latency is only known for the checks this daemon
//! answered itself.

use serde::Serialize;
use std::collections::VecDeque;
use std::sync::Mutex;

/// Seconds of history kept.
pub const HISTORY_SECS: usize = 600;

/// What a recorded decision came to, as a person reads it: a knowledge
/// hold (the agent must read what it was shown and retry) is a `block`
/// on the wire but is neither a refusal nor an escalation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Allowed.
    Allow,
    /// Held by the knowledge layer until acknowledged.
    Hold,
    /// Escalated to a person.
    Escalate,
    /// Blocked.
    Block,
}

impl Outcome {
    /// The outcome of a decision entry's `decision` and `layer` fields;
    /// `None` for a decision this version does not know.
    pub fn of(decision: &str, layer: &str) -> Option<Outcome> {
        match decision {
            "allow" => Some(Outcome::Allow),
            "escalate" => Some(Outcome::Escalate),
            "block" if layer == "knowledge" => Some(Outcome::Hold),
            "block" => Some(Outcome::Block),
            _ => None,
        }
    }

    /// The outcome of a decision entry's `data` (its `decision` and
    /// `layer` fields).
    pub fn of_data(data: &serde_json::Value) -> Option<Outcome> {
        let field = |k: &str| data.get(k).and_then(|v| v.as_str()).unwrap_or("");
        Outcome::of(field("decision"), field("layer"))
    }

    /// The outcome of an audit entry, and its `data`, when it is a decision.
    pub fn of_entry(entry: &serde_json::Value) -> Option<(Outcome, &serde_json::Value)> {
        if entry.get("kind").and_then(|k| k.as_str()) != Some("decision") {
            return None;
        }
        let data = entry.get("data")?;
        Some((Outcome::of_data(data)?, data))
    }
}

/// Decisions counted, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Allowed.
    pub allow: u64,
    /// Held by the knowledge layer.
    pub hold: u64,
    /// Escalated.
    pub escalate: u64,
    /// Blocked (holds not included).
    pub block: u64,
}

impl Totals {
    /// Adds `n` decisions of `outcome`.
    pub fn add(&mut self, outcome: Outcome, n: u64) {
        let slot = match outcome {
            Outcome::Allow => &mut self.allow,
            Outcome::Hold => &mut self.hold,
            Outcome::Escalate => &mut self.escalate,
            Outcome::Block => &mut self.block,
        };
        *slot = slot.saturating_add(n);
    }
}

/// One second of decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Bucket {
    /// The second (Unix time).
    pub t: i64,
    /// Calls allowed.
    pub allow: u64,
    /// Calls held by the knowledge layer.
    pub hold: u64,
    /// Calls blocked (holds not included).
    pub block: u64,
    /// Calls escalated.
    pub escalate: u64,
    /// Median latency of this daemon's checks in microseconds (0 when it
    /// answered none).
    pub p50_us: u64,
    /// 99th percentile of the same (0 when none).
    pub p99_us: u64,
}

#[derive(Default)]
struct Inner {
    open: Bucket,
    latencies: Vec<u64>,
    closed: VecDeque<Bucket>,
    totals: Totals,
}

/// The counters. Cheap to update from many handlers at once.
#[derive(Default)]
pub struct Stats {
    inner: Mutex<Inner>,
}

impl Stats {
    /// Starts the counts from what the log held when the daemon started:
    /// `totals` over the whole log, and `recent` (second, outcome) for the
    /// decisions of the last [`HISTORY_SECS`] before `now`, in any order.
    /// Decisions counted before this are kept.
    pub fn seed(&self, totals: Totals, recent: &[(i64, Outcome)], now: i64) {
        let mut s = self.lock();
        let t = &mut s.totals;
        for (o, n) in [
            (Outcome::Allow, totals.allow),
            (Outcome::Hold, totals.hold),
            (Outcome::Escalate, totals.escalate),
            (Outcome::Block, totals.block),
        ] {
            t.add(o, n);
        }
        if s.open.t < now {
            roll(&mut s, now, &mut Vec::new());
        }
        let first = now - HISTORY_SECS as i64;
        let mut seconds: Vec<Bucket> = Vec::new();
        let mut sorted: Vec<(i64, Outcome)> = recent
            .iter()
            .copied()
            .filter(|(t, _)| (first..=now).contains(t))
            .collect();
        sorted.sort_unstable_by_key(|(t, _)| *t);
        for (t, o) in sorted {
            if t == s.open.t {
                bump(&mut s.open, o);
                continue;
            }
            if seconds.last().is_none_or(|b| b.t != t) {
                seconds.push(Bucket {
                    t,
                    ..Bucket::default()
                });
            }
            if let Some(b) = seconds.last_mut() {
                bump(b, o);
            }
        }
        // The same decisions the daemon counted live are not in `recent`
        // (those are after the head it was seeded to), so a second both
        // hold is the sum of the two.
        let mut merged: Vec<Bucket> = s.closed.iter().copied().collect();
        for b in seconds {
            match merged.iter_mut().find(|m| m.t == b.t) {
                Some(m) => {
                    m.allow += b.allow;
                    m.hold += b.hold;
                    m.escalate += b.escalate;
                    m.block += b.block;
                }
                None => merged.push(b),
            }
        }
        merged.sort_unstable_by_key(|b| b.t);
        let skip = merged.len().saturating_sub(HISTORY_SECS);
        s.closed = merged.into_iter().skip(skip).collect();
    }

    /// Counts one decision the audit log recorded, seen at Unix second `t`.
    pub fn count(&self, t: i64, outcome: Outcome) {
        let mut s = self.lock();
        if s.open.t < t {
            roll(&mut s, t, &mut Vec::new());
        }
        s.totals.add(outcome, 1);
        bump(&mut s.open, outcome);
    }

    /// Records the latency of one check this daemon answered at Unix second `t`.
    pub fn latency(&self, t: i64, latency_us: u64) {
        let mut s = self.lock();
        if s.open.t < t {
            roll(&mut s, t, &mut Vec::new());
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

    /// Totals over the whole audit log (as seeded, plus what was counted since).
    pub fn totals(&self) -> Totals {
        self.lock().totals
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn bump(b: &mut Bucket, outcome: Outcome) {
    let slot = match outcome {
        Outcome::Allow => &mut b.allow,
        Outcome::Hold => &mut b.hold,
        Outcome::Escalate => &mut b.escalate,
        Outcome::Block => &mut b.block,
    };
    *slot += 1;
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
    fn a_knowledge_block_is_a_hold() {
        assert_eq!(Outcome::of("block", "knowledge"), Some(Outcome::Hold));
        assert_eq!(Outcome::of("block", "exec"), Some(Outcome::Block));
        assert_eq!(
            Outcome::of("escalate", "knowledge"),
            Some(Outcome::Escalate)
        );
        assert_eq!(Outcome::of("maybe", ""), None);
    }

    #[test]
    fn seconds_close_with_counts_and_gaps() {
        let s = Stats::default();
        s.count(100, Outcome::Allow);
        s.latency(100, 10);
        s.count(100, Outcome::Block);
        s.latency(100, 30);
        s.count(100, Outcome::Allow);
        s.latency(100, 20);
        s.count(103, Outcome::Escalate);
        s.count(103, Outcome::Hold);
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
        assert_eq!((ticked[0].escalate, ticked[0].hold), (1, 1));
        assert_eq!(
            s.totals(),
            Totals {
                allow: 2,
                hold: 1,
                escalate: 1,
                block: 1
            }
        );
    }

    #[test]
    fn a_seed_adds_the_log_to_what_was_counted_live() {
        let s = Stats::default();
        s.count(1_000, Outcome::Allow);
        s.tick(1_001);
        let totals = Totals {
            allow: 5,
            hold: 0,
            escalate: 2,
            block: 1,
        };
        // One decision too old for the chart, two in it, one this second,
        // one in the future.
        let recent = [
            (100, Outcome::Block),
            (990, Outcome::Escalate),
            (990, Outcome::Escalate),
            (1_000, Outcome::Hold),
            (1_001, Outcome::Allow),
            (2_000, Outcome::Allow),
        ];
        s.seed(totals, &recent, 1_001);
        assert_eq!(s.totals().allow, 6);
        assert_eq!(s.totals().escalate, 2);
        s.tick(1_002);
        let series = s.series();
        let at = |t: i64| series.iter().find(|b| b.t == t).copied();
        assert_eq!(at(990).map(|b| b.escalate), Some(2));
        assert_eq!(at(1_000).map(|b| (b.allow, b.hold)), Some((1, 1)));
        assert_eq!(at(1_001).map(|b| b.allow), Some(1));
        assert!(at(100).is_none() && at(2_000).is_none());
        assert!(series.windows(2).all(|w| w[0].t < w[1].t), "{series:?}");
    }

    #[test]
    fn history_is_bounded() {
        let s = Stats::default();
        s.count(1, Outcome::Allow);
        s.tick(10_000);
        assert_eq!(s.series().len(), HISTORY_SECS);
    }
}
