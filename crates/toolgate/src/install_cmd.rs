//! `toolgate install <runtime>`: registers toolgate as the runtime's
//! pre-tool hook, keeping everything else in its settings file. What the
//! entry looks like is the runtime module's (`toolgate_core::hooks`): every
//! entry is fail-closed where the runtime has a switch for it, has a timeout
//! above the `[hooks] hold`, and its command pins everything the hook
//! depends on ([`HookPins`]): this binary by its absolute path (a `toolgate`
//! looked up in `$PATH` could be one the agent put first), the policy (or
//! `builtin`), the daemon with its key or user (or `none`), and the data
//! dir (or `--store none`). So no environment variable the agent can set
//! for the runtime redirects the hook, and runtimes that strip the hook's
//! environment change nothing. For Codex the hook's trust entry is written
//! too: Codex skips an untrusted hook without a word.

use crate::decider::{BUILTIN, Endpoint, NONE};
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
use toolgate_gate::PublicKey;

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
    /// Name the binary as `toolgate`, found on each machine's PATH, and
    /// write no data dir, for a project file shared with a team. Such a
    /// hook can be redirected (a `toolgate` put first on PATH, `$HOME`):
    /// `toolgate doctor` says so.
    #[arg(long)]
    portable: bool,
    /// Claude Code only: use the daemon's HTTP hook at this URL (e.g.
    /// http://127.0.0.1:7878) instead of running `toolgate hook` per call;
    /// the token comes from $TOOLGATE_AGENT_TOKEN in Claude's environment.
    /// Claude cannot check that the daemon is the real one: any program on
    /// that address is believed.
    #[arg(long)]
    http: Option<String>,
    /// The policy the hook decides with (written, absolute, on the hook's
    /// command line), or `builtin`. Default: $TOOLGATE_POLICY, else builtin.
    #[arg(long, env = "TOOLGATE_POLICY", value_name = "FILE|builtin")]
    policy: Option<PathBuf>,
    /// The daemon the hook asks: `unix:/run/toolgate/toolgate.sock`,
    /// `http://127.0.0.1:7878`, or `none` (decide in the hook's process).
    /// Default: $TOOLGATE_URL, else none.
    #[arg(long, env = "TOOLGATE_URL", value_name = "URL|unix:PATH|none")]
    url: Option<String>,
    /// With an http:// daemon: its public key (`ed25519:…`). Default: the
    /// `daemon.pub` in the data directory (written by `toolgate serve`).
    #[arg(long, value_name = "ed25519:HEX")]
    daemon_key: Option<String>,
    /// With a unix: daemon: the user it runs as (a name or a uid),
    /// resolved now and written as a uid. Default: the socket's owner, when
    /// the socket exists.
    #[arg(long, value_name = "USER|UID")]
    daemon_uid: Option<String>,
    /// The hook's timeout in seconds. Default: 10, or the policy's
    /// `[hooks] hold` plus 15.
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Accept a policy that you (and so an agent running as you) can
    /// change, and write `--allow-writable-policy` into the hook: same-user
    /// mode, where the policy is protected by judgement only. Without it
    /// such a policy is refused here, as the hook would refuse it.
    #[arg(long)]
    allow_writable_policy: bool,
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
    hook_timeout(
        crate::decider::policy_file(args.policy.as_deref()),
        args.timeout,
    )
}

/// The timeout for a hook deciding with `policy`: `asked`, else 10 s, or
/// the policy's `[hooks] hold` plus 15 s; an asked one too short for the
/// hold is refused.
pub(crate) fn hook_timeout(policy: Option<&Path>, asked: Option<u64>) -> Result<Duration> {
    let hold = match policy {
        Some(p) => crate::check::load_policy_file(p)?.hooks().hold,
        None => Duration::ZERO,
    };
    let wanted = if hold.is_zero() {
        crate::hook_cmd::DEFAULT_TIMEOUT
    } else {
        hold + Duration::from_secs(15)
    };
    match asked {
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

/// Everything a hook command pins, so that nothing in its environment
/// decides where it asks or what it obeys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HookPins {
    /// The binary: an absolute path (or `toolgate` from PATH, `--portable`).
    pub exe: String,
    /// The policy file; `None`: the built-in default (`--policy builtin`).
    pub policy: Option<PathBuf>,
    /// The daemon and what proves it; `None`: the hook decides itself
    /// (`--url none`).
    pub daemon: Option<(Endpoint, DaemonPin)>,
    /// The data dir (absolute), where the hook keeps its state or, with a
    /// daemon over TCP, reads the agent token.
    pub data_dir: Option<PathBuf>,
    /// `--store`: a store of its own, or `none` (the hook opens none).
    pub store: Option<String>,
    /// `--allow-writable-policy`: the installer accepted a policy the
    /// agent's user can change (same-user mode).
    pub allow_writable_policy: bool,
}

/// What proves a daemon to the hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DaemonPin {
    /// Its signing key (over TCP).
    Key(PublicKey),
    /// Its user id (over a Unix socket).
    Uid(u32),
}

