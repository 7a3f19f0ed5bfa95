//! Claude Code's `PreToolUse` hook (INTEGRATIONS.md). The same JSON arrives
//! on a command hook's stdin and in the body of Claude's `http` hook, and the
//! same reply works for both.
//!
//! Answers: allow → `allow` (Claude's own prompt is skipped; its settings'
//! `permissions.deny` still wins), block → `deny`, escalate → `ask` (Claude
//! shows its own permission prompt with toolgate's reason and approval id; in
//! `-p` mode an `ask` counts as a denial). Knowledge text goes to
//! `additionalContext`, which reaches the model; rewritten params go to
//! `updatedInput` for `allow` and `ask` (the input the user is asked about).

use super::{HookInputError, Runtime, input, text};
use crate::model::{Decision, ToolCall, Verdict};
use serde_json::{Value, json};

/// The hook event toolgate judges; every other event is `Ok(None)`.
pub const EVENT: &str = "PreToolUse";

/// The call a `PreToolUse` payload asks about: `tool_name` → `tool`,
/// `tool_input` → `params`, `session_id` → `session`, `cwd` → `cwd`,
/// `tool_use_id` → `call_id`, agent `claude-code`. `Ok(None)` for another
/// `hook_event_name`; a payload without one is judged. Errors name the field
/// that is missing or of the wrong type.
pub fn to_call(payload: &Value) -> Result<Option<ToolCall>, HookInputError> {
    input::claude_shaped(Runtime::ClaudeCode, payload, EVENT)
}

/// The stdout JSON for `decision`:
/// `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":…,
/// "permissionDecisionReason":…, "updatedInput"?, "additionalContext"?}}`.
/// A block is always `deny` and an escalation always `ask`, never `allow`.
///
/// For an escalation the approval text also goes to `additionalContext`
/// (before any knowledge text), so the model learns the approval id even
/// when `-p` mode turns the `ask` into a plain denial.
pub fn reply(decision: &Decision) -> Value {
    let (verdict, reason) = match decision.decision {
        Verdict::Allow => ("allow", text::allowed(decision)),
        Verdict::Escalate => ("ask", text::escalated(decision, false)),
        Verdict::Block => ("deny", text::blocked(decision)),
    };
    let mut out = json!({
        "hookEventName": EVENT,
        "permissionDecision": verdict,
        "permissionDecisionReason": reason,
    });
    if decision.decision != Verdict::Block
        && let Some(params) = text::rewrite(decision)
    {
        out["updatedInput"] = Value::Object(params.clone());
    }
    let context = match (decision.decision, text::context(decision)) {
        (Verdict::Escalate, Some(c)) => Some(format!("{reason}\n\n{c}")),
        (Verdict::Escalate, None) => Some(reason),
        // A held call's knowledge is already in the reason.
        (Verdict::Block, _) if decision.needs_ack() => None,
        (_, c) => c.map(str::to_string),
    };
    if let Some(c) = context {
        out["additionalContext"] = Value::String(c);
    }
    json!({ "hookSpecificOutput": out })
}

