//! Who asked for a call, in every spelling (docs/approvals.md, "Separation
//! of duties"): the requester can never approve their own call, whichever
//! of their identities asked and whichever credential they vote with.
//!
//! A call names its requester as the runtime spells it: OpenClaw sends the
//! chat sender's bare id (`U0123ABCD`, `123456789`), a script may send
//! `slack:U0123ABCD`, an email address in any case, a mention
//! (`<@U0123ABCD>`). Operators are linked to their chat accounts as
//! `KIND:ID`. Both sides are cut into *tokens* (the whole text, and every
//! part of it between separators, folded to one spelling), and an approver
//! is the requester when any of their tokens is one of the requester's.
//! Matching more than strictly needed only ever refuses a vote; matching
//! less would let a person approve their own call.
//!
//! Tokens are kept as digests ([`RequesterKey`]): an approval records who
//! asked without storing more of their identifiers than its `requester`
//! field shows, and redaction of what is shown cannot blur what is matched.

use sha2::{Digest, Sha256};

/// Most tokens one identity text yields; the rest of a longer text is
/// ignored (a requester id is one account, not a list).
const MAX_TOKENS: usize = 64;

/// Longest identity text read, in characters.
const MAX_CLAIM: usize = 1024;

/// The digest of one token of a requester, as [`requester_keys`] and
/// [`approver_keys`] compute it: 32 hex characters.
pub type RequesterKey = String;

/// Where a token was found. A requester's own id is matched against an
/// approver's name and linked accounts; a token of the call's session key
/// (OpenClaw's per-peer session keys carry the sender's id) only against
/// linked accounts, since a session key is made of common words (`agent`,
/// `main`) that may be someone's name.
#[derive(Clone, Copy)]
enum Place {
    Requester,
    Session,
}

fn key(place: Place, token: &str) -> RequesterKey {
    let tag: &[u8] = match place {
        Place::Requester => b"requester\0",
        Place::Session => b"session\0",
    };
    let mut h = Sha256::new();
    h.update(tag);
    h.update(token.as_bytes());
    crate::hex::hex(&h.finalize()[..16])
}

/// Characters that change nothing on screen (zero-width, direction marks,
/// joiners, variation selectors, tags): dropped before comparing, so
/// `U0\u{200b}123` is `U0123`.
fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{E0000}'..='\u{E007F}'
        )
}

/// One spelling of `text`: full-width forms folded to ASCII, invisible
/// characters dropped, lowercased, trimmed; at most [`MAX_CLAIM`]
/// characters read.
fn fold(text: &str) -> String {
    let folded: String = text
        .chars()
        .take(MAX_CLAIM)
        .filter_map(|c| match u32::from(c) {
            0xFF01..=0xFF5E => char::from_u32(u32::from(c) - 0xFEE0),
            0x3000 => Some(' '),
            _ => Some(c),
        })
        .filter(|&c| !invisible(c))
        .flat_map(char::to_lowercase)
        .collect();
    folded.trim().to_string()
}

/// Whether `c` may be part of an id token; anything else separates tokens
/// (`:`, `/`, `|`, `<`, `>`, spaces, quotes, …).
fn in_token(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '+')
}

/// The digits of a phone number written with spaces, dashes, dots or
/// parentheses (`+1 (555) 123-4567` → `15551234567`), when `s` is one.
fn phone(s: &str) -> Option<String> {
    let ok = s
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '.' | ' ' | '(' | ')'));
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    (ok && digits.len() >= 7).then_some(digits)
}

/// An email address in one spelling: lowercased (already), the local
/// part's `+tag` dropped, the domain's trailing dot dropped.
fn email(s: &str) -> Option<String> {
    let (local, domain) = s.split_once('@')?;
    let domain = domain.trim_end_matches('.');
    if local.is_empty() || domain.contains('@') || !domain.contains('.') {
        return None;
    }
    let local = local.split('+').next().unwrap_or(local);
    (!local.is_empty()).then(|| format!("{local}@{domain}"))
}

/// Every token `text` is known by: its whole folded text, every part of it
/// between separators (stripped of sigils such as a leading `@`), and for
/// those that are phone numbers or email addresses their one spelling.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |t: &str| {
        let t = t.trim();
        if !t.is_empty() && out.len() < MAX_TOKENS && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    };
    let text = fold(text);
    push(&text);
    if let Some(p) = phone(&text) {
        push(&p);
    }
    for part in text.split(|c: char| !in_token(c)) {
        let part = part.trim_matches(|c: char| matches!(c, '.' | '_' | '-' | '@' | '+'));
        push(part);
        if let Some(p) = phone(part) {
            push(&p);
        }
        if let Some(e) = email(part) {
            push(&e);
        }
    }
    out
}

