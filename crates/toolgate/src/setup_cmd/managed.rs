//! Each runtime's system-level hook file: where it is, and merging
//! toolgate's entry into it with everything else kept. These are the files
//! the agent's user cannot write (root's, under `/etc`), read by the
//! runtime with a precedence the user's and the project's settings do not
//! override — as far as each runtime allows (docs/integrations.md, "Hooks
//! the agent cannot switch off").

use anyhow::{Result, anyhow};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use toolgate_core::hooks::install::is_ours;
use toolgate_core::hooks::{Runtime, Spec};

/// Where a runtime reads hooks the machine's administrator sets, below
/// `root` (`/` on a real system), for this OS.
pub(crate) fn system_file(runtime: Runtime, root: &Path) -> PathBuf {
    let mac = cfg!(target_os = "macos");
    let rel = match (runtime, mac) {
        (Runtime::ClaudeCode, false) => "etc/claude-code/managed-settings.json",
        (Runtime::ClaudeCode, true) => {
            "Library/Application Support/ClaudeCode/managed-settings.json"
        }
        (Runtime::Codex, _) => "etc/codex/requirements.toml",
        (Runtime::Gemini, false) => "etc/gemini-cli/settings.json",
        (Runtime::Gemini, true) => "Library/Application Support/GeminiCli/settings.json",
        (Runtime::Cursor, false) => "etc/cursor/hooks.json",
        (Runtime::Cursor, true) => "Library/Application Support/Cursor/hooks.json",
    };
    root.join(rel)
}

/// What a runtime's system-level file does and does not guarantee, for the
/// set-up's report and doctor.
pub(crate) fn guarantee(runtime: Runtime) -> &'static str {
    match runtime {
        Runtime::ClaudeCode => {
            "managed settings: a project's or user's disableAllHooks does not switch it off"
        }
        Runtime::Codex => {
            "system requirements with [features] hooks = true: the user's hooks = false has no \
             effect, and no trust entry is needed"
        }
        Runtime::Gemini => {
            "system override with hooksConfig.enabled = true; but a trusted project's \
             hooksConfig.disabled naming the command still disables it (nothing system-level \
             prevents that: toolgate doctor reports such an entry, and the judgement layer \
             guards .gemini/settings.json)"
        }
        Runtime::Cursor => {
            "Cursor's enterprise hooks file, from Cursor's documentation (not observed here: no \
             Cursor CLI to drive); whether a project can switch it off is not known"
        }
    }
}

