//! Codex CLI's hook trust: the `[hooks.state."<key>"] trusted_hash` entries
//! in `$CODEX_HOME/config.toml` without which Codex skips a user hook, with
//! no message, and runs the call (docs/integrations.md, "Codex CLI").
//!
//! How Codex (0.16x, `codex-rs/hooks` discovery) names and hashes a hook:
//!
//! - the key is `<hooks.json absolute path>:<event label>:<group index>:<handler index>`,
//!   the event label being the snake-case name (`pre_tool_use`);
//! - the hash is over a normalized identity of the hook, not its source
//!   text: `{"event_name": <label>, "matcher": <the group's matcher, if any>,
//!   "hooks": [<the one handler>]}`, the handler as
//!   `{"type": "command", "command", "timeout": <seconds, default 600, at
//!   least 1>, "async": <bool, default false>, "statusMessage"?}`; absent
//!   values are left out, object keys are sorted at every depth, the JSON is
//!   written compactly, and the hash is `sha256:` + the lowercase hex SHA-256
//!   of it.
//!
//! Changing the command, the timeout, the matcher or the entry's position
//! drops the trust: `toolgate install codex` writes the entry and its trust
//! together, and `toolgate doctor` checks that they still agree.

use super::install::Found;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The snake-case label Codex uses for a hooks.json event name
/// (`PreToolUse` → `pre_tool_use`).
pub fn event_label(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The `hooks.state` key of handler `handler` in group `group` of `event`
/// in the hooks.json at `hooks_json` (absolute).
pub fn trust_key(hooks_json: &str, event: &str, group: usize, handler: usize) -> String {
    format!("{hooks_json}:{}:{group}:{handler}", event_label(event))
}

/// The `trusted_hash` Codex expects for `handler` (a hooks.json handler
/// object) under `event` with the group's `matcher`.
pub fn trusted_hash(event: &str, matcher: Option<&str>, handler: &Value) -> String {
    let mut h = Map::new();
    h.insert("type".into(), Value::String("command".into()));
    if let Some(c) = handler.get("command").and_then(Value::as_str) {
        h.insert("command".into(), Value::String(c.to_string()));
    }
    let timeout = handler
        .get("timeout")
        .or_else(|| handler.get("timeoutSec"))
        .and_then(Value::as_u64)
        .unwrap_or(600)
        .max(1);
    h.insert("timeout".into(), Value::from(timeout));
    let is_async = handler
        .get("async")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    h.insert("async".into(), Value::Bool(is_async));
    if let Some(m) = handler.get("statusMessage").and_then(Value::as_str) {
        h.insert("statusMessage".into(), Value::String(m.to_string()));
    }
    let mut identity = Map::new();
    identity.insert("event_name".into(), Value::String(event_label(event)));
    if let Some(m) = matcher {
        identity.insert("matcher".into(), Value::String(m.to_string()));
    }
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(h)]));
    let text = canonical(&Value::Object(identity));
    let digest = Sha256::digest(text.as_bytes());
    format!("sha256:{}", crate::hex::hex(&digest))
}

/// The `(key, trusted_hash)` for a toolgate entry found in the hooks.json
/// at `hooks_json`.
pub fn state_for(hooks_json: &str, found: &Found) -> (String, String) {
    (
        trust_key(hooks_json, &found.event, found.group, found.handler),
        trusted_hash(&found.event, found.matcher.as_deref(), &found.entry),
    )
}

/// Compact JSON with every object's keys sorted.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&m[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_name_the_file_event_and_position() {
        assert_eq!(event_label("PreToolUse"), "pre_tool_use");
        assert_eq!(event_label("SessionStart"), "session_start");
        assert_eq!(
            trust_key("/home/dev/.codex/hooks.json", "PreToolUse", 1, 0),
            "/home/dev/.codex/hooks.json:pre_tool_use:1:0"
        );
    }

    #[test]
    fn the_hash_is_over_the_sorted_normalized_identity() {
        let handler = json!({"type": "command", "command": "toolgate hook codex", "timeout": 10});
        let text = r#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"toolgate hook codex","timeout":10,"type":"command"}],"matcher":"*"}"#;
        let want = format!(
            "sha256:{}",
            crate::hex::hex(&Sha256::digest(text.as_bytes()))
        );
        assert_eq!(trusted_hash("PreToolUse", Some("*"), &handler), want);
    }

    #[test]
    fn every_part_of_the_definition_counts() {
        let base = json!({"type": "command", "command": "toolgate hook codex", "timeout": 10});
        let h = trusted_hash("PreToolUse", Some("*"), &base);
        let mut other = base.clone();
        other["command"] = json!("toolgate hook codex --policy p");
        assert_ne!(trusted_hash("PreToolUse", Some("*"), &other), h);
        let mut other = base.clone();
        other["timeout"] = json!(11);
        assert_ne!(trusted_hash("PreToolUse", Some("*"), &other), h);
        assert_ne!(trusted_hash("PreToolUse", None, &base), h);
        assert_ne!(trusted_hash("PostToolUse", Some("*"), &base), h);
        // Defaults are filled in: no timeout is 600 s, no async is false.
        let bare = json!({"type": "command", "command": "x"});
        let full = json!({"type": "command", "command": "x", "timeout": 600, "async": false});
        assert_eq!(
            trusted_hash("PreToolUse", Some("*"), &bare),
            trusted_hash("PreToolUse", Some("*"), &full)
        );
    }
}
