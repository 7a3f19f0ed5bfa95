//! Codex CLI's `PreToolUse` hook (docs/integrations.md): Claude Code's wire
//! format, with a stricter reading of the reply. Codex's parser
//! (`codex-rs/hooks`, `output_parser.rs`) rejects unknown fields, rejects
//! `permissionDecision:"ask"`, rejects `"allow"` without `updatedInput`,
//! rejects a `permissionDecisionReason` without a decision, and rejects a
//! `deny` whose reason is blank. A rejected reply, exit 1, a crash and a
//! timeout all let the call run, and Codex has no fail-closed switch: so a
//! stop is said twice, as a `deny` Codex's parser accepts **and** exit 2
//! with the reason on stderr (which Codex reads as a block whatever stdout
//! holds), and the hook answers before its timeout by itself.
//!
//! Answers:
//! - block → `deny` (exit 2, reason on stderr).
//! - escalate → `deny` (Codex has no `ask`) with a reason naming the approval
//!   id and saying the same call, retried once approved, runs once.
//! - allow with rewritten params → `allow` + `updatedInput` (the only
//!   meaning `allow` has in Codex: run this input instead).
//! - allow without a rewrite → no decision at all: `{}`, or only
//!   `additionalContext` when there is knowledge to show. A hook cannot
//!   pre-approve anything in Codex; toolgate's allow means "no objection"
//!   and Codex's own sandbox and approval policy still apply.
//!
//! Payloads: shell calls arrive as `Bash` `{command}`; `apply_patch` carries
//! the patch text in `tool_input.command`, which is handed on as
//! `{input: <patch>}` so the patch is judged by the files it touches, not
//! as a shell command; `write_stdin` (text typed into a running session) is
//! judged as the command it types.

use super::answers::{AnswerKind as A, AnswerTable, Fact, HookAnswer, Mode, Outcome as O, fact};
use super::install::{Shape, Target, TimeoutUnit};
use super::{HookCall, HookInputError, ReplyContext, Runtime, Spec, input, text};
use crate::model::{Decision, Verdict};
use crate::tool_kind::ToolKind;
use serde_json::{Map, Value, json};

/// The hook event toolgate judges; every other event is `Ok(None)`.
pub(super) const EVENT: &str = "PreToolUse";

/// Everything toolgate knows about Codex CLI.
pub(super) static SPEC: Spec = Spec {
    runtime: Runtime::Codex,
    name: "codex",
    title: "Codex",
    tool_events: &[EVENT],
    to_call,
    reply,
    reply_error,
    classify,
    answers: &ANSWERS,
    vocabulary: VOCABULARY,
    install: &INSTALL,
};

/// Codex CLI's built-in tools (as the model and the hooks name them).
pub(super) const VOCABULARY: &[(&str, ToolKind)] = &[
    ("exec_command", ToolKind::Exec),
    ("write_stdin", ToolKind::Exec),
    ("local_shell", ToolKind::Exec),
    ("container.exec", ToolKind::Exec),
    ("unified_exec", ToolKind::Exec),
    ("apply_patch", ToolKind::Write),
    ("view_image", ToolKind::Read),
    ("list_mcp_resources", ToolKind::Read),
    ("list_mcp_resource_templates", ToolKind::Read),
    ("read_mcp_resource", ToolKind::Read),
    ("update_plan", ToolKind::Memory),
    ("request_user_input", ToolKind::Memory),
    ("get_goal", ToolKind::Memory),
    ("create_goal", ToolKind::Memory),
    ("update_goal", ToolKind::Memory),
];

/// Where `toolgate install codex` registers the hook: `$CODEX_HOME/hooks.json`
/// (default `~/.codex`), plus the trust entry in `config.toml` next to it.
pub(super) static INSTALL: Target = Target {
    dir: ".codex",
    dir_env: Some("CODEX_HOME"),
    file: "hooks.json",
    events: &[EVENT],
    shape: Shape::Grouped { matcher: "*" },
    typed: true,
    timeout_unit: TimeoutUnit::Seconds,
    fail_closed: None,
    required_top: &[],
    needs_trust: true,
};

const FACTS: &[Fact] = &[
    fact(
        A::Allow,
        O::Runs,
        "rejected without updatedInput; the call goes on",
    ),
    fact(A::AllowWithInput, O::Runs, "with the new input"),
    fact(A::Deny, O::Stops, "a non-empty reason is required"),
    fact(A::Ask, O::Runs, "rejected by Codex's parser"),
    fact(A::Defer, O::Runs, "rejected by Codex's parser"),
    fact(
        A::NoDecision,
        O::Runs,
        "observed: the e2e control's `{}` hook",
    ),
    fact(A::Malformed, O::Runs, "logged as a failed hook"),
    fact(
        A::Exit2,
        O::Stops,
        "observed: \"Command blocked by PreToolUse hook\"",
    ),
    fact(A::Exit2Silent, O::Runs, "a failed hook"),
    fact(A::ExitOther, O::Runs, "no fail-closed switch"),
    fact(A::Timeout, O::Runs, "no fail-closed switch"),
    fact(A::Crash, O::Runs, "no fail-closed switch"),
];

