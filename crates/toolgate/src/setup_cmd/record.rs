//! The record `toolgate setup separated` leaves in `/etc/toolgate/setup.json`
//! (root's, readable by all): what it set up and where, so `toolgate
//! doctor` can check, as the agent's user, that each part still holds.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the record is, below the system root.
pub(crate) const RECORD: &str = "etc/toolgate/setup.json";

/// What the separated set-up put where (paths as the system sees them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// Always `separated`.
    pub mode: String,
    /// The daemon's user.
    pub daemon_user: String,
    /// Its uid (what hooks pin).
    pub daemon_uid: Option<u32>,
    /// The agent's user, when one was named.
    pub agent_user: Option<String>,
    /// The toolgate binary every hook runs.
    pub binary: PathBuf,
    /// The policy in force.
    pub policy: PathBuf,
    /// The daemon's data directory.
    pub data_dir: PathBuf,
    /// The daemon's socket.
    pub socket: PathBuf,
    /// Its TCP address (`none` when it has none).
    pub listen: String,
    /// Its public key.
    pub public_key: Option<String>,
    /// The service definition.
    pub service: PathBuf,
    /// Each runtime's system-level hook file.
    pub hooks: BTreeMap<String, PathBuf>,
}

impl Record {
    /// The record under `root`, if there is one that reads.
    pub(crate) fn read(root: &Path) -> Option<Record> {
        let text = std::fs::read_to_string(root.join(RECORD)).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// `path` (as the system sees it) under `root`.
pub(crate) fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}
