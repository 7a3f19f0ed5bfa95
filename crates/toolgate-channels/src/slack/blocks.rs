//! The Block Kit layout of approval messages. Slack refuses a message
//! whose blocks break its limits, so every text is fitted to them, with
//! what is cut marked.
//!
//! Everything the agent could have written (the command, the tool's name,
//! the reason, agent and session names, an operator's denial reason) is
//! shown literally: `&`, `<` and `>` escaped (no `<!channel>`, `<@U…>`,
//! `<#C…>` or `<http://evil|innocent>`), inside a code block, where
//! mrkdwn's `*`, `_`, `~` and backticks cannot hide characters.

use super::{APPROVE_ACTION, DENY_ACTION};
use crate::notice::{Notice, Resolution, clip, clip_marked, fit_rendered, rfc3339};
use serde_json::{Value, json};

/// The notification and screen-reader text that accompanies the blocks
/// (sent with `mrkdwn: false`, and escaped all the same).
pub(super) fn fallback_text(n: &Notice) -> String {
    fit_rendered(3000, |m| {
        escape(&format!("{}: {}", n.title(), n.command_text(m)))
    })
}

/// The request: what, how risky, why, until when, and the two buttons.
pub(super) fn request(n: &Notice) -> Value {
    let expiry = n.expires_at_ms.div_euclid(1000);
    let mut fields = vec![
        field("Risk", &n.risk),
        field("Tool", &n.tool),
        json!({ "type": "mrkdwn", "text": format!("*Votes*\n{}", n.votes_text()) }),
        // Slack shows this in each reader's own time zone; the text after
        // `|` is for clients that cannot.
        json!({
            "type": "mrkdwn",
            "text": format!(
                "*Expires*\n<!date^{expiry}^{{date_short_pretty}} {{time}}|{}>",
                rfc3339(expiry)
            ),
        }),
    ];
    if let Some(agent) = &n.agent {
        fields.push(field("Agent", agent));
    }
    if let Some(session) = &n.session {
        fields.push(field("Session", session));
    }
    let mut blocks = vec![
        header(&n.title()),
        section(&fit_rendered(3000, |m| literal(&n.command_text(m)))),
        json!({ "type": "section", "fields": fields }),
        section(&fit_rendered(3000, |m| {
            format!("*Reason*\n{}", literal(&clip_marked(&n.reason, m)))
        })),
        json!({
            "type": "actions",
            "block_id": "toolgate_vote",
            "elements": [
                button("Approve", APPROVE_ACTION, "primary", &n.approval_id),
                button("Deny", DENY_ACTION, "danger", &n.approval_id),
            ],
        }),
    ];
    if let Some(link) = n.dashboard_url.as_deref().and_then(link) {
        blocks.push(json!({
            "type": "context",
            "elements": [{ "type": "mrkdwn", "text": format!("<{link}|Open in the dashboard>") }],
        }));
    }
    Value::Array(blocks)
}

/// The outcome, in place of the request: no buttons remain.
pub(super) fn resolved(n: &Notice, r: &Resolution) -> Value {
    json!([
        header(&n.title()),
        section(&fit_rendered(3000, |m| literal(&n.command_text(m)))),
        section(&fit_rendered(3000, |m| {
            format!("{} {}", r.mark(), literal(&clip_marked(&r.sentence(), m)))
        })),
    ])
}

/// The outcome as the message's own text (escaped; sent with
/// `mrkdwn: false`).
pub(super) fn resolved_text(r: &Resolution) -> String {
    fit_rendered(3000, |m| {
        format!("{} {}", r.mark(), escape(&clip_marked(&r.sentence(), m)))
    })
}

/// A header: plain text, no emoji codes. The tool's name is in it, and
/// whether Slack reads `<!here>` in plain text is not something to rely
/// on: angle brackets become look-alikes here (the Tool field shows the
/// name exactly).
fn header(text: &str) -> Value {
    let text = text.replace('<', "\u{2039}").replace('>', "\u{203a}");
    json!({
        "type": "header",
        "text": { "type": "plain_text", "text": clip(&text, 150), "emoji": false },
    })
}

fn section(mrkdwn: &str) -> Value {
    json!({ "type": "section", "text": { "type": "mrkdwn", "text": clip(mrkdwn, 3000) } })
}

/// A field whose value the agent may have chosen: shown literally.
fn field(name: &str, value: &str) -> Value {
    let text = fit_rendered(2000, |m| {
        format!("*{name}*\n{}", literal(&clip_marked(value, m)))
    });
    json!({ "type": "mrkdwn", "text": text })
}

/// `text` as a code block: escaped, so it mentions and links nothing, and
/// in a block, so no mrkdwn applies. Runs of three backticks (which would
/// close the block early) are broken with a zero-width space, as is a
/// backtick at either end (which would join the fence).
fn literal(text: &str) -> String {
    let mut body = escape(text);
    while body.contains("```") {
        body = body.replace("```", "`\u{200b}``");
    }
    if body.starts_with('`') {
        body.insert(0, '\u{200b}');
    }
    if body.ends_with('`') || body.is_empty() {
        body.push('\u{200b}');
    }
    format!("```{body}```")
}

fn button(label: &str, action_id: &str, style: &str, approval_id: &str) -> Value {
    json!({
        "type": "button",
        "text": { "type": "plain_text", "text": label },
        "style": style,
        "action_id": action_id,
        "value": approval_id,
    })
}

/// Slack's mrkdwn escaping: `&`, `<` and `>` are control characters (a
/// summary holding `<!channel>` would otherwise notify everyone).
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The URL if it can sit inside `<…|…>` unchanged.
fn link(url: &str) -> Option<&str> {
    let ok = (url.starts_with("https://") || url.starts_with("http://"))
        && !url.contains(['|', '<', '>', ' ']);
    ok.then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_defuses_mentions() {
        assert_eq!(escape("<!channel> & co"), "&lt;!channel&gt; &amp; co");
    }

    /// Mentions, broadcasts, disguised links and formatting all come out
    /// as the characters typed.
    #[test]
    fn literal_text_cannot_mention_link_or_format() {
        for tricky in [
            "<!channel> <!here> <!everyone> <@U024BE7LH> <#C024BE7LR> <!subteam^S1>",
            "<http://evil.test|innocent.example> <mailto:a@b|x>",
            "rm -rf ~/*important* _x_ ~y~ >quote",
            "```\n<!channel>\n```",
            "`",
            "``",
            "````",
        ] {
            let out = literal(tricky);
            assert!(!out.contains('<') && !out.contains('>'), "{out}");
            let inner = &out[3..out.len() - 3];
            assert!(!inner.contains("```"), "{out}");
            assert!(!inner.starts_with('`') && !inner.ends_with('`'), "{out}");
        }
    }

    #[test]
    fn links_with_delimiters_are_dropped() {
        assert_eq!(link("https://x.invalid/a"), Some("https://x.invalid/a"));
        assert_eq!(link("https://x.invalid/a|b"), None);
        assert_eq!(link("javascript:alert(1)"), None);
    }
}
