//! Which trust mode is in force, as the user running doctor (the agent's,
//! when the agent's user runs it) sees it:
//!
//! - **separated** (a hard guarantee): `toolgate setup separated` left its
//!   record, the daemon answers on its socket as another user, its data
//!   directory is out of this user's reach, and this user can change
//!   neither the policy, nor the binary the hooks run, nor a system-level
//!   hook file, each of which names the daemon's socket and user;
//! - **same-user** (best effort): anything else. What toolgate owns is then
//!   protected by its judgement alone, and the report says what to run to
//!   move to separated.
//!
//! Permissions are worked out from owners and mode bits for this user and
//! its groups (ACLs are not read), and a path counts as changeable when
//! the user may write it or any directory above it.

use super::Ctx;
use super::command::HookCommand;
use super::report::{Finding, Level};
use crate::setup_cmd::record::{Record, under};
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use toolgate_core::hooks::Runtime;

/// The findings' runtime column.
const SUBJECT: &str = "mode";

/// The groups of this process's user: its primary group and every group
/// `/etc/group` lists it in.
pub(super) fn own_groups() -> Vec<u32> {
    let uid = crate::peer::real_uid();
    let Some(me) = crate::peer::passwd_by_uid(uid) else {
        return Vec::new();
    };
    let mut gids = vec![me.gid];
    if let Ok(t) = std::fs::read_to_string("/etc/group") {
        for l in t.lines() {
            let f: Vec<&str> = l.split(':').collect();
            if f.len() >= 4
                && f[3].split(',').any(|m| m == me.name)
                && let Ok(g) = f[2].parse()
            {
                gids.push(g);
            }
        }
    }
    gids
}

/// Whether the user may `bit`-access (4 read, 2 write, 1 search) a file
/// with this metadata.
fn may(ctx: &Ctx, m: &std::fs::Metadata, bit: u32) -> bool {
    if ctx.uid == 0 {
        return true;
    }
    let mode = m.mode();
    if m.uid() == ctx.uid {
        mode & (bit << 6) != 0
    } else if ctx.gids.contains(&m.gid()) {
        mode & (bit << 3) != 0
    } else {
        mode & bit != 0
    }
}

/// Why the user can change `path` (write it, or replace it through a
/// directory above it), or `None` when it cannot.
fn changeable(ctx: &Ctx, path: &Path) -> Option<String> {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.uid() == ctx.uid {
            return Some(format!("{} is yours", path.display()));
        }
        if !m.file_type().is_symlink() && may(ctx, &m, 2) {
            return Some(format!("you may write {}", path.display()));
        }
    }
    let mut child = path;
    for dir in path.ancestors().skip(1) {
        let Ok(m) = std::fs::metadata(dir) else {
            child = dir;
            continue;
        };
        if m.uid() == ctx.uid {
            return Some(format!("{} is yours", dir.display()));
        }
        if may(ctx, &m, 2) {
            // In a sticky directory only an entry's owner may replace it.
            let sticky = m.mode() & 0o1000 != 0;
            let owner = std::fs::symlink_metadata(child).map(|c| c.uid()).ok();
            if !sticky || owner == Some(ctx.uid) {
                return Some(format!("you may write the directory {}", dir.display()));
            }
        }
        child = dir;
    }
    None
}

/// Whether the user can read anything in the directory `dir`.
fn readable_dir(ctx: &Ctx, dir: &Path) -> Option<String> {
    let m = std::fs::metadata(dir).ok()?;
    if m.uid() == ctx.uid {
        return Some(format!("{} is yours", dir.display()));
    }
    if may(ctx, &m, 4) || may(ctx, &m, 1) {
        return Some(format!(
            "{} is open to you (mode {:o})",
            dir.display(),
            m.mode() & 0o777
        ));
    }
    None
}

