//! The automata the build compiles: sparse DFAs for each regex (its ASCII
//! form) and for each half of a path set (absolute and home-relative
//! patterns), split along alternatives where one DFA would be too large,
//! serialized into one blob that the binary embeds and reads in place.
//!
//! Why the ASCII form is exact: a DFA answers on bytes, and on an ASCII text
//! every Unicode class and case fold answers as its ASCII counterpart does
//! (the Unicode-only members, such as `ſ` for `(?i)s`, never occur in it).
//! The catalogue uses the DFA only for ASCII texts, and the `regex` crate
//! (compiled on first use) for the others; a unit test in the core compares
//! both with the pattern itself on many texts.

#[cfg(test)]
use regex_automata::dfa::sparse;
use regex_automata::dfa::{StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_syntax::hir::{Hir, HirKind};
use std::ops::Range;

/// The largest automaton embedded. A pattern (or a set's patterns) whose
/// DFA would be larger is split along its top-level alternatives into
/// several DFAs, any of which matching is a match: one DFA for `A.*B|C.*D`
/// or for many `**/name` globs grows with the product of their states,
/// several grow with the sum.
const MAX_DFA_BYTES: usize = 128 << 10;

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

/// The pattern's alternatives: `A|B`, `(A|B)` and `(?i:A|B)` are each
/// their alternatives, recursively (flags are already applied in the HIR,
/// and is-a-match does not care about groups).
fn alternatives(hir: &Hir, out: &mut Vec<Hir>) {
    match hir.kind() {
        HirKind::Alternation(alts) => alts.iter().for_each(|h| alternatives(h, out)),
        HirKind::Capture(c) => alternatives(&c.sub, out),
        _ => out.push(hir.clone()),
    }
}

/// `X(A|B)Y` as `XAY` and `XBY` (the first alternation in a concatenation,
/// distributed), each of which matches where the whole did: one large DFA
/// for `(a|b|c).*(x|y)` becomes one per leading alternative. `None` when
/// the pattern has no such alternation.
fn distribute(hir: &Hir) -> Option<Vec<Hir>> {
    let HirKind::Concat(parts) = hir.kind() else {
        return None;
    };
    parts.iter().enumerate().find_map(|(i, part)| {
        let mut alts = Vec::new();
        alternatives(part, &mut alts);
        (alts.len() > 1).then(|| {
            alts.into_iter()
                .map(|alt| {
                    let mut concat = parts[..i].to_vec();
                    concat.push(alt);
                    concat.extend_from_slice(&parts[i + 1..]);
                    Hir::concat(concat)
                })
                .collect()
        })
    })
}

/// DFAs that together match what any of `hirs` matches, each at most
/// [`MAX_DFA_BYTES`]; `None` when one alternative alone is too large.
fn groups(hirs: &[Hir], start: StartKind, out: &mut Vec<Vec<u8>>) -> Option<()> {
    if hirs.is_empty() {
        return Some(());
    }
    let built = thompson::Compiler::new()
        .configure(thompson::Config::new().utf8(false))
        .build_many_from_hir(hirs)
        .ok()
        .and_then(|nfa| {
            dense::Builder::new()
                .configure(
                    dense::Config::new()
                        .start_kind(start)
                        .minimize(true)
                        .dfa_size_limit(Some(MAX_DFA_BYTES))
                        .determinize_size_limit(Some(8 * MAX_DFA_BYTES)),
                )
                .build_from_nfa(&nfa)
                .ok()
        })
        .filter(|dfa| dfa.memory_usage() <= MAX_DFA_BYTES)
        .and_then(|dfa| dfa.to_sparse().ok())
        .map(|sparse| sparse.to_bytes_little_endian());
    match built {
        Some(bytes) => {
            out.push(bytes);
            Some(())
        }
        None if hirs.len() == 1 => groups(&distribute(&hirs[0])?, start, out),
        None => {
            let (a, b) = hirs.split_at(hirs.len() / 2);
            groups(a, start, out)?;
            groups(b, start, out)
        }
    }
}

/// Checks `pattern` as the `regex` crate reads it (an error says why it is
/// refused) and returns unanchored DFAs of its ASCII form, serialized:
/// none when it has no ASCII form, or an alternative of it makes too large
/// an automaton (the pattern is then compiled at run time).
pub fn regex_dfas(pattern: &str) -> Result<Vec<Vec<u8>>, String> {
    regex::Regex::new(pattern).map_err(|e| e.to_string())?;
    if !has_ascii_form(pattern) {
        return Ok(Vec::new());
    }
    let hir = syntax::parse_with(pattern, &ascii_syntax()).map_err(|e| e.to_string())?;
    let mut alts = Vec::new();
    alternatives(&hir, &mut alts);
    let mut out = Vec::new();
    Ok(match groups(&alts, StartKind::Unanchored, &mut out) {
        Some(()) => out,
        None => Vec::new(),
    })
}

/// The regex `globset` matches a path pattern with: `*` stays within a path
/// component, `**` crosses them, `\\` escapes.
pub fn glob_regex(glob: &str) -> Result<String, String> {
    globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|g| g.regex().to_string())
        .map_err(|e| e.to_string())
}