/// Merges toolgate's entry (`entry`) into the text of `runtime`'s system
/// file (`None`: no file yet), replacing an earlier toolgate entry for it
/// and keeping everything else; with `managed_only`, also tells the
/// runtime to run managed hooks only (Claude Code, Codex). The new text,
/// or `None` when nothing changes.
pub(crate) fn merge(
    runtime: Runtime,
    before: Option<&str>,
    entry: Value,
    managed_only: bool,
) -> Result<Option<String>> {
    let spec = runtime.spec();
    if runtime == Runtime::Codex {
        return merge_codex(spec, before, &entry, managed_only);
    }
    let mut v: Value = match before.map(str::trim).filter(|t| !t.is_empty()) {
        None => json!({}),
        Some(t) => serde_json::from_str(t).map_err(|e| {
            anyhow!("not valid JSON ({e}): fix it by hand first (nothing was changed)")
        })?,
    };
    let mut changed = spec
        .install
        .add(spec.name, &mut v, entry)
        .map_err(|e| anyhow!("{e}"))?;
    let root = v
        .as_object_mut()
        .ok_or_else(|| anyhow!("not a JSON object"))?;
    match runtime {
        Runtime::Gemini => {
            // The system override wins for single values: the project's
            // `enabled: false` then has no effect.
            let cfg = root
                .entry("hooksConfig")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .ok_or_else(|| anyhow!("\"hooksConfig\" is not an object: fix it by hand first"))?;
            if cfg.get("enabled") != Some(&json!(true)) {
                cfg.insert("enabled".into(), json!(true));
                changed = true;
            }
        }
        Runtime::ClaudeCode
            if managed_only && root.get("allowManagedHooksOnly") != Some(&json!(true)) =>
        {
            root.insert("allowManagedHooksOnly".into(), json!(true));
            changed = true;
        }
        _ => {}
    }
    Ok(changed.then(|| serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"))
}

/// Codex's `requirements.toml`: `[features] hooks = true` (the user's
/// `false` then has no effect), and an inline `[[hooks.PreToolUse]]` group
/// with toolgate's handler; comments and other content kept.
fn merge_codex(
    spec: &Spec,
    before: Option<&str>,
    entry: &Value,
    managed_only: bool,
) -> Result<Option<String>> {
    use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};
    let text = before.unwrap_or("");
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| anyhow!("not valid TOML ({e}): fix it by hand first (nothing was changed)"))?;
    let was = doc.to_string();
    // [features] hooks = true
    let features = doc
        .entry("features")
        .or_insert_with(|| Item::Table(Table::new()));
    let features = features
        .as_table_like_mut()
        .ok_or_else(|| anyhow!("\"features\" is not a table: fix it by hand first"))?;
    if features.get("hooks").and_then(Item::as_bool) != Some(true) {
        features.insert("hooks", value(true));
    }
    if managed_only {
        doc["allow_managed_hooks_only"] = value(true);
    }
    let hooks = doc.entry("hooks").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let hooks = hooks
        .as_table_mut()
        .ok_or_else(|| anyhow!("\"hooks\" is not a table: fix it by hand first"))?;
    for event in spec.install.events {
        let list = hooks
            .entry(event)
            .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
        let list = list.as_array_of_tables_mut().ok_or_else(|| {
            anyhow!(
                "\"hooks.{event}\" is not a list of [[hooks.{event}]] tables: fix it by hand first"
            )
        })?;
        // Drop earlier toolgate handlers, and groups they leave empty.
        let mut keep = ArrayOfTables::new();
        for group in list.iter() {
            let mut g = group.clone();
            if let Some(inner) = g.get_mut("hooks").and_then(Item::as_array_of_tables_mut) {
                let mut kept = ArrayOfTables::new();
                for h in inner.iter() {
                    if !is_ours(spec.name, &table_json(h)) {
                        kept.push(h.clone());
                    }
                }
                if kept.is_empty() {
                    continue;
                }
                *inner = kept;
            }
            keep.push(g);
        }
        let mut handler = Table::new();
        for key in ["type", "command"] {
            if let Some(s) = entry.get(key).and_then(Value::as_str) {
                handler.insert(key, value(s));
            }
        }
        if let Some(t) = entry.get("timeout").and_then(Value::as_i64) {
            handler.insert("timeout", value(t));
        }
        let mut handlers = ArrayOfTables::new();
        handlers.push(handler);
        let mut group = Table::new();
        group.insert("matcher", value("*"));
        group.insert("hooks", Item::ArrayOfTables(handlers));
        keep.push(group);
        *list = keep;
    }
    let now = doc.to_string();
    Ok((now != was).then_some(now))
}

/// A TOML table as JSON, for the JSON-shaped checks (`is_ours`, `find`).
pub(crate) fn table_json(t: &toml_edit::Table) -> Value {
    let mut m = serde_json::Map::new();
    for (k, item) in t.iter() {
        m.insert(k.to_string(), item_json(item));
    }
    Value::Object(m)
}

/// A TOML item as JSON.
pub(crate) fn item_json(item: &toml_edit::Item) -> Value {
    use toml_edit::Item;
    match item {
        Item::None => Value::Null,
        Item::Value(v) => value_json(v),
        Item::Table(t) => table_json(t),
        Item::ArrayOfTables(a) => Value::Array(a.iter().map(table_json).collect()),
    }
}

fn value_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as V;
    match v {
        V::String(s) => json!(s.value()),
        V::Integer(i) => json!(i.value()),
        V::Float(f) => json!(f.value()),
        V::Boolean(b) => json!(b.value()),
        V::Datetime(d) => json!(d.value().to_string()),
        V::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        V::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_json(v)))
                .collect(),
        ),
    }
}

/// A whole TOML document as JSON (doctor reads Codex's requirements so).
pub(crate) fn toml_json(text: &str) -> Result<Value> {
    let doc: toml_edit::DocumentMut = text.parse().map_err(|e| anyhow!("not valid TOML ({e})"))?;
    Ok(table_json(doc.as_table()))
}

