//! Checking untrusted input before it becomes a [`ToolCall`]: nesting depth
//! (measured on the raw bytes, before a parser can recurse), keys given
//! once per object, and the shape of the call, with errors that say what to
//! send instead.

use crate::model::ToolCall;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::fmt;

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
/// [`MAX_JSON_DEPTH`], then valid JSON with no key given twice in one
/// object, at any depth. Errors name the position.
///
/// A repeated key is refused rather than resolved: parsers disagree on
/// which copy wins (serde keeps the last, others the first), so
/// `{"command":"rm -rf /","command":"ls"}` could be judged as one command
/// and run as the other. Keys are compared after unescaping (`"a"` and
/// `"\u0061"` are the same key). Everything else parses exactly as
/// `serde_json::from_slice` would, in one pass.
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
    unique_keys(bytes).map_err(|e| match e.classify() {
        // The only data error a `Value` can meet is the visitor's own.
        serde_json::error::Category::Data => InputError(format!(
            "the JSON is ambiguous: {e}; send each key once (parsers disagree on which copy counts)"
        )),
        _ => InputError(format!("the body is not valid JSON ({e})")),
    })
}

/// Parses JSON text found inside another JSON document (a param holding
/// JSON text, a hook field that carries its input as a string) with the
/// same checks as [`parse_json`]: a repeated key nested in a string is as
/// ambiguous as one in the document itself.
pub(crate) fn parse_embedded_json(text: &str) -> Result<Value, InputError> {
    parse_json(text.as_bytes())
}

