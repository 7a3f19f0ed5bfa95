#![no_main]
//! What `toolgate mcp-proxy` does with a client's line, minus the I/O: parse
//! (bounded), refuse look-alike keys, map a `tools/call`, `resources/read` or
//! `prompts/get` to the call it is judged as, and build the answers. Never a
//! panic; an accepted message re-serializes to JSON that parses back to the
//! same value (what the server gets is what was judged); a mapped tool name
//! always splits back into the proxy's server name.

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolgate_core::hooks::mcp::{self, McpSession};
use toolgate_core::split_mcp;

fuzz_target!(|data: &[u8]| {
    let Ok(msg) = toolgate_core::parse_json(data) else {
        return;
    };
    let session = McpSession {
        server: mcp::server_name("fs"),
        session: Some("s".into()),
        agent: None,
        cwd: Some("/ws".into()),
    };
    if mcp::check_keys(&msg).is_err() {
        return;
    }
    let text = serde_json::to_string(&msg).expect("a parsed value serializes");
    let back: Value = serde_json::from_str(&text).expect("and parses back");
    assert_eq!(back, msg);
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let call = mcp::call_for(&session, method, &params, msg.get("id"));
    if let Some(Ok(call)) = call {
        let (server, _) = split_mcp(&call.tool).expect("an mcp__ name");
        assert_eq!(server, "fs");
        let _ = mcp::elicitation_params(
            &call,
            &toolgate_core::Decision::new(
                toolgate_core::Verdict::Escalate,
                toolgate_core::RiskClass::R3,
                1,
                toolgate_core::Layer::Risk,
                "x",
            ),
            None,
        );
    }
    let _ = mcp::elicit_answer(&msg);
});
