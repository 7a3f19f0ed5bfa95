//! Word-level rules of the shell: quote removal, `$'…'` decoding, brace
//! expansion and line continuations. Pure string functions.

/// Removes backslash-newline pairs outside single quotes, as bash does before
/// tokenizing (tree-sitter-bash would otherwise split `r\⏎m` into two words).
pub fn join_continuations(src: &str) -> std::borrow::Cow<'_, str> {
    if !src.contains("\\\n") {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    let mut in_single = false;
    let mut in_double = false;
    while let Some(c) = chars.next() {
        match c {
            '\'' if !in_double => {
                in_single = !in_single;
                out.push(c);
            }
            '"' if !in_single => {
                in_double = !in_double;
                out.push(c);
            }
            '\\' if !in_single => match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some(&next) => {
                    out.push(c);
                    out.push(next);
                    chars.next();
                }
                None => out.push(c),
            },
            _ => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Unquoted word text: a backslash quotes the next character.
pub fn unescape_unquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Double-quoted text: a backslash quotes only `$`, `` ` ``, `"`, `\` and newline.
pub fn unescape_double(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some(&n) if matches!(n, '$' | '`' | '"' | '\\') => {
                    out.push(n);
                    chars.next();
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes the body of a `$'…'` string (without the `$'` and `'`).
pub fn decode_ansi_c(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    let take_digits =
        |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
            let mut v: u32 = 0;
            let mut n = 0;
            while n < max {
                match chars.peek().and_then(|c| c.to_digit(radix)) {
                    Some(d) => {
                        v = v * radix + d;
                        chars.next();
                        n += 1;
                    }
                    None => break,
                }
            }
            (v, n)
        };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'x' => {
                let (v, n) = take_digits(&mut chars, 16, 2);
                if n == 0 {
                    out.push_str("\\x");
                } else if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            'u' | 'U' => {
                let (v, n) = take_digits(&mut chars, 16, if e == 'u' { 4 } else { 8 });
                if n == 0 {
                    out.push('\\');
                    out.push(e);
                } else if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            'c' => {
                if let Some(ctl) = chars.next() {
                    out.push(char::from_u32((ctl as u32) & 0x1f).unwrap_or('?'));
                }
            }
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                if v == 0 {
                    // bash stops the string at NUL
                    break;
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// The most words one brace expansion may produce before giving up.
pub const MAX_BRACE_WORDS: usize = 64;

/// Bash brace expansion of one word: `a{b,c}d` → `abd acd`, `{1..3}` → `1 2 3`.
/// Returns `None` when the word has no expansion or it would exceed
/// [`MAX_BRACE_WORDS`] (the caller then keeps the word as it is).
pub fn brace_expand(word: &str) -> Option<Vec<String>> {
    if !word.contains('{') || !word.contains('}') {
        return None;
    }
    let out = expand_rec(word, 0)?;
    (out.len() > 1 || out.first().map(String::as_str) != Some(word)).then_some(out)
}

fn expand_rec(word: &str, depth: usize) -> Option<Vec<String>> {
    if depth > 8 {
        return None;
    }
    let bytes = word.as_bytes();
    // Find the first `{` whose matching `}` encloses a top-level `,` or `..`.
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{'
            && (i == 0 || bytes[i - 1] != b'$')
            && let Some((close, parts)) = split_brace(word, i)
        {
            let prefix = &word[..i];
            let suffix = &word[close + 1..];
            let mut out = Vec::new();
            for part in parts {
                let joined = format!("{prefix}{part}{suffix}");
                for w in expand_rec(&joined, depth + 1)? {
                    out.push(w);
                    if out.len() > MAX_BRACE_WORDS {
                        return None;
                    }
                }
            }
            return Some(out);
        }
        i += 1;
    }
    Some(vec![word.to_string()])
}

/// For the `{` at `open`, finds its `}` and the alternatives inside.
fn split_brace(word: &str, open: usize) -> Option<(usize, Vec<String>)> {
    let bytes = word.as_bytes();
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (j, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    let inner = &word[open + 1..j];
                    if !commas.is_empty() {
                        let mut parts = Vec::new();
                        let mut start = open + 1;
                        for &c in &commas {
                            parts.push(word[start..c].to_string());
                            start = c + 1;
                        }
                        parts.push(word[start..j].to_string());
                        return Some((j, parts));
                    }
                    return sequence(inner).map(|p| (j, p));
                }
            }
            b',' if depth == 1 => commas.push(j),
            _ => {}
        }
    }
    None
}

fn sequence(inner: &str) -> Option<Vec<String>> {
    let mut it = inner.split("..");
    let (a, b) = (it.next()?, it.next()?);
    let step: i64 = match it.next() {
        Some(s) => s.parse::<i64>().ok()?.abs().max(1),
        None => 1,
    };
    if it.next().is_some() {
        return None;
    }
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let n = (x - y).unsigned_abs() / step as u64 + 1;
        if n as usize > MAX_BRACE_WORDS {
            return None;
        }
        let dir = if y >= x { step } else { -step };
        return Some((0..n as i64).map(|k| (x + k * dir).to_string()).collect());
    }
    let (ca, cb) = (single_char(a)?, single_char(b)?);
    let (lo, hi) = (ca.min(cb) as u32, ca.max(cb) as u32);
    if (hi - lo) as usize >= MAX_BRACE_WORDS {
        return None;
    }
    let mut v: Vec<String> = (lo..=hi)
        .filter_map(char::from_u32)
        .map(String::from)
        .collect();
    if ca > cb {
        v.reverse();
    }
    Some(v)
}

fn single_char(s: &str) -> Option<char> {
    let mut c = s.chars();
    let first = c.next()?;
    (c.next().is_none() && first.is_ascii_alphabetic()).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuations_join_outside_single_quotes() {
        assert_eq!(join_continuations("r\\\nm -rf /"), "rm -rf /");
        assert_eq!(join_continuations("echo 'a\\\nb'"), "echo 'a\\\nb'");
        assert_eq!(join_continuations("echo \"a\\\nb\""), "echo \"ab\"");
    }

    #[test]
    fn ansi_c_strings_decode() {
        assert_eq!(decode_ansi_c("\\x72\\x6d"), "rm");
        assert_eq!(decode_ansi_c("\\162\\155"), "rm");
        assert_eq!(decode_ansi_c("\\u0072m"), "rm");
        assert_eq!(decode_ansi_c("a\\nb"), "a\nb");
        assert_eq!(decode_ansi_c("\\'"), "'");
    }

    #[test]
    fn braces_expand() {
        assert_eq!(
            brace_expand("/{etc,usr}"),
            Some(vec!["/etc".into(), "/usr".into()])
        );
        assert_eq!(
            brace_expand("a{1..3}"),
            Some(vec!["a1".into(), "a2".into(), "a3".into()])
        );
        assert_eq!(brace_expand("{a,{b,c}}x").map(|v| v.len()), Some(3));
        assert_eq!(brace_expand("${HOME}"), None);
        assert_eq!(brace_expand("{}"), None);
        assert_eq!(brace_expand("{1..100000}"), None);
    }

    #[test]
    fn unescaping() {
        assert_eq!(unescape_unquoted("\\rm"), "rm");
        assert_eq!(unescape_double("a\\$b\\x"), "a$b\\x");
    }
}
