//! Install targets: where each runtime reads its hooks and the exact entry
//! that makes it run `toolgate hook <runtime>` fail-closed. Pure: the CLI
//! (`toolgate install`, `toolgate doctor`) reads and writes the files; this
//! module edits and inspects their JSON.

use serde_json::{Map, Value, json};
use std::time::Duration;

/// How a runtime lists hook entries under `hooks.<event>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `[{"matcher": M, "hooks": [entry]}]` (Claude Code, Codex, Gemini CLI).
    Grouped {
        /// The matcher that selects every tool (`*`, or the regex `.*`).
        matcher: &'static str,
    },
    /// `[entry]` (Cursor).
    Flat,
}

/// The unit a runtime's `timeout` field is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutUnit {
    /// Whole seconds.
    Seconds,
    /// Milliseconds.
    Millis,
}

/// Where and how one runtime registers a hook.
#[derive(Debug)]
pub struct Target {
    /// The settings directory under `$HOME` and under a project.
    pub dir: &'static str,
    /// An environment variable that overrides the user directory (Codex's
    /// `CODEX_HOME`).
    pub dir_env: Option<&'static str>,
    /// The settings file in that directory.
    pub file: &'static str,
    /// The events to register under `hooks`.
    pub events: &'static [&'static str],
    /// How the entries are listed.
    pub shape: Shape,
    /// Whether entries carry `"type": "command"`.
    pub typed: bool,
    /// The unit of the entry's `timeout`.
    pub timeout_unit: TimeoutUnit,
    /// The entry field that makes a failed, crashed or timed-out hook stop
    /// the call, and its value; `None` where the runtime has no such switch
    /// (the hook then answers before the timeout by itself).
    pub fail_closed: Option<(&'static str, FailClosedValue)>,
    /// Top-level fields the file must have (Cursor's `"version": 1`).
    pub required_top: &'static [(&'static str, i64)],
    /// Whether the runtime runs a user hook only once it is trusted (Codex).
    pub needs_trust: bool,
}

/// The value of a fail-closed switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailClosedValue {
    /// A string (`"onFailure": "block"`).
    Text(&'static str),
    /// A boolean (`"failClosed": true`).
    Bool(bool),
}

impl FailClosedValue {
    /// As JSON.
    pub fn to_json(self) -> Value {
        match self {
            FailClosedValue::Text(t) => json!(t),
            FailClosedValue::Bool(b) => json!(b),
        }
    }
}

/// A hook settings file toolgate cannot edit safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    /// The file's top level is not an object.
    #[error("the settings file is not a JSON object")]
    NotAnObject,
    /// A field has a shape the runtime would not read either.
    #[error("\"{0}\" in the settings file is not {1}; fix it by hand first (nothing was changed)")]
    BadField(String, &'static str),
}

/// One toolgate entry found in a settings file.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The event it is listed under.
    pub event: String,
    /// The index of its group in `hooks.<event>` (for flat lists, of the entry).
    pub group: usize,
    /// The index of the entry in its group's `hooks` (0 for flat lists).
    pub handler: usize,
    /// The group's matcher, if any.
    pub matcher: Option<String>,
    /// The entry itself.
    pub entry: Value,
}

impl Target {
    /// The entry that runs `command` with `timeout`, fail-closed where the
    /// runtime can be told to.
    pub fn entry(&self, command: &str, timeout: Duration) -> Value {
        let mut e = Map::new();
        if self.typed {
            e.insert("type".into(), json!("command"));
        }
        e.insert("command".into(), json!(command));
        let t = match self.timeout_unit {
            TimeoutUnit::Seconds => timeout.as_secs().max(1),
            TimeoutUnit::Millis => u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        };
        e.insert("timeout".into(), json!(t));
        if let Some((key, value)) = self.fail_closed {
            e.insert(key.into(), value.to_json());
        }
        Value::Object(e)
    }

    /// The `timeout` an entry sets, as a duration; `None` when absent or
    /// not a number.
    pub fn timeout_of(&self, entry: &Value) -> Option<Duration> {
        let n = entry.get("timeout")?.as_f64()?;
        if !(n.is_finite() && n > 0.0) {
            return None;
        }
        Some(match self.timeout_unit {
            TimeoutUnit::Seconds => Duration::from_secs_f64(n.min(1e9)),
            TimeoutUnit::Millis => Duration::from_secs_f64((n / 1000.0).min(1e9)),
        })
    }

    /// Whether `entry` sets the fail-closed switch (true where the runtime
    /// has none).
    pub fn is_fail_closed(&self, entry: &Value) -> bool {
        match self.fail_closed {
            None => true,
            Some((key, value)) => entry.get(key) == Some(&value.to_json()),
        }
    }

