//! Counters of the knowledge gate (docs/knowledge.md, "Metrics"): calls intercepted,
//! knowledge injected, held and acknowledged, lookup time and cache hits.
//! In memory, per process; the audit log is the durable record.

use super::Lookup;
use serde::Serialize;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Upper bounds (µs) of the lookup-time histogram buckets; a last bucket
/// holds the rest.
pub const LOOKUP_BUCKETS_US: [u64; 8] = [50, 100, 250, 500, 1000, 2000, 5000, 20000];

/// The counters. Shared by every gate a process builds (policy reloads
/// keep counting).
#[derive(Debug, Default)]
pub struct KnowledgeStats {
    lookups: AtomicU64,
    found: AtomicU64,
    advised: AtomicU64,
    held: AtomicU64,
    acked_retry: AtomicU64,
    acked_explicit: AtomicU64,
    search_hits: AtomicU64,
    search_misses: AtomicU64,
    sop_hits: AtomicU64,
    sop_reads: AtomicU64,
    errors: AtomicU64,
    failed_closed: AtomicU64,
    lookup_us: AtomicU64,
    buckets: [AtomicU64; LOOKUP_BUCKETS_US.len() + 1],
    last_error: Mutex<Option<(i64, String)>>,
}

/// A point-in-time copy of the counters, as `/v1/state` shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KnowledgeSnapshot {
    /// Calls the layer looked up knowledge for.
    pub interceptions: u64,
    /// Lookups that found something.
    pub with_knowledge: u64,
    /// Decisions that carried knowledge to the agent (advised or held).
    pub injections: u64,
    /// Calls held until knowledge was acknowledged.
    pub held: u64,
    /// Acknowledgements by retrying the held call.
    pub acked_by_retry: u64,
    /// Acknowledgements by id (CLI, HTTP, tool).
    pub acked_explicitly: u64,
    /// Acknowledged ÷ held (0 when nothing was held).
    pub ack_rate: f64,
    /// Memory searches answered from the cache.
    pub cache_hits: u64,
    /// Memory searches that went to the store.
    pub cache_misses: u64,
    /// SOP file lookups answered without reading the file.
    pub sop_cache_hits: u64,
    /// SOP files read.
    pub sop_reads: u64,
    /// Lookups where a knowledge source failed.
    pub source_errors: u64,
    /// Calls blocked because a source failed and `fail_open` is false.
    pub failed_closed: u64,
    /// Mean lookup time, µs.
    pub lookup_us_mean: f64,
    /// Lookup-time histogram: counts per bucket of [`LOOKUP_BUCKETS_US`]
    /// (the last holds anything slower).
    pub lookup_us_buckets: Vec<u64>,
    /// The last source failure: when (Unix ms) and what.
    pub last_error: Option<(i64, String)>,
}

impl KnowledgeStats {
    pub(crate) fn looked_up(&self, l: &Lookup) {
        self.lookups.fetch_add(1, Relaxed);
        if !l.found.is_empty() {
            self.found.fetch_add(1, Relaxed);
        }
        self.lookup_us.fetch_add(l.elapsed_us, Relaxed);
        let i = LOOKUP_BUCKETS_US
            .iter()
            .position(|b| l.elapsed_us <= *b)
            .unwrap_or(LOOKUP_BUCKETS_US.len());
        self.buckets[i].fetch_add(1, Relaxed);
    }

    pub(crate) fn search(&self, hit: bool) {
        let c = if hit {
            &self.search_hits
        } else {
            &self.search_misses
        };
        c.fetch_add(1, Relaxed);
    }

    pub(crate) fn sop_read(&self, cached: bool) {
        let c = if cached {
            &self.sop_hits
        } else {
            &self.sop_reads
        };
        c.fetch_add(1, Relaxed);
    }

    /// Counts a decision that showed knowledge without holding the call.
    pub(crate) fn advised(&self) {
        self.advised.fetch_add(1, Relaxed);
    }

    /// Counts a call held for acknowledgement.
    pub(crate) fn held(&self) {
        self.held.fetch_add(1, Relaxed);
    }

    /// Counts an acknowledgement (`retry` or explicit).
    pub fn acked(&self, by_retry: bool) {
        let c = if by_retry {
            &self.acked_retry
        } else {
            &self.acked_explicit
        };
        c.fetch_add(1, Relaxed);
    }

    /// Records a source failure at `now_ms`; `closed` when it blocked.
    pub(crate) fn failed(&self, now_ms: i64, what: &str, closed: bool) {
        self.errors.fetch_add(1, Relaxed);
        if closed {
            self.failed_closed.fetch_add(1, Relaxed);
        }
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((now_ms, what.to_string()));
    }

    /// Notes a failure another process recorded (seen in the audit log) as
    /// the last error, if it is newer; counts nothing (that process did).
    pub fn saw_error(&self, at_ms: i64, what: &str) {
        let mut last = self.last_error.lock().unwrap_or_else(|e| e.into_inner());
        if last.as_ref().is_none_or(|(t, _)| *t < at_ms) {
            *last = Some((at_ms, what.chars().take(1000).collect()));
        }
    }

    /// The counters now.
    pub fn snapshot(&self) -> KnowledgeSnapshot {
        let lookups = self.lookups.load(Relaxed);
        let held = self.held.load(Relaxed);
        let acked = self.acked_retry.load(Relaxed) + self.acked_explicit.load(Relaxed);
        KnowledgeSnapshot {
            interceptions: lookups,
            with_knowledge: self.found.load(Relaxed),
            injections: self.advised.load(Relaxed) + held,
            held,
            acked_by_retry: self.acked_retry.load(Relaxed),
            acked_explicitly: self.acked_explicit.load(Relaxed),
            ack_rate: if held == 0 {
                0.0
            } else {
                (acked as f64 / held as f64).min(1.0)
            },
            cache_hits: self.search_hits.load(Relaxed),
            cache_misses: self.search_misses.load(Relaxed),
            sop_cache_hits: self.sop_hits.load(Relaxed),
            sop_reads: self.sop_reads.load(Relaxed),
            source_errors: self.errors.load(Relaxed),
            failed_closed: self.failed_closed.load(Relaxed),
            lookup_us_mean: if lookups == 0 {
                0.0
            } else {
                self.lookup_us.load(Relaxed) as f64 / lookups as f64
            },
            lookup_us_buckets: self.buckets.iter().map(|b| b.load(Relaxed)).collect(),
            last_error: self
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}
