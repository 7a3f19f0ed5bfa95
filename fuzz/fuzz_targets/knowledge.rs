#![no_main]
//! The knowledge layer's parsers on untrusted text: an SOP file, a memory
//! JSONL line, and a call's context. Never panics; every extracted section
//! is non-empty and its text occurs in the file; credentials never reach
//! the record text; a validated memory is within its bounds.

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use toolgate_core::knowledge::enforce::{Audience, Found, FoundSop, render};
use toolgate_core::knowledge::memory::{MAX_MEMORY_TEXT, MemoryInput};
use toolgate_core::knowledge::settings::{KnowledgeSettings, SopReason, memory_terms};
use toolgate_core::knowledge::sop::{SectionKind, Sop};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let sop = Sop::parse("f", "f.ai.sop", &text);
    for s in &sop.sections {
        assert!(!s.text.is_empty());
    }
    let creds: Vec<String> = sop
        .sections
        .iter()
        .filter(|s| s.kind == SectionKind::Credentials && s.text.len() > 16)
        .map(|s| s.text.clone())
        .collect();
    let found = Found {
        sops: vec![FoundSop {
            sop: Arc::new(sop),
            reason: SopReason::Project("f".into()),
        }],
        memories: vec![],
    };
    let record = render(&found, Audience::Record, None);
    for c in &creds {
        // A credentials section repeated verbatim in another section is
        // that section's text, not a leak.
        let elsewhere = found.sops[0]
            .sop
            .sections
            .iter()
            .any(|s| s.kind != SectionKind::Credentials && s.text.contains(c.as_str()));
        assert!(
            elsewhere || !record.contains(c.as_str()),
            "credentials in the record"
        );
    }

    if let Ok(input) = serde_json::from_str::<MemoryInput>(&text)
        && let Ok(m) = input.validate(0)
    {
        assert!(!m.text.is_empty() && m.text.len() <= MAX_MEMORY_TEXT);
        assert!((0.0..=1.0).contains(&m.confidence));
        assert!(!m.categories.is_empty());
    }

    let call = toolgate_core::ToolCall {
        tool: "exec".into(),
        params: serde_json::json!({ "command": text })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..Default::default()
    };
    let env = toolgate_core::paths::Env::new("/home/u", "/Projects/p");
    let n = toolgate_core::normalize(&call, &env);
    let settings = KnowledgeSettings::default();
    let ctx = toolgate_core::knowledge::context::extract(&n, &env, &settings.context);
    let _ = settings.sops_for(&ctx);
    assert!(memory_terms(&ctx).len() <= toolgate_core::knowledge::settings::MAX_TERMS);
});
