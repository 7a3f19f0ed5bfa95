//! What an approval request says and how it ended: plain data, so this
//! crate needs none of toolgate's own types and a notice can be stored,
//! sent as JSON, or rendered by any adapter.

use serde::{Deserialize, Serialize};

/// One pending approval as people on a channel see it.
///
/// Everything here is shown to people outside the daemon, so the caller
/// hands in text that is already redacted; adapters add nothing secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// The approval's id: 32 lowercase hex characters.
    pub approval_id: String,
    /// One already-redacted line saying what the call does.
    pub summary: String,
    /// The tool the agent wants to run (`Bash`, `Write`, an MCP tool…).
    pub tool: String,
    /// The risk class, `"R0"` to `"R4"`.
    pub risk: String,
    /// Why the call was held for people.
    pub reason: String,
    /// The agent that asked, when known.
    pub agent: Option<String>,
    /// The agent's session, when known.
    pub session: Option<String>,
    /// Approvals given so far.
    pub have: u32,
    /// Approvals needed.
    pub need: u32,
    /// When the request expires unanswered, Unix milliseconds.
    pub expires_at_ms: i64,
    /// A signed one-time link that approves (see [`crate::LinkSigner`]).
    /// It votes as the one operator it was signed for, so it belongs in
    /// that person's mail only: the chat adapters never show it (anyone
    /// in a shared channel could use it); the webhook passes the whole
    /// notice on, for a receiver that mails each operator their own.
    pub approve_url: Option<String>,
    /// A signed one-time link that denies; handled as `approve_url`.
    pub deny_url: Option<String>,
    /// Where the request can be seen in the control UI.
    pub dashboard_url: Option<String>,
}

impl Notice {
    /// A short title: `Approval needed: <tool> (<risk>)`.
    pub fn title(&self) -> String {
        format!("Approval needed: {} ({})", self.tool, self.risk)
    }

    /// `1 of 2 approvals`: how far the quorum is.
    pub fn votes_text(&self) -> String {
        format!("{} of {} approvals", self.have, self.need)
    }

    /// The expiry as an RFC 3339 UTC time (second precision).
    pub fn expires_text(&self) -> String {
        rfc3339(self.expires_at_ms.div_euclid(1000))
    }
}

/// How an approval ended; adapters show it in place of the buttons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Resolution {
    /// Enough people approved; `by` names them in the order they voted.
    Approved {
        /// Who approved.
        by: Vec<String>,
    },
    /// Someone denied, which ends the request at once.
    Denied {
        /// Who denied.
        by: String,
        /// Why, when they said.
        reason: Option<String>,
    },
    /// Nobody decided in time; the call was not run.
    Expired,
    /// The request went away before a decision (the agent gave up or the
    /// call was cancelled).
    Withdrawn,
}

impl Resolution {
    /// One sentence for people, such as `Approved by alice and bob.`
    pub fn sentence(&self) -> String {
        match self {
            Resolution::Approved { by } if by.is_empty() => "Approved.".to_string(),
            Resolution::Approved { by } => format!("Approved by {}.", names(by)),
            Resolution::Denied { by, reason: None } => format!("Denied by {by}."),
            Resolution::Denied {
                by,
                reason: Some(reason),
            } => format!("Denied by {by}: {reason}"),
            Resolution::Expired => "Expired before a decision; the call was not run.".to_string(),
            Resolution::Withdrawn => "Withdrawn before a decision; nothing to vote on.".to_string(),
        }
    }

    /// An emoji people recognise at a glance in a chat history.
    pub fn mark(&self) -> &'static str {
        match self {
            Resolution::Approved { .. } => "\u{2705}",
            Resolution::Denied { .. } => "\u{26d4}",
            Resolution::Expired => "\u{231b}",
            Resolution::Withdrawn => "\u{21a9}\u{fe0f}",
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
fn names(by: &[String]) -> String {
    match by {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`. Written out here rather than
/// pulling in a date crate for one format; the civil-date conversion is
/// Howard Hinnant's `civil_from_days`.
pub(crate) fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `text` cut to at most `max` characters, ending in `…` when cut; chat
/// APIs refuse over-long fields outright, which would lose the whole
/// message.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('\u{2026}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_767_225_599), "2025-12-31T23:59:59Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn sentences_name_who_decided() {
        let two = Resolution::Approved {
            by: vec!["alice".into(), "bob".into()],
        };
        assert_eq!(two.sentence(), "Approved by alice and bob.");
        let three = Resolution::Approved {
            by: vec!["a".into(), "b".into(), "c".into()],
        };
        assert_eq!(three.sentence(), "Approved by a, b and c.");
        let denied = Resolution::Denied {
            by: "carol".into(),
            reason: Some("not on prod".into()),
        };
        assert_eq!(denied.sentence(), "Denied by carol: not on prod");
    }

    #[test]
    fn resolution_serializes_with_an_outcome_tag() {
        let json = serde_json::to_value(Resolution::Expired).unwrap();
        assert_eq!(json, serde_json::json!({"outcome": "expired"}));
        let back: Resolution = serde_json::from_value(serde_json::json!({
            "outcome": "denied", "by": "x", "reason": null
        }))
        .unwrap();
        assert_eq!(
            back,
            Resolution::Denied {
                by: "x".into(),
                reason: None
            }
        );
    }

    #[test]
    fn clip_keeps_short_text_and_marks_cuts() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "ab\u{2026}");
        assert_eq!(clip("ééééé", 4).chars().count(), 4);
    }
}
