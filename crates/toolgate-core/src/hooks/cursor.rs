//! Cursor's agent hooks (docs/integrations.md): `preToolUse` (every tool: the
//! shell, file writes and edits, reads, MCP), and the older
//! `beforeShellExecution`, `beforeMCPExecution` and `beforeReadFile`.
//! Every payload carries `hook_event_name`, `conversation_id` and
//! `workspace_roots`.
//!
//! Answers: allow → `allow`; block → `deny`; escalate → `deny` too, with
//! the approval id and how to approve it in both messages. Not `ask`:
//! `beforeReadFile` and `preToolUse` answer only allow/deny, and Cursor's
//! own prompt would let one click run a call toolgate's quorum has not
//! approved. Cursor cannot rewrite a call, so an allow that depends on
//! rewritten params is answered `deny`, naming the params toolgate would
//! run. A hook that fails, crashes or times out lets the call run unless
//! its entry sets `"failClosed": true`, which `toolgate install cursor`
//! writes on every entry.

use super::answers::{AnswerKind as A, AnswerTable, Fact, HookAnswer, Mode, Outcome as O, fact};
use super::input::{Payload, type_name};
use super::install::{FailClosedValue, Shape, Target, TimeoutUnit};
use super::{HookCall, HookInputError, ReplyContext, Runtime, Spec, text};
use crate::model::{Decision, Verdict};
use crate::tool_kind::ToolKind;
use serde_json::{Map, Value, json};

/// Every tool call (newer Cursor versions): judged as `tool_name` with
/// `tool_input`.
pub const TOOL_EVENT: &str = "preToolUse";
/// The shell event: judged as tool `exec` with params `{command}`.
pub const SHELL_EVENT: &str = "beforeShellExecution";
/// The MCP event: judged as `mcp__cursor__<tool_name>` with the tool's input.
pub const MCP_EVENT: &str = "beforeMCPExecution";
/// The file-read event: judged as tool `read` with params `{file_path}`.
pub const READ_EVENT: &str = "beforeReadFile";

/// Everything toolgate knows about Cursor.
pub static SPEC: Spec = Spec {
    runtime: Runtime::Cursor,
    name: "cursor",
    title: "Cursor",
    tool_events: &[TOOL_EVENT, SHELL_EVENT, MCP_EVENT, READ_EVENT],
    to_call,
    reply,
    reply_error,
    classify,
    answers: &ANSWERS,
    vocabulary: VOCABULARY,
    install: &INSTALL,
};

/// Cursor's agent tools as `preToolUse` names them.
pub const VOCABULARY: &[(&str, ToolKind)] = &[
    ("Shell", ToolKind::Exec),
    ("run_terminal_cmd", ToolKind::Exec),
    ("Read", ToolKind::Read),
    ("Grep", ToolKind::Read),
    ("Glob", ToolKind::Read),
    ("LS", ToolKind::Read),
    ("codebase_search", ToolKind::Read),
    ("Write", ToolKind::Write),
    ("Edit", ToolKind::Write),
    ("StrReplace", ToolKind::Write),
    ("TabWrite", ToolKind::Write),
    ("Delete", ToolKind::Write),
    ("edit_file", ToolKind::Write),
    ("delete_file", ToolKind::Write),
];

/// Where `toolgate install cursor` registers the hooks: every entry
/// fail-closed, with a timeout.
pub static INSTALL: Target = Target {
    dir: ".cursor",
    dir_env: None,
    file: "hooks.json",
    events: &[TOOL_EVENT, SHELL_EVENT, MCP_EVENT, READ_EVENT],
    shape: Shape::Flat,
    typed: false,
    timeout_unit: TimeoutUnit::Seconds,
    fail_closed: Some(("failClosed", FailClosedValue::Bool(true))),
    required_top: &[("version", 1)],
    needs_trust: false,
};

const FACTS: &[Fact] = &[
    fact(A::Allow, O::Runs, ""),
    fact(
        A::AllowWithInput,
        O::Runs,
        "Cursor cannot rewrite: the input is ignored",
    ),
    fact(A::Deny, O::Stops, ""),
    fact(A::Ask, O::PersonDecides, "shell and MCP events only"),
    fact(A::Defer, O::Runs, "not a Cursor answer"),
    fact(
        A::NoDecision,
        O::Stops,
        "with failClosed: true; runs without it",
    ),
    fact(
        A::Malformed,
        O::Stops,
        "with failClosed: true; runs without it",
    ),
    fact(A::Exit2, O::Stops, ""),
    fact(A::Exit2Silent, O::Stops, ""),
    fact(
        A::ExitOther,
        O::Stops,
        "with failClosed: true; runs without it",
    ),
    fact(
        A::Timeout,
        O::Stops,
        "with failClosed: true; runs without it",
    ),
    fact(A::Crash, O::Stops, "with failClosed: true; runs without it"),
];