/// The mode report: one finding saying the mode and why, with the fix.
pub(super) fn check(ctx: &Ctx) -> Vec<Finding> {
    let finding = |level, message: String, fix: Option<String>| Finding {
        runtime: SUBJECT,
        file: None,
        level,
        message,
        fix,
    };
    let move_to = "sudo toolgate setup separated --agent-user <the agents' user> \
                   (docs/deploy.md, \"Separated mode\")";
    let rec = match &ctx.setup_record {
        Some(f) => Record::read_file(f),
        None => Record::read(&ctx.system_root),
    };
    let Some(rec) = rec else {
        return vec![finding(
            Level::Warn,
            "same-user mode (best effort): toolgate is not set up separated here (no \
             /etc/toolgate/setup.json), so whatever runs as the agent's user can reach what \
             toolgate owns, and only toolgate's judgement of each call protects it"
                .into(),
            Some(format!("to make it a hard guarantee: {move_to}")),
        )];
    };
    if ctx.uid == 0 {
        return vec![finding(
            Level::Warn,
            format!(
                "separated set-up found (daemon user {}), but doctor runs as root, who can \
                 reach everything: the mode is what the agent's user sees",
                rec.daemon_user
            ),
            Some(format!(
                "sudo -u {} {} doctor --mode",
                rec.agent_user.as_deref().unwrap_or("AGENT"),
                rec.binary.display()
            )),
        )];
    }
    let (held, broken) = separated_checks(ctx, &rec);
    if broken.is_empty() {
        vec![finding(
            Level::Ok,
            format!("separated mode (a hard guarantee): {}", held.join("; ")),
            None,
        )]
    } else {
        vec![finding(
            Level::Error,
            format!(
                "same-user mode, although toolgate was set up separated: {}",
                broken.join("; ")
            ),
            Some(format!(
                "run the set-up again to put each part back: {}",
                rec.rerun()
            )),
        )]
    }
}

/// What holds and what does not, of the separated set-up in `rec`.
fn separated_checks(ctx: &Ctx, rec: &Record) -> (Vec<String>, Vec<String>) {
    let (mut held, mut broken) = (Vec::new(), Vec::new());
    let at = |p: &Path| under(&ctx.system_root, p);
    // The daemon: another user's, answering on its socket as that user.
    match rec.daemon_uid {
        None => broken.push("the set-up names no daemon uid".to_string()),
        Some(uid) if uid == ctx.uid => broken.push(format!(
            "the daemon's user {} is you (uid {uid})",
            rec.daemon_user
        )),
        Some(uid) => match std::os::unix::net::UnixStream::connect(at(&rec.socket)) {
            Ok(s) => match crate::peer::peer_uid(&s) {
                Ok(p) if p == uid => held.push(format!(
                    "the daemon answers on {} as {} (uid {uid})",
                    rec.socket.display(),
                    rec.daemon_user
                )),
                Ok(p) => broken.push(format!(
                    "{} is served by uid {p}, not by {} (uid {uid}): hooks deny every call",
                    rec.socket.display(),
                    rec.daemon_user
                )),
                Err(e) => broken.push(format!(
                    "cannot tell who serves {} ({e})",
                    rec.socket.display()
                )),
            },
            Err(e) => broken.push(format!(
                "the daemon does not answer on {} ({e}): hooks deny every call until it runs \
                 (systemctl start {})",
                rec.socket.display(),
                rec.service_name()
            )),
        },
    }
    // Its data: out of reach.
    match readable_dir(ctx, &at(&rec.data_dir)) {
        Some(why) => broken.push(format!("the daemon's data directory is reachable: {why}")),
        None => held.push(format!(
            "its data directory {} is out of your reach",
            rec.data_dir.display()
        )),
    }
    // What decides: the policy, the binary, the socket's directory.
    let socket_dir = rec
        .socket
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for (what, path) in [
        ("the policy", &rec.policy),
        ("the binary the hooks run", &rec.binary),
        ("the socket's directory", &socket_dir),
    ] {
        if let Some(why) = changeable(ctx, &at(path)) {
            broken.push(format!("you can change {what} ({why})"));
        }
    }
    if broken.iter().all(|b| !b.starts_with("you can change")) {
        held.push("you can change neither the policy, nor the binary, nor the socket".into());
    }
    // The hooks: in system-level files this user cannot change, pinned.
    let mut pinned = Vec::new();
    for (name, file) in &rec.hooks {
        let Some(rt) = Runtime::parse(name) else {
            continue;
        };
        match hook_pinned(ctx, rec, rt, &at(file)) {
            Ok(()) => pinned.push(name.clone()),
            Err(why) => broken.push(format!("{}'s hook: {why}", rt.spec().title)),
        }
    }
    // The runtimes themselves run as the agent's user: one whose program
    // that user can change can be swapped for one that runs no hook at all.
    for name in &pinned {
        if let Some(rt) = Runtime::parse(name) {
            for why in runtime_program_changeable(ctx, rt) {
                broken.push(why);
            }
        }
    }
    if pinned.is_empty() {
        broken.push("no runtime has a pinned system-level hook".into());
    } else {
        held.push(format!(
            "hooks pinned to the socket and the daemon's uid, in files you cannot change: {}",
            pinned.join(", ")
        ));
    }
    (held, broken)
}

