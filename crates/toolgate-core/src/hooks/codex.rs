//! Codex CLI's `PreToolUse` hook (INTEGRATIONS.md): Claude Code's wire
//! format, with a stricter reading of the reply. Codex's parser
//! (`codex-rs/hooks`, `output_parser.rs`) rejects unknown fields, rejects
//! `permissionDecision:"ask"`, rejects `"allow"` without `updatedInput`,
//! rejects a `permissionDecisionReason` without a decision, and rejects a
//! `deny` whose reason is blank. A rejected reply is logged as a failed hook
//! and the call goes on, so every reply here stays inside what Codex accepts.
//!
//! Answers:
//! - block → `deny` with a non-empty reason.
//! - escalate → `deny` (Codex has no `ask`) with a reason naming the approval
//!   id and saying the same call, retried once approved, runs once.
//! - allow with rewritten params → `allow` + `updatedInput` (the only
//!   meaning `allow` has in Codex: run this input instead).
//! - allow without a rewrite → no decision at all: `{}`, or only
//!   `additionalContext` when there is knowledge to show. A hook cannot
//!   pre-approve anything in Codex; toolgate's allow means "no objection"
//!   and Codex's own sandbox and approval policy still apply. Emitting a
//!   bare `allow` would be rejected and end in the same place, with a hook
//!   error in the log.

use super::{HookInputError, Runtime, input, text};
use crate::model::{Decision, ToolCall, Verdict};
use serde_json::{Map, Value, json};

/// The hook event toolgate judges; every other event is `Ok(None)`.
pub const EVENT: &str = "PreToolUse";

/// The call a `PreToolUse` payload asks about, mapped as for Claude Code
/// (shell calls arrive as `tool_name:"Bash"` with `tool_input.command`),
/// with agent `codex`. Codex's extra fields (`turn_id`, `model`, …) are
/// ignored. `Ok(None)` for another `hook_event_name`; errors name the field.
pub fn to_call(payload: &Value) -> Result<Option<ToolCall>, HookInputError> {
    input::claude_shaped(Runtime::Codex, payload, EVENT)
}

/// The stdout JSON for `decision`, always one Codex's parser accepts. A block
/// or escalation is always `deny` with a non-empty reason; an allow is
/// `allow` only together with `updatedInput`, otherwise no decision (see the
/// module docs).
pub fn reply(decision: &Decision) -> Value {
    let mut out = Map::new();
    match decision.decision {
        Verdict::Allow => {
            if let Some(params) = text::rewrite(decision) {
                out.insert("permissionDecision".into(), "allow".into());
                out.insert(
                    "permissionDecisionReason".into(),
                    text::allowed(decision).into(),
                );
                out.insert("updatedInput".into(), Value::Object(params.clone()));
            }
        }
        Verdict::Block | Verdict::Escalate => {
            out.insert("permissionDecision".into(), "deny".into());
            out.insert(
                "permissionDecisionReason".into(),
                text::stopped(decision, false).into(),
            );
        }
    }
    if let Some(c) = text::context(decision) {
        out.insert("additionalContext".into(), c.into());
    }
    if out.is_empty() {
        return json!({});
    }
    out.insert("hookEventName".into(), EVENT.into());
    json!({ "hookSpecificOutput": out })
}

/// The fail-closed answer when toolgate could not decide: `deny` with a
/// non-empty reason carrying `message`. Never `allow`.
pub fn reply_error(message: &str) -> Value {
    // Codex reads Claude Code's wire format, and this answer is in the part
    // both accept.
    super::claude_code::reply_error(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::tests::{allow, block, codex_accepts, escalate};

    fn assert_codex_accepts(v: &Value) {
        if let Err(e) = codex_accepts(v) {
            panic!("{e}");
        }
    }

    #[test]
    fn pre_tool_use_maps_every_field() {
        let p = json!({
            "session_id": "th-1", "turn_id": "t-3", "transcript_path": null, "cwd": "/w",
            "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "default",
            "tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_use_id": "call_9"
        });
        let call = to_call(&p).unwrap().unwrap();
        assert_eq!(call.tool, "Bash");
        assert_eq!(call.params["command"], "cargo test");
        assert_eq!(call.session.as_deref(), Some("th-1"));
        assert_eq!(call.cwd.as_deref(), Some("/w"));
        assert_eq!(call.call_id.as_deref(), Some("call_9"));
        assert_eq!(call.agent.as_deref(), Some("codex"));
    }

    #[test]
    fn other_events_have_no_opinion() {
        let p = json!({"hook_event_name": "PermissionRequest", "tool_name": "Bash",
            "tool_input": {"command": "ls"}});
        assert_eq!(to_call(&p), Ok(None));
        assert_eq!(to_call(&json!({"hook_event_name": "Stop"})), Ok(None));
    }

    #[test]
    fn malformed_payloads_are_errors() {
        let err = to_call(&json!(null)).unwrap_err().to_string();
        assert!(
            err.starts_with("codex hook input must be a JSON object, got null"),
            "{err}"
        );
        let err = to_call(&json!({"tool_name": "Bash", "tool_input": [1]}))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`tool_input` must be an object, got an array"),
            "{err}"
        );
        let err = to_call(&json!({"tool_input": {}})).unwrap_err().to_string();
        assert!(
            err.contains("no `tool_name`") && err.contains("PreToolUse"),
            "{err}"
        );
    }

    #[test]
    fn plain_allow_says_nothing() {
        let v = reply(&allow());
        assert_eq!(v, json!({}));
        assert_codex_accepts(&v);
    }

    #[test]
    fn allow_with_context_only_adds_context() {
        let mut d = allow();
        d.context = Some("SOP-3: tests run in CI".into());
        let v = reply(&d);
        assert_codex_accepts(&v);
        assert_eq!(
            v,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "additionalContext": "SOP-3: tests run in CI"}})
        );
    }

    #[test]
    fn allow_with_rewrite_is_allow_with_updated_input() {
        let mut d = allow();
        let params = json!({"command": "ls -la"}).as_object().unwrap().clone();
        d.params = Some(params.clone());
        let v = reply(&d);
        assert_codex_accepts(&v);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(v["hookSpecificOutput"]["updatedInput"], json!(params));
    }

    #[test]
    fn block_is_deny_with_a_reason() {
        let v = reply(&block());
        assert_codex_accepts(&v);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        let r = v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(r.contains("TOOLGATE_BLOCK|"), "{r}");
    }

    #[test]
    fn escalation_is_deny_naming_the_approval_and_the_retry() {
        let mut d = escalate();
        d.params = Some(json!({"command": "x"}).as_object().unwrap().clone());
        d.context = Some("SOP-1".into());
        let v = reply(&d);
        assert_codex_accepts(&v);
        let out = &v["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "deny");
        assert_eq!(out["additionalContext"], "SOP-1");
        let r = out["permissionDecisionReason"].as_str().unwrap();
        assert!(r.contains("did not run"), "{r}");
        assert!(
            r.contains("toolgate approvals approve ap_0123456789abcdef"),
            "{r}"
        );
        assert!(
            r.contains("retry exactly the same call, and it runs once"),
            "{r}"
        );
    }

    #[test]
    fn blank_reasons_still_give_a_non_empty_deny() {
        let mut d = block();
        d.reason = String::new();
        d.block_reason = None;
        assert_codex_accepts(&reply(&d));
        assert_codex_accepts(&reply_error(""));
    }

    #[test]
    fn reply_error_denies() {
        let v = reply_error("bad input: expected JSON");
        assert_codex_accepts(&v);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    }
}
