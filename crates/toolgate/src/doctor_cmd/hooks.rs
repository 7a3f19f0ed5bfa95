//! The runtimes that run `toolgate hook` (Claude Code, Codex, Gemini CLI,
//! Cursor): their settings files, toolgate's entries in them, and each way
//! an entry stops being fail-closed. What only one runtime has (switches,
//! trust, environment) is in `runtimes`.

mod entry;

use super::command::HookCommand;
use super::report::{Finding, Level};
use super::{Ctx, json5, runtimes};
use crate::install_cmd::read_settings;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use toolgate_core::hooks::install::{Found, shell_word};
use toolgate_core::hooks::{Runtime, Spec, cursor};

/// Whose settings a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// The user's (`~/.claude/settings.json`, `$CODEX_HOME/hooks.json`, …).
    User,
    /// The project's (`.claude/settings.json`, `.codex/hooks.json`, …).
    Project,
    /// The machine's, set by its administrator (`/etc/claude-code/
    /// managed-settings.json`, `/etc/codex/requirements.toml`, …).
    System,
}

/// A settings file that exists and was read.
#[derive(Debug)]
pub(super) struct Settings {
    /// Where it is.
    pub path: PathBuf,
    /// Whose it is.
    pub scope: Scope,
    /// Its JSON.
    pub value: Value,
    /// It held comments, which the runtime allows and `toolgate install`
    /// does not (Gemini CLI).
    pub lenient: bool,
}

/// One thing found about a settings file: a problem, or at `Level::Ok` a
/// fact for the file's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Note {
    /// How bad it is.
    pub level: Level,
    /// What was found.
    pub message: String,
    /// The fix, for a problem.
    pub fix: Option<String>,
}

impl Note {
    /// A fact for the summary.
    pub(super) fn ok(message: String) -> Note {
        Note {
            level: Level::Ok,
            message,
            fix: None,
        }
    }

    /// A problem at `level`, fixed by `fix`.
    pub(super) fn at(level: Level, message: String, fix: &str) -> Note {
        Note {
            level,
            message,
            fix: Some(fix.to_string()),
        }
    }
}

/// Every finding for one runtime.
pub(super) fn check(spec: &'static Spec, ctx: &Ctx, asked: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let finding = |path: &Path, n: Note| Finding {
        runtime: spec.name,
        file: Some(path.display().to_string()),
        level: n.level,
        message: n.message,
        fix: n.fix,
    };
    let mut files = Vec::new();
    let mut unreadable = false;
    let paths = settings_paths(spec, ctx);
    for (path, scope) in &paths {
        match read(spec, path) {
            Ok(None) => {}
            Ok(Some((value, lenient))) => files.push(Settings {
                path: path.clone(),
                scope: *scope,
                value,
                lenient,
            }),
            Err(why) => {
                unreadable = true;
                let fix = format!(
                    "correct the file by hand, then run toolgate doctor again (toolgate install {} \
                     refuses to edit a file it cannot read)",
                    spec.name
                );
                out.push(finding(path, Note::at(Level::Error, why, &fix)));
            }
        }
    }
    let installed: Vec<(&Settings, Vec<Found>)> = files
        .iter()
        .map(|f| (f, spec.install.find(spec.name, &f.value)))
        .filter(|(_, found)| !found.is_empty())
        .collect();
    if installed.is_empty() {
        if !unreadable {
            out.push(not_installed(spec, ctx, &paths, asked));
        }
        return out;
    }
    for (file, found) in &installed {
        let notes = file_notes(spec, ctx, file, found);
        // Fail-closed (warnings at most): say what is there, then the warnings.
        if notes.iter().all(|n| n.level != Level::Error) {
            let facts: Vec<String> = notes
                .iter()
                .filter(|n| n.level == Level::Ok)
                .map(|n| n.message.clone())
                .collect();
            out.push(finding(
                &file.path,
                Note::ok(entry::summary(spec, ctx, found, &facts)),
            ));
        }
        out.extend(
            notes
                .into_iter()
                .filter(|n| n.level != Level::Ok)
                .map(|n| finding(&file.path, n)),
        );
    }
    for (path, note) in runtimes::switches(spec, ctx, &files, &installed) {
        out.push(finding(&path, note));
    }
    out
}

