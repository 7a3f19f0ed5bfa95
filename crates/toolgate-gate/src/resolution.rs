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

/// One line for operators and the dashboard, from what the gate judged: the
/// command, else the tool and the path, URL or action it acts on, else the
/// tool and its params; redacted, on one line, at most 200 characters.
pub(crate) fn summary(call: &ToolCall, n: &NormalizedCall) -> String {
    let text = match (&n.command, n.paths.first(), n.urls.first(), &n.action) {
        (Some(c), _, _, _) => c.clone(),
        (None, Some(p), _, _) => format!("{} {}", call.tool, p.raw),
        (None, None, Some(u), _) => format!("{} {u}", call.tool),
        (None, None, None, Some(a)) => format!("{} {a}", call.tool),
        _ => format!("{} {}", call.tool, Value::Object(call.params.clone())),
    };
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let one_line = if one_line.chars().count() > 200 {
        let cut: String = one_line.chars().take(200).collect();
        format!("{cut}…")
    } else {
        one_line
    };
    redact_text(&one_line).into_owned()
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
        let long =
            line(serde_json::json!({"tool": "Bash", "params": {"command": "x".repeat(300)}}));
        assert_eq!(long.chars().count(), 201);
        let secret = line(serde_json::json!({"tool": "Bash",
            "params": {"command": "curl -H 'Authorization: Bearer sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789' x"}}));
        assert!(!secret.contains("abcdefghijklmnop"), "{secret}");
    }
}
