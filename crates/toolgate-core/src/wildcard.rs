//! The wildcard matchers, in one leaf module that imports nothing else of
//! the crate, so the catalogue and the policy share them without
//! importing each other. Two semantics, each kept exactly as its callers
//! had it: shell pathname matching for paths and hosts ([`path_match`]) and
//! plain `*` matching for tool names ([`star_match`]).

/// True when `text` has characters the shell would expand as a pathname
/// glob (`*`, `?` or `[`).
pub(crate) fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Shell-style matching of a glob against a concrete path: `*` and `?`
/// stay within one `/`-separated component (and so never cross `/`), a
/// component that is exactly `**` spans any number of components, `[…]` is
/// a class of bytes (`!` or `^` first negates, `a-z` is a range, a `]`
/// right after the opening bracket is literal) and an unterminated `[` is
/// literal. Matching is on bytes and case sensitive; nothing is compiled,
/// since arguments are one-off. Patterns nested deeper than 64 components
/// do not match.
pub(crate) fn path_match(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.split('/').collect();
    let txt: Vec<&str> = path.split('/').collect();
    match_components(&pat, &txt, 0)
}

fn match_components(pat: &[&str], txt: &[&str], depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    match pat.split_first() {
        None => txt.is_empty(),
        Some((&"**", rest)) => {
            (0..=txt.len()).any(|skip| match_components(rest, &txt[skip..], depth + 1))
        }
        Some((p, rest)) => match txt.split_first() {
            Some((t, trest)) => {
                match_segment(p.as_bytes(), t.as_bytes())
                    && match_components(rest, trest, depth + 1)
            }
            None => false,
        },
    }
}

/// One component: the two-pointer wildcard algorithm with `[…]` classes.
fn match_segment(p: &[u8], t: &[u8]) -> bool {
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class_match(&p[pi..], t[ti]) {
                        if matched {
                            pi += next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == b'[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Matches one byte against a `[…]` class at the start of `p`; returns
/// (matched, class length), or `None` when the class is unterminated.
fn class_match(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        if i + 2 < p.len() && p[i + 1] == b'-' && p[i + 2] != b']' {
            matched |= p[i] <= c && c <= p[i + 2];
            i += 3;
        } else {
            matched |= p[i] == c;
            i += 1;
        }
        first = false;
    }
    None
}

/// Name matching for tool and server names: `*` matches any run of
/// characters (`/` included, the empty run too); every other character,
/// `?` and `[` included, matches itself.
pub(crate) fn star_match(pat: &str, text: &str) -> bool {
    let mut parts = pat.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let mut parts: Vec<&str> = parts.collect();
    let Some(last) = parts.pop() else {
        // No star at all.
        return rest.is_empty();
    };
    for p in parts {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(path_match("/e*", "/etc"));
        assert!(!path_match("/e*", "/etc/x"));
        assert!(path_match("/**/*.pem", "/a/b/c.pem"));
        assert!(path_match("/[e]tc", "/etc"));
        assert!(path_match("/[!a]tc", "/etc"));
        assert!(!path_match("/[!e]tc", "/etc"));
        assert!(path_match("/e??", "/etc"));
    }

    #[test]
    fn path_match_never_crosses_slash() {
        assert!(path_match("/*", "/etc"));
        assert!(!path_match("/*", "/etc/passwd"));
        assert!(path_match("/e?c", "/etc"));
        assert!(path_match("/[ab]in", "/bin"));
        assert!(path_match("/home/*/x", "/home/dev/x"));
        assert!(!path_match("/home/*/x", "/home/a/b/x"));
        assert!(path_match("/x*", "/x"));
        assert!(!path_match("/x", "/x/y"));
        assert!(path_match("/[", "/["));
        assert!(path_match("/a[]b]c", "/a]c"));
    }

    #[test]
    fn star_match_basics() {
        assert!(star_match("*", ""));
        assert!(star_match("a*", "abc"));
        assert!(star_match("*c", "abc"));
        assert!(star_match("a*c", "abc"));
        assert!(star_match("a*b*c", "aXbYc"));
        assert!(!star_match("a*b*c", "aXbY"));
        assert!(!star_match("abc", "abcd"));
        assert!(!star_match("a*a", "a"));
    }

    #[test]
    fn the_two_semantics_differ_where_they_should() {
        // `*` crosses `/` only in names; `?` and `[` are literal only there.
        assert!(star_match("a*", "a/b"));
        assert!(!path_match("a*", "a/b"));
        assert!(star_match("a?", "a?"));
        assert!(!star_match("a?", "ab"));
        assert!(path_match("a?", "ab"));
        assert!(star_match("[ab]", "[ab]"));
        assert!(path_match("[ab]", "a"));
        assert!(is_glob("a*") && is_glob("a?") && is_glob("a[") && !is_glob("a/b"));
    }

    use proptest::prelude::*;

    /// Patterns and texts over a small alphabet heavy in the characters
    /// that matter (wildcards, classes, separators, a multi-byte letter), so
    /// random pairs often match and often nearly match.
    fn pattern() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("*"),
                Just("**"),
                Just("?"),
                Just("/"),
                Just("["),
                Just("]"),
                Just("!"),
                Just("^"),
                Just("-"),
                Just("a"),
                Just("b"),
                Just("."),
                Just("é"),
            ],
            0..12,
        )
        .prop_map(|v| v.concat())
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("a"),
                Just("b"),
                Just("/"),
                Just("."),
                Just("["),
                Just("]"),
                Just("*"),
                Just("?"),
                Just("-"),
                Just("é"),
            ],
            0..12,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Text with no wildcard matches itself and nothing else, under both
        /// semantics.
        #[test]
        fn a_literal_matches_only_itself(p in "[ab/.é\\]-]{0,10}", t in text()) {
            prop_assert!(path_match(&p, &p));
            prop_assert!(star_match(&p, &p));
            prop_assert_eq!(path_match(&p, &t), p == t);
            prop_assert_eq!(star_match(&p, &t), p == t);
            let longer = format!("{p}a");
            prop_assert!(!path_match(&p, &longer) && !star_match(&p, &longer));
        }

        /// A lone `*` is one path component, but any name at all.
        #[test]
        fn a_lone_star(t in text()) {
            prop_assert!(star_match("*", &t));
            prop_assert_eq!(path_match("*", &t), !t.contains('/'));
        }

        /// A trailing `/**` matches everything below a literal directory.
        #[test]
        fn double_star_spans_components(dir in "[a-z]{1,6}", below in text()) {
            let pattern = format!("/{dir}/**");
            let inside = format!("/{dir}/{below}");
            let beside = format!("/{dir}x/{below}");
            prop_assert!(path_match(&pattern, &inside));
            prop_assert!(!path_match(&pattern, &beside));
        }

        /// Neither matcher panics or recurses without bound on any input.
        #[test]
        fn any_strings_are_answered(p in pattern(), t in ".{0,16}") {
            let _ = (path_match(&p, &t), star_match(&p, &t));
        }
    }
}
