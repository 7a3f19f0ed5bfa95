//! Values an interpreter one-liner computes from constants only, so that a
//! command it builds is judged as written out: string literals joined with
//! `+` or `.`, the user's home from the language's own lookup
//! (`os.path.expanduser('~')`, `os.homedir()`, `ENV['HOME']`, `Dir.home`,
//! `$ENV{HOME}`), and base64 literals decoded in place
//! (`base64.b64decode('cm0g…').decode()`, `atob('…')`).

use crate::decoders::decode_base64;

/// Expressions that are the user's home directory.
const HOME: &[&str] = &[
    "os.path.expanduser('~')",
    "os.path.expanduser(\"~\")",
    "os.environ['HOME']",
    "os.environ[\"HOME\"]",
    "os.environ.get('HOME')",
    "os.environ.get(\"HOME\")",
    "os.getenv('HOME')",
    "os.getenv(\"HOME\")",
    "str(Path.home())",
    "str(pathlib.Path.home())",
    "Path.home()",
    "pathlib.Path.home()",
    "os.homedir()",
    "require('os').homedir()",
    "require(\"os\").homedir()",
    "process.env.HOME",
    "process.env['HOME']",
    "ENV['HOME']",
    "ENV[\"HOME\"]",
    "ENV.fetch('HOME')",
    "Dir.home",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "getenv('HOME')",
    "getenv(\"HOME\")",
];

/// The value of `expr` when every part of it is a constant, else `None`.
pub(crate) fn value(expr: &str) -> Option<String> {
    let mut out = String::new();
    for part in split_top(expr.trim())? {
        out.push_str(&piece(part.trim())?);
    }
    Some(out)
}

/// `expr` split at `+` and ` . ` (Perl) outside quotes and brackets;
/// `None` when it has no such joint and is not a single known piece.
fn split_top(expr: &str) -> Option<Vec<&str>> {
    let bytes = expr.as_bytes();
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(_) if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'\'' | b'"' | b'`' => quote = Some(b),
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth -= 1,
                b'+' if depth == 0 => {
                    parts.push(&expr[start..i]);
                    start = i + 1;
                }
                b'.' if depth == 0
                    && i > 0
                    && bytes[i - 1] == b' '
                    && bytes.get(i + 1) == Some(&b' ') =>
                {
                    parts.push(&expr[start..i]);
                    start = i + 1;
                }
                _ => {}
            },
        }
        i += 1;
    }
    parts.push(&expr[start..]);
    Some(parts)
}

fn piece(p: &str) -> Option<String> {
    if HOME.contains(&p) {
        return Some("~".to_string());
    }
    if let Some(lit) = literal(p).or_else(|| interpolated(p)) {
        return Some(lit);
    }
    // base64 literals decoded in place
    for (open, close) in [
        ("base64.b64decode(", ").decode()"),
        ("base64.b64decode(", ").decode('utf-8')"),
        ("base64.b64decode(", ").decode(\"utf-8\")"),
        ("b64decode(", ").decode()"),
        ("atob(", ")"),
        ("Base64.decode64(", ")"),
        ("decode_base64(", ")"),
    ] {
        if let Some(inner) = p.strip_prefix(open).and_then(|r| r.strip_suffix(close)) {
            return decode_base64(&literal(inner.trim())?);
        }
    }
    if let Some(inner) = p
        .strip_prefix("Buffer.from(")
        .and_then(|r| r.strip_suffix(").toString()"))
    {
        let (lit, enc) = inner.rsplit_once(',')?;
        if literal(enc.trim())?.as_str() == "base64" {
            return decode_base64(&literal(lit.trim())?);
        }
    }
    None
}

/// A string whose only interpolations are the user's home: Perl's
/// `"… $ENV{HOME}"`, Ruby's `"… #{Dir.home}"`, JavaScript's
/// `` `… ${os.homedir()}` `` and Python's `f"… {Path.home()}"`. Any other
/// interpolation, or an escape, leaves the value unknown.
fn interpolated(p: &str) -> Option<String> {
    let (body, hole_open): (&str, &str) =
        if let Some(r) = p.strip_prefix("f\"").or_else(|| p.strip_prefix("f'")) {
            (r.get(..r.len().checked_sub(1)?)?, "{")
        } else if let Some(r) = p.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
            (r, "${")
        } else if let Some(r) = p.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            (r, if r.contains("#{") { "#{" } else { "$ENV{" })
        } else {
            return None;
        };
    if body.contains('\\') || body.len() > 4096 {
        return None;
    }
    let mut out = String::new();
    let mut rest = body;
    while let Some(at) = rest.find(hole_open) {
        out.push_str(&rest[..at]);
        let after = &rest[at + hole_open.len()..];
        let close = matching_brace(after)?;
        let expr = after[..close].trim();
        let whole = if hole_open == "$ENV{" {
            format!("$ENV{{{expr}}}")
        } else {
            expr.to_string()
        };
        if !HOME.contains(&whole.as_str()) {
            return None;
        }
        out.push('~');
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    (!out.contains(['$', '{', '}', '`'])).then_some(out)
}

/// The index of the `}` closing a hole whose `{` was just before `text`.
fn matching_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(i),
            b'}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// A quoted string literal's content (no interpolation inside).
fn literal(p: &str) -> Option<String> {
    let p = p.strip_prefix('b').unwrap_or(p);
    for q in ['\'', '"'] {
        if let Some(inner) = p.strip_prefix(q).and_then(|r| r.strip_suffix(q))
            && !inner.contains(q)
            && !inner.contains(['$', '{', '\\'])
        {
            return Some(inner.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::value;

    #[test]
    fn constants_are_computed() {
        assert_eq!(
            value("'rm -rf ' + os.environ['HOME']").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            value("base64.b64decode('cm0gLXJmIH4=').decode()").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            value("\"rm -rf \" . $ENV{HOME}").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(value("ENV[\"HOME\"]").as_deref(), Some("~"));
        assert_eq!(value("\"rm -rf $ENV{HOME}\"").as_deref(), Some("rm -rf ~"));
        assert_eq!(
            value("\"rm -rf #{Dir.home}/\"").as_deref(),
            Some("rm -rf ~/")
        );
        assert_eq!(
            value("`rm -rf ${os.homedir()}`").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            value("f\"rm -rf {os.path.expanduser('~')}\"").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(value("\"rm -rf $ENV{TARGET}\""), None);
        assert_eq!(value("f\"rm -rf {target}\""), None);
        assert_eq!(value("`rm ${a}${os.homedir()}`"), None);
        assert_eq!(value("atob('cm0gLXJmIH4=')").as_deref(), Some("rm -rf ~"));
    }

    #[test]
    fn anything_computed_at_run_time_is_not() {
        assert_eq!(value("'rm -rf ' + target"), None);
        assert_eq!(value("input()"), None);
        assert_eq!(value("f'rm -rf {x}'"), None);
        assert_eq!(value("\"a\" + \"$x\""), None);
    }
}
