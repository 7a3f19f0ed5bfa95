//! A runtime's settings files: where its user settings live, and writing
//! one safely (atomically, keeping what was there as a backup that replaces
//! no earlier one). Shared by `install` and `codex-trust`, and importing
//! neither.

use anyhow::{Context, Result, anyhow};
use std::path::{Path, PathBuf};
use toolgate_core::hooks::install::Target;

/// The runtime's user settings directory: `$<dir_env>` when set, else
/// `$HOME/<dir>`.
pub(crate) fn user_dir(t: &Target) -> Result<PathBuf> {
    if let Some(dir) = t
        .dir_env
        .and_then(std::env::var_os)
        .filter(|d| !d.is_empty())
    {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("$HOME is not set: pass --settings FILE"))?;
    Ok(home.join(t.dir))
}

/// Where the previous settings are kept: the same name plus `.bak`, or,
/// when that is taken, `.bak.1`, `.bak.2`, …: an earlier backup (perhaps
/// the file as it was before toolgate ever touched it) is never replaced.
pub(crate) fn backup(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_os_string();
    let mut first = name.clone();
    first.push(".bak");
    let mut candidate = path.with_file_name(&first);
    let mut n = 1u32;
    while candidate.exists() {
        let mut next = first.clone();
        next.push(format!(".{n}"));
        candidate = path.with_file_name(next);
        n += 1;
    }
    candidate
}

/// Writes a file atomically (a temp file renamed over it), keeping the old
/// text as a backup that replaces no earlier one; returns the backup's path.
pub(crate) fn write_text(path: &Path, text: &str, before: Option<&str>) -> Result<Option<PathBuf>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut kept = None;
    if let Some(old) = before {
        let bak = backup(path);
        std::fs::write(&bak, old).with_context(|| format!("cannot write {}", bak.display()))?;
        kept = Some(bak);
    }
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".toolgate-tmp");
    let tmp = path.with_file_name(tmp_name);
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(kept)
}
