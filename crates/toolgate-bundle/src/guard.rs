//! Whether the agent could change the policy a gate decides with.
//!
//! A gate whose policy the guarded agent can rewrite is no gate: the agent
//! writes `quorum = { R4 = 1 }` or an approving rule, the gate reloads, and
//! what should have needed two people runs. So a daemon (`serve`) and a
//! hook refuse a policy the agent's user could change, unless told with a
//! command-line flag (never an environment variable: the agent sets those).
//!
//! The rule, for every file a policy loads (the policy, the scope profile
//! it names), checked both as written (made absolute, links not followed)
//! and as resolved through links, and for every directory above each of
//! them up to `/`:
//!
//! 1. **Owned by a user who counts**: its owner can change its mode, its
//!    contents, or (for a directory) what lies in it. For a hook, which runs
//!    as the agent's user, that is the hook's own user; for a daemon, whose
//!    agents are not known, every user but root. Root's own files never
//!    count: an agent running as root is beyond any file check.
//! 2. **Writable by group or others**: a file with a group or other write
//!    bit, or such a directory (its entries can be replaced), except a
//!    sticky directory like `/tmp`, where only an entry's owner (rule 1)
//!    can replace it.
//! 3. **Inside the working directory** the process runs in (the agent's
//!    workspace, for a hook), unless that is `/`.
//!
//! A policy in separated mode (`sudo toolgate setup separated`) is root's,
//! in `/etc/toolgate`, and passes; one in the user's own config directory
//! belongs to that user, and a gate running as that user (same-user mode)
//! needs `--allow-writable-policy` to use it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// Whose writes a gate must be safe from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writers {
    /// A hook: the agent is this process's own user.
    ThisUser,
    /// A daemon: any user but root may be an agent's.
    AnyButRoot,
}

/// How a loading process treats a policy the agent could change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyGuard {
    /// No check (`check`, `policy test`: they gate nothing).
    Off,
    /// Refuse a policy `Writers` could change.
    Refuse(Writers),
    /// Allowed by the command line's `--allow-writable-policy`: loaded, and
    /// the caller says so.
    Allowed,
}

/// Why one file of a policy counts as agent-writable: the path checked and
/// the reason, for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writable {
    /// The file or directory that makes it writable.
    pub path: PathBuf,
    /// Why, in a sentence fragment.
    pub why: String,
}

/// The first reason any of `files` (a policy's sources, absolute) counts
/// as writable by `writers`, for a process working in `cwd`; `None` when
/// none does. A file that cannot be inspected counts as writable.
pub fn agent_writable(files: &[PathBuf], writers: Writers, cwd: &Path) -> Option<Writable> {
    let me = own_uid();
    let counts = |uid: u32| match writers {
        Writers::ThisUser => uid != 0 && Some(uid) == me,
        Writers::AnyButRoot => uid != 0,
    };
    for file in files {
        let as_written = lexical(file);
        let mut paths = vec![as_written.clone()];
        match std::fs::canonicalize(file) {
            Ok(real) if real != as_written => paths.push(real),
            Ok(_) => {}
            Err(e) => {
                return Some(Writable {
                    path: file.clone(),
                    why: format!("it cannot be inspected ({e})"),
                });
            }
        }
        for p in &paths {
            if let Some(w) = inside_workspace(p, cwd) {
                return Some(w);
            }
            if let Some(w) = writable_chain(p, &counts) {
                return Some(w);
            }
        }
    }
    None
}

/// Rule 3.
fn inside_workspace(path: &Path, cwd: &Path) -> Option<Writable> {
    let cwd = lexical(cwd);
    if cwd == Path::new("/") {
        return None;
    }
    let real_cwd = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
    [cwd, real_cwd]
        .into_iter()
        .find(|w| path.starts_with(w))
        .map(|w| Writable {
            path: path.to_path_buf(),
            why: format!(
                "it lies inside the working directory {} (the agent's workspace)",
                w.display()
            ),
        })
}

