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
/// The JSON-RPC method that reads a server resource (a file, a URL …).
pub const RESOURCES_READ: &str = "resources/read";
/// The JSON-RPC method that renders a server prompt.
pub const PROMPTS_GET: &str = "prompts/get";

/// Folds a key the way lenient JSON decoders match struct fields (Go's
/// `encoding/json` ignores case and folds `ſ` to `s` and the Kelvin sign to
/// `k`): two keys with the same fold may reach a server as one field.
fn fold(key: &str) -> String {
    key.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            '\u{17f}' => 's',
            '\u{212a}' => 'k',
            c => c,
        })
        .collect()
}

/// The envelope fields, and the `tools/call` params fields, whose near
/// spellings (`METHOD`, `paramſ`, `Name`) a lenient server could take for
/// them.
const ENVELOPE: &[&str] = &["jsonrpc", "id", "method", "params", "result", "error"];
const CALL_FIELDS: &[&str] = &["name", "arguments", "_meta"];

/// Refuses a message a server could read differently from toolgate: two
/// keys of one object that fold to the same field (at any depth), or an
/// envelope or `tools/call` field spelled other than exactly. `Err` says
/// which; the proxy answers it and forwards nothing.
pub fn check_keys(msg: &Value) -> Result<(), String> {
    // Depth is bounded by the parser (MAX_JSON_DEPTH).
    fn walk(v: &Value) -> Result<(), String> {
        match v {
            Value::Object(m) => {
                let mut seen: std::collections::HashMap<String, &str> = Default::default();
                for (k, child) in m {
                    if let Some(other) = seen.insert(fold(k), k) {
                        return Err(format!(
                            "keys {other:?} and {k:?} differ only in case, which servers may read as one field"
                        ));
                    }
                    walk(child)?;
                }
                Ok(())
            }
            Value::Array(items) => items.iter().try_for_each(walk),
            _ => Ok(()),
        }
    }
    fn exact(m: &serde_json::Map<String, Value>, fields: &[&str]) -> Result<(), String> {
        for k in m.keys() {
            let f = fold(k);
            if let Some(field) = fields.iter().find(|x| **x == f)
                && k != field
            {
                return Err(format!("field {k:?} must be spelled {field:?}"));
            }
        }
        Ok(())
    }
    walk(msg)?;
    if let Value::Object(m) = msg {
        exact(m, ENVELOPE)?;
        if m.get("method").and_then(Value::as_str) == Some(TOOLS_CALL)
            && let Some(Value::Object(p)) = m.get("params")
        {
            exact(p, CALL_FIELDS)?;
        }
    }
    Ok(())
}

/// The call a request is judged as, for the methods that make a server act:
/// `tools/call` (see [`to_call`]), `resources/read` as
/// `mcp__<server>__read_resource {uri, path?}` (a `file://` URI's path is
/// checked like any read) and `prompts/get` as
/// `mcp__<server>__get_prompt {name, arguments}`. `None` for other methods.
pub fn call_for(
    session: &McpSession,
    method: &str,
    params: &Value,
    id: Option<&Value>,
) -> Option<Result<ToolCall, String>> {
    let (tool, args) = match method {
        TOOLS_CALL => return Some(to_call(session, params, id)),
        RESOURCES_READ => {
            let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                return Some(Err("resources/read needs a string \"uri\"".to_string()));
            };
            let mut args = Map::new();
            args.insert("uri".into(), Value::from(uri));
            if let Some(path) = file_uri_path(uri) {
                args.insert("path".into(), Value::from(path));
            }
            ("read_resource", args)
        }
        PROMPTS_GET => {
            let mut args = Map::new();
            for k in ["name", "arguments"] {
                if let Some(v) = params.get(k) {
                    args.insert(k.into(), v.clone());
                }
            }
            ("get_prompt", args)
        }
        _ => return None,
    };
    let mut wrapped = Map::new();
    wrapped.insert("name".into(), Value::from(tool));
    wrapped.insert("arguments".into(), Value::Object(args));
    Some(to_call(session, &Value::Object(wrapped), id))
}

/// The path of a `file:` URI, percent-decoded; `None` for other schemes.
fn file_uri_path(uri: &str) -> Option<String> {
    let rest = uri
        .get(..5)
        .filter(|s| s.eq_ignore_ascii_case("file:"))
        .map(|_| &uri[5..])?;
    let rest = rest.strip_prefix("//").map_or(rest, |r| {
        // `file://host/path`: the host is dropped (only local files exist here).
        r.find('/').map_or("", |i| &r[i..])
    });
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = rest
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    let path = String::from_utf8_lossy(&out).into_owned();
    let path = path.split(['?', '#']).next().unwrap_or("").to_string();
    (!path.is_empty()).then_some(path)
}

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
        // The proxy's caller adds the agent's home and user.
        home: None,
        user: None,
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
        // Only an explicit `approve: true` approves: a form sent back
        // without the box ticked is no approval.
        Some("accept") => match result.pointer("/content/approve") {
            Some(Value::Bool(true)) => ElicitAnswer::Approve,
            Some(Value::Bool(false)) => ElicitAnswer::Refuse,
            _ => ElicitAnswer::Unknown,
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

    #[test]
    fn near_spellings_and_case_twins_are_refused() {
        let call = |params: Value| json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
        assert!(check_keys(&call(json!({"name": "w", "arguments": {"path": "a"}}))).is_ok());
        for bad in [
            json!({"jsonrpc": "2.0", "id": 1, "METHOD": "tools/call", "params": {}}),
            call(json!({"name": "read", "Name": "write"})),
            json!({"id": 1, "method": "tools/call", "params": {"name": "read"}, "paramſ": {"name": "write"}}),
            call(json!({"name": "w", "argumentſ": {}})),
            call(
                json!({"name": "mv", "arguments": {"source": "a", "ſource": "/root/.ssh/id_rsa"}}),
            ),
            call(json!({"name": "w", "arguments": {"nested": [{"Key": 1, "\u{212a}ey": 2}]}})),
        ] {
            assert!(check_keys(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resource_reads_and_prompts_are_judged_as_calls() {
        let c = call_for(
            &session(),
            RESOURCES_READ,
            &json!({"uri": "file:///root/.ssh/id%5Frsa"}),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.tool, "mcp__fs__read_resource");
        assert_eq!(c.params["path"], "/root/.ssh/id_rsa");
        let c = call_for(
            &session(),
            RESOURCES_READ,
            &json!({"uri": "https://x.example/a"}),
            None,
        )
        .unwrap()
        .unwrap();
        assert!(c.params.get("path").is_none());
        assert!(
            call_for(&session(), RESOURCES_READ, &json!({}), None)
                .unwrap()
                .is_err()
        );
        let c = call_for(
            &session(),
            PROMPTS_GET,
            &json!({"name": "p", "arguments": {"a": "b"}}),
            None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.tool, "mcp__fs__get_prompt");
        assert!(call_for(&session(), "ping", &json!({}), None).is_none());
        let c = call_for(&session(), TOOLS_CALL, &json!({"name": "w"}), None)
            .unwrap()
            .unwrap();
        assert_eq!(c.tool, "mcp__fs__w");
        assert_eq!(
            file_uri_path("file://host/etc/x?q#f").as_deref(),
            Some("/etc/x")
        );
    }
}