/// The commands each runtime is started with, looked up in `$PATH`.
fn runtime_programs(rt: Runtime) -> &'static [&'static str] {
    match rt {
        Runtime::ClaudeCode => &["claude"],
        Runtime::Codex => &["codex"],
        Runtime::Gemini => &["gemini"],
        Runtime::Cursor => &["cursor-agent"],
    }
}

/// Why the user can change what runs when `rt` is started from `$PATH`: its
/// program as found (the link and what it points to) and, for a script, the
/// interpreter its `#!` line names. A managed hook in a root-owned file is
/// only as good as the program that reads it: an agent that can replace
/// `claude` with a program of its own has no hook in its way at its next
/// session. A runtime not found in `$PATH` is not judged (it may be started
/// some other way; docs/threat-model.md says what to keep out of reach).
fn runtime_program_changeable(ctx: &Ctx, rt: Runtime) -> Vec<String> {
    let mut out = Vec::new();
    for name in runtime_programs(rt) {
        let Ok(found) = super::command::locate(name, ctx) else {
            continue;
        };
        let mut chain = vec![found.clone()];
        if let Ok(real) = std::fs::canonicalize(&found)
            && real != found
        {
            chain.push(real);
        }
        if let Some(interp) = chain.last().and_then(|p| interpreter(ctx, p)) {
            chain.push(interp);
        }
        for path in chain {
            if let Some(why) = changeable(ctx, &path) {
                out.push(format!(
                    "you can change {} ({why}), which runs when {} starts: an agent could put \
                     there a program that runs no hook; install it where only root can write \
                     (for example `sudo npm install -g …`)",
                    path.display(),
                    rt.spec().title
                ));
                break;
            }
        }
    }
    out
}

/// The interpreter a script's `#!` line names (`/usr/bin/env node` is
/// `node` as found in `$PATH`), resolved through links.
fn interpreter(ctx: &Ctx, script: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..n]).ok()?.strip_prefix("#!")?;
    let line = line.lines().next()?.trim();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let program = if first.ends_with("/env") {
        let name = words.find(|w| !w.starts_with('-'))?;
        super::command::locate(name, ctx).ok()?
    } else {
        PathBuf::from(first)
    };
    Some(std::fs::canonicalize(&program).unwrap_or(program))
}

/// Whether `file` (the system-level hook file of `rt`) holds toolgate's
/// entry, pinned to the set-up's binary, socket and daemon uid, and cannot
/// be changed by the user.
fn hook_pinned(ctx: &Ctx, rec: &Record, rt: Runtime, file: &PathBuf) -> Result<(), String> {
    if let Some(why) = changeable(ctx, file) {
        return Err(format!("you can change {} ({why})", file.display()));
    }
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("{} cannot be read ({e})", file.display()))?;
    let value: Value = if file.extension().is_some_and(|e| e == "toml") {
        crate::setup_cmd::toml_json(&text).map_err(|e| format!("{}: {e}", file.display()))?
    } else {
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON ({e})", file.display()))?
    };
    let spec = rt.spec();
    let found = spec.install.find(spec.name, &value);
    if found.is_empty() {
        return Err(format!("no toolgate entry in {}", file.display()));
    }
    let socket = format!("unix:{}", rec.socket.display());
    for f in &found {
        let cmd = f.entry.get("command").and_then(Value::as_str).unwrap_or("");
        let c = HookCommand::parse(cmd);
        let uid = rec.daemon_uid.map(|u| u.to_string());
        if c.program() != Some(&*rec.binary.to_string_lossy())
            || c.flag("--url") != Some(socket.as_str())
            || c.flag("--daemon-uid") != uid.as_deref()
        {
            return Err(format!(
                "the entry in {} is not pinned to {}, {socket} and uid {}",
                file.display(),
                rec.binary.display(),
                uid.as_deref().unwrap_or("?")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
