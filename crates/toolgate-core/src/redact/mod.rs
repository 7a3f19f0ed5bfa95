//! Redaction of secrets in what toolgate stores and shows: tool-call params
//! (and reasons derived from them) go through here before they reach the
//! audit log or an operator's screen.
//!
//! Everything works on a copy or on text the caller owns; the approval
//! binding hash is computed elsewhere on the unredacted params, so nothing
//! here may be needed to reproduce them.
//!
//! Two mechanisms:
//! * an object key that names a secret ([`is_secret_key`]) has its whole
//!   value replaced ([`redact_value`]);
//! * every other string is scanned for secret-shaped text ([`redact_text`]):
//!   well-known token formats, private-key blocks, HTTP credentials,
//!   `NAME=value` assignments whose name is a secret key, URL passwords.
//!
//! Every replacement is `[REDACTED:<kind>]`, and redacting redacted output
//! changes nothing (the scanners leave a value that already is a marker).
//!
//! Not handled, on purpose: `mysql -pSECRET` (a glued `-p` flag is too
//! ambiguous across tools to redact without breaking ordinary commands) and
//! `curl -u user:pass` (the flag has no secret-ish name).

use regex::{Captures, Regex};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::LazyLock;

#[cfg(test)]
mod tests;

/// How every replacement starts. A replacement is the whole text
/// `[REDACTED:<kind>]`, where kind is a short kebab-case label of what
/// matched (`github-token`, `password`, `private-key`, …); searching stored
/// text for this prefix finds every redaction.
pub const MARK_PREFIX: &str = "[REDACTED";

