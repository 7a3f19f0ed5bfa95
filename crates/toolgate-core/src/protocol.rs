//! The protocol text: a short, fixed-shape briefing for the agent's prompt
//! (a scope profile's protocol layer) so it knows how toolgate answers before it is
//! stopped, and does not try to talk or rephrase its way around a block.

use crate::knowledge::settings::Enforcement;
use crate::model::{ACK_PREFIX, BLOCK_PREFIX, ESCALATE_PREFIX};
use crate::policy::{Policy, RuleList};

/// Most rules quoted from each list: the text stays short (well under 500
/// tokens) however long the policy is.
const MAX_RULES_QUOTED: usize = 8;

/// The briefing for `policy`: how blocks and escalations look, what to do
/// with each, and the policy's own deny and ask rules (the first few).
pub fn protocol_text(policy: &Policy) -> String {
    let a = policy.approvals();
    let mut out = String::new();
    out.push_str("toolgate checks every tool call before it runs.\n");
    out.push_str(&format!(
        "- A result starting `{BLOCK_PREFIX}|` means the call was blocked and no approval \
         can make it run. Do not retry it, rephrase it, split it up or run it another way; \
         tell the user what you wanted to do and why it was blocked.\n"
    ));
    out.push_str(&format!(
        "- A result starting `{ESCALATE_PREFIX}|<id>|` means the call needs a person's approval. \
         Tell the user the id and what the call does. Once they approve it, retry exactly \
         the same call (same parameters) within {}; any change needs a new approval. \
         Pending requests expire after {}.\n",
        humanize(a.approval_window.as_secs()),
        humanize(a.pending_ttl.as_secs())
    ));
    if a.relay {
        out.push_str(
            "- If the user approves in this conversation, call `toolgate_approve` with \
             {\"id\": \"<id>\"}, then retry the call. Never approve on your own initiative; \
             high-risk (R4) calls cannot be relayed.\n",
        );
    } else {
        out.push_str(
            "- You cannot approve calls yourself: approvals come from an operator \
             (toolgate's control UI or `toolgate approvals approve <id>`).\n",
        );
    }
    let k = policy.knowledge();
    if k.enforcement == Enforcement::Strict || k.enforcement == Enforcement::Category {
        out.push_str(&format!(
            "- A result starting `{ACK_PREFIX}|<id>|` holds the call until you have read the \
             procedures and lessons shown with it (not a refusal). Read them, follow them, then \
             retry the call within {} to acknowledge.\n",
            humanize(k.cooldown.as_secs())
        ));
    }
    out.push_str("- Never edit toolgate's policy, data directory or hooks.\n");
    if let Some(p) = policy
        .profile()
        .filter(|p| p.doc.hardening.protocol_injection)
    {
        out.push_str(&profile_rules(p));
    }
    for (list, title) in [
        (RuleList::Deny, "Always blocked"),
        (RuleList::Ask, "Needs approval"),
    ] {
        let rules = policy.rules(list);
        if rules.is_empty() {
            continue;
        }
        let mut quoted: Vec<&str> = rules
            .iter()
            .take(MAX_RULES_QUOTED)
            .map(|r| r.text())
            .collect();
        if rules.len() > MAX_RULES_QUOTED {
            quoted.push("…");
        }
        out.push_str(&format!("{title}: {}\n", quoted.join(", ")));
    }
    out
}

/// Most items quoted from each profile list, and most characters each.
const MAX_ITEMS: usize = 12;
const MAX_ITEM_CHARS: usize = 80;