/// `serde_json::from_slice::<Value>` that fails on a key repeated within an
/// object. serde_json's own `Value` visitor silently keeps the last copy.
fn unique_keys(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = UniqueKeys.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Builds a [`Value`] as serde_json's own visitor does, but refuses a key
/// that an object already has.
struct UniqueKeys;

impl<'de> DeserializeSeed<'de> for UniqueKeys {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueKeys {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(UniqueKeys)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match out.entry(key) {
                Entry::Occupied(taken) => {
                    return Err(de::Error::custom(format_args!(
                        "the key {:?} appears twice in one object",
                        taken.key()
                    )));
                }
                Entry::Vacant(slot) => {
                    slot.insert(map.next_value_seed(UniqueKeys)?);
                }
            }
        }
        Ok(Value::Object(out))
    }
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

    /// The hole this closes: serde's last-wins reading of a repeated key
    /// would judge `ls` while a first-wins reader runs `rm -rf /`.
    #[test]
    fn a_repeated_key_is_refused_at_any_depth() {
        for text in [
            r#"{"tool":"exec","params":{"command":"rm -rf /","command":"ls"}}"#,
            r#"{"tool":"exec","tool":"read","params":{}}"#,
            r#"{"tool":"exec","params":{"command":"ls"},"params":{"command":"rm -rf /"}}"#,
            r#"{"a":[{"b":{"c":1,"c":1}}]}"#,
            // The same key, spelled with an escape.
            r#"{"tool":"exec","params":{"command":"rm -rf /","comm\u0061nd":"ls"}}"#,
            r#"[1,{"x":{}},{"k":null,"k":null}]"#,
        ] {
            let e = parse_json(text.as_bytes()).unwrap_err().0;
            assert!(
                e.contains("appears twice") && e.contains("send each key once"),
                "{text}: {e}"
            );
        }
        let e = parse_json(br#"{"params":{"command":"a","command":"b"}}"#)
            .unwrap_err()
            .0;
        assert!(e.contains("\"command\""), "{e}");
        // Equal values are no excuse: the text is still ambiguous to a
        // reader that rejects or merges.
        assert!(parse_json(br#"{"a":1,"a":1}"#).is_err());
        // The same key in different objects is fine.
        assert!(parse_json(br#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#).is_ok());
    }

    /// Any JSON value (keys from a small alphabet, so siblings and nested
    /// objects share names often).
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1.0e300f64..1.0e300).prop_map(Value::from),
            "[a-c\\\"\u{e9}\u{1f600} ]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::btree_map("[a-d\"\u{e9}]{0,3}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// JSON text for `v`, written by hand so that one object (the
    /// `target`-th in document order, if there are that many) carries one
    /// of its keys twice; `escape` spells the copy with `\u` escapes.
    fn with_duplicate(v: &Value, target: usize, escape: bool) -> (String, bool) {
        fn key_text(k: &str, escape: bool) -> String {
            if !escape {
                return serde_json::to_string(k).unwrap();
            }
            let mut out = String::from("\"");
            for unit in k.encode_utf16() {
                out.push_str(&format!("\\u{unit:04x}"));
            }
            out.push('"');
            out
        }
        fn write(
            v: &Value,
            target: usize,
            seen: &mut usize,
            escape: bool,
            out: &mut String,
        ) -> bool {
            match v {
                Value::Array(items) => {
                    out.push('[');
                    let mut done = false;
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        done |= write(item, target, seen, escape, out);
                    }
                    out.push(']');
                    done
                }
                Value::Object(m) => {
                    let here = *seen == target;
                    *seen += 1;
                    out.push('{');
                    let mut done = false;
                    for (i, (k, item)) in m.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&key_text(k, false));
                        out.push(':');
                        done |= write(item, target, seen, escape, out);
                    }
                    if here {
                        let (k, copy) = match m.iter().next() {
                            Some((k, item)) => (k.clone(), item.clone()),
                            None => ("k".to_string(), Value::Null),
                        };
                        if m.is_empty() {
                            out.push_str("\"k\":0");
                        }
                        out.push(',');
                        out.push_str(&key_text(&k, escape));
                        out.push(':');
                        out.push_str(&copy.to_string());
                        done = true;
                    }
                    out.push('}');
                    done
                }
                other => {
                    out.push_str(&other.to_string());
                    false
                }
            }
        }
        let mut out = String::new();
        let done = write(v, target, &mut 0, escape, &mut out);
        (out, done)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Without a repeated key, the parse is serde_json's, value for value.
        #[test]
        fn json_without_a_repeated_key_parses_as_before(v in json_value()) {
            let text = serde_json::to_vec(&v).unwrap();
            let ours = parse_json(&text);
            prop_assert_eq!(ours.as_ref().ok(), Some(&v));
            let theirs: Value = serde_json::from_slice(&text).unwrap();
            prop_assert_eq!(ours.ok(), Some(theirs));
            let pretty = serde_json::to_vec_pretty(&v).unwrap();
            prop_assert_eq!(parse_json(&pretty).ok(), Some(v));
        }

        /// A key given twice in any one object, at any depth, in any
        /// spelling, is refused.
        #[test]
        fn json_with_a_repeated_key_is_refused(
            v in json_value(),
            target in 0usize..8,
            escape in any::<bool>(),
        ) {
            let (text, injected) = with_duplicate(&v, target, escape);
            if injected {
                let e = parse_json(text.as_bytes()).unwrap_err().0;
                prop_assert!(e.contains("appears twice"), "{}: {}", text, e);
            } else {
                // Fewer objects than `target`: the text is `v` itself.
                prop_assert_eq!(parse_json(text.as_bytes()).ok(), Some(v));
            }
        }

        /// On any bytes, whatever parses parses as serde_json reads it, and
        /// whatever serde_json reads but this refuses has a repeated key.
        #[test]
        fn arbitrary_text_parses_as_serde_or_names_a_repeat(text in "[\\[\\]{}:,\"ab0 ]{0,40}") {
            let ours = parse_json(text.as_bytes());
            let theirs = serde_json::from_slice::<Value>(text.as_bytes());
            match (ours, theirs) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                (Ok(_), Err(e)) => prop_assert!(false, "accepted what serde refuses: {}", e),
                (Err(e), Ok(_)) => prop_assert!(e.0.contains("appears twice"), "{}", e),
                (Err(_), Err(_)) => {}
            }
        }

        #[test]
        fn depth_never_panics_and_bounds_the_parser(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let d = json_depth(&bytes, MAX_JSON_DEPTH);
            prop_assert!(d <= MAX_JSON_DEPTH + 1);
            let _ = parse_json(&bytes);
        }
    }
}
