//! `toolgate install claude-code`: registers toolgate as Claude Code's
//! PreToolUse hook, keeping everything else in the settings file. The entry
//! sets `onFailure: "block"`: without it Claude runs a call whose hook
//! failed or timed out.

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `toolgate install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The runtime to install into (today: claude-code).
    runtime: String,
    /// The settings file to edit. Default: ~/.claude/settings.json, or
    /// .claude/settings.json in the current directory with --project.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// Install for this project (.claude/settings.json here) instead of the user.
    #[arg(long, conflicts_with = "settings")]
    project: bool,
    /// Use the daemon's HTTP hook at this URL (e.g. http://127.0.0.1:7878)
    /// instead of running `toolgate hook` per call; the token comes from
    /// $TOOLGATE_AGENT_TOKEN in Claude's environment.
    #[arg(long)]
    http: Option<String>,
}

pub fn run(args: InstallArgs) -> ExitCode {
    match install(&args) {
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

fn install(args: &InstallArgs) -> Result<String> {
    if args.runtime.trim() != "claude-code" {
        bail!(
            "toolgate install knows claude-code so far; for {} see docs/http-api.md and `toolgate hook --help`",
            args.runtime
        );
    }
    let path = match (&args.settings, args.project) {
        (Some(p), _) => p.clone(),
        (None, true) => PathBuf::from(".claude/settings.json"),
        (None, false) => {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .ok_or_else(|| anyhow!("$HOME is not set: pass --settings FILE"))?;
            home.join(".claude/settings.json")
        }
    };
    let entry = match &args.http {
        Some(url) => http_entry(url)?,
        None => command_entry()?,
    };
    let before = match std::fs::read_to_string(&path) {
        Ok(t) if t.trim().is_empty() => None,
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut settings: Value = match &before {
        Some(t) => serde_json::from_str(t).with_context(|| {
            format!(
                "{} is not valid JSON; fix it first (nothing was changed)",
                path.display()
            )
        })?,
        None => json!({}),
    };
    let changed = add_hook(&mut settings, entry)?;
    if !changed {
        return Ok(format!(
            "toolgate is already Claude Code's PreToolUse hook in {}",
            path.display()
        ));
    }
    write(&path, &settings, before.as_deref())?;
    let kept = match before {
        Some(_) => format!("; the old file is kept as {}", backup(&path).display()),
        None => String::new(),
    };
    Ok(format!(
        "toolgate is now Claude Code's PreToolUse hook in {} (onFailure: block){kept}",
        path.display()
    ))
}

fn command_entry() -> Result<Value> {
    let exe = std::env::current_exe().context("cannot find this toolgate binary")?;
    let exe = exe.to_string_lossy();
    // Quoted for the shell Claude runs the command with.
    let quoted = if exe
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        exe.into_owned()
    } else {
        format!("'{}'", exe.replace('\'', r"'\''"))
    };
    Ok(json!({
        "type": "command",
        "command": format!("{quoted} hook claude-code"),
        "timeout": 10,
        "onFailure": "block",
    }))
}

fn http_entry(url: &str) -> Result<Value> {
    let base = url.trim().trim_end_matches('/');
    if !base.starts_with("http://") && !base.starts_with("https://") {
        bail!("--http needs a URL like http://127.0.0.1:7878 (got {url:?})");
    }
    Ok(json!({
        "type": "http",
        "url": format!("{base}/v1/hooks/claude-code"),
        "headers": {"Authorization": "Bearer $TOOLGATE_AGENT_TOKEN"},
        "allowedEnvVars": ["TOOLGATE_AGENT_TOKEN"],
        "timeout": 10,
        "onFailure": "block",
    }))
}

/// Whether a hook entry is toolgate's own (so reinstalling replaces it).
fn is_ours(hook: &Value) -> bool {
    let cmd = hook["command"].as_str().unwrap_or("");
    let url = hook["url"].as_str().unwrap_or("");
    (cmd.contains("toolgate") && cmd.contains("hook claude-code"))
        || url.ends_with("/v1/hooks/claude-code")
}

/// Puts `entry` under `hooks.PreToolUse` with matcher `*`, replacing an
/// earlier toolgate entry; returns whether anything changed.
fn add_hook(settings: &mut Value, entry: Value) -> Result<bool> {
    let root = settings
        .as_object_mut()
        .ok_or_else(|| anyhow!("the settings file is not a JSON object"))?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| anyhow!("\"hooks\" in the settings file is not an object"))?;
    let pre = hooks
        .entry("PreToolUse")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or_else(|| anyhow!("\"hooks.PreToolUse\" in the settings file is not a list"))?;
    let want = json!({"matcher": "*", "hooks": [entry]});
    if pre.contains(&want) {
        return Ok(false);
    }
    // Drop earlier toolgate entries (and groups left empty by that).
    for group in pre.iter_mut() {
        if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
            list.retain(|h| !is_ours(h));
        }
    }
    pre.retain(|g| {
        g.get("hooks")
            .and_then(Value::as_array)
            .is_none_or(|l| !l.is_empty())
    });
    pre.push(want);
    Ok(true)
}

/// Where the previous settings are kept: the same name plus `.bak`.
fn backup(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    path.with_file_name(name)
}

/// Writes the settings atomically, keeping the old text as `.bak`.
fn write(path: &Path, settings: &Value, before: Option<&str>) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    if let Some(old) = before {
        let bak = backup(path);
        std::fs::write(&bak, old).with_context(|| format!("cannot write {}", bak.display()))?;
    }
    let tmp = path.with_extension("json.toolgate-tmp");
    let text = serde_json::to_string_pretty(settings)? + "\n";
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_once_keeps_other_settings_and_replaces_old_entries() {
        let mut s = json!({"model": "x", "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "other-guard"}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "/old/toolgate hook claude-code"}]}
        ]}});
        let entry = json!({"type": "command", "command": "/new/toolgate hook claude-code", "onFailure": "block"});
        assert!(add_hook(&mut s, entry.clone()).unwrap());
        assert!(!add_hook(&mut s, entry).unwrap());
        let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2, "{s}");
        assert_eq!(pre[0]["hooks"][0]["command"], "other-guard");
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "/new/toolgate hook claude-code"
        );
        assert_eq!(s["model"], "x");
    }

    #[test]
    fn odd_shapes_are_refused_not_overwritten() {
        assert!(add_hook(&mut json!([]), json!({})).is_err());
        assert!(add_hook(&mut json!({"hooks": 3}), json!({})).is_err());
        assert!(add_hook(&mut json!({"hooks": {"PreToolUse": {}}}), json!({})).is_err());
        assert!(http_entry("127.0.0.1:7878").is_err());
        assert_eq!(
            http_entry("http://127.0.0.1:7878/").unwrap()["url"],
            "http://127.0.0.1:7878/v1/hooks/claude-code"
        );
    }
}
