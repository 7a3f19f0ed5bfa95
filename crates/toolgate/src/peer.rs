//! Who is at the other end of a Unix socket, and who this process is: the
//! kernel's answers (`SO_PEERCRED` on Linux, `getpeereid` elsewhere), which
//! no program on the other end can choose. The hook compares the daemon's
//! uid pinned at install with the peer's before it believes an answer.

use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;

/// The user id of the process that bound the socket `stream` is connected
/// to (for a listening socket: whoever created it and called `listen`).
pub(crate) fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    let fd = stream.as_raw_fd();
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut cred = libc::ucred {
            pid: 0,
            uid: 0,
            gid: 0,
        };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` and `len` are valid for writes of the sizes given;
        // `fd` is an open socket owned by `stream` for the whole call.
        #[allow(unsafe_code)]
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&raw mut cred).cast(),
                &raw mut len,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if len as usize != std::mem::size_of::<libc::ucred>() {
            return Err(std::io::Error::other("SO_PEERCRED returned a short answer"));
        }
        Ok(cred.uid)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let (mut uid, mut gid): (libc::uid_t, libc::gid_t) = (0, 0);
        // SAFETY: both out-pointers are valid for writes; `fd` is open.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::getpeereid(fd, &raw mut uid, &raw mut gid) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(uid)
    }
}

/// This process's real user id.
pub(crate) fn real_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    unsafe {
        libc::getuid()
    }
}

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    #[allow(unsafe_code)]
    unsafe {
        libc::geteuid()
    }
}

/// The uid of the user named `name` (a number is taken as it is), from
/// `/etc/passwd`, else from `id -u NAME` (directory services).
pub(crate) fn uid_of(name: &str) -> Option<u32> {
    let name = name.trim();
    if let Ok(n) = name.parse::<u32>() {
        return Some(n);
    }
    if let Some(u) = passwd_entry(name).map(|e| e.uid) {
        return Some(u);
    }
    let out = std::process::Command::new("id")
        .args(["-u", "--", name])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// One line of `/etc/passwd`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PasswdEntry {
    /// The login name.
    pub name: String,
    /// The user id.
    pub uid: u32,
    /// The primary group id.
    pub gid: u32,
    /// The home directory.
    pub home: String,
}

/// The `/etc/passwd` entry for `name`.
pub(crate) fn passwd_entry(name: &str) -> Option<PasswdEntry> {
    passwd_in(&std::fs::read_to_string("/etc/passwd").ok()?, |e| {
        e.name == name
    })
}

/// The `/etc/passwd` entry for `uid`.
pub(crate) fn passwd_by_uid(uid: u32) -> Option<PasswdEntry> {
    passwd_in(&std::fs::read_to_string("/etc/passwd").ok()?, |e| {
        e.uid == uid
    })
}

fn passwd_in(text: &str, want: impl Fn(&PasswdEntry) -> bool) -> Option<PasswdEntry> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        let e = PasswdEntry {
            name: (*f.first()?).to_string(),
            uid: f.get(2)?.parse().ok()?,
            gid: f.get(3)?.parse().ok()?,
            home: (*f.get(5)?).to_string(),
        };
        want(&e).then_some(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_of_a_socket_this_process_bound_is_this_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let client = UnixStream::connect(&path).unwrap();
        assert_eq!(peer_uid(&client).unwrap(), effective_uid());
        drop(listener);
    }

    #[test]
    fn passwd_lines_are_read_by_name_and_uid() {
        let text = "root:x:0:0:root:/root:/bin/bash\nbroken\ntg:x:998:997::/var/lib/toolgate:/usr/sbin/nologin\n";
        let e = passwd_in(text, |e| e.name == "tg").unwrap();
        assert_eq!(
            (e.uid, e.gid, e.home.as_str()),
            (998, 997, "/var/lib/toolgate")
        );
        assert_eq!(passwd_in(text, |e| e.uid == 0).unwrap().name, "root");
        assert!(passwd_in(text, |e| e.name == "nobody-here").is_none());
        assert_eq!(uid_of(" 1234 "), Some(1234));
        assert_eq!(uid_of("root"), Some(0));
    }
}
