//! Claude Code's `PreToolUse` hook (docs/integrations.md). The same JSON arrives
//! on a command hook's stdin and in the body of Claude's `http` hook, and the
//! same reply works for both.
//!
//! Answers: allow → no decision (Claude's own permission rules and prompts
//! stay in force, as without toolgate), or, with `[hooks] allow_is_final =
//! true`, rewritten params (which Claude takes only with an allow) or an
//! approval a person gave for this call, `allow` (Claude's own prompt is skipped; its settings'
//! `permissions.deny` still wins); block → `deny`, escalate → `deny` naming
//! the approval, what it waits for and how to get it approved. `ask` is
//! **not** a denial: it hands the call to Claude's own permission logic,
//! which in `bypassPermissions` (and for edits in `acceptEdits`) says yes
//! (observed with 2.1.330). So an escalation is answered `ask` only where
//! the policy lets Claude's prompt stand in for an approval
//! (`[hooks] host_prompt = true`) **and** the payload's `permission_mode`
//! has a person at the prompt (`default`, `plan`). Knowledge text goes to
//! `additionalContext`, which reaches the model; rewritten params go to
//! `updatedInput` for `allow` and `ask` (the input the user is asked about).

use super::answers::{AnswerKind as A, AnswerTable, Fact, HookAnswer, Mode, Outcome as O, fact};
use super::install::{FailClosedValue, Shape, Target, TimeoutUnit};
use super::{HookCall, HookInputError, ReplyContext, Runtime, Spec, input, text};
use crate::model::{Decision, Layer, Verdict};
use crate::tool_kind::ToolKind;
use serde_json::{Value, json};

/// The hook event toolgate judges; every other event is `Ok(None)`.
pub(super) const EVENT: &str = "PreToolUse";

/// Everything toolgate knows about Claude Code.
pub(super) static SPEC: Spec = Spec {
    runtime: Runtime::ClaudeCode,
    name: "claude-code",
    title: "Claude Code",
    tool_events: &[EVENT],
    to_call,
    reply,
    reply_error,
    classify,
    answers: &ANSWERS,
    vocabulary: VOCABULARY,
    install: &INSTALL,
};

/// Claude Code's built-in tools.
pub(super) const VOCABULARY: &[(&str, ToolKind)] = &[
    ("Bash", ToolKind::Exec),
    ("BashOutput", ToolKind::Process),
    ("KillShell", ToolKind::Process),
    ("KillBash", ToolKind::Process),
    ("Read", ToolKind::Read),
    ("Glob", ToolKind::Read),
    ("Grep", ToolKind::Read),
    ("LS", ToolKind::Read),
    ("NotebookRead", ToolKind::Read),
    ("Write", ToolKind::Write),
    ("Edit", ToolKind::Write),
    ("MultiEdit", ToolKind::Write),
    ("NotebookEdit", ToolKind::Write),
    ("WebFetch", ToolKind::Fetch),
    ("WebSearch", ToolKind::Search),
    ("Task", ToolKind::Sessions),
    ("Agent", ToolKind::Sessions),
    ("TodoWrite", ToolKind::Memory),
    ("ExitPlanMode", ToolKind::Memory),
];

/// Where `toolgate install claude-code` registers the hook.
pub(super) static INSTALL: Target = Target {
    dir: ".claude",
    dir_env: Some("CLAUDE_CONFIG_DIR"),
    file: "settings.json",
    events: &[EVENT],
    shape: Shape::Grouped { matcher: "*" },
    typed: true,
    timeout_unit: TimeoutUnit::Seconds,
    fail_closed: Some(("onFailure", FailClosedValue::Text("block"))),
    required_top: &[],
    needs_trust: false,
};

/// One mode's facts: every answer but `ask`, `defer` and no decision acts
/// the same in every mode (failures stop the call because toolgate's entry
/// sets `"onFailure": "block"`; without it each of them lets the call run).
const fn facts(ask: Fact, defer: Fact, none: Fact) -> [Fact; 12] {
    const FAILED: &str = "with onFailure: block; runs without it";
    [
        fact(A::Allow, O::Runs, ""),
        fact(A::AllowWithInput, O::Runs, ""),
        fact(A::Deny, O::Stops, ""),
        ask,
        defer,
        none,
        fact(A::Exit2, O::Stops, "stderr goes to the model"),
        fact(A::Exit2Silent, O::Stops, ""),
        fact(A::ExitOther, O::Stops, FAILED),
        fact(A::Timeout, O::Stops, FAILED),
        fact(A::Crash, O::Stops, FAILED),
        fact(
            A::Malformed,
            O::Runs,
            "non-JSON stdout on exit 0 is ignored",
        ),
    ]
}