/// The answer table (0.169.0, observed offline). `codex exec` sends
/// `permission_mode: "bypassPermissions"` whatever its sandbox flag
/// (observed with --dangerously-bypass-approvals-and-sandbox, --full-auto
/// and no flag); the answers act alike in every mode.
pub(super) static ANSWERS: AnswerTable = AnswerTable {
    observed: "Codex CLI 0.169.0 (`codex exec`, offline; a hook runs only with its trust entry)",
    modes: &[
        Mode {
            name: "bypassPermissions",
            person_at_prompt: false,
            facts: FACTS,
        },
        Mode {
            name: "default",
            person_at_prompt: false,
            facts: FACTS,
        },
    ],
};

/// The call a `PreToolUse` payload asks about, mapped as for Claude Code
/// (shell calls arrive as `tool_name:"Bash"` with `tool_input.command`),
/// with agent `codex`; `apply_patch` and `write_stdin` as the module docs
/// say. Codex's extra fields (`turn_id`, `model`, …) are ignored.
/// `Ok(None)` for another `hook_event_name`; errors name the field.
pub(super) fn to_call(payload: &Value) -> Result<Option<HookCall>, HookInputError> {
    let Some(mut hc) = input::claude_shaped(Runtime::Codex, payload, EVENT)? else {
        return Ok(None);
    };
    let call = &mut hc.call;
    if call.tool.eq_ignore_ascii_case("apply_patch")
        && !call.params.contains_key("input")
        && let Some(patch) = patch_text(call.params.get("command"))
    {
        let mut params = call.params.clone();
        params.remove("command");
        params.insert("input".into(), Value::String(patch));
        call.params = params;
    } else if call.tool.eq_ignore_ascii_case("write_stdin") {
        // Keystrokes into a running session: judged as the command typed.
        let typed = ["chars", "input", "text"]
            .iter()
            .find_map(|k| call.params.get(*k).and_then(Value::as_str))
            .unwrap_or("")
            .to_string();
        let mut params = Map::new();
        params.insert("command".into(), Value::String(typed));
        call.tool = "exec".into();
        call.params = params;
    }
    Ok(Some(hc))
}

/// The patch text of an apply_patch `command`: the string itself, or the
/// argv element holding it (`["apply_patch", "*** Begin Patch…"]`).
fn patch_text(command: Option<&Value>) -> Option<String> {
    let is_patch = |s: &str| s.trim_start().starts_with("*** Begin Patch");
    match command? {
        Value::String(s) if is_patch(s) => Some(s.clone()),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .find(|s| is_patch(s))
            .map(str::to_string),
        _ => None,
    }
}

/// The answer for `decision`, always one Codex's parser accepts. A block or
/// escalation is a `deny` with a non-empty reason and exit 2 with the same
/// reason on stderr; an allow is `allow` only together with `updatedInput`,
/// otherwise no decision (see the module docs).
pub(super) fn reply(decision: &Decision, _ctx: &ReplyContext<'_>) -> HookAnswer {
    let mut out = Map::new();
    let mut stop = None;
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
            let reason = text::stopped(decision, false);
            out.insert("permissionDecision".into(), "deny".into());
            out.insert("permissionDecisionReason".into(), reason.clone().into());
            stop = Some(reason);
        }
    }
    if let Some(c) = text::context(decision) {
        out.insert("additionalContext".into(), c.into());
    }
    let stdout = if out.is_empty() {
        json!({})
    } else {
        out.insert("hookEventName".into(), EVENT.into());
        json!({ "hookSpecificOutput": out })
    };
    match stop {
        Some(reason) => HookAnswer {
            stdout,
            exit: 2,
            stderr: Some(reason),
        },
        None => HookAnswer::json(stdout),
    }
}

/// The fail-closed answer when toolgate could not decide: `deny` with a
/// non-empty reason carrying `message`, and exit 2 with it on stderr.
pub(super) fn reply_error(message: &str) -> HookAnswer {
    let reason = text::failed(message);
    HookAnswer {
        stdout: super::claude_code::deny_json(&reason),
        exit: 2,
        stderr: Some(reason),
    }
}

