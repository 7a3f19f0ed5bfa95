//! Bounding what is stored and shown. A call may carry up to a mebibyte of
//! params; keeping all of it in every approval and audit entry lets one
//! agent inflate the store and every reader's memory. Records keep a cut
//! copy that says how much was cut and its SHA-256, while the binding hash
//! (computed earlier, on the whole call) still covers every byte.

use crate::hex::hex;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Longest string kept whole in a record.
pub(crate) const MAX_STRING: usize = 8 * 1024;
/// Largest record kept whole (serialized JSON bytes).
pub(crate) const MAX_RECORD: usize = 64 * 1024;

/// `value` with every string over [`MAX_STRING`] bytes cut (noting the
/// original length and digest), and, if the result still serializes to more
/// than [`MAX_RECORD`] bytes, replaced by a summary of it.
pub fn bound_size(value: Value) -> Value {
    let cut = cut_strings(value);
    let text = cut.to_string();
    if text.len() <= MAX_RECORD {
        return cut;
    }
    json!({
        "_toolgate_cut": {
            "bytes": text.len(),
            "sha256": hex(&Sha256::digest(text.as_bytes())),
            "head": prefix(&text, 4 * 1024),
        }
    })
}

fn cut_strings(value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(cut(s)),
        Value::Array(a) => Value::Array(a.into_iter().map(cut_strings).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                // A cut key carries its digest, so two long keys that share
                // a prefix stay two keys.
                .map(|(k, v)| (cut(k), cut_strings(v)))
                .collect::<Map<String, Value>>(),
        ),
        v => v,
    }
}

/// `s`, or its first [`MAX_STRING`] bytes with its length and digest.
fn cut(s: String) -> String {
    if s.len() <= MAX_STRING {
        return s;
    }
    format!(
        "{}…[cut by toolgate: {} bytes, sha256 {}]",
        prefix(&s, MAX_STRING),
        s.len(),
        hex(&Sha256::digest(s.as_bytes()))
    )
}

/// The longest prefix of `s` of at most `n` bytes that ends on a character
/// boundary.
fn prefix(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn small_records_are_untouched() {
        let v = json!({"tool": "exec", "params": {"command": "ls -la"}});
        assert_eq!(bound_size(v.clone()), v);
    }

    #[test]
    fn long_strings_are_cut_on_a_char_boundary_with_their_digest() {
        let s = "é".repeat(10_000);
        let v = bound_size(json!({"params": {"content": s}}));
        let t = v["params"]["content"].as_str().unwrap();
        assert!(t.len() < MAX_STRING + 200);
        assert!(t.contains("cut by toolgate: 20000 bytes, sha256 "));
    }

    #[test]
    fn long_keys_sharing_a_prefix_stay_apart() {
        let base = "k".repeat(MAX_STRING + 10);
        let v = bound_size(json!({ format!("{base}a"): 1, format!("{base}b"): 2 }));
        assert_eq!(v.as_object().unwrap().len(), 2, "{v}");
    }

    #[test]
    fn huge_records_become_a_summary() {
        let many: Vec<String> = (0..20_000).map(|i| format!("arg{i}")).collect();
        let v = bound_size(json!({"params": {"argv": many}}));
        let cut = &v["_toolgate_cut"];
        assert!(cut["bytes"].as_u64().unwrap() > MAX_RECORD as u64);
        assert_eq!(cut["sha256"].as_str().unwrap().len(), 64);
        // The head is 4 KiB of JSON text; quoting it again can at most double it.
        assert!(v.to_string().len() < 9 * 1024);
    }
}