/// Where Claude's own logic says yes: `ask`, `defer` and no decision run.
const fn unprompted(ask: &'static str, rest: &'static str) -> [Fact; 12] {
    facts(
        fact(A::Ask, O::Runs, ask),
        fact(A::Defer, O::Runs, rest),
        fact(A::NoDecision, O::Runs, rest),
    )
}

/// Where a person sits at the prompt: `ask` is theirs to answer.
const fn prompted(rest: &'static str) -> [Fact; 12] {
    facts(
        fact(A::Ask, O::PersonDecides, "observed: a denial in `-p`"),
        fact(A::Defer, O::Runs, rest),
        fact(A::NoDecision, O::Runs, rest),
    )
}

static BYPASS: [Fact; 12] = unprompted(
    "observed: Write, Edit, Bash redirects ran",
    "Claude's own logic says yes",
);
static ACCEPT_EDITS: [Fact; 12] = unprompted(
    "edits are accepted without a prompt",
    "edits are accepted without a prompt",
);
static DONT_ASK: [Fact; 12] = unprompted(
    "not observed to stop: assumed to run",
    "pre-approved tools run",
);
static DEFAULT: [Fact; 12] = prompted("allow-listed tools run unasked");
static PLAN: [Fact; 12] = prompted("read-only tools run unasked");

const fn mode(name: &'static str, person_at_prompt: bool, facts: &'static [Fact]) -> Mode {
    Mode {
        name,
        person_at_prompt,
        facts,
    }
}

/// The answer table (2.1.330, `claude -p`, observed offline; the e2e suite
/// runs an escalated Bash, Write and Edit in every mode).
pub(super) static ANSWERS: AnswerTable = AnswerTable {
    observed: "Claude Code 2.1.330 (`claude -p`, offline)",
    modes: &[
        mode("bypassPermissions", false, &BYPASS),
        mode("acceptEdits", false, &ACCEPT_EDITS),
        mode("dontAsk", false, &DONT_ASK),
        mode("default", true, &DEFAULT),
        mode("plan", true, &PLAN),
    ],
};

/// The call a `PreToolUse` payload asks about: `tool_name` → `tool`,
/// `tool_input` → `params`, `session_id` → `session`, `cwd` → `cwd`,
/// `tool_use_id` → `call_id`, agent `claude-code`, and the payload's
/// `permission_mode`. `Ok(None)` for another `hook_event_name`; a payload
/// without one is judged. Errors name the field that is missing or of the
/// wrong type.
pub(super) fn to_call(payload: &Value) -> Result<Option<HookCall>, HookInputError> {
    input::claude_shaped(Runtime::ClaudeCode, payload, EVENT)
}

/// Whether the reply may hand an escalation to Claude's own prompt: the
/// policy allows it and the mode has a person at the prompt.
fn may_ask(ctx: &ReplyContext<'_>) -> bool {
    ctx.host_prompt && ANSWERS.mode(ctx.mode).outcome(A::Ask) == O::PersonDecides
}

/// The answer for `decision`: exit 0 and
/// `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":…,
/// "permissionDecisionReason":…, "updatedInput"?, "additionalContext"?}}`.
/// A block is always `deny`; an escalation is `deny` unless [`may_ask`]
/// (see the module docs); never `allow` for either.
pub(super) fn reply(decision: &Decision, ctx: &ReplyContext<'_>) -> HookAnswer {
    // An allow an approval unlocked was decided by a person for this very
    // call: asking again at Claude's prompt would ask twice.
    if decision.decision == Verdict::Allow
        && !ctx.allow_is_final
        && decision.layer != Layer::Approval
        && text::rewrite(decision).is_none()
    {
        // No opinion: the call goes on to Claude's own permission logic.
        let mut out = json!({ "hookEventName": EVENT });
        if let Some(c) = text::context(decision) {
            out["additionalContext"] = Value::String(c.to_string());
        }
        return HookAnswer::json(json!({ "hookSpecificOutput": out }));
    }
    let (verdict, reason) = match decision.decision {
        Verdict::Allow => ("allow", text::allowed(decision)),
        Verdict::Escalate if may_ask(ctx) => ("ask", text::escalated(decision, false)),
        Verdict::Escalate => ("deny", text::escalated(decision, true)),
        Verdict::Block => ("deny", text::blocked(decision)),
    };
    let mut out = json!({
        "hookEventName": EVENT,
        "permissionDecision": verdict,
        "permissionDecisionReason": reason,
    });
    if verdict != "deny"
        && let Some(params) = text::rewrite(decision)
    {
        out["updatedInput"] = Value::Object(params.clone());
    }
    let context = match (verdict, text::context(decision)) {
        // The person at the prompt sees the reason; the model learns the
        // approval id from the context.
        ("ask", Some(c)) => Some(format!("{reason}\n\n{c}")),
        ("ask", None) => Some(reason),
        // A held call's knowledge is already in the reason.
        (_, _) if decision.needs_ack() => None,
        (_, c) => c.map(str::to_string),
    };
    if let Some(c) = context {
        out["additionalContext"] = Value::String(c);
    }
    HookAnswer::json(json!({ "hookSpecificOutput": out }))
}

