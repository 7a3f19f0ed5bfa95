//! SOP files on disk, cached: a file is parsed once and re-read only when
//! its size or modification time changes, checked at most once per
//! revalidation interval (1 s by default), so an edited SOP applies within
//! a second and an unchanged one costs no I/O on the decision path.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use toolgate_core::knowledge::sop::{MAX_SOP_BYTES, SOP_SUFFIX, Sop, sop_name};

/// What a file looked like when last read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

#[derive(Debug)]
struct FileEntry {
    checked: Instant,
    stamp: Option<Stamp>,
    sop: Result<Option<Arc<Sop>>, String>,
}

#[derive(Debug)]
struct DirEntry {
    checked: Instant,
    stamp: Option<Stamp>,
    files: Vec<PathBuf>,
}

/// Parsed SOP files and project directory listings, by path.
#[derive(Debug)]
pub(crate) struct SopFiles {
    revalidate: Duration,
    files: Mutex<HashMap<PathBuf, FileEntry>>,
    dirs: Mutex<HashMap<PathBuf, DirEntry>>,
}

/// Entries kept before the cache starts over (a bound, not a tuning knob).
const MAX_ENTRIES: usize = 8192;

impl SopFiles {
    /// An empty cache re-checking files after `revalidate`.
    pub(crate) fn new(revalidate: Duration) -> SopFiles {
        SopFiles {
            revalidate,
            files: Mutex::new(HashMap::new()),
            dirs: Mutex::new(HashMap::new()),
        }
    }

    /// The SOP at `path`: `Ok(None)` when there is no such file, an error
    /// (with the path) when it exists but cannot be read or is too big.
    /// The bool is true when no file was read (served from cache).
    pub(crate) fn get(&self, path: &Path) -> (Result<Option<Arc<Sop>>, String>, bool) {
        let now = Instant::now();
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = files.get(path)
            && now.duration_since(e.checked) < self.revalidate
        {
            return (e.sop.clone(), true);
        }
        let stamp = stamp_of(path);
        if let Some(e) = files.get_mut(path)
            && e.stamp == stamp
        {
            e.checked = now;
            return (e.sop.clone(), true);
        }
        let sop = match &stamp {
            None => Ok(None),
            Some(_) => read_sop(path).map(|s| Some(Arc::new(s))),
        };
        if files.len() >= MAX_ENTRIES {
            files.clear();
        }
        files.insert(
            path.to_path_buf(),
            FileEntry {
                checked: now,
                stamp,
                sop: sop.clone(),
            },
        );
        (sop, false)
    }

    /// The `*.ai.sop` files at the top level of `dir`, sorted; empty when
    /// the directory does not exist.
    pub(crate) fn list(&self, dir: &Path) -> Vec<PathBuf> {
        let now = Instant::now();
        let mut dirs = self.dirs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = dirs.get(dir)
            && now.duration_since(e.checked) < self.revalidate
        {
            return e.files.clone();
        }
        let stamp = stamp_of(dir);
        if let Some(e) = dirs.get_mut(dir)
            && e.stamp == stamp
        {
            e.checked = now;
            return e.files.clone();
        }
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_str().and_then(sop_name).is_some())
                .map(|e| e.path())
                .take(256)
                .collect(),
            Err(_) => Vec::new(),
        };
        files.sort();
        if dirs.len() >= MAX_ENTRIES {
            dirs.clear();
        }
        dirs.insert(
            dir.to_path_buf(),
            DirEntry {
                checked: now,
                stamp,
                files: files.clone(),
            },
        );
        files
    }
}

fn stamp_of(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: m.len(),
        modified: m.modified().ok(),
    })
}

fn read_sop(path: &Path) -> Result<Sop, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read SOP {shown}: {e}"))?;
    if bytes.len() > MAX_SOP_BYTES {
        return Err(format!(
            "SOP {shown} is {} bytes; the limit is {MAX_SOP_BYTES} — keep only what an agent \
             must read before acting",
            bytes.len()
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("SOP {shown} is not UTF-8 text — save it as UTF-8"))?;
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
    let name = file.strip_suffix(SOP_SUFFIX).unwrap_or(file);
    Ok(Sop::parse(name, &shown.to_string(), &text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_are_seen_and_unchanged_files_are_not_reread() {
        let dir = std::env::temp_dir().join(format!(
            "toolgate-sopfiles-{}",
            crate::random_hex().unwrap()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("fleet.ai.sop");
        let cache = SopFiles::new(Duration::ZERO);
        assert_eq!(cache.get(&p).0, Ok(None));
        std::fs::write(&p, "## Preflight\none\n").unwrap();
        let (s, cached) = cache.get(&p);
        assert!(!cached);
        assert_eq!(s.unwrap().unwrap().sections[0].text, "one");
        assert!(cache.get(&p).1, "unchanged: served from cache");
        std::fs::write(&p, "## Preflight\ntwo, longer\n").unwrap();
        assert_eq!(
            cache.get(&p).0.unwrap().unwrap().sections[0].text,
            "two, longer"
        );
        std::fs::write(&p, vec![0xff, 0xfe]).unwrap();
        assert!(cache.get(&p).0.unwrap_err().contains("not UTF-8"));
        std::fs::remove_file(&p).unwrap();
        assert_eq!(cache.get(&p).0, Ok(None));
        std::fs::write(dir.join("a.ai.sop"), "x").unwrap();
        std::fs::write(dir.join("notes.md"), "x").unwrap();
        assert_eq!(cache.list(&dir), vec![dir.join("a.ai.sop")]);
        assert!(cache.list(&dir.join("missing")).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