    /// Puts `entry` under each of the target's `hooks.<event>` lists,
    /// replacing earlier toolgate entries for `runtime` (recognised by
    /// [`is_ours`]); returns whether anything changed. Everything else in
    /// the file is kept.
    pub fn add(
        &self,
        runtime: &str,
        settings: &mut Value,
        entry: Value,
    ) -> Result<bool, InstallError> {
        let root = settings.as_object_mut().ok_or(InstallError::NotAnObject)?;
        let mut changed = false;
        for (key, value) in self.required_top {
            if root.get(*key) != Some(&json!(value)) {
                root.insert((*key).to_string(), json!(value));
                changed = true;
            }
        }
        let hooks = root
            .entry("hooks")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| InstallError::BadField("hooks".into(), "an object"))?;
        let want = match self.shape {
            Shape::Grouped { matcher } => json!({"matcher": matcher, "hooks": [entry]}),
            Shape::Flat => entry,
        };
        for event in self.events {
            let list = hooks
                .entry(*event)
                .or_insert_with(|| Value::Array(Vec::new()))
                .as_array_mut()
                .ok_or_else(|| InstallError::BadField(format!("hooks.{event}"), "a list"))?;
            let ours = |h: &Value| is_ours(runtime, h);
            let already = list.iter().filter(|g| contains_ours(g, &ours)).count() == 1
                && list.contains(&want);
            if already {
                continue;
            }
            // Drop earlier toolgate entries (and groups left empty by that).
            drop_ours(list, &ours);
            list.push(want.clone());
            changed = true;
        }
        Ok(changed)
    }

    /// Removes every toolgate entry for `runtime` from `settings` (and the
    /// groups and event lists left empty by that, and `hooks` itself when
    /// nothing is left in it); everything else stays as it was. Returns
    /// whether anything was removed. Switches `add` set at the top level
    /// (`required_top`) stay: other hooks may rely on them.
    pub fn remove(&self, runtime: &str, settings: &mut Value) -> Result<bool, InstallError> {
        let root = settings.as_object_mut().ok_or(InstallError::NotAnObject)?;
        let Some(hooks) = root.get_mut("hooks") else {
            return Ok(false);
        };
        let hooks = hooks
            .as_object_mut()
            .ok_or_else(|| InstallError::BadField("hooks".into(), "an object"))?;
        let ours = |h: &Value| is_ours(runtime, h);
        let mut changed = false;
        for event in self.events {
            let Some(list) = hooks.get_mut(*event).and_then(Value::as_array_mut) else {
                continue;
            };
            if drop_ours(list, &ours) {
                changed = true;
                if list.is_empty() {
                    hooks.remove(*event);
                }
            }
        }
        if changed && hooks.is_empty() {
            root.remove("hooks");
        }
        Ok(changed)
    }

    /// Every toolgate entry for `runtime` in `settings`, in file order.
    pub fn find(&self, runtime: &str, settings: &Value) -> Vec<Found> {
        let mut out = Vec::new();
        let Some(hooks) = settings.get("hooks").and_then(Value::as_object) else {
            return out;
        };
        for (event, list) in hooks {
            let Some(list) = list.as_array() else {
                continue;
            };
            for (g, group) in list.iter().enumerate() {
                match group.get("hooks").and_then(Value::as_array) {
                    Some(inner) => {
                        for (h, entry) in inner.iter().enumerate() {
                            if is_ours(runtime, entry) {
                                out.push(Found {
                                    event: event.clone(),
                                    group: g,
                                    handler: h,
                                    matcher: group
                                        .get("matcher")
                                        .and_then(Value::as_str)
                                        .map(str::to_string),
                                    entry: entry.clone(),
                                });
                            }
                        }
                    }
                    None if is_ours(runtime, group) => out.push(Found {
                        event: event.clone(),
                        group: g,
                        handler: 0,
                        matcher: group
                            .get("matcher")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        entry: group.clone(),
                    }),
                    None => {}
                }
            }
        }
        out
    }
}

fn contains_ours(group: &Value, ours: &dyn Fn(&Value) -> bool) -> bool {
    match group.get("hooks").and_then(Value::as_array) {
        Some(inner) => inner.iter().any(ours),
        None => ours(group),
    }
}

/// Whether a hook entry is toolgate's own for `runtime`: a command running
/// a `toolgate` binary with `hook <runtime>`, or (Claude Code) the daemon's
/// Removes the entries `ours` picks from an event's list: handlers inside a
/// group (and groups left empty by that) or flat entries. Whether anything
/// was removed.
fn drop_ours(list: &mut Vec<Value>, ours: &dyn Fn(&Value) -> bool) -> bool {
    let before = list.len();
    let mut removed = false;
    for group in list.iter_mut() {
        if let Some(inner) = group.get_mut("hooks").and_then(Value::as_array_mut) {
            let had = inner.len();
            inner.retain(|h| !ours(h));
            removed |= inner.len() != had;
        }
    }
    list.retain(|g| match g.get("hooks").and_then(Value::as_array) {
        Some(inner) => !inner.is_empty(),
        None => !ours(g),
    });
    removed || list.len() != before
}

