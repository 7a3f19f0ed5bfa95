//! One toolgate entry in a hook settings file: its type, fail-closed
//! switch, matcher, program, and its timeout against the hook's own
//! deadline and the policy's hold; and the summary of a file whose entries
//! are all fail-closed.

use super::Note;
use crate::doctor_cmd::Ctx;
use crate::doctor_cmd::command::{HookCommand, locate};
use crate::doctor_cmd::report::Level;
use crate::doctor_cmd::runtimes;
use serde_json::Value;
use std::time::Duration;
use toolgate_core::hooks::install::{Found, Shape, TimeoutUnit};
use toolgate_core::hooks::{Runtime, Spec};

/// The runtime's timeout when an entry sets none, where it is documented
/// (docs/integrations.md, "`toolgate doctor`"): Codex 600 s, Gemini CLI 60 s.
fn default_timeout(runtime: Runtime) -> Option<Duration> {
    match runtime {
        Runtime::Codex => Some(Duration::from_secs(600)),
        Runtime::Gemini => Some(Duration::from_secs(60)),
        Runtime::ClaudeCode | Runtime::Cursor => None,
    }
}

/// A hand edit, or `fix`; only `fix` where editing the entry by hand drops
/// the runtime's trust in it (Codex).
fn edit_or(spec: &Spec, edit: &str, fix: &str) -> String {
    if spec.install.needs_trust {
        fix.to_string()
    } else {
        format!("{edit}, or run: {fix}")
    }
}

/// Whether the runtime stops the call when this entry's hook fails.
fn blocks_on_failure(spec: &Spec, entry: &Value) -> bool {
    spec.install.fail_closed.is_some() && spec.install.is_fail_closed(entry)
}

/// What happens to calls when the hook cannot answer.
fn consequence(spec: &Spec, entry: &Value) -> String {
    if blocks_on_failure(spec, entry) {
        "so every call is blocked".into()
    } else {
        format!("so {} runs every call unchecked", spec.title)
    }
}

/// Whether a matcher selects every tool.
fn selects_all(spec: &Spec, matcher: Option<&str>) -> bool {
    let m = matcher.map(str::trim);
    match spec.install.shape {
        Shape::Grouped { matcher } => {
            m.is_none_or(|m| ["", "*", ".*", "^.*$", matcher].contains(&m))
        }
        Shape::Flat => m.is_none_or(|m| m.is_empty() || m == "*"),
    }
}