/// Anchored DFAs that together match a whole path against any of `globs`
/// (none for no globs: nothing matches).
pub fn globs_dfas(globs: &[String]) -> Result<Vec<Vec<u8>>, String> {
    let mut hirs = Vec::new();
    for g in globs {
        let regex = glob_regex(g).map_err(|e| format!("pattern {g:?}: {e}"))?;
        let hir = syntax::parse_with(&regex, &ascii_syntax())
            .map_err(|e| format!("pattern {g:?}: {e}"))?;
        hirs.push(hir);
    }
    let mut out = Vec::new();
    groups(&hirs, StartKind::Anchored, &mut out)
        .ok_or_else(|| format!("a pattern makes an automaton over {MAX_DFA_BYTES} bytes"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::dfa::Automaton;
    use regex_automata::{Anchored, Input};

    /// Reads a serialized DFA back, as the binary does with its blob.
    fn round_trip(bytes: &[u8], text: &str, anchored: bool) -> bool {
        let buf = bytes.to_vec();
        let dfa = sparse::DFA::from_bytes(&buf).expect("reads back").0;
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
        assert!(regex_dfas("(a").unwrap_err().contains("unclosed group"));
        assert!(glob_regex("a[").is_err());
    }

    #[test]
    fn patterns_without_an_ascii_form_are_left_to_run_time() {
        assert!(regex_dfas(r"\p{Greek}").unwrap().is_empty());
        assert!(regex_dfas("é").unwrap().is_empty());
        assert_eq!(regex_dfas("(?i)rm -rf").unwrap().len(), 1);
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
        let dfas = regex_dfas(source).unwrap();
        assert_eq!(dfas.len(), 1);
        let dfa = &dfas[0];
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
            assert_eq!(round_trip(dfa, text, false), want, "{text:?}");
        }
    }

    #[test]
    fn a_large_pattern_is_split_along_its_alternatives() {
        // Each `\S+ … .*` alternative multiplies the states of one DFA.
        let source = r"(?i)(alias\.\S+[= ]!|url\.\S+\.(insteadOf|pushInsteadOf)|filter\.\S+\.(clean|smudge)|diff\.\S+\.textconv|merge\.\S+\.driver|core\.(pager|editor)[= ]|a\S*b\S*c\S*d\S*e.*f)";
        let dfas = regex_dfas(source).unwrap();
        assert!(dfas.len() > 1, "{} automata", dfas.len());
        let re = regex::Regex::new(source).unwrap();
        for text in [
            "-c alias.x=!sh status",
            "-c URL.h.insteadOf=x",
            "-c core.pager=less log",
            "-c core.pagers=less",
            "a1b2c3d4e5 f",
            "status",
        ] {
            let any = dfas.iter().any(|d| round_trip(d, text, false));
            assert_eq!(any, re.is_match(text), "{text:?}");
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
