//! The record `toolgate setup separated` leaves in `/etc/toolgate/setup.json`
//! (root's, readable by all): what it set up and where, so `toolgate
//! doctor` can check, as the agent's user, that each part still holds.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the record is, below the system root.
pub(crate) const RECORD: &str = "etc/toolgate/setup.json";
/// The record's file name in the set-up's `--etc-dir`.
pub(crate) const RECORD_NAME: &str = "setup.json";

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
    /// The command that made it (what to run again to repair it).
    #[serde(default)]
    pub command: Option<String>,
}

impl Record {
    /// The service's name (`toolgate`, from `toolgate.service`).
    pub(crate) fn service_name(&self) -> String {
        self.service
            .file_stem()
            .map_or_else(|| "toolgate".into(), |s| s.to_string_lossy().into_owned())
    }

    /// What to run to put the set-up back.
    pub(crate) fn rerun(&self) -> String {
        match &self.command {
            Some(c) => format!("sudo {c}"),
            None => format!(
                "sudo {} setup separated{}",
                self.binary.display(),
                self.agent_user
                    .as_deref()
                    .map(|a| format!(" --agent-user {a}"))
                    .unwrap_or_default()
            ),
        }
    }
}

impl Record {
    /// The record under `root`, if there is one that reads.
    pub(crate) fn read(root: &Path) -> Option<Record> {
        Record::read_file(&root.join(RECORD))
    }

    /// The record in `file`, if it reads.
    pub(crate) fn read_file(file: &Path) -> Option<Record> {
        let text = std::fs::read_to_string(file).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// `path` (as the system sees it) under `root`.
pub(crate) fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}
