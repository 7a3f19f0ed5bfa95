//! One protected set, consulted by every analyzer alike (docs/protected.md):
//! toolgate's own files, places, process and port, and every runtime's hook
//! settings.
//!
//! Each analyzer — the shell analyzer's commands and redirections,
//! interpreter one-liners, file tools, patches, MCP tools, fetch and browser
//! tools — reduces a call to *effects on targets*: an [`Access`] to a path,
//! a request to a URL, a signal to a process, a listener on a port. This
//! module says what each effect on the protected set calls for:
//!
//! - writing, overwriting, deleting, moving, linking or re-permissioning a
//!   member, or replacing the toolgate program: **block**, R4 (no approval
//!   unlocks it: the agent may not change what guards it);
//! - reading a secret member (tokens, the daemon's key, the database,
//!   anything in a data directory): **block**;
//! - reading any other member with a program known to only read it
//!   (`cat toolgate.toml`): allowed;
//! - naming a member with a program whose effect on it is not known:
//!   **escalate** (block for a secret); naming one in interpreter code,
//!   whose effect cannot be read reliably: **block**;
//! - a request to one of the daemon's operator endpoints (approve, deny,
//!   vote, bypass, operators, sessions, links) by any client: **block**;
//! - stopping, pausing, disabling or replacing the gate's process or
//!   service: **block**;
//! - a new listener on the daemon's port: **escalate**.
//!
//! Static members are the same on every machine (`members.rs`); the
//! dynamic ones — the policy in force and every file it was loaded from,
//! data directories, the daemon's socket and port — are handed in
//! ([`Protected`]), since the core does no I/O.
//!
//! In same-user mode this is judgement only: a route no analyzer
//! recognizes (a script the agent wrote, then ran) is not seen. Separated
//! mode is the hard guarantee.

mod code;
mod effects;
mod gate;
mod members;
#[cfg(test)]
mod tests;

use crate::model::{RiskClass, Verdict};
use crate::paths::Env;
use crate::shell::ShellAnalysis;
use members::{Member, What};

pub(crate) use effects::command_hits;
pub(crate) use gate::analysis_hits;

/// The daemon's default TCP port (`toolgate serve` listens on
/// 127.0.0.1:7878): always protected, with any port handed in.
pub const DEFAULT_PORT: u16 = 7878;

/// The protected set's members known only where toolgate runs: the policy
/// in force and the files it loaded, data directories, the daemon's Unix
/// socket, TCP ports and process id. The static members (runtimes' hook settings,
/// toolgate's files by name and its usual places) need no handing in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    files: Vec<String>,
    data_dirs: Vec<String>,
    sockets: Vec<String>,
    ports: Vec<u16>,
    pids: Vec<u32>,
}

/// Keeps `path` (made absolute lexically) in `list` once.
fn add(list: &mut Vec<String>, path: &str) {
    let p = path.trim();
    if !p.starts_with('/') {
        return;
    }
    let p = members::normalized(p);
    if !list.contains(&p) {
        list.push(p);
    }
}

impl Protected {
    /// No dynamic members: only the static ones (and [`DEFAULT_PORT`]).
    pub fn new() -> Protected {
        Protected::default()
    }

    /// Also protects a file toolgate reads its rules from (the policy in
    /// force, a profile it names), whatever its name or place. An absolute
    /// path; relative ones are ignored, since the core cannot know what they
    /// are relative to.
    pub fn file(mut self, path: &str) -> Protected {
        add(&mut self.files, path);
        self
    }

    /// Also protects a data directory (absolute): the directory and
    /// everything under it, whose contents are secret (reading them is
    /// stopped too) except the daemon's public key.
    pub fn data_dir(mut self, dir: &str) -> Protected {
        add(&mut self.data_dirs, dir);
        self
    }

    /// Also protects the daemon's Unix socket (absolute path).
    pub fn socket(mut self, path: &str) -> Protected {
        add(&mut self.sockets, path);
        self
    }

    /// Also protects a TCP port the daemon listens on: a new listener on
    /// it is escalated.
    pub fn port(mut self, port: u16) -> Protected {
        if port != 0 && port != DEFAULT_PORT && !self.ports.contains(&port) {
            self.ports.push(port);
        }
        self
    }