/// The fields Codex's `PreToolUseHookSpecificOutputWire` accepts.
const FIELDS: [&str; 5] = [
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
    "updatedInput",
    "additionalContext",
];

/// How Codex's output parser reads an exit-0 answer: anything outside its
/// schema, `ask`, a bare `allow` and a blank `deny` are rejected (and the
/// call goes on); the legacy `{"decision":"block","reason":…}` is a deny.
pub(super) fn classify(v: &Value) -> A {
    let Some(top) = v.as_object() else {
        return A::Malformed;
    };
    if top.get("decision").and_then(Value::as_str) == Some("block")
        && top
            .get("reason")
            .and_then(Value::as_str)
            .is_some_and(|r| !r.trim().is_empty())
        && top.keys().all(|k| k == "decision" || k == "reason")
    {
        return A::Deny;
    }
    if top.keys().any(|k| k != "hookSpecificOutput") {
        return A::Malformed;
    }
    let Some(out) = top.get("hookSpecificOutput") else {
        return A::NoDecision;
    };
    let Some(out) = out.as_object() else {
        return A::Malformed;
    };
    if out.keys().any(|k| !FIELDS.contains(&k.as_str()))
        || out.get("hookEventName") != Some(&json!(EVENT))
    {
        return A::Malformed;
    }
    let reason = out.get("permissionDecisionReason");
    match out.get("permissionDecision").and_then(Value::as_str) {
        Some("allow") if out.contains_key("updatedInput") => A::AllowWithInput,
        Some("deny")
            if reason
                .and_then(Value::as_str)
                .is_some_and(|r| !r.trim().is_empty()) =>
        {
            A::Deny
        }
        Some(_) => A::Malformed,
        None if reason.is_none() && !out.contains_key("updatedInput") => A::NoDecision,
        None => A::Malformed,
    }
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
        let call = to_call(&p).unwrap().unwrap().call;
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
        let v = reply(&allow(), &ReplyContext::default()).stdout;
        assert_eq!(v, json!({}));
        assert_codex_accepts(&v);
    }

    #[test]
    fn allow_with_context_only_adds_context() {
        let mut d = allow();
        d.context = Some("SOP-3: tests run in CI".into());
        let v = reply(&d, &ReplyContext::default()).stdout;
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
        let v = reply(&d, &ReplyContext::default()).stdout;
        assert_codex_accepts(&v);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
        assert_eq!(v["hookSpecificOutput"]["updatedInput"], json!(params));
    }

    #[test]
    fn block_is_deny_with_a_reason() {
        let v = reply(&block(), &ReplyContext::default()).stdout;
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
        let v = reply(&d, &ReplyContext::default()).stdout;
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
        assert_codex_accepts(&reply(&d, &ReplyContext::default()).stdout);
        assert_codex_accepts(&reply_error("").stdout);
    }

    #[test]
    fn reply_error_denies() {
        let v = reply_error("bad input: expected JSON").stdout;
        assert_codex_accepts(&v);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    }

    #[test]
    fn apply_patch_from_command_is_judged_as_a_patch() {
        let patch = "*** Begin Patch\n*** Add File: notes.txt\n+hi\n*** End Patch\n";
        for command in [json!(patch), json!(["apply_patch", patch])] {
            let p = json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch",
                "tool_input": {"command": command}, "cwd": "/w"});
            let call = to_call(&p).unwrap().unwrap().call;
            assert_eq!(call.tool, "apply_patch");
            assert_eq!(call.params.get("input"), Some(&json!(patch)));
            assert!(call.params.get("command").is_none());
        }
        // Not a patch: left as it came, so it is judged as a command.
        let p = json!({"tool_name": "apply_patch", "tool_input": {"command": "rm -rf ~"}});
        assert_eq!(
            to_call(&p).unwrap().unwrap().call.params["command"],
            "rm -rf ~"
        );
    }

    #[test]
    fn typed_input_is_judged_as_a_command() {
        let p = json!({"tool_name": "write_stdin", "tool_input": {"session_id": 3, "chars": "rm -r ~/x\n"}});
        let call = to_call(&p).unwrap().unwrap().call;
        assert_eq!(call.tool, "exec");
        assert_eq!(call.params["command"], "rm -r ~/x\n");
    }

    #[test]
    fn stops_exit_2_with_the_reason_on_stderr() {
        for d in [block(), escalate()] {
            let a = reply(&d, &ReplyContext::default());
            assert_eq!(a.exit, 2);
            assert!(!a.stderr.unwrap().trim().is_empty());
        }
        assert_eq!(reply(&allow(), &ReplyContext::default()).exit, 0);
        assert_eq!(reply_error("").exit, 2);
    }
}
