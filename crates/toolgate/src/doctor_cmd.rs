//! `toolgate doctor`: reports every place toolgate is set up as a runtime's
//! hook (or OpenClaw plugin) that the runtime will not actually run
//! fail-closed, with the command or edit that fixes it. It reads the user's
//! and the project's settings files and changes nothing.
//!
//! - `hooks`: Claude Code, Codex, Gemini CLI and Cursor: toolgate's entries
//!   in each settings file (events, fail-closed switch, matcher, timeout
//!   against the hook's own deadline and the policy's hold, the program);
//! - `runtimes`: what only one runtime has: Claude Code's and Gemini's
//!   switches that turn hooks off, Codex's hook and project trust, Gemini's
//!   folder trust and stripped environment;
//! - `openclaw`: the OpenClaw plugin in `openclaw.json` (JSON5, `json5`);
//! - `command`: a hook's command line; `report`: findings, text and JSON;
//! - `mode`: which trust mode is in force, separated (the daemon another
//!   user's, its data unreadable, the policy and hooks not writable, hooks
//!   pinned to it) or same-user, as the user running doctor sees it.

mod command;
mod hooks;
mod json5;
mod mode;
mod openclaw;
mod report;
mod runtimes;
mod writable_policy;

use clap::Args;
use report::Finding;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use toolgate_core::hooks::{Runtime, Spec};

/// Arguments of `toolgate doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Check one runtime only: claude-code, codex, gemini, cursor or
    /// openclaw. Then "not installed" is an error.
    #[arg(long, value_name = "NAME")]
    runtime: Option<String>,
    /// The project whose settings are checked besides the user's. Default:
    /// the working directory.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Print one JSON array of findings ({runtime, file, level: ok|warn|error,
    /// message, fix}) instead of text.
    #[arg(long)]
    json: bool,
    /// Report only which mode is in force (separated or same-user).
    #[arg(long)]
    mode: bool,
    /// Read the system's files (/etc/…) below DIR instead of / (tests, and
    /// checking a set-up made with `toolgate setup separated --root DIR`).
    #[arg(long, value_name = "DIR", hide = true)]
    system_root: Option<PathBuf>,
    /// The separated set-up's record, when it was made with another
    /// --etc-dir than /etc/toolgate.
    #[arg(long, value_name = "FILE", hide = true)]
    setup_record: Option<PathBuf>,
}

/// What doctor checks: a runtime that runs `toolgate hook`, or OpenClaw,
/// which loads toolgate's plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subject {
    Hook(Runtime),
    OpenClaw,
}

impl Subject {
    const OPENCLAW: &'static str = "openclaw";

    fn all() -> Vec<Subject> {
        let mut v: Vec<Subject> = Runtime::ALL.into_iter().map(Subject::Hook).collect();
        v.push(Subject::OpenClaw);
        v
    }

    fn parse(name: &str) -> Option<Subject> {
        if name.trim().eq_ignore_ascii_case(Self::OPENCLAW) {
            return Some(Subject::OpenClaw);
        }
        Runtime::parse(name).map(Subject::Hook)
    }
}

/// Everything doctor reads besides files: the environment (as this process
/// sees it: a runtime started with another one may see other files), the
/// project, and where a few fixed files are.
pub(crate) struct Ctx {
    vars: HashMap<String, String>,
    /// The project directory, absolute with links resolved (what a runtime
    /// started there sees as its working directory).
    pub project: PathBuf,
    /// Whether the project is the working directory (then `--project`
    /// fixes work as printed).
    pub in_project: bool,
    /// Claude Code's managed settings (`/etc/claude-code/managed-settings.json`).
    pub claude_managed: PathBuf,
    /// Where the system's files are (`/`, or `--system-root`).
    pub system_root: PathBuf,
    /// The user doctor judges for (this process's real uid: the agent's,
    /// when the agent's user runs it).
    pub uid: u32,
    /// That user's groups.
    pub gids: Vec<u32>,
    /// The separated set-up's record, when not in its usual place.
    pub setup_record: Option<PathBuf>,
    /// toolgate's OpenClaw plugin directory, when this binary sits in a
    /// checkout that has one (for the fix text).
    pub openclaw_plugin: Option<PathBuf>,
}

