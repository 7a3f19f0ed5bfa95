#![no_main]
//! Redaction must never panic and must be idempotent: redacting its own
//! output changes nothing, for free text and for JSON values.
//!
//! The input is read as UTF-8 (lossily) and redacted as text; if it also
//! parses as JSON, the value is redacted too (copy and in place must agree).

use libfuzzer_sys::fuzz_target;
use std::borrow::Cow;
use toolgate_core::{redact_in_place, redact_text, redact_value};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let once = redact_text(&text);
    let twice = redact_text(&once);
    assert!(
        matches!(twice, Cow::Borrowed(_)),
        "not idempotent:\n input: {text:?}\n once:  {once:?}\n twice: {twice:?}"
    );
    if matches!(once, Cow::Owned(_)) {
        assert_ne!(once, text, "Owned only when something was replaced");
    }

    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
        let redacted = redact_value(&value);
        assert_eq!(
            redact_value(&redacted),
            redacted,
            "JSON not idempotent: {value}"
        );
        let mut in_place = value.clone();
        let changed = redact_in_place(&mut in_place);
        assert_eq!(in_place, redacted, "in place and copy differ: {value}");
        assert_eq!(changed, in_place != value, "wrong change report: {value}");
        assert!(
            !redact_in_place(&mut in_place),
            "second pass changed: {value}"
        );
    }
});
