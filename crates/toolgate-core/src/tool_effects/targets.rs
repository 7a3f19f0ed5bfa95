//! Who and what a call reaches, read from its arguments: recipients,
//! repository owners, audiences, roles, amounts, live or test mode,
//! environments. Keys are compared folded (lowercase, no `_` or `-`), at
//! any depth, within the same bounds as the normalizer's walks.

use crate::policy::Organization;
use serde_json::{Map, Value};

/// The deepest level and the most values a walk reads.
const MAX_DEPTH: usize = 8;
const MAX_VALUES: usize = 512;

/// `camelCase`, `snake_case` and `kebab-case` keys compared alike.
pub(super) fn fold(k: &str) -> String {
    k.chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Every scalar under a key whose folded name is in `keys`, as text, at
/// any depth (arrays and objects under such a key give their strings, and
/// an object's `email`/`address`/`id`/`name` fields).
pub(super) fn values_under(params: &Map<String, Value>, keys: &[&str]) -> Vec<String> {
    keyed_under(params, keys)
        .into_iter()
        .map(|(_, v)| v)
        .collect()
}

/// [`values_under`], each value with the folded key it was found under.
fn keyed_under(params: &Map<String, Value>, keys: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // (key, value, depth, the matching key above it)
    let mut stack: Vec<(&str, &Value, usize, Option<String>)> = params
        .iter()
        .map(|(k, v)| (k.as_str(), v, 1, None))
        .collect();
    while let Some((key, v, depth, above)) = stack.pop() {
        if depth > MAX_DEPTH || out.len() >= MAX_VALUES {
            break;
        }
        let folded = fold(key);
        let hit = above.or_else(|| keys.contains(&folded.as_str()).then_some(folded));
        match v {
            Value::String(s) => out.extend(hit.map(|k| (k, s.clone()))),
            Value::Number(n) => out.extend(hit.map(|k| (k, n.to_string()))),
            Value::Bool(b) => out.extend(hit.map(|k| (k, b.to_string()))),
            Value::Array(items) => {
                stack.extend(items.iter().map(|i| (key, i, depth + 1, hit.clone())));
            }
            Value::Object(m) => stack.extend(m.iter().map(|(k, i)| {
                // Under a matching key, only the fields that name someone.
                let named = hit.clone().filter(|_| {
                    matches!(
                        fold(k).as_str(),
                        "email"
                            | "emailaddress"
                            | "address"
                            | "id"
                            | "name"
                            | "username"
                            | "user"
                            | "phone"
                            | "number"
                            | "value"
                    )
                });
                (k.as_str(), i, depth + 1, named)
            })),
            Value::Null => {}
        }
    }
    out
}

/// The first string, number or boolean under one of `keys`.
pub(super) fn first_under(params: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    values_under(params, keys).into_iter().next()
}

/// Keys whose values make a message or an invitation reach someone.
pub(super) const RECIPIENT_KEYS: &[&str] = &[
    "to",
    "cc",
    "bcc",
    "recipient",
    "recipients",
    "email",
    "emails",
    "emailaddress",
    "useremail",
    "address",
    "addresses",
    "attendees",
    "attendee",
    "invitees",
    "invitee",
    "guests",
    "guest",
    "participants",
    "participant",
    "user",
    "users",
    "userid",
    "userids",
    "username",
    "usernames",
    "member",
    "members",
    "channel",
    "channelid",
    "channelname",
    "channels",
    "chatid",
    "conversation",
    "conversationid",
    "phone",
    "phonenumber",
    "number",
    "target",
    "targets",
    "sharewith",
    "grantee",
    "principal",
    "collaborator",
    "forwardto",
    "forward",
    "dest",
    "destination",
    "group",
    "groupid",
    "room",
    "roomid",
    "thread",
    "recipientemail",
    "toemail",
    "toaddress",
    "webhook",
    "webhookurl",
];

/// Keys that name a channel rather than a person.
const CHANNEL_KEYS: &[&str] = &[
    "channel",
    "channelid",
    "channelname",
    "channels",
    "chatid",
    "conversation",
    "conversationid",
    "room",
    "roomid",
    "group",
    "groupid",
    "thread",
];

/// One recipient and whether it is inside the organisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Recipient {
    pub(super) text: String,
    pub(super) inside: bool,
}