    /// Also protects the daemon's process by its id: a signal sent to it by
    /// number (`kill -STOP 4242`, after `pgrep` in an earlier call) is
    /// stopped like one sent by name. Ids 0 and 1 are never taken (they
    /// name a process group and init, which other rules judge).
    pub fn pid(mut self, pid: u32) -> Protected {
        if pid > 1 && !self.pids.contains(&pid) {
            self.pids.push(pid);
        }
        self
    }

    /// Both sets' members.
    pub fn merged(mut self, other: &Protected) -> Protected {
        for f in &other.files {
            add(&mut self.files, f);
        }
        for d in &other.data_dirs {
            add(&mut self.data_dirs, d);
        }
        for s in &other.sockets {
            add(&mut self.sockets, s);
        }
        for p in &other.ports {
            self = self.port(*p);
        }
        for p in &other.pids {
            self = self.pid(*p);
        }
        self
    }

    /// The protected files handed in (absolute).
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The data directories handed in (absolute).
    pub fn data_dirs(&self) -> &[String] {
        &self.data_dirs
    }

    /// The daemon's sockets handed in (absolute).
    pub fn sockets(&self) -> &[String] {
        &self.sockets
    }

    /// The daemon's process ids handed in.
    pub fn pids(&self) -> &[u32] {
        &self.pids
    }

    /// Every protected port: [`DEFAULT_PORT`] and those handed in.
    pub fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        std::iter::once(DEFAULT_PORT).chain(self.ports.iter().copied())
    }
}

/// What an effect does to a path: the effect vocabulary every analyzer's
/// findings end in (ARCHITECTURE.md, `protected`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads it.
    Read,
    /// Creates or changes it.
    Write,
    /// Replaces or empties its content (`>`, `truncate`, `cp /dev/null`).
    Overwrite,
    /// Removes it.
    Delete,
    /// Moves it away (or renames it).
    Move,
    /// Makes a link to it or at its place.
    Link,
    /// Changes its permissions, owner or attributes.
    Chmod,
    /// Puts another program at its place.
    ExecReplace,
    /// A program whose effect on it is not known names it.
    Unknown,
    /// Interpreter code names it (its effect cannot be read reliably).
    Code,
}

impl Access {
    fn verb(self) -> &'static str {
        match self {
            Access::Read => "reads",
            Access::Write => "writes",
            Access::Overwrite => "overwrites",
            Access::Delete => "deletes",
            Access::Move => "moves",
            Access::Link => "links",
            Access::Chmod => "changes the permissions of",
            Access::ExecReplace => "replaces",
            Access::Unknown => "names",
            Access::Code => "names in code",
        }
    }

    /// Whether the effect changes the target.
    pub(crate) fn changes(self) -> bool {
        !matches!(self, Access::Read | Access::Unknown | Access::Code)
    }

    /// The access a file tool's path has (`normalize`), as an effect.
    pub(crate) fn of_tool(a: crate::normalize::Access) -> Access {
        match a {
            crate::normalize::Access::Read => Access::Read,
            crate::normalize::Access::Write => Access::Write,
            crate::normalize::Access::Delete => Access::Delete,
        }
    }
}

/// A finding of the protected set: what it calls for and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub verdict: Verdict,
    pub class: RiskClass,
    /// `protected.<kind>`, the rule name recorded with the verdict.
    pub rule: &'static str,
    /// A sentence fragment: what the call does to what.
    pub reason: String,
}

impl Hit {
    pub(crate) fn block(rule: &'static str, reason: String) -> Hit {
        Hit {
            verdict: Verdict::Block,
            class: RiskClass::R4,
            rule,
            reason,
        }
    }

    pub(crate) fn escalate(rule: &'static str, reason: String) -> Hit {
        Hit {
            verdict: Verdict::Escalate,
            class: RiskClass::R3,
            rule,
            reason,
        }
    }

    fn key(&self) -> (Verdict, RiskClass) {
        (self.verdict, self.class)
    }
}

/// Keeps the strictest of two findings.
pub(crate) fn stricter(a: Option<Hit>, b: Option<Hit>) -> Option<Hit> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.key() > a.key() { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// How sure the analyzer is that a target is the member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Certainty {
    /// The path is the member (or holds it).
    Certain,
    /// A glob or a value known only at run time may name it.
    Maybe,
}

