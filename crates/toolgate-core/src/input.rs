//! Checking untrusted input before it becomes a [`ToolCall`]: nesting depth
//! (measured on the raw bytes, before a parser can recurse) and the shape of
//! the call, with errors that say what to send instead.

use crate::model::ToolCall;
use serde_json::Value;

/// The deepest JSON nesting accepted from a client. Real tool calls stay
/// far below it; deeper input is an attack on recursive parsers.
pub const MAX_JSON_DEPTH: usize = 64;

/// Why input is not a usable tool call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// The deepest nesting of arrays and objects in `bytes`, counted outside
/// strings without parsing; stops counting once `limit` is exceeded (the
/// answer is then `limit + 1`). Unbalanced input is left for the parser to
/// reject.
pub(crate) fn json_depth(bytes: &[u8], limit: usize) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > deepest {
                    deepest = depth;
                    if deepest > limit {
                        return deepest;
                    }
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Parses request bytes as JSON: valid UTF-8, nesting at most
/// [`MAX_JSON_DEPTH`], then valid JSON. Errors name the position.
pub fn parse_json(bytes: &[u8]) -> Result<Value, InputError> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(InputError(format!(
            "the body is not valid UTF-8 (bad byte at offset {}): send JSON text encoded as UTF-8",
            e.valid_up_to()
        )));
    }
    if json_depth(bytes, MAX_JSON_DEPTH) > MAX_JSON_DEPTH {
        return Err(InputError(format!(
            "the JSON is nested deeper than {MAX_JSON_DEPTH} levels: flatten it"
        )));
    }
    serde_json::from_slice(bytes)
        .map_err(|e| InputError(format!("the body is not valid JSON ({e})")))
}

/// The top-level keys a [`ToolCall`] has. Anything else is refused: a
/// misspelled key (`"param"`, `"comand"`) would otherwise leave the call
/// judged without what it meant to say.
pub(crate) const TOOL_CALL_KEYS: &[&str] = &[
    "tool",
    "params",
    "call_id",
    "agent",
    "session",
    "channel",
    "cwd",
    "requester",
    "home",
    "user",
];

/// Turns a JSON value into a [`ToolCall`], checking its shape first so the
/// error says what is wrong (`"tool" must be a string …`) rather than what
/// serde expected. `params` is required (an object; `{}` for a tool that
/// takes none): a call without it is malformed, never judged. A key that is
/// not a ToolCall field is an error naming the closest one, unless it is in
/// `also_allowed` (`check --jsonl` echoes an `id`).
pub fn tool_call(mut value: Value, also_allowed: &[&str]) -> Result<ToolCall, InputError> {
    let Value::Object(obj) = &mut value else {
        return Err(InputError(
            "a ToolCall must be a JSON object like {\"tool\":\"exec\",\"params\":{\"command\":\"ls\"}}"
                .to_string(),
        ));
    };
    if let Some(unknown) = obj
        .keys()
        .find(|k| !TOOL_CALL_KEYS.contains(&k.as_str()) && !also_allowed.contains(&k.as_str()))
    {
        return Err(InputError(unknown_key(unknown)));
    }
    match obj.get("tool") {
        Some(Value::String(t)) if !t.trim().is_empty() => {}
        Some(Value::String(_)) => {
            return Err(InputError(
                "\"tool\" is empty: name the tool being called".to_string(),
            ));
        }
        Some(_) => {
            return Err(InputError(
                "\"tool\" must be a string naming the tool being called".to_string(),
            ));
        }
        None => {
            return Err(InputError(
                "missing \"tool\": a ToolCall needs {\"tool\": NAME, \"params\": {…}}".to_string(),
            ));
        }
    }
    match obj.get("params") {
        Some(Value::Object(_)) => {}
        Some(_) => {
            return Err(InputError(
                "\"params\" must be a JSON object (`{}` for a tool that takes none)".to_string(),
            ));
        }
        None => {
            return Err(InputError(
                "missing \"params\": a ToolCall needs {\"tool\": NAME, \"params\": {…}} \
                 (`{}` for a tool that takes none)"
                    .to_string(),
            ));
        }
    }
    serde_json::from_value(value).map_err(|e| InputError(format!("not a ToolCall: {e}")))
}

