//! The words every runtime's reply shares: why a call stopped, how to get an
//! escalated call approved, what to do when toolgate itself failed.

use crate::model::{Decision, ESCALATE_PREFIX, Verdict};
use serde_json::{Map, Value};

/// The pending approval's id: from `decision.approval`, else from the
/// `TOOLGATE_ESCALATE|<id>|…` protocol line. `None` when neither has one.
pub(crate) fn approval_id(d: &Decision) -> Option<&str> {
    if let Some(a) = d.approval.as_ref().filter(|a| !a.id.trim().is_empty()) {
        return Some(a.id.trim());
    }
    let line = d.block_reason.as_deref()?;
    let mut fields = line.split('|');
    (fields.next() == Some(ESCALATE_PREFIX))
        .then(|| fields.next())
        .flatten()
        .map(str::trim)
        .filter(|id| !id.is_empty())
}

/// The knowledge text to show the agent, when there is any.
pub(crate) fn context(d: &Decision) -> Option<&str> {
    d.context.as_deref().filter(|c| !c.trim().is_empty())
}

/// The rewritten params, when a layer rewrote them. An empty map is no
/// rewrite: replacing a call's input with nothing is never meant.
pub(crate) fn rewrite(d: &Decision) -> Option<&Map<String, Value>> {
    d.params.as_ref().filter(|p| !p.is_empty())
}

/// The reason with toolgate's layer and risk class, never empty.
fn headline(d: &Decision, fallback: &str) -> String {
    let reason = d.reason.trim();
    let reason = if reason.is_empty() { fallback } else { reason };
    format!(
        "{reason} [toolgate: {} layer, {}]",
        d.layer.as_str(),
        d.risk
    )
}

/// Appends the protocol line, when the decision has one.
fn with_protocol(mut text: String, d: &Decision) -> String {
    if let Some(line) = d.block_reason.as_deref().filter(|l| !l.trim().is_empty()) {
        text.push('\n');
        text.push_str(line);
    }
    text
}

/// Why an allowed call may run.
pub(crate) fn allowed(d: &Decision) -> String {
    headline(d, "allowed by toolgate")
}

/// Why a blocked call stopped, and that no approval will change it — unless
/// the block only ended a wait and its approval is still pending (the
/// decision then carries it), which an operator may still grant.
pub(crate) fn blocked(d: &Decision) -> String {
    if d.needs_ack() {
        // Held for knowledge: the agent must read it, so it is in the reason
        // itself (some runtimes show a denied call's reason and nothing else).
        let knowledge = context(d).unwrap_or("");
        let text = format!(
            "{}\n\n{knowledge}\nThis is not a refusal: read the above, then retry exactly the \
             same call to acknowledge it.",
            headline(d, "held by toolgate until knowledge is acknowledged")
        );
        return with_protocol(text, d);
    }
    let next = match d.approval.as_ref().filter(|a| !a.id.trim().is_empty()) {
        Some(a) => {
            let n = a.min_approvals.max(1);
            let s = if n == 1 { "" } else { "s" };
            format!(
                "Approval {} is still pending (until {}, {n} approval{s} needed): once it is \
                 approved (`toolgate approvals approve {}`), retry exactly the same call.",
                a.id.trim(),
                a.expires_at,
                a.id.trim()
            )
        }
        None => "No approval can unlock this call; do not retry it in another form.".to_string(),
    };
    let text = format!("{}\n{next}", headline(d, "blocked by toolgate"));
    with_protocol(text, d)
}