/// HTTP hook URL.
pub fn is_ours(runtime: &str, entry: &Value) -> bool {
    let cmd = entry.get("command").and_then(Value::as_str).unwrap_or("");
    let url = entry.get("url").and_then(Value::as_str).unwrap_or("");
    let cmd = cmd.trim_start();
    // The program is the first word, which a path with blanks has quoted.
    let (program, rest) = match cmd.chars().next() {
        Some(q @ ('\'' | '"')) => match cmd[1..].find(q) {
            Some(end) => (&cmd[1..=end], &cmd[end + 2..]),
            None => (cmd, ""),
        },
        _ => cmd.split_once(char::is_whitespace).unwrap_or((cmd, "")),
    };
    let runs_toolgate = program
        .rsplit('/')
        .next()
        .is_some_and(|name| name.starts_with("toolgate"));
    let words: Vec<&str> = rest.split_whitespace().collect();
    let hooks_runtime = words.windows(2).any(|w| w[0] == "hook" && w[1] == runtime);
    (runs_toolgate && hooks_runtime) || url.ends_with(&format!("/v1/hooks/{runtime}"))
}

/// Quotes one word for the POSIX shell a runtime runs hook commands with.
pub fn shell_word(word: &str) -> String {
    toolgate_shell::quote(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUPED: Target = Target {
        dir: ".x",
        dir_env: None,
        file: "settings.json",
        events: &["PreToolUse"],
        shape: Shape::Grouped { matcher: "*" },
        typed: true,
        timeout_unit: TimeoutUnit::Seconds,
        fail_closed: Some(("onFailure", FailClosedValue::Text("block"))),
        required_top: &[],
        needs_trust: false,
    };

    #[test]
    fn adds_once_keeps_other_settings_and_replaces_old_entries() {
        let mut s = json!({"model": "x", "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "other-guard"}]},
            {"matcher": "*", "hooks": [{"type": "command", "command": "/old/toolgate hook claude-code"}]}
        ]}});
        let entry = GROUPED.entry("/new/toolgate hook claude-code", Duration::from_secs(10));
        assert_eq!(entry["onFailure"], "block");
        assert_eq!(entry["timeout"], 10);
        assert!(GROUPED.add("claude-code", &mut s, entry.clone()).unwrap());
        assert!(!GROUPED.add("claude-code", &mut s, entry).unwrap());
        let pre = s["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2, "{s}");
        assert_eq!(pre[0]["hooks"][0]["command"], "other-guard");
        assert_eq!(
            pre[1]["hooks"][0]["command"],
            "/new/toolgate hook claude-code"
        );
        assert_eq!(s["model"], "x");
        let found = GROUPED.find("claude-code", &s);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].group, found[0].handler), (1, 0));
        assert!(GROUPED.is_fail_closed(&found[0].entry));
        assert_eq!(
            GROUPED.timeout_of(&found[0].entry),
            Some(Duration::from_secs(10))
        );
    }

    #[test]
    fn odd_shapes_are_refused_not_overwritten() {
        let e = json!({});
        assert_eq!(
            GROUPED.add("x", &mut json!([]), e.clone()),
            Err(InstallError::NotAnObject)
        );
        assert!(
            GROUPED
                .add("x", &mut json!({"hooks": 3}), e.clone())
                .is_err()
        );
        assert!(
            GROUPED
                .add("x", &mut json!({"hooks": {"PreToolUse": {}}}), e)
                .is_err()
        );
    }

    #[test]
    fn only_toolgate_commands_for_the_runtime_are_ours() {
        assert!(is_ours(
            "codex",
            &json!({"command": "/usr/bin/toolgate hook codex"})
        ));
        assert!(is_ours(
            "codex",
            &json!({"command": "'/a b/toolgate' --data-dir /d hook codex --policy p"})
        ));
        assert!(!is_ours(
            "codex",
            &json!({"command": "/usr/bin/toolgate hook claude-code"})
        ));
        assert!(!is_ours(
            "codex",
            &json!({"command": "echo toolgate hook codex"})
        ));
        assert!(is_ours(
            "claude-code",
            &json!({"type": "http", "url": "http://127.0.0.1:7878/v1/hooks/claude-code"})
        ));
    }

    #[test]
    fn millisecond_timeouts_and_missing_switches() {
        let t = Target {
            timeout_unit: TimeoutUnit::Millis,
            fail_closed: None,
            ..GROUPED
        };
        let e = t.entry("toolgate hook gemini", Duration::from_secs(130));
        assert_eq!(e["timeout"], 130_000);
        assert_eq!(t.timeout_of(&e), Some(Duration::from_secs(130)));
        assert!(t.is_fail_closed(&e));
        assert!(!GROUPED.is_fail_closed(&json!({"command": "x"})));
        assert_eq!(GROUPED.timeout_of(&json!({"timeout": "10"})), None);
    }
}
