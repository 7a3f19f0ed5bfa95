//! Text an agent chose, made safe to show on a person's terminal. An
//! approval's command or reason printed as it is could carry escape
//! sequences that move the cursor or erase a line: `rm -rf ~` shown as
//! `ls`, and approved as such.

use std::borrow::Cow;

/// `text` with every control character but newline and tab written as a
/// visible escape (`\u{1b}`).
pub fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c.is_control() && c != '\n' && c != '\t')
}

/// `text` on one line: [`visible`], with newlines and tabs escaped too.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escaped(text, char::is_control)
}

fn escaped(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_show_as_text() {
        let hidden = "rm -rf ~\u{1b}[2K\rls";
        assert_eq!(visible(hidden), "rm -rf ~\\u{1b}[2K\\rls");
        assert_eq!(visible("a\n\tb"), "a\n\tb");
        assert_eq!(visible_line("a\nb\u{7}"), "a\\nb\\u{7}");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)));
    }
}
