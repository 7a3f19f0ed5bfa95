//! Gemini CLI's `BeforeTool` hook (INTEGRATIONS.md; Gemini CLI's hooks
//! reference). The shell tool arrives as `run_shell_command` `{command}`.
//!
//! Answers: allow → `{"decision":"allow"}`, block and escalate → `"deny"`
//! (Gemini has no approval prompt for hooks) with a reason the agent reads
//! as the tool's error. Rewritten params go to
//! `hookSpecificOutput.tool_input`, which Gemini *merges over* the model's
//! arguments: a rewrite can change or add a key, not remove one. Knowledge
//! text goes into the deny reason (which the agent reads) and into
//! `hookSpecificOutput.additionalContext`.

use super::{HookInputError, Runtime, input, text};
use crate::model::{Decision, ToolCall, Verdict};
use serde_json::{Map, Value, json};

/// The hook event toolgate judges; every other event is `Ok(None)`.
pub const EVENT: &str = "BeforeTool";

/// The call a `BeforeTool` payload asks about: `tool_name` → `tool`,
/// `tool_input` → `params`, `session_id` → `session`, `cwd` → `cwd`,
/// `tool_use_id` (if Gemini ever sends one) → `call_id`, agent `gemini`.
/// `mcp_context`, `timestamp` and other fields are ignored. `Ok(None)` for
/// another `hook_event_name`; errors name the field.
pub fn to_call(payload: &Value) -> Result<Option<ToolCall>, HookInputError> {
    input::claude_shaped(Runtime::Gemini, payload, EVENT)
}

/// The stdout JSON for `decision`: `{"decision":"allow"|"deny","reason":…,
/// "hookSpecificOutput"?:{…}}`. A block or escalation is always `deny`; an
/// escalation's reason names the approval id, how to approve it, and that
/// the same call, retried once approved, runs once.
pub fn reply(decision: &Decision) -> Value {
    let (verdict, reason) = match decision.decision {
        Verdict::Allow => ("allow", text::allowed(decision)),
        Verdict::Block | Verdict::Escalate => (
            "deny",
            text::with_context(text::stopped(decision, false), decision),
        ),
    };
    let mut v = json!({ "decision": verdict, "reason": reason });
    let mut specific = Map::new();
    if decision.decision == Verdict::Allow
        && let Some(params) = text::rewrite(decision)
    {
        specific.insert("tool_input".into(), Value::Object(params.clone()));
    }
    if let Some(c) = text::context(decision) {
        specific.insert("additionalContext".into(), c.into());
    }
    if !specific.is_empty() {
        specific.insert("hookEventName".into(), EVENT.into());
        v["hookSpecificOutput"] = Value::Object(specific);
    }
    v
}

/// The fail-closed answer when toolgate could not decide:
/// `{"decision":"deny","reason":…}` carrying `message`. Never `allow`.
pub fn reply_error(message: &str) -> Value {
    json!({ "decision": "deny", "reason": text::failed(message) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::tests::{allow, block, escalate};

    fn payload() -> Value {
        json!({
            "session_id": "g-1", "transcript_path": "/t.json", "cwd": "/repo",
            "hook_event_name": "BeforeTool", "timestamp": "2026-11-01T00:00:00Z",
            "tool_name": "run_shell_command", "tool_input": {"command": "git push"}
        })
    }

    #[test]
    fn before_tool_maps_every_field() {
        let call = to_call(&payload()).unwrap().unwrap();
        assert_eq!(call.tool, "run_shell_command");
        assert_eq!(call.params["command"], "git push");
        assert_eq!(call.session.as_deref(), Some("g-1"));
        assert_eq!(call.cwd.as_deref(), Some("/repo"));
        assert_eq!(call.call_id, None);
        assert_eq!(call.agent.as_deref(), Some("gemini"));
    }

    #[test]
    fn other_events_have_no_opinion() {
        for event in ["AfterTool", "BeforeAgent", "SessionStart", "PreToolUse"] {
            let mut p = payload();
            p["hook_event_name"] = json!(event);
            assert_eq!(to_call(&p), Ok(None), "{event}");
        }
    }

    #[test]
    fn malformed_payloads_are_errors() {
        let err = to_call(&json!(3)).unwrap_err().to_string();
        assert!(
            err.starts_with("gemini hook input must be a JSON object"),
            "{err}"
        );
        let mut p = payload();
        p["tool_input"] = json!(null);
        let err = to_call(&p).unwrap_err().to_string();
        assert!(
            err.contains("`tool_input` must be an object, got null"),
            "{err}"
        );
        let err = to_call(&json!({"hook_event_name": "BeforeTool"}))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no `tool_name`") && err.contains("BeforeTool"),
            "{err}"
        );
    }

    #[test]
    fn allow_block_and_escalate_map_to_allow_and_deny() {
        let v = reply(&allow());
        assert_eq!(v["decision"], "allow");
        assert!(v.get("hookSpecificOutput").is_none());
        let v = reply(&block());
        assert_eq!(v["decision"], "deny");
        assert!(v["reason"].as_str().unwrap().contains("TOOLGATE_BLOCK|"));
        let v = reply(&escalate());
        assert_eq!(v["decision"], "deny");
        let r = v["reason"].as_str().unwrap();
        assert!(
            r.contains("toolgate approvals approve ap_0123456789abcdef"),
            "{r}"
        );
        assert!(r.contains("did not run"), "{r}");
    }

    #[test]
    fn context_reaches_the_agent() {
        let mut d = block();
        d.context = Some("SOP-4: never force-push".into());
        let v = reply(&d);
        assert!(
            v["reason"]
                .as_str()
                .unwrap()
                .ends_with("\n\nSOP-4: never force-push")
        );
        assert_eq!(
            v["hookSpecificOutput"]["additionalContext"],
            "SOP-4: never force-push"
        );
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "BeforeTool");
    }

    #[test]
    fn rewrites_go_to_tool_input_on_allow_only() {
        let params = json!({"command": "git push --dry-run"})
            .as_object()
            .unwrap()
            .clone();
        let mut d = allow();
        d.params = Some(params.clone());
        assert_eq!(reply(&d)["hookSpecificOutput"]["tool_input"], json!(params));
        let mut d = escalate();
        d.params = Some(params);
        assert!(reply(&d).get("hookSpecificOutput").is_none());
    }

    #[test]
    fn reply_error_denies() {
        let v = reply_error("daemon unreachable");
        assert_eq!(v["decision"], "deny");
        assert!(v["reason"].as_str().unwrap().contains("daemon unreachable"));
    }
}
