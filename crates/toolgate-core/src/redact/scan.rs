//! The text scanner behind [`super::redact_text`]: one regex whose
//! alternatives are the secret shapes, and the code that decides, for each
//! match, what exactly is replaced and where the scan goes on.

use super::keys::{is_switch, secret_key_kind};
use super::{contains_marker, marker};
use regex::{Captures, Regex};
use std::borrow::Cow;
use std::sync::LazyLock;

/// [`super::redact_text`]: one scan of [`SCANNER`] for text with nothing to
/// hide; otherwise a walk from match to match, each decided by [`step`].
pub(super) fn redact(text: &str) -> Cow<'_, str> {
    // Most text has none of the literals every secret shape needs: answer
    // without building the scanner, which costs milliseconds to compile in
    // a short-lived process.
    if !prefilter_matches(text) {
        return Cow::Borrowed(text);
    }
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
        let rel_start = caps.get(0).map_or(pos - base, |m| m.start());
        let start = base + rel_start;
        let (head_end, secret, resume) = match whole_key_blocks(hay, rel_start, step(hay, &caps)) {
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
            && let Cow::Owned(head) = redact(&text[start..head_end])
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

/// A name that is not a secret (`max_tokens=`) is not a match: the scan
/// goes on from the name's first character, so a token or key block that
/// starts inside the name is still found, even one that runs past its end.
/// (The named-value pattern cannot match again there: it needs a character
/// before the name.) Only a name at the very start of the haystack, matched
/// by `^`, which would match again, is different: the token formats are
/// tried right there, and the scan goes on one character later.
fn not_secret(hay: &str, name_start: usize) -> Step {
    if name_start > 0 {
        return Step::Skip { resume: name_start };
    }
    match TOKENS_AT_START.captures(hay) {
        Some(caps) => step(hay, &caps),
        None => Step::Skip {
            resume: hay.chars().next().map_or(1, char::len_utf8),
        },
    }
}

/// Literals at least one of which every match of [`SCANNER`] contains
/// (compared ignoring ASCII case, so a superset): the trigger words of
/// named values, and a fixed part of each token shape. A property test
/// checks that nothing the scanner matches escapes it; a new alternative in
/// the scanner needs its literal here.
pub(super) const PREFILTER_LITERALS: &[&str] = &[
    // Named values and the AWS secret name; `key` also covers PEM headers.
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "cookie",
    "credential",
    // AWS access key ids.
    "akia",
    "asia",
    "agpa",
    "aida",
    "aroa",
    "anpa",
    "anva",
    "aipa",
    // GitHub, Anthropic / OpenAI, Slack, Stripe, Google, JWT.
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "sk-",
    "xox",
    "xapp-",
    "hooks.slack.com",
    "_live_",
    "_test_",
    "aiza",
    "eyj",
    // URL passwords, bearer tokens.
    "://",
    "bearer",
];

/// Texts up to this long are tested literal by literal; longer ones with an
/// automaton built on first use.
const SHORT_TEXT: usize = 2048;

/// Whether any prefilter literal occurs in `text`, ignoring ASCII case. A
/// hook process checks a few short texts and exits: building an automaton
/// for them would cost more than the search it saves.
fn prefilter_matches(text: &str) -> bool {
    if text.len() > SHORT_TEXT {
        return PREFILTER.is_match(text);
    }
    let lower = text.to_ascii_lowercase();
    PREFILTER_LITERALS.iter().any(|l| lower.contains(l))
}

static PREFILTER: LazyLock<aho_corasick::AhoCorasick> = LazyLock::new(|| {
    aho_corasick::AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(PREFILTER_LITERALS)
        .expect("the prefilter literals build")
});

/// Whether the scanner could match anywhere in `text` (tests use it to
/// check the prefilter against the scanner).
#[cfg(test)]
pub(super) fn scanner_matches(text: &str) -> bool {
    SCANNER.is_match(text)
}

/// Whether the prefilter lets `text` through to the scanner (checked
/// against the automaton, so the tests cover both ways of asking).
#[cfg(test)]
pub(super) fn prefilter_passes(text: &str) -> bool {
    let fast = prefilter_matches(text);
    assert_eq!(fast, PREFILTER.is_match(text), "{text:?}");
    fast
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
/// headers before generic assignments). Named groups say which alternative
/// matched and where the secret part is; the rest is decided in [`step`].
static SCANNER: LazyLock<Regex> = LazyLock::new(|| {
    // Characters of a variable, key or flag name, on either side of the
    // word that makes it a candidate. Bounded: after each redaction the
    // scan starts afresh (`^`), and an unbounded name would make it read
    // on to the end of any long run of name characters every time, which
    // is quadratic; real names are far shorter.
    let name = r"[A-Za-z0-9_.-]{0,100}";
    // A name is a candidate if it contains one of these; secret_key_kind
    // decides (so `max_tokens=5` is looked at and let go).
    let trigger = r"(?i:pass|pwd|secret|token|key|auth|cookie|credential)";
    let schemes =
        r"(?i:bearer|basic|token|digest|bot|negotiate|ntlm|oauth|api-?key|key|aws4-hmac-sha256)";
    // Named values, all behind one boundary (start of text or a character
    // that cannot be part of the name). First, so that at the start of a
    // text a name wins over a token inside it, as it does everywhere else
    // by starting one character earlier. The value is read in code
    // (assignment_value), so a name that turns out not to be a secret costs
    // no more than its own length.
    let named = format!(
        r#"(?:^|[^A-Za-z0-9_.-])(?:(?P<ah>{name}(?i:authorization))["']?[ \t]*(?P<ahsep>[:=])[ \t]*["']?(?:(?P<ahscheme>{schemes})[ \t]+)?|(?P<ck>{name}(?i:cookie))["']?[ \t]*:[ \t]*["']?|(?P<flag>--?{name}{trigger}{name})(?:[ \t]+|=)|(?P<name>{name}{trigger}{name})(?:[ \t]*=[ \t]*|:[ \t]+|["'][ \t]*[:=][ \t]*))"#
    );
    Regex::new(&format!("{named}|{}", token_alternatives()))
        .expect("the redaction scanner compiles")
});

/// The token formats of [`SCANNER`] (all but the named values), anchored:
/// what may start where a name that is not a secret starts.
static TOKENS_AT_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("^(?:{})", token_alternatives())).expect("the token regex compiles")
});

