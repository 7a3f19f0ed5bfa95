//! What the approval layer answers with, shared by `gate` (which relays
//! votes, reports waiting calls and unpacks an escalation's result) and
//! `escalation` (which creates and resolves approvals): the
//! [`Resolution`] of one escalation, the decision answering a relay call,
//! and the one-line summary of a call that operators read.
//!
//! A leaf (it imports no other module of the crate): `escalation` adds
//! methods to `Gate`, so it imports `gate`; kept in `escalation`, these made
//! `gate` import it back.

use serde_json::Value;
use toolgate_core::{
    AuditEvent, Decision, Layer, NormalizedCall, RiskClass, ToolCall, Verdict, redact_text,
};

/// What one escalation turned into.
pub(crate) struct Resolution {
    pub(crate) decision: Decision,
    pub(crate) events: Vec<AuditEvent>,
}

/// The decision answering a relay call.
pub(crate) fn relay_decision(verdict: Verdict, reason: String) -> Decision {
    // The relay call itself is harmless; what it unlocks was judged when
    // the approval was created.
    Decision::new(verdict, RiskClass::R0, 1, Layer::Approval, &reason)
}

/// The longest summary kept, in characters. Longer ones keep their start
/// and end around an explicit `[… N characters cut …]`; chat notices show
/// the flagged parts beside them, and the call itself is kept whole.
const MAX_SUMMARY: usize = 4000;

/// One line for operators and the dashboard, from what the gate judged: the
/// command, else the tool and the path, URL or action it acts on, else the
/// tool and its params; redacted (before it is cut, so no secret is split
/// past recognition), on one line, whole up to [`MAX_SUMMARY`] characters.
pub(crate) fn summary(call: &ToolCall, n: &NormalizedCall) -> String {
    let text = match (&n.command, n.paths.first(), n.urls.first(), &n.action) {
        (Some(c), _, _, _) => c.clone(),
        (None, Some(p), _, _) => format!("{} {}", call.tool, p.raw),
        (None, None, Some(u), _) => format!("{} {u}", call.tool),
        (None, None, None, Some(a)) => format!("{} {a}", call.tool),
        _ => format!("{} {}", call.tool, Value::Object(call.params.clone())),
    };
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let one_line = redact_text(&one_line).into_owned();
    let chars: Vec<char> = one_line.chars().collect();
    if chars.len() <= MAX_SUMMARY {
        return one_line;
    }
    let keep = MAX_SUMMARY - 40;
    let head: String = chars[..keep / 2].iter().collect();
    let tail: String = chars[chars.len() - keep / 2..].iter().collect();
    format!(
        "{head} [\u{2026} {} characters cut \u{2026}] {tail}",
        chars.len() - 2 * (keep / 2)
    )
}

#[cfg(test)]
mod summary_tests {
    use super::summary;
    use toolgate_core::paths::Env;
    use toolgate_core::{ToolCall, normalize};

    fn line(v: serde_json::Value) -> String {
        let call: ToolCall = serde_json::from_value(v).unwrap();
        summary(
            &call,
            &normalize(&call, &Env::new("/home/dev", "/home/dev/p")),
        )
    }

    #[test]
    fn says_what_the_gate_judged() {
        assert_eq!(
            line(serde_json::json!({"tool": "Bash", "params": {"command": "ls  -la\n"}})),
            "ls -la"
        );
        assert_eq!(
            line(
                serde_json::json!({"tool": "Write", "params": {"file_path": "~/.bashrc", "content": "x"}})
            ),
            "Write ~/.bashrc"
        );
        assert_eq!(
            line(serde_json::json!({"tool": "web_fetch", "params": {"url": "http://x.test/"}})),
            "web_fetch http://x.test/"
        );
        assert_eq!(
            line(serde_json::json!({"tool": "gateway", "params": {"action": "config.apply"}})),
            "gateway config.apply"
        );
        // A long command is kept whole (the tail is where an attacker
        // hides `; rm -rf ~`) up to a generous bound, then cut visibly.
        let cmd = format!("ls {} ; rm -rf ~", "x".repeat(300));
        let long = line(serde_json::json!({"tool": "Bash", "params": {"command": cmd}}));
        assert_eq!(long, cmd);
        let cmd = format!("ls {} ; rm -rf ~", "x".repeat(10_000));
        let long = line(serde_json::json!({"tool": "Bash", "params": {"command": cmd}}));
        assert!(long.chars().count() <= super::MAX_SUMMARY, "{}", long.len());
        assert!(
            long.starts_with("ls xxx") && long.ends_with("; rm -rf ~"),
            "{long}"
        );
        assert!(long.contains("characters cut"));
        // Redacted before it is cut: a password at the edge is still found.
        let cmd = format!("{} mysql -pS3cret", "y".repeat(4000));
        let long = line(serde_json::json!({"tool": "Bash", "params": {"command": cmd}}));
        assert!(!long.contains("S3cret"), "{long}");
        let secret = line(serde_json::json!({"tool": "Bash",
            "params": {"command": "curl -H 'Authorization: Bearer sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789' x"}}));
        assert!(!secret.contains("abcdefghijklmnop"), "{secret}");
    }
}
