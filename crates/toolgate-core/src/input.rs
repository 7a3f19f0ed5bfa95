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
pub fn json_depth(bytes: &[u8], limit: usize) -> usize {
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

/// Turns a JSON value into a [`ToolCall`], checking its shape first so the
/// error says what is wrong (`"tool" must be a string …`) rather than what
/// serde expected. A `null` `params` counts as absent.
pub fn tool_call(mut value: Value) -> Result<ToolCall, InputError> {
    let Value::Object(obj) = &mut value else {
        return Err(InputError(
            "a ToolCall must be a JSON object like {\"tool\":\"exec\",\"params\":{\"command\":\"ls\"}}"
                .to_string(),
        ));
    };
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
        Some(Value::Null) => {
            obj.remove("params");
        }
        Some(p) if !p.is_object() => {
            return Err(InputError("\"params\" must be a JSON object".to_string()));
        }
        _ => {}
    }
    serde_json::from_value(value).map_err(|e| InputError(format!("not a ToolCall: {e}")))
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
        let e = |v: Value| tool_call(v).unwrap_err().0;
        assert!(e(serde_json::json!([1])).contains("JSON object"));
        assert!(e(serde_json::json!({"params": {}})).contains("missing \"tool\""));
        assert!(e(serde_json::json!({"tool": 3})).contains("must be a string"));
        assert!(e(serde_json::json!({"tool": " "})).contains("empty"));
        assert!(e(serde_json::json!({"tool": "exec", "params": "ls"})).contains("params"));
        assert!(e(serde_json::json!({"tool": "exec", "session": 5})).contains("not a ToolCall"));
        let c = tool_call(serde_json::json!({"tool": "exec", "params": null})).unwrap();
        assert!(c.params.is_empty());
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