/// Every recipient a call names, classified. `chat` says the tool is a
/// chat server's, where a bare user id is a member of the workspace.
pub(super) fn recipients(
    params: &Map<String, Value>,
    org: &Organization,
    chat: bool,
) -> Vec<Recipient> {
    let mut out: Vec<Recipient> = Vec::new();
    let mut push = |text: &str, inside: bool| {
        let t = text.trim();
        if !t.is_empty() && !out.iter().any(|r| r.text == t) {
            out.push(Recipient {
                text: t.to_string(),
                inside,
            });
        }
    };
    for (key, v) in keyed_under(params, RECIPIENT_KEYS) {
        let channel_key = CHANNEL_KEYS.contains(&key.as_str());
        // `a@x.com, b@y.com` in one string is two recipients.
        for part in v.split([',', ';']) {
            // OpenClaw's `channel:C0…`, `user:U0…` targets.
            let p = part.trim();
            let p = p
                .strip_prefix("channel:")
                .or_else(|| p.strip_prefix("user:"))
                .or_else(|| p.strip_prefix("chat:"))
                .unwrap_or(p);
            if p.is_empty() {
                continue;
            }
            if p.contains('@') && p.rsplit('@').next().is_some_and(|d| d.contains('.')) {
                push(p, org.email_inside(p));
            } else if p.starts_with("http://") || p.starts_with("https://") {
                // A webhook: where the message goes is its host.
                let inside = crate::url::hosts(p).iter().all(|h| org.domain_inside(h));
                push(p, inside);
            } else if org.channel_private(p) {
                push(p, true);
            } else if channel_key || p.starts_with('#') {
                // A direct-message channel of the workspace is a person in it.
                let dm = chat && p.starts_with('D') && is_chat_id(p);
                push(p, dm && !org.chat_workspaces.is_empty());
            } else if p.starts_with('+')
                || (!chat && p.chars().filter(|c| c.is_ascii_digit()).count() >= 7)
            {
                push(p, false);
            } else {
                // A user id or name: a colleague when the tool is a chat
                // server's and the organisation names its workspaces.
                push(
                    p,
                    chat && !org.chat_workspaces.is_empty() && !p.contains(':'),
                );
            }
        }
    }
    out
}

/// A Slack-style id: a capital letter then capitals and digits.
fn is_chat_id(s: &str) -> bool {
    s.len() >= 8
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Keys that name a repository or its owner on a code host.
const OWNER_KEYS: &[&str] = &[
    "owner",
    "org",
    "organization",
    "namespace",
    "workspace",
    "group",
];
const REPO_KEYS: &[&str] = &[
    "repo",
    "repository",
    "fullname",
    "repofullname",
    "projectid",
    "projectpath",
    "project",
    "repositoryname",
    "reponame",
    "slug",
];

/// The code-hosting owner a call names (`acme` from `owner`, `acme/api`,
/// or a repository URL), if any.
pub(super) fn repo_owner(params: &Map<String, Value>) -> Option<String> {
    if let Some(o) = first_under(params, OWNER_KEYS).filter(|o| !o.trim().is_empty()) {
        return Some(o);
    }
    for r in values_under(params, REPO_KEYS) {
        if let Some((owner, _)) = r.trim_start_matches('/').split_once('/') {
            return Some(owner.to_string());
        }
    }
    for u in values_under(params, &["url", "repourl", "htmlurl", "remote"]) {
        for host in ["github.com/", "gitlab.com/", "bitbucket.org/"] {
            if let Some(i) = u.find(host) {
                let rest = &u[i + host.len()..];
                if let Some(owner) = rest.split('/').next().filter(|o| !o.is_empty()) {
                    return Some(owner.to_string());
                }
            }
        }
    }
    None
}

/// Whether a money call runs in test mode. Only the server's configured
/// name can say so (`stripe-test`, `paypal-sandbox`): the user chose it,
/// and the server's own key decides where money moves. An argument
/// (`livemode: false`, a test key) is the agent's to write and a server may
/// ignore it, so arguments can only make a call live (a live key).
pub(super) fn test_mode(server: Option<&str>, params: &Map<String, Value>) -> bool {
    let live_key = crate::normalize::param_strings(params, true)
        .iter()
        .any(|s| s.contains("sk_live_") || s.contains("rk_live_"));
    !live_key
        && crate::normalize::name_words(server.unwrap_or(""))
            .iter()
            .any(|w| {
                matches!(
                    w.as_str(),
                    "test" | "sandbox" | "dev" | "staging" | "testmode"
                )
            })
}

/// Every `(key, value)` pair at any depth (bounded).
pub(super) fn flat(params: &Map<String, Value>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut stack: Vec<(&str, &Value, usize)> =
        params.iter().map(|(k, v)| (k.as_str(), v, 1)).collect();
    while let Some((k, v, d)) = stack.pop() {
        if d > MAX_DEPTH || out.len() >= MAX_VALUES {
            break;
        }
        match v {
            Value::Object(m) => stack.extend(m.iter().map(|(k, v)| (k.as_str(), v, d + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|v| (k, v, d + 1))),
            other => out.push((k.to_string(), other.clone())),
        }
    }
    out
}

/// The amount a money call moves, as written, if any.
pub(super) fn amount(params: &Map<String, Value>) -> Option<String> {
    first_under(
        params,
        &[
            "amount",
            "amountcents",
            "value",
            "total",
            "unitamount",
            "quantity",
        ],
    )
}
