//! Helpers over argv words that the wrapper modules share: where a
//! wrapper's operands start, a word with new text, and words joined back
//! into one script or one display line.
//!
//! A leaf (it imports only `types`): `unwrap` dispatches to `wrappers`,
//! `privilege`, `repeaters`, `remote`, `interpreters`, `embedded` and
//! `tracking`, and those need these helpers too; were they in `unwrap`,
//! every wrapper module would import its own dispatcher, a cycle.

use super::types::*;

/// Index of the first operand in `args`: options (and the values of those in
/// `value_opts`) come before it; `--` ends the options.
pub(crate) fn skip_options(args: &[Word], value_opts: &[&str]) -> usize {
    let takes_value = |letter: &str| value_opts.iter().any(|o| o.len() == 2 && &o[1..] == letter);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" || args[i].dynamic {
            return i;
        }
        if a.starts_with("--") {
            if !a.contains('=') && value_opts.contains(&a) {
                i += 1;
            }
        } else if a.len() == 2 {
            if takes_value(&a[1..]) {
                i += 1;
            }
        } else if a.get(1..2).is_some_and(|l| !takes_value(l))
            && a.get(a.len() - 1..).is_some_and(takes_value)
        {
            // a cluster such as `-Eu` that ends in an option taking a value;
            // `-n19` (value attached to its option) consumes nothing more
            i += 1;
        }
        i += 1;
    }
    i
}

impl Word {
    /// The same word with other text (part of it, such as `CMD` in
    /// `-cCMD`), still marked dynamic if the word was.
    pub(crate) fn with_text(self, text: &str) -> Word {
        Word {
            text: text.to_string(),
            dynamic: self.dynamic,
        }
    }
}

/// Words joined with spaces, as shown in a reason's snippet.
pub(crate) fn display(argv: &[Word]) -> String {
    argv.iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words joined with spaces, as `ssh` and `watch` hand them to a shell.
pub(crate) fn join_script(args: &[Word]) -> Word {
    Word {
        text: display(args),
        dynamic: args.iter().any(|w| w.dynamic),
    }
}
