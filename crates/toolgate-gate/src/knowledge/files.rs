//! SOP files on disk, cached: a file is parsed once and re-read only when
//! its size or modification time changes, checked at most once per
//! revalidation interval (1 s by default), so an edited SOP applies within
//! a second and an unchanged one costs no I/O on the decision path.
//!
//! Reading is bounded whatever sits at the path: only regular files are
//! read (opened non-blocking, so a FIFO cannot hang the decision), at most
//! [`MAX_SOP_BYTES`] + 1 bytes, and no lock is held while reading. A
//! project's own SOPs (files an agent may have written) must not be
//! symbolic links.

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
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

/// A parsed SOP, nothing there, or why it could not be read.
type Got = Result<Option<Arc<Sop>>, String>;

#[derive(Debug)]
struct FileEntry {
    checked: Instant,
    stamp: Option<Stamp>,
    sop: Got,
}

#[derive(Debug)]
struct DirEntry {
    checked: Instant,
    stamp: Option<Stamp>,
    files: Result<Vec<PathBuf>, String>,
}

/// Parsed SOP files and project directory listings, by path.
#[derive(Debug)]
pub(crate) struct SopFiles {
    revalidate: Duration,
    files: Mutex<HashMap<PathBuf, FileEntry>>,
    dirs: Mutex<HashMap<PathBuf, DirEntry>>,
}

/// Entries kept before the cache starts over (a bound, not a tuning knob):
/// at most this many parsed files of at most 256 KiB each.
const MAX_ENTRIES: usize = 1024;

/// At most this many `*.ai.sop` files are taken from one project directory.
pub(crate) const MAX_PROJECT_SOPS: usize = 8;