/// The answer table. Cursor's agent cannot be driven here (no CLI on the
/// registries we reach): these facts are its documentation's, not observed.
pub static ANSWERS: AnswerTable = AnswerTable {
    observed: "Cursor's hooks documentation (not observed: no Cursor agent can run here)",
    modes: &[Mode {
        name: "agent",
        person_at_prompt: true,
        facts: FACTS,
    }],
};

/// The call a Cursor payload asks about, or `Ok(None)` for any other event:
///
/// - `preToolUse` → tool `tool_name`, params from `tool_input` (an object or
///   JSON text holding one).
/// - `beforeShellExecution` → tool `exec`, params `{command}`.
/// - `beforeMCPExecution` → tool `mcp__cursor__<tool_name>` (Cursor names no
///   server; a `tool_name` already in `mcp__server__tool` form is kept), params
///   from `tool_input`, which may be an object or JSON text holding one.
/// - `beforeReadFile` → tool `read`, params `{file_path}` (the file's
///   `content` is not copied).
///
/// `cwd` comes from `cwd`, else the first of `workspace_roots`;
/// `conversation_id` → `session`; `tool_use_id` → `call_id`; agent `cursor`.
/// A missing `hook_event_name` is an error: the event cannot be told apart.
pub fn to_call(payload: &Value) -> Result<Option<HookCall>, HookInputError> {
    let p = Payload::new(Runtime::Cursor, payload)?;
    let (tool, params) = match p.req_str("hook_event_name")? {
        TOOL_EVENT => (p.req_str("tool_name")?.to_string(), tool_input(&p)?),
        SHELL_EVENT => ("exec".to_string(), one("command", p.req_str("command")?)),
        MCP_EVENT => (mcp_name(p.req_str("tool_name")?), tool_input(&p)?),
        READ_EVENT => (
            "read".to_string(),
            one("file_path", p.req_str("file_path")?),
        ),
        _ => return Ok(None),
    };
    let mut call = p.call(tool, params);
    call.cwd = match p.opt_str("cwd")? {
        Some(cwd) => Some(cwd.to_string()),
        None => first_root(&p)?,
    };
    call.session = p.opt_str("conversation_id")?.map(str::to_string);
    call.call_id = p.opt_str("tool_use_id")?.map(str::to_string);
    Ok(Some(HookCall { call, mode: None }))
}

fn one(key: &str, value: &str) -> Map<String, Value> {
    Map::from_iter([(key.to_string(), Value::String(value.to_string()))])
}

fn mcp_name(tool: &str) -> String {
    if crate::tool_kind::split_mcp(tool).is_some() {
        tool.to_string()
    } else {
        format!("mcp__cursor__{tool}")
    }
}

fn tool_input(p: &Payload<'_>) -> Result<Map<String, Value>, HookInputError> {
    const FIELD: &str = "tool_input";
    let bad = |why: String| HookInputError::BadEmbeddedJson {
        runtime: p.runtime(),
        field: FIELD,
        why,
    };
    match p.get(FIELD) {
        None => Err(HookInputError::MissingField {
            runtime: p.runtime(),
            field: FIELD,
        }),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(Value::String(s)) => match crate::input::parse_embedded_json(s) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(other) => Err(bad(format!("it holds {}", type_name(&other)))),
            Err(e) => Err(bad(e.to_string())),
        },
        Some(other) => Err(p.wrong(
            FIELD,
            "an object or JSON text holding one",
            type_name(other),
        )),
    }
}

fn first_root(p: &Payload<'_>) -> Result<Option<String>, HookInputError> {
    const FIELD: &str = "workspace_roots";
    match p.get(FIELD) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(roots)) => match roots.first() {
            None => Ok(None),
            Some(Value::String(s)) => Ok((!s.is_empty()).then(|| s.clone())),
            Some(other) => Err(p.wrong(FIELD, "an array of strings", type_name(other))),
        },
        Some(other) => Err(p.wrong(FIELD, "an array of strings", type_name(other))),
    }
}

