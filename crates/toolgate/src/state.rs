//! Where toolgate keeps its state, and opening it.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_store::Store;
use toolgate_store_sqlite::{SqliteStore, SyncMode};

/// The word for "no daemon" (`--url none`) and, as `--store none`, for "no
/// store": a hook command that names them reads no environment variable
/// for them.
pub(crate) const NONE: &str = "none";

/// The global `--data-dir` and `--store` options.
#[derive(Debug, Clone, Args)]
pub(crate) struct DataDirArgs {
    /// Directory for the daemon's tokens and keys, and for approvals and the
    /// audit log unless `--store` names another place. Default:
    /// $XDG_STATE_HOME/toolgate, or ~/.local/state/toolgate.
    #[arg(long, global = true, env = "TOOLGATE_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where approvals, votes, memories and the audit log live:
    /// `sqlite:DIR`, or `postgres://user@host/db` for several daemons
    /// sharing one database, or `none` (a hook that only asks a daemon:
    /// it then opens no store and reads no data directory). Default:
    /// SQLite in the data directory.
    #[arg(long, global = true, env = "TOOLGATE_STORE", value_name = "STORE")]
    pub store: Option<String>,
}

impl DataDirArgs {
    /// A data directory named on the command line is the whole answer to
    /// "where is the state": a `TOOLGATE_STORE` in the environment (which an
    /// agent can set for the runtime that starts a hook) then counts for
    /// nothing. Called with the matches the options were parsed from.
    pub(crate) fn pin_to_command_line(&mut self, matches: &clap::ArgMatches) {
        use clap::parser::ValueSource;
        let from = |id: &str| matches.value_source(id);
        if from("data_dir") == Some(ValueSource::CommandLine)
            && from("store") == Some(ValueSource::EnvVariable)
        {
            self.store = None;
        }
    }
}

/// A store named by `--store`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreSpec {
    /// SQLite in this directory.
    Sqlite(PathBuf),
    /// A PostgreSQL database (the URL as given).
    Postgres(String),
}

impl StoreSpec {
    /// Reads `sqlite:DIR` or `postgres://…` (`postgresql://` too; a URL's
    /// options such as `?options=-csearch_path%3Dteam` are the engine's); the
    /// error says what is accepted.
    pub(crate) fn parse(text: &str) -> Result<StoreSpec> {
        let t = text.trim();
        if let Some(dir) = t.strip_prefix("sqlite:") {
            let dir = dir.strip_prefix("//").unwrap_or(dir);
            if dir.is_empty() {
                anyhow::bail!(
                    "--store sqlite: needs a directory, such as sqlite:/var/lib/toolgate"
                );
            }
            return Ok(StoreSpec::Sqlite(PathBuf::from(dir)));
        }
        if t.starts_with("postgres://") || t.starts_with("postgresql://") {
            return Ok(StoreSpec::Postgres(t.to_string()));
        }
        anyhow::bail!(
            "--store {}: give sqlite:DIR or postgres://user@host:5432/dbname",
            redact_password(t)
        )
    }
}

impl StoreSpec {
    /// Opens the store (creating an SQLite one, or the tables of a
    /// PostgreSQL one, when there is none yet).
    pub(crate) fn open(&self) -> Result<Arc<dyn Store>> {
        match self {
            StoreSpec::Sqlite(dir) => {
                refuse_loose_dir(dir)?;
                open_store(dir)
            }
            StoreSpec::Postgres(url) => open_postgres(url),
        }
    }

    /// The store as given, any password masked: for messages.
    pub(crate) fn shown(&self) -> String {
        match self {
            StoreSpec::Sqlite(dir) => format!("sqlite:{}", dir.display()),
            StoreSpec::Postgres(url) => redact_password(url),
        }
    }
}

/// `text` with the password of a `scheme://user:password@host` URL shown
/// as `***`, for messages.
fn redact_password(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    match rest.split_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or("");
            format!("{scheme}://{name}:***@{host}")
        }
        _ => text.to_string(),
    }
}

impl DataDirArgs {
    /// The directory to use, and whether the user chose it.
    pub(crate) fn resolve(&self) -> (PathBuf, bool) {
        match &self.data_dir {
            Some(d) => (d.clone(), true),
            None => (default_data_dir(), false),
        }
    }

    /// Whether `--store none` was given: this process keeps no state and
    /// reads no data directory.
    pub(crate) fn store_is_none(&self) -> bool {
        self.store
            .as_deref()
            .is_some_and(|s| s.trim().eq_ignore_ascii_case(NONE))
    }

    /// Opens the store `--store` names, else SQLite in the data directory
    /// (refused when the directory is open to other users).
    pub(crate) fn open(&self) -> Result<Arc<dyn Store>> {
        if self.store_is_none() {
            anyhow::bail!(
                "--store none: this command keeps state; give --data-dir DIR or --store \
                 sqlite:DIR (none is for hooks that only ask a daemon)"
            );
        }
        match self.store.as_deref().map(StoreSpec::parse).transpose()? {
            Some(spec) => spec.open(),
            None => {
                let dir = self.resolve().0;
                refuse_loose_dir(&dir)?;
                open_store(&dir)
            }
        }
    }
}

