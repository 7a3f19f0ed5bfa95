//! Lexical path resolution: `~`, `$HOME`, `${HOME}`, `$PWD`, `.` and `..`,
//! relative to a working directory. Never touches the file system.

/// What relative paths and `~` resolve against. Handed in by the caller so
/// the core never reads the environment itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// The user's home directory (`~`, `$HOME`).
    pub home: String,
    /// The working directory relative paths resolve against.
    pub cwd: String,
    /// The workspace: the tree the agent may work in freely.
    pub workspace: String,
    /// Further homes known by name: the gate process's own when the call
    /// brought the agent's. Every user's home counts as a home anyway
    /// ([`Env::home_of`]); these are the ones outside the usual places.
    pub other_homes: Vec<String>,
}

/// The working directory of a call that did not say where it runs (a
/// daemon cannot know the agent's): a directory no rule's set names, so a
/// relative path in such a call is judged as being somewhere unknown,
/// never in the daemon's own directory, and says so in every reason.
pub const UNKNOWN_CWD: &str = "/(cwd unknown)";

/// The workspace when neither the call nor the policy names one: a
/// directory that contains nothing, so no path is inside the workspace.
pub const UNKNOWN_WORKSPACE: &str = "/(workspace unknown)";

/// Where users' homes live: `<root>/<user>`.
const HOME_ROOTS: &[&str] = &["/home", "/Users", "/var/home"];

impl Env {
    /// An environment whose workspace is its working directory.
    pub fn new(home: impl Into<String>, cwd: impl Into<String>) -> Env {
        let cwd = normalize_abs(&cwd.into());
        Env {
            home: normalize_abs(&home.into()),
            workspace: cwd.clone(),
            cwd,
            other_homes: Vec::new(),
        }
    }

    /// An environment for calls that may not say where they run: a call
    /// without `cwd` is judged in [`UNKNOWN_CWD`], with no workspace (unless
    /// the policy names one).
    pub fn cwd_unknown(home: impl Into<String>) -> Env {
        Env {
            home: normalize_abs(&home.into()),
            cwd: UNKNOWN_CWD.to_string(),
            workspace: UNKNOWN_WORKSPACE.to_string(),
            other_homes: Vec::new(),
        }
    }

    /// The same environment for an agent whose home is `home` (absolute):
    /// `~` resolves there, and the previous home stays a home.
    pub fn with_home(&self, home: &str) -> Env {
        let home = normalize_abs(home);
        let mut env = self.clone();
        if home != env.home {
            let old = std::mem::replace(&mut env.home, home);
            if !env.other_homes.contains(&old) {
                env.other_homes.push(old);
            }
        }
        env
    }

    /// The home directory `abs` (absolute, normalized) lies in, if any:
    /// the agent's home, the other known homes, `/root`, or any user's
    /// `/home/<user>`, `/Users/<user>`, `/var/home/<user>` — the longest
    /// that contains it. `/` is never a home.
    pub fn home_of(&self, abs: &str) -> Option<String> {
        let known = std::iter::once(&self.home)
            .chain(&self.other_homes)
            .filter(|h| h.as_str() != "/" && is_within(abs, h))
            .max_by_key(|h| h.len());
        if let Some(h) = known {
            return Some(h.clone());
        }
        if is_within(abs, "/root") {
            return Some("/root".to_string());
        }
        HOME_ROOTS.iter().find_map(|root| {
            let rest = abs.strip_prefix(root)?.strip_prefix('/')?;
            let user = rest.split('/').next().filter(|u| !u.is_empty())?;
            Some(format!("{root}/{user}"))
        })
    }

    /// The same environment with another working directory (a call's `cwd`,
    /// or a `cd` inside a shell command). The workspace stays.
    pub fn with_cwd(&self, cwd: &str) -> Env {
        Env {
            home: self.home.clone(),
            cwd: self.resolve(cwd),
            workspace: self.workspace.clone(),
            other_homes: self.other_homes.clone(),
        }
    }

    /// Resolves a path as the shell and the kernel would see it, lexically:
    /// tilde and `$HOME` / `${HOME}` / `$PWD` expansion, then made absolute
    /// against `cwd`, then `.` and `..` folded.
    pub fn resolve(&self, raw: &str) -> String {
        let expanded = self.expand_prefix(raw.trim());
        if expanded.starts_with('/') {
            normalize_abs(&expanded)
        } else {
            normalize_abs(&format!("{}/{}", self.cwd, expanded))
        }
    }

    /// Resolves `raw` as [`Env::resolve`] does, from the directory `cwd`
    /// instead of this environment's working directory.
    pub fn resolve_from(&self, cwd: &str, raw: &str) -> String {
        let expanded = self.expand_prefix(raw.trim());
        if expanded.starts_with('/') {
            normalize_abs(&expanded)
        } else {
            normalize_abs(&format!("{cwd}/{expanded}"))
        }
    }