/// The hook command for `spec`: the binary, `hook <runtime>`, the timeout
/// and every pin, each word quoted for the shell the runtime runs it with.
pub(crate) fn hook_command(spec: &Spec, timeout: Duration, pins: &HookPins) -> String {
    let mut words = vec![
        pins.exe.clone(),
        "hook".to_string(),
        spec.name.to_string(),
        "--timeout".to_string(),
        timeout.as_secs().max(1).to_string(),
        "--policy".to_string(),
        pins.policy
            .as_ref()
            .map_or_else(|| BUILTIN.to_string(), |p| shell_word(&p.to_string_lossy())),
        "--url".to_string(),
    ];
    match &pins.daemon {
        None => words.push(NONE.to_string()),
        Some((endpoint, pin)) => {
            words.push(shell_word(&endpoint.shown()));
            match pin {
                DaemonPin::Key(k) => words.extend(["--daemon-key".into(), k.to_string()]),
                DaemonPin::Uid(u) => words.extend(["--daemon-uid".into(), u.to_string()]),
            }
        }
    }
    if let Some(d) = &pins.data_dir {
        words.extend(["--data-dir".into(), shell_word(&d.to_string_lossy())]);
    }
    if let Some(s) = &pins.store {
        words.extend(["--store".into(), shell_word(s)]);
    }
    if pins.allow_writable_policy {
        words.push("--allow-writable-policy".into());
    }
    words.join(" ")
}

/// The pins `toolgate install` writes, from its options (and, for what
/// they leave out, the environment it runs in: the person installing
/// chooses, never the runtime's environment later).
fn pins(args: &InstallArgs, data: &DataDirArgs) -> Result<HookPins> {
    let exe = if args.portable {
        "toolgate".to_string()
    } else {
        let exe = std::env::current_exe().context("cannot find this toolgate binary")?;
        shell_word(&exe.to_string_lossy())
    };
    let policy = match crate::decider::policy_file(args.policy.as_deref()) {
        None => None,
        Some(p) => {
            let p = absolute(p)?;
            if !p.is_file() {
                bail!("--policy {}: no such file", p.display());
            }
            Some(p)
        }
    };
    let allow_writable_policy = match &policy {
        Some(p) => writable_policy_accepted(p, args.allow_writable_policy)?,
        None => false,
    };
    let endpoint = match args.url.as_deref() {
        Some(u) => Endpoint::parse(u)?,
        None => None,
    };
    let (dir, chosen) = data.resolve();
    let dir = absolute(&dir)?;
    let daemon = match endpoint {
        None => {
            if args.daemon_key.is_some() || args.daemon_uid.is_some() {
                bail!("--daemon-key and --daemon-uid pin a daemon: give its --url too");
            }
            None
        }
        Some(e @ Endpoint::Tcp { .. }) => {
            if args.daemon_uid.is_some() {
                bail!(
                    "--daemon-uid is for a daemon on a Unix socket (--url unix:PATH); over TCP the hook checks its key (--daemon-key)"
                );
            }
            let key = match &args.daemon_key {
                Some(k) => PublicKey::parse(k).map_err(|e| anyhow!("--daemon-key: {e}"))?,
                None => {
                    let pub_file = dir.join(toolgate_gate::PUBLIC_FILE);
                    PublicKey::read(&pub_file).map_err(|err| {
                        anyhow!(
                            "the hook must pin the daemon at {} ({err}): start the daemon once \
                             (toolgate serve writes {}), or pass --daemon-key ed25519:… as \
                             toolgate serve prints it",
                            e.shown(),
                            pub_file.display()
                        )
                    })?
                }
            };
            Some((e, DaemonPin::Key(key)))
        }
        Some(e @ Endpoint::Unix(_)) => {
            if args.daemon_key.is_some() {
                bail!(
                    "--daemon-key is for a daemon over TCP; on a Unix socket the hook checks the daemon's user (--daemon-uid USER)"
                );
            }
            let uid = match &args.daemon_uid {
                Some(u) => crate::peer::uid_of(u)
                    .ok_or_else(|| anyhow!("--daemon-uid {u:?}: no such user here"))?,
                None => socket_owner(&e)?,
            };
            Some((e, DaemonPin::Uid(uid)))
        }
    };
    let (data_dir, store) = match &daemon {
        // Over the socket the daemon knows its peer: no token, no state here.
        Some((Endpoint::Unix(_), _)) => (None, Some(NONE.to_string())),
        // Over TCP the hook reads the agent token from the data dir.
        Some((Endpoint::Tcp { .. }, _)) => {
            if data.store_is_none() {
                (None, Some(NONE.to_string()))
            } else {
                (Some(dir), None)
            }
        }
        None if args.portable && !chosen => (None, data.store.clone()),
        None => (Some(dir), data.store.clone()),
    };
    Ok(HookPins {
        exe,
        policy,
        daemon,
        data_dir,
        store,
        allow_writable_policy,
    })
}

