//! What shell analysis produces: every simple command that would run, with its
//! argv normalized, and everything that could not be resolved statically.

use serde::Serialize;

/// One shell word after quote removal and expansion of what is known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Word {
    /// The word's value. Where a part could not be resolved (`$x`, `$(…)`),
    /// the part is kept as written, so `text` is still readable.
    pub text: String,
    /// True when some part of the word depends on a value unknown statically.
    pub dynamic: bool,
}

impl Word {
    /// A fully known word.
    pub fn lit(text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            dynamic: false,
        }
    }
}

/// How a redirection uses its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedirectKind {
    /// `<`
    Read,
    /// `>`, `>|`, `&>`
    Write,
    /// `>>`, `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>&N`, `<&N` (file-descriptor duplication; target is a descriptor)
    Dup,
}

/// A file redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// Read, write, append …
    pub kind: RedirectKind,
    /// The target word; for files, an absolute normalized path when resolvable.
    pub target: Word,
}

/// Where a simple command was found; the outermost context comes first in
/// [`SimpleCommand::via`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Via {
    /// The wrapper or construct: `sudo`, `bash -c`, `xargs`, `find -exec`,
    /// `$( )`, `<( )`, `eval`, `ssh`, `docker exec`, `python -c`, `alias`, `function` …
    pub wrapper: String,
}

/// One simple command that would run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SimpleCommand {
    /// The program as invoked, after unwrapping: basename of `argv[0]`
    /// (`/bin/rm` → `rm`, `\rm` → `rm`).
    pub program: String,
    /// The whole argument vector, `argv[0]` as written (quote-removed).
    pub argv: Vec<Word>,
    /// `NAME=value` prefixes and `env NAME=value` assignments.
    pub assignments: Vec<(String, Word)>,
    /// File redirections attached to this command (or to a group around it).
    pub redirects: Vec<Redirect>,
    /// Programs upstream in the pipeline feeding this command's stdin, nearest
    /// last (`curl x | base64 -d | sh` → `sh` has `["curl", "base64"]`).
    /// Here-documents and here-strings appear as `<<` and `<<<`.
    pub stdin_from: Vec<String>,
    /// The wrappers this command was unwrapped from, outermost first.
    pub via: Vec<Via>,
    /// True when run through sudo, doas, su, pkexec or run0.
    pub privileged: bool,
    /// The remote host or container when run through ssh or `docker exec` and friends.
    pub remote: Option<String>,
    /// Inline program text for interpreters (`python -c CODE`, `node -e CODE`, …).
    pub inline_code: Option<InlineCode>,
    /// The directory the command runs in, absolute; `None` when a `cd` to a
    /// directory unknown statically came before it (relative paths are then unknown too).
    pub cwd: Option<String>,
    /// True for a wrapper (`sudo`, `env`, `xargs`, `bash -c` …) whose wrapped
    /// command is reported separately. Deny and ask rules still see it.
    pub wrapper: bool,
}

impl SimpleCommand {
    /// The arguments after `argv[0]`.
    pub fn args(&self) -> &[Word] {
        self.argv.get(1..).unwrap_or(&[])
    }

    /// The command rendered back as one line, for reasons and logs.
    pub fn display(&self) -> String {
        let mut out = String::new();
        for (i, w) in self.argv.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&w.text);
        }
        out
    }
}

/// Program text handed to an interpreter on its command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InlineCode {
    /// `python`, `perl`, `node`, `ruby`, `php`, `lua`, …
    pub language: String,
    /// The code itself.
    pub code: String,
}

/// Something the analyzer could not resolve; the call is escalated because of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Opaque {
    /// Why it could not be resolved, as a sentence fragment.
    pub reason: String,
    /// The text involved, shortened.
    pub snippet: String,
}

/// Everything the analyzer found in one command string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ShellAnalysis {
    /// Every simple command that would (or could) run, in source order.
    pub commands: Vec<SimpleCommand>,
    /// What could not be resolved statically.
    pub opaque: Vec<Opaque>,
}