/// Replaces the secret-shaped parts of free text with `[REDACTED:<kind>]`,
/// keeping everything around them (a header's name and scheme, an
/// assignment's name and quotes, a URL's user and host).
///
/// Returns `Cow::Borrowed` when nothing was replaced; that case costs one
/// regex scan and no allocation. Idempotent: redacting the output again
/// returns it unchanged (and borrowed). Never panics.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    // The common case: one scan, no match, nothing allocated.
    let Some(first) = SCANNER.find(text) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::new();
    // text[..copied] is in `out`, redacted.
    let mut copied = 0;
    // Matches are searched in text[base..]: after a redaction the scanner
    // starts afresh, so `\b` and `^` see a start of text where a second pass
    // would see the marker's `]`. This is what makes the result idempotent.
    let mut base = 0;
    let mut pos = first.start();
    while pos < text.len() {
        let hay = &text[base..];
        let Some(caps) = SCANNER.captures_at(hay, pos - base) else {
            break;
        };
        let start = base + caps.get(0).map_or(pos - base, |m| m.start());
        let (head_end, secret, resume) = match step(hay, &caps) {
            Step::Redact { span, kind } => {
                let span = (base + span.0, base + span.1);
                (span.0, Some((span, kind)), span.1)
            }
            Step::Keep { head_end, resume } => (base + head_end, None, base + resume),
            Step::Skip { resume } => (start, None, base + resume),
        };
        // The part of the match left in place (a URL's user, an assignment's
        // name) was passed over by this scan, so it gets a scan of its own:
        // `https://ghp_…:x-oauth-basic@github.com` must lose the token too.
        // (Only ever a strict part of `text`, so the recursion ends.)
        if head_end > start
            && head_end - start < text.len()
            && let Cow::Owned(head) = redact_text(&text[start..head_end])
        {
            out.push_str(&text[copied..start]);
            out.push_str(&head);
            copied = head_end;
            if head.ends_with(']') {
                base = head_end;
            }
        }
        if let Some(((from, to), kind)) = secret {
            out.push_str(&text[copied..from]);
            out.push_str(&marker(kind));
            copied = to;
            base = to;
        }
        pos = resume;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// A deep copy of `value` with its secrets redacted:
/// * the value of an object key that names a secret ([`is_secret_key`]) is
///   replaced wholesale by the string `[REDACTED:<kind>]`, whatever its type,
///   except `null`, `""` and booleans, which cannot carry a secret and are
///   kept (`"password_required": true` stays readable);
/// * every other string, at any depth, goes through [`redact_text`].
///
/// Object keys are kept as they are. `value` itself is not changed.
pub fn redact_value(value: &Value) -> Value {
    let mut copy = value.clone();
    redact_in_place(&mut copy);
    copy
}

/// [`redact_value`] in place. Returns whether anything changed; on already
/// redacted input it changes nothing and returns `false`.
pub fn redact_in_place(value: &mut Value) -> bool {
    match value {
        Value::String(s) => match redact_text(s) {
            Cow::Owned(r) => {
                *s = r;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| redact_in_place(v) | changed),
        Value::Object(map) => map.iter_mut().fold(false, |changed, (key, v)| {
            let this = match secret_key_kind(key) {
                Some(kind) => replace_secret(v, kind),
                None => redact_in_place(v),
            };
            this | changed
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// Whether an object key (or the name in `NAME=value`, `--flag value`) names
/// a secret.
///
/// The key is split into words on every non-alphanumeric character (`_`,
/// `-`, `.`, space, …), on lower→Upper and Acronym→Word camelCase
/// boundaries (`APIKey` → `api key`) and between letters and digits; words
/// are lowercased. It is a secret when:
/// * a word ends with password, passwd, passphrase, secret, token, apikey,
///   authorization, cookie or credential (or their plurals, except
///   `tokens`, which counts tokens): `PGPASSWORD`, `client_secret`,
///   `authToken`, `Set-Cookie`;
/// * or two adjacent words are api+key, access+key, private+key,
///   secret+key, client+secret, session+key, auth+token or refresh+token,
///   or a word is `pwd`;
/// * or the whole key (leading dashes dropped) is `pwd`, `pass`, `auth`,
///   `x-api-key` or `set-cookie`, any case.
///
/// Except when:
/// * the last word is file, path, url, uri, dir or endpoint: the value
///   locates the secret rather than being it (`--token-file`,
///   `passwordFile`);
/// * the secret word is `token` used as a count: preceded by max, min, num
///   or total, or followed by count, limit, usage, type, budget (and
///   plurals): `token_count`, `tokenLimit`, `max_token`;
/// * the key is exactly `PWD`, the shell's working-directory variable.
///
/// So `max_tokens`, `tokens_used`, `token_type`, `author`, `keyboard`,
/// `key`, `passage`, `tokenizer`, `primary_key` are not secrets.
pub fn is_secret_key(key: &str) -> bool {
    secret_key_kind(key).is_some()
}

/// The kind label of a secret key, or `None` (see [`is_secret_key`]).
fn secret_key_kind(key: &str) -> Option<&'static str> {
    let key = key.trim_start_matches('-');
    if key == "PWD" {
        return None;
    }
    let whole = [
        ("pwd", "password"),
        ("pass", "password"),
        ("auth", "auth"),
        ("x-api-key", "api-key"),
        ("set-cookie", "cookie"),
    ];
    if let Some((_, kind)) = whole.iter().find(|(k, _)| key.eq_ignore_ascii_case(k)) {
        return Some(kind);
    }
    let words = split_words(key);
    let last = words.last()?;
    if ["file", "path", "url", "uri", "dir", "endpoint"].contains(&last.as_str()) {
        return None;
    }
    let word = |i: usize| words.get(i).map_or("", String::as_str);
    for i in 0..words.len() {
        let pair = PAIRS
            .iter()
            .find(|(a, b, _)| word(i) == *a && word(i + 1) == *b);
        if let Some((_, b, kind)) = pair
            && !(*b == "token" && token_is_count(&words, i + 1))
        {
            return Some(kind);
        }
        if word(i) == "pwd" {
            return Some("password");
        }
        let single = WORD_SUFFIXES.iter().find(|(s, _)| word(i).ends_with(s));
        if let Some((suffix, kind)) = single
            && !(*suffix == "token" && token_is_count(&words, i))
        {
            return Some(kind);
        }
    }
    None
}

/// Adjacent word pairs that name a secret, with their kind.
const PAIRS: &[(&str, &str, &str)] = &[
    ("api", "key", "api-key"),
    ("access", "key", "access-key"),
    ("private", "key", "private-key"),
    ("secret", "key", "secret-key"),
    ("client", "secret", "client-secret"),
    ("session", "key", "session-key"),
    ("auth", "token", "auth-token"),
    ("refresh", "token", "refresh-token"),
];

/// Word endings that name a secret, with their kind. Endings rather than
/// whole words so that run-together names (`PGPASSWORD`, `GITHUBTOKEN`,
/// `clientsecret`) count; `tokens` is absent on purpose (a count).
const WORD_SUFFIXES: &[(&str, &str)] = &[
    ("password", "password"),
    ("passwords", "password"),
    ("passwd", "password"),
    ("passphrase", "passphrase"),
    ("secret", "secret"),
    ("secrets", "secret"),
    ("token", "token"),
    ("apikey", "api-key"),
    ("privatekey", "private-key"),
    ("secretkey", "secret-key"),
    ("accesskey", "access-key"),
    ("sessionkey", "session-key"),
    ("authorization", "authorization"),
    ("cookie", "cookie"),
    ("cookies", "cookie"),
    ("credential", "credential"),
    ("credentials", "credential"),
];

/// Whether the `token` word at `i` counts tokens (`max_token`,
/// `token_count`) rather than holding one.
fn token_is_count(words: &[String], i: usize) -> bool {
    let before = i.checked_sub(1).and_then(|j| words.get(j));
    let after = words.get(i + 1);
    before.is_some_and(|w| ["max", "min", "num", "total"].contains(&w.as_str()))
        || after.is_some_and(|w| {
            let w = w.strip_suffix('s').unwrap_or(w);
            ["count", "limit", "usage", "type", "budget"].contains(&w)
        })
}

/// Splits a key into lowercase words (see [`is_secret_key`]).
fn split_words(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|j| chars.get(j))
            && prev.is_alphanumeric()
        {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next_lower)
                || (prev.is_numeric() != c.is_numeric());
            if boundary && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Replaces the value under a secret key; `null`, `""` and booleans stay.
fn replace_secret(value: &mut Value, kind: &str) -> bool {
    match value {
        Value::Null | Value::Bool(_) => false,
        Value::String(s) if s.is_empty() => false,
        _ => {
            let mark = marker(kind);
            if value.as_str() == Some(mark.as_str()) {
                return false;
            }
            *value = Value::String(mark);
            true
        }
    }
}

fn marker(kind: &str) -> String {
    format!("{MARK_PREFIX}:{kind}]")
}

/// Whether `s` is exactly one marker; such values are left alone, which is
/// what makes redaction idempotent.
fn is_marker(s: &str) -> bool {
    s.strip_prefix(MARK_PREFIX)
        .and_then(|r| r.strip_prefix(':'))
        .and_then(|r| r.strip_suffix(']'))
        .is_some_and(|kind| {
            !kind.is_empty()
                && kind
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

/// `$NAME` or `${NAME}`: a reference to a secret, not the secret; keeping it
/// keeps audit entries like `PGPASSWORD=$PGPASS psql` readable.
fn is_variable_ref(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('$') else {
        return false;
    };
    let name = rest
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .unwrap_or(rest);
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The header line of a private-key block (PEM, OpenSSH, PGP).
const PEM_HEADER_PATTERN: &str = "-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----";

/// [`PEM_HEADER_PATTERN`] at the start of a text.
static PEM_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("^{PEM_HEADER_PATTERN}")).expect("the key-block header regex compiles")
});

/// The one scanner: every pattern is an alternative of one regex, so text
/// without secrets costs a single `find`. Alternatives that start at the
/// same place are tried in order (names first, Anthropic before OpenAI,
/// headers before generic assignments). Named groups say which alternative matched and
/// where the secret part is; the rest is decided in [`step`].
static SCANNER: LazyLock<Regex> = LazyLock::new(|| {
    // Characters of a variable, key or flag name.
    let name = r"[A-Za-z0-9_.-]*";
    // A name is a candidate if it contains one of these; secret_key_kind
    // decides (so `max_tokens=5` is looked at and let go).
    let trigger = r"(?i:pass|pwd|secret|token|key|auth|cookie|credential)";
    let schemes = r"(?i:bearer|basic|token|digest|bot|negotiate|ntlm|oauth|api-?key|key|aws4-hmac-sha256)";
    let alternatives = [
        // Named values, all behind one boundary (start of text or a
        // character that cannot be part of the name). First, so that at the
        // start of a text a name wins over a token inside it, as it does
        // everywhere else by starting one character earlier. The value is
        // read in code (assignment_value), so a name that turns out not to
        // be a secret costs no more than its own length.
        format!(
            r#"(?:^|[^A-Za-z0-9_.-])(?:(?P<ah>{name}(?i:authorization))["']?[ \t]*(?P<ahsep>[:=])[ \t]*["']?(?:(?P<ahscheme>{schemes})[ \t]+)?|(?P<ck>{name}(?i:cookie))["']?[ \t]*:[ \t]*["']?|(?P<flag>--?{name}{trigger}{name})(?:[ \t]+|=)|(?P<name>{name}{trigger}{name})(?:[ \t]*=[ \t]*|:[ \t]+|["'][ \t]*[:=][ \t]*))"#
        ),
        format!("(?P<pem>{PEM_HEADER_PATTERN})"),
        // No \b after the 16 characters: what follows may be redacted, and
        // a redaction must not change what matches before it.
        r"(?P<awsid>(?-u:\b)(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16})".to_owned(),
        r#"(?i:aws_secret_access_key|secretaccesskey)["']?(?:[ \t]*[=:][ \t]*|[ \t]+)["']?(?P<awssecret>[A-Za-z0-9/+=]{20,})"#
            .to_owned(),
        // No leading \b: these prefixes are distinctive enough, and a token
        // glued to a word (`MY_ghp_…`) must still go.
        r"(?P<github>gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})".to_owned(),
        r"(?P<anthropic>(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,})".to_owned(),
        r"(?P<openai>(?-u:\b)sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,})".to_owned(),
        r"(?P<slack>(?-u:\b)(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,})".to_owned(),
        r"https?://hooks\.slack\.com/services/(?P<slackhook>T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+)"
            .to_owned(),
        r"(?P<stripe>(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})".to_owned(),
        r"(?P<google>AIza[0-9A-Za-z_-]{35,})".to_owned(),
        // The signature may be empty (`alg: none`); the claims are still
        // worth hiding.
        r"(?P<jwt>eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)".to_owned(),
        // scheme://user:PASSWORD@host; the last `@` before the path wins,
        // as in browsers. The user may be empty (`redis://:pw@host`).
        r#"[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/?#@'"\[\]]*:(?P<urlpass>[^\s/?#'"]+)@"#.to_owned(),
        r"(?-u:\b)(?i:bearer)[ \t]+(?P<bearer>[A-Za-z0-9._~+/=-]{8,})".to_owned(),
    ];
    Regex::new(&alternatives.join("|")).expect("the redaction scanner compiles")
});

/// Whole-match token formats and their kinds.
const TOKENS: &[(&str, &str)] = &[
    ("awsid", "aws-access-key-id"),
    ("awssecret", "aws-secret-access-key"),
    ("github", "github-token"),
    ("anthropic", "anthropic-key"),
    ("slack", "slack-token"),
    ("slackhook", "slack-webhook"),
    ("stripe", "stripe-key"),
    ("google", "google-api-key"),
    ("jwt", "jwt"),
];

/// What to do with one match of the scanner.
enum Step {
    /// Replace `span` (byte range) with a marker of `kind`; continue after it.
    Redact {
        span: (usize, usize),
        kind: &'static str,
    },
    /// Nothing to replace (a marker, a `$VAR`, a name that is not a
    /// secret); the match up to `head_end` still gets a scan of its own.
    Keep { head_end: usize, resume: usize },
    /// Not a secret and nothing inside it can be: continue at `resume`.
    Skip { resume: usize },
}

fn step(text: &str, caps: &Captures<'_>) -> Step {
    let whole = caps.get(0).expect("group 0 always matches");
    let redact = |m: regex::Match<'_>, kind| Step::Redact {
        span: (m.start(), m.end()),
        kind,
    };
    if let Some(m) = caps.name("pem") {
        return Step::Redact {
            span: (m.start(), key_block_end(text, m.as_str(), m.end())),
            kind: "private-key",
        };
    }
    if let Some((m, kind)) = TOKENS
        .iter()
        .find_map(|(group, kind)| caps.name(group).map(|m| (m, *kind)))
    {
        return redact(m, kind);
    }
    if let Some(m) = caps.name("openai") {
        // `sk-` + 20 characters is also the shape of hyphenated words
        // (`sk-learn-…`); real keys mix digits and both cases.
        let body = &m.as_str()[3..];
        let mixed = body.bytes().any(|b| b.is_ascii_digit())
            && body.bytes().any(|b| b.is_ascii_uppercase())
            && body.bytes().any(|b| b.is_ascii_lowercase());
        return if mixed {
            redact(m, "openai-key")
        } else {
            Step::Skip { resume: m.end() }
        };
    }
    if let Some(m) = caps.name("bearer") {
        // "Bearer authentication" is prose; a token is not one lowercase word.
        return if m.as_str().bytes().all(|b| b.is_ascii_lowercase()) {
            Step::Skip { resume: m.end() }
        } else {
            redact(m, "bearer-token")
        };
    }
    if let Some(m) = caps.name("urlpass") {
        return value_step(m.start(), m.end(), "url-password", text);
    }
    if let Some(sep) = caps.name("ahsep") {
        let kind = match caps.name("ahscheme").map(|s| s.as_str().to_ascii_lowercase()) {
            Some(s) if s == "bearer" => "bearer-token",
            Some(s) if s == "basic" => "basic-auth",
            _ => "authorization",
        };
        // `Authorization: …` runs to the end of the line or quote (schemes
        // like AWS4-HMAC-SHA256 have several parts); `authorization=…` is a
        // query parameter and stops like any value.
        let end = if sep.as_str() == ":" {
            header_value_end(text, whole.end())
        } else {
            plain_value_end(text, whole.end())
        };
        return value_step(whole.end(), end, kind, text);
    }
    if caps.name("ck").is_some() {
        // A Cookie header carries several `name=value;` pairs: all of it goes.
        let end = header_value_end(text, whole.end());
        return value_step(whole.end(), end, "cookie", text);
    }
    let Some(name) = caps.name("flag").or_else(|| caps.name("name")) else {
        // Every alternative has a named group; this keeps the loop moving
        // should one be added without a case here.
        return Step::Skip { resume: whole.end() };
    };
    let not_secret = Step::Keep {
        head_end: name.end(),
        resume: name.end(),
    };
    let Some(kind) = secret_key_kind(name.as_str()) else {
        return not_secret;
    };
    let Some((inner, end)) = assignment_value(text, whole.end()) else {
        return not_secret;
    };
    if let Some(header) = PEM_HEADER.find(&text[inner.0..]) {
        // A key block as the value: all of it goes, lines and all, not just
        // the value's first word or line; so does the rest of a quoted
        // value (`"-----BEGIN …-----\n"` in JSON).
        let end = key_block_end(text, header.as_str(), inner.0 + header.end()).max(inner.1);
        return Step::Redact {
            span: (inner.0, end),
            kind: "private-key",
        };
    }
    match value_step(inner.0, inner.1, kind, text) {
        Step::Keep { head_end, .. } => Step::Keep { head_end, resume: end },
        other => other,
    }
}

/// Where the key block whose header line `header` ends at `from` ends:
/// after the matching END line, or at the end of the text if there is none
/// (the rest of it is key material).
fn key_block_end(text: &str, header: &str, from: usize) -> usize {
    let end_line = header.replacen("BEGIN", "END", 1);
    text[from..]
        .find(&end_line)
        .map_or(text.len(), |i| from + i + end_line.len())
}

/// Redacts `start..end` unless it is empty, already a marker, or a `$VAR`.
fn value_step(start: usize, end: usize, kind: &'static str, text: &str) -> Step {
    let value = &text[start..end];
    if value.is_empty() || is_marker(value) || is_variable_ref(value) {
        Step::Keep {
            head_end: start,
            resume: end,
        }
    } else {
        Step::Redact {
            span: (start, end),
            kind,
        }
    }
}

/// End of a header value starting at `at`: the end of the line or the next
/// quote, trailing blanks excluded.
fn header_value_end(text: &str, at: usize) -> usize {
    let rest = &text[at..];
    let len = rest.find(['\r', '\n', '\'', '"']).unwrap_or(rest.len());
    at + rest[..len].trim_end().len()
}

/// End of an unquoted value starting at `at`: whitespace, `&`, `;` or a
/// quote ends it (a query string, a command line, an env file).
fn plain_value_end(text: &str, at: usize) -> usize {
    let rest = &text.as_bytes()[at..];
    let stop = |b: &u8| b.is_ascii_whitespace() || b"&;'\"".contains(b);
    at + rest.iter().position(stop).unwrap_or(rest.len())
}

/// The value of an assignment starting at `at`: `(inner span, end)`, where
/// inner excludes the quotes. Quoted values end at the closing quote (a
/// backslash escapes in double quotes) or, if unterminated, at the end of
/// the line. None when there is no value (`NAME=` then a blank, `==`).
fn assignment_value(text: &str, at: usize) -> Option<((usize, usize), usize)> {
    let bytes = text.as_bytes();
    let quote = *bytes.get(at)?;
    if quote == b'"' || quote == b'\'' {
        let mut i = at + 1;
        while let Some(&b) = bytes.get(i) {
            if b == quote {
                return Some(((at + 1, i), i + 1));
            }
            if b == b'\n' || b == b'\r' {
                break;
            }
            i += if quote == b'"' && b == b'\\' && bytes.get(i + 1).is_some_and(|&n| n != b'\n' && n != b'\r') {
                2
            } else {
                1
            };
        }
        let end = i.min(bytes.len());
        return Some(((at + 1, end), end));
    }
    if quote == b'=' {
        // `password == x` is a comparison, not an assignment.
        return None;
    }
    let end = plain_value_end(text, at);
    (end > at).then_some(((at, end), end))
}
