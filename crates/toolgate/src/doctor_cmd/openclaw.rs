//! OpenClaw: toolgate is a plugin there (integrations/openclaw), loaded from
//! a folder in `plugins.load.paths` (or OpenClaw's extensions folders) and
//! switched on by `plugins.entries.toolgate.enabled`, in the JSON5 config
//! at `$OPENCLAW_CONFIG_PATH` or `~/.openclaw/openclaw.json`. The plugin
//! blocks a call whenever its check fails; what can still go wrong is that
//! OpenClaw never loads it, or that a setting makes it block everything.

use super::Ctx;
use super::hooks::Note;
use super::json5;
use super::report::{Finding, Level};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The plugin's id (its `openclaw.plugin.json`).
const ID: &str = "toolgate";
const NAME: &str = "openclaw";

/// Every finding for OpenClaw.
pub(super) fn check(ctx: &Ctx, asked: bool) -> Vec<Finding> {
    let Some(config) = config_path(ctx) else {
        return vec![Finding {
            runtime: NAME,
            file: None,
            level: if asked { Level::Error } else { Level::Warn },
            message: "cannot find OpenClaw's config: neither $OPENCLAW_CONFIG_PATH nor $HOME is \
                      set"
            .into(),
            fix: Some(
                "set OPENCLAW_CONFIG_PATH as OpenClaw runs, then run toolgate doctor again".into(),
            ),
        }];
    };
    let finding = |n: Note| Finding {
        runtime: NAME,
        file: Some(config.display().to_string()),
        level: n.level,
        message: n.message,
        fix: n.fix,
    };
    let text = match std::fs::read_to_string(&config) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return vec![not_installed(
                ctx,
                &config,
                asked,
                "the file does not exist",
            )];
        }
        Err(e) => {
            return vec![finding(Note::at(
                Level::Error,
                format!("cannot be read ({e}), so whether OpenClaw loads toolgate is unknown"),
                "make it readable, then run toolgate doctor again",
            ))];
        }
    };
    let v = match json5::parse(&text) {
        Ok(v) if v.is_object() => v,
        Ok(_) => {
            return vec![finding(Note::at(
                Level::Error,
                "is not a JSON5 object: OpenClaw cannot use it".into(),
                "correct the file by hand",
            ))];
        }
        Err(e) => {
            return vec![finding(Note::at(
                Level::Error,
                format!("cannot be read as JSON5 ({e}): OpenClaw refuses it too"),
                "correct the file by hand",
            ))];
        }
    };
    let plugins = v.get("plugins").cloned().unwrap_or(Value::Null);
    let entry = plugins.pointer(&format!("/entries/{ID}"));
    let (dir, missing) = locate_plugin(ctx, &config, &plugins);
    if entry.is_none() && dir.is_none() {
        return vec![not_installed(
            ctx,
            &config,
            asked,
            "it neither loads toolgate's plugin nor configures plugins.entries.toolgate",
        )];
    }
    let notes = notes(ctx, &config, &plugins, entry, dir.as_deref(), &missing);
    let mut out = Vec::new();
    // Fail-closed (warnings at most): say what is there, then the warnings.
    if let Some(dir) = dir.filter(|_| notes.iter().all(|n| n.level != Level::Error)) {
        out.push(finding(Note::ok(format!(
            "toolgate's plugin in {} is loaded and enabled: OpenClaw asks it before every tool \
             call, and a check that fails or times out blocks the call",
            dir.display()
        ))));
    }
    out.extend(notes.into_iter().map(finding));
    out
}

/// `$OPENCLAW_CONFIG_PATH`, else `~/.openclaw/openclaw.json`.
fn config_path(ctx: &Ctx) -> Option<PathBuf> {
    match ctx.var("OPENCLAW_CONFIG_PATH") {
        Some(p) => Some(expand(ctx, p, &ctx.project)),
        None => Some(ctx.home()?.join(".openclaw/openclaw.json")),
    }
}

/// `~/…` from the home, a relative path from `base`.
fn expand(ctx: &Ctx, p: &str, base: &Path) -> PathBuf {
    match (p.strip_prefix("~/"), ctx.home()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => base.join(p),
    }
}

/// How to load the plugin, in words.
fn load_fix(ctx: &Ctx, config: &Path) -> String {
    let dir = ctx.openclaw_plugin.as_ref().map_or_else(
        || "/path/to/toolgate/integrations/openclaw".into(),
        |d| d.display().to_string(),
    );
    format!(
        "in {}: add \"{dir}\" to plugins.load.paths and set plugins.entries.toolgate.enabled: \
         true (see integrations/openclaw/README.md), then restart OpenClaw",
        config.display()
    )
}

