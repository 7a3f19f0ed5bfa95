//! `toolgate doctor`: finds hook set-ups a runtime will not run fail-closed
//! — an entry missing for an event, no fail-closed switch, a timeout the
//! runtime gives up on before the hook answers, a matcher that lets tools
//! through, a binary that moved, an untrusted or modified Codex hook,
//! Gemini settings that live only in environment variables (which Gemini
//! strips) or a project Gemini does not trust — and says how to fix each.
//! It reads the user's and the project's settings files; it changes nothing.

use crate::install_cmd::{read_settings, user_dir};
use clap::Args;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use toolgate_core::hooks::install::{Found, Shape};
use toolgate_core::hooks::{Runtime, Spec};

/// Arguments of `toolgate doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Check one runtime only (claude-code, codex, gemini or cursor).
    #[arg(long)]
    runtime: Option<String>,
    /// The project whose settings to check too. Default: the working directory.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// One JSON array of findings instead of text.
    #[arg(long)]
    json: bool,
}

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Set up and fail-closed.
    Ok,
    /// Worth a look: works, but not as safely as it could.
    Warn,
    /// The runtime may run a call toolgate did not allow.
    Error,
    /// Nothing installed there.
    Info,
}

/// One thing doctor found.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The runtime's CLI name.
    pub runtime: &'static str,
    /// The settings file it is about, if any.
    pub file: Option<String>,
    /// How bad it is.
    pub level: Level,
    /// What it found.
    pub message: String,
    /// The command or edit that fixes it, if anything needs fixing.
    pub fix: Option<String>,
}

pub fn run(args: DoctorArgs) -> ExitCode {
    let runtimes: Vec<Runtime> = match args.runtime.as_deref() {
        Some(name) => match Runtime::parse(name) {
            Some(r) => vec![r],
            None => {
                eprintln!(
                    "toolgate doctor: unknown runtime {name:?}: use {}",
                    Runtime::names()
                );
                return ExitCode::from(2);
            }
        },
        None => Runtime::ALL.to_vec(),
    };
    let project = args
        .project
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let mut findings = Vec::new();
    for r in &runtimes {
        findings.extend(check_runtime(r.spec(), &project, args.runtime.is_some()));
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&findings).unwrap_or_else(|_| "[]".into())
        );
    } else {
        for f in &findings {
            let tag = match f.level {
                Level::Ok => "ok   ",
                Level::Warn => "warn ",
                Level::Error => "ERROR",
                Level::Info => "-    ",
            };
            let file = f
                .file
                .as_deref()
                .map(|p| format!(" {p}:"))
                .unwrap_or_default();
            println!("{tag} {}:{file} {}", f.runtime, f.message);
            if let Some(fix) = &f.fix {
                println!("      fix: {fix}");
            }
        }
    }
    if findings.iter().any(|f| f.level == Level::Error) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Every finding for one runtime: its user file and the project's.
fn check_runtime(spec: &'static Spec, project: &Path, asked: bool) -> Vec<Finding> {
    let t = spec.install;
    let mut out = Vec::new();
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    if let Ok(dir) = user_dir(t) {
        files.push((dir.join(t.file), false));
    }
    let project_file = project.join(t.dir).join(t.file);
    // A project that is the home directory has no settings of its own.
    if !files.iter().any(|(p, _)| same_file(p, &project_file)) {
        files.push((project_file, true));
    }
    let mut installed = false;
    for (path, is_project) in files {
        let shown = path.display().to_string();
        let finding = |level, message: String, fix: Option<String>| Finding {
            runtime: spec.name,
            file: Some(shown.clone()),
            level,
            message,
            fix,
        };
        let install = format!(
            "toolgate install {}{}",
            spec.name,
            if is_project { " --project" } else { "" }
        );
        let settings = match read_settings(&path) {
            Ok(Some((_, v))) => v,
            Ok(None) => continue,
            Err(e) => {
                out.push(finding(
                    Level::Error,
                    format!("{e:#}"),
                    Some("fix the JSON by hand, then run doctor again".into()),
                ));
                continue;
            }
        };
        let found = t.find(spec.name, &settings);
        if found.is_empty() {
            continue;
        }
        installed = true;
        let problems = entry_problems(spec, &path, &settings, &found, is_project, project);
        if problems.is_empty() {
            let events: Vec<&str> = t.events.to_vec();
            out.push(finding(
                Level::Ok,
                format!("toolgate gates {} fail-closed", events.join(", ")),
                None,
            ));
        }
        for (level, message) in problems {
            out.push(finding(level, message, Some(install.clone())));
        }
    }
    if !installed {
        out.push(Finding {
            runtime: spec.name,
            file: None,
            level: if asked { Level::Error } else { Level::Info },
            message: format!("toolgate is not installed as {}'s hook", spec.title),
            fix: Some(format!("toolgate install {}", spec.name)),
        });
    }
    out
}

