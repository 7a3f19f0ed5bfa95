//! Shell analysis: every simple command a command string would run.
//!
//! The command is parsed with tree-sitter-bash (docs/decisions/0001-shell-parser.md: chosen for
//! its behaviour on hostile input) and walked to find each simple command,
//! through lists, pipelines, groups, substitutions, here-documents, functions,
//! loops and wrappers (`sudo`, `env`, `xargs`, `bash -c`, `ssh`, …), with argv
//! normalized by the shell's own word rules. What cannot be known statically
//! is reported in [`ShellAnalysis::opaque`]; the caller must never allow it.

mod analyzer;
mod argv;
mod code_literals;
mod command;
mod decoders;
mod embedded;
mod expand;
mod fallback;
mod functions;
mod inline;
mod interpreters;
mod patches;
mod privilege;
mod redirect;
mod remote;
mod repeaters;
mod scope;
mod sed;
mod setup_idiom;
mod static_code;
mod tracking;
mod types;
mod unwrap;
mod walk;
pub mod words;
mod wrappers;

pub use sed::sed_script_args;
pub use types::*;

use std::cell::{Cell, RefCell};
use std::sync::{Arc, Mutex};
use toolgate_paths::Env;

/// Quotes one argument for a POSIX shell so re-parsing yields it unchanged.
pub fn quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return arg.to_string();
    }
    format!("'{}'", arg.replace('\'', "'\\''"))
}

/// Longest command text analyzed; longer text is reported as opaque.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

thread_local! {
    // A parser is reusable and costly to set up; one per thread keeps the core
    // free of shared state while sparing each call the setup.
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

/// Parses shell text. `None` when tree-sitter gives up (it does not on any
/// input we have seen, but the caller treats it as unparsable).
///
/// The parser sees an ASCII shadow of the text: every byte of a non-ASCII
/// character becomes `a`. Bash treats such characters as ordinary word
/// characters, so the tree's shape and byte offsets are unchanged (callers
/// slice the original text), while tree-sitter-bash's scanner never sees a
/// large code point: its `isdigit` on one reads out of bounds and crashes
/// the process (tree-sitter-bash issue #337, still open in 0.25.1).
pub(crate) fn parse(src: &str) -> Option<tree_sitter::Tree> {
    let shadow;
    let src = if src.is_ascii() {
        src
    } else {
        shadow = src
            .bytes()
            .map(|b| if b.is_ascii() { b as char } else { 'a' })
            .collect::<String>();
        shadow.as_str()
    };
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
            *slot = Some(p);
        }
        slot.as_mut()?.parse(src, None)
    })
}

thread_local! {
    static ANALYSES_RUN: Cell<u64> = const { Cell::new(0) };
}

/// How many times [`analyze`] has run on this thread: tests count it to
/// check that a call's command is analysed once, whatever the layers that
/// look at it.
pub fn analyses_run_on_this_thread() -> u64 {
    ANALYSES_RUN.with(Cell::get)
}

/// Finds every simple command `command` would run when executed by bash in
/// `env.cwd`, and everything that cannot be resolved statically. Layers
/// judging one call go through its [`Analyses`] instead, which runs this at
/// most once per text.
pub fn analyze(command: &str, env: &Env) -> ShellAnalysis {
    ANALYSES_RUN.with(|n| n.set(n.get() + 1));
    let mut analyzer = analyzer::Analyzer::new(env);
    analyzer.analyze_top(command);
    analyzer.finish()
}

/// Shortens text for a reason or snippet, on a character boundary.
pub fn shorten(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push('…');
    s
}

/// The shell analyses of one call's command texts: each text, in each
/// context (working directory, homes), is analysed once, by whichever layer
/// asks first — the scope profile, the engine, the knowledge context, the
/// rules approver — and shared with the others. Clones share the memo, so
/// it travels with the normalized call wherever that goes.
#[derive(Clone, Default)]
pub struct Analyses(Arc<Mutex<Vec<Analysed>>>);

/// One memo entry: the text, the context it was analysed in, the analysis.
type Analysed = (String, Env, Arc<ShellAnalysis>);

impl Analyses {
    /// The analysis of `command` in `env`, computed now if no layer has
    /// asked for it yet.
    pub fn get(&self, command: &str, env: &Env) -> Arc<ShellAnalysis> {
        let mut memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, done)) = memo.iter().find(|(c, e, _)| c == command && e == env) {
            return Arc::clone(done);
        }
        let done = Arc::new(analyze(command, env));
        memo.push((command.to_string(), env.clone(), Arc::clone(&done)));
        done
    }
}

impl std::fmt::Debug for Analyses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map_or(0, |m| m.len());
        write!(f, "Analyses({n} done)")
    }
}

/// A memo is not part of a call's value: two calls that differ only in
/// what has been analysed so far are equal.
impl PartialEq for Analyses {
    fn eq(&self, _: &Analyses) -> bool {
        true
    }
}