/// The fail-closed answer when toolgate could not decide: `deny` with
/// `message` and what to do about it. Never `allow` or `ask`.
pub fn reply_error(message: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": "deny",
            "permissionDecisionReason": text::failed(message),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::tests::{allow, block, escalate};
    use serde_json::json;

    fn payload() -> Value {
        json!({
            "session_id": "s-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/home/dev/proj",
            "prompt_id": "p", "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "rm -rf build", "timeout": 5},
            "tool_use_id": "toolu_01"
        })
    }

    fn out(v: &Value) -> &Value {
        &v["hookSpecificOutput"]
    }

    #[test]
    fn pre_tool_use_maps_every_field() {
        let call = to_call(&payload()).unwrap().unwrap();
        assert_eq!(call.tool, "Bash");
        assert_eq!(call.params["command"], "rm -rf build");
        assert_eq!(call.params["timeout"], 5);
        assert_eq!(call.session.as_deref(), Some("s-1"));
        assert_eq!(call.cwd.as_deref(), Some("/home/dev/proj"));
        assert_eq!(call.call_id.as_deref(), Some("toolu_01"));
        assert_eq!(call.agent.as_deref(), Some("claude-code"));
        assert_eq!(call.channel, None);
    }

    #[test]
    fn mcp_tools_keep_their_name() {
        let mut p = payload();
        p["tool_name"] = json!("mcp__fs__write_file");
        p["mcp_server"] = json!({"name": "fs", "source": "project"});
        assert_eq!(to_call(&p).unwrap().unwrap().tool, "mcp__fs__write_file");
    }

    #[test]
    fn other_events_have_no_opinion() {
        for event in [
            "PostToolUse",
            "PermissionRequest",
            "UserPromptSubmit",
            "Stop",
        ] {
            let mut p = payload();
            p["hook_event_name"] = json!(event);
            assert_eq!(to_call(&p), Ok(None), "{event}");
        }
    }

    #[test]
    fn a_payload_without_an_event_name_is_judged() {
        let mut p = payload();
        p.as_object_mut().unwrap().remove("hook_event_name");
        assert!(to_call(&p).unwrap().is_some());
    }

    #[test]
    fn malformed_payloads_are_errors_that_name_the_field() {
        let cases = [
            (json!([1]), "must be a JSON object, got an array"),
            (json!("PreToolUse"), "got a string"),
            (json!({"hook_event_name": "PreToolUse"}), "no `tool_name`"),
            (json!({"tool_name": "Bash"}), "no `tool_input`"),
            (
                json!({"tool_name": "Bash", "tool_input": "ls"}),
                "`tool_input` must be an object, got a string",
            ),
            (
                json!({"tool_name": 7, "tool_input": {}}),
                "`tool_name` must be a non-empty string, got a number",
            ),
            (
                json!({"tool_name": "", "tool_input": {}}),
                "got an empty string",
            ),
            (
                json!({"tool_name": "Bash", "tool_input": {}, "cwd": ["/"]}),
                "`cwd` must be a string",
            ),
            (
                json!({"hook_event_name": 1, "tool_name": "Bash", "tool_input": {}}),
                "`hook_event_name`",
            ),
        ];
        for (p, want) in cases {
            let err = to_call(&p).unwrap_err().to_string();
            assert!(err.contains(want), "{p}: {err}");
            assert!(err.starts_with("claude-code hook input"), "{err}");
        }
    }

    #[test]
    fn allow_is_allow_with_reason() {
        let v = reply(&allow());
        assert_eq!(out(&v)["hookEventName"], "PreToolUse");
        assert_eq!(out(&v)["permissionDecision"], "allow");
        assert!(
            out(&v)["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("read-only")
        );
        assert!(out(&v).get("updatedInput").is_none());
        assert!(out(&v).get("additionalContext").is_none());
    }

    #[test]
    fn block_is_deny_with_the_protocol_line() {
        let v = reply(&block());
        assert_eq!(out(&v)["permissionDecision"], "deny");
        let reason = out(&v)["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("TOOLGATE_BLOCK|"), "{reason}");
        assert!(reason.contains("No approval can unlock"), "{reason}");
    }

    #[test]
    fn escalation_is_ask_naming_the_approval_and_how_to_approve() {
        let v = reply(&escalate());
        assert_eq!(out(&v)["permissionDecision"], "ask");
        let reason = out(&v)["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("ap_0123456789abcdef"), "{reason}");
        assert!(
            reason.contains("toolgate approvals approve ap_0123456789abcdef"),
            "{reason}"
        );
        let ctx = out(&v)["additionalContext"].as_str().unwrap();
        assert!(
            ctx.contains("TOOLGATE_ESCALATE|ap_0123456789abcdef|"),
            "{ctx}"
        );
    }

    #[test]
    fn context_becomes_additional_context() {
        let mut d = allow();
        d.context = Some("SOP-12: run tests before pushing".into());
        assert_eq!(
            out(&reply(&d))["additionalContext"],
            "SOP-12: run tests before pushing"
        );
        let mut d = escalate();
        d.context = Some("SOP-12".into());
        let ctx = reply(&d)["hookSpecificOutput"]["additionalContext"].clone();
        assert!(ctx.as_str().unwrap().ends_with("\n\nSOP-12"), "{ctx}");
        let mut d = block();
        d.context = Some("SOP-9".into());
        assert_eq!(out(&reply(&d))["additionalContext"], "SOP-9");
    }

    #[test]
    fn rewritten_params_become_updated_input_but_never_on_deny() {
        let params = json!({"command": "rm -rf ./build"})
            .as_object()
            .unwrap()
            .clone();
        for mut d in [allow(), escalate()] {
            d.params = Some(params.clone());
            assert_eq!(out(&reply(&d))["updatedInput"], json!(params));
        }
        let mut d = block();
        d.params = Some(params);
        assert!(out(&reply(&d)).get("updatedInput").is_none());
        let mut d = allow();
        d.params = Some(Default::default());
        assert!(out(&reply(&d)).get("updatedInput").is_none());
    }

    #[test]
    fn reply_error_denies() {
        let v = reply_error("daemon unreachable at 127.0.0.1:7878");
        assert_eq!(out(&v)["permissionDecision"], "deny");
        let reason = out(&v)["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("daemon unreachable"), "{reason}");
        assert!(reason.contains("fail-closed"), "{reason}");
    }
}
