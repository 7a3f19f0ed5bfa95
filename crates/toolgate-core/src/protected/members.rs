//! Which paths are toolgate's own or a runtime's hook settings, and which of
//! them are secret: the static members (the same on every machine) and the
//! dynamic ones handed in ([`super::Protected`]).
//!
//! Names are chosen so ordinary work is not stopped: a path is a member for
//! what it *is* (a file name only toolgate uses, a settings file at the
//! place a runtime reads it), never for merely containing the word
//! "toolgate" — `crates/toolgate-core/src/engine.rs`, `docs/toolgate.db.md`
//! or `integrations/openclaw/` are no members.

use super::Protected;
use crate::paths::{Env, UNKNOWN_CWD, is_within, normalize_abs};
use crate::wildcard::path_match;

/// What a protected path is, for reasons a person reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum What {
    /// The policy in force, or a file it was loaded from.
    Policy,
    /// A toolgate configuration directory (`/etc/toolgate`, `~/.config/toolgate`).
    Config,
    /// toolgate's data directory.
    State,
    /// toolgate's database (approvals and the audit log).
    Database,
    /// A toolgate API token (agent, operator, link key).
    Token,
    /// The daemon's signing key.
    Key,
    /// The daemon's socket or run directory.
    Socket,
    /// The toolgate program.
    Binary,
    /// toolgate's service definition (systemd, launchd, init).
    Service,
    /// A runtime's hook settings (Claude Code, Codex, Gemini CLI, Cursor, OpenClaw).
    HookSettings,
}

impl What {
    /// A noun phrase for reasons.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            What::Policy => "toolgate's policy",
            What::Config => "toolgate's configuration",
            What::State => "toolgate's data directory",
            What::Database => "toolgate's database of approvals and audit records",
            What::Token => "a toolgate API token",
            What::Key => "the toolgate daemon's key",
            What::Socket => "the toolgate daemon's socket",
            What::Binary => "the toolgate program",
            What::Service => "toolgate's service definition",
            What::HookSettings => "an agent runtime's hook settings",
        }
    }
}

/// A protected path: what it is and whether reading it is stopped too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Member {
    /// What it is.
    pub what: What,
    /// Secret: reading it is stopped as well (tokens, keys, the database,
    /// whatever lies in a data directory).
    pub secret: bool,
}

const fn m(what: What, secret: bool) -> Member {
    Member { what, secret }
}

/// Substrings at least one of which every static member's path contains
/// (lowercased): a path with none of them is no static member, and most
/// paths are answered by this scan alone.
const MARKERS: &[&str] = &[
    "toolgate", "claude", "codex", "gemini", "cursor", "openclaw", ".token", "daemon.",
];

/// toolgate's files by name, wherever they are. Only names no other program
/// is likely to use: `toolgate.toml` (what `policy init` writes), the SQLite
/// database and its journals (not `toolgate.db.md`), the token files and the
/// daemon's key pair (the data directory holds them; a copy elsewhere is as
/// good to an attacker).
const BY_NAME: &[(&str, Member)] = &[
    ("toolgate.toml", m(What::Policy, false)),
    ("toolgate.db", m(What::Database, true)),
    ("toolgate.db-wal", m(What::Database, true)),
    ("toolgate.db-shm", m(What::Database, true)),
    ("toolgate.db-journal", m(What::Database, true)),
    ("operator.token", m(What::Token, true)),
    ("agent.token", m(What::Token, true)),
    ("link.token", m(What::Token, true)),
    ("daemon.key", m(What::Key, true)),
    ("daemon.pub", m(What::Key, false)),
];

/// Hook settings at the place each runtime reads them, in the home and in
/// any project: a path ending in these components. Claude's settings carry
/// `env` (which can redirect the hook) and `disableAllHooks`; Codex's
/// `config.toml` has `[features] hooks`; Gemini's `settings.json` has
/// `hooksConfig` and its `.gemini/.env` is loaded into the hook's
/// environment. Other files under `.claude/` (`CLAUDE.md`, `commands/`,
/// `agents/`) stay the agent's to write.
const SUFFIXES: &[&str] = &[
    "/.claude/settings.json",
    "/.claude/settings.local.json",
    "/.codex/hooks.json",
    "/.codex/config.toml",
    "/.codex/requirements.toml",
    "/.gemini/settings.json",
    "/.gemini/.env",
    "/.cursor/hooks.json",
];

/// Directories of hook scripts, in the home and in any project: everything
/// under them (a hook script rewritten runs as the hook).
const UNDER_ANYWHERE: &[&str] = &["/.claude/hooks"];

