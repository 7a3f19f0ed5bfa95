//! Reading an argv the way getopt-style programs do: flags (with short
//! clusters and long-option abbreviations), option values, and operands.

use crate::shell::Word;

/// One argument of a command, classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arg<'a> {
    /// A flag token (`-rf`, `--force`, `--force=yes`).
    Flag(&'a Word),
    /// The value of the preceding option (`-C dir`).
    Value(&'a Word),
    /// An operand (file, subcommand, refspec …).
    Operand(&'a Word),
}

/// Classifies `args` (argv without `argv[0]`); `value_opts` lists the options
/// of this program that take the next word as their value.
pub(crate) fn classify<'a>(args: &'a [Word], value_opts: &[&str]) -> Vec<Arg<'a>> {
    let mut out = Vec::with_capacity(args.len());
    let mut operands_only = false;
    let mut expect_value = false;
    for w in args {
        let t = w.text.as_str();
        if expect_value {
            out.push(Arg::Value(w));
            expect_value = false;
        } else if operands_only || !t.starts_with('-') || t == "-" || w.dynamic {
            out.push(Arg::Operand(w));
        } else if t == "--" {
            operands_only = true;
        } else {
            expect_value = !t.contains('=') && value_opts.contains(&t);
            out.push(Arg::Flag(w));
        }
    }
    out
}

/// The operands of `args`, in order.
pub(crate) fn operands<'a, 'b>(classified: &'b [Arg<'a>]) -> impl Iterator<Item = &'a Word> + 'b {
    classified.iter().filter_map(|a| match a {
        Arg::Operand(w) => Some(*w),
        _ => None,
    })
}

/// True when the flag `want` (`-r`, `--recursive`, `-delete`) is present.
///
/// A one-letter rule flag matches that letter inside a short cluster (`-fr`);
/// a long rule flag matches any unambiguous-looking abbreviation (`--rec`),
/// as GNU getopt and git accept them, and `--flag=value`; any other rule flag
/// (`-delete`, `-exec`) matches only itself.
pub(crate) fn has_flag(classified: &[Arg<'_>], want: &str) -> bool {
    classified.iter().any(|a| match a {
        Arg::Flag(w) => flag_matches(&w.text, want),
        _ => false,
    })
}

fn flag_matches(token: &str, want: &str) -> bool {
    if token == want {
        return true;
    }
    if let Some(long) = want.strip_prefix("--") {
        let Some(given) = token.strip_prefix("--") else {
            return false;
        };
        let name = given.split('=').next().unwrap_or(given);
        return name == long || (name.len() >= 2 && long.starts_with(name));
    }
    let mut want_chars = want.chars();
    if let (Some('-'), Some(letter), None) =
        (want_chars.next(), want_chars.next(), want_chars.next())
        && let Some(cluster) = token.strip_prefix('-')
    {
        if cluster.starts_with('-') {
            return false;
        }
        // `-i.bak`, `-n5`: a short option with its value attached
        if cluster.starts_with(letter) {
            return true;
        }
        return cluster.chars().all(|c| c.is_ascii_alphanumeric()) && cluster.contains(letter);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::lit).collect()
    }

    #[test]
    fn flags_in_clusters_and_abbreviations() {
        let w = words("-fr --no-preserve-root / --rec");
        let c = classify(&w, &[]);
        assert!(has_flag(&c, "-r"));
        assert!(has_flag(&c, "-f"));
        assert!(!has_flag(&c, "-R"));
        assert!(has_flag(&c, "--recursive"));
        assert!(has_flag(&c, "--no-preserve-root"));
        assert!(!has_flag(&c, "--force"));
        assert_eq!(
            operands(&c).map(|w| w.text.as_str()).collect::<Vec<_>>(),
            vec!["/"]
        );
    }

    #[test]
    fn option_values_are_not_operands() {
        let w = words("-C /tmp push origin -- -weird");
        let c = classify(&w, &["-C"]);
        assert_eq!(
            operands(&c).map(|w| w.text.as_str()).collect::<Vec<_>>(),
            vec!["push", "origin", "-weird"]
        );
    }

    #[test]
    fn find_style_flags_match_whole() {
        let w = words(". -name x -delete");
        let c = classify(&w, &[]);
        assert!(has_flag(&c, "-delete"));
        assert!(!has_flag(&c, "-exec"));
    }
}