impl DataDirArgs {
    /// [`DataDirArgs::open`] for a command that reads state or acts on what
    /// is already there: an SQLite data directory that does not exist is
    /// refused, never created (a mistyped `--data-dir` would otherwise show
    /// an empty state and leave a new directory behind). A PostgreSQL store
    /// has no directory to check.
    pub(crate) fn open_existing(&self) -> Result<Arc<dyn Store>> {
        if !self.store_is_none() {
            let dir = match self.store.as_deref().map(StoreSpec::parse).transpose()? {
                Some(StoreSpec::Sqlite(dir)) => Some(dir),
                Some(StoreSpec::Postgres(_)) => None,
                None => Some(self.resolve().0),
            };
            if let Some(dir) = dir
                && std::fs::symlink_metadata(&dir).is_err()
            {
                anyhow::bail!(
                    "the data directory {} does not exist (a mistyped --data-dir, \
                     TOOLGATE_DATA_DIR or --store?): this command reads what is there and \
                     creates nothing; `toolgate serve` (or `toolgate setup separated`) creates \
                     it, and so does the first `toolgate check` that records a decision",
                    dir.display()
                );
            }
        }
        self.open()
    }
}

/// `$XDG_STATE_HOME/toolgate`, else `$HOME/.local/state/toolgate`.
pub(crate) fn default_data_dir() -> PathBuf {
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
pub(crate) fn open_store(dir: &std::path::Path) -> Result<Arc<dyn Store>> {
    let sync = match std::env::var("TOOLGATE_SYNC").as_deref() {
        Ok("normal") => SyncMode::Normal,
        _ => SyncMode::Full,
    };
    let store = SqliteStore::open(dir, sync)
        .with_context(|| format!("cannot open the toolgate state in {}", dir.display()))?;
    Ok(Arc::new(store))
}

/// Connects to the PostgreSQL store at `url` (migrating it if needed).
fn open_postgres(url: &str) -> Result<Arc<dyn Store>> {
    let store = toolgate_store_postgres::PostgresStore::connect(url)
        .with_context(|| format!("cannot open the toolgate state at {}", redact_password(url)))?;
    Ok(Arc::new(store))
}

/// Refuses an existing data directory that other users can reach into
/// (group or other permission bits) or that another user owns: its tokens,
/// keys and database would be theirs to read or replace. A missing
/// directory passes (it is created private). The message says what to run.
pub(crate) fn refuse_loose_dir(dir: &std::path::Path) -> Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        // Unreadable: opening it says why.
        Err(_) => return Ok(()),
    };
    if !meta.is_dir() {
        anyhow::bail!(
            "the data directory {} is not a directory: pass --data-dir DIR",
            dir.display()
        );
    }
    let shown = toolgate_core::hooks::install::shell_word(&dir.to_string_lossy());
    let me = crate::peer::effective_uid();
    if meta.uid() != me {
        anyhow::bail!(
            "the data directory {} belongs to uid {}, not to this user (uid {me}): its tokens \
             and database are that user's; run toolgate as its owner (sudo -u \
             {} toolgate …), or pass --data-dir with a directory of your own",
            dir.display(),
            meta.uid(),
            crate::peer::passwd_by_uid(meta.uid())
                .map_or_else(|| format!("#{}", meta.uid()), |e| e.name)
        );
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        anyhow::bail!(
            "the data directory {} is open to other users (mode {mode:o}): anyone who can \
             reach into it can read or replace toolgate's tokens, keys and audit log; run \
             `chmod 700 {shown}` (and check what is in it), then try again",
            dir.display()
        );
    }
    Ok(())
}

/// Creates `dir` (and its parents) if missing, the directory itself
/// readable by this user alone: it holds the daemon's tokens and keys. An
/// existing one open to other users, or another user's, is refused
/// ([`refuse_loose_dir`]).
pub(crate) fn ensure_private_dir(dir: &std::path::Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return refuse_loose_dir(dir);
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| {
            format!(
                "cannot create the data directory {} (pass --data-dir DIR or set TOOLGATE_DATA_DIR to a writable directory)",
                dir.display()
            )
        })
}

/// The OS user id of this process, when it can be read.
pub(crate) fn os_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid()).ok()
}

/// The approver identity when `--as` is not given: the OS user.
pub(crate) fn os_user() -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_names_are_read_or_refused_with_what_is_accepted() {
        assert_eq!(
            StoreSpec::parse("sqlite:/var/lib/tg").unwrap(),
            StoreSpec::Sqlite("/var/lib/tg".into())
        );
        assert_eq!(
            StoreSpec::parse("sqlite:///var/lib/tg").unwrap(),
            StoreSpec::Sqlite("/var/lib/tg".into())
        );
        assert_eq!(
            StoreSpec::parse("postgres://tg@db:5432/toolgate").unwrap(),
            StoreSpec::Postgres("postgres://tg@db:5432/toolgate".into())
        );
        assert!(matches!(
            StoreSpec::parse("postgresql://db/x").unwrap(),
            StoreSpec::Postgres(_)
        ));
        assert!(StoreSpec::parse("sqlite:").is_err());
        let e = StoreSpec::parse("mysql://u:hunter2@db/x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sqlite:DIR or postgres://"), "{e}");
        assert!(
            !e.contains("hunter2"),
            "a password never reaches a message: {e}"
        );
    }
}