/// The problems of one toolgate entry.
/// The problems of one toolgate entry, named `at` in messages ("the
/// PreToolUse entry").
pub(super) fn entry_notes(spec: &Spec, ctx: &Ctx, f: &Found, at: &str, fix: &str) -> Vec<Note> {
    let t = spec.install;
    let e = &f.entry;
    let mut notes = Vec::new();
    if t.typed {
        let ty = e.get("type").and_then(Value::as_str);
        let http = spec.runtime == Runtime::ClaudeCode && ty == Some("http");
        if ty != Some("command") && !http {
            notes.push(Note::at(
                Level::Error,
                format!(
                    "{at} has {}: {} skips an entry that is not \"type\": \"command\"",
                    ty.map_or_else(|| "no \"type\"".into(), |t| format!("\"type\": {t:?}")),
                    spec.title
                ),
                &edit_or(spec, "set \"type\": \"command\" in it", fix),
            ));
        }
    }
    if let Some((key, value)) = t.fail_closed
        && !t.is_fail_closed(e)
    {
        let value = value.to_json();
        notes.push(Note::at(
            Level::Error,
            format!(
                "{at} lacks \"{key}\": {value}: when the hook crashes, times out or cannot \
                 start, {} runs the call",
                spec.title
            ),
            &edit_or(spec, &format!("add \"{key}\": {value} to the entry"), fix),
        ));
    }
    if !selects_all(spec, f.matcher.as_deref()) {
        let all = match t.shape {
            Shape::Grouped { matcher } => format!("set its group's \"matcher\" to {matcher:?}"),
            Shape::Flat => "remove its \"matcher\"".into(),
        };
        notes.push(Note::at(
            Level::Error,
            format!(
                "{at}'s matcher {:?} selects only some tools: {} runs the others without \
                 asking toolgate",
                f.matcher.as_deref().unwrap_or(""),
                spec.title
            ),
            &edit_or(spec, &all, fix),
        ));
    }
    if let Some(cmd) = e.get("command").and_then(Value::as_str) {
        let c = HookCommand::parse(cmd);
        match c.program() {
            None => notes.push(Note::at(
                Level::Error,
                format!("{at} has an empty command, {}", consequence(spec, e)),
                fix,
            )),
            Some(p) => {
                if let Err(why) = locate(p, ctx) {
                    notes.push(Note::at(
                        Level::Error,
                        format!(
                            "{at} runs {p}, which cannot start here ({why}; moved or \
                             removed?), {}; reinstall with the toolgate binary to keep",
                            consequence(spec, e)
                        ),
                        fix,
                    ));
                }
            }
        }
        notes.extend(timing_notes(spec, ctx, f, at, &c, fix));
        notes.extend(pin_notes(at, &c, fix));
        if spec.runtime == Runtime::Gemini {
            notes.extend(runtimes::gemini_env(ctx, &c, fix));
        }
    } else if e.get("url").is_some() {
        notes.push(Note::at(
            Level::Warn,
            format!(
                "{at} is Claude Code's http hook: Claude believes whatever answers on that \
                 address (the daemon down, any program on its port) and cannot check the \
                 daemon's signature; a `toolgate hook` command pinned with --daemon-key can"
            ),
            &format!(
                "{fix} (without --http, with --url and the daemon's key; see \
                 docs/integrations.md)"
            ),
        ));
    }
    if e.get("command").is_none() && t.timeout_of(e).is_some_and(|d| d < Duration::from_secs(10)) {
        // Claude Code's HTTP hook: the daemon answers within 8 s.
        notes.push(Note::at(
            Level::Warn,
            format!(
                "{at}'s timeout is under 10 s; the daemon's hook route may take 8 s, after \
                 which Claude Code blocks the call without toolgate's answer"
            ),
            fix,
        ));
    }
    notes
}

/// Whether the hook's command pins everything it depends on: the binary by
/// an absolute path, `--url` (a daemon with its key or uid, or `none`),
/// `--policy` (a file or `builtin`) and the store (`--data-dir`/`--store`).
/// What it leaves out, the environment the runtime gives the hook decides
/// (`TOOLGATE_*`, `$HOME`, `$PATH`), and an agent can set that environment
/// (Claude Code's `env` in `.claude/settings.local.json`, Gemini's `.env`).
fn pin_notes(at: &str, c: &HookCommand, fix: &str) -> Vec<Note> {
    let mut loose = Vec::new();
    if let Some(p) = c.program()
        && !p.starts_with('/')
    {
        loose.push(format!(
            "it runs {p} found through $PATH or the working directory (a `toolgate` the agent \
             puts first would answer)"
        ));
    }
    let url = c.flag("--url");
    if url.is_none() {
        loose.push("no --url: TOOLGATE_URL picks the daemon it asks".into());
    }
    if c.flag("--policy").is_none() {
        loose.push("no --policy: TOOLGATE_POLICY picks the policy".into());
    }
    if c.flag("--data-dir").is_none() && c.flag("--store").is_none() {
        loose.push(
            "no --data-dir or --store: TOOLGATE_DATA_DIR, TOOLGATE_STORE or $HOME pick its \
             state"
                .into(),
        );
    }
    let mut notes = Vec::new();
    if !loose.is_empty() {
        notes.push(Note::at(
            Level::Warn,
            format!(
                "{at} can be redirected by the environment the runtime gives it, which the \
                 agent can set: {}",
                loose.join("; ")
            ),
            &format!("{fix} (toolgate install pins each of them)"),
        ));
    }
    let daemon = url.and_then(|u| crate::decider::Endpoint::parse(u).ok().flatten());
    let unpinned = match &daemon {
        Some(crate::decider::Endpoint::Tcp { .. }) => c.flag("--daemon-key").is_none(),
        Some(crate::decider::Endpoint::Unix(_)) => c.flag("--daemon-uid").is_none(),
        None => false,
    };
    if unpinned {
        notes.push(Note::at(
            Level::Error,
            format!(
                "{at} names the daemon {} without pinning it (--daemon-key over TCP, \
                 --daemon-uid on a socket): the hook believes no such daemon, so every call is \
                 denied",
                url.unwrap_or_default()
            ),
            fix,
        ));
    }
    notes
}