/// What is wrong with toolgate's entries in one settings file.
fn entry_problems(
    spec: &Spec,
    path: &Path,
    settings: &Value,
    found: &[Found],
    is_project: bool,
    project: &Path,
) -> Vec<(Level, String)> {
    let t = spec.install;
    let mut out = Vec::new();
    for event in t.events {
        if !found.iter().any(|f| f.event == *event) {
            out.push((
                Level::Error,
                format!("no toolgate entry for {event}: those calls are not gated"),
            ));
        }
    }
    for f in found {
        let cmd = f.entry.get("command").and_then(Value::as_str).unwrap_or("");
        if !t.is_fail_closed(&f.entry) {
            let (key, value) = t.fail_closed.map(|(k, v)| (k, v.to_json())).unzip();
            out.push((
                Level::Error,
                format!(
                    "the {} entry lacks \"{}\": {}, so a hook that crashes or times out lets \
                     the call run",
                    f.event,
                    key.unwrap_or_default(),
                    value.unwrap_or_default()
                ),
            ));
        }
        if let Shape::Grouped { matcher } = t.shape {
            let m = f.matcher.as_deref().unwrap_or("").trim();
            let all = m.is_empty() || m == "*" || m == ".*" || m == matcher;
            if !all {
                out.push((
                    Level::Error,
                    format!(
                        "the {} entry's matcher {m:?} selects only some tools; the others run \
                         unchecked (use {matcher:?})",
                        f.event
                    ),
                ));
            }
        }
        let hook_timeout = flag_value(cmd, "--timeout")
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_secs)
            .unwrap_or(crate::hook_cmd::DEFAULT_TIMEOUT);
        match t.timeout_of(&f.entry) {
            None => out.push((
                Level::Warn,
                format!(
                    "the {} entry sets no timeout; the hook answers within {} s by itself",
                    f.event,
                    hook_timeout.as_secs()
                ),
            )),
            Some(rt) if rt < hook_timeout => out.push((
                Level::Error,
                format!(
                    "the {} entry's timeout ({} s) is shorter than the hook's own deadline ({} \
                     s): the runtime gives up first{}",
                    f.event,
                    rt.as_secs_f32(),
                    hook_timeout.as_secs(),
                    if t.fail_closed.is_none() {
                        ", and runs the call"
                    } else {
                        ""
                    }
                ),
            )),
            Some(_) => {}
        }
        if let Some(program) = first_word(cmd) {
            let p = Path::new(&program);
            let runnable = if program.contains('/') {
                p.is_file() && is_executable(p)
            } else {
                on_path(&program)
            };
            if !runnable {
                out.push((
                    Level::Error,
                    format!(
                        "the {} entry runs {program}, which is not an executable file here",
                        f.event
                    ),
                ));
            }
        }
        if spec.runtime == Runtime::Gemini {
            for (flag, var) in [
                ("--policy", "TOOLGATE_POLICY"),
                ("--data-dir", "TOOLGATE_DATA_DIR"),
                ("--url", "TOOLGATE_URL"),
            ] {
                if flag_value(cmd, flag).is_none()
                    && std::env::var_os(var).is_some_and(|v| !v.is_empty())
                {
                    out.push((
                        Level::Warn,
                        format!(
                            "{var} is set here but not on the hook's command line ({flag}); \
                             Gemini strips the hook's environment under GitHub Actions, and the \
                             hook then uses its defaults"
                        ),
                    ));
                }
            }
        }
    }
    if t.needs_trust {
        out.extend(codex_trust_problems(spec, path, settings));
    }
    if spec.runtime == Runtime::Gemini && is_project && !gemini_trusts(project) {
        out.push((
            Level::Error,
            format!(
                "{} is not a trusted folder: Gemini does not load this project's settings, so \
                 the hook does not run (trust the folder, set GEMINI_CLI_TRUST_WORKSPACE=true, \
                 or install for the user)",
                project.display()
            ),
        ));
    }
    out
}