/// Why an escalated call waits, the approval id, and how to approve it.
/// `stopped` says the runtime is told to deny (not ask), so the call did not run.
pub(crate) fn escalated(d: &Decision, stopped: bool) -> String {
    let mut text = headline(d, "needs approval from toolgate");
    if stopped {
        text.push_str("\nThis call did not run.");
    }
    match approval_id(d) {
        Some(id) => {
            text.push_str(&format!("\nApproval id: {id}"));
            if let Some(a) = d.approval.as_ref() {
                let n = a.min_approvals;
                let s = if n == 1 { "" } else { "s" };
                text.push_str(&format!(
                    " (pending until {}, {n} approval{s} needed)",
                    a.expires_at
                ));
            }
            text.push_str(&format!(
                ".\nTo run it, an operator approves it with `toolgate approvals approve {id}`"
            ));
            if let Some(url) = d.approval.as_ref().and_then(|a| a.approve_url.as_deref()) {
                text.push_str(&format!(" or at {url}"));
            }
            text.push_str("; then retry exactly the same call, and it runs once.");
        }
        None => text.push_str(
            "\ntoolgate recorded no approval request for this call (is the toolgate daemon \
             running?), so it cannot be approved as it is; ask an operator.",
        ),
    }
    with_protocol(text, d)
}

/// The text for a call that must not run now: blocked or escalated.
pub(crate) fn stopped(d: &Decision, ask: bool) -> String {
    match d.decision {
        Verdict::Escalate => escalated(d, !ask),
        _ => blocked(d),
    }
}

/// Appends the knowledge text, for runtimes that have no separate field
/// the model reads.
pub(crate) fn with_context(mut text: String, d: &Decision) -> String {
    if let Some(c) = context(d) {
        text.push_str("\n\n");
        text.push_str(c);
    }
    text
}

/// The fail-closed message when toolgate could not decide.
pub(crate) fn failed(message: &str) -> String {
    let message = message.trim();
    let message = if message.is_empty() {
        "unknown error"
    } else {
        message
    };
    format!(
        "toolgate could not check this call, so it is blocked (fail-closed): {message}. \
         Fix what it says (is the daemon running? is the token right?), then retry the call."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ApprovalRef, Layer, RiskClass};

    fn escalation() -> Decision {
        let mut d = Decision::new(
            Verdict::Escalate,
            RiskClass::R3,
            60,
            Layer::Policy,
            "git push",
        );
        d.block_reason = Decision::protocol_line(Verdict::Escalate, Some("ap_1"), &d.reason);
        d.approval = Some(ApprovalRef {
            id: "ap_1".into(),
            expires_at: "2026-11-01T00:05:00Z".into(),
            min_approvals: 2,
            approve_url: Some("http://127.0.0.1:7878/a/ap_1".into()),
        });
        d
    }

    #[test]
    fn approval_id_comes_from_the_ref_or_the_protocol_line() {
        let mut d = escalation();
        assert_eq!(approval_id(&d), Some("ap_1"));
        d.approval = None;
        assert_eq!(approval_id(&d), Some("ap_1"));
        d.block_reason = Some("TOOLGATE_ESCALATE||why".into());
        assert_eq!(approval_id(&d), None);
        d.block_reason = Some("TOOLGATE_BLOCK|ap_1|why".into());
        assert_eq!(approval_id(&d), None);
    }

    #[test]
    fn escalation_names_the_id_the_command_the_url_and_the_quorum() {
        let t = escalated(&escalation(), true);
        assert!(
            t.starts_with("needs approval: git push [toolgate: policy layer, R3]"),
            "{t}"
        );
        assert!(t.contains("did not run"));
        assert!(t.contains("`toolgate approvals approve ap_1`"));
        assert!(t.contains("http://127.0.0.1:7878/a/ap_1"));
        assert!(t.contains("2 approvals needed"));
        assert!(
            t.ends_with("TOOLGATE_ESCALATE|ap_1|needs approval: git push"),
            "{t}"
        );
    }

    #[test]
    fn escalation_without_an_id_says_so() {
        let mut d = escalation();
        d.approval = None;
        d.block_reason = None;
        let t = escalated(&d, false);
        assert!(t.contains("no approval request"), "{t}");
        assert!(!t.contains("did not run"));
    }

    #[test]
    fn texts_are_never_empty() {
        let mut d = escalation();
        d.reason = "  ".into();
        assert!(blocked(&d).starts_with("blocked by toolgate"));
        assert!(allowed(&d).starts_with("allowed by toolgate"));
        assert!(failed(" ").contains("unknown error"));
    }
}