/// Whether the hook for the policy at `path` needs `--allow-writable-policy`:
/// the hook runs as the agent's user (this one), and refuses a policy that
/// user can change unless told otherwise, so installing such a hook without
/// the installer's explicit `allowed` would deny every call. Refused here,
/// with what to do, unless `allowed`.
fn writable_policy_accepted(path: &Path, allowed: bool) -> Result<bool> {
    let bundle =
        toolgate_bundle::load(Some(path), &crate::check::load_env()).map_err(|e| anyhow!("{e}"))?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let Some(w) =
        toolgate_bundle::agent_writable(bundle.sources(), toolgate_bundle::Writers::ThisUser, &cwd)
    else {
        return Ok(false);
    };
    if !allowed {
        bail!(
            "--policy {}: {} {}, so an agent running as you could rewrite what it obeys, and the \
             hook would refuse it. Put the policy where only root can change it (`sudo toolgate \
             setup separated --policy {}` does that, and more), or accept same-user mode, \
             protected by judgement only, with --allow-writable-policy",
            path.display(),
            w.path.display(),
            w.why,
            path.display()
        );
    }
    Ok(true)
}

/// The owner of the daemon's socket, as the default daemon user: only
/// when the socket is there and its directory is not writable by others
/// (else anyone could have put it there).
fn socket_owner(e: &Endpoint) -> Result<u32> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Endpoint::Unix(path) = e else {
        bail!("not a socket");
    };
    let how = "pass --daemon-uid USER (the user the daemon runs as)";
    let meta = std::fs::symlink_metadata(path)
        .map_err(|err| anyhow!("{} ({err}): {how}", path.display()))?;
    if !meta.file_type().is_socket() {
        bail!("{} is not a socket: {how}", path.display());
    }
    let parent = path.parent().unwrap_or(Path::new("/"));
    let dir =
        std::fs::metadata(parent).map_err(|err| anyhow!("{} ({err}): {how}", parent.display()))?;
    if dir.mode() & 0o022 != 0 {
        bail!(
            "{} is writable by other users, so anyone could have made the socket in it: {how}",
            parent.display()
        );
    }
    Ok(meta.uid())
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
        None => t.entry(&hook_command(spec, timeout, &pins(args, data)?), timeout),
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
    if args.portable {
        s.push_str(
            "\n  the hook runs `toolgate` from PATH on every machine that uses this project: \
             install it there too (a `toolgate` put first on PATH would answer instead: \
             toolgate doctor reports such a hook)",
        );
    }
    if args.http.is_some() {
        s.push_str(
            "\n  note: Claude Code cannot check that what answers on that URL is the real \
             daemon; a `toolgate hook` command (--url … --daemon-key …) can",
        );
    }
    let daemon = args
        .url
        .as_deref()
        .and_then(|u| Endpoint::parse(u).ok().flatten());
    if args.http.is_some() || daemon.is_some() {
        s.push_str("\n  start the daemon it asks: toolgate serve");
    }
    s.push_str(
        "\n  for a hook the agent's user cannot change or switch off at all: sudo toolgate \
         setup separated (docs/deploy.md)",
    );
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
        // Codex's trust entries for toolgate's hooks, known only while the
        // hooks are still in the file.
        let trusted = settings.clone();
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
        let mut msg = format!(
            "removed toolgate from {}'s hooks in {}{}; {} now runs its tools without toolgate",
            spec.title,
            path.display(),
            kept.map(|b| format!(" (the file before is kept as {})", b.display()))
                .unwrap_or_default(),
            spec.title
        );
        if t.needs_trust {
            match crate::codex_trust_cmd::untrust(&path, &trusted, spec) {
                Ok(Some(said)) => msg.push_str(&format!("\n{said}")),
                Ok(None) => {}
                Err(e) => anyhow::bail!(
                    "{msg}, but its trust entries are still in Codex's config: {e:#}; remove \
                     the [hooks.state] entries for {} by hand",
                    path.display()
                ),
            }
        }
        Ok(msg)
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
