//! The Block Kit layout of approval messages. Slack refuses a message
//! whose blocks break its limits, so every text is clipped to them.

use super::{APPROVE_ACTION, DENY_ACTION};
use crate::notice::{Notice, Resolution, clip, rfc3339};
use serde_json::{Value, json};

/// The notification and screen-reader text that accompanies the blocks.
pub(super) fn fallback_text(n: &Notice) -> String {
    clip(&format!("{}: {}", n.title(), n.summary), 3000)
}

/// The request: what, how risky, why, until when, and the two buttons.
pub(super) fn request(n: &Notice) -> Value {
    let expiry = n.expires_at_ms.div_euclid(1000);
    let mut fields = vec![
        field("Risk", &escape(&n.risk)),
        field("Tool", &escape(&n.tool)),
        field("Votes", &n.votes_text()),
        // Slack shows this in each reader's own time zone; the text after
        // `|` is for clients that cannot.
        field(
            "Expires",
            &format!(
                "<!date^{expiry}^{{date_short_pretty}} {{time}}|{}>",
                rfc3339(expiry)
            ),
        ),
    ];
    if let Some(agent) = &n.agent {
        fields.push(field("Agent", &escape(agent)));
    }
    if let Some(session) = &n.session {
        fields.push(field("Session", &escape(session)));
    }
    let mut blocks = vec![
        header(&n.title()),
        section(&format!("*{}*", escape(&n.summary))),
        json!({ "type": "section", "fields": fields }),
        section(&format!("*Reason*\n{}", escape(&n.reason))),
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
        section(&format!("*{}*", escape(&n.summary))),
        section(&format!("{} {}", r.mark(), escape(&r.sentence()))),
    ])
}

fn header(text: &str) -> Value {
    json!({
        "type": "header",
        "text": { "type": "plain_text", "text": clip(text, 150), "emoji": true },
    })
}

fn section(mrkdwn: &str) -> Value {
    json!({ "type": "section", "text": { "type": "mrkdwn", "text": clip(mrkdwn, 3000) } })
}

fn field(name: &str, value: &str) -> Value {
    json!({ "type": "mrkdwn", "text": clip(&format!("*{name}*\n{value}"), 2000) })
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

    #[test]
    fn links_with_delimiters_are_dropped() {
        assert_eq!(link("https://x.invalid/a"), Some("https://x.invalid/a"));
        assert_eq!(link("https://x.invalid/a|b"), None);
        assert_eq!(link("javascript:alert(1)"), None);
    }
}
