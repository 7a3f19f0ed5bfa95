//! Gemini CLI: folder trust (no hooks and no project settings in a
//! folder it does not trust), `hooksConfig` switches, and the `TOOLGATE_*`
//! variables it strips from hooks under GitHub Actions.

use crate::doctor_cmd::Ctx;
use crate::doctor_cmd::command::HookCommand;
use crate::doctor_cmd::hooks::{Note, Scope, Settings};
use crate::doctor_cmd::json5::strip_comments;
use crate::doctor_cmd::report::Level;
use serde_json::Value;
use std::path::{Path, PathBuf};
use toolgate_core::hooks::Runtime;
use toolgate_core::hooks::install::Found;

/// Gemini CLI: `hooksConfig.enabled: false` (the workspace's value wins
/// over the user's, the system override over both) and toolgate's hook
/// named in `hooksConfig.disabled` (a union over the files, the system
/// defaults included). The workspace's file counts only in a trusted
/// folder; a `disabled` entry there is reported either way.
pub(super) fn gemini_switches(
    ctx: &Ctx,
    files: &[Settings],
    installed: &[(&Settings, Vec<Found>)],
) -> Vec<(PathBuf, Note)> {
    let trusted = matches!(gemini_trust(ctx), Trust::Trusted(_));
    let loaded: Vec<&Settings> = files
        .iter()
        .filter(|f| f.scope != Scope::Project || trusted)
        .collect();
    let mut out = Vec::new();
    let last = loaded.iter().rev().find_map(|f| {
        f.value
            .pointer("/hooksConfig/enabled")
            .and_then(Value::as_bool)
            .map(|b| (f, b))
    });
    if let Some((f, false)) = last {
        out.push((
            f.path.clone(),
            Note::at(
                Level::Error,
                "\"hooksConfig\": {\"enabled\": false}: Gemini CLI runs no hooks at all, \
                 toolgate's included"
                    .into(),
                &format!(
                    "remove \"enabled\": false from \"hooksConfig\" in {}",
                    f.path.display()
                ),
            ),
        ));
    }
    let names: Vec<&str> = installed
        .iter()
        .flat_map(|(_, found)| found.iter())
        .filter_map(|f| {
            f.entry
                .get("name")
                .or_else(|| f.entry.get("command"))
                .and_then(Value::as_str)
        })
        .collect();
    // Every `disabled` entry naming toolgate, wherever it is: the list is a
    // union over all files and nothing system-level overrides it, so one in
    // a project turns off even the system-level hook. One in a project
    // Gemini does not trust (yet) takes effect the day it is trusted.
    let defaults = ctx.system_root.join("etc/gemini-cli/system-defaults.json");
    let defaults_value = std::fs::read_to_string(&defaults)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&strip_comments(&t)).ok());
    let mut sources: Vec<(&Path, &Value, bool)> = files
        .iter()
        .map(|f| {
            (
                f.path.as_path(),
                &f.value,
                f.scope != Scope::Project || trusted,
            )
        })
        .collect();
    if let Some(v) = &defaults_value {
        sources.push((&defaults, v, true));
    }
    for (path, value, in_force) in sources {
        let Some(list) = value
            .pointer("/hooksConfig/disabled")
            .and_then(Value::as_array)
        else {
            continue;
        };
        for d in list.iter().filter_map(Value::as_str) {
            let ours = names.contains(&d) || d.to_ascii_lowercase().contains("toolgate");
            if !ours {
                continue;
            }
            let shown: String = d.chars().take(120).collect();
            out.push((
                path.to_path_buf(),
                Note::at(
                    if in_force { Level::Error } else { Level::Warn },
                    format!(
                        "\"hooksConfig\".\"disabled\" lists toolgate's hook ({shown}): Gemini \
                         CLI skips it{}; no system-level setting prevents this, so toolgate's \
                         hook in /etc/gemini-cli is switched off too",
                        if in_force {
                            ""
                        } else {
                            " as soon as this folder is trusted"
                        }
                    ),
                    &format!(
                        "remove it from \"hooksConfig\".\"disabled\" in {}",
                        path.display()
                    ),
                ),
            ));
        }
    }
    out
}