/// How long the hook takes at most (`--timeout`, default 10 s) against the
/// runtime's timeout, and the policy's `[hooks] hold` against both.
fn timing_notes(
    spec: &Spec,
    ctx: &Ctx,
    f: &Found,
    at: &str,
    c: &HookCommand,
    fix: &str,
) -> Vec<Note> {
    let t = spec.install;
    let e = &f.entry;
    let mut notes = Vec::new();
    let hook = match c.flag("--timeout") {
        None => crate::hook_cmd::DEFAULT_TIMEOUT,
        Some(v) => match v.parse::<u64>() {
            Ok(n) if n > 0 => Duration::from_secs(n),
            _ => {
                return vec![Note::at(
                    Level::Error,
                    format!(
                        "{at}'s command has --timeout {v:?}, which toolgate hook refuses: every \
                         call fails, {}",
                        consequence(spec, e)
                    ),
                    fix,
                )];
            }
        },
    };
    let runtime = t
        .timeout_of(e)
        .map(|d| (d, false))
        .or_else(|| default_timeout(spec.runtime).map(|d| (d, true)));
    match runtime {
        None => notes.push(Note::at(
            Level::Warn,
            format!(
                "{at} sets no \"timeout\", so {}'s default applies, which toolgate cannot \
                 compare with the hook's own {} s",
                spec.title,
                hook.as_secs()
            ),
            &edit_or(
                spec,
                &format!(
                    "add \"timeout\": {} to the entry",
                    t.entry("", hook)["timeout"]
                ),
                fix,
            ),
        )),
        Some((rt, default)) if rt < hook => {
            let blocks = blocks_on_failure(spec, e);
            notes.push(Note::at(
                if blocks { Level::Warn } else { Level::Error },
                format!(
                    "{at}'s timeout ({}{}) is shorter than the hook's own deadline (--timeout {} \
                     s): {} stops the hook first, {}",
                    show(rt, t.timeout_unit),
                    if default { ", the default" } else { "" },
                    hook.as_secs(),
                    spec.title,
                    if blocks {
                        "and blocks the call without toolgate's answer"
                    } else {
                        "and then runs the call"
                    }
                ),
                &edit_or(spec, "set \"timeout\" to at least the --timeout", fix),
            ));
        }
        Some(_) => {}
    }
    let (policy, from_env) = match c.flag("--policy") {
        Some(p) => (Some(p), false),
        None => (ctx.var("TOOLGATE_POLICY"), true),
    };
    let Some(policy) = policy.filter(|p| *p != crate::decider::BUILTIN) else {
        return notes;
    };
    let path = match policy.strip_prefix("~/") {
        Some(rest) => ctx.home().unwrap_or_default().join(rest),
        None => ctx.project.join(policy),
    };
    let allowed = c.words.iter().any(|w| w == "--allow-writable-policy");
    if let Some((level, message, fix)) =
        super::super::writable_policy::check(&path, allowed, &ctx.project)
    {
        notes.push(Note::at(level, format!("{at}: {message}"), &fix));
    }
    let hold = match crate::check::load_policy_file(&path) {
        Ok(p) => p.hooks().hold,
        Err(err) => {
            let err = format!("{err:#}").replace('\n', " ");
            notes.push(if from_env {
                Note::at(
                    Level::Warn,
                    format!(
                        "TOOLGATE_POLICY here names {policy}, which cannot be used ({err}); if \
                         {} passes it to the hook, every call fails, {}",
                        spec.title,
                        consequence(spec, e)
                    ),
                    "fix the policy (toolgate policy check FILE), or unset TOOLGATE_POLICY",
                )
            } else {
                Note::at(
                    Level::Error,
                    format!(
                        "{at} decides with the policy {policy}, which cannot be used ({err}): \
                         every call fails, {}",
                        consequence(spec, e)
                    ),
                    &format!("fix the policy (toolgate policy check {policy}), or run: {fix}"),
                )
            });
            return notes;
        }
    };
    if hold.is_zero() {
        return notes;
    }
    let need = hold + Duration::from_secs(5);
    let gives_up = runtime.map_or(hook, |(rt, _)| rt.min(hook));
    if gives_up < need {
        notes.push(Note::at(
            Level::Warn,
            format!(
                "the policy {policy} holds an escalated call up to {} s for an operator, but \
                 {at} gives up after {} s: approvals come too late and held calls are denied \
                 (toolgate install writes a timeout of the hold + 15 s)",
                hold.as_secs(),
                gives_up.as_secs()
            ),
            fix,
        ));
    }
    notes
}