/// The fail-closed answer when toolgate could not decide: `deny` with
/// `message` and what to do about it. Never `allow` or `ask`.
pub(super) fn reply_error(message: &str) -> HookAnswer {
    HookAnswer::json(deny_json(&text::failed(message)))
}

/// `{"hookSpecificOutput":{… "permissionDecision":"deny", …}}` with `reason`.
pub(crate) fn deny_json(reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": EVENT,
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    })
}

/// How Claude Code reads an exit-0 answer: `hookSpecificOutput.permissionDecision`
/// (`allow`, `deny`, `ask`, `defer`), or the older top-level `decision`
/// (`approve`/`block`); anything else is no decision, and output that is
/// not an object is ignored.
pub(super) fn classify(v: &Value) -> A {
    let Some(top) = v.as_object() else {
        return A::Malformed;
    };
    let out = top.get("hookSpecificOutput");
    match out
        .and_then(|o| o.get("permissionDecision"))
        .and_then(Value::as_str)
    {
        Some("allow") if out.is_some_and(|o| o.get("updatedInput").is_some()) => A::AllowWithInput,
        Some("allow") => A::Allow,
        Some("deny") => A::Deny,
        Some("ask") => A::Ask,
        Some("defer") => A::Defer,
        Some(_) => A::Malformed,
        None => match top.get("decision").and_then(Value::as_str) {
            Some("block") => A::Deny,
            Some("approve") => A::Allow,
            _ => A::NoDecision,
        },
    }
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
        let call = to_call(&payload()).unwrap().unwrap().call;
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
        assert_eq!(
            to_call(&p).unwrap().unwrap().call.tool,
            "mcp__fs__write_file"
        );
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

    /// By default toolgate's allow is no decision, so Claude's own rules and
    /// prompts stay in force (installing toolgate never makes Claude ask
    /// less); `[hooks] allow_is_final` makes it an allow.
    #[test]
    fn allow_leaves_claudes_own_checks_in_force_unless_final() {
        let v = reply(&allow(), &ReplyContext::default()).stdout;
        assert_eq!(out(&v)["hookEventName"], "PreToolUse");
        assert_eq!(classify(&v), A::NoDecision, "{v}");
        let mut d = allow();
        d.context = Some("SOP-12".into());
        let v = reply(&d, &ReplyContext::default()).stdout;
        assert_eq!(
            (classify(&v), &out(&v)["additionalContext"]),
            (A::NoDecision, &json!("SOP-12"))
        );
        let fin = ReplyContext {
            allow_is_final: true,
            ..ReplyContext::default()
        };
        let mut approved = allow();
        approved.layer = Layer::Approval;
        let v = reply(&approved, &ReplyContext::default()).stdout;
        assert_eq!(classify(&v), A::Allow, "an approved call: {v}");
        let v = reply(&allow(), &fin).stdout;
        assert_eq!(classify(&v), A::Allow);
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
        let v = reply(&block(), &ReplyContext::default()).stdout;
        assert_eq!(out(&v)["permissionDecision"], "deny");
        let reason = out(&v)["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("TOOLGATE_BLOCK|"), "{reason}");
        assert!(reason.contains("No approval can unlock"), "{reason}");
    }

    const ASKING: ReplyContext<'static> = ReplyContext {
        mode: Some("default"),
        host_prompt: true,
        allow_is_final: false,
    };

    #[test]
    fn escalation_is_deny_naming_the_approval_and_how_to_approve_in_every_mode() {
        for mode in [
            None,
            Some("bypassPermissions"),
            Some("acceptEdits"),
            Some("dontAsk"),
            Some("default"),
            Some("plan"),
            Some("auto"),
        ] {
            for host_prompt in [false, true] {
                let c = ReplyContext {
                    mode,
                    host_prompt,
                    allow_is_final: false,
                };
                let v = reply(&escalate(), &c).stdout;
                let person = matches!(mode, Some("default") | Some("plan"));
                let want = if host_prompt && person { "ask" } else { "deny" };
                assert_eq!(
                    out(&v)["permissionDecision"],
                    want,
                    "{mode:?} {host_prompt}"
                );
                let reason = out(&v)["permissionDecisionReason"].as_str().unwrap();
                assert!(reason.contains("ap_0123456789abcdef"), "{reason}");
                assert!(
                    reason.contains("toolgate approvals approve ap_0123456789abcdef"),
                    "{reason}"
                );
                assert!(
                    reason.contains("TOOLGATE_ESCALATE|ap_0123456789abcdef|"),
                    "{reason}"
                );
                assert_eq!(reason.contains("did not run"), want == "deny", "{reason}");
            }
        }
        // The mode names compare without case: `Default` is `default`.
        let c = ReplyContext {
            mode: Some("Default"),
            host_prompt: true,
            allow_is_final: false,
        };
        assert_eq!(
            out(&reply(&escalate(), &c).stdout)["permissionDecision"],
            "ask"
        );
    }

    #[test]
    fn a_host_prompt_ask_tells_the_model_the_approval_id() {
        let v = reply(&escalate(), &ASKING).stdout;
        let ctx = out(&v)["additionalContext"].as_str().unwrap();
        assert!(
            ctx.contains("TOOLGATE_ESCALATE|ap_0123456789abcdef|"),
            "{ctx}"
        );
    }

    #[test]
    fn context_becomes_additional_context() {
        let none = ReplyContext::default();
        let mut d = allow();
        d.context = Some("SOP-12: run tests before pushing".into());
        assert_eq!(
            out(&reply(&d, &none).stdout)["additionalContext"],
            "SOP-12: run tests before pushing"
        );
        let mut d = escalate();
        d.context = Some("SOP-12".into());
        assert_eq!(out(&reply(&d, &none).stdout)["additionalContext"], "SOP-12");
        let ctx = out(&reply(&d, &ASKING).stdout)["additionalContext"].clone();
        assert!(ctx.as_str().unwrap().ends_with("\n\nSOP-12"), "{ctx}");
        let mut d = block();
        d.context = Some("SOP-9".into());
        assert_eq!(out(&reply(&d, &none).stdout)["additionalContext"], "SOP-9");
    }

    #[test]
    fn rewritten_params_become_updated_input_but_never_on_deny() {
        let none = ReplyContext::default();
        let params = json!({"command": "rm -rf ./build"})
            .as_object()
            .unwrap()
            .clone();
        let mut d = allow();
        d.params = Some(params.clone());
        assert_eq!(out(&reply(&d, &none).stdout)["updatedInput"], json!(params));
        let mut d = escalate();
        d.params = Some(params.clone());
        assert_eq!(
            out(&reply(&d, &ASKING).stdout)["updatedInput"],
            json!(params)
        );
        assert!(out(&reply(&d, &none).stdout).get("updatedInput").is_none());
        let mut d = block();
        d.params = Some(params);
        assert!(out(&reply(&d, &none).stdout).get("updatedInput").is_none());
        let mut d = allow();
        d.params = Some(Default::default());
        assert!(out(&reply(&d, &none).stdout).get("updatedInput").is_none());
    }

    #[test]
    fn permission_mode_is_read() {
        let hc = to_call(&payload()).unwrap().unwrap();
        assert_eq!(hc.mode.as_deref(), Some("default"));
        let mut p = payload();
        p["permission_mode"] = json!(3);
        assert!(to_call(&p).is_err());
    }

    #[test]
    fn reply_error_denies() {
        let v = reply_error("daemon unreachable at 127.0.0.1:7878").stdout;
        assert_eq!(out(&v)["permissionDecision"], "deny");
        let reason = out(&v)["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("daemon unreachable"), "{reason}");
        assert!(reason.contains("fail-closed"), "{reason}");
    }
}
