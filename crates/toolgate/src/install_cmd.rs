//! `toolgate install <runtime>`: registers toolgate as the runtime's
//! pre-tool hook, keeping everything else in its settings file. What the
//! entry looks like is the runtime module's (`toolgate_core::hooks`): every
//! entry is fail-closed where the runtime has a switch for it, has a timeout
//! above the `[hooks] hold`, and carries every setting the hook needs on its
//! command line (runtimes may strip the hook's environment). For Codex the
//! hook's trust entry is written too: Codex skips an untrusted hook without
//! a word.

use crate::settings_file::{user_dir, write_text};
use crate::state::DataDirArgs;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use toolgate_core::hooks::install::{Target, shell_word};
use toolgate_core::hooks::{Runtime, Spec};

/// Arguments of `toolgate install`.
#[derive(Debug, Args)]
pub(crate) struct InstallArgs {
    /// The runtime to install into: claude-code, codex, gemini or cursor.
    runtime: String,
    /// The settings file to edit. Default: the runtime's user file
    /// (~/.claude/settings.json, $CODEX_HOME/hooks.json, ~/.gemini/settings.json,
    /// ~/.cursor/hooks.json), or the project's with --project.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// Install for the project in the current directory (.claude/, .codex/,
    /// .gemini/ or .cursor/ here) instead of for the user.
    #[arg(long, conflicts_with = "settings")]
    project: bool,
    /// Claude Code only: use the daemon's HTTP hook at this URL (e.g.
    /// http://127.0.0.1:7878) instead of running `toolgate hook` per call;
    /// the token comes from $TOOLGATE_AGENT_TOKEN in Claude's environment.
    #[arg(long)]
    http: Option<String>,
    /// The policy the hook decides with (written, absolute, on the hook's
    /// command line). Default: $TOOLGATE_POLICY, else the built-in policy.
    #[arg(long, env = "TOOLGATE_POLICY")]
    policy: Option<PathBuf>,
    /// The daemon the hook asks (written on the hook's command line).
    /// Default: $TOOLGATE_URL, else the hook decides in its own process.
    #[arg(long, env = "TOOLGATE_URL")]
    url: Option<String>,
    /// The hook's timeout in seconds. Default: 10, or the policy's
    /// `[hooks] hold` plus 15.
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
}