/// A duration in the unit the runtime's settings use.
fn show(d: Duration, unit: TimeoutUnit) -> String {
    match unit {
        TimeoutUnit::Millis => format!("{} ms", d.as_millis()),
        TimeoutUnit::Seconds if d.subsec_nanos() == 0 => format!("{} s", d.as_secs()),
        TimeoutUnit::Seconds => format!("{:.1} s", d.as_secs_f64()),
    }
}

/// The one line for a file whose entries are all fail-closed: what runs,
/// for which events, with which timeout and switch, and `facts` (trust).
pub(super) fn summary(spec: &Spec, ctx: &Ctx, found: &[Found], facts: &[String]) -> String {
    let t = spec.install;
    let mut events: Vec<String> = Vec::new();
    for event in t.events {
        for f in found.iter().filter(|f| f.event == *event) {
            let e = match (&f.matcher, t.shape) {
                (Some(m), Shape::Grouped { .. }) => format!("{event} (matcher {m:?})"),
                _ => f.event.clone(),
            };
            if !events.contains(&e) {
                events.push(e);
            }
        }
    }
    let e = &found[0].entry;
    let mut parts = vec![format!("toolgate gates {}", events.join(", "))];
    if let Some(cmd) = e.get("command").and_then(Value::as_str) {
        let c = HookCommand::parse(cmd);
        let program = c.program().and_then(|p| locate(p, ctx).ok());
        parts.push(format!(
            "runs {} hook {}{}",
            program.map_or_else(|| "toolgate".into(), |p| p.display().to_string()),
            spec.name,
            match c.flag("--policy") {
                Some(crate::decider::BUILTIN) => " with the built-in policy".to_string(),
                Some(p) => format!(" with the policy {p}"),
                None => String::new(),
            }
        ));
    } else if let Some(url) = e.get("url").and_then(Value::as_str) {
        parts.push(format!("calls {url}"));
    }
    let own = match e.get("command").and_then(Value::as_str) {
        Some(cmd) => format!(
            "the hook answers within its own {} s",
            HookCommand::parse(cmd)
                .flag("--timeout")
                .and_then(|v| v.parse().ok())
                .unwrap_or(crate::hook_cmd::DEFAULT_TIMEOUT.as_secs())
        ),
        None => "the daemon answers within 8 s".into(),
    };
    match t.timeout_of(e) {
        Some(d) => parts.push(format!("timeout {} ({own})", show(d, t.timeout_unit))),
        None => parts.push(format!("no timeout set ({}'s default)", spec.title)),
    }
    parts.push(match t.fail_closed {
        Some((key, value)) => format!("\"{key}\": {}", value.to_json()),
        None => format!(
            "no fail-closed switch in {}: the hook denies by itself before the timeout",
            spec.title
        ),
    });
    parts.extend(facts.iter().cloned());
    parts.join("; ")
}
