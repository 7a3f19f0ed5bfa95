//! The agent runtimes toolgate plugs into, one module each
//! (`toolgate hook <runtime>`; docs/integrations.md). A runtime's module owns everything
//! toolgate knows about it: its hook payload in ([`Spec::to_call`]), its
//! answers out ([`Spec::reply`], [`Spec::reply_error`]) and how the runtime
//! reads them ([`Spec::classify`]), the answer table per permission mode
//! ([`answers`]), its tool vocabulary, and its install target ([`install`]).
//! Adding a runtime is its module and one line in [`Runtime::spec`].
//!
//! Pure: reading stdin, calling the engine or the daemon, writing settings
//! files and printing are the caller's job.
//!
//! The first law holds here: a reply for a blocked or escalated call, and
//! every reply for a failure of toolgate's own, is an answer after which the
//! runtime does not run the call, in every permission mode the runtime has
//! (a property test checks every runtime × mode × decision against the
//! answer table).

mod answers;
mod claude_code;
mod codex;
pub mod codex_trust;
pub mod cursor;
mod gemini;
pub mod install;
pub mod mcp;

mod input;
mod text;

#[cfg(test)]
mod tests;

use crate::model::{Decision, ToolCall};
use crate::tool_kind::ToolKind;
pub use answers::{AnswerKind, AnswerTable, HookAnswer, Outcome};
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
    /// Cursor (`preToolUse`, `beforeShellExecution`, `beforeMCPExecution`,
    /// `beforeReadFile`).
    Cursor,
}

/// One hook payload, read: the call it asks about and the permission mode
/// the runtime says it is in (`None` when the payload names none).
#[derive(Debug, Clone, PartialEq)]
pub struct HookCall {
    /// The call to judge.
    pub call: ToolCall,
    /// The payload's permission mode (`permission_mode`), as sent.
    pub mode: Option<String>,
}

/// What a reply may depend on besides the decision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplyContext<'a> {
    /// The permission mode the payload named.
    pub mode: Option<&'a str>,
    /// The policy lets the runtime's own prompt stand in for an approval
    /// (`[hooks] host_prompt`); used only in a mode with a person at it.
    pub host_prompt: bool,
    /// toolgate's allow is final (`[hooks] allow_is_final`): answered as an
    /// allow that skips the runtime's own checks, where the runtime has one.
    /// Otherwise an allowed call gets "no opinion" there.
    pub allow_is_final: bool,
}

/// Everything toolgate knows about one runtime. Each runtime module has one
/// `SPEC`; [`Runtime::spec`] is the registry.
#[derive(Debug)]
pub struct Spec {
    /// The runtime this describes.
    pub runtime: Runtime,
    /// The CLI name (`toolgate hook <name>`), also the call's `agent`.
    pub name: &'static str,
    /// What people call it.
    pub title: &'static str,
    /// The hook events toolgate judges, as the runtime names them.
    pub tool_events: &'static [&'static str],
    /// The call a hook payload asks about: `Ok(None)` for an event toolgate
    /// has no opinion on, an error for a payload the runtime never sends.
    pub to_call: fn(&Value) -> Result<Option<HookCall>, HookInputError>,
    /// The answer carrying a decision. Never one after which a blocked or
    /// escalated call runs (see the answer table).
    pub reply: fn(&Decision, &ReplyContext<'_>) -> HookAnswer,
    /// The fail-closed answer when toolgate itself failed: it stops the call
    /// in every mode.
    pub reply_error: fn(&str) -> HookAnswer,
    /// How the runtime reads an exit-0 JSON answer (its parser's rules).
    pub classify: fn(&Value) -> AnswerKind,
    /// What each answer does in each permission mode.
    pub answers: &'static AnswerTable,
    /// The runtime's own tool names and what kind each is.
    pub vocabulary: &'static [(&'static str, ToolKind)],
    /// Where and how toolgate registers as the runtime's hook.
    pub install: &'static install::Target,
}

impl Runtime {
    /// Every runtime, in the order the CLI lists them.
    pub const ALL: [Runtime; 4] = [
        Runtime::ClaudeCode,
        Runtime::Codex,
        Runtime::Gemini,
        Runtime::Cursor,
    ];

    /// The registry: this runtime's module's [`Spec`].
    pub fn spec(self) -> &'static Spec {
        match self {
            Runtime::ClaudeCode => &claude_code::SPEC,
            Runtime::Codex => &codex::SPEC,
            Runtime::Gemini => &gemini::SPEC,
            Runtime::Cursor => &cursor::SPEC,
        }
    }

    /// Parses the CLI name (`claude-code`, `codex`, `gemini`, `cursor`),
    /// ignoring case and surrounding blanks; `None` for anything else.
    pub fn parse(name: &str) -> Option<Runtime> {
        let name = name.trim();
        Runtime::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(name))
    }

    /// The runtimes' CLI names joined for messages (`claude-code, codex, …`).
    pub fn names() -> String {
        Runtime::ALL.map(Runtime::as_str).join(", ")
    }

    /// The CLI name, also used as the call's `agent`.
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The hook event(s) toolgate must be registered for, as the runtime
    /// names them (used in error messages).
    pub fn tool_events(self) -> String {
        let events = self.spec().tool_events;
        match events.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => events.join(""),
        }
    }

    /// The call a hook payload asks about (see [`Spec::to_call`]).
    pub fn to_call(self, payload: &Value) -> Result<Option<HookCall>, HookInputError> {
        (self.spec().to_call)(payload)
    }

    /// The answer carrying `decision` (see [`Spec::reply`]).
    pub fn reply(self, decision: &Decision, ctx: &ReplyContext<'_>) -> HookAnswer {
        (self.spec().reply)(decision, ctx)
    }

    /// The fail-closed answer, saying `message` (see [`Spec::reply_error`]).
    pub fn reply_error(self, message: &str) -> HookAnswer {
        (self.spec().reply_error)(message)
    }

    /// The answer for an event `to_call` returned `Ok(None)` for: `{}`, which
    /// every runtime here reads as "this hook has nothing to say".
    pub fn no_opinion(self) -> HookAnswer {
        HookAnswer::json(json!({}))
    }
}

impl fmt::Display for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind a runtime's own tool name has in any runtime's vocabulary
/// (names compare without case); `None` when no runtime names a tool so.
pub fn vocabulary_kind(tool: &str) -> Option<ToolKind> {
    static ALL: std::sync::OnceLock<std::collections::HashMap<String, ToolKind>> =
        std::sync::OnceLock::new();
    let all = ALL.get_or_init(|| {
        let mut m = std::collections::HashMap::new();
        // Earlier runtimes win a name two of them share.
        for r in Runtime::ALL.into_iter().rev() {
            for (name, kind) in r.spec().vocabulary {
                m.insert(name.to_ascii_lowercase(), *kind);
            }
        }
        m
    });
    if tool.bytes().any(|b| b.is_ascii_uppercase()) {
        all.get(&tool.to_ascii_lowercase()).copied()
    } else {
        all.get(tool).copied()
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