/// The entry for `spec` running `command` with `timeout`.
pub(crate) fn entry(spec: &Spec, command: &str, timeout: Duration) -> Value {
    spec.install.entry(command, timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/usr/local/bin/toolgate hook codex --timeout 10 --policy /etc/toolgate/policy.toml --url unix:/run/toolgate/toolgate.sock --daemon-uid 998 --store none";

    #[test]
    fn codex_requirements_get_the_switch_and_one_group_and_keep_the_rest() {
        let spec = Runtime::Codex.spec();
        let before = "# admin's notes\napproval_policy = \"on-request\"\n\n[features]\nhooks = false\nweb_search = true\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/opt/audit-hook\"\n\n[[hooks.PreToolUse]]\nmatcher = \"*\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/old/toolgate hook codex\"\n";
        let e = entry(spec, CMD, Duration::from_secs(10));
        let after = merge(Runtime::Codex, Some(before), e.clone(), false)
            .unwrap()
            .expect("a change");
        assert!(after.starts_with("# admin's notes\n"), "{after}");
        let v = toml_json(&after).unwrap();
        assert_eq!(v["features"]["hooks"], true);
        assert_eq!(v["features"]["web_search"], true);
        assert_eq!(v["approval_policy"], "on-request");
        let groups = v["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{after}");
        assert_eq!(groups[0]["hooks"][0]["command"], "/opt/audit-hook");
        assert_eq!(groups[1]["matcher"], "*");
        assert_eq!(groups[1]["hooks"][0]["command"], CMD);
        assert_eq!(groups[1]["hooks"][0]["timeout"], 10);
        assert_eq!(groups[1]["hooks"][0]["type"], "command");
        assert!(v.get("allow_managed_hooks_only").is_none());
        // Again: nothing to change.
        assert_eq!(
            merge(Runtime::Codex, Some(&after), e.clone(), false).unwrap(),
            None
        );
        let only = merge(Runtime::Codex, Some(&after), e, true)
            .unwrap()
            .unwrap();
        assert_eq!(toml_json(&only).unwrap()["allow_managed_hooks_only"], true);
    }

    #[test]
    fn json_system_files_get_the_entry_and_their_switches() {
        let cmd = "/usr/local/bin/toolgate hook gemini --timeout 10";
        let spec = Runtime::Gemini.spec();
        let before =
            r#"{"general": {"x": 1}, "hooksConfig": {"enabled": false, "disabled": ["other"]}}"#;
        let e = entry(spec, cmd, Duration::from_secs(10));
        let after = merge(Runtime::Gemini, Some(before), e.clone(), false)
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(v["hooksConfig"]["enabled"], true);
        assert_eq!(v["hooksConfig"]["disabled"], json!(["other"]));
        assert_eq!(v["general"]["x"], 1);
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["command"], cmd);
        assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], 10_000);
        assert_eq!(
            merge(Runtime::Gemini, Some(&after), e, false).unwrap(),
            None
        );

        let spec = Runtime::ClaudeCode.spec();
        let cmd = "/usr/local/bin/toolgate hook claude-code --timeout 10";
        let e = entry(spec, cmd, Duration::from_secs(10));
        let after = merge(Runtime::ClaudeCode, None, e.clone(), true)
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_str(&after).unwrap();
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["onFailure"],
            "block"
        );
        assert_eq!(v["allowManagedHooksOnly"], true);
        assert!(merge(Runtime::ClaudeCode, Some("{not json"), e, false).is_err());
    }

    #[test]
    fn system_files_sit_where_each_runtime_reads_them() {
        let root = Path::new("/r");
        if !cfg!(target_os = "macos") {
            assert_eq!(
                system_file(Runtime::ClaudeCode, root),
                Path::new("/r/etc/claude-code/managed-settings.json")
            );
            assert_eq!(
                system_file(Runtime::Gemini, root),
                Path::new("/r/etc/gemini-cli/settings.json")
            );
            assert_eq!(
                system_file(Runtime::Cursor, root),
                Path::new("/r/etc/cursor/hooks.json")
            );
        }
        assert_eq!(
            system_file(Runtime::Codex, root),
            Path::new("/r/etc/codex/requirements.toml")
        );
    }
}
