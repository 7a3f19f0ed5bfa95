//! Text an agent chose, made safe to show to a person (a terminal, a chat
//! message). An approval's command or reason shown as it is could carry
//! escape sequences that move the cursor or erase a line, or bidirectional
//! controls that reorder it: `rm -rf ~` shown as `ls`, and approved as such.

use std::borrow::Cow;

/// `text` with every control character but newline and tab, and every
/// bidirectional-text control, written as a visible escape (`\u{1b}`,
/// `\u{202e}`).
pub fn visible(text: &str) -> Cow<'_, str> {
    escaped(text, |c| {
        (c.is_control() && c != '\n' && c != '\t') || reorders(c)
    })
}

/// `text` on one line: [`visible`], with newlines and tabs escaped too.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c.is_control() || reorders(c))
}

/// Characters that change the order text is displayed in ("Trojan
/// Source"): embeddings, overrides, isolates and marks.
fn reorders(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
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
        assert_eq!(visible("ls #\u{202e}fr- mr"), "ls #\\u{202e}fr- mr");
    }
}
