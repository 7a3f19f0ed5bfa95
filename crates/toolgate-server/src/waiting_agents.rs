//! Which approvals an agent is waiting on right now (a `?wait` long poll,
//! or a hook holding through the daemon), and until when: what the control
//! UI shows as "agent waiting — 42 s left", so the person at it knows
//! which approval unblocks someone now.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The waits in progress, by approval id.
#[derive(Debug, Default)]
pub struct WaitingAgents {
    /// Approval id → the deadline (ms since the epoch) of each wait on it.
    waits: Mutex<HashMap<String, Vec<i64>>>,
}

/// One wait; it ends (and is forgotten) when dropped, however the wait
/// ended: answered, timed out, or the client went away.
#[derive(Debug)]
pub struct Waiting {
    agents: Arc<WaitingAgents>,
    id: String,
    until_ms: i64,
}

impl WaitingAgents {
    /// Notes a wait on approval `id` until `until_ms`.
    pub fn enter(self: &Arc<Self>, id: String, until_ms: i64) -> Waiting {
        self.lock().entry(id.clone()).or_default().push(until_ms);
        Waiting {
            agents: self.clone(),
            id,
            until_ms,
        }
    }

    /// Until when an agent waits on approval `id` (the latest deadline of
    /// the waits on it), if one does.
    pub fn until_ms(&self, id: &str) -> Option<i64> {
        self.lock().get(id).and_then(|w| w.iter().copied().max())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<i64>>> {
        self.waits.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waits = self.agents.lock();
        if let Some(list) = waits.get_mut(&self.id) {
            if let Some(i) = list.iter().position(|&u| u == self.until_ms) {
                list.swap_remove(i);
            }
            if list.is_empty() {
                waits.remove(&self.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_seen_until_it_is_dropped() {
        let agents = Arc::new(WaitingAgents::default());
        assert_eq!(agents.until_ms("a"), None);
        let first = agents.enter("a".into(), 1_000);
        let second = agents.enter("a".into(), 5_000);
        assert_eq!(agents.until_ms("a"), Some(5_000));
        drop(second);
        assert_eq!(agents.until_ms("a"), Some(1_000));
        drop(first);
        assert_eq!(agents.until_ms("a"), None);
        assert!(agents.lock().is_empty());
    }
}