/// How Cursor reads an exit-0 answer: `permission` `allow`, `deny`, `ask`;
/// anything else is no decision (refused under `failClosed`).
pub fn classify(v: &Value) -> A {
    let Some(top) = v.as_object() else {
        return A::Malformed;
    };
    match top.get("permission").and_then(Value::as_str) {
        Some("allow") => A::Allow,
        Some("deny") => A::Deny,
        Some("ask") => A::Ask,
        Some(_) => A::Malformed,
        None => A::NoDecision,
    }
}

/// The stdout JSON for `decision`:
/// `{"permission":"allow"|"deny","user_message"?:…,"agent_message"?:…}`.
/// A block or escalation is always `deny` (see the module docs), as is an
/// allow that needs a rewrite Cursor cannot apply. Knowledge text is
/// appended to `agent_message`.
pub fn reply(decision: &Decision, _ctx: &ReplyContext<'_>) -> HookAnswer {
    let user = match (decision.decision, text::rewrite(decision)) {
        (Verdict::Allow, None) => {
            let mut v = json!({ "permission": "allow" });
            if let Some(c) = text::context(decision) {
                v["agent_message"] = c.into();
            }
            return HookAnswer::json(v);
        }
        (Verdict::Allow, Some(params)) => format!(
            "{}\nCursor cannot change a call's parameters, and toolgate allows this call only \
             as {}; run that instead.",
            text::allowed(decision),
            Value::Object(params.clone())
        ),
        _ => text::stopped(decision, false),
    };
    HookAnswer::json(json!({
        "permission": "deny",
        "agent_message": text::with_context(user.clone(), decision),
        "user_message": user,
    }))
}

