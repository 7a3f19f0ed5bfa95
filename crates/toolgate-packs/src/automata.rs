//! The automata the build compiles: one dense DFA per regex (its ASCII
//! form) and one per half of a path set (absolute and home-relative
//! patterns), serialized into one blob that the binary embeds and reads in
//! place.
//!
//! Why the ASCII form is exact: a DFA answers on bytes, and on an ASCII text
//! every Unicode class and case fold answers as its ASCII counterpart does
//! (the Unicode-only members, such as `ſ` for `(?i)s`, never occur in it).
//! The catalogue uses the DFA only for ASCII texts, and the `regex` crate
//! (compiled on first use) for the others; a unit test in the core compares
//! both with the pattern itself on many texts.

use regex_automata::dfa::{StartKind, dense};
use regex_automata::util::syntax;
use std::ops::Range;

/// A regex DFA larger than this is not embedded: the pattern is compiled at
/// run time instead (no shipped pattern comes near it).
const MAX_DFA_BYTES: usize = 1 << 20;

/// Serialized automata, each starting at an 8-byte boundary.
#[derive(Debug, Default, Clone)]
pub struct Blob {
    bytes: Vec<u8>,
}

impl Blob {
    /// Appends one serialized DFA; returns where it lies.
    pub fn add(&mut self, dfa: &[u8]) -> Range<usize> {
        while !self.bytes.len().is_multiple_of(8) {
            self.bytes.push(0);
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(dfa);
        start..self.bytes.len()
    }

    /// The whole blob.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Whether the pattern's ASCII form answers like the pattern on every
/// ASCII text: plain ASCII, naming no code point or Unicode property.
pub fn has_ascii_form(pattern: &str) -> bool {
    pattern.is_ascii()
        && !["\\x", "\\u", "\\U", "\\p", "\\P"]
            .iter()
            .any(|e| pattern.contains(e))
}

fn ascii_syntax() -> syntax::Config {
    syntax::Config::new().unicode(false).utf8(false)
}

fn serialize(dfa: &dense::DFA<Vec<u32>>) -> Option<Vec<u8>> {
    let (bytes, pad) = dfa.to_bytes_little_endian();
    let bytes = bytes[pad..].to_vec();
    (bytes.len() <= MAX_DFA_BYTES).then_some(bytes)
}

/// Checks `pattern` as the `regex` crate reads it (an error says why it is
/// refused) and returns its ASCII form's unanchored DFA, serialized, when it
/// has one of a reasonable size.
pub fn regex_dfa(pattern: &str) -> Result<Option<Vec<u8>>, String> {
    regex::Regex::new(pattern).map_err(|e| e.to_string())?;
    if !has_ascii_form(pattern) {
        return Ok(None);
    }
    let dfa = dense::Builder::new()
        .syntax(ascii_syntax())
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Unanchored)
                .minimize(true)
                .dfa_size_limit(Some(MAX_DFA_BYTES))
                .determinize_size_limit(Some(8 * MAX_DFA_BYTES)),
        )
        .build(pattern);
    Ok(dfa.ok().as_ref().and_then(serialize))
}

/// The regex `globset` matches a path pattern with: `*` stays within a path
/// component, `**` crosses them, `\` escapes.
pub fn glob_regex(glob: &str) -> Result<String, String> {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.regex().to_string())
        .map_err(|e| e.to_string())
}

/// A set's automata are split until each is at most this large: one DFA
/// for many `**/name` patterns grows with the product of their states.
const MAX_SET_DFA_BYTES: usize = 256 << 10;

/// Anchored DFAs that together match a whole path against any of `globs`
/// (none for no globs: nothing matches). Patterns whose union would make
/// one DFA too large are split into several, each a group of patterns.
pub fn globs_dfas(globs: &[String]) -> Result<Vec<Vec<u8>>, String> {
    let regexes = globs
        .iter()
        .map(|g| glob_regex(g))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    group_dfas(&regexes, &mut out)?;
    Ok(out)
}

