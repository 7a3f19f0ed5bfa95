//! Replay refusal: every verified callback and every signed link is used
//! at most once. A signature proves who sent a request, not that it is the
//! first time it arrives; an attacker who captured one could send it again.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// Remembers which one-time keys were used.
pub trait ReplayGuard: Send + Sync {
    /// Records `key` and returns `true` if it was not seen before; returns
    /// `false` for a key already recorded (a replay), and whenever it
    /// cannot tell, which callers treat as a replay. The key must be
    /// remembered at least until `keep_until_secs` (Unix seconds), after
    /// which the callback's own freshness check refuses it anyway.
    fn first_use(&self, key: &str, keep_until_secs: i64) -> bool;
}

/// How many keys [`MemoryReplayGuard::default`] holds.
pub const DEFAULT_REPLAY_CAPACITY: usize = 100_000;

/// An in-memory [`ReplayGuard`] with a bound on how many keys it holds.
///
/// Expired keys are dropped as new ones arrive. When it is full of keys
/// that have not expired it refuses new ones (fails closed) rather than
/// forgetting one that could then be replayed; only verified callbacks
/// reach it, so filling it takes that many genuine requests. It forgets
/// everything on restart: use a durable guard where that matters.
pub struct MemoryReplayGuard {
    capacity: usize,
    clock: Clock,
    state: Mutex<State>,
}

type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

#[derive(Default)]
struct State {
    keys: HashMap<String, i64>,
    /// Expiry order, soonest first, for dropping expired keys cheaply.
    by_expiry: BinaryHeap<Reverse<(i64, String)>>,
}

impl Default for MemoryReplayGuard {
    fn default() -> Self {
        MemoryReplayGuard::new(DEFAULT_REPLAY_CAPACITY)
    }
}

impl MemoryReplayGuard {
    /// A guard holding at most `capacity` unexpired keys, on the system
    /// clock.
    pub fn new(capacity: usize) -> MemoryReplayGuard {
        MemoryReplayGuard::with_clock(capacity, Arc::new(now_secs))
    }

    /// A guard on a clock of the caller's (Unix seconds), for tests.
    pub fn with_clock(
        capacity: usize,
        clock: Arc<dyn Fn() -> i64 + Send + Sync>,
    ) -> MemoryReplayGuard {
        MemoryReplayGuard {
            capacity,
            clock,
            state: Mutex::new(State::default()),
        }
    }

    /// How many keys it holds now, expired ones not yet dropped included.
    pub fn len(&self) -> usize {
        self.lock().keys.len()
    }

    /// Whether it holds no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map half-updated
        // in a way that admits a replay, so a poisoned lock is still used.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ReplayGuard for MemoryReplayGuard {
    fn first_use(&self, key: &str, keep_until_secs: i64) -> bool {
        let now = (self.clock)();
        let mut state = self.lock();
        if state.keys.contains_key(key) {
            return false;
        }
        while let Some(Reverse((until, _))) = state.by_expiry.peek() {
            if *until >= now {
                break;
            }
            if let Some(Reverse((_, old))) = state.by_expiry.pop() {
                state.keys.remove(&old);
            }
        }
        if state.keys.len() >= self.capacity {
            return false;
        }
        state.keys.insert(key.to_string(), keep_until_secs);
        state
            .by_expiry
            .push(Reverse((keep_until_secs, key.to_string())));
        true
    }
}

/// The system clock in Unix seconds.
pub(crate) fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    fn clocked(capacity: usize) -> (MemoryReplayGuard, Arc<AtomicI64>) {
        let now = Arc::new(AtomicI64::new(1000));
        let n = now.clone();
        let guard =
            MemoryReplayGuard::with_clock(capacity, Arc::new(move || n.load(Ordering::SeqCst)));
        (guard, now)
    }

    #[test]
    fn a_key_is_accepted_once() {
        let (guard, _) = clocked(10);
        assert!(guard.first_use("a", 2000));
        assert!(!guard.first_use("a", 2000));
        assert!(guard.first_use("b", 2000));
    }

    #[test]
    fn full_of_live_keys_it_refuses_new_ones() {
        let (guard, _) = clocked(2);
        assert!(guard.first_use("a", 2000));
        assert!(guard.first_use("b", 2000));
        assert!(!guard.first_use("c", 2000), "must fail closed when full");
        assert!(
            !guard.first_use("a", 2000),
            "and still remember the old keys"
        );
    }

    #[test]
    fn expired_keys_make_room() {
        let (guard, now) = clocked(2);
        assert!(guard.first_use("a", 1500));
        assert!(guard.first_use("b", 3000));
        now.store(1600, Ordering::SeqCst);
        assert!(
            guard.first_use("c", 3000),
            "a has expired, so there is room"
        );
        assert_eq!(guard.len(), 2);
        assert!(!guard.first_use("b", 3000));
    }

    #[test]
    fn an_expired_key_is_still_refused_until_dropped() {
        let (guard, now) = clocked(10);
        assert!(guard.first_use("a", 1500));
        now.store(1600, Ordering::SeqCst);
        assert!(!guard.first_use("a", 1500));
    }
}