fn not_installed(ctx: &Ctx, config: &Path, asked: bool, why: &str) -> Finding {
    Finding {
        runtime: NAME,
        file: Some(config.display().to_string()),
        level: if asked { Level::Error } else { Level::Warn },
        message: format!("not installed: {why}, so toolgate does not see OpenClaw's tool calls"),
        fix: Some(load_fix(ctx, config)),
    }
}

/// The folder of toolgate's plugin OpenClaw would load, and the load paths
/// that do not exist.
fn locate_plugin(ctx: &Ctx, config: &Path, plugins: &Value) -> (Option<PathBuf>, Vec<String>) {
    let base = config.parent().unwrap_or(Path::new("/"));
    let mut missing = Vec::new();
    let mut candidates = Vec::new();
    for p in plugins
        .pointer("/load/paths")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let path = expand(ctx, p, base);
        if !path.exists() {
            missing.push(p.to_string());
        }
        // A load path is the plugin's folder, or a file in it (or in dist/).
        candidates.extend(path.ancestors().take(3).map(Path::to_path_buf));
    }
    let state = ctx
        .var("OPENCLAW_STATE_DIR")
        .map(PathBuf::from)
        .or_else(|| ctx.home().map(|h| h.join(".openclaw")));
    for ext in state
        .into_iter()
        .chain([ctx.project.join(".openclaw")])
        .map(|d| d.join("extensions"))
    {
        if let Ok(rd) = std::fs::read_dir(&ext) {
            candidates.extend(rd.flatten().map(|e| e.path()));
        }
    }
    let dir = candidates
        .into_iter()
        .find(|d| manifest(d).is_some_and(|m| m.get("id").and_then(Value::as_str) == Some(ID)));
    (dir, missing)
}