fn group_dfas(regexes: &[String], out: &mut Vec<Vec<u8>>) -> Result<(), String> {
    if regexes.is_empty() {
        return Ok(());
    }
    let built = dense::Builder::new()
        .syntax(ascii_syntax())
        .configure(
            dense::Config::new()
                .start_kind(StartKind::Anchored)
                .minimize(true)
                .dfa_size_limit(Some(MAX_SET_DFA_BYTES))
                .determinize_size_limit(Some(8 * MAX_SET_DFA_BYTES)),
        )
        .build_many(regexes);
    match built.ok().as_ref().and_then(serialize) {
        Some(bytes) if bytes.len() <= MAX_SET_DFA_BYTES => {
            out.push(bytes);
            Ok(())
        }
        _ if regexes.len() == 1 => Err(format!(
            "the pattern {:?} makes an automaton over {MAX_SET_DFA_BYTES} bytes",
            regexes[0]
        )),
        _ => {
            let (a, b) = regexes.split_at(regexes.len() / 2);
            group_dfas(a, out)?;
            group_dfas(b, out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::dfa::Automaton;
    use regex_automata::{Anchored, Input};

    /// Reads a serialized DFA back, as the binary does with its blob (a
    /// fresh allocation is aligned well enough; `from_bytes` says so if not).
    fn round_trip(bytes: &[u8], text: &str, anchored: bool) -> bool {
        let buf = bytes.to_vec();
        let dfa = dense::DFA::from_bytes(&buf).expect("reads back").0;
        let anchored = if anchored {
            Anchored::Yes
        } else {
            Anchored::No
        };
        let input = Input::new(text).earliest(true).anchored(anchored);
        dfa.try_search_fwd(&input).expect("no quit bytes").is_some()
    }

    #[test]
    fn a_refused_regex_says_why() {
        assert!(regex_dfa("(a").unwrap_err().contains("unclosed group"));
        assert!(glob_regex("a[").is_err());
    }

    #[test]
    fn patterns_without_an_ascii_form_are_left_to_run_time() {
        assert_eq!(regex_dfa(r"\p{Greek}").unwrap(), None);
        assert_eq!(regex_dfa("é").unwrap(), None);
        assert!(regex_dfa("(?i)rm -rf").unwrap().is_some());
    }

    #[test]
    fn blob_entries_are_aligned() {
        let mut b = Blob::default();
        let r1 = b.add(&[1, 2, 3]);
        let r2 = b.add(&[4]);
        assert_eq!((r1, r2.clone()), (0..3, 8..9));
        assert_eq!(b.into_bytes()[r2], [4]);
    }

    #[test]
    fn a_regex_automaton_searches_anywhere() {
        let source = r"(^| )--force\b|(?i)\bdrop\s+table";
        let dfa = regex_dfa(source).unwrap().unwrap();
        let re = regex::Regex::new(source).unwrap();
        for (text, want) in [
            ("push --force", true),
            ("push --forced", false),
            ("push --force-with-lease", true),
            ("x DROP  TABLE y", true),
            ("backdrop table", false),
            ("", false),
        ] {
            assert_eq!(re.is_match(text), want, "{text:?}");
            assert_eq!(round_trip(&dfa, text, false), want, "{text:?}");
        }
    }

    #[test]
    fn a_set_automaton_matches_whole_paths() {
        let globs = ["/etc/**".to_string(), "/~/.ssh/*".to_string()];
        let dfas = globs_dfas(&globs).unwrap();
        assert_eq!(dfas.len(), 1);
        let dfa = &dfas[0];
        for (path, want) in [
            ("/etc/passwd", true),
            ("/etc/a/b", true),
            ("/etcx", false),
            ("/~/.ssh/id_rsa", true),
            ("/~/.ssh/a/b", false),
            ("/x/etc/passwd", false),
        ] {
            assert_eq!(round_trip(dfa, path, true), want, "{path:?}");
        }
        assert!(globs_dfas(&[]).unwrap().is_empty());
    }
}