/// The files the runtime reads hooks from: the user's, then the project's
/// (Claude Code also reads the project's `settings.local.json`), then the
/// machine's. A project that is the home directory adds nothing.
fn settings_paths(spec: &Spec, ctx: &Ctx) -> Vec<(PathBuf, Scope)> {
    let t = spec.install;
    let mut out = Vec::new();
    if let Some(dir) = ctx.user_dir(spec) {
        out.push((dir.join(t.file), Scope::User));
    }
    let dir = ctx.project.join(t.dir);
    let mut project = vec![dir.join(t.file)];
    if spec.runtime == Runtime::ClaudeCode {
        project.push(dir.join("settings.local.json"));
    }
    for p in project {
        if !out.iter().any(|(u, _)| same_file(u, &p)) {
            out.push((p, Scope::Project));
        }
    }
    out.push((
        crate::setup_cmd::system_file(spec.runtime, &ctx.system_root),
        Scope::System,
    ));
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// A settings file's JSON (`None` when absent or blank, and whether it
/// needed comments stripped), or why the runtime cannot read its hooks.
fn read(spec: &Spec, path: &Path) -> Result<Option<(Value, bool)>, String> {
    if path.extension().is_some_and(|e| e == "toml") {
        // Codex's system requirements: TOML, hooks inline.
        return match std::fs::read_to_string(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot be read ({e})")),
            Ok(t) => crate::setup_cmd::toml_json(&t)
                .map(|v| Some((v, false)))
                .map_err(|e| format!("{e}: {} cannot read the hooks in it", spec.title)),
        };
    }
    let (value, lenient) = match read_settings(path) {
        Ok(None) => return Ok(None),
        Ok(Some((_, v))) => (v, false),
        Err(e) => {
            let json = e.root_cause().downcast_ref::<serde_json::Error>();
            let Some(json) = json else {
                return Err(format!("{e:#}"));
            };
            // Gemini CLI strips comments from its settings before parsing.
            let text = std::fs::read_to_string(path).unwrap_or_default();
            match serde_json::from_str(&json5::strip_comments(&text)) {
                Ok(v) if spec.runtime == Runtime::Gemini => (v, true),
                _ => {
                    return Err(format!(
                        "not valid JSON ({json}): {} cannot read the hooks in it",
                        spec.title
                    ));
                }
            }
        }
    };
    let Some(root) = value.as_object() else {
        return Err(format!(
            "not a JSON object: {} cannot read hooks from it",
            spec.title
        ));
    };
    match root.get("hooks") {
        None => {}
        Some(Value::Object(hooks)) => {
            for event in spec.install.events {
                if hooks.get(*event).is_some_and(|l| !l.is_array()) {
                    return Err(format!(
                        "\"hooks\".\"{event}\" is not a list: {} cannot read it",
                        spec.title
                    ));
                }
            }
        }
        Some(_) => {
            return Err(format!(
                "\"hooks\" is not an object: {} cannot read it",
                spec.title
            ));
        }
    }
    Ok(Some((value, lenient)))
}

fn not_installed(spec: &Spec, ctx: &Ctx, paths: &[(PathBuf, Scope)], asked: bool) -> Finding {
    let looked: Vec<String> = paths.iter().map(|(p, _)| p.display().to_string()).collect();
    let user = paths.iter().find(|(_, s)| *s == Scope::User);
    Finding {
        runtime: spec.name,
        file: None,
        level: if asked { Level::Error } else { Level::Warn },
        message: format!(
            "not installed: no toolgate entry in {}, so toolgate does not see {}'s tool calls \
             (for one project only: toolgate install {} --project, run there)",
            looked.join(" or "),
            spec.title,
            spec.name
        ),
        fix: Some(match user {
            Some((p, _)) => install_command(spec, ctx, p, Scope::User, None),
            None => format!(
                "toolgate install {} --settings FILE ($HOME is not set)",
                spec.name
            ),
        }),
    }
}

/// The `toolgate install` command that rewrites toolgate's entry in `path`,
/// keeping the settings the current `entry` carries on its command line.
pub(super) fn install_command(
    spec: &Spec,
    ctx: &Ctx,
    path: &Path,
    scope: Scope,
    entry: Option<&Value>,
) -> String {
    let t = spec.install;
    if scope == Scope::System {
        return "as root, run the separated set-up again: sudo toolgate setup separated \
                (it rewrites toolgate's entry in the system-level file)"
            .to_string();
    }
    let mut words = vec!["toolgate".to_string(), "install".into(), spec.name.into()];
    let settings = |words: &mut Vec<String>| {
        words.extend(["--settings".into(), shell_word(&path.to_string_lossy())]);
    };
    match scope {
        Scope::User if ctx.install_dir(spec).map(|d| d.join(t.file)).as_deref() == Some(path) => {}
        Scope::Project if ctx.in_project && path == ctx.project.join(t.dir).join(t.file) => {
            words.push("--project".into());
        }
        _ => settings(&mut words),
    }
    if let Some(url) = entry.and_then(|e| e.get("url")).and_then(Value::as_str) {
        let base = url.strip_suffix("/v1/hooks/claude-code").unwrap_or(url);
        words.extend(["--http".into(), shell_word(base)]);
    } else if let Some(cmd) = entry.and_then(|e| e.get("command")).and_then(Value::as_str) {
        let c = HookCommand::parse(cmd);
        for flag in [
            "--policy",
            "--url",
            "--daemon-key",
            "--daemon-uid",
            "--data-dir",
            "--store",
        ] {
            if let Some(v) = c.flag(flag) {
                words.extend([flag.to_string(), shell_word(v)]);
            }
        }
    }
    words.join(" ")
}

/// Everything about one file that holds toolgate entries.
fn file_notes(spec: &Spec, ctx: &Ctx, file: &Settings, found: &[Found]) -> Vec<Note> {
    let t = spec.install;
    let fix = install_command(
        spec,
        ctx,
        &file.path,
        file.scope,
        found.first().map(|f| &f.entry),
    );
    let mut notes = Vec::new();
    if file.lenient {
        notes.push(Note::at(
            Level::Warn,
            format!(
                "holds comments, which {} reads but toolgate install cannot rewrite",
                spec.title
            ),
            "make the fixes below by hand, or remove the comments and run toolgate install",
        ));
    }
    for (key, value) in t.required_top {
        if file.value.get(*key) != Some(&json!(value)) {
            notes.push(Note::at(
                Level::Warn,
                format!(
                    "has no top-level \"{key}\": {value}, which {} expects",
                    spec.title
                ),
                &format!("add \"{key}\": {value} at the top, or run: {fix}"),
            ));
        }
    }
    for event in t.events {
        if !found.iter().any(|f| f.event == *event) {
            notes.push(Note::at(
                Level::Error,
                format!("no toolgate entry for {event}: {}", unguarded(spec, event)),
                &fix,
            ));
        }
    }
    // Entries that are copies of one another (Cursor's four) are checked,
    // and named, once.
    let mut groups: Vec<(&Found, Vec<&str>)> = Vec::new();
    for f in t
        .events
        .iter()
        .flat_map(|e| found.iter().filter(move |f| f.event == *e))
    {
        match groups
            .iter_mut()
            .find(|(g, _)| g.entry == f.entry && g.matcher == f.matcher)
        {
            Some((_, events)) => events.push(&f.event),
            None => groups.push((f, vec![&f.event])),
        }
    }
    for (f, events) in groups {
        let at = format!("the {} entry", events.join("/"));
        notes.extend(entry::entry_notes(spec, ctx, f, &at, &fix));
    }
    notes.extend(runtimes::file_notes(spec, ctx, file, found, &fix));
    // A problem of the set-up, not of one entry, is said once.
    let mut seen = Vec::new();
    notes.retain(|n| {
        let new = !seen.contains(n);
        if new {
            seen.push(n.clone());
        }
        new
    });
    notes
}

/// What goes ungated without toolgate's entry for `event`.
fn unguarded(spec: &Spec, event: &str) -> String {
    match event {
        cursor::TOOL_EVENT => {
            "Cursor's tool calls (file writes and edits, reads, MCP tools, shell) are not gated"
                .into()
        }
        cursor::SHELL_EVENT => "shell commands are not gated in Cursor versions without \
                                preToolUse"
            .into(),
        cursor::MCP_EVENT => {
            "MCP tool calls are not gated in Cursor versions without preToolUse".into()
        }
        cursor::READ_EVENT => {
            "file reads are not gated in Cursor versions without preToolUse".into()
        }
        _ => format!("none of {}'s tool calls is gated", spec.title),
    }
}

#[cfg(test)]
pub(crate) mod tests;
