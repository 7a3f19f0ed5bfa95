//! The Model Context Protocol side of `toolgate mcp-proxy`, pure: which
//! JSON-RPC messages are tool calls, the [`ToolCall`] each one is judged as,
//! and the MCP answers for a call that must not run. The proxy does the I/O.
//!
//! A `tools/call` request `{"name": "write_file", "arguments": {…}}` sent to
//! the server the proxy calls `fs` is judged as the tool
//! `mcp__fs__write_file` with the arguments as params — the name Claude Code
//! gives the same tool, so one policy covers both.

use super::text;
use crate::model::{Decision, ToolCall};
use serde_json::{Map, Value, json};

/// The JSON-RPC method that runs a tool.
pub const TOOLS_CALL: &str = "tools/call";
/// The JSON-RPC method that asks the client's user a question.
pub const ELICITATION_CREATE: &str = "elicitation/create";

/// What the proxy knows about its session, for the calls it builds.
#[derive(Debug, Clone, Default)]
pub struct McpSession {
    /// The server's name in tool names (`mcp__<server>__<tool>`).
    pub server: String,
    /// The session id recorded with every call.
    pub session: Option<String>,
    /// The client's name from `initialize` (`clientInfo.name`), as the agent.
    pub agent: Option<String>,
    /// The directory relative paths resolve against (the proxy's cwd).
    pub cwd: Option<String>,
}

/// Makes a server name safe to put in `mcp__<server>__<tool>`: letters,
/// digits, `-` and `_` only (others become `_`), no `__` inside (it would
/// make the split ambiguous), never empty.
pub fn server_name(raw: &str) -> String {
    let mut out = String::new();
    for c in raw.trim().chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    let out = out.trim_matches('_').to_string();
    if out.is_empty() {
        "mcp".to_string()
    } else {
        out
    }
}

/// The tool call a `tools/call` request's `params` is judged as. `Err` says
/// why the params are not a tool call (the proxy answers with a JSON-RPC
/// error and never forwards it).
pub fn to_call(
    session: &McpSession,
    params: &Value,
    id: Option<&Value>,
) -> Result<ToolCall, String> {
    let Some(obj) = params.as_object() else {
        return Err("tools/call needs params {\"name\": …, \"arguments\": {…}}".to_string());
    };
    let name = match obj.get("name") {
        Some(Value::String(n)) if !n.trim().is_empty() => n,
        _ => return Err("tools/call needs a non-empty string \"name\"".to_string()),
    };
    let arguments = match obj.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err("tools/call \"arguments\" must be an object".to_string()),
    };
    Ok(ToolCall {
        tool: format!("mcp__{}__{}", session.server, name),
        params: arguments,
        call_id: id.map(|id| match id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
        agent: session.agent.clone(),
        session: session.session.clone(),
        channel: Some("mcp".to_string()),
        cwd: session.cwd.clone(),
        requester: None,
    })
}

/// The `tools/call` params to forward for an allowed call: the judged
/// ones, with the arguments a layer rewrote, if any.
pub fn forwarded_params(params: &Value, decision: &Decision) -> Value {
    let mut params = params.clone();
    if let (Some(new), Some(obj)) = (text::rewrite(decision), params.as_object_mut()) {
        obj.insert("arguments".to_string(), Value::Object(new.clone()));
    }
    params
}

/// A tool result that tells the model the call did not run, and why.
pub fn error_result(message: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": message}],
        "isError": true,
    })
}

/// The tool result for a blocked or escalated call.
pub fn stopped_result(d: &Decision) -> Value {
    error_result(&text::with_context(text::stopped(d, false), d))
}

/// The tool result when toolgate could not decide: the call did not run.
pub fn failed_result(message: &str) -> Value {
    error_result(&text::failed(message))
}

/// The `elicitation/create` params asking the client's user about an
/// escalated call. `relay` says whether the policy honours the user's
/// answer as an approval (`None`: the daemon decides, the proxy cannot
/// tell); when it does not, only an operator can approve, and declining
/// still cancels the call.
pub fn elicitation_params(call: &ToolCall, d: &Decision, relay: Option<bool>) -> Value {
    let id = text::approval_id(d).unwrap_or("(none)");
    let what = match relay {
        Some(true) => {
            "Approve to let it run once (recorded in toolgate's audit log as your approval), \
             or decline to cancel it."
        }
        Some(false) => {
            "Your answer cannot approve it (this policy does not accept relayed approvals): an \
             operator must. Decline to cancel the call; otherwise it waits for the operator."
        }
        None => {
            "Approve to record your approval (it counts if toolgate's policy accepts relayed \
             approvals; otherwise an operator must approve), or decline to cancel the call."
        }
    };
    json!({
        "message": format!(
            "toolgate is holding {} for approval.\n{}\nApproval id: {id}.\n{what}",
            call.tool,
            d.reason.trim(),
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve this call",
                    "description": format!("Run {} once", call.tool),
                }
            },
            "required": ["approve"],
        },
    })
}

/// What the client's user answered to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitAnswer {
    /// Accepted with `approve: true`.
    Approve,
    /// Accepted with `approve: false`, declined, or cancelled.
    Refuse,
    /// Not an answer the proxy understands (an error, a malformed result).
    Unknown,
}