/// The alternatives of [`SCANNER`] that match a secret by its shape.
fn token_alternatives() -> String {
    [
        &format!("(?P<pem>{PEM_HEADER_PATTERN})"),
        // No \b after the 16 characters: what follows may be redacted, and
        // a redaction must not change what matches before it.
        r"(?P<awsid>(?-u:\b)(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16})",
        r#"(?i:aws_secret_access_key|secretaccesskey)["']?(?:[ \t]*[=:][ \t]*|[ \t]+)["']?(?P<awssecret>[A-Za-z0-9/+=]{20,})"#,
        // No leading \b: these prefixes are distinctive enough, and a token
        // glued to a word (`MY_ghp_…`) must still go.
        r"(?P<github>gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        r"(?P<anthropic>(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,})",
        r"(?P<openai>(?-u:\b)sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,})",
        r"(?P<slack>(?-u:\b)(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,})",
        r"https?://hooks\.slack\.com/services/(?P<slackhook>T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+)",
        r"(?P<stripe>(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})",
        // At least 35 (keys have exactly 35): a longer run goes whole
        // rather than leaving a tail that a second pass would read anew.
        r"(?P<google>AIza[0-9A-Za-z_-]{35,})",
        // The signature may be empty (`alg: none`); the claims are still
        // worth hiding.
        r"(?P<jwt>eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)",
        // scheme://user:PASSWORD@host; the last `@` before the path wins,
        // as in browsers. The user may be empty (`redis://:pw@host`).
        r#"[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/?#@'"\[\]]*:(?P<urlpass>[^\s/?#'"]+)@"#,
        r"(?-u:\b)(?i:bearer)[ \t]+(?P<bearer>[A-Za-z0-9._~+/=-]{8,})",
    ]
    .join("|")
}

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
    /// Nothing to replace (a marker, a `$VAR`); the match up to `head_end`
    /// still gets a scan of its own.
    Keep { head_end: usize, resume: usize },
    /// Not a secret: continue at `resume`.
    Skip { resume: usize },
}

/// Decides one match of [`SCANNER`] (or [`TOKENS_AT_START`]) in `text`:
/// what, if anything, is replaced, and where the scan goes on.
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
        let kind = match caps
            .name("ahscheme")
            .map(|s| s.as_str().to_ascii_lowercase())
        {
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
        return Step::Skip {
            resume: whole.end(),
        };
    };
    let Some(kind) = secret_key_kind(name.as_str()) else {
        return not_secret(text, name.start());
    };
    if caps.name("flag").is_some() && is_switch(name.as_str()) {
        // `--password-stdin example.com`: the next word is not its value.
        return not_secret(text, name.start());
    }
    let Some(value) = assignment_value(text, whole.end()) else {
        return not_secret(text, name.start());
    };
    if let Some(header) = PEM_HEADER.find(&text[value.inner.0..]) {
        // A key block as the value: all of it goes, lines and all, not just
        // the value's first word or line, and so does whatever the value
        // goes on with after the block (`"-----BEGIN …-----\n"` in JSON).
        let block_end = key_block_end(text, header.as_str(), value.inner.0 + header.end());
        let inner_end = if block_end > value.inner.1 {
            value_end(text, block_end, value.quote).0
        } else {
            value.inner.1
        };
        return Step::Redact {
            span: (value.inner.0, inner_end),
            kind: "private-key",
        };
    }
    value_step(value.inner.0, value.inner.1, kind, text)
}