/// Where a file comes from, which decides whether a symbolic link is
/// followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A configured SOP directory (the operator's).
    Library,
    /// A project's own directory (anyone with write access to the project).
    Project,
}

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
    /// (with the path) when something is there but cannot be read as an
    /// SOP. The bool is true when no file was read (served from cache).
    pub(crate) fn get(&self, path: &Path, origin: Origin) -> (Got, bool) {
        let now = Instant::now();
        let previous = {
            let files = lock(&self.files);
            match files.get(path) {
                Some(e) if now.duration_since(e.checked) < self.revalidate => {
                    return (e.sop.clone(), true);
                }
                Some(e) => Some((e.stamp.clone(), e.sop.clone())),
                None => None,
            }
        };
        let stamp = stamp_of(path, origin);
        if let Some((old, sop)) = previous
            && stamp.as_ref().ok() == Some(&old)
        {
            if let Some(e) = lock(&self.files).get_mut(path) {
                e.checked = now;
            }
            return (sop, true);
        }
        let (stamp, sop) = match stamp {
            Err(e) => (None, Err(e)),
            Ok(None) => (None, Ok(None)),
            Ok(Some(s)) => (Some(s), read_sop(path, origin).map(|s| Some(Arc::new(s)))),
        };
        let mut files = lock(&self.files);
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

    /// The `*.ai.sop` files at the top level of `dir`, sorted, at most
    /// [`MAX_PROJECT_SOPS`]; empty when the directory does not exist, an
    /// error when it exists but cannot be listed.
    pub(crate) fn list(&self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        let now = Instant::now();
        let previous = {
            let dirs = lock(&self.dirs);
            match dirs.get(dir) {
                Some(e) if now.duration_since(e.checked) < self.revalidate => {
                    return e.files.clone();
                }
                Some(e) => Some((e.stamp.clone(), e.files.clone())),
                None => None,
            }
        };
        let stamp = stamp_of(dir, Origin::Library);
        if let Some((old, files)) = previous
            && stamp.as_ref().ok() == Some(&old)
        {
            if let Some(e) = lock(&self.dirs).get_mut(dir) {
                e.checked = now;
            }
            return files;
        }
        let files = match &stamp {
            Err(e) => Err(e.clone()),
            Ok(None) => Ok(Vec::new()),
            Ok(Some(_)) => list_dir(dir),
        };
        let mut dirs = lock(&self.dirs);
        if dirs.len() >= MAX_ENTRIES {
            dirs.clear();
        }
        dirs.insert(
            dir.to_path_buf(),
            DirEntry {
                checked: now,
                stamp: stamp.ok().flatten(),
                files: files.clone(),
            },
        );
        files
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot list SOP directory {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().and_then(sop_name).is_some())
        .map(|e| e.path())
        .take(4096)
        .collect();
    files.sort();
    files.truncate(MAX_PROJECT_SOPS);
    Ok(files)
}

/// `Ok(None)` when nothing is there; an error for anything but "not found".
fn stamp_of(path: &Path, origin: Origin) -> Result<Option<Stamp>, String> {
    let meta = match origin {
        Origin::Library => std::fs::metadata(path),
        Origin::Project => std::fs::symlink_metadata(path),
    };
    match meta {
        Ok(m) => Ok(Some(Stamp {
            len: m.len(),
            modified: m.modified().ok(),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read SOP {}: {e}", path.display())),
    }
}

fn read_sop(path: &Path, origin: Origin) -> Result<Sop, String> {
    let shown = path.display();
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if origin == Origin::Project {
        flags |= libc::O_NOFOLLOW;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => format!(
                "SOP {shown} is a symbolic link in a project directory; project SOPs must be \
                 regular files"
            ),
            _ => format!("cannot read SOP {shown}: {e}"),
        })?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read SOP {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "SOP {shown} is not a regular file (a directory, FIFO or device) — replace it with \
             a Markdown file"
        ));
    }
    let mut bytes = Vec::with_capacity((meta.len() as usize).min(MAX_SOP_BYTES + 1));
    file.take(MAX_SOP_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read SOP {shown}: {e}"))?;
    if bytes.len() > MAX_SOP_BYTES {
        return Err(format!(
            "SOP {shown} is larger than the limit of {MAX_SOP_BYTES} bytes — keep only what an \
             agent must read before acting"
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

    fn temp() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolgate-sopfiles-{}",
            crate::random_hex().unwrap()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn edits_are_seen_and_unchanged_files_are_not_reread() {
        let dir = temp();
        let p = dir.join("fleet.ai.sop");
        let cache = SopFiles::new(Duration::ZERO);
        assert_eq!(cache.get(&p, Origin::Library).0, Ok(None));
        std::fs::write(&p, "## Preflight\none\n").unwrap();
        let (s, cached) = cache.get(&p, Origin::Library);
        assert!(!cached);
        assert_eq!(s.unwrap().unwrap().sections[0].text, "one");
        assert!(
            cache.get(&p, Origin::Library).1,
            "unchanged: served from cache"
        );
        std::fs::write(&p, "## Preflight\ntwo, longer\n").unwrap();
        let got = cache.get(&p, Origin::Library).0.unwrap().unwrap();
        assert_eq!(got.sections[0].text, "two, longer");
        std::fs::write(&p, vec![0xff, 0xfe]).unwrap();
        assert!(
            cache
                .get(&p, Origin::Library)
                .0
                .unwrap_err()
                .contains("not UTF-8")
        );
        std::fs::remove_file(&p).unwrap();
        assert_eq!(cache.get(&p, Origin::Library).0, Ok(None));
        std::fs::write(dir.join("a.ai.sop"), "x").unwrap();
        std::fs::write(dir.join("notes.md"), "x").unwrap();
        assert_eq!(cache.list(&dir), Ok(vec![dir.join("a.ai.sop")]));
        assert_eq!(cache.list(&dir.join("missing")), Ok(vec![]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fifos_devices_big_files_and_project_symlinks_are_errors_not_hangs() {
        let dir = temp();
        let cache = SopFiles::new(Duration::ZERO);
        let fifo = dir.join("fifo.ai.sop");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let err = cache.get(&fifo, Origin::Library).0.unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let zero = dir.join("zero.ai.sop");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = cache.get(&zero, Origin::Library).0.unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let big = dir.join("big.ai.sop");
        std::fs::write(&big, vec![b'a'; MAX_SOP_BYTES + 10]).unwrap();
        let err = cache.get(&big, Origin::Library).0.unwrap_err();
        assert!(err.contains("larger than"), "{err}");
        let real = dir.join("real.md");
        std::fs::write(&real, "## Preflight\nx\n").unwrap();
        let link = dir.join("link.ai.sop");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(cache.get(&link, Origin::Library).0.unwrap().is_some());
        let err = cache.get(&link, Origin::Project).0.unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
