//! The automata the build compiled (`toolgate-packs`), read in place from
//! the binary: a regex or a path set costs no compilation at run time, only
//! a check of its DFA the first time it is used.

use regex::Regex;
use regex_automata::dfa::Automaton as _;
use regex_automata::dfa::sparse::DFA;
use regex_automata::{Anchored, Input};
use std::sync::OnceLock;

#[cfg(not(target_endian = "little"))]
compile_error!("the embedded automata are little-endian; big-endian targets are not supported");

/// The automata the build serialized (sparse DFAs, read in place: they
/// need no alignment).
static BLOB: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/automata.bin"));

/// One DFA in the blob, read on first use.
#[derive(Debug)]
pub(super) struct Automaton {
    blob: &'static [u8],
    at: (usize, usize),
    /// In the blob the build embedded (read without re-validation), or
    /// made by a test (validated).
    embedded: bool,
    /// Boxed: a DFA's header is ~700 bytes, and the table of every
    /// automaton is a static that a process writes to (faulting a page in)
    /// wherever it reads one; boxed, the table stays a few pages and the
    /// DFAs a call reads share heap pages.
    dfa: OnceLock<Box<DFA<&'static [u8]>>>,
}

impl Automaton {
    /// The DFA at `start..end` in the blob.
    pub(super) const fn new(start: usize, end: usize) -> Automaton {
        Automaton {
            blob: BLOB,
            at: (start, end),
            embedded: true,
            dfa: OnceLock::new(),
        }
    }

    /// An automaton serialized elsewhere (tests build their own sets).
    #[cfg(test)]
    pub(super) fn from_serialized(bytes: Vec<u8>) -> Automaton {
        let blob: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        Automaton {
            blob,
            at: (0, blob.len()),
            embedded: false,
            dfa: OnceLock::new(),
        }
    }

    /// The DFA. Reading one the build embedded costs next to nothing; a
    /// broken one is a broken build: a panic (answered as a denial by every
    /// integration), never a rule silently off.
    fn dfa(&self) -> &DFA<&'static [u8]> {
        let (start, end) = self.at;
        let bytes: &'static [u8] = &self.blob[start..end];
        self.dfa.get_or_init(|| {
            let read = if self.embedded {
                // Validating a DFA walks all of it: for the few dozen a
                // call can touch, most of a hook process's CPU time.
                #[allow(unsafe_code)]
                // SAFETY: `bytes` is one DFA that `toolgate-packs` wrote with
                // `sparse::DFA::to_bytes_little_endian` at build time into
                // the blob compiled into this binary (`include_bytes!`; never
                // anything read at run time), at the range the same build
                // generated for it. The unit test
                // `every_embedded_automaton_validates` reads every embedded
                // DFA with the validating `from_bytes`, so any build whose
                // blob would fail validation fails its tests.
                unsafe {
                    DFA::from_bytes_unchecked(bytes)
                }
            } else {
                DFA::from_bytes(bytes)
            };
            match read {
                Ok((dfa, _)) => Box::new(dfa),
                Err(e) => panic!("embedded automaton at {start}..{end} does not load: {e}"),
            }
        })
    }

    /// Whether the automaton matches `text` (anywhere, or — `anchored` —
    /// from its start, as a path set's whole-path patterns do); `None` when
    /// it cannot answer for this text.
    pub(super) fn is_match(&self, text: &str, anchored: bool) -> Option<bool> {
        let dfa = self.dfa();
        let anchored = if anchored {
            Anchored::Yes
        } else {
            Anchored::No
        };
        let input = Input::new(text).earliest(true).anchored(anchored);
        dfa.try_search_fwd(&input).ok().map(|m| m.is_some())
    }

    /// Reads the DFA now, validating all of it; an error for one that does
    /// not load.
    #[cfg(test)]
    pub(super) fn check(&self) -> Result<(), String> {
        let (start, end) = self.at;
        DFA::from_bytes(&self.blob[start..end])
            .map(|_| ())
            .map_err(|e| format!("automaton at {start}..{end}: {e}"))
    }
}

/// A rule's regex: its ASCII form's DFA for ASCII texts (exact there, see
/// `toolgate_packs::automata`), the pattern itself, compiled on first use,
/// for any other text.
#[derive(Debug)]
pub(super) struct Pattern {
    /// As written in the pack.
    pub text: &'static str,
    /// Its ASCII form, split along its alternatives (any matching is a
    /// match); empty when the pattern has none.
    ascii: &'static [Automaton],
    unicode: OnceLock<Regex>,
}

impl Pattern {
    /// The pattern `text`, with the automata of its ASCII form.
    pub(super) const fn new(text: &'static str, ascii: &'static [Automaton]) -> Pattern {
        Pattern {
            text,
            ascii,
            unicode: OnceLock::new(),
        }
    }

