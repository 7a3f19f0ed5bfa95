//! toolgate's decision core. Pure: no I/O, no clock, no globals. Everything it
//! needs (home directory, working directory, the policy) is handed in.
// One audited exception (`catalogue::automata::Automaton::dfa`: reading
// the automata the build embedded without re-validating them).
#![deny(unsafe_code)]

/// Path resolution, re-exported so callers name one `Env` type.
pub use toolgate_paths as paths;
/// The shell analyzer the engine judges commands with, re-exported.
pub use toolgate_shell as shell;

pub mod approval;
pub mod approvers;
pub mod audit;
pub mod bypass;
pub mod catalogue;
pub mod engine;
#[cfg(test)]
mod enum_strings;
pub mod hex;
/// Hook protocols of Claude Code, Codex, Gemini CLI and Cursor ↔ [`model::ToolCall`] / [`model::Decision`].
pub mod hooks;
pub mod input;
pub mod knowledge;
pub mod model;
pub mod normalize;
pub mod policy;
pub mod posture;
pub mod profile;
pub mod protocol;
pub mod redact;
pub mod shown;
pub mod time;
mod tool_kind;
mod url;
pub mod wildcard;
