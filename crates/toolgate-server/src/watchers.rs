//! Watchers of the files the policy in force was read from, kept in step
//! with it. Editors replace files, so each file's directory is watched and
//! only events naming the file count.

use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::mpsc;

/// Quiet time before a burst of file events counts as one change.
const DEBOUNCE: Duration = Duration::from_millis(150);

/// The watchers of the files the policy in force was read from, kept in
/// step with it: a reload that names another profile moves the watch to it.
pub struct Watchers {
    state: Mutex<WatchState>,
}

struct WatchState {
    /// Where watchers report changes; `None` before [`Watchers::start`] and after
    /// [`Watchers::stop`].
    tx: Option<mpsc::Sender<&'static str>>,
    /// What the policy in force was read from.
    wanted: Vec<PathBuf>,
    /// The watchers running, by file.
    live: BTreeMap<PathBuf, Box<dyn std::any::Any + Send>>,
}

impl Watchers {
    /// Watchers for `sources`, started by [`Watchers::start`].
    pub fn new(sources: Vec<PathBuf>) -> Watchers {
        Watchers {
            state: Mutex::new(WatchState {
                tx: None,
                wanted: sources,
                live: BTreeMap::new(),
            }),
        }
    }

    /// Watches exactly `sources` from now on: starts a watcher for each file
    /// not yet watched and stops those for files no longer named. A file that
    /// cannot be watched is logged and left out (SIGHUP still reloads).
    pub fn follow(&self, sources: &[PathBuf]) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.wanted = sources.to_vec();
        state.live.retain(|path, _| sources.contains(path));
        if let Some(tx) = state.tx.clone() {
            for path in sources {
                if state.live.contains_key(path) {
                    continue;
                }
                match watch(path, tx.clone()) {
                    Ok(w) => {
                        state.live.insert(path.clone(), w);
                    }
                    Err(e) => tracing::warn!(
                        error = %e,
                        path = %path.display(),
                        "cannot watch the policy or profile file; reload with SIGHUP"
                    ),
                }
            }
        }
    }

    /// What `/v1/state` shows: the files the policy in force was read from,
    /// and those watched now.
    pub fn shown(&self) -> (Vec<String>, Vec<String>) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let sources = state.wanted.iter().map(|p| p.display().to_string());
        let watched = state.live.keys().map(|p| p.display().to_string());
        (sources.collect(), watched.collect())
    }

    /// Stops every watcher (the daemon is stopping).
    pub fn stop(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.tx = None;
        state.live.clear();
    }

    /// Starts watching what was asked for, reporting changes on `tx`.
    pub fn start(&self, tx: mpsc::Sender<&'static str>) {
        let wanted = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.tx = Some(tx);
            state.wanted.clone()
        };
        self.follow(&wanted);
    }
}

fn watch(
    path: &Path,
    tx: mpsc::Sender<&'static str>,
) -> notify::Result<Box<dyn std::any::Any + Send>> {
    let file = path.file_name().map(|f| f.to_os_string());
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |res: DebounceEventResult| {
        let Ok(events) = res else { return };
        // Only changes count: reading the file (which every reload does)
        // reports access events, and reacting to those would reload forever.
        let touches = events.iter().any(|e| {
            matches!(
                e.kind,
                EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
            ) && e
                .paths
                .iter()
                .any(|p| p.file_name().map(|f| f.to_os_string()) == file)
        });
        if touches {
            let _ = tx.try_send("file change");
        }
    })?;
    debouncer.watch(&dir, RecursiveMode::NonRecursive)?;
    Ok(Box::new(debouncer))
}