/// Codex runs a user hook only with a matching trust entry in config.toml.
fn codex_trust_problems(spec: &Spec, path: &Path, settings: &Value) -> Vec<(Level, String)> {
    let mut out = Vec::new();
    let wanted = crate::codex_trust_cmd::wanted(path, settings, spec);
    let config = match crate::codex_trust_cmd::config_path(spec) {
        Ok(c) => c,
        Err(e) => return vec![(Level::Error, format!("{e:#}"))],
    };
    let doc = match crate::codex_trust_cmd::read_config(&config) {
        Ok((_, doc)) => doc,
        Err(e) => return vec![(Level::Error, format!("{e:#}"))],
    };
    for (key, hash) in wanted {
        match crate::codex_trust_cmd::recorded(&doc, &key) {
            None => out.push((
                Level::Error,
                format!(
                    "Codex does not trust the hook {key} (no trusted_hash in {}): it skips it \
                     silently and runs every call",
                    config.display()
                ),
            )),
            Some(h) if h != hash => out.push((
                Level::Error,
                format!(
                    "the hook {key} changed since it was trusted (its trusted_hash in {} no \
                     longer matches): Codex skips it and runs every call",
                    config.display()
                ),
            )),
            Some(_) => {}
        }
    }
    out
}

/// Whether Gemini trusts `dir` as a workspace.
fn gemini_trusts(dir: &Path) -> bool {
    if std::env::var("GEMINI_CLI_TRUST_WORKSPACE").is_ok_and(|v| v == "true") {
        return true;
    }
    let Some(home) = std::env::var_os("HOME") else {
        return false;
    };
    let file = Path::new(&home).join(".gemini/trustedFolders.json");
    let Ok(Some((_, v))) = read_settings(&file) else {
        return false;
    };
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    v.as_object().is_some_and(|m| {
        m.iter().any(|(folder, level)| {
            let trusted = level.as_str().is_some_and(|l| l.starts_with("TRUST"));
            let folder = Path::new(folder);
            let covers = match level.as_str() {
                Some("TRUST_PARENT") => folder.parent().is_some_and(|p| dir.starts_with(p)),
                _ => dir.starts_with(folder),
            };
            trusted && covers
        })
    })
}

/// The value after `flag` in a hook command (quoted values unquoted).
fn flag_value(cmd: &str, flag: &str) -> Option<String> {
    let words = shell_words(cmd);
    words
        .iter()
        .position(|w| w == flag)
        .and_then(|i| words.get(i + 1).cloned())
        .or_else(|| {
            words
                .iter()
                .find_map(|w| w.strip_prefix(&format!("{flag}=")).map(str::to_string))
        })
}

fn first_word(cmd: &str) -> Option<String> {
    shell_words(cmd).into_iter().next()
}

/// Splits a command line as a POSIX shell would for plain and single- or
/// double-quoted words (enough for the commands `toolgate install` writes).
fn shell_words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                any = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                any = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        _ => cur.push(q),
                    }
                }
            }
            '\\' => {
                any = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                any = true;
                cur.push(c);
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || (a.canonicalize().ok().is_some() && a.canonicalize().ok() == b.canonicalize().ok())
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            let p = d.join(program);
            p.is_file() && is_executable(&p)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(
            shell_words("'/a b/toolgate' hook codex --policy \"/p q.toml\" --timeout 10"),
            vec![
                "/a b/toolgate",
                "hook",
                "codex",
                "--policy",
                "/p q.toml",
                "--timeout",
                "10"
            ]
        );
        assert_eq!(
            flag_value("toolgate hook x --timeout=30", "--timeout").as_deref(),
            Some("30")
        );
        assert_eq!(flag_value("toolgate hook x", "--policy"), None);
        assert_eq!(first_word("  toolgate hook x").as_deref(), Some("toolgate"));
    }
}