/// A key block is never cut short. When what `step` consumes (from
/// `start`, its match's start) holds the start of a block that goes on
/// past it (`xoxb-…-----BEGIN RSA PRIVATE KEY-----`, a flag named
/// `--x-----BEGIN`), a redaction runs on to the block's end, and otherwise
/// the step stops short of the block, which the next scan then finds.
fn whole_key_blocks(hay: &str, start: usize, step: Step) -> Step {
    let end = match step {
        Step::Redact { span, .. } => span.1,
        Step::Keep { resume, .. } | Step::Skip { resume } => resume,
    };
    let Some((at, header)) = hay[start..end]
        .match_indices("-----BEGIN")
        .map(|(i, _)| start + i)
        .filter(|&at| at > start)
        .find_map(|at| PEM_HEADER.find(&hay[at..]).map(|h| (at, h.as_str())))
    else {
        return step;
    };
    match step {
        Step::Redact { span, kind } if at >= span.0 => Step::Redact {
            span: (
                span.0,
                key_block_end(hay, header, at + header.len()).max(span.1),
            ),
            kind,
        },
        Step::Redact { .. } | Step::Skip { .. } => Step::Keep {
            head_end: at,
            resume: at,
        },
        Step::Keep { head_end, .. } => Step::Keep {
            head_end: head_end.min(at),
            resume: at,
        },
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

/// Redacts `start..end` unless it is empty, holds a marker, or is a `$VAR`.
///
/// A value holding a marker comes from an earlier pass (a key block
/// redacted inside what now reads as one URL password) or was written so
/// by the caller; either way it is not redacted as a whole again, so that
/// redacting twice changes nothing. A value that is kept is still scanned
/// (the scan resumes at its start): tokens inside it go.
fn value_step(start: usize, end: usize, kind: &'static str, text: &str) -> Step {
    let value = &text[start..end];
    if value.is_empty() || contains_marker(value) || is_variable_ref(value) {
        Step::Keep {
            head_end: start,
            resume: start,
        }
    } else {
        Step::Redact {
            span: (start, end),
            kind,
        }
    }
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

/// Where an assignment's value lies.
struct AssignedValue {
    /// The value without its quotes.
    inner: (usize, usize),
    /// The opening quote, if any.
    quote: Option<u8>,
}

/// The value of an assignment starting at `at`. Quoted values end at the
/// closing quote (a backslash escapes in double quotes) or, if unterminated,
/// at the end of the line; others at whitespace, `&`, `;` or a quote. None
/// when there is no value (`NAME=` then a blank, or `==`, a comparison).
fn assignment_value(text: &str, at: usize) -> Option<AssignedValue> {
    let first = *text.as_bytes().get(at)?;
    let quote = (first == b'"' || first == b'\'').then_some(first);
    if first == b'=' {
        return None;
    }
    let inner_start = at + usize::from(quote.is_some());
    let (inner_end, end) = value_end(text, inner_start, quote);
    (end > at).then_some(AssignedValue {
        inner: (inner_start, inner_end),
        quote,
    })
}

/// From `from` inside a value opened by `quote` (or unquoted): where the
/// value's content ends and where the value ends (past a closing quote).
fn value_end(text: &str, from: usize, quote: Option<u8>) -> (usize, usize) {
    let Some(quote) = quote else {
        let end = plain_value_end(text, from);
        return (end, end);
    };
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        if b == quote {
            return (i, i + 1);
        }
        if b == b'\n' || b == b'\r' {
            return (i, i);
        }
        let escaped = quote == b'"'
            && b == b'\\'
            && bytes.get(i + 1).is_some_and(|&n| n != b'\n' && n != b'\r');
        i += if escaped { 2 } else { 1 };
    }
    (bytes.len(), bytes.len())
}

/// The token formats alone (no named values), unanchored.
static TOKENS_ANYWHERE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&token_alternatives()).expect("the token regex compiles"));

/// The kinds of the well-known credential formats in `text` (a private-key
/// block, an AWS key id, a GitHub, Slack, Stripe, Google, OpenAI or
/// Anthropic token, a JWT), whatever name they are assigned to.
pub(super) fn token_kinds(text: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for caps in TOKENS_ANYWHERE.captures_iter(text) {
        let kind = if caps.name("pem").is_some() {
            "private-key"
        } else if caps.name("openai").is_some() {
            "openai-key"
        } else if let Some((_, kind)) = TOKENS.iter().find(|(g, _)| caps.name(g).is_some()) {
            kind
        } else {
            continue;
        };
        if !out.contains(&kind) {
            out.push(kind);
        }
    }
    out
}

#[cfg(test)]
mod prefilter_tests {
    use super::*;

    /// The literal-by-literal path lower-cases the text only.
    #[test]
    fn prefilter_literals_are_lower_case_ascii() {
        for l in PREFILTER_LITERALS {
            assert!(l.is_ascii() && *l == l.to_ascii_lowercase(), "{l:?}");
        }
    }

    #[test]
    fn both_paths_agree_on_short_and_long_texts() {
        let long = "x".repeat(SHORT_TEXT + 10);
        for text in [
            "",
            "ls -la",
            "export GITHUB_TOKEN=x",
            "Bearer abc",
            "AKIAxyz",
        ] {
            assert_eq!(prefilter_passes(text), !text.is_empty() && text != "ls -la");
            let padded = format!("{long}{text}");
            assert_eq!(prefilter_matches(&padded), PREFILTER.is_match(&padded));
        }
    }
}