/// What `access` to `member` at `shown` calls for.
pub(crate) fn verdict(
    access: Access,
    member: Member,
    certainty: Certainty,
    shown: &str,
) -> Option<Hit> {
    let what = member.what.describe();
    let target = format!("{shown} ({what})");
    match access {
        Access::Read if member.secret && certainty == Certainty::Maybe => Some(Hit::escalate(
            "protected.read-secret",
            format!("may read {target}, a secret toolgate keeps from the agent"),
        )),
        Access::Read if member.secret => Some(Hit::block(
            "protected.read-secret",
            format!("reads {target}, a secret toolgate keeps from the agent"),
        )),
        Access::Read => None,
        Access::Unknown if member.secret => Some(Hit::block(
            "protected.read-secret",
            format!("names {target}, a secret toolgate keeps from the agent"),
        )),
        Access::Unknown => Some(Hit::escalate(
            "protected.named",
            format!(
                "names {target} with a program whose effect on it is not known; only a person \
                 may change what guards the agent"
            ),
        )),
        Access::Code => Some(Hit::block(
            "protected.code",
            format!(
                "runs code that names {target}; what code does to a file it names cannot be \
                 read, and the agent may not change what guards it or read its secrets"
            ),
        )),
        _ if certainty == Certainty::Maybe => Some(Hit::escalate(
            "protected.write",
            format!(
                "{} what may be {target}, known only at run time",
                access.verb()
            ),
        )),
        _ if member.what == What::Binary => Some(Hit::block(
            "protected.process",
            format!(
                "{} {target}: replacing or removing the gate is not the agent's to do",
                access.verb()
            ),
        )),
        _ => Some(Hit::block(
            "protected.write",
            format!(
                "{} {target}; the agent may not change what guards it",
                access.verb()
            ),
        )),
    }
}

impl Protected {
    /// What `access` to the resolved path `abs` calls for. `tree`: the
    /// effect reaches everything under `abs` (`rm -r`, `mv`, `chmod -R`),
    /// so a directory holding a member counts as the member.
    pub(crate) fn judge_path(
        &self,
        access: Access,
        abs: &str,
        tree: bool,
        env: &Env,
    ) -> Option<Hit> {
        if crate::wildcard::is_glob(abs) {
            // A glob whose last wildcard is followed by a member's name or
            // settings path (`/p/**/toolgate.toml`, `/x/*/.claude/settings.json`)
            // names that member wherever the wildcard lands.
            let tail = &abs[abs.rfind(['*', '?', ']']).map_or(0, |i| i + 1)..];
            if let Some(member) = tail.find('/').and_then(|i| self.member_by_tail(&tail[i..])) {
                return verdict(access, member, Certainty::Certain, abs);
            }
            let member = self.member_by_glob(abs, env).or_else(|| {
                (tree && access.changes())
                    .then(|| {
                        crate::catalogue::sets::candidates(abs)
                            .iter()
                            .find_map(|c| self.member_inside(c, env))
                    })
                    .flatten()
            })?;
            // Reading through a glob that may name a secret reads it; a
            // change through a glob aimed at a member (a literal start of
            // its name, `toolgate.t?ml`, or inside a settings or toolgate
            // directory, `.claude/*.json`) reaches it whenever it exists.
            let certainty = if access == Access::Read || self.glob_aimed(abs, env) {
                Certainty::Certain
            } else {
                Certainty::Maybe
            };
            return verdict(access, member, certainty, abs);
        }
        if let Some(member) = self.member(abs, env) {
            // Reading a data directory as a tree reads its secrets.
            let secret = member.secret || (tree && member.what == What::State);
            let member = Member { secret, ..member };
            return verdict(access, member, Certainty::Certain, abs);
        }
        if matches!(access, Access::Unknown | Access::Chmod)
            && let Some(member) = self.member_inside_static(abs, env)
        {
            // A runtime's settings directory handed to an unknown program
            // (`docker run -v ~/.claude:/cfg`), or made unreadable as a
            // whole (`chmod 000 ~/.claude`).
            return verdict(access, member, Certainty::Certain, abs);
        }
        if tree && access == Access::Read && self.may_hold_state(abs, env) {
            // A tree holding a data directory: its secrets may be read.
            return self
                .member_inside(abs, env)
                .filter(|m| m.what == What::State)
                .and_then(|m| {
                    let shown = format!("{abs}, which holds {}", m.what.describe());
                    let m = Member { secret: true, ..m };
                    verdict(Access::Read, m, Certainty::Maybe, &shown)
                });
        }
        if tree
            && access.changes()
            && let Some(member) = self.member_inside(abs, env)
        {
            let shown = format!("{abs}, which holds {}", member.what.describe());
            return verdict(
                access,
                Member {
                    what: member.what,
                    secret: false,
                },
                Certainty::Certain,
                &shown,
            )
            .map(|mut h| {
                // The member's description is already in `shown`.
                h.reason = h
                    .reason
                    .replace(&format!(" ({})", member.what.describe()), "");
                h
            });
        }
        None
    }