/// Relative to a home: files (exact) and trees (the directory and
/// everything under it), with what they are. OpenClaw keeps its config
/// beside its agents' workspace in `~/.openclaw`, so only the config files
/// and the extensions there are members, never the workspace.
const HOME_FILES: &[(&str, Member)] = &[
    ("/.claude.json", m(What::HookSettings, false)),
    ("/.openclaw/openclaw.json", m(What::HookSettings, false)),
    ("/.openclaw/openclaw.json5", m(What::HookSettings, false)),
];
const HOME_TREES: &[(&str, Member)] = &[
    ("/.config/toolgate", m(What::Config, false)),
    ("/.local/state/toolgate", m(What::State, false)),
    ("/.openclaw/extensions", m(What::HookSettings, false)),
    ("/.config/openclaw", m(What::HookSettings, false)),
];
/// Home-relative globs (one component wildcards).
const HOME_GLOBS: &[(&str, Member)] = &[
    ("/.openclaw/*.json", m(What::HookSettings, false)),
    ("/.openclaw/*.json5", m(What::HookSettings, false)),
];

/// Absolute trees: toolgate's system places and the system-managed hook
/// settings of each runtime (the managed settings that a project cannot
/// switch off; in same-user mode the agent cannot write them anyway, but a
/// root agent could).
const ABS_TREES: &[(&str, Member)] = &[
    ("/etc/toolgate", m(What::Config, false)),
    ("/var/lib/toolgate", m(What::State, false)),
    ("/run/toolgate", m(What::Socket, false)),
    ("/etc/claude-code", m(What::HookSettings, false)),
    (
        "/library/application support/claudecode",
        m(What::HookSettings, false),
    ),
    ("/etc/codex", m(What::HookSettings, false)),
    ("/etc/gemini-cli", m(What::HookSettings, false)),
    ("/etc/cursor", m(What::HookSettings, false)),
];

/// Data directories: whatever lies inside them is secret (the database,
/// tokens, the daemon's key) except the daemon's public key; the directory
/// itself may be listed.
const STATE_TREES_HOME: &[&str] = &["/.local/state/toolgate"];
const STATE_TREES_ABS: &[&str] = &["/var/lib/toolgate"];

/// Globs over whole paths (tested only on paths containing `toolgate`):
/// the program on any `bin` directory (replacing it replaces the gate),
/// and its service definitions — systemd units and drop-ins named
/// `toolgate*`, launchd plists, init scripts, supervisor programs, the
/// service's cgroup (`cgroup.freeze` pauses it).
const GLOBS: &[(&str, Member)] = &[
    ("**/bin/toolgate", m(What::Binary, false)),
    ("**/systemd/**/toolgate*", m(What::Service, false)),
    ("**/systemd/**/toolgate*/**", m(What::Service, false)),
    ("**/launchagents/*toolgate*", m(What::Service, false)),
    ("**/launchdaemons/*toolgate*", m(What::Service, false)),
    ("/etc/init.d/toolgate*", m(What::Service, false)),
    ("/etc/supervisor/**/toolgate*", m(What::Service, false)),
    ("/sys/fs/cgroup/**/toolgate*", m(What::Service, false)),
    ("/sys/fs/cgroup/**/toolgate*/**", m(What::Service, false)),
];

/// Directories that hold hook settings wherever they are: removing,
/// moving or re-permissioning one of them as a tree takes the settings
/// with it.
pub(super) const HOOK_DIRS: &[&str] = &[".claude", ".codex", ".gemini", ".cursor", ".openclaw"];

/// File names tried inside a glob's directory (`rm .claude/*.json`), the
/// static members' last components.
pub(super) const PROBES: &[&str] = &[
    "toolgate.toml",
    "toolgate.db",
    "toolgate.db-wal",
    "operator.token",
    "agent.token",
    "link.token",
    "daemon.key",
    "settings.json",
    "settings.local.json",
    "hooks.json",
    "config.toml",
    ".env",
    ".claude.json",
    "openclaw.json",
    "toolgate",
    "toolgate.service",
];

/// Whether a glob's last component spells enough of a name to aim at it:
/// four or more literal characters (`*.toml`, `tool?ate.db`, `*.token`),
/// not a bare wildcard (`*`, `*.db`, `?`).
fn names_a_marker(last: &str) -> bool {
    last.chars()
        .filter(|c| !matches!(c, '*' | '?' | '[' | ']'))
        .count()
        >= 4
}

/// Whether `path` has the components `dir` followed by more (`…/d/x`).
fn contains_dir(path: &str, dir: &str) -> bool {
    path.match_indices(dir)
        .any(|(i, _)| path.as_bytes().get(i + dir.len()) == Some(&b'/'))
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether `path` ends with the components `suffix` (`/a/b`), so
/// `x/.claude/settings.json` matches and `x.claude/settings.json` does not.
fn ends_with_components(path: &str, suffix: &str) -> bool {
    path.ends_with(suffix)
}

fn lowered(path: &str) -> std::borrow::Cow<'_, str> {
    if path.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(path.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(path)
    }
}

