//! `toolgate install <runtime>`: registers toolgate as the runtime's
//! pre-tool hook, keeping everything else in its settings file. Claude
//! Code's entry sets `onFailure: "block"`: without it Claude runs a call
//! whose hook failed or timed out.

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `toolgate install`.
#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The runtime to install into: claude-code, codex, gemini or cursor.
    runtime: String,
    /// The settings file to edit. Default: the runtime's user file
    /// (~/.claude/settings.json, ~/.codex/hooks.json, ~/.gemini/settings.json,
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
}

/// How one runtime registers a hook.
struct Target {
    /// The CLI name (`toolgate hook <name>`).
    name: &'static str,
    /// What people call it.
    title: &'static str,
    /// The settings directory under $HOME and under a project.
    dir: &'static str,
    /// Overrides the user directory when set (Codex's `CODEX_HOME`).
    dir_env: Option<&'static str>,
    /// The settings file in that directory.
    file: &'static str,
    /// The hook events to register under `hooks`.
    events: &'static [&'static str],
    /// Builds the list item for one hook command entry.
    item: fn(Value) -> Value,
    /// Extra fields of the hook entry (timeouts, failure mode).
    extra: fn() -> Value,
}

const TARGETS: &[Target] = &[
    Target {
        name: "claude-code",
        title: "Claude Code",
        dir: ".claude",
        dir_env: None,
        file: "settings.json",
        events: &["PreToolUse"],
        item: |e| json!({"matcher": "*", "hooks": [e]}),
        extra: || json!({"timeout": 10, "onFailure": "block"}),
    },
    Target {
        name: "codex",
        title: "Codex",
        dir: ".codex",
        dir_env: Some("CODEX_HOME"),
        file: "hooks.json",
        events: &["PreToolUse"],
        item: |e| json!({"matcher": "*", "hooks": [e]}),
        extra: || json!({"timeout": 10}),
    },
    Target {
        name: "gemini",
        title: "Gemini CLI",
        dir: ".gemini",
        dir_env: None,
        file: "settings.json",
        events: &["BeforeTool"],
        item: |e| json!({"matcher": ".*", "hooks": [e]}),
        // Milliseconds here.
        extra: || json!({"timeout": 10000}),
    },
    Target {
        name: "cursor",
        title: "Cursor",
        dir: ".cursor",
        dir_env: None,
        file: "hooks.json",
        events: &[
            "beforeShellExecution",
            "beforeMCPExecution",
            "beforeReadFile",
        ],
        // Cursor's lists hold the entries themselves.
        item: |e| e,
        extra: || json!({}),
    },
];

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

fn target(name: &str) -> Result<&'static Target> {
    let name = name.trim().to_ascii_lowercase();
    TARGETS.iter().find(|t| t.name == name).ok_or_else(|| {
        anyhow!(
            "unknown runtime {name:?}: use claude-code, codex, gemini or cursor (OpenClaw: see \
             integrations/openclaw; MCP: toolgate mcp-proxy)"
        )
    })
}

fn settings_path(t: &Target, args: &InstallArgs) -> Result<PathBuf> {
    if let Some(p) = &args.settings {
        return Ok(p.clone());
    }
    if args.project {
        return Ok(Path::new(t.dir).join(t.file));
    }
    if let Some(dir) = t
        .dir_env
        .and_then(std::env::var_os)
        .filter(|d| !d.is_empty())
    {
        return Ok(PathBuf::from(dir).join(t.file));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("$HOME is not set: pass --settings FILE"))?;
    Ok(home.join(t.dir).join(t.file))
}