/// Reads an elicitation's JSON-RPC response (the whole message).
pub fn elicit_answer(response: &Value) -> ElicitAnswer {
    let Some(result) = response.get("result") else {
        return ElicitAnswer::Unknown;
    };
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => match result.pointer("/content/approve") {
            Some(Value::Bool(true)) => ElicitAnswer::Approve,
            Some(Value::Bool(false)) => ElicitAnswer::Refuse,
            // A client that shows a plain "accept" button without the form.
            None => ElicitAnswer::Approve,
            Some(_) => ElicitAnswer::Unknown,
        },
        Some("decline") | Some("cancel") => ElicitAnswer::Refuse,
        _ => ElicitAnswer::Unknown,
    }
}

/// Whether the client declared the elicitation capability in its
/// `initialize` params.
pub fn client_elicits(initialize_params: &Value) -> bool {
    initialize_params
        .pointer("/capabilities/elicitation")
        .is_some_and(|v| !v.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ApprovalRef, Layer, RiskClass, Verdict};

    fn session() -> McpSession {
        McpSession {
            server: "fs".into(),
            session: Some("s1".into()),
            agent: Some("client".into()),
            cwd: Some("/ws".into()),
        }
    }

    #[test]
    fn tool_calls_are_named_like_claude_names_mcp_tools() {
        let p = json!({"name": "write_file", "arguments": {"path": "a", "content": "b"}});
        let c = to_call(&session(), &p, Some(&json!(7))).unwrap();
        assert_eq!(c.tool, "mcp__fs__write_file");
        assert_eq!(c.params["path"], "a");
        assert_eq!(c.call_id.as_deref(), Some("7"));
        assert_eq!(c.cwd.as_deref(), Some("/ws"));
        let c = to_call(&session(), &json!({"name": "list"}), None).unwrap();
        assert!(c.params.is_empty());
    }

    #[test]
    fn malformed_tool_calls_are_refused() {
        for p in [
            json!(null),
            json!([]),
            json!({"arguments": {}}),
            json!({"name": ""}),
            json!({"name": 3}),
            json!({"name": "x", "arguments": [1]}),
            json!({"name": "x", "arguments": "rm -rf /"}),
        ] {
            assert!(to_call(&session(), &p, None).is_err(), "{p}");
        }
    }

    #[test]
    fn server_names_cannot_break_the_tool_name() {
        assert_eq!(server_name("fs"), "fs");
        assert_eq!(server_name("my server/v2"), "my_server_v2");
        assert_eq!(server_name("a__b"), "a_b");
        assert_eq!(server_name("__"), "mcp");
        assert_eq!(server_name(""), "mcp");
        assert!(!server_name("x___y").contains("__"));
    }

    fn escalation() -> Decision {
        let mut d = Decision::new(
            Verdict::Escalate,
            RiskClass::R3,
            20,
            Layer::Risk,
            "writes outside the workspace",
        );
        d.approval = Some(ApprovalRef {
            id: "abc123".into(),
            expires_at: "2026-01-01T00:00:00Z".into(),
            min_approvals: 1,
            approve_url: None,
        });
        d
    }

    #[test]
    fn stopped_calls_are_tool_errors_with_the_reason_and_the_id() {
        let r = stopped_result(&escalation());
        assert_eq!(r["isError"], true);
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("writes outside the workspace"), "{text}");
        assert!(text.contains("abc123"), "{text}");
        let r = failed_result("daemon down");
        assert_eq!(r["isError"], true);
        assert!(
            r["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("daemon down")
        );
    }

    #[test]
    fn rewritten_arguments_are_forwarded() {
        let mut d = Decision::new(Verdict::Allow, RiskClass::R0, 0, Layer::Risk, "ok");
        let p = json!({"name": "x", "arguments": {"a": 1}, "_meta": {"k": 1}});
        assert_eq!(forwarded_params(&p, &d), p);
        d.params = Some(json!({"a": 2}).as_object().unwrap().clone());
        let f = forwarded_params(&p, &d);
        assert_eq!(f["arguments"]["a"], 2);
        assert_eq!(f["_meta"]["k"], 1);
    }

    #[test]
    fn elicitation_answers() {
        let accept = |c: Value| json!({"result": {"action": "accept", "content": c}});
        assert_eq!(
            elicit_answer(&accept(json!({"approve": true}))),
            ElicitAnswer::Approve
        );
        assert_eq!(
            elicit_answer(&accept(json!({"approve": false}))),
            ElicitAnswer::Refuse
        );
        assert_eq!(
            elicit_answer(&accept(json!({"approve": "yes"}))),
            ElicitAnswer::Unknown
        );
        assert_eq!(
            elicit_answer(&json!({"result": {"action": "decline"}})),
            ElicitAnswer::Refuse
        );
        assert_eq!(
            elicit_answer(&json!({"error": {"code": -1, "message": "no"}})),
            ElicitAnswer::Unknown
        );
        let p = elicitation_params(
            &to_call(&session(), &json!({"name": "w"}), None).unwrap(),
            &escalation(),
            Some(false),
        );
        assert!(p["message"].as_str().unwrap().contains("abc123"));
        assert_eq!(p["requestedSchema"]["required"][0], "approve");
        assert!(client_elicits(
            &json!({"capabilities": {"elicitation": {}}})
        ));
        assert!(!client_elicits(&json!({"capabilities": {}})));
    }
}
