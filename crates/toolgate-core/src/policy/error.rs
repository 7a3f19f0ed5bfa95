//! Policy errors: where in the file, what is wrong, and how to fix it.

use std::fmt;

/// What kind of mistake a [`PolicyError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The text is not valid TOML.
    Syntax,
    /// A key the schema does not know (a typo must never be silently ignored).
    UnknownKey,
    /// A value of the wrong TOML type (a number where a string belongs, …).
    Type,
    /// A rule that does not parse (`exec(git push`, `exec(domain:x)`, …).
    Rule,
    /// A value of the right type but out of range or malformed (durations,
    /// thresholds, quorum sizes, the workspace path, never-block names).
    Value,
    /// A `[[test]]` case that is incomplete or malformed.
    Test,
}

/// An error in a policy file, located at a 1-based line and column
/// (columns count characters, not bytes).
///
/// Displays as `{origin}:{line}:{col}: {message}`, the form editors and
/// terminals turn into a link; the message says what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}:{line}:{col}: {message}")]
pub struct PolicyError {
    /// Where the policy came from, as handed to [`Policy::from_toml_str`](super::Policy::from_toml_str).
    pub origin: String,
    /// 1-based line of the offending text.
    pub line: usize,
    /// 1-based column (in characters) of the offending text.
    pub col: usize,
    /// What kind of mistake this is.
    pub kind: ErrorKind,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl PolicyError {
    /// An error at byte `offset` of `src`.
    pub(crate) fn at(
        origin: &str,
        src: &str,
        offset: usize,
        kind: ErrorKind,
        message: impl Into<String>,
    ) -> PolicyError {
        let (line, col) = line_col(src, offset);
        PolicyError {
            origin: origin.to_string(),
            line,
            col,
            kind,
            message: message.into(),
        }
    }
}

/// Converts a byte offset into a 1-based (line, column), counting columns in
/// characters. Offsets past the end or inside a character are clamped.
pub(crate) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// Where each line of a text starts, for turning many offsets into
/// (line, column) without rescanning the text for each (a policy's every
/// rule carries its location).
pub(crate) struct LineIndex<'a> {
    src: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `src`.
    pub(crate) fn new(src: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { src, starts }
    }

    /// What [`line_col`] says for `offset`.
    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.src.len());
        while !self.src.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        (line, self.src[start..offset].chars().count() + 1)
    }
}

/// A rule that does not parse. Its message names the rule and says how to
/// write it; [`Policy::from_toml_str`](super::Policy::from_toml_str) adds the location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    message: String,
}

impl RuleError {
    pub(crate) fn new(rule: &str, problem: impl fmt::Display) -> RuleError {
        RuleError {
            message: format!("rule {rule:?} {problem}"),
        }
    }

    /// The full message, e.g. `rule "exec(git push" is missing its closing ')' — …`.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuleError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_agrees_with_line_col() {
        let src = "a\nbé\n\nxyz\n";
        let index = LineIndex::new(src);
        for offset in 0..=src.len() + 2 {
            assert_eq!(index.line_col(offset), line_col(src, offset), "{offset}");
        }
    }

    #[test]
    fn line_col_counts_from_one_in_characters() {
        let src = "ab\ncé\nx";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 2), (1, 3));
        assert_eq!(line_col(src, 3), (2, 1));
        // 'é' is two bytes; the column after it is 3, not 4.
        assert_eq!(line_col(src, 6), (2, 3));
        // Inside a multi-byte character: clamped to its start.
        assert_eq!(line_col(src, 5), (2, 2));
        assert_eq!(line_col(src, 999), (3, 2));
    }

    #[test]
    fn display_is_origin_line_col_message() {
        let e = PolicyError::at("p.toml", "a\nbc", 3, ErrorKind::Value, "bad");
        assert_eq!(e.to_string(), "p.toml:2:2: bad");
    }
}
