#![no_main]
//! The decision engine must never panic on any tool call.
//!
//! Two modes, chosen by the input:
//! * input that parses as a `ToolCall` JSON object is decided as is;
//! * anything else (valid UTF-8) is wrapped as
//!   `{"tool":"exec","params":{"command": <input>}}` and decided.

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy, ToolCall};

fn engine() -> &'static (Engine, Env) {
    static ENGINE: OnceLock<(Engine, Env)> = OnceLock::new();
    ENGINE.get_or_init(|| {
        (
            Engine::new(Policy::default()),
            Env::new("/home/dev", "/home/dev/proj"),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let (engine, env) = engine();
    let call = match serde_json::from_slice::<ToolCall>(data) {
        Ok(call) => call,
        Err(_) => {
            let Ok(text) = std::str::from_utf8(data) else {
                return;
            };
            let mut params = serde_json::Map::new();
            params.insert(
                "command".into(),
                serde_json::Value::String(text.to_string()),
            );
            ToolCall {
                tool: "exec".into(),
                params,
                ..ToolCall::default()
            }
        }
    };
    let _ = engine.decide(&call, env);
});
