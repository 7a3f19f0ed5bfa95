//! Named operators: the people who may vote, each with a credential of
//! their own. A vote's identity is the person its credential names, never
//! a name the voter typed, so a quorum of two needs two people.
//!
//! A token is shown once, when it is issued, and stored only as its
//! SHA-256. Removing an operator revokes the token at once (every request
//! reads the table) and keeps the record, so the audit log's names stay
//! explained. The shared operator token of a daemon, and the local CLI
//! (whoever can write the data directory), act as one more identity,
//! [`ADMIN`]: the break-glass administrator, who is no named person (see
//! [`toolgate_core::Approval::admits_unnamed`] for where it counts).

use crate::clock::random_bytes;
use crate::{Clock, random_hex};
use serde_json::json;
use sha2::{Digest, Sha256};
use toolgate_core::{AuditEvent, AuditKind, hex};
use toolgate_store::{Operator, Store, StoreError};

/// The identity of the shared operator token and of the local CLI: the
/// administrator. Its approval counts only below R4 where one approval is
/// enough; it is never a second person, and never counts at R4.
pub const ADMIN: &str = "operator";

/// What every issued token starts with, so it is recognisable (and secret
/// scanners can find one pasted where it should not be).
pub const TOKEN_PREFIX: &str = "tgo_";

/// The chat services whose user ids can be linked to an operator.
pub const IDENTITY_KINDS: &[&str] = &["slack", "telegram", "discord", "email"];

/// Names no person may take: they are identities already.
const RESERVED: &[&str] = &[
    ADMIN,
    "rules_based",
    "llm_evaluation",
    "user_request",
    "admin",
];

/// A checked operator name: 1–64 characters of `a-z`, `0-9`, `.`, `_`, `-`,
/// starting with a letter or digit, lowercased; not a reserved identity.
pub fn check_name(name: &str) -> Result<String, StoreError> {
    let n = name.trim().to_lowercase();
    let ok = (1..=64).contains(&n.len())
        && n.starts_with(|c: char| c.is_ascii_alphanumeric())
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        return Err(StoreError::Operators(format!(
            "{name:?} is not a usable operator name: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. alice)"
        )));
    }
    if RESERVED.contains(&n.as_str()) {
        return Err(StoreError::Operators(format!(
            "{n:?} is reserved ({ADMIN:?} is the shared operator token's identity): choose a person's name"
        )));
    }
    Ok(n)
}

/// A checked chat identity, `KIND:ID` with KIND one of [`IDENTITY_KINDS`]
/// and an ID of 1–128 printable characters without spaces; the kind is
/// [`check_identity`] for each of `identities`, the first error stopping it.
fn check_identities(identities: &[String]) -> Result<Vec<String>, StoreError> {
    identities.iter().map(|i| check_identity(i)).collect()
}

/// lowercased (and an email address too, which is compared that way).
pub fn check_identity(identity: &str) -> Result<String, StoreError> {
    let bad = || {
        StoreError::Operators(format!(
            "{identity:?} is not a chat identity: use KIND:ID with KIND one of {} (e.g. slack:U0123ABCD, telegram:123456789)",
            IDENTITY_KINDS.join(", ")
        ))
    };
    let (kind, id) = identity.trim().split_once(':').ok_or_else(bad)?;
    let kind = kind.trim().to_lowercase();
    let id = id.trim();
    let id_ok = (1..=128).contains(&id.len()) && id.chars().all(|c| c.is_ascii_graphic());
    if !IDENTITY_KINDS.contains(&kind.as_str()) || !id_ok {
        return Err(bad());
    }
    let id = if kind == "email" {
        id.to_lowercase()
    } else {
        id.to_string()
    };
    Ok(format!("{kind}:{id}"))
}

/// A new random token and its SHA-256 (hex).
fn new_token() -> Result<(String, String), StoreError> {
    let bytes: [u8; 32] = random_bytes()?;
    let token = format!("{TOKEN_PREFIX}{}", hex(&bytes));
    let digest = hex(&Sha256::digest(token.as_bytes()));
    Ok((token, digest))
}

fn changed(trace: &str, now: i64, what: &str, op: &Operator, by: &str) -> AuditEvent {
    AuditEvent {
        ts_ms: now,
        trace: trace.to_string(),
        kind: AuditKind::OperatorChanged,
        data: json!({
            "change": what,
            "operator": op.name,
            "identities": op.identities,
            "by": by,
        }),
    }
}

/// Adds operator `name` with `identities`, on behalf of `by`; returns the
/// record and the token, which is shown to nobody else and never again.
/// A removed operator's name may be added again (with a new token).
pub fn add_operator(
    store: &dyn Store,
    clock: &dyn Clock,
    name: &str,
    identities: &[String],
    by: &str,
) -> Result<(Operator, String), StoreError> {
    let name = check_name(name)?;
    let identities = check_identities(identities)?;
    let now = clock.now_ms();
    let trace = random_hex()?;
    let (token, digest) = new_token()?;
    let mut tx = store.begin()?;
    let all = tx.operators()?;
    if all.iter().any(|o| o.name == name && o.active()) {
        return Err(StoreError::Operators(format!(
            "{name} is already an operator: `toolgate operators rotate {name}` issues a new token"
        )));
    }
    for id in &identities {
        if let Some(o) = all.iter().find(|o| o.active() && o.identities.contains(id)) {
            return Err(StoreError::Operators(format!(
                "{id} is already {}'s: one chat account belongs to one operator",
                o.name
            )));
        }
    }
    let op = Operator {
        name,
        token_sha256: digest,
        created_ms: now,
        created_by: by.to_string(),
        token_issued_ms: now,
        removed_ms: None,
        identities,
    };
    tx.put_operator(&op)?;
    tx.append(&changed(&trace, now, "added", &op, by))?;
    tx.commit()?;
    Ok((op, token))
}

