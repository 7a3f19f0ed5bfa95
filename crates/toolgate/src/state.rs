//! Where toolgate keeps its state, and opening it.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_store::{SqliteStore, SyncMode};

/// The global `--data-dir` option.
#[derive(Debug, Clone, Args)]
pub struct DataDirArgs {
    /// Directory for approvals and the audit log (SQLite). Default:
    /// $XDG_STATE_HOME/toolgate, or ~/.local/state/toolgate.
    #[arg(long, global = true, env = "TOOLGATE_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

impl DataDirArgs {
    /// The directory to use, and whether the user chose it.
    pub fn resolve(&self) -> (PathBuf, bool) {
        match &self.data_dir {
            Some(d) => (d.clone(), true),
            None => (default_data_dir(), false),
        }
    }

    /// Opens the store in the data directory.
    pub fn open(&self) -> Result<Arc<SqliteStore>> {
        let (dir, _) = self.resolve();
        open_store(&dir)
    }
}

/// `$XDG_STATE_HOME/toolgate`, else `$HOME/.local/state/toolgate`.
pub fn default_data_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|x| !x.is_empty()) {
        let x = PathBuf::from(x);
        if x.is_absolute() {
            return x.join("toolgate");
        }
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    home.join(".local/state/toolgate")
}

/// Opens the SQLite store in `dir`. `TOOLGATE_SYNC=normal` trades the last
/// commits on power loss for speed (a killed process still loses nothing).
pub fn open_store(dir: &std::path::Path) -> Result<Arc<SqliteStore>> {
    let sync = match std::env::var("TOOLGATE_SYNC").as_deref() {
        Ok("normal") => SyncMode::Normal,
        _ => SyncMode::Full,
    };
    let store = SqliteStore::open(dir, sync)
        .with_context(|| format!("cannot open the toolgate state in {}", dir.display()))?;
    Ok(Arc::new(store))
}

/// The OS user id of this process, when it can be read.
pub fn os_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid()).ok()
}

/// The approver identity when `--as` is not given: the OS user.
pub fn os_user() -> String {
    for var in ["USER", "LOGNAME", "USERNAME"] {
        if let Ok(u) = std::env::var(var)
            && !u.trim().is_empty()
        {
            return u.trim().to_string();
        }
    }
    let Some(uid) = os_uid() else {
        return "unknown-user".to_string();
    };
    // No login variables (cron, containers): the name /etc/passwd gives the uid.
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .find_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            let id = f.nth(1)?;
            (id.parse() == Ok(uid) && !name.is_empty()).then(|| name.to_string())
        })
        .unwrap_or_else(|| format!("uid:{uid}"))
}
