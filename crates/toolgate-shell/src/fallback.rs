//! Lexical helpers: the exact fast path for plain commands, and a
//! conservative scan used when the parser reports an error.

use super::analyzer::Analyzer;
use super::scope::Scope;
use super::types::Word;

/// True for bytes that carry no shell meaning in any position.
fn plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b" \t-_./:,+@%".contains(&b)
}

/// For text without shell syntax, the words are known without parsing:
/// outside quotes only plain bytes (no operators, expansions, globs, `~`,
/// `=`, backslashes); inside single or double quotes anything but `$`,
/// backticks, backslashes, `!` and newlines, so quote removal is all there
/// is (`git commit -m 'fix: parser'`). Anything else goes to the parser.
pub(crate) fn plain_words(src: &str) -> Option<Vec<Word>> {
    if src.bytes().all(plain_byte) {
        return Some(src.split_whitespace().map(Word::lit).collect());
    }
    let mut quote: Option<u8> = None;
    for b in src.bytes() {
        match quote {
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if plain_byte(b) => {}
            None => return None,
            Some(q) if b == q => quote = None,
            Some(_) if matches!(b, b'$' | b'`' | b'\\' | b'!' | b'\n') => return None,
            Some(_) => {}
        }
    }
    if quote.is_some() {
        return None;
    }
    Some(segment_words(src).into_iter().map(Word::lit).collect())
}

/// Shell keywords that may start a segment in the lexical scan.
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case", "esac",
    "in", "function", "!", "time", "{", "}",
];

/// Splits text at unquoted control operators and reports each segment's
/// words as a simple command. Used only alongside an "unparsable" verdict,
/// so that a catastrophic command in broken syntax is still recognized.
pub(crate) fn scan(an: &mut Analyzer, src: &str, scope: &mut Scope) {
    for segment in segments(src).into_iter().take(256) {
        // `{rm,-rf,~}` is a command once braces expand: bash expands them
        // before it looks for the program.
        let words: Vec<String> = segment_words(&segment)
            .into_iter()
            .flat_map(|w| super::words::brace_expand(&w).unwrap_or_else(|| vec![w]))
            .collect();
        let mut i = 0;
        while i < words.len() && KEYWORDS.contains(&words[i].as_str()) {
            i += 1;
        }
        let argv: Vec<Word> = words[i..]
            .iter()
            .filter(|w| {
                !w.starts_with('>')
                    && !w.starts_with('<')
                    && !w.starts_with("2>")
                    && !w.starts_with("&>")
            })
            .map(|w| Word::lit(w.as_str()))
            .collect();
        if !argv.is_empty() {
            let mut s = scope.clone();
            s.via.push(super::Via {
                wrapper: "unparsed text".into(),
            });
            an.emit(argv, Vec::new(), Vec::new(), &mut s);
        }
    }
}

fn segments(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                } else if c == '\\'
                    && q == '"'
                    && let Some(n) = chars.next()
                {
                    cur.push(c);
                    cur.push(n);
                    continue;
                }
                cur.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    cur.push(c);
                }
                '\\' => {
                    cur.push(c);
                    if let Some(n) = chars.next() {
                        cur.push(n);
                    }
                }
                ';' | '&' | '|' | '\n' | '(' | ')' | '`' => out.push(std::mem::take(&mut cur)),
                '$' if chars.peek() == Some(&'(') => {
                    out.push(std::mem::take(&mut cur));
                    chars.next();
                }
                _ => cur.push(c),
            },
        }
    }
    out.push(cur);
    out.retain(|s| !s.trim().is_empty());
    out
}

/// Shell-like word splitting with quote removal (no expansions).
pub(super) fn segment_words(seg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut quote: Option<char> = None;
    let mut chars = seg.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (q, '\\') if q != Some('\'') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    any = true;
                }
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_split_exactly() {
        let w = plain_words("cargo test --release -p core").unwrap();
        assert_eq!(w.len(), 5);
        assert!(plain_words("rm -rf ~").is_none());
        assert!(plain_words("FOO=1 rm").is_none());
        assert!(plain_words("echo $HOME").is_none());
        let w = plain_words("git commit -m 'fix: rm -rf bug' --author \"A B\"").unwrap();
        let texts: Vec<&str> = w.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            texts,
            vec!["git", "commit", "-m", "fix: rm -rf bug", "--author", "A B"]
        );
        assert_eq!(plain_words("r''m -rf /").unwrap()[0].text, "rm");
        assert!(plain_words("echo \"$HOME\"").is_none());
        assert!(plain_words("echo 'a\\b'").is_none());
        assert!(plain_words("echo 'unterminated").is_none());
        assert!(plain_words("echo 'a' && rm").is_none());
    }

    #[test]
    fn segments_split_on_operators() {
        let s = segments("a 'x;y' ; b | c $(d) `e`");
        let words: Vec<Vec<String>> = s.iter().map(|x| segment_words(x)).collect();
        assert_eq!(
            words,
            vec![vec!["a", "x;y"], vec!["b"], vec!["c"], vec!["d"], vec!["e"]]
        );
    }

    #[test]
    fn a_brace_expansion_in_broken_syntax_is_a_command() {
        let env = toolgate_paths::Env::new("/home/dev", "/home/dev/proj");
        let a = crate::analyze("{rm,-rf,/home/dev}", &env);
        assert!(
            a.commands.iter().any(|c| c.display() == "rm -rf /home/dev"),
            "{:?}",
            a.commands
        );
    }
}