/// Rules 1 and 2 for `path` and every directory above it.
fn writable_chain(path: &Path, counts: &impl Fn(u32) -> bool) -> Option<Writable> {
    let mut chain: Vec<PathBuf> = path.ancestors().map(Path::to_path_buf).collect();
    chain.reverse();
    for p in chain {
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) => {
                return Some(Writable {
                    path: p,
                    why: format!("it cannot be inspected ({e})"),
                });
            }
        };
        if meta.file_type().is_symlink() {
            // A link cannot be changed in place, only replaced, which its
            // directory's rules (checked above) decide; where it leads is
            // checked on the resolved path.
            continue;
        }
        let mode = meta.permissions().mode();
        if counts(meta.uid()) {
            return Some(Writable {
                path: p,
                why: format!(
                    "it belongs to uid {}, who can change it (mode {:o})",
                    meta.uid(),
                    mode & 0o7777
                ),
            });
        }
        let group_other_write = mode & 0o022 != 0;
        let sticky = meta.is_dir() && mode & 0o1000 != 0;
        if group_other_write && !sticky {
            return Some(Writable {
                path: p,
                why: format!(
                    "its group or others may write {} (mode {:o})",
                    if meta.is_dir() { "in it" } else { "it" },
                    mode & 0o7777
                ),
            });
        }
    }
    None
}

/// `path` made absolute and normalized without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    for c in abs.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// This process's user id.
fn own_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").map(|m| m.uid()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A root-owned, write-protected tree (these tests run as root in CI
    /// and here; as another user, the ownership half is what they check).
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let etc = dir.path().join("etc").join("toolgate");
        std::fs::create_dir_all(&etc).unwrap();
        let file = etc.join("policy.toml");
        std::fs::write(&file, "[rules]\n").unwrap();
        chmod(&file, 0o644);
        chmod(&etc, 0o755);
        chmod(&dir.path().join("etc"), 0o755);
        chmod(dir.path(), 0o755);
        (dir, file)
    }

    fn root() -> bool {
        own_uid() == Some(0)
    }

    #[test]
    fn a_file_owned_by_this_user_counts_for_a_hook_and_any_non_root_for_a_daemon() {
        let (_d, file) = tree();
        let w = agent_writable(
            std::slice::from_ref(&file),
            Writers::ThisUser,
            Path::new("/"),
        );
        if root() {
            // Root's own files never count.
            assert_eq!(w, None);
        } else {
            assert!(w.unwrap().why.contains("belongs to uid"));
        }
        let w = agent_writable(&[file], Writers::AnyButRoot, Path::new("/"));
        // The temp directory's ancestors (/tmp) are sticky and root's.
        assert_eq!(w.is_some(), !root());
    }

    #[test]
    fn group_or_other_write_on_the_file_or_a_directory_counts() {
        let (d, file) = tree();
        chmod(&file, 0o666);
        let w = agent_writable(
            std::slice::from_ref(&file),
            Writers::AnyButRoot,
            Path::new("/"),
        );
        let w = w.unwrap();
        if root() {
            assert_eq!(w.path, file);
            assert!(w.why.contains("group or others"), "{w:?}");
        }
        chmod(&file, 0o644);
        let etc = d.path().join("etc");
        chmod(&etc, 0o777);
        let w = agent_writable(
            std::slice::from_ref(&file),
            Writers::AnyButRoot,
            Path::new("/"),
        )
        .unwrap();
        if root() {
            assert_eq!(w.path, etc);
        }
        // A sticky directory's entries are replaced only by their owners.
        chmod(&etc, 0o1777);
        assert_eq!(
            agent_writable(&[file], Writers::AnyButRoot, Path::new("/")).is_some(),
            !root()
        );
    }

    #[test]
    fn inside_the_working_directory_always_counts() {
        let (d, file) = tree();
        let w = agent_writable(std::slice::from_ref(&file), Writers::ThisUser, d.path()).unwrap();
        assert!(w.why.contains("working directory"), "{w:?}");
        // `/` as the working directory (a service) is no workspace.
        assert_eq!(
            agent_writable(&[file], Writers::ThisUser, Path::new("/")).is_some(),
            !root()
        );
    }

    #[test]
    fn a_link_is_checked_as_written_and_where_it_leads() {
        let (d, file) = tree();
        // The link sits in a directory others may write: it can be swapped.
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        let link = open.join("policy.toml");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let w = agent_writable(
            std::slice::from_ref(&link),
            Writers::AnyButRoot,
            Path::new("/"),
        )
        .unwrap();
        if root() {
            assert_eq!(w.path, open);
        }
        // A protected link to a file others may write.
        chmod(&open, 0o755);
        chmod(&file, 0o646);
        let w = agent_writable(&[link], Writers::AnyButRoot, Path::new("/")).unwrap();
        if root() {
            assert_eq!(w.path, file);
        }
    }

    #[test]
    fn a_missing_file_counts() {
        let w = agent_writable(
            &[PathBuf::from("/nonexistent/toolgate/policy.toml")],
            Writers::AnyButRoot,
            Path::new("/"),
        )
        .unwrap();
        assert!(w.why.contains("cannot be inspected"), "{w:?}");
    }
}