/// The static member `abs` (absolute, normalized) is, if any. Matching is
/// case-insensitive: on a case-insensitive file system (macOS) `.Claude`
/// is `.claude`, and elsewhere such a name is no ordinary file.
pub(super) fn static_member(abs: &str, env: &Env) -> Option<Member> {
    let path = lowered(abs);
    let path = path.as_ref();
    if !MARKERS.iter().any(|k| path.contains(k)) {
        return None;
    }
    let name = basename(path);
    if let Some((_, member)) = BY_NAME.iter().find(|(n, _)| *n == name) {
        return Some(*member);
    }
    if SUFFIXES.iter().any(|s| ends_with_components(path, s)) {
        return Some(m(What::HookSettings, false));
    }
    if UNDER_ANYWHERE
        .iter()
        .any(|d| path.ends_with(d) || contains_dir(path, d))
    {
        return Some(m(What::HookSettings, false));
    }
    for (dir, member) in ABS_TREES {
        if is_within(path, dir) {
            let secret = STATE_TREES_ABS.contains(dir) && path != *dir && name != "daemon.pub";
            return Some(Member {
                secret: member.secret || secret,
                ..*member
            });
        }
    }
    if let Some(home) = env.home_of(abs) {
        let rest = &path[home.len().min(path.len())..];
        if let Some((_, member)) = HOME_FILES.iter().find(|(f, _)| *f == rest) {
            return Some(*member);
        }
        for (dir, member) in HOME_TREES {
            if is_within(rest, dir) {
                let secret = STATE_TREES_HOME.contains(dir) && rest != *dir && name != "daemon.pub";
                return Some(Member {
                    secret: member.secret || secret,
                    ..*member
                });
            }
        }
        if let Some((_, member)) = HOME_GLOBS.iter().find(|(g, _)| path_match(g, rest)) {
            return Some(*member);
        }
    }
    if path.contains("toolgate")
        && let Some((_, member)) = GLOBS.iter().find(|(g, _)| path_match(g, path))
    {
        return Some(*member);
    }
    None
}

impl Protected {
    /// The member `abs` (absolute, normalized) is, static or handed in.
    pub(crate) fn member(&self, abs: &str, env: &Env) -> Option<Member> {
        // The more specific description wins (`agent.token` in a data
        // directory handed in is a token); secret if either says so.
        match (static_member(abs, env), self.dynamic_member(abs)) {
            (Some(s), Some(d)) => Some(Member {
                what: s.what,
                secret: s.secret || d.secret,
            }),
            (s, d) => s.or(d),
        }
    }

    fn dynamic_member(&self, abs: &str) -> Option<Member> {
        if self.files.iter().any(|f| f == abs) {
            return Some(m(What::Policy, false));
        }
        if self.sockets.iter().any(|s| s == abs) {
            return Some(m(What::Socket, false));
        }
        for dir in &self.data_dirs {
            if is_within(abs, dir) {
                let secret = abs != dir && basename(abs) != "daemon.pub";
                return Some(m(What::State, secret));
            }
        }
        // A relative path in a call that did not say where it runs: the
        // policy's own file name could be the policy.
        if let Some(rest) = abs.strip_prefix(UNKNOWN_CWD)
            && rest.starts_with('/')
            && self
                .files
                .iter()
                .any(|f| basename(f) == basename(rest) && !basename(rest).is_empty())
        {
            return Some(m(What::Policy, false));
        }
        None
    }

    /// The member inside the directory `abs`, if it holds one: removing,
    /// moving or re-permissioning `abs` as a tree reaches it. A runtime's
    /// settings directory (`.claude`, `.codex`, …) anywhere, a directory
    /// above one of the anchored members (`~/.local` holds the data
    /// directory, a project holds the policy handed in).
    pub(crate) fn member_inside(&self, abs: &str, env: &Env) -> Option<Member> {
        for f in self.files.iter().chain(&self.sockets) {
            if f != abs && is_within(f, abs) {
                return Some(m(What::Policy, false));
            }
        }
        for d in &self.data_dirs {
            if d != abs && is_within(d, abs) {
                return Some(m(What::State, true));
            }
        }
        let path = lowered(abs);
        let path = path.as_ref();
        if HOOK_DIRS.contains(&basename(path)) {
            return Some(m(What::HookSettings, false));
        }
        for (dir, member) in ABS_TREES {
            if *dir != path && is_within(dir, path) {
                return Some(*member);
            }
        }
        let home = env.home_of(abs).or_else(|| {
            // The home itself and the directories above homes (`/home`).
            (is_within(&env.home, abs)).then(|| env.home.clone())
        })?;
        let rest = if home.len() <= path.len() {
            &path[home.len()..]
        } else {
            ""
        };
        let anchored = HOME_FILES
            .iter()
            .chain(HOME_TREES)
            .map(|(p, member)| (*p, *member));
        for (anchor, member) in anchored {
            if anchor != rest && is_within(anchor, if rest.is_empty() { "/" } else { rest }) {
                return Some(member);
            }
        }
        None
    }