pub(crate) fn run(args: InstallArgs, data: &DataDirArgs) -> ExitCode {
    match install(&args, data) {
        Ok(msg) => {
            println!("{msg}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolgate install: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}

/// The runtime named on the command line.
pub(crate) fn runtime(name: &str) -> Result<Runtime> {
    Runtime::parse(name).ok_or_else(|| {
        anyhow!(
            "unknown runtime {:?}: use {} (OpenClaw: see integrations/openclaw; MCP: toolgate \
             mcp-proxy)",
            name.trim(),
            Runtime::names()
        )
    })
}

fn settings_path(t: &Target, args: &InstallArgs) -> Result<PathBuf> {
    let path = match (&args.settings, args.project) {
        (Some(p), _) => p.clone(),
        (None, true) => Path::new(t.dir).join(t.file),
        (None, false) => user_dir(t)?.join(t.file),
    };
    absolute(&path)
}

/// `path` made absolute against the working directory (not resolved
/// through links: the runtime names the file by the path it was given).
pub(crate) fn absolute(path: &Path) -> Result<PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()
        .context("cannot read the working directory")?
        .join(path))
}

/// The hook's timeout: as asked, else 10 s, or the hold plus 15 s.
fn timeout(args: &InstallArgs) -> Result<Duration> {
    let hold = match &args.policy {
        Some(p) => crate::check::load_policy_file(p)?.hooks().hold,
        None => Duration::ZERO,
    };
    let wanted = if hold.is_zero() {
        crate::hook_cmd::DEFAULT_TIMEOUT
    } else {
        hold + Duration::from_secs(15)
    };
    match args.timeout {
        None => Ok(wanted),
        Some(0) => bail!("--timeout must be at least 1 second"),
        Some(t) if Duration::from_secs(t) < hold + Duration::from_secs(5) => bail!(
            "--timeout {t} is too short for the policy's [hooks] hold of {} s: the runtime \
             would give up on the hook while it waits; use at least {}",
            hold.as_secs(),
            hold.as_secs() + 5
        ),
        Some(t) => Ok(Duration::from_secs(t)),
    }
}

/// The hook command: this binary, `hook <runtime>`, the timeout, and every
/// setting the hook needs, all quoted for the shell the runtime runs it with.
fn command(
    spec: &Spec,
    args: &InstallArgs,
    data: &DataDirArgs,
    timeout: Duration,
) -> Result<String> {
    // A project's settings are shared with the team: name the binary as
    // found on each machine's PATH, not by where it sits on this one.
    let exe = if args.project {
        "toolgate".to_string()
    } else {
        let exe = std::env::current_exe().context("cannot find this toolgate binary")?;
        shell_word(&exe.to_string_lossy())
    };
    let mut words = vec![
        exe,
        "hook".to_string(),
        spec.name.to_string(),
        "--timeout".to_string(),
        timeout.as_secs().max(1).to_string(),
    ];
    if let Some(p) = &args.policy {
        let p = absolute(p)?;
        if !p.is_file() {
            bail!("--policy {}: no such file", p.display());
        }
        words.extend(["--policy".to_string(), shell_word(&p.to_string_lossy())]);
    }
    if let Some(u) = args.url.as_deref().map(str::trim).filter(|u| !u.is_empty()) {
        if !u.starts_with("http://") {
            bail!("--url must be http://HOST:PORT (got {u:?})");
        }
        words.extend(["--url".to_string(), shell_word(u)]);
    }
    let (dir, chosen) = data.resolve();
    if chosen {
        words.extend([
            "--data-dir".to_string(),
            shell_word(&absolute(&dir)?.to_string_lossy()),
        ]);
    }
    Ok(words.join(" "))
}

fn http_entry(url: &str, timeout: Duration) -> Result<Value> {
    let base = url.trim().trim_end_matches('/');
    if !base.starts_with("http://") && !base.starts_with("https://") {
        bail!("--http needs a URL like http://127.0.0.1:7878 (got {url:?})");
    }
    Ok(json!({
        "type": "http",
        "url": format!("{base}/v1/hooks/claude-code"),
        "headers": {"Authorization": "Bearer $TOOLGATE_AGENT_TOKEN"},
        "allowedEnvVars": ["TOOLGATE_AGENT_TOKEN"],
        "timeout": timeout.as_secs().max(10),
        "onFailure": "block",
    }))
}

/// Reads a JSON settings file: `None` when absent or blank.
pub(crate) fn read_settings(path: &Path) -> Result<Option<(String, Value)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) if t.trim().is_empty() => return Ok(None),
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let v = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not valid JSON; fix it first (nothing was changed)",
            path.display()
        )
    })?;
    Ok(Some((text, v)))
}

fn install(args: &InstallArgs, data: &DataDirArgs) -> Result<String> {
    let runtime = runtime(&args.runtime)?;
    let spec = runtime.spec();
    let t = spec.install;
    let path = settings_path(t, args)?;
    let timeout = timeout(args)?;
    let entry = match &args.http {
        Some(url) if runtime == Runtime::ClaudeCode => http_entry(url, timeout)?,
        Some(_) => bail!(
            "--http is for Claude Code, whose hooks can call a URL; {} runs a command",
            spec.title
        ),
        None => t.entry(&command(spec, args, data, timeout)?, timeout),
    };
    let before = read_settings(&path)?;
    let mut settings = before
        .as_ref()
        .map_or_else(|| json!({}), |(_, v)| v.clone());
    let changed = t
        .add(spec.name, &mut settings, entry)
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let events = match t.events {
        [one] => format!("{one} hook"),
        many => format!("{} hooks", many.join(", ")),
    };
    let mut msg = if changed {
        let kept = write(&path, &settings, before.as_ref().map(|(t, _)| t.as_str()))?;
        let kept = match kept {
            Some(bak) => format!("; the old file is kept as {}", bak.display()),
            None => String::new(),
        };
        let failure = match t.fail_closed {
            Some((k, v)) => format!(" ({k}: {})", v.to_json()),
            None => String::new(),
        };
        format!(
            "toolgate is now {}'s {events} in {}{failure}, timeout {} s{kept}",
            spec.title,
            path.display(),
            timeout.as_secs()
        )
    } else {
        format!(
            "toolgate is already {}'s {events} in {}",
            spec.title,
            path.display()
        )
    };
    if t.needs_trust {
        msg.push_str(&format!(
            "\n{}",
            crate::codex_trust_cmd::trust(&path, &settings, spec)?
        ));
    }
    if changed {
        msg.push_str(&next_steps(spec, args, &path));
    }
    Ok(msg)
}