/// The fail-closed answer when toolgate could not decide: `deny` with
/// `message` for the user and the agent. Never `allow` or `ask`.
pub fn reply_error(message: &str) -> HookAnswer {
    let text = text::failed(message);
    HookAnswer::json(json!({ "permission": "deny", "user_message": text, "agent_message": text }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::tests::{allow, block, escalate};

    fn base(event: &str) -> Value {
        json!({"hook_event_name": event, "conversation_id": "c-1", "generation_id": "g-1",
            "workspace_roots": ["/ws", "/other"], "cursor_version": "2.0.77"})
    }

    #[test]
    fn shell_becomes_exec_with_cwd() {
        let mut p = base(SHELL_EVENT);
        p["command"] = json!("rm -rf build");
        p["cwd"] = json!("/ws/sub");
        let call = to_call(&p).unwrap().unwrap().call;
        assert_eq!(call.tool, "exec");
        assert_eq!(
            Value::Object(call.params),
            json!({"command": "rm -rf build"})
        );
        assert_eq!(call.cwd.as_deref(), Some("/ws/sub"));
        assert_eq!(call.session.as_deref(), Some("c-1"));
        assert_eq!(call.agent.as_deref(), Some("cursor"));
        assert_eq!(call.call_id, None);
    }

    #[test]
    fn cwd_falls_back_to_the_first_workspace_root() {
        for cwd in [json!(null), json!("")] {
            let mut p = base(SHELL_EVENT);
            p["command"] = json!("ls");
            p["cwd"] = cwd;
            assert_eq!(
                to_call(&p).unwrap().unwrap().call.cwd.as_deref(),
                Some("/ws")
            );
        }
        let p = json!({"hook_event_name": SHELL_EVENT, "command": "ls"});
        assert_eq!(to_call(&p).unwrap().unwrap().call.cwd, None);
    }

    #[test]
    fn mcp_input_may_be_an_object_or_json_text() {
        for input in [
            json!({"query": "SELECT 1"}),
            json!("{\"query\": \"SELECT 1\"}"),
        ] {
            let mut p = base(MCP_EVENT);
            p["tool_name"] = json!("database_query");
            p["tool_input"] = input;
            p["url"] = json!("http://localhost:3000");
            let call = to_call(&p).unwrap().unwrap().call;
            assert_eq!(call.tool, "mcp__cursor__database_query");
            assert_eq!(call.params["query"], "SELECT 1");
            assert_eq!(call.cwd.as_deref(), Some("/ws"));
        }
        let mut p = base(MCP_EVENT);
        p["tool_name"] = json!("mcp__db__query");
        p["tool_input"] = json!({});
        assert_eq!(to_call(&p).unwrap().unwrap().call.tool, "mcp__db__query");
    }

    #[test]
    fn read_file_becomes_read_without_the_content() {
        let mut p = base(READ_EVENT);
        p["file_path"] = json!("/ws/.env");
        p["content"] = json!("API_KEY=secret");
        let call = to_call(&p).unwrap().unwrap().call;
        assert_eq!(call.tool, "read");
        assert_eq!(Value::Object(call.params), json!({"file_path": "/ws/.env"}));
    }

    #[test]
    fn other_events_have_no_opinion() {
        for event in [
            "afterFileEdit",
            "beforeSubmitPrompt",
            "stop",
            "afterShellExecution",
        ] {
            assert_eq!(to_call(&base(event)), Ok(None), "{event}");
        }
    }

    #[test]
    fn malformed_payloads_are_errors() {
        let mut mcp_text = base(MCP_EVENT);
        mcp_text["tool_name"] = json!("q");
        mcp_text["tool_input"] = json!("not json");
        let mut mcp_array = mcp_text.clone();
        mcp_array["tool_input"] = json!("[1]");
        let mut mcp_number = mcp_text.clone();
        mcp_number["tool_input"] = json!(1);
        let mut roots = base(SHELL_EVENT);
        roots["command"] = json!("ls");
        roots["workspace_roots"] = json!("/ws");
        let cases = [
            (json!([]), "must be a JSON object, got an array"),
            (json!({"command": "ls"}), "no `hook_event_name`"),
            (base(SHELL_EVENT), "no `command`"),
            (base(READ_EVENT), "no `file_path`"),
            (base(MCP_EVENT), "no `tool_name`"),
            (
                mcp_text,
                "`tool_input` holds text that is not a JSON object",
            ),
            (mcp_array, "it holds an array"),
            (
                mcp_number,
                "must be an object or JSON text holding one, got a number",
            ),
            (
                roots,
                "`workspace_roots` must be an array of strings, got a string",
            ),
        ];
        for (p, want) in cases {
            let err = to_call(&p).unwrap_err().to_string();
            assert!(err.contains(want), "{p}: {err}");
            assert!(err.starts_with("cursor hook input"), "{err}");
        }
    }

    #[test]
    fn allow_is_allow() {
        assert_eq!(
            reply(&allow(), &ReplyContext::default()).stdout,
            json!({"permission": "allow"})
        );
        let mut d = allow();
        d.context = Some("SOP-2".into());
        assert_eq!(
            reply(&d, &ReplyContext::default()).stdout,
            json!({"permission": "allow", "agent_message": "SOP-2"})
        );
    }

    #[test]
    fn allow_needing_a_rewrite_is_denied_naming_the_params() {
        let mut d = allow();
        d.params = Some(json!({"command": "ls -la"}).as_object().unwrap().clone());
        let v = reply(&d, &ReplyContext::default()).stdout;
        assert_eq!(v["permission"], "deny");
        assert!(
            v["agent_message"]
                .as_str()
                .unwrap()
                .contains(r#"{"command":"ls -la"}"#)
        );
    }

    #[test]
    fn block_and_escalate_deny_with_messages() {
        let v = reply(&block(), &ReplyContext::default()).stdout;
        assert_eq!(v["permission"], "deny");
        assert!(
            v["user_message"]
                .as_str()
                .unwrap()
                .contains("TOOLGATE_BLOCK|")
        );
        let mut d = escalate();
        d.context = Some("SOP-5".into());
        let v = reply(&d, &ReplyContext::default()).stdout;
        assert_eq!(v["permission"], "deny");
        for field in ["user_message", "agent_message"] {
            let m = v[field].as_str().unwrap();
            assert!(
                m.contains("toolgate approvals approve ap_0123456789abcdef"),
                "{m}"
            );
        }
        assert!(v["agent_message"].as_str().unwrap().ends_with("\n\nSOP-5"));
        assert!(!v["user_message"].as_str().unwrap().contains("SOP-5"));
    }

    #[test]
    fn reply_error_denies() {
        let v = reply_error("daemon unreachable").stdout;
        assert_eq!(v["permission"], "deny");
        assert!(
            v["agent_message"]
                .as_str()
                .unwrap()
                .contains("daemon unreachable")
        );
    }
}