    /// The member a path known only in part may be: `tail` is the literal
    /// end of a word whose beginning is known only at run time
    /// (`$DIR/toolgate.toml`, `"$(git rev-parse --show-toplevel)/.claude/settings.json"`).
    /// Only the members that are members wherever they lie can be named
    /// this way: a file name or a settings path.
    pub(crate) fn member_by_tail(&self, tail: &str) -> Option<Member> {
        let path = lowered(tail);
        let path = path.as_ref();
        let name = basename(path);
        if name.is_empty() {
            return None;
        }
        if let Some((_, member)) = BY_NAME.iter().find(|(n, _)| *n == name) {
            return Some(*member);
        }
        if tail.contains('/') && SUFFIXES.iter().any(|s| ends_with_components(path, s)) {
            return Some(m(What::HookSettings, false));
        }
        if UNDER_ANYWHERE.iter().any(|d| contains_dir(path, d)) {
            return Some(m(What::HookSettings, false));
        }
        if tail.contains('/') && self.files.iter().any(|f| f.ends_with(tail)) {
            return Some(m(What::Policy, false));
        }
        None
    }

    /// The member a glob over paths (`/home/dev/.claude/*.json`,
    /// `/home/dev/proj/toolgate.t?ml`) may name: the paths its wildcards
    /// produce filled with nothing or one character, a glob over a whole
    /// directory standing for the directory, and each member's file name
    /// tried in the glob's directory.
    pub(crate) fn member_by_glob(&self, glob: &str, env: &Env) -> Option<Member> {
        // A secret it may name outweighs the directory it lists.
        let mut found: Option<Member> = None;
        let keep = |found: &mut Option<Member>, m: Member| {
            if found.is_none_or(|f| m.secret && !f.secret) {
                *found = Some(m);
            }
            m.secret
        };
        for c in crate::catalogue::sets::candidates(glob) {
            if let Some(m) = self.member(&c, env)
                && keep(&mut found, m)
            {
                return found;
            }
        }
        let (dir, last) = match glob.rsplit_once('/') {
            Some(("", l)) => ("/", l),
            Some((d, l)) => (d, l),
            None => return None,
        };
        if found.is_none() && crate::wildcard::is_glob(dir) {
            // A wildcard in a directory: try each member suffix under the
            // literal directory before it (`/p/.cl*/settings.json`).
            let literal = &glob[..glob.find(['*', '?', '[']).unwrap_or(glob.len())];
            let base = literal.rsplit_once('/').map_or("/", |(b, _)| b);
            let mut tried = String::with_capacity(base.len() + 32);
            for s in SUFFIXES {
                tried.clear();
                tried.push_str(base.trim_end_matches('/'));
                tried.push_str(s);
                if path_match(glob, &tried)
                    && let Some(found) = self.member(&tried, env)
                {
                    return Some(found);
                }
            }
            return None;
        }
        let dynamic_names = self.files.iter().map(|f| basename(f));
        for probe in PROBES.iter().copied().chain(dynamic_names) {
            // A wildcard never matches a leading dot; the name must match
            // the last component before a path is made of it.
            if (probe.starts_with('.') && !last.starts_with('.')) || !path_match(last, probe) {
                continue;
            }
            // A name toolgate uses anywhere (`toolgate.db`) is a copy
            // outside toolgate's own places: a bare wildcard there
            // (`rm -rf build/*`) is not taken to name it; one that spells
            // enough of it (`toolgate.d?`, `*.token`, `*.toml`) is.
            if BY_NAME.iter().any(|(n, _)| *n == probe)
                && !names_a_marker(last)
                && self.member(dir, env).is_none()
            {
                continue;
            }
            let cand = format!("{}/{probe}", dir.trim_end_matches('/'));
            if path_match(glob, &cand)
                && let Some(m) = self.member(&cand, env)
                && keep(&mut found, m)
            {
                return found;
            }
        }
        found
    }
}

/// `abs` as the home-relative form the home members are written in, for
/// text searches (`/home/dev/.config/toolgate/x.toml` → `~/.config/toolgate/x.toml`).
pub(super) fn home_spelling(abs: &str, env: &Env) -> Option<String> {
    let home = env.home_of(abs)?;
    Some(format!("~{}", &abs[home.len()..]))
}

/// Normalizes a handed-in path (absolute or not) the way calls' paths are.
pub(super) fn normalized(path: &str) -> String {
    normalize_abs(path)
}
