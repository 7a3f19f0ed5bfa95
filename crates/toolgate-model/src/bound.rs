//! Size bounds on what is sent to the model. A call may carry a mebibyte of
//! params; sending all of it would slow a model that has well under a
//! second, cost tokens, and widen the room for text aimed at the model.
//! Everything cut says so with a marker, so the model (and anyone reading
//! the request) knows it saw only part.
//!
//! Callers redact first and bound second: redaction then sees whole
//! strings, and a cut can never leave half a secret that no longer looks
//! like one.

use serde_json::{Map, Value};

/// Longest string kept whole inside the args.
pub(crate) const MAX_ARG_STRING: usize = 2 * 1024;
/// Most items kept of one array, or keys of one object, inside the args.
pub(crate) const MAX_ARG_ITEMS: usize = 64;
/// Deepest nesting kept inside the args.
pub(crate) const MAX_ARG_DEPTH: usize = 16;
/// Largest args kept as JSON (serialized bytes); past it the args become
/// the head of their JSON text.
pub(crate) const MAX_ARGS_BYTES: usize = 16 * 1024;

/// How every cut is marked; tests and readers search for it.
pub(crate) const CUT_MARK: &str = "[cut by toolgate";

/// `s`, or its longest prefix of at most `max` bytes ending on a character
/// boundary followed by a marker giving the original length.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…{CUT_MARK}: {} bytes]", &s[..end], s.len())
}

/// At most `max_items` of `items`, each clipped to `max_len` bytes; when
/// some were dropped, a last item says how many.
pub(crate) fn clip_list(items: Vec<String>, max_items: usize, max_len: usize) -> Vec<String> {
    let total = items.len();
    let mut kept: Vec<String> = items
        .into_iter()
        .take(max_items)
        .map(|s| clip(&s, max_len))
        .collect();
    if total > max_items {
        kept.push(format!("…{CUT_MARK}: {} more]", total - max_items));
    }
    kept
}

/// `args` with long strings clipped, long arrays and objects shortened,
/// deep nesting replaced, and — if still over [`MAX_ARGS_BYTES`] — replaced
/// by the clipped head of its JSON text.
pub(crate) fn bound_args(args: Value) -> Value {
    let cut = cut(args, 0);
    let text = cut.to_string();
    if text.len() <= MAX_ARGS_BYTES {
        return cut;
    }
    Value::String(clip(&text, MAX_ARGS_BYTES))
}

fn cut(value: Value, depth: usize) -> Value {
    match value {
        Value::String(s) => Value::String(clip(&s, MAX_ARG_STRING)),
        Value::Array(_) | Value::Object(_) if depth >= MAX_ARG_DEPTH => {
            Value::String(format!("…{CUT_MARK}: nested too deep]"))
        }
        Value::Array(items) => {
            let total = items.len();
            let mut kept: Vec<Value> = items
                .into_iter()
                .take(MAX_ARG_ITEMS)
                .map(|v| cut(v, depth + 1))
                .collect();
            if total > MAX_ARG_ITEMS {
                kept.push(Value::String(format!(
                    "…{CUT_MARK}: {} more items]",
                    total - MAX_ARG_ITEMS
                )));
            }
            Value::Array(kept)
        }
        Value::Object(map) => {
            let total = map.len();
            let mut kept: Map<String, Value> = map
                .into_iter()
                .take(MAX_ARG_ITEMS)
                .map(|(k, v)| (clip(&k, MAX_ARG_STRING), cut(v, depth + 1)))
                .collect();
            if total > MAX_ARG_ITEMS {
                kept.insert(
                    format!("…{CUT_MARK}]"),
                    Value::String(format!("{} more keys", total - MAX_ARG_ITEMS)),
                );
            }
            Value::Object(kept)
        }
        v => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_text_is_kept_and_long_text_cut_on_a_char_boundary() {
        assert_eq!(clip("short", 10), "short");
        let s = "é".repeat(10);
        let c = clip(&s, 5);
        assert!(c.starts_with("éé…"), "{c}");
        assert!(c.ends_with("[cut by toolgate: 20 bytes]"), "{c}");
    }

    #[test]
    fn lists_say_how_many_were_dropped() {
        let items: Vec<String> = (0..5).map(|i| format!("item{i}")).collect();
        let kept = clip_list(items, 3, 100);
        assert_eq!(kept.len(), 4);
        assert_eq!(kept[3], "…[cut by toolgate: 2 more]");
    }

    #[test]
    fn args_are_bounded_in_every_direction() {
        let v = bound_args(json!({"content": "x".repeat(10_000)}));
        assert!(v["content"].as_str().unwrap().len() < MAX_ARG_STRING + 64);

        let many: Vec<u32> = (0..100).collect();
        let v = bound_args(json!({ "argv": many }));
        let argv = v["argv"].as_array().unwrap();
        assert_eq!(argv.len(), MAX_ARG_ITEMS + 1);
        assert!(
            argv[MAX_ARG_ITEMS]
                .as_str()
                .unwrap()
                .contains("36 more items")
        );

        let mut deep = json!("bottom");
        for _ in 0..40 {
            deep = json!([deep]);
        }
        let text = bound_args(deep).to_string();
        assert!(text.contains("nested too deep"), "{text}");
        assert!(!text.contains("bottom"));

        let wide: Map<String, Value> = (0..60)
            .map(|i| (format!("k{i}"), json!("y".repeat(1000))))
            .collect();
        let v = bound_args(Value::Object(wide));
        let s = v.as_str().expect("oversized args become their JSON head");
        assert!(s.len() < MAX_ARGS_BYTES + 64);
        assert!(s.contains(CUT_MARK));
    }
}
