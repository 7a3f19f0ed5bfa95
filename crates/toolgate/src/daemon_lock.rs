//! One daemon per data directory: `toolgate serve` holds an OS lock
//! (`flock`) on `daemon.lock` there while it runs. The kernel drops the
//! lock when the process ends, however it ends (a crash, `kill -9`), so a
//! stale file never keeps a new daemon out, as a pid file alone would.

use anyhow::{Context, Result, anyhow};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

/// The lock file in the data directory.
pub(crate) const LOCK_FILE: &str = "daemon.lock";

/// The held lock: released when dropped or when the process ends.
#[derive(Debug)]
pub(crate) struct DaemonLock {
    _file: File,
}

/// Takes the data directory `dir`'s daemon lock, writing this process's id
/// into the file for the message another daemon would show. Refused,
/// naming the directory and the process that holds it, when another daemon
/// has it.
pub(crate) fn acquire(dir: &Path) -> Result<DaemonLock> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns; no memory involved.
    let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    if !taken {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(anyhow!("cannot lock {}: {err}", path.display()));
        }
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        let holder = match text.trim().parse::<u32>() {
            Ok(pid) => match std::fs::read(format!("/proc/{pid}/cmdline")) {
                Ok(cmd) if !cmd.is_empty() => {
                    let cmd = String::from_utf8_lossy(&cmd)
                        .trim_end_matches('\0')
                        .replace('\0', " ");
                    format!("process {pid}, `{}`", toolgate_core::visible_line(&cmd))
                }
                _ => format!("process {pid}"),
            },
            Err(_) => "a process that has not written its id yet".to_string(),
        };
        return Err(anyhow!(
            "another toolgate daemon ({holder}) is already serving the data directory {}: \
             stop it first, or give this daemon a data directory of its own (--data-dir DIR; \
             daemons share state through --store postgres://…, each with its own data \
             directory)",
            dir.display()
        ));
    }
    file.set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{}", std::process::id()))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(DaemonLock { _file: file })
}
