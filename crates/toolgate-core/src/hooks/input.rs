//! Reading hook payloads: typed field access whose errors name the field.

use super::{HookCall, HookInputError, Runtime};
use crate::model::ToolCall;
use serde_json::{Map, Value};

/// The JSON type of `v`, as an error message says it.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One runtime's payload, known to be a JSON object.
pub(crate) struct Payload<'a> {
    runtime: Runtime,
    map: &'a Map<String, Value>,
}

impl<'a> Payload<'a> {
    /// Fails unless `v` is a JSON object.
    pub(crate) fn new(runtime: Runtime, v: &'a Value) -> Result<Self, HookInputError> {
        match v {
            Value::Object(map) => Ok(Payload { runtime, map }),
            other => Err(HookInputError::NotAnObject {
                runtime,
                found: type_name(other),
            }),
        }
    }

    /// The runtime the payload came from.
    pub(crate) fn runtime(&self) -> Runtime {
        self.runtime
    }

    /// The raw field, if present.
    pub(crate) fn get(&self, field: &str) -> Option<&'a Value> {
        self.map.get(field)
    }

    /// The error for `field` holding `found` where `expected` belongs.
    pub(crate) fn wrong(
        &self,
        field: &'static str,
        expected: &'static str,
        found: &'static str,
    ) -> HookInputError {
        HookInputError::WrongType {
            runtime: self.runtime,
            field,
            expected,
            found,
        }
    }

    /// A text field that may be absent: absent, null and empty are `None`;
    /// any other non-string is an error.
    pub(crate) fn opt_str(&self, field: &'static str) -> Result<Option<&'a str>, HookInputError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok((!s.is_empty()).then_some(s.as_str())),
            Some(other) => Err(self.wrong(field, "a string", type_name(other))),
        }
    }

    /// A text field that must be present and non-empty.
    pub(crate) fn req_str(&self, field: &'static str) -> Result<&'a str, HookInputError> {
        match self.map.get(field) {
            None => Err(HookInputError::MissingField {
                runtime: self.runtime,
                field,
            }),
            Some(Value::String(s)) if s.is_empty() => {
                Err(self.wrong(field, "a non-empty string", "an empty string"))
            }
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(self.wrong(field, "a non-empty string", type_name(other))),
        }
    }

    /// An object field that must be present.
    pub(crate) fn req_object(
        &self,
        field: &'static str,
    ) -> Result<&'a Map<String, Value>, HookInputError> {
        match self.map.get(field) {
            None => Err(HookInputError::MissingField {
                runtime: self.runtime,
                field,
            }),
            Some(Value::Object(m)) => Ok(m),
            Some(other) => Err(self.wrong(field, "an object", type_name(other))),
        }
    }

    /// A call with this runtime as its agent and everything else unset.
    pub(crate) fn call(&self, tool: String, params: Map<String, Value>) -> ToolCall {
        ToolCall {
            tool,
            params,
            agent: Some(self.runtime.as_str().to_string()),
            ..ToolCall::default()
        }
    }
}

/// Reads the payload shape Claude Code, Codex and Gemini CLI share:
/// `{hook_event_name, tool_name, tool_input, session_id?, cwd?, tool_use_id?}`.
///
/// The call is judged when `hook_event_name` is `event` or absent (a payload
/// naming a tool but no event is judged rather than waved through); any other
/// event is `Ok(None)`. `permission_mode` is kept as the call's mode.
/// Unknown fields are ignored.
pub(crate) fn claude_shaped(
    runtime: Runtime,
    payload: &Value,
    event: &str,
) -> Result<Option<HookCall>, HookInputError> {
    let p = Payload::new(runtime, payload)?;
    if p.opt_str("hook_event_name")?.is_some_and(|e| e != event) {
        return Ok(None);
    }
    let tool = p.req_str("tool_name")?.to_string();
    let params = p.req_object("tool_input")?.clone();
    let mut call = p.call(tool, params);
    call.session = p.opt_str("session_id")?.map(str::to_string);
    call.cwd = p.opt_str("cwd")?.map(str::to_string);
    call.call_id = p.opt_str("tool_use_id")?.map(str::to_string);
    let mode = p.opt_str("permission_mode")?.map(str::to_string);
    Ok(Some(HookCall { call, mode }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const R: Runtime = Runtime::Codex;

    #[test]
    fn optional_text_treats_null_and_empty_as_absent() {
        let v = json!({"a": null, "b": "", "c": "x", "d": 3});
        let p = Payload::new(R, &v).unwrap();
        assert_eq!(p.opt_str("a"), Ok(None));
        assert_eq!(p.opt_str("b"), Ok(None));
        assert_eq!(p.opt_str("c"), Ok(Some("x")));
        assert_eq!(p.opt_str("missing"), Ok(None));
        let err = p.opt_str("d").unwrap_err().to_string();
        assert!(err.contains("`d` must be a string, got a number"), "{err}");
    }

    #[test]
    fn required_text_must_be_present_and_non_empty() {
        let v = json!({"b": "", "n": null});
        let p = Payload::new(R, &v).unwrap();
        assert!(matches!(
            p.req_str("a"),
            Err(HookInputError::MissingField { field: "a", .. })
        ));
        assert!(p.req_str("b").unwrap_err().to_string().contains("empty"));
        assert!(p.req_str("n").unwrap_err().to_string().contains("got null"));
    }

    #[test]
    fn shared_shape_ignores_unknown_fields() {
        let v = json!({"hook_event_name":"PreToolUse","tool_name":"Bash",
            "tool_input":{"command":"ls"},"extra":{"deep":[1,2]},"turn_id":"t"});
        let call = claude_shaped(R, &v, "PreToolUse").unwrap().unwrap().call;
        assert_eq!(call.tool, "Bash");
        assert_eq!(call.agent.as_deref(), Some("codex"));
        assert_eq!(call.session, None);
    }
}
