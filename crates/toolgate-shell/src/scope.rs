//! What the shell knows at one point of the script: the working directory,
//! variables, aliases, what feeds stdin, and what earlier commands
//! downloaded, cloned or wrote.

use super::types::*;
use std::collections::HashMap;
use std::rc::Rc;

/// What the shell knows at one point of the script.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    /// Working directory; `None` after a `cd` to an unknown place.
    pub cwd: Option<String>,
    /// What commands change for the rest of the script; shared until changed.
    pub state: Rc<ShellState>,
    pub via: Vec<Via>,
    pub privileged: bool,
    pub remote: Option<String>,
    /// Programs feeding stdin.
    pub stdin_from: Vec<String>,
    /// The literal text on stdin, when known (here-doc, here-string, `echo … |`).
    pub stdin_text: Option<String>,
    pub redirects: Vec<Redirect>,
    /// Set inside a command run once per entry of a tree enumeration
    /// (`find -exec sh -c '…' _ {}`, a `for` loop over `$(find …)`): the
    /// words standing for those entries. A per-item operation on one of
    /// them, or on a value known only at run time, acts on the whole tree.
    pub tree: Option<Vec<Word>>,
}

/// The parts of the shell's state that commands change for the commands
/// after them: variables, aliases, and what was downloaded, cloned or written.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShellState {
    /// Variables with a known literal value (`Some`) or an unknown one (`None`).
    pub vars: HashMap<String, Option<String>>,
    pub aliases: HashMap<String, String>,
    /// The functions defined so far, by name, with their body's text
    /// (`None` when too long to analyze again): a call by that name runs
    /// the function, not the program.
    pub functions: Vec<(String, Option<String>)>,
    /// Files written by a network download earlier in the script.
    pub downloaded: Vec<String>,
    /// Directories a `git clone` earlier in the script created.
    pub cloned: Vec<String>,
    /// Files written earlier in the script with known content
    /// (`cat > run.sh <<EOF … EOF`), so running them can be judged.
    pub written: Vec<(String, String)>,
}

impl Scope {
    /// Takes over what a command run in this same shell changed (`cd`,
    /// assignments, aliases, files written): used after redirected
    /// statements and simple commands, which run in the current shell.
    pub(crate) fn absorb(&mut self, other: &Scope) {
        self.cwd = other.cwd.clone();
        self.state = other.state.clone();
    }

    /// The state, for a change (copied first if shared).
    pub(crate) fn state_mut(&mut self) -> &mut ShellState {
        Rc::make_mut(&mut self.state)
    }

    /// The body of function `name`, when defined earlier and short enough
    /// to analyze again with its arguments.
    pub(crate) fn function_body(&self, name: &str) -> Option<&str> {
        self.state
            .functions
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, b)| b.as_deref())
    }

    /// The content written to `path` earlier in the script, if known.
    pub(crate) fn written_content(&self, path: &str) -> Option<&str> {
        self.state
            .written
            .iter()
            .rev()
            .find(|(p, _)| p == path)
            .map(|(_, c)| c.as_str())
    }
}

/// A function defined in the script, waiting to be judged.
#[derive(Debug)]
pub(crate) struct Defined {
    /// The function's name.
    pub name: String,
    /// Its body's text (`{ … }`), analyzed at each call.
    pub body: String,
    /// The scope where it was defined, marked as inside the function.
    pub scope: Scope,
    /// Every call so far was analyzed with its arguments, and there was one.
    pub covered: bool,
    /// A call was not analyzed (past the call budget in `functions.rs`):
    /// the body is judged with unknown arguments too.
    pub missed: bool,
}