impl Ctx {
    /// The context of this process, checking `project` (default: the
    /// working directory).
    fn from_process(project: Option<&Path>, system_root: Option<&Path>) -> Result<Ctx, String> {
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot read the working directory ({e}); pass --project DIR"))?;
        let given = project.map_or_else(|| cwd.clone(), |p| cwd.join(p));
        let project = given
            .canonicalize()
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| format!("--project {}: no such directory", given.display()))?;
        let in_project = cwd.canonicalize().is_ok_and(|c| c == project);
        let openclaw_plugin = std::env::current_exe().ok().and_then(|exe| {
            exe.ancestors()
                .map(|d| d.join("integrations/openclaw"))
                .find(|d| d.join("openclaw.plugin.json").is_file())
        });
        Ok(Ctx {
            vars: std::env::vars_os()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect(),
            project,
            in_project,
            claude_managed: crate::setup_cmd::system_file(
                Runtime::ClaudeCode,
                system_root.unwrap_or(Path::new("/")),
            ),
            system_root: system_root.unwrap_or(Path::new("/")).to_path_buf(),
            uid: crate::peer::real_uid(),
            gids: mode::own_groups(),
            setup_record: None,
            openclaw_plugin,
        })
    }

    /// A context for unit tests: `project` and exactly `vars`.
    #[cfg(test)]
    pub(crate) fn for_test(project: &Path, vars: &[(&str, &str)]) -> Ctx {
        Ctx {
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
            project: project.to_path_buf(),
            in_project: true,
            claude_managed: project.join("no-managed-settings.json"),
            system_root: project.join("no-system-root"),
            uid: 4242,
            gids: Vec::new(),
            setup_record: None,
            openclaw_plugin: None,
        }
    }

    /// An environment variable, when set and not empty.
    pub(crate) fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `$HOME`.
    pub(crate) fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from)
    }

    /// Where `toolgate install <runtime>` writes for the user:
    /// `$<dir_env>`, else `$HOME/<dir>` (the rule of `install_cmd::user_dir`).
    pub(crate) fn install_dir(&self, spec: &Spec) -> Option<PathBuf> {
        let t = spec.install;
        match t.dir_env.and_then(|v| self.var(v)) {
            Some(d) => Some(PathBuf::from(d)),
            None => Some(self.home()?.join(t.dir)),
        }
    }

    /// Where the runtime reads the user's settings: as `install_dir`,
    /// except that Gemini CLI takes its home from `$GEMINI_CLI_HOME` first.
    pub(crate) fn user_dir(&self, spec: &Spec) -> Option<PathBuf> {
        if spec.runtime == Runtime::Gemini
            && let Some(h) = self.var("GEMINI_CLI_HOME")
        {
            return Some(PathBuf::from(h).join(spec.install.dir));
        }
        self.install_dir(spec)
    }
}

/// Runs `toolgate doctor`.
pub(crate) fn run(args: DoctorArgs) -> ExitCode {
    let subjects = match args.runtime.as_deref() {
        None => Subject::all(),
        Some(name) => match Subject::parse(name) {
            Some(s) => vec![s],
            None => {
                eprintln!(
                    "toolgate doctor: unknown runtime {:?}: use {}, {}",
                    name.trim(),
                    Runtime::names(),
                    Subject::OPENCLAW
                );
                return ExitCode::from(2);
            }
        },
    };
    let ctx = match Ctx::from_process(args.project.as_deref(), args.system_root.as_deref()) {
        Ok(c) => Ctx {
            setup_record: args.setup_record.clone(),
            ..c
        },
        Err(e) => {
            eprintln!("toolgate doctor: {e}");
            return ExitCode::from(2);
        }
    };
    let asked = args.runtime.is_some();
    // The mode is about the whole set-up: said unless one runtime is asked
    // about.
    let mut findings = if asked && !args.mode {
        Vec::new()
    } else {
        mode::check(&ctx)
    };
    if !args.mode {
        findings.extend(subjects.into_iter().flat_map(|s| check(s, &ctx, asked)));
    }
    if args.json {
        println!("{}", report::json(&findings));
    } else {
        print!("{}", report::text(&findings));
    }
    ExitCode::from(report::exit_code(&findings))
}

/// Every finding for one subject; `asked`: it was named with `--runtime`.
fn check(subject: Subject, ctx: &Ctx, asked: bool) -> Vec<Finding> {
    match subject {
        Subject::Hook(r) => hooks::check(r.spec(), ctx, asked),
        Subject::OpenClaw => openclaw::check(ctx, asked),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_and_openclaw_can_be_named() {
        assert_eq!(Subject::parse(" OpenClaw "), Some(Subject::OpenClaw));
        assert_eq!(
            Subject::parse("gemini"),
            Some(Subject::Hook(Runtime::Gemini))
        );
        assert_eq!(Subject::parse("claude"), None);
        assert_eq!(Subject::all().len(), Runtime::ALL.len() + 1);
    }

    #[test]
    fn user_dirs_follow_the_runtimes_variables() {
        let p = Path::new("/p");
        let ctx = Ctx::for_test(
            p,
            &[
                ("HOME", "/h"),
                ("CODEX_HOME", "/c"),
                ("GEMINI_CLI_HOME", "/g"),
                ("CLAUDE_CONFIG_DIR", ""),
            ],
        );
        let dir = |r: Runtime| ctx.user_dir(r.spec()).unwrap();
        assert_eq!(dir(Runtime::Codex), Path::new("/c"));
        assert_eq!(dir(Runtime::ClaudeCode), Path::new("/h/.claude"));
        assert_eq!(dir(Runtime::Gemini), Path::new("/g/.gemini"));
        assert_eq!(
            ctx.install_dir(Runtime::Gemini.spec()).unwrap(),
            Path::new("/h/.gemini")
        );
        assert_eq!(dir(Runtime::Cursor), Path::new("/h/.cursor"));
        assert!(
            Ctx::for_test(p, &[])
                .user_dir(Runtime::Cursor.spec())
                .is_none()
        );
    }
}
