//! Redaction of secrets in what toolgate stores and shows: tool-call params
//! (and reasons derived from them) go through here before they reach the
//! audit log or an operator's screen.
//!
//! Everything works on a copy or on text the caller owns; the approval
//! binding hash is computed elsewhere on the unredacted params, so nothing
//! here may be needed to reproduce them.
//!
//! Two mechanisms:
//! * an object key that names a secret ([`keys::secret_key_kind`]) has its whole
//!   value replaced ([`redact_value`]);
//! * every other string is scanned for secret-shaped text ([`redact_text`]):
//!   well-known token formats, private-key blocks, HTTP credentials,
//!   `NAME=value` assignments whose name is a secret key, URL passwords,
//!   and the password arguments of common clients (`mysql -pPASS`,
//!   `curl -u user:pass`, `sshpass -p PASS`, `htpasswd -b F U PASS`, …),
//!   read as shell words.
//!
//! Every replacement is `[REDACTED:<kind>]`, and redacting redacted output
//! changes nothing: a value that already holds a marker is not redacted
//! again, and after each replacement the scan starts afresh, seeing what a
//! second pass would see.
//!
//! Layout: this file has the public API and the marker; `keys.rs` decides
//! which names are secret; `scan.rs` is the text scanner; `programs.rs`
//! knows which arguments of which clients are passwords.

use serde_json::Value;
use std::borrow::Cow;

mod bound;
mod keys;
mod programs;
mod scan;

pub use bound::bound_size;
#[cfg(test)]
mod tests;

use keys::secret_key_kind;

/// How every replacement starts. A replacement is the whole text
/// `[REDACTED:<kind>]`, where kind is a short kebab-case label of what
/// matched (`github-token`, `password`, `private-key`, …); searching stored
/// text for this prefix finds every redaction.
pub(crate) const MARK_PREFIX: &str = "[REDACTED";

/// Replaces the secret-shaped parts of free text with `[REDACTED:<kind>]`,
/// keeping everything around them (a header's name and scheme, an
/// assignment's name and quotes, a URL's user and host).
///
/// Returns `Cow::Borrowed` when nothing was replaced; that case costs one
/// regex scan and no allocation. Idempotent: redacting the output again
/// returns it unchanged (and borrowed). Never panics.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let Cow::Owned(mut done) = redact_pass(text) else {
        return Cow::Borrowed(text);
    };
    // One pass can uncover another secret: a program's password redacted
    // out of `sshpass -p Authorization: Bearer …` leaves a bare `Bearer …`
    // for the next. Every pass that changes anything replaces secret text
    // by markers, so a few reach the fixed point the output must be.
    for _ in 0..MAX_PASSES {
        match redact_pass(&done) {
            Cow::Borrowed(_) => break,
            Cow::Owned(again) => done = again,
        }
    }
    Cow::Owned(done)
}

/// How many further passes [`redact_text`] makes at most.
const MAX_PASSES: usize = 8;

/// The text scanner, then the programs' password flags, once.
fn redact_pass(text: &str) -> Cow<'_, str> {
    match scan::redact(text) {
        Cow::Borrowed(t) => programs::redact(t),
        Cow::Owned(t) => match programs::redact(&t) {
            Cow::Borrowed(_) => Cow::Owned(t),
            Cow::Owned(again) => Cow::Owned(again),
        },
    }
}

/// A deep copy of `value` with its secrets redacted:
/// * the value of an object key that names a secret ([`keys::secret_key_kind`]) is
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

/// The replacement text for a secret of `kind`.
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

/// Whether `s` contains a whole marker.
fn contains_marker(s: &str) -> bool {
    s.match_indices(MARK_PREFIX).any(|(i, _)| {
        let rest = &s[i..];
        rest.find(']').is_some_and(|j| is_marker(&rest[..=j]))
    })
}

/// The well-known credential formats in `text` (`github-token`,
/// `aws-access-key-id`, `private-key`, …), wherever they stand.
pub(crate) fn token_kinds(text: &str) -> Vec<&'static str> {
    scan::token_kinds(text)
}

/// The kinds of secret-shaped text in `text` (`github-token`,
/// `private-key`, `password`, …), as [`redact_text`] would label them;
/// empty when it holds none. Markers the text already carried are not
/// counted.
pub(crate) fn secret_kinds(text: &str) -> Vec<String> {
    let Cow::Owned(done) = redact_text(text) else {
        return Vec::new();
    };
    let mut before = marker_kinds(text);
    let mut kinds = Vec::new();
    for kind in marker_kinds(&done) {
        match before.iter().position(|k| *k == kind) {
            Some(i) => {
                before.swap_remove(i);
            }
            None => kinds.push(kind.to_string()),
        }
    }
    kinds
}

/// The kinds named by the `[REDACTED:<kind>]` markers in a text, in order.
fn marker_kinds(text: &str) -> Vec<&str> {
    text.match_indices("[REDACTED:")
        .filter_map(|(i, m)| {
            let rest = &text[i + m.len()..];
            rest.find(']').map(|j| &rest[..j])
        })
        .collect()
}