/// A plugin folder's `openclaw.plugin.json`.
fn manifest(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("openclaw.plugin.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Everything about an OpenClaw config that mentions toolgate.
fn notes(
    ctx: &Ctx,
    config: &Path,
    plugins: &Value,
    entry: Option<&Value>,
    dir: Option<&Path>,
    missing: &[String],
) -> Vec<Note> {
    let mut notes = Vec::new();
    let shown = config.display();
    let error = |message: String, fix: &str| Note::at(Level::Error, message, fix);
    if plugins.get("enabled") == Some(&Value::Bool(false)) {
        notes.push(error(
            "plugins.enabled is false: OpenClaw loads no plugins, toolgate's included".into(),
            &format!("remove plugins.enabled: false from {shown}"),
        ));
    }
    let lists = |key: &str| {
        plugins
            .get(key)
            .and_then(Value::as_array)
            .map(|l| (l.is_empty(), l.iter().any(|x| x.as_str() == Some(ID))))
    };
    if let Some((_, true)) = lists("deny") {
        notes.push(error(
            "plugins.deny lists toolgate: OpenClaw does not load it".into(),
            &format!("remove \"toolgate\" from plugins.deny in {shown}"),
        ));
    }
    if let Some((false, false)) = lists("allow") {
        notes.push(error(
            "plugins.allow does not list toolgate: OpenClaw loads only the plugins it lists".into(),
            &format!("add \"toolgate\" to plugins.allow in {shown}"),
        ));
    }
    if entry.and_then(|e| e.get("enabled")) != Some(&Value::Bool(true)) {
        notes.push(error(
            "plugins.entries.toolgate.enabled is not true: OpenClaw loads a plugin it does not \
             ship only once it is enabled"
                .into(),
            &format!(
                "set plugins.entries.toolgate.enabled: true in {shown} (or run: openclaw plugins \
                 enable toolgate)"
            ),
        ));
    }
    let Some(dir) = dir else {
        let missing = if missing.is_empty() {
            String::new()
        } else {
            format!(" ({} does not exist)", missing.join(", "))
        };
        notes.push(error(
            format!(
                "OpenClaw cannot find toolgate's plugin: no folder in plugins.load.paths{missing} \
                 or in its extensions folders has an openclaw.plugin.json with id \"toolgate\""
            ),
            &load_fix(ctx, config),
        ));
        return notes;
    };
    notes.extend(built(dir));
    let cfg = entry
        .and_then(|e| e.get("config"))
        .cloned()
        .unwrap_or(Value::Null);
    notes.extend(settings(ctx, dir, &cfg, &shown.to_string()));
    let protocol = cfg.get("protocol") != Some(&Value::Bool(false));
    let access = entry.and_then(|e| e.pointer("/hooks/allowConversationAccess"));
    if protocol && access != Some(&Value::Bool(true)) {
        notes.push(Note::at(
            Level::Warn,
            "plugins.entries.toolgate.hooks.allowConversationAccess is not true: OpenClaw does \
             not let the plugin put toolgate's rules into the system prompt (calls are still \
             gated)"
                .into(),
            &format!("set plugins.entries.toolgate.hooks.allowConversationAccess: true in {shown}"),
        ));
    }
    notes
}

/// Whether the files the plugin's package.json names for OpenClaw exist.
fn built(dir: &Path) -> Vec<Note> {
    let fix = format!("cd {} && npm ci && npm run build", dir.display());
    let pkg = std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    let Some(files) = pkg
        .as_ref()
        .and_then(|p| p.pointer("/openclaw/extensions"))
        .and_then(Value::as_array)
    else {
        return vec![Note::at(
            Level::Error,
            format!(
                "{} has no package.json naming openclaw.extensions: OpenClaw cannot load the \
                 plugin",
                dir.display()
            ),
            &fix,
        )];
    };
    files
        .iter()
        .filter_map(Value::as_str)
        .filter(|f| !dir.join(f).is_file())
        .map(|f| {
            Note::at(
                Level::Error,
                format!(
                    "the plugin in {} is not built ({f} is missing): OpenClaw cannot load it",
                    dir.display()
                ),
                &fix,
            )
        })
        .collect()
}

/// `plugins.entries.toolgate.config` checked as the plugin reads it (its
/// `config.ts`): a setting that cannot work makes it block every call.
fn settings(ctx: &Ctx, dir: &Path, cfg: &Value, config: &str) -> Vec<Note> {
    let mut notes = Vec::new();
    let mut bad = |message: String| {
        notes.push(Note::at(
            Level::Error,
            format!(
                "plugins.entries.toolgate.config: {message}; the plugin then blocks every call"
            ),
            &format!("correct plugins.entries.toolgate.config in {config}"),
        ));
    };
    let empty = serde_json::Map::new();
    let Some(map) = cfg.as_object().or(cfg.is_null().then_some(&empty)) else {
        bad("is not an object".into());
        return notes;
    };
    let known: Vec<String> = manifest(dir)
        .and_then(|m| {
            m.pointer("/configSchema/properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
        })
        .unwrap_or_default();
    for key in map.keys() {
        if !known.is_empty() && !known.contains(key) {
            bad(format!(
                "{key} is not a setting of the plugin (its schema refuses it)"
            ));
        }
    }
    let text = |k: &str| match map.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{k} must be a string")),
    };
    for (k, lo, hi) in [("timeoutMs", 100, 14_000), ("wait", 1, 600)] {
        if let Some(v) = map.get(k).filter(|v| !v.is_null())
            && !v.as_i64().is_some_and(|n| (lo..=hi).contains(&n))
        {
            bad(format!(
                "{k} must be an integer from {lo} to {hi} (it is {v})"
            ));
        }
    }
    for k in ["approveTool", "ackTool", "protocol", "nativeApproval"] {
        if let Some(v) = map.get(k).filter(|v| !v.is_null() && !v.is_boolean()) {
            bad(format!("{k} must be true or false (it is {v})"));
        }
    }
    match text("url") {
        Err(e) => bad(e),
        Ok(url) => {
            let url = url.or_else(|| ctx.var("TOOLGATE_URL").map(str::to_string));
            if let Some(u) = url.filter(|u| !u.starts_with("http://") && !u.starts_with("https://"))
            {
                bad(format!("the daemon URL {u:?} is not http:// or https://"));
            }
        }
    }
    let token = text("token");
    let file = text("tokenFile");
    match (token, file) {
        (Err(e), _) | (_, Err(e)) => bad(e),
        (Ok(Some(_)), _) => {}
        _ if ctx.var("TOOLGATE_AGENT_TOKEN").is_some() => {}
        (Ok(None), Ok(Some(f))) => {
            let path = expand(ctx, &f, &ctx.project);
            match std::fs::read_to_string(&path) {
                Ok(t) if !t.trim().is_empty() => {}
                Ok(_) => bad(format!("tokenFile {} is empty", path.display())),
                Err(e) => bad(format!("tokenFile {} cannot be read ({e})", path.display())),
            }
        }
        (Ok(None), Ok(None)) => {
            let data = ctx
                .var("TOOLGATE_DATA_DIR")
                .map(PathBuf::from)
                .or_else(|| {
                    ctx.var("XDG_STATE_HOME")
                        .map(|x| PathBuf::from(x).join("toolgate"))
                })
                .or_else(|| ctx.home().map(|h| h.join(".local/state/toolgate")));
            if let Some(file) = data.map(|d| d.join("agent.token"))
                && !file.is_file()
            {
                notes.push(Note::at(
                    Level::Warn,
                    format!(
                        "no agent token yet: the plugin reads {} (no token, tokenFile or \
                         TOOLGATE_AGENT_TOKEN), which toolgate serve writes on its first start; \
                         until then every call is blocked",
                        file.display()
                    ),
                    "start the daemon (toolgate serve), or set plugins.entries.toolgate.config.tokenFile",
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests;