/// Gives operator `name` a new token (the old one stops working); returns
/// the record and the new token.
pub fn rotate_token(
    store: &dyn Store,
    clock: &dyn Clock,
    name: &str,
    by: &str,
) -> Result<(Operator, String), StoreError> {
    let name = check_name(name)?;
    let now = clock.now_ms();
    let trace = random_hex()?;
    let (token, digest) = new_token()?;
    let mut tx = store.begin()?;
    let mut op = active_named(&tx.operators()?, &name)?;
    op.token_sha256 = digest;
    op.token_issued_ms = now;
    tx.put_operator(&op)?;
    tx.append(&changed(&trace, now, "token rotated", &op, by))?;
    tx.commit()?;
    Ok((op, token))
}

/// Links chat accounts to operator `name` (`add`) and unlinks others
/// (`remove`), keeping their token; an account stays one person's.
pub fn change_identities(
    store: &dyn Store,
    clock: &dyn Clock,
    name: &str,
    add: &[String],
    remove: &[String],
    by: &str,
) -> Result<Operator, StoreError> {
    let name = check_name(name)?;
    let add = check_identities(add)?;
    let remove = check_identities(remove)?;
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let all = tx.operators()?;
    let mut op = active_named(&all, &name)?;
    for id in &add {
        if let Some(o) = all
            .iter()
            .find(|o| o.active() && o.name != name && o.identities.contains(id))
        {
            return Err(StoreError::Operators(format!(
                "{id} is already {}'s: one chat account belongs to one operator",
                o.name
            )));
        }
        if !op.identities.contains(id) {
            op.identities.push(id.clone());
        }
    }
    op.identities.retain(|i| !remove.contains(i));
    tx.put_operator(&op)?;
    tx.append(&changed(&trace, now, "identities changed", &op, by))?;
    tx.commit()?;
    Ok(op)
}

/// Removes operator `name`: their token and chat identities stop working
/// at once; the record stays. Votes they already cast stand (deny an
/// approval they approved, if that is the worry).
pub fn remove_operator(
    store: &dyn Store,
    clock: &dyn Clock,
    name: &str,
    by: &str,
) -> Result<Operator, StoreError> {
    let name = check_name(name)?;
    let now = clock.now_ms();
    let trace = random_hex()?;
    let mut tx = store.begin()?;
    let mut op = active_named(&tx.operators()?, &name)?;
    op.removed_ms = Some(now);
    tx.put_operator(&op)?;
    tx.append(&changed(&trace, now, "removed", &op, by))?;
    tx.commit()?;
    Ok(op)
}

fn active_named(all: &[Operator], name: &str) -> Result<Operator, StoreError> {
    all.iter()
        .find(|o| o.name == name && o.active())
        .cloned()
        .ok_or_else(|| {
            StoreError::Operators(format!(
                "no operator {name}: `toolgate operators list` shows who there is"
            ))
        })
}

/// The active operator whose token `token` is, if any. Every operator's
/// digest is compared, in constant time, whichever matches.
pub fn operator_for_token(store: &dyn Store, token: &str) -> Result<Option<Operator>, StoreError> {
    let mut found = None;
    for op in store.read_operators()? {
        if op.token_matches(token) && op.active() {
            found = Some(op);
        }
    }
    Ok(found)
}

/// The active operator a chat identity (`slack:U0123`) belongs to, if any.
pub fn operator_for_identity(
    store: &dyn Store,
    identity: &str,
) -> Result<Option<Operator>, StoreError> {
    let Ok(identity) = check_identity(identity) else {
        return Ok(None);
    };
    Ok(store
        .read_operators()?
        .into_iter()
        .find(|o| o.active() && o.identities.contains(&identity)))
}

/// Marks `key` used until `until_ms`, in its own transaction: `true` the
/// first time, `false` on any later use (a replayed link or callback).
pub fn use_once(
    store: &dyn Store,
    clock: &dyn Clock,
    key: &str,
    until_ms: i64,
) -> Result<bool, StoreError> {
    let mut tx = store.begin()?;
    let first = tx.use_key(key, until_ms, clock.now_ms())?;
    tx.commit()?;
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_lowercased() {
        assert_eq!(check_name(" Alice ").unwrap(), "alice");
        assert_eq!(check_name("bob.smith-2").unwrap(), "bob.smith-2");
        for bad in [
            "",
            "-x",
            "a b",
            "al/ice",
            "operator",
            "Operator",
            "rules_based",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn identities_are_checked() {
        assert_eq!(check_identity("Slack:U0123").unwrap(), "slack:U0123");
        assert_eq!(
            check_identity("email:Alice@Example.com").unwrap(),
            "email:alice@example.com"
        );
        for bad in ["U0123", "irc:x", "slack:", "slack:a b", "telegram:\u{7}"] {
            assert!(check_identity(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_token_matches_only_its_digest() {
        let (token, digest) = new_token().unwrap();
        assert!(token.starts_with(TOKEN_PREFIX));
        let op = Operator {
            name: "alice".into(),
            token_sha256: digest,
            created_ms: 0,
            created_by: ADMIN.into(),
            token_issued_ms: 0,
            removed_ms: None,
            identities: vec![],
        };
        assert!(op.token_matches(&token));
        assert!(op.token_matches(&format!(" {token}\n")));
        assert!(!op.token_matches(&token[..token.len() - 1]));
        assert!(!op.token_matches(""));
    }
}
