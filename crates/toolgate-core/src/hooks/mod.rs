//! Translation between agent runtimes' hook protocols and toolgate's model
//! (INTEGRATIONS.md, DESIGN.md §3 `toolgate hook …`). Pure: each runtime
//! module turns the hook's stdin JSON into a [`ToolCall`] and a [`Decision`]
//! into the exact stdout JSON that runtime obeys. Reading stdin, calling the
//! engine or the daemon, and printing are the caller's job.
//!
//! Every runtime gets the same three functions:
//!
//! - `to_call(payload)`: `Ok(Some(call))` for the pre-tool event, `Ok(None)`
//!   for an event toolgate has no opinion on (answer with
//!   [`Runtime::no_opinion`]), `Err` for a payload that is not what the
//!   runtime sends (answer with `reply_error`).
//! - `reply(decision)`: never lets a blocked or escalated call run.
//! - `reply_error(message)`: the fail-closed answer when toolgate itself
//!   failed; it always stops the call.
//!
//! The caller prints the JSON and exits 0: every runtime here reads a
//! decision from stdout only on exit 0.

pub mod claude_code;
pub mod codex;
pub mod codex_trust;
pub mod cursor;
pub mod gemini;
pub mod mcp;

mod input;
mod text;

#[cfg(test)]
mod tests;

use crate::model::{Decision, ToolCall};
use serde_json::{Value, json};
use std::fmt;

/// The agent runtimes whose hook protocols toolgate speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Runtime {
    /// Anthropic's Claude Code (`PreToolUse` command or http hook).
    ClaudeCode,
    /// OpenAI's Codex CLI (`PreToolUse`, Claude's wire format with fewer answers).
    Codex,
    /// Google's Gemini CLI (`BeforeTool`).
    Gemini,
    /// Cursor (`beforeShellExecution`, `beforeMCPExecution`, `beforeReadFile`).
    Cursor,
}

impl Runtime {
    /// Every runtime, in the order the CLI lists them.
    pub const ALL: [Runtime; 4] = [
        Runtime::ClaudeCode,
        Runtime::Codex,
        Runtime::Gemini,
        Runtime::Cursor,
    ];

    /// Parses the CLI name (`claude-code`, `codex`, `gemini`, `cursor`),
    /// ignoring case and surrounding blanks; `None` for anything else.
    pub fn parse(name: &str) -> Option<Runtime> {
        let name = name.trim();
        Runtime::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(name))
    }

    /// The CLI name, also used as the call's `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::ClaudeCode => "claude-code",
            Runtime::Codex => "codex",
            Runtime::Gemini => "gemini",
            Runtime::Cursor => "cursor",
        }
    }

    /// The hook event(s) toolgate must be registered for, as the runtime
    /// names them (used in error messages).
    pub fn tool_events(self) -> &'static str {
        match self {
            Runtime::ClaudeCode | Runtime::Codex => "PreToolUse",
            Runtime::Gemini => "BeforeTool",
            Runtime::Cursor => "beforeShellExecution, beforeMCPExecution or beforeReadFile",
        }
    }

    /// This runtime's `to_call`: the call a hook payload asks about, `None`
    /// for an event toolgate does not judge, an error for a malformed payload.
    pub fn to_call(self, payload: &Value) -> Result<Option<ToolCall>, HookInputError> {
        match self {
            Runtime::ClaudeCode => claude_code::to_call(payload),
            Runtime::Codex => codex::to_call(payload),
            Runtime::Gemini => gemini::to_call(payload),
            Runtime::Cursor => cursor::to_call(payload),
        }
    }

    /// This runtime's `reply`: the stdout JSON carrying `decision`.
    pub fn reply(self, decision: &Decision) -> Value {
        match self {
            Runtime::ClaudeCode => claude_code::reply(decision),
            Runtime::Codex => codex::reply(decision),
            Runtime::Gemini => gemini::reply(decision),
            Runtime::Cursor => cursor::reply(decision),
        }
    }

    /// This runtime's `reply_error`: stops the call, saying `message`.
    pub fn reply_error(self, message: &str) -> Value {
        match self {
            Runtime::ClaudeCode => claude_code::reply_error(message),
            Runtime::Codex => codex::reply_error(message),
            Runtime::Gemini => gemini::reply_error(message),
            Runtime::Cursor => cursor::reply_error(message),
        }
    }

    /// The answer for an event `to_call` returned `Ok(None)` for: `{}`, which
    /// every runtime here reads as "this hook has nothing to say".
    pub fn no_opinion(self) -> Value {
        json!({})
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A hook payload toolgate cannot read. The message names the runtime, the
/// field and what was expected, so a person can fix the hook registration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookInputError {
    /// The payload is not a JSON object.
    #[error(
        "{runtime} hook input must be a JSON object, got {found}; run `toolgate hook {runtime}` \
         only as a {runtime} hook, which writes one JSON object to its stdin"
    )]
    NotAnObject {
        /// The runtime whose payload it was meant to be.
        runtime: Runtime,
        /// The JSON type found instead.
        found: &'static str,
    },
    /// A field toolgate needs is absent.
    #[error(
        "{runtime} hook input has no `{field}`; register `toolgate hook {runtime}` for \
         {events} only",
        events = .runtime.tool_events()
    )]
    MissingField {
        /// The runtime whose payload it was.
        runtime: Runtime,
        /// The absent field.
        field: &'static str,
    },
    /// A field has the wrong JSON type (or is empty where text is needed).
    #[error("{runtime} hook input field `{field}` must be {expected}, got {found}")]
    WrongType {
        /// The runtime whose payload it was.
        runtime: Runtime,
        /// The offending field.
        field: &'static str,
        /// What the runtime documents for it.
        expected: &'static str,
        /// What was there instead.
        found: &'static str,
    },
    /// A field holding JSON text does not hold a JSON object.
    #[error("{runtime} hook input field `{field}` holds text that is not a JSON object: {why}")]
    BadEmbeddedJson {
        /// The runtime whose payload it was.
        runtime: Runtime,
        /// The offending field.
        field: &'static str,
        /// What the JSON parser said, or what the text held instead.
        why: String,
    },
}
