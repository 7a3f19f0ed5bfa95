//! Gemini CLI's `BeforeTool` hook (docs/integrations.md; Gemini CLI's hooks
//! reference). The shell tool arrives as `run_shell_command` `{command}`;
//! MCP tools arrive as `mcp_<server>_<tool>` with an `mcp_context` naming
//! the server and tool, and are judged as `mcp__<server>__<tool>` like every
//! other runtime's MCP calls.
//!
//! Answers: allow → `{"decision":"allow"}`, block and escalate → `"deny"`
//! (Gemini has no approval prompt for hooks) with a reason the agent reads
//! as the tool's error, and exit 2 with the reason on stderr: Gemini has no
//! fail-closed switch, and exit 2 with text blocks whatever else happens to
//! stdout. Rewritten params go to `hookSpecificOutput.tool_input`, which
//! Gemini *merges over* the model's arguments: a rewrite can change or add
//! a key, not remove one. Knowledge text goes into the deny reason (which
//! the agent reads) and into `hookSpecificOutput.additionalContext`.
//!
//! Gemini may strip the hook's environment (all of it but a short list when
//! `GITHUB_SHA` is set), so `toolgate install gemini` puts every setting the
//! hook needs on its command line.

use super::answers::{AnswerKind as A, AnswerTable, Fact, HookAnswer, Mode, Outcome as O, fact};
use super::input::{Payload, type_name};
use super::install::{Shape, Target, TimeoutUnit};
use super::{HookCall, HookInputError, ReplyContext, Runtime, Spec, input, text};
use crate::model::{Decision, Verdict};
use crate::tool_kind::ToolKind;
use serde_json::{Map, Value, json};

/// The hook event toolgate judges; every other event is `Ok(None)`.
pub(super) const EVENT: &str = "BeforeTool";

/// Everything toolgate knows about Gemini CLI.
pub(super) static SPEC: Spec = Spec {
    runtime: Runtime::Gemini,
    name: "gemini",
    title: "Gemini CLI",
    tool_events: &[EVENT],
    to_call,
    reply,
    reply_error,
    classify,
    answers: &ANSWERS,
    vocabulary: VOCABULARY,
    install: &INSTALL,
};

/// Gemini CLI's built-in tools.
pub(super) const VOCABULARY: &[(&str, ToolKind)] = &[
    ("run_shell_command", ToolKind::Exec),
    ("read_file", ToolKind::Read),
    ("read_many_files", ToolKind::Read),
    ("list_directory", ToolKind::Read),
    ("glob", ToolKind::Read),
    ("search_file_content", ToolKind::Read),
    ("write_file", ToolKind::Write),
    ("replace", ToolKind::Write),
    ("web_fetch", ToolKind::Fetch),
    ("google_web_search", ToolKind::Search),
    ("save_memory", ToolKind::Memory),
    ("write_todos", ToolKind::Memory),
    ("grep_search", ToolKind::Read),
    ("invoke_agent", ToolKind::Sessions),
    ("list_background_processes", ToolKind::Process),
    ("read_background_output", ToolKind::Process),
    ("enter_plan_mode", ToolKind::Memory),
    ("update_topic", ToolKind::Memory),
];

/// Where `toolgate install gemini` registers the hook.
pub(super) static INSTALL: Target = Target {
    dir: ".gemini",
    dir_env: None,
    file: "settings.json",
    events: &[EVENT],
    shape: Shape::Grouped { matcher: ".*" },
    typed: true,
    timeout_unit: TimeoutUnit::Millis,
    fail_closed: None,
    required_top: &[],
    needs_trust: false,
};

const FACTS: &[Fact] = &[
    fact(
        A::Allow,
        O::Runs,
        "Gemini's own approval policy still applies",
    ),
    fact(
        A::AllowWithInput,
        O::Runs,
        "tool_input is merged over the arguments",
    ),
    fact(
        A::Deny,
        O::Stops,
        "observed in --yolo; `deny` and `block` alike",
    ),
    fact(A::Ask, O::PersonDecides, "forces Gemini's own confirmation"),
    fact(A::Defer, O::Runs, "not a Gemini answer: ignored"),
    fact(A::NoDecision, O::Runs, ""),
    fact(A::Malformed, O::Runs, "non-JSON stdout is ignored"),
    fact(A::Exit2, O::Stops, "stderr is the reason"),
    fact(
        A::Exit2Silent,
        O::Runs,
        "no reason: treated as a failed hook",
    ),
    fact(A::ExitOther, O::Runs, "no fail-closed switch"),
    fact(A::Timeout, O::Runs, "no fail-closed switch"),
    fact(A::Crash, O::Runs, "no fail-closed switch"),
];

