//! One readable line for each thing a person watching `toolgate serve`
//! wants to see happen to an approval: a call held for approval, a vote
//! (and a refused one), and how it ended (approved, denied, expired, used).
//! Read from the audit log, so what the CLI, a chat channel or another
//! daemon did is logged too. Everything the agent chose (the call's
//! summary, reasons) is shown on one line with control characters escaped,
//! so a command cannot rewrite the operator's terminal.

use serde_json::Value;
use toolgate_core::visible_line;

/// Longest summary or reason shown, in characters.
const MAX_TEXT: usize = 160;

/// The line for an `approval.*` audit entry, or `None` for entries a
/// person does not need to see (other kinds, a refreshed approval).
/// `base_url` starts the link to the approval's page.
pub fn line(entry: &Value, base_url: &str) -> Option<String> {
    let kind = entry.get("kind")?.as_str()?.strip_prefix("approval.")?;
    let data = entry.get("data")?;
    let id = data.get("approval")?.as_str()?;
    let short = id.get(..8).unwrap_or(id);
    let text = |k: &str| data.get(k).and_then(Value::as_str).map(one_line);
    let summary = text("summary")
        .map(|s| format!(" `{s}`"))
        .unwrap_or_default();
    let risk = text("risk").unwrap_or_default();
    Some(match kind {
        "created" => {
            let need = data
                .get("min_approvals")
                .and_then(Value::as_u64)
                .unwrap_or(1);
            let who = data
                .get("requester")
                .and_then(|r| r.as_str().map(one_line))
                .map(|r| format!(", asked by {r}"))
                .unwrap_or_default();
            let reason = text("reason").map(|r| format!(": {r}")).unwrap_or_default();
            format!(
                "held {risk} {short}{summary} for approval ({need} needed{who}){reason}; {base_url}/#approval/{id}"
            )
        }
        "vote" => {
            let who = text("identity").unwrap_or_else(|| "someone".into());
            let verb = if data.get("approve").and_then(Value::as_bool) == Some(true) {
                "approve"
            } else {
                "deny"
            };
            let via = text("channel")
                .map(|c| format!(" via {}", c.split(' ').next().unwrap_or(&c)))
                .unwrap_or_default();
            let why = text("reason")
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            match text("refused") {
                Some(refused) => {
                    format!("vote refused on {short}: {who}'s {verb}{via}: {refused}")
                }
                None => format!("vote on {short}: {who} voted {verb}{via}{why}"),
            }
        }
        "approved" | "denied" => {
            let how = text("resolution").unwrap_or_else(|| kind.to_string());
            format!("{kind} {short}{summary}: {how}")
        }
        "expired" => format!("expired {short}{summary}: nobody decided in time"),
        "consumed" => format!("used {short}{summary}: the agent's retry ran it, once"),
        _ => return None,
    })
}

/// Agent-chosen text on one line, escaped and cut to [`MAX_TEXT`].
fn one_line(text: &str) -> String {
    let shown = visible_line(text);
    if shown.chars().count() <= MAX_TEXT {
        return shown.into_owned();
    }
    let cut: String = shown.chars().take(MAX_TEXT).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::line;
    use serde_json::json;

    const ID: &str = "3f1b2c4d00000000000000000000abcd";

    fn entry(kind: &str, data: serde_json::Value) -> serde_json::Value {
        let mut data = data;
        data["approval"] = json!(ID);
        json!({"kind": kind, "data": data})
    }

    #[test]
    fn each_step_of_an_approval_is_one_line() {
        let held = line(
            &entry(
                "approval.created",
                json!({"risk": "R3", "summary": "git push origin main", "min_approvals": 1,
                       "requester": "alice", "reason": "pushes to a shared branch"}),
            ),
            "https://tg.example.com",
        )
        .unwrap();
        assert_eq!(
            held,
            format!(
                "held R3 3f1b2c4d `git push origin main` for approval (1 needed, asked by alice): pushes to a shared branch; https://tg.example.com/#approval/{ID}"
            )
        );
        let vote = line(
            &entry(
                "approval.vote",
                json!({"identity": "bob", "approve": true, "channel": "ui"}),
            ),
            "",
        )
        .unwrap();
        assert_eq!(vote, "vote on 3f1b2c4d: bob voted approve via ui");
        let refused = line(
            &entry(
                "approval.vote",
                json!({"identity": "alice", "approve": true, "refused": "the requester cannot approve"}),
            ),
            "",
        )
        .unwrap();
        assert!(
            refused.contains("refused") && refused.contains("requester"),
            "{refused}"
        );
        let denied = line(
            &entry(
                "approval.denied",
                json!({"summary": "rm -rf build", "resolution": "denied by bob"}),
            ),
            "",
        )
        .unwrap();
        assert_eq!(denied, "denied 3f1b2c4d `rm -rf build`: denied by bob");
        assert!(line(&entry("approval.refreshed", json!({})), "").is_none());
        assert!(line(&json!({"kind": "decision", "data": {}}), "").is_none());
    }

    #[test]
    fn agent_text_cannot_rewrite_the_terminal() {
        let held = line(
            &entry(
                "approval.created",
                json!({"summary": "ls\u{1b}[2K\rrm -rf ~\n\u{202e}x", "risk": "R4"}),
            ),
            "",
        )
        .unwrap();
        assert!(
            !held.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{held:?}"
        );
        assert!(
            held.contains("\\u{1b}") && held.contains("rm -rf ~"),
            "{held}"
        );
        let long = "x".repeat(1000);
        let cut = line(&entry("approval.expired", json!({"summary": long})), "").unwrap();
        assert!(cut.chars().count() < 250, "{}", cut.len());
    }
}
