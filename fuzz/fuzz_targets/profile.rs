#![no_main]
//! Scope profiles from untrusted text: parsing never panics, hangs or
//! explodes (alias bombs and deep nesting are refused), and a profile that
//! parses judges a call without panicking.

use libfuzzer_sys::fuzz_target;
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy, Profile};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let doc = format!("---\n{text}\n---\n");
    for input in [text.as_ref(), doc.as_str()] {
        if let Ok(p) = Profile::parse_markdown(input, "fuzz.md") {
            let engine = Engine::new(Policy::default().with_profile(p));
            let call = toolgate_core::ToolCall {
                tool: "exec".into(),
                params: serde_json::json!({"command": "ls | wc -l"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                ..Default::default()
            };
            let _ = engine.decide(&call, &Env::new("/h", "/h"));
            let _ = toolgate_core::protocol_text(engine.policy());
        }
    }
});