/// The scope profile's hard rules (its protocol layer): for whom the
/// agent acts, what it may and must never do, the institution's limits
/// and the autonomy tiers. Lists are cut so the whole text stays short.
fn profile_rules(p: &crate::profile::Profile) -> String {
    let d = &p.doc;
    let list = |items: &[String]| -> String {
        let mut v: Vec<String> = items
            .iter()
            .take(MAX_ITEMS)
            .map(|i| clean(i, MAX_ITEM_CHARS))
            .collect();
        if items.len() > MAX_ITEMS {
            v.push("…".into());
        }
        v.join(", ")
    };
    let mut out = String::from("Scope (hard rules; toolgate enforces them):\n");
    let mut who = d
        .provider
        .name
        .chars()
        .take(MAX_ITEM_CHARS)
        .collect::<String>();
    if let Some(l) = &d.provider.license {
        who.push_str(&format!(
            " ({})",
            l.kind.chars().take(20).collect::<String>()
        ));
    }
    if let Some(s) = &d.provider.specialty {
        who.push_str(&format!(
            ", {}",
            s.chars().take(MAX_ITEM_CHARS).collect::<String>()
        ));
    }
    out.push_str(&format!("- You act for {who}.\n"));
    out.push_str(&format!(
        "- Permitted: {}.\n",
        list(&d.scope.permitted_actions)
    ));
    if !d.scope.prohibited_actions.is_empty() {
        out.push_str(&format!(
            "- PROHIBITED: {}.\n",
            list(&d.scope.prohibited_actions)
        ));
    }
    if !d.scope.institutional_limitations.is_empty() {
        out.push_str(&format!(
            "- Limitations: {}.\n",
            list(&d.scope.institutional_limitations)
        ));
    }
    if !d.autonomy.is_empty() {
        let tiers: Vec<String> = d
            .autonomy
            .iter()
            .take(MAX_ITEMS)
            .map(|(k, t)| format!("{} {}", clean(k, 30), t.as_str()))
            .collect();
        out.push_str(&format!(
            "- Autonomy: {} (manual: a person approves each call).\n",
            tiers.join(" | ")
        ));
    }
    out.push_str("- Never act outside these boundaries. If unsure, ask the person you act for.\n");
    // One budget for the whole section, whatever the lists hold (multi-byte
    // text tokenizes densely): ~1,200 characters stays well under 500 tokens
    // with the fixed text above.
    if out.chars().count() > MAX_PROFILE_CHARS {
        out = out.chars().take(MAX_PROFILE_CHARS).collect();
        out.push_str("…\n");
    }
    out
}

/// The most characters the profile adds to the protocol text.
const MAX_PROFILE_CHARS: usize = 1200;

/// A profile string as one plain line: control characters and line breaks
/// become spaces (a limitation cannot start a bullet of its own), leading
/// Markdown markers go, at most `max` characters.
fn clean(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.trim_start_matches(['-', '#', '*', '>', ' '])
        .chars()
        .take(max)
        .collect()
}

fn humanize(secs: u64) -> String {
    crate::time::span(secs, crate::time::SpanStyle::Prose)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_explains_both_answers_and_quotes_the_rules() {
        let p = Policy::from_toml_str(
            "[rules]\ndeny = [\"exec(rm -rf /)\"]\nask = [\"exec(git push:*)\"]\n",
            "t",
        )
        .unwrap();
        let t = protocol_text(&p);
        assert!(t.contains("TOOLGATE_BLOCK|"));
        assert!(t.contains("TOOLGATE_ESCALATE|<id>|"));
        assert!(t.contains("TOOLGATE_ACK|<id>|") && t.contains("within 5 min"));
        assert!(t.contains("exec(rm -rf /)"));
        assert!(t.contains("exec(git push:*)"));
        assert!(t.contains("10 min") && t.contains("5 min"), "{t}");
        assert!(t.contains("cannot approve"));
    }

    #[test]
    fn it_stays_short_however_long_the_policy() {
        let deny: Vec<String> = (0..200).map(|i| format!("\"exec(tool{i}:*)\"")).collect();
        let src = format!(
            "[rules]\ndeny = [{}]\n[approvals]\nrelay = true\n",
            deny.join(",")
        );
        let p = Policy::from_toml_str(&src, "t").unwrap();
        let t = protocol_text(&p);
        // ~4 characters per token: 500 tokens is about 2,000 characters.
        assert!(t.len() < 2000, "{} chars", t.len());
        assert!(t.contains("toolgate_approve"));
        assert!(t.contains('…'));
    }
}