    fn expand_prefix(&self, raw: &str) -> String {
        for var in ["${HOME}", "$HOME"] {
            if let Some(rest) = raw.strip_prefix(var)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                return format!("{}{}", self.home, rest);
            }
        }
        for var in ["${PWD}", "$PWD"] {
            if let Some(rest) = raw.strip_prefix(var)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                return format!("{}{}", self.cwd, rest);
            }
        }
        if let Some(rest) = raw.strip_prefix('~') {
            let (user, tail) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            if user.is_empty() {
                return format!("{}{}", self.home, tail);
            }
            if user == "+" {
                return format!("{}{}", self.cwd, tail);
            }
            if user
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
            {
                let base = if user == "root" {
                    "/root".to_string()
                } else {
                    format!("/home/{user}")
                };
                return format!("{base}{tail}");
            }
        }
        raw.to_string()
    }

    /// True when `abs` (already resolved) is the workspace or inside it.
    pub fn in_workspace(&self, abs: &str) -> bool {
        is_within(abs, &self.workspace)
    }
}

/// True when `path` equals `dir` or lies under it (both absolute, normalized).
pub fn is_within(path: &str, dir: &str) -> bool {
    if dir == "/" {
        return path.starts_with('/');
    }
    path == dir || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

/// Folds `.`, `..` and repeated slashes in an absolute path; `..` at the root
/// stays at the root, as the kernel does.
pub fn normalize_abs(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return "/".to_string();
    }
    let mut out = String::with_capacity(path.len());
    for p in parts {
        out.push('/');
        out.push_str(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env::new("/home/dev", "/home/dev/proj")
    }

    #[test]
    fn an_unknown_cwd_puts_relative_paths_nowhere_known() {
        let e = Env::cwd_unknown("/home/dev");
        assert_eq!(e.cwd, UNKNOWN_CWD);
        assert_eq!(e.resolve("build"), "/(cwd unknown)/build");
        assert_eq!(e.resolve("~/x"), "/home/dev/x");
        // Climbing out of it reads as climbing to the root: the strict reading.
        assert_eq!(e.resolve("../../etc/passwd"), "/etc/passwd");
        for p in ["/(cwd unknown)/build", "/home/dev/proj", "/tmp/x", "/"] {
            assert!(!e.in_workspace(p), "{p} is in no workspace");
        }
        assert_eq!(e.with_cwd("/srv/app").resolve("x"), "/srv/app/x");
    }

    #[test]
    fn resolves_home_forms() {
        let e = env();
        assert_eq!(e.resolve("~"), "/home/dev");
        assert_eq!(e.resolve("~/"), "/home/dev");
        assert_eq!(e.resolve("$HOME/.ssh"), "/home/dev/.ssh");
        assert_eq!(e.resolve("${HOME}"), "/home/dev");
        assert_eq!(e.resolve("~root/x"), "/root/x");
        assert_eq!(e.resolve("~alice"), "/home/alice");
        assert_eq!(e.resolve("$HOMEX"), "/home/dev/proj/$HOMEX");
    }

    #[test]
    fn resolves_relative_and_dots() {
        let e = env();
        assert_eq!(e.resolve("build"), "/home/dev/proj/build");
        assert_eq!(e.resolve("./a/../b"), "/home/dev/proj/b");
        assert_eq!(e.resolve("../../.."), "/");
        assert_eq!(e.resolve("/../../etc//passwd"), "/etc/passwd");
        assert_eq!(e.resolve("."), "/home/dev/proj");
    }

    #[test]
    fn workspace_containment() {
        let e = env();
        assert!(e.in_workspace("/home/dev/proj"));
        assert!(e.in_workspace("/home/dev/proj/src/a.rs"));
        assert!(!e.in_workspace("/home/dev/project2"));
        assert!(!e.in_workspace("/home/dev"));
    }

    #[test]
    fn every_users_home_is_a_home() {
        let e = Env::new("/root", "/srv/app");
        assert_eq!(e.home_of("/root/.ssh/id_rsa").as_deref(), Some("/root"));
        assert_eq!(
            e.home_of("/home/dev/.aws/credentials").as_deref(),
            Some("/home/dev")
        );
        assert_eq!(e.home_of("/home/dev").as_deref(), Some("/home/dev"));
        assert_eq!(e.home_of("/Users/alice/x").as_deref(), Some("/Users/alice"));
        assert_eq!(
            e.home_of("/var/home/u/.config").as_deref(),
            Some("/var/home/u")
        );
        assert_eq!(e.home_of("/home"), None);
        assert_eq!(e.home_of("/srv/app/x"), None);
        assert_eq!(e.home_of("/rootkit"), None);
        // An agent whose home lies under /tmp: that is its home, not a temp dir.
        let agent = e.with_home("/tmp/agent-home");
        assert_eq!(agent.resolve("~/.ssh"), "/tmp/agent-home/.ssh");
        assert_eq!(
            agent.home_of("/tmp/agent-home/.ssh/k").as_deref(),
            Some("/tmp/agent-home")
        );
        assert_eq!(agent.home_of("/root/x").as_deref(), Some("/root"));
        assert_eq!(agent.home_of("/tmp/other"), None);
        // A home of `/` makes nothing a home.
        assert_eq!(Env::new("/", "/w").home_of("/etc/passwd"), None);
    }
}