fn install(args: &InstallArgs) -> Result<String> {
    let t = target(&args.runtime)?;
    let path = settings_path(t, args)?;
    let entry = match (&args.http, t.name) {
        (Some(url), "claude-code") => http_entry(url)?,
        (Some(_), _) => bail!(
            "--http is for Claude Code, whose hooks can call a URL; {} runs a command",
            t.title
        ),
        (None, _) => command_entry(t)?,
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
    let changed = add_hook(t, &mut settings, entry)?;
    let events = match t.events {
        [one] => format!("{one} hook"),
        many => format!("{} hooks", many.join(", ")),
    };
    if !changed {
        return Ok(format!(
            "toolgate is already {}'s {events} in {}",
            t.title,
            path.display()
        ));
    }
    write(&path, &settings, before.as_deref())?;
    let kept = match before {
        Some(_) => format!("; the old file is kept as {}", backup(&path).display()),
        None => String::new(),
    };
    let failure = if t.name == "claude-code" {
        " (onFailure: block)"
    } else {
        ""
    };
    Ok(format!(
        "toolgate is now {}'s {events} in {}{failure}{kept}",
        t.title,
        path.display()
    ))
}

fn command_entry(t: &Target) -> Result<Value> {
    let exe = std::env::current_exe().context("cannot find this toolgate binary")?;
    let exe = exe.to_string_lossy();
    // Quoted for the shell the runtime runs the command with.
    let quoted = if exe
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        exe.into_owned()
    } else {
        format!("'{}'", exe.replace('\'', r"'\''"))
    };
    let mut entry = json!({
        "type": "command",
        "command": format!("{quoted} hook {}", t.name),
    });
    if t.name == "cursor" {
        // Cursor's entries carry only the command.
        entry = json!({"command": entry["command"]});
    }
    if let (Some(e), Some(extra)) = (entry.as_object_mut(), (t.extra)().as_object()) {
        e.extend(extra.clone());
    }
    Ok(entry)
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

/// Whether a hook entry is toolgate's own for this runtime (so
/// reinstalling replaces it).
fn is_ours(t: &Target, hook: &Value) -> bool {
    let cmd = hook["command"].as_str().unwrap_or("");
    let url = hook["url"].as_str().unwrap_or("");
    (cmd.contains("toolgate") && cmd.contains(&format!("hook {}", t.name)))
        || (t.name == "claude-code" && url.ends_with("/v1/hooks/claude-code"))
}

/// Puts `entry` under each of the runtime's `hooks.<event>` lists,
/// replacing earlier toolgate entries; returns whether anything changed.
fn add_hook(t: &Target, settings: &mut Value, entry: Value) -> Result<bool> {
    let root = settings
        .as_object_mut()
        .ok_or_else(|| anyhow!("the settings file is not a JSON object"))?;
    if t.name == "cursor" {
        root.entry("version").or_insert(json!(1));
    }
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| anyhow!("\"hooks\" in the settings file is not an object"))?;
    let want = (t.item)(entry);
    let mut changed = false;
    for event in t.events {
        let list = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| anyhow!("\"hooks.{event}\" in the settings file is not a list"))?;
        if list.contains(&want) {
            continue;
        }
        // Drop earlier toolgate entries (and groups left empty by that).
        for group in list.iter_mut() {
            if let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                inner.retain(|h| !is_ours(t, h));
            }
        }
        list.retain(|g| match g.get("hooks").and_then(Value::as_array) {
            Some(inner) => !inner.is_empty(),
            None => !is_ours(t, g),
        });
        list.push(want.clone());
        changed = true;
    }
    Ok(changed)
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
        let t = target("claude-code").unwrap();
        assert!(add_hook(t, &mut s, entry.clone()).unwrap());
        assert!(!add_hook(t, &mut s, entry).unwrap());
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
        let t = target("claude-code").unwrap();
        assert!(add_hook(t, &mut json!([]), json!({})).is_err());
        assert!(add_hook(t, &mut json!({"hooks": 3}), json!({})).is_err());
        assert!(add_hook(t, &mut json!({"hooks": {"PreToolUse": {}}}), json!({})).is_err());
        assert!(target("openclaw").is_err());
        assert!(http_entry("127.0.0.1:7878").is_err());
        assert_eq!(
            http_entry("http://127.0.0.1:7878/").unwrap()["url"],
            "http://127.0.0.1:7878/v1/hooks/claude-code"
        );
    }

    #[test]
    fn every_runtime_gets_its_own_shape() {
        let cursor = target("cursor").unwrap();
        let mut s = json!({"hooks": {"beforeShellExecution": [{"command": "other"},
            {"command": "/old/toolgate hook cursor"}]}});
        let e = command_entry(cursor).unwrap();
        assert!(e["command"].as_str().unwrap().ends_with(" hook cursor"));
        assert!(e.get("type").is_none());
        assert!(add_hook(cursor, &mut s, e.clone()).unwrap());
        assert!(!add_hook(cursor, &mut s, e).unwrap());
        assert_eq!(s["version"], 1);
        let shell = s["hooks"]["beforeShellExecution"].as_array().unwrap();
        assert_eq!(shell.len(), 2, "{s}");
        assert_eq!(shell[0]["command"], "other");
        assert_eq!(s["hooks"]["beforeReadFile"].as_array().unwrap().len(), 1);

        let gemini = target("gemini").unwrap();
        let mut s = json!({});
        let e = command_entry(gemini).unwrap();
        assert_eq!(e["timeout"], 10000);
        assert!(add_hook(gemini, &mut s, e).unwrap());
        assert_eq!(s["hooks"]["BeforeTool"][0]["matcher"], ".*");

        let codex = target("codex").unwrap();
        let mut s = json!({});
        assert!(add_hook(codex, &mut s, command_entry(codex).unwrap()).unwrap());
        let h = &s["hooks"]["PreToolUse"][0]["hooks"][0];
        assert!(
            h["command"].as_str().unwrap().ends_with(" hook codex"),
            "{s}"
        );
        assert!(h.get("onFailure").is_none());
    }
}