/// The keys the requester of a call is known by: every token of its
/// `requester.id`, and every token of its session key. Computed from the
/// call as it arrived (before anything is redacted for display).
pub fn requester_keys(id: Option<&str>, session: Option<&str>) -> Vec<RequesterKey> {
    let mut keys: Vec<RequesterKey> = Vec::new();
    let mut add = |k: RequesterKey| {
        if !keys.contains(&k) {
            keys.push(k);
        }
    };
    for t in id.map(tokens).unwrap_or_default() {
        add(key(Place::Requester, &t));
    }
    for t in session.map(tokens).unwrap_or_default() {
        add(key(Place::Session, &t));
    }
    keys
}

/// The keys an approver is known by: their name (an operator's name, or
/// the identity an automated approver votes as) and every token of each
/// account linked to them (`slack:U0123ABCD`, `email:alice@example.com`:
/// the part after the kind, and the whole).
pub fn approver_keys(name: &str, linked: &[String]) -> Vec<RequesterKey> {
    let mut keys = vec![key(Place::Requester, &fold(name))];
    for account in linked {
        let folded = fold(account);
        let bare = folded
            .split_once(':')
            .map(|(_, id)| id.to_string())
            .unwrap_or_else(|| folded.clone());
        let mut ts = tokens(&bare);
        ts.push(folded);
        for t in ts {
            for place in [Place::Requester, Place::Session] {
                let k = key(place, &t);
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
    }
    keys
}

/// Whether the approver known by `approver` (from [`approver_keys`]) asked
/// for the call a requester known by `requester` made.
pub fn same_person(requester: &[RequesterKey], approver: &[RequesterKey]) -> bool {
    approver.iter().any(|k| requester.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(id: &str, session: Option<&str>, name: &str, linked: &[&str]) -> bool {
        let linked: Vec<String> = linked.iter().map(|s| s.to_string()).collect();
        same_person(
            &requester_keys(Some(id), session),
            &approver_keys(name, &linked),
        )
    }

    #[test]
    fn every_spelling_of_a_linked_account_is_its_operator() {
        let alice = [
            "slack:U0123ABCD",
            "telegram:123456789",
            "email:Alice@Example.com",
        ];
        for id in [
            "U0123ABCD",
            "u0123abcd",
            "slack:U0123ABCD",
            "SLACK:U0123ABCD",
            " slack:U0123ABCD ",
            "<@U0123ABCD>",
            "<@U0123ABCD|alice>",
            "slack/T0001/U0123ABCD",
            "U0\u{200b}123ABCD",
            "\u{FF35}0123ABCD",
            "123456789",
            "telegram:123456789",
            "tg:123456789",
            "@123456789",
            "alice@example.com",
            "ALICE@EXAMPLE.COM",
            "mailto:Alice@Example.com",
            "alice+agent@example.com",
            "Alice <alice@example.com>",
            "alice",
            "Alice",
        ] {
            assert!(asked(id, None, "alice", &alice), "{id:?}");
        }
        for id in [
            "U0123ABCE",
            "bob",
            "slack:U999",
            "12345678",
            "bob@example.com",
            "",
        ] {
            assert!(!asked(id, None, "alice", &alice), "{id:?}");
        }
    }

    #[test]
    fn a_session_key_carrying_the_sender_counts_only_for_linked_accounts() {
        let alice = ["telegram:123456789"];
        assert!(asked(
            "x",
            Some("agent:main:telegram:direct:123456789"),
            "alice",
            &alice
        ));
        // Common words in a session key are nobody's name.
        assert!(!asked("x", Some("agent:main:main"), "main", &[]));
        assert!(!asked("x", Some("agent:main:main"), "alice", &alice));
    }

    #[test]
    fn a_kind_alone_names_nobody() {
        // alice's Slack account does not make her every Slack user.
        assert!(!asked("slack:U999", None, "alice", &["slack:U0123"]));
        assert!(!asked("slack", None, "alice", &["slack:U0123"]));
    }

    #[test]
    fn phone_numbers_compare_by_their_digits() {
        assert!(asked(
            "+1 (555) 123-4567",
            None,
            "bob",
            &["telegram:+15551234567"]
        ));
        assert!(!asked(
            "+1 (555) 123-4568",
            None,
            "bob",
            &["telegram:+15551234567"]
        ));
    }
}