/// What to do after installing, and how to see that it works.
fn next_steps(spec: &Spec, args: &InstallArgs, path: &Path) -> String {
    let mut s = String::from("\nnext:");
    if args.project {
        s.push_str(
            "\n  the hook runs `toolgate` from PATH on every machine that uses this project: \
             install it there too",
        );
    }
    if args.http.is_some() || args.url.is_some() {
        s.push_str("\n  start the daemon it asks: toolgate serve");
    }
    s.push_str(&format!(
        "\n  check it: toolgate doctor   (reports a hook {} would not run fail-closed)",
        spec.title
    ));
    s.push_str("\n  try it:   toolgate check -- rm -rf ~   (what the hook would answer)");
    s.push_str("\n  watch:    toolgate audit tail -f");
    s.push_str(&format!(
        "\n  undo:     toolgate uninstall {}{}",
        spec.name,
        if args.project {
            " --project".to_string()
        } else if args.settings.is_some() {
            format!(" --settings {}", shell_word(&path.to_string_lossy()))
        } else {
            String::new()
        }
    ));
    s
}

/// Arguments of `toolgate uninstall`.
#[derive(Debug, Args)]
pub(crate) struct UninstallArgs {
    /// The runtime to remove toolgate from: claude-code, codex, gemini or
    /// cursor.
    runtime: String,
    /// The settings file to edit (default: the runtime's user file, or the
    /// project's with --project), as for `install`.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// The project's settings in the current directory.
    #[arg(long, conflicts_with = "settings")]
    project: bool,
}

/// `toolgate uninstall <runtime>`: removes toolgate's hook entries and
/// nothing else; the file before is kept as a backup.
pub(crate) fn run_uninstall(args: UninstallArgs) -> ExitCode {
    let result = (|| -> Result<String> {
        let runtime = runtime(&args.runtime)?;
        let spec = runtime.spec();
        let t = spec.install;
        let path = absolute(&match (&args.settings, args.project) {
            (Some(p), _) => p.clone(),
            (None, true) => Path::new(t.dir).join(t.file),
            (None, false) => user_dir(t)?.join(t.file),
        })?;
        let Some((text, mut settings)) = read_settings(&path)? else {
            return Ok(format!(
                "toolgate is not installed in {} (no such file)",
                path.display()
            ));
        };
        let removed = t
            .remove(spec.name, &mut settings)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        if !removed {
            return Ok(format!(
                "toolgate is not {}'s hook in {}: nothing to remove",
                spec.title,
                path.display()
            ));
        }
        let kept = write(&path, &settings, Some(&text))?;
        Ok(format!(
            "removed toolgate from {}'s hooks in {}{}; {} now runs its tools without toolgate",
            spec.title,
            path.display(),
            kept.map(|b| format!(" (the file before is kept as {})", b.display()))
                .unwrap_or_default(),
            spec.title
        ))
    })();
    match result {
        Ok(msg) => {
            println!("{msg}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "toolgate uninstall: {}",
                format!("{e:#}").replace('\n', " ")
            );
            ExitCode::from(2)
        }
    }
}

fn write(path: &Path, settings: &Value, before: Option<&str>) -> Result<Option<PathBuf>> {
    write_text(
        path,
        &(serde_json::to_string_pretty(settings)? + "\n"),
        before,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_runtimes_name_the_known_ones() {
        let err = runtime("openclaw").unwrap_err().to_string();
        assert!(err.contains("claude-code, codex, gemini, cursor"), "{err}");
        assert!(err.contains("integrations/openclaw"), "{err}");
        assert_eq!(runtime(" Codex ").unwrap(), Runtime::Codex);
    }

    #[test]
    fn http_entries_are_fail_closed_and_point_at_the_hook_route() {
        assert!(http_entry("127.0.0.1:7878", Duration::from_secs(10)).is_err());
        let e = http_entry("http://127.0.0.1:7878/", Duration::from_secs(10)).unwrap();
        assert_eq!(e["url"], "http://127.0.0.1:7878/v1/hooks/claude-code");
        assert_eq!(e["onFailure"], "block");
    }
}
