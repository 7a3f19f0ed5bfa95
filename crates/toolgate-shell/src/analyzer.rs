//! The analyzer's own state and the primitives every part of the walk
//! shares: the [`Analyzer`] struct, its limits, reporting a command or an
//! opaque part, the root scope, resolving a path word, and slicing source
//! text by a syntax node's range.
//!
//! The walk is one recursive evaluator whose `impl Analyzer` blocks are
//! spread over `walk`, `expand`, `command`, `redirect`, `unwrap` and the
//! wrapper modules, and they call each other through `self`. This module is
//! a leaf (it imports only `scope` and `types`) so that each of those can
//! name the analyzer without importing another walking module: the modules
//! then form a graph without cycles, and each can be read on its own.

use super::scope::{Scope, ShellState};
use super::shorten;
use super::types::*;
use std::rc::Rc;
use toolgate_paths::Env;

/// Deepest syntax nesting walked; deeper input is reported opaque.
pub(crate) const MAX_NESTING: usize = 256;

/// Most simple commands reported for one call.
const MAX_COMMANDS: usize = 2_000;

/// Most arguments checked in one simple command.
const MAX_ARGS: usize = 1024;

/// One analysis under way: what has been found so far, and where the walk
/// is among re-parses and pipeline stages.
pub(crate) struct Analyzer<'e> {
    pub env: &'e Env,
    pub out: ShellAnalysis,
    pub reparse_depth: usize,
    /// Literal stdout of the last command emitted (`echo x`, `printf x`,
    /// `cat` of a here-doc, `base64 -d` of a literal), for the next pipe stage.
    pub last_output: Option<String>,
    /// The last command printed text built at run time (`echo "$x"`).
    pub last_output_dynamic: bool,
    /// Set once [`MAX_COMMANDS`] commands are reported: the walk stops, as
    /// every later command would be dropped (the analysis already says so).
    pub truncated: bool,
    /// Function calls analyzed with their arguments so far.
    pub function_calls: usize,
    /// Functions defined so far, waiting to be judged (`functions.rs`).
    pub defined: Vec<crate::scope::Defined>,
    /// The text the last process substitution prints, when known.
    pub procsub_output: Option<String>,
}

impl<'e> Analyzer<'e> {
    pub(crate) fn new(env: &'e Env) -> Self {
        Analyzer {
            env,
            out: ShellAnalysis::default(),
            reparse_depth: 0,
            last_output: None,
            last_output_dynamic: false,
            truncated: false,
            function_calls: 0,
            defined: Vec::new(),
            procsub_output: None,
        }
    }

    pub(crate) fn finish(self) -> ShellAnalysis {
        self.out
    }

    pub(crate) fn opaque(&mut self, reason: impl Into<String>, snippet: &str) {
        let reason = reason.into();
        if self
            .out
            .opaque
            .iter()
            .any(|o| o.reason == reason && o.snippet == shorten(snippet, 120))
        {
            return;
        }
        if self.out.opaque.len() < 64 {
            self.out.opaque.push(Opaque {
                reason,
                snippet: shorten(snippet, 120),
            });
        }
    }

    pub(crate) fn root_scope(&self) -> Scope {
        Scope {
            cwd: Some(self.env.cwd.clone()),
            state: Rc::new(ShellState::default()),
            via: Vec::new(),
            privileged: false,
            remote: None,
            stdin_from: Vec::new(),
            stdin_text: None,
            redirects: Vec::new(),
            tree: None,
        }
    }

    pub(crate) fn push(&mut self, mut cmd: SimpleCommand) {
        if cmd.argv.len() > MAX_ARGS {
            // Checking every one of tens of thousands of operands against
            // every rule would let one call stall the gate; no agent needs it.
            self.opaque(
                format!(
                    "the command has {} arguments, more than the {MAX_ARGS} toolgate checks",
                    cmd.argv.len()
                ),
                &cmd.program,
            );
            cmd.argv.truncate(MAX_ARGS);
        }
        if self.out.commands.len() >= MAX_COMMANDS {
            if !self.truncated {
                self.truncated = true;
                self.opaque(
                    "the command runs too many commands to analyze",
                    &cmd.display(),
                );
            }
            return;
        }
        self.out.commands.push(cmd);
    }

    /// Resolves a redirect target or path word against the scope's cwd.
    pub(crate) fn resolve_word(&self, w: Word, scope: &Scope) -> Word {
        if w.dynamic {
            return w;
        }
        let t = w.text.as_str();
        let absolute = t.starts_with('/')
            || t.starts_with('~')
            || t.starts_with("$HOME")
            || t.starts_with("${HOME}");
        match (&scope.cwd, absolute) {
            (_, true) => Word::lit(self.env.resolve(t)),
            (Some(cwd), false) => Word::lit(self.env.resolve_from(cwd, t)),
            (None, false) => Word {
                text: t.to_string(),
                dynamic: true,
            },
        }
    }
}

/// `src[range]`, widened to character boundaries. Tree-sitter recovers from
/// errors with ranges that can end inside a character (an unterminated
/// string); slicing must never panic on input.
pub(crate) fn slice(src: &str, range: std::ops::Range<usize>) -> &str {
    let mut start = range.start.min(src.len());
    let mut end = range.end.clamp(start, src.len());
    while !src.is_char_boundary(start) {
        start -= 1;
    }
    while !src.is_char_boundary(end) {
        end += 1;
    }
    &src[start..end]
}