/// The error for a key that is not a ToolCall field, with the closest one.
fn unknown_key(key: &str) -> String {
    let closest = TOOL_CALL_KEYS
        .iter()
        .map(|k| {
            (
                strsim::damerau_levenshtein(&key.to_ascii_lowercase(), k),
                *k,
            )
        })
        .min();
    let hint = match closest {
        Some((d, k)) if d <= 2 || k.starts_with(&key.to_ascii_lowercase()) => {
            format!(" (did you mean \"{k}\"?)")
        }
        _ => String::new(),
    };
    format!(
        "unknown key \"{key}\" in the ToolCall{hint}: its keys are {}",
        TOOL_CALL_KEYS
            .iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn depth_counts_nesting_outside_strings() {
        assert_eq!(json_depth(br#"{"a":[1,{"b":2}]}"#, 64), 3);
        assert_eq!(json_depth(br#"{"a":"[[[[{{{{"}"#, 64), 1);
        assert_eq!(json_depth(br#"{"a":"\"[[["}"#, 64), 1);
        assert_eq!(json_depth(b"42", 64), 0);
        let deep = "[".repeat(100_000);
        assert_eq!(json_depth(deep.as_bytes(), 64), 65);
    }

    #[test]
    fn parse_json_names_what_is_wrong() {
        let e = parse_json(b"{\"tool\":\"\xff\"}").unwrap_err();
        assert!(e.0.contains("UTF-8"), "{e}");
        let deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        assert!(
            parse_json(deep.as_bytes())
                .unwrap_err()
                .0
                .contains("deeper than 64")
        );
        let ok = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert!(parse_json(ok.as_bytes()).is_ok());
        assert!(parse_json(b"{").unwrap_err().0.contains("not valid JSON"));
    }

    #[test]
    fn tool_call_checks_the_shape() {
        let e = |v: Value| tool_call(v, &[]).unwrap_err().0;
        assert!(e(serde_json::json!([1])).contains("JSON object"));
        assert!(e(serde_json::json!({"params": {}})).contains("missing \"tool\""));
        assert!(e(serde_json::json!({"tool": 3, "params": {}})).contains("must be a string"));
        assert!(e(serde_json::json!({"tool": " ", "params": {}})).contains("empty"));
        assert!(e(serde_json::json!({"tool": "exec", "params": "ls"})).contains("params"));
        assert!(
            e(serde_json::json!({"tool": "exec", "params": {}, "session": 5}))
                .contains("not a ToolCall")
        );
        let c = tool_call(serde_json::json!({"tool": "exec", "params": {}}), &[]).unwrap();
        assert!(c.params.is_empty());
    }

    /// A call that does not say what it does is refused, not judged (and
    /// so never turned into an approval someone might grant).
    #[test]
    fn a_call_without_params_is_refused() {
        for v in [
            serde_json::json!({"tool": "Bash"}),
            serde_json::json!({"tool": "exec", "params": null}),
        ] {
            let e = tool_call(v.clone(), &[]).unwrap_err().0;
            assert!(e.contains("params"), "{v}: {e}");
        }
    }

    #[test]
    fn an_unknown_key_is_refused_with_the_closest_known_one() {
        let e = |v: Value| tool_call(v, &[]).unwrap_err().0;
        let m = e(serde_json::json!({"tool": "exec", "param": {"command": "rm -rf /"}}));
        assert!(
            m.contains("unknown key \"param\"") && m.contains("did you mean \"params\""),
            "{m}"
        );
        let m = e(serde_json::json!({"tool": "exec", "params": {}, "sesion": "s"}));
        assert!(m.contains("did you mean \"session\""), "{m}");
        let m = e(serde_json::json!({"tool": "exec", "params": {}, "workdir": "/x"}));
        assert!(
            m.contains("unknown key \"workdir\"") && !m.contains("did you mean"),
            "{m}"
        );
        // A caller may allow keys of its own.
        assert!(
            tool_call(
                serde_json::json!({"tool": "exec", "params": {}, "id": 7}),
                &["id"]
            )
            .is_ok()
        );
        assert!(
            tool_call(
                serde_json::json!({"tool": "exec", "params": {}, "id": 7}),
                &[]
            )
            .is_err()
        );
    }

    /// The list of keys is the struct's: every field a ToolCall serializes
    /// is accepted.
    #[test]
    fn the_known_keys_are_the_tool_call_fields() {
        let full = ToolCall {
            tool: "t".into(),
            params: serde_json::Map::new(),
            call_id: Some("c".into()),
            agent: Some("a".into()),
            session: Some("s".into()),
            channel: Some("ch".into()),
            cwd: Some("/".into()),
            requester: Some(crate::model::Requester::default()),
            home: Some("/h".into()),
            user: Some("u".into()),
        };
        let v = serde_json::to_value(&full).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort_unstable();
        let mut known = TOOL_CALL_KEYS.to_vec();
        known.sort_unstable();
        assert_eq!(keys, known);
        assert_eq!(tool_call(v, &[]).unwrap(), full);
    }

    proptest! {
        #[test]
        fn depth_never_panics_and_bounds_the_parser(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let d = json_depth(&bytes, MAX_JSON_DEPTH);
            prop_assert!(d <= MAX_JSON_DEPTH + 1);
            let _ = parse_json(&bytes);
        }
    }
}