/// The answer table (0.61.0, observed offline). Gemini's payload names no
/// mode; the command-line modes are listed, most permissive first.
pub(super) static ANSWERS: AnswerTable = AnswerTable {
    observed: "Gemini CLI 0.61.0 (`gemini -p --yolo`, offline)",
    modes: &[
        Mode {
            name: "yolo",
            person_at_prompt: false,
            facts: FACTS,
        },
        Mode {
            name: "auto_edit",
            person_at_prompt: false,
            facts: FACTS,
        },
        Mode {
            name: "default",
            person_at_prompt: true,
            facts: FACTS,
        },
    ],
};

/// The call a `BeforeTool` payload asks about: `tool_name` → `tool`,
/// `tool_input` → `params`, `session_id` → `session`, `cwd` → `cwd`,
/// `tool_use_id` (if Gemini ever sends one) → `call_id`, agent `gemini`.
/// An MCP call (`mcp_context` present, or a `mcp_` name) is named
/// `mcp__<server>__<tool>`. `Ok(None)` for another `hook_event_name`;
/// errors name the field.
pub(super) fn to_call(payload: &Value) -> Result<Option<HookCall>, HookInputError> {
    let Some(mut hc) = input::claude_shaped(Runtime::Gemini, payload, EVENT)? else {
        return Ok(None);
    };
    if let Some(name) = mcp_name(&Payload::new(Runtime::Gemini, payload)?, &hc.call.tool)? {
        hc.call.tool = name;
    }
    Ok(Some(hc))
}

/// The `mcp__<server>__<tool>` name of an MCP call: from `mcp_context`
/// (`server_name`, `tool_name`) when Gemini sends it; else, for a tool
/// named `mcp_…`, the server is not known for sure (server names may hold
/// `_`), so the whole rest is kept as the tool under server `gemini`,
/// where it is still judged by its verb.
fn mcp_name(p: &Payload<'_>, tool: &str) -> Result<Option<String>, HookInputError> {
    const FIELD: &str = "mcp_context";
    match p.get(FIELD) {
        None | Some(Value::Null) => {}
        Some(Value::Object(ctx)) => {
            let text = |k: &str| ctx.get(k).and_then(Value::as_str).map(str::trim);
            let server = text("server_name").filter(|s| !s.is_empty());
            let name = text("tool_name").filter(|s| !s.is_empty());
            return match (server, name) {
                (Some(s), Some(t)) => Ok(Some(format!("mcp__{s}__{t}"))),
                _ => Err(p.wrong(
                    FIELD,
                    "an object with server_name and tool_name",
                    "an object without them",
                )),
            };
        }
        Some(other) => return Err(p.wrong(FIELD, "an object", type_name(other))),
    }
    Ok(tool
        .strip_prefix("mcp_")
        .filter(|rest| !rest.starts_with('_') && !rest.is_empty())
        .map(|rest| format!("mcp__gemini__{rest}")))
}

/// The answer for `decision`: `{"decision":"allow"|"deny","reason":…,
/// "hookSpecificOutput"?:{…}}`. A block or escalation is always `deny`, with
/// exit 2 and the reason on stderr; an escalation's reason names the
/// approval id, how to approve it, and that the same call, retried once
/// approved, runs once.
pub(super) fn reply(decision: &Decision, _ctx: &ReplyContext<'_>) -> HookAnswer {
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
    if verdict == "deny" {
        HookAnswer {
            stdout: v,
            exit: 2,
            stderr: Some(reason),
        }
    } else {
        HookAnswer::json(v)
    }
}