    /// Whether the regex matches anywhere in `text`.
    pub(super) fn is_match(&self, text: &str) -> bool {
        if text.is_ascii() && !self.ascii.is_empty() {
            // A DFA that cannot answer (a quit byte: none is configured)
            // leaves the answer to the regex itself.
            let mut answered = true;
            for a in self.ascii {
                match a.is_match(text, false) {
                    Some(true) => return true,
                    Some(false) => {}
                    None => answered = false,
                }
            }
            if answered {
                return false;
            }
        }
        self.unicode().is_match(text)
    }

    /// The pattern for any text. The build compiled every pattern with the
    /// same engine, so a refusal here is a broken build: a panic, never a
    /// rule silently off.
    fn unicode(&self) -> &Regex {
        self.unicode.get_or_init(|| match Regex::new(self.text) {
            Ok(re) => re,
            Err(e) => panic!("pattern {:?} does not compile: {e}", self.text),
        })
    }

    /// Compiles the pattern and reads its automaton now; an error for either
    /// that fails.
    #[cfg(test)]
    pub(super) fn check(&self) -> Result<(), String> {
        Regex::new(self.text).map_err(|e| format!("{}: {e}", self.text))?;
        self.ascii
            .iter()
            .try_for_each(Automaton::check)
            .map_err(|e| format!("{}: {e}", self.text))
    }

    /// Whether the pattern has a DFA (an ASCII form the build compiled).
    #[cfg(test)]
    pub(super) fn has_automaton(&self) -> bool {
        !self.ascii.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Catalogue;
    use regex::Regex;

    /// What makes reading the embedded automata without re-validation
    /// sound: every one of them passes the validating read.
    #[test]
    fn every_embedded_automaton_validates() {
        let table = &super::super::tables::AUTOMATA;
        assert!(table.len() > 100, "only {} automata", table.len());
        for (i, a) in table.iter().enumerate() {
            assert!(a.embedded);
            assert_eq!(a.check(), Ok(()), "automaton {i}");
        }
        let end = table.iter().map(|a| a.at.1).max();
        assert_eq!(end, Some(super::BLOB.len()), "the table covers the blob");
    }

    /// A tiny deterministic generator, so the comparison covers the same
    /// texts on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
            &from[(self.next() % from.len() as u64) as usize]
        }
    }

    /// Every shipped pattern, through its embedded DFA or its Unicode form,
    /// answers like the pattern itself, on the packs' own examples (whole,
    /// by word, by run of words) and on texts made of pieces of the pattern,
    /// ASCII or not.
    #[test]
    fn embedded_automata_match_like_the_shipped_patterns() {
        let cat = Catalogue::builtin();
        let mut corpus: Vec<String> = Vec::new();
        for r in cat.exec {
            for ex in r.common.examples.iter().chain(r.common.counter_examples) {
                corpus.push(ex.to_string());
                let words: Vec<&str> = ex.split_whitespace().collect();
                for i in 0..words.len() {
                    corpus.push(words[i].to_string());
                    corpus.push(words[i..].join(" "));
                }
            }
        }
        let odd = [
            "", " ", "\n", "ſ", "\u{212A}", "é", "日本", "\u{a0}", "-", "=", "/", "x",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut compared, mut with_dfa, mut matched) = (0usize, 0usize, 0usize);
        let mut seen = Vec::new();
        for r in cat.exec {
            for i in r.patterns() {
                if seen.contains(&i) {
                    continue;
                }
                seen.push(i);
                let re = cat.pattern(i);
                let original = Regex::new(re.text).expect("shipped patterns compile");
                with_dfa += usize::from(re.has_automaton());
                // Pieces of the pattern: its words and its characters.
                let pieces: Vec<String> = re
                    .text
                    .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .chain(re.text.chars().map(String::from))
                    .chain(odd.iter().map(|s| s.to_string()))
                    .collect();
                let mut texts = corpus.clone();
                for _ in 0..400 {
                    let n = 1 + rng.next() % 6;
                    let mut t = String::new();
                    for _ in 0..n {
                        let piece: &String = rng.pick(&pieces);
                        t.push_str(piece);
                        if rng.next().is_multiple_of(2) {
                            t.push(' ');
                        }
                    }
                    texts.push(t.to_uppercase());
                    texts.push(t);
                }
                for t in &texts {
                    let m = original.is_match(t);
                    matched += usize::from(m);
                    assert_eq!(
                        re.is_match(t),
                        m,
                        "{} on {t:?} (rule {})",
                        re.text,
                        r.common.id
                    );
                    compared += 1;
                }
            }
        }
        assert!(with_dfa > 100, "only {with_dfa} patterns have an automaton");
        assert!(compared > 100_000, "only {compared} comparisons");
        assert!(matched > 5_000, "only {matched} of {compared} texts match");
    }
}