/// Gemini CLI's verdict on the project folder, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Trust {
    /// Settings and hooks are loaded.
    Trusted(String),
    /// Explicitly untrusted: no project settings, no hooks.
    Untrusted(String),
    /// No rule: headless runs refuse to start, interactive ones ask.
    Undecided(String),
    /// The trusted-folders file is unreadable: Gemini refuses to start.
    Broken(String),
}

/// Gemini's folder trust for the project, as Gemini works it out: the
/// environment (`GEMINI_RESTRICTED_MODE`, `GEMINI_CLI_TRUST_WORKSPACE`),
/// folder trust switched off in the user's settings, then the most
/// specific rule in `trustedFolders.json` (`TRUST_FOLDER`, `TRUST_PARENT`:
/// the rule's parent, `DO_NOT_TRUST`), paths compared with links resolved.
pub(super) fn gemini_trust(ctx: &Ctx) -> Trust {
    if ctx.var("GEMINI_RESTRICTED_MODE") == Some("true") {
        return Trust::Untrusted("GEMINI_RESTRICTED_MODE=true".into());
    }
    match ctx.var("GEMINI_CLI_TRUST_WORKSPACE") {
        Some("false") => return Trust::Untrusted("GEMINI_CLI_TRUST_WORKSPACE=false".into()),
        Some("true") => return Trust::Trusted("GEMINI_CLI_TRUST_WORKSPACE=true".into()),
        _ => {}
    }
    let Some(dir) = ctx.user_dir(Runtime::Gemini.spec()) else {
        return Trust::Undecided("$HOME is not set, so no trusted folders are known".into());
    };
    let user = dir.join("settings.json");
    let off = std::fs::read_to_string(&user)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&strip_comments(&t)).ok())
        .and_then(|v| {
            v.pointer("/security/folderTrust/enabled")
                .and_then(Value::as_bool)
        })
        == Some(false);
    if off {
        return Trust::Trusted(format!("folder trust is off in {}", user.display()));
    }
    let file = ctx
        .var("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map_or_else(|| dir.join("trustedFolders.json"), PathBuf::from);
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Trust::Undecided(format!("there is no {}", file.display()));
        }
        Err(e) => return Trust::Broken(format!("cannot read {} ({e})", file.display())),
    };
    let rules = match serde_json::from_str::<Value>(&strip_comments(&text)) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Trust::Broken(format!("{} is not a JSON object", file.display())),
        Err(e) => return Trust::Broken(format!("{} is not valid JSON ({e})", file.display())),
    };
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let here = real(&ctx.project);
    let mut best: Option<(usize, &str, &str)> = None;
    for (rule, level) in &rules {
        let Some(level) = level.as_str() else {
            continue;
        };
        let covered = match level {
            "TRUST_PARENT" => Path::new(rule).parent().map(real),
            "TRUST_FOLDER" | "DO_NOT_TRUST" => Some(real(Path::new(rule))),
            _ => None,
        };
        if covered.is_some_and(|c| here.starts_with(c))
            && best.is_none_or(|(len, _, _)| rule.len() > len)
        {
            best = Some((rule.len(), rule, level));
        }
    }
    match best {
        Some((_, rule, "DO_NOT_TRUST")) => {
            Trust::Untrusted(format!("{rule} is DO_NOT_TRUST in {}", file.display()))
        }
        Some((_, rule, level)) => {
            Trust::Trusted(format!("{rule} is {level} in {}", file.display()))
        }
        None => Trust::Undecided(format!("no rule in {} covers it", file.display())),
    }
}