/// The fail-closed answer when toolgate could not decide: `deny`, exit 2,
/// with `message` and what to do about it.
pub(super) fn reply_error(message: &str) -> HookAnswer {
    let reason = text::failed(message);
    HookAnswer {
        stdout: json!({ "decision": "deny", "reason": reason }),
        exit: 2,
        stderr: Some(reason),
    }
}

/// How Gemini reads an exit-0 answer: `decision` `allow`, `deny`/`block`,
/// `ask`; anything else is no decision; non-objects are ignored.
pub(super) fn classify(v: &Value) -> A {
    let Some(top) = v.as_object() else {
        return A::Malformed;
    };
    match top.get("decision").and_then(Value::as_str) {
        Some("allow")
            if top
                .get("hookSpecificOutput")
                .and_then(|h| h.get("tool_input"))
                .is_some() =>
        {
            A::AllowWithInput
        }
        Some("allow") | Some("approve") => A::Allow,
        Some("deny") | Some("block") => A::Deny,
        Some("ask") => A::Ask,
        _ => A::NoDecision,
    }
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
        let call = to_call(&payload()).unwrap().unwrap().call;
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
        let v = reply(&allow(), &ReplyContext::default()).stdout;
        assert_eq!(v["decision"], "allow");
        assert!(v.get("hookSpecificOutput").is_none());
        let v = reply(&block(), &ReplyContext::default()).stdout;
        assert_eq!(v["decision"], "deny");
        assert!(v["reason"].as_str().unwrap().contains("TOOLGATE_BLOCK|"));
        let v = reply(&escalate(), &ReplyContext::default()).stdout;
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
        let v = reply(&d, &ReplyContext::default()).stdout;
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
        assert_eq!(
            reply(&d, &ReplyContext::default()).stdout["hookSpecificOutput"]["tool_input"],
            json!(params)
        );
        let mut d = escalate();
        d.params = Some(params);
        assert!(
            reply(&d, &ReplyContext::default())
                .stdout
                .get("hookSpecificOutput")
                .is_none()
        );
    }

    #[test]
    fn reply_error_denies() {
        let v = reply_error("daemon unreachable").stdout;
        assert_eq!(v["decision"], "deny");
        assert!(v["reason"].as_str().unwrap().contains("daemon unreachable"));
    }

    #[test]
    fn mcp_calls_are_named_from_mcp_context() {
        let mut p = payload();
        p["tool_name"] = json!("mcp_fsx_write_file");
        p["tool_input"] = json!({"path": "~/.bashrc", "content": "x"});
        p["mcp_context"] = json!({"server_name": "fsx", "tool_name": "write_file",
            "command": "npx", "args": ["-y", "server"]});
        assert_eq!(
            to_call(&p).unwrap().unwrap().call.tool,
            "mcp__fsx__write_file"
        );
        // A server name with underscores is taken from the context, whole.
        p["tool_name"] = json!("mcp_my_fs_write_file");
        p["mcp_context"] = json!({"server_name": "my_fs", "tool_name": "write_file"});
        assert_eq!(
            to_call(&p).unwrap().unwrap().call.tool,
            "mcp__my_fs__write_file"
        );
        // Without a context the server cannot be told from the tool: still
        // an MCP call, judged by the verb in its name.
        p.as_object_mut().unwrap().remove("mcp_context");
        let tool = to_call(&p).unwrap().unwrap().call.tool;
        assert_eq!(tool, "mcp__gemini__my_fs_write_file");
        assert_eq!(crate::normalize::kind_of(&tool), ToolKind::Write);
        // A context that names nothing is an error (answered with a denial).
        p["mcp_context"] = json!({"server_name": ""});
        assert!(to_call(&p).is_err());
        p["mcp_context"] = json!("fsx");
        assert!(to_call(&p).is_err());
    }

    #[test]
    fn stops_exit_2_with_the_reason_on_stderr() {
        let a = reply(&block(), &ReplyContext::default());
        assert_eq!(a.exit, 2);
        assert!(a.stderr.unwrap().contains("TOOLGATE_BLOCK|"));
        assert_eq!(reply(&allow(), &ReplyContext::default()).exit, 0);
        assert_eq!(reply_error("x").exit, 2);
    }
}