    /// Whether the directory `abs` may hold a data directory (cheap, no
    /// allocation): a handed-in one under it, `/var/lib` and above, a
    /// home's `.local` or `.local/state`, a home, or a directory of homes.
    fn may_hold_state(&self, abs: &str, env: &Env) -> bool {
        self.data_dirs
            .iter()
            .any(|d| d != abs && crate::paths::is_within(d, abs))
            || (abs != "/var/lib/toolgate" && crate::paths::is_within("/var/lib/toolgate", abs))
            || abs.ends_with("/.local")
            || abs.ends_with("/.local/state")
            || abs == env.home
            || env.other_homes.iter().any(|h| h == abs)
            || abs == "/root"
            || ["/home", "/Users", "/var/home"].iter().any(|root| {
                abs.strip_prefix(root)
                    .is_some_and(|rest| rest.is_empty() || !rest[1..].contains('/'))
            })
    }

    /// Whether a glob aims at members: the literal start of its last
    /// component is a member's name's start, or its directory is a
    /// runtime's settings directory or one of toolgate's.
    fn glob_aimed(&self, glob: &str, env: &Env) -> bool {
        let Some((dir, last)) = glob.rsplit_once('/') else {
            return false;
        };
        let literal = &last[..last.find(['*', '?', '[']).unwrap_or(last.len())];
        let named = literal.len() >= 2
            && members::PROBES
                .iter()
                .copied()
                .chain(self.files.iter().map(|f| f.rsplit('/').next().unwrap_or(f)))
                .any(|p| p.starts_with(literal));
        named
            || (!crate::wildcard::is_glob(dir)
                && (self.member_inside_static(dir, env).is_some()
                    || self.member(dir, env).is_some()))
    }

    /// Findings for one shell command (its redirections, its path
    /// operands by what the program does with them, its inline code) and
    /// for the analysis as a whole (the gate's process, its port, its
    /// operator endpoints). `text` is the command as sent.
    pub(crate) fn judge_shell(
        &self,
        analysis: &ShellAnalysis,
        text: &str,
        env: &Env,
    ) -> Vec<(Hit, Option<String>)> {
        let context = gate::Context::of(self, analysis, text);
        let mut out = Vec::new();
        for cmd in &analysis.commands {
            if let Some(h) = command_hits(self, cmd, env, &context) {
                out.push((h, Some(cmd.display())));
            }
        }
        out.extend(analysis_hits(self, analysis, text, &context));
        out
    }

    /// Findings for interpreter code run with `language` in `cwd`.
    pub(crate) fn judge_code(&self, code: &str, cwd: Option<&str>, env: &Env) -> Option<Hit> {
        code::judge(self, code, cwd, env)
    }

    /// Findings for a URL a tool fetches or opens: one of the daemon's
    /// operator endpoints is blocked.
    pub(crate) fn judge_url(&self, url: &str) -> Option<Hit> {
        gate::operator_route(url).map(|route| {
            Hit::block(
                "protected.operator-endpoint",
                format!(
                    "requests {route}, an operator endpoint of toolgate's daemon; approvals, \
                     bypasses and operators are for people, never the agent"
                ),
            )
        })
    }

    /// Findings for a string in the params of a tool toolgate has no
    /// precise reading of (an MCP tool, an unknown tool): a member named
    /// there is at least escalated, an operator endpoint blocked.
    pub(crate) fn judge_value(&self, value: &str, cwd: &str, env: &Env) -> Option<Hit> {
        if let Some(h) = self.judge_url(value) {
            return Some(h);
        }
        code::named_in_text(self, value, Some(cwd), env).and_then(|(member, shown)| {
            verdict(Access::Unknown, member, Certainty::Certain, &shown)
        })
    }
}