/// Gemini CLI runs no hooks in a folder it does not trust, and reads a
/// project's settings only in a trusted one.
pub(super) fn gemini_notes(ctx: &Ctx, scope: Scope) -> Vec<Note> {
    let project = ctx.project.display();
    let tf = ctx
        .var("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map(PathBuf::from)
        .or_else(|| {
            ctx.user_dir(Runtime::Gemini.spec())
                .map(|d| d.join("trustedFolders.json"))
        })
        .map_or_else(
            || "~/.gemini/trustedFolders.json".into(),
            |p| p.display().to_string(),
        );
    let fix = format!(
        "trust the folder: add \"{project}\": \"TRUST_FOLDER\" to {tf} (or set \
         GEMINI_CLI_TRUST_WORKSPACE=true where Gemini runs){}",
        if scope == Scope::Project {
            "; or install for the user (toolgate install gemini), or for the machine (sudo \
             toolgate setup separated)"
        } else {
            ""
        }
    );
    let note = match (scope, gemini_trust(ctx)) {
        (Scope::Project, Trust::Trusted(why)) => {
            Note::ok(format!("Gemini trusts {project} ({why})"))
        }
        (Scope::User | Scope::System, Trust::Trusted(_)) => return Vec::new(),
        (Scope::Project, Trust::Untrusted(why)) => Note::at(
            Level::Error,
            format!(
                "Gemini does not trust {project} ({why}): it does not read this project's \
                 settings there and runs no hooks, so toolgate's hook does not run"
            ),
            &fix,
        ),
        (Scope::Project, Trust::Undecided(why)) => Note::at(
            Level::Error,
            format!(
                "{project} is not a trusted folder for Gemini ({why}): headless Gemini refuses to \
                 start there, and an interactive one reads this file and runs hooks only once \
                 someone trusts the folder"
            ),
            &fix,
        ),
        (Scope::User | Scope::System, Trust::Untrusted(why)) => Note::at(
            Level::Warn,
            format!(
                "Gemini does not trust {project} ({why}): in an untrusted folder it runs no \
                 hooks, not even the user's, so toolgate does not see the calls made there"
            ),
            &fix,
        ),
        (Scope::User | Scope::System, Trust::Undecided(why)) => Note::at(
            Level::Warn,
            format!(
                "{project} is not (yet) a trusted folder for Gemini ({why}): headless Gemini \
                 refuses to start there; an interactive one asks, and runs no hooks, not even \
                 the user's, unless the folder is trusted"
            ),
            &fix,
        ),
        (_, Trust::Broken(why)) => Note::at(
            Level::Error,
            format!("{why}: Gemini refuses to start until it is corrected"),
            &format!("correct {tf} by hand"),
        ),
    };
    vec![note]
}

/// Gemini CLI removes `TOOLGATE_*` from a hook's environment under GitHub
/// Actions (`GITHUB_SHA` set): a setting the hook takes from there must be
/// on its command line.
pub(crate) fn gemini_env(ctx: &Ctx, c: &HookCommand, fix: &str) -> Vec<Note> {
    let actions = ctx.var("GITHUB_SHA").is_some();
    [
        (
            "--policy",
            "TOOLGATE_POLICY",
            "decides with the built-in policy",
        ),
        (
            "--data-dir",
            "TOOLGATE_DATA_DIR",
            "records in the default data dir",
        ),
        (
            "--url",
            "TOOLGATE_URL",
            "decides in its own process instead of asking the daemon",
        ),
    ]
    .into_iter()
    .filter(|(flag, var, _)| c.flag(flag).is_none() && ctx.var(var).is_some())
    .map(|(flag, var, then)| {
        Note::at(
            if actions { Level::Error } else { Level::Warn },
            format!(
                "{var} is set here but the hook's command has no {flag}: Gemini removes \
                 TOOLGATE_* from a hook's environment under GitHub Actions{}, and the hook then \
                 {then}; toolgate install, run where {var} is set, writes it on the command line",
                if actions {
                    " (GITHUB_SHA is set: this is one)"
                } else {
                    ""
                }
            ),
            fix,
        )
    })
    .collect()
}
