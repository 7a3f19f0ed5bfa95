//! What an argument says whatever the tool is called: opened to everyone
//! (`visibility: public`), moved to the trash (`in_trash: true`), people
//! outside the organisation brought in (an assignee, a watcher), alerts
//! silenced, a cluster role bound, a CI workflow committed, the gate's own
//! plugin switched off.

use super::targets::{self, fold};
use super::{EffectKind, Judged};
use crate::model::{RiskClass, Verdict};
use crate::normalize::NormalizedCall;
use crate::policy::Organization;
use serde_json::Value;

fn escalate(class: RiskClass, rule: &'static str, reason: String) -> Judged {
    Judged {
        verdict: Verdict::Escalate,
        class,
        reason,
        rule,
    }
}

/// Whether an argument opens what the call names to everyone.
pub(super) fn opens_to_everyone(p: &serde_json::Map<String, Value>) -> bool {
    targets::flat(p).iter().any(|(k, v)| {
        let k = fold(k);
        match v {
            Value::String(s) => {
                let s = s.to_ascii_lowercase().replace(['-', ' '], "_");
                (matches!(
                    k.as_str(),
                    "type"
                        | "visibility"
                        | "access"
                        | "audience"
                        | "scope"
                        | "sharing"
                        | "sharetype"
                        | "sharingtype"
                        | "accesstype"
                        | "linkaccess"
                        | "generalaccess"
                        | "linksharing"
                        | "privacy"
                        | "permission"
                        | "role"
                        | "acl"
                        | "cannedacl"
                ) && matches!(
                    s.as_str(),
                    "anyone"
                        | "public"
                        | "anyone_with_link"
                        | "anyonewithlink"
                        | "everyone"
                        | "world"
                        | "internet"
                        | "published"
                        | "public_read"
                        | "public_read_write"
                        | "publicread"
                        | "allusers"
                        | "anonymous"
                )) || s == "allusers"
                    || s == "allauthenticatedusers"
            }
            Value::Bool(b) => {
                (matches!(
                    k.as_str(),
                    "public"
                        | "ispublic"
                        | "makepublic"
                        | "published"
                        | "allowfilediscovery"
                        | "publicaccess"
                ) && *b)
                    || (matches!(k.as_str(), "private" | "isprivate" | "internal") && !*b)
            }
            _ => false,
        }
    })
}

/// The universal findings for a call read as `kind`.
pub(super) fn findings(
    n: &NormalizedCall,
    kind: EffectKind,
    tool_words: &[String],
    org: &Organization,
) -> Vec<Judged> {
    let p = &n.params;
    let who = &n.tool;
    let mut out = Vec::new();
    let flat = targets::flat(p);
    let has = |list: &[&str]| tool_words.iter().any(|w| list.contains(&w.as_str()));
    let key_true = |keys: &[&str]| {
        flat.iter()
            .any(|(k, v)| keys.contains(&fold(k).as_str()) && v.as_bool() == Some(true))
    };
    if kind != EffectKind::Read && kind != EffectKind::Publish && opens_to_everyone(p) {
        out.push(escalate(
            RiskClass::R4,
            "effects.publish-public",
            format!("{who} opens what it names to everyone (public)"),
        ));
    }
    if kind != EffectKind::Delete
        && key_true(&[
            "intrash",
            "trashed",
            "archived",
            "deleted",
            "delete",
            "deleteenvvar",
            "remove",
            "purge",
        ])
    {
        out.push(escalate(
            RiskClass::R3,
            "effects.trash",
            format!("{who} deletes or moves to the trash what it names"),
        ));
    }
    // People outside brought into a ticket, a document or a task.
    if matches!(kind, EffectKind::Post | EffectKind::Write) {
        let outside: Vec<String> = addresses(p)
            .into_iter()
            .filter(|e| !org.email_inside(e))
            .take(3)
            .collect();
        if !outside.is_empty() {
            out.push(escalate(
                RiskClass::R3,
                "effects.people-outside",
                format!(
                    "{who} brings in {}, outside the organisation",
                    outside.join(", ")
                ),
            ));
        }
    }
    // Alerts, error reporting and audit trails switched off or silenced.
    let monitoring_words = has(&[
        "mute",
        "silence",
        "silences",
        "downtime",
        "snooze",
        "unmonitor",
    ]);
    let switched_off = flat.iter().any(|(k, v)| {
        matches!(
            fold(k).as_str(),
            "isactive" | "enabled" | "active" | "islogging" | "enablelogging"
        ) && v.as_bool() == Some(false)
    }) && has(&[
        "dsn",
        "alert",
        "alerts",
        "monitor",
        "monitors",
        "rule",
        "rules",
        "trail",
        "logging",
        "key",
        "keys",
        "webhook",
        "check",
        "checks",
        "notification",
        "notifications",
    ]);
    let ignored_forever = flat.iter().any(|(k, v)| {
        matches!(fold(k).as_str(), "status" | "ignoremode" | "substatus")
            && v.as_str().is_some_and(|s| {
                matches!(
                    s.to_ascii_lowercase().as_str(),
                    "ignored" | "forever" | "archived_forever" | "muted"
                )
            })
    });
    if (monitoring_words
        && has(&[
            "create", "schedule", "add", "set", "mute", "silence", "manage", "snooze",
        ]))
        || switched_off
        || ignored_forever
        || tool_words
            .first()
            .is_some_and(|w| w == "mute" || w == "silence")
    {
        out.push(escalate(
            RiskClass::R3,
            "effects.monitoring-off",
            format!("{who} silences alerts, error reporting or an audit trail"),
        ));
    }
    // Branch protection lifted.
    if has(&["unprotect"]) || key_true(&["allowforcepush", "allowforcepushes", "allowdeletions"]) {
        out.push(escalate(
            RiskClass::R4,
            "effects.safeguard-off",
            format!("{who} lifts a branch's protection (force pushes, deletion)"),
        ));
    }
    // A cluster role bound: who may do anything in the cluster.
    let texts = crate::normalize::param_strings(p, true);
    if kind != EffectKind::Read
        && texts
            .iter()
            .any(|t| t.contains("RoleBinding") || t.contains("ClusterRole"))
    {
        let admin = texts.iter().any(|t| {
            t.contains("cluster-admin")
                || t.contains("\"*\"")
                || t.contains("['*']")
                || t.contains("[\"*\"]")
                || t.contains("- '*'")
                || t.contains("- \"*\"")
        });
        out.push(escalate(
            if admin { RiskClass::R4 } else { RiskClass::R3 },
            "effects.rbac",
            format!("{who} changes who may do what in the cluster (a role binding)"),
        ));
    }
    // CI workflows and scheduled jobs committed through an API.
    if matches!(
        kind,
        EffectKind::Post | EffectKind::Write | EffectKind::Delete
    ) {
        let paths = targets::values_under(p, &["path", "filepath", "filename", "file"]);
        if let Some(path) = paths.iter().find(|f| is_ci_file(f)) {
            out.push(escalate(
                RiskClass::R3,
                "effects.ci-workflow",
                format!("{who} commits the CI workflow {path}, code that runs with the repository's secrets"),
            ));
        }
    }
    // A query document that writes: `$out`/`$merge` stages, or a change to
    // every document (an empty filter).
    if has_key(p, 0, &|k| k == "$out" || k == "$merge") {
        out.push(escalate(
            RiskClass::R3,
            "effects.query-writes",
            format!("{who} writes its results over a collection ($out or $merge)"),
        ));
    }
    if matches!(
        kind,
        EffectKind::Delete | EffectKind::Write | EffectKind::Infra
    ) && has(&["many", "all", "update", "delete", "bulk"])
        && p.iter().any(|(k, v)| {
            matches!(fold(k).as_str(), "filter" | "query" | "where" | "selector")
                && v.as_object().is_some_and(|m| m.is_empty())
        })
    {
        out.push(escalate(
            RiskClass::R4,
            "effects.every-document",
            format!("{who} changes or deletes every document of a collection (an empty filter)"),
        ));
    }
    // OpenClaw's gateway told to change toolgate's own plugin.
    if n.mcp.is_none()
        && n.tool == "gateway"
        && n.action.as_deref().is_some_and(|a| {
            a.starts_with("config.")
                && !matches!(
                    a,
                    "config.get" | "config.schema" | "config.list" | "config.schema.lookup"
                )
        })
        && texts
            .iter()
            .any(|t| t.to_ascii_lowercase().contains("toolgate"))
    {
        out.push(Judged {
            verdict: Verdict::Block,
            class: RiskClass::R4,
            reason: format!("{who} changes the gateway's configuration of toolgate itself"),
            rule: "effects.gate-config",
        });
    }
    out
}

/// Keys whose addresses reach nobody: the caller's own identity, and prose
/// that merely mentions an address.
const NOT_REACHED: &[&str] = &[
    "usergoogleemail",
    "from",
    "sender",
    "author",
    "creator",
    "reporter",
    "owneremail",
    "body",
    "description",
    "text",
    "content",
    "message",
    "comment",
    "title",
    "summary",
    "markdown",
    "html",
    "notes",
    "note",
    "subject",
    "query",
    "jql",
    "cql",
    "name",
    "inreplyto",
    "references",
    "messageid",
    "threadid",
    "id",
];

/// Every email address the call's arguments give outside prose and the
/// caller's own identity, wherever it stands (`assignee`, `watchers`,
/// `toRecipients[].emailAddress.address`, a `users('bob@x')` link).
pub(super) fn addresses(p: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (k, v) in targets::flat(p) {
        let Some(s) = v.as_str() else { continue };
        if NOT_REACHED.contains(&fold(&k).as_str()) {
            continue;
        }
        for e in emails_in(s) {
            if !out.contains(&e) {
                out.push(e);
            }
        }
    }
    out
}

/// Whether a repository path is a CI workflow or pipeline definition.
fn is_ci_file(path: &str) -> bool {
    let p = path.trim_start_matches("./").trim_start_matches('/');
    p.starts_with(".github/workflows/")
        || p == ".gitlab-ci.yml"
        || p.starts_with(".gitlab/ci/")
        || p.starts_with(".circleci/")
        || p == "Jenkinsfile"
        || p == "azure-pipelines.yml"
        || p == "bitbucket-pipelines.yml"
        || p.starts_with(".buildkite/")
}

/// The email addresses in a text.
fn emails_in(text: &str) -> Vec<String> {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                ',' | ';' | '<' | '>' | '"' | '\'' | '(' | ')' | '[' | ']'
            )
    })
    .filter(|w| {
        let Some((local, domain)) = w.rsplit_once('@') else {
            return false;
        };
        !local.is_empty()
            && domain.contains('.')
            && domain
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !domain.ends_with('.')
    })
    .map(str::to_string)
    .collect()
}

/// Whether any object key at any depth (bounded) satisfies `pred`.
fn has_key(v: &serde_json::Map<String, Value>, depth: usize, pred: &dyn Fn(&str) -> bool) -> bool {
    if depth > 8 {
        return false;
    }
    v.iter().any(|(k, v)| {
        pred(k)
            || match v {
                Value::Object(m) => has_key(m, depth + 1, pred),
                Value::Array(items) => items
                    .iter()
                    .any(|i| i.as_object().is_some_and(|m| has_key(m, depth + 1, pred))),
                _ => false,
            }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ci_files_are_recognised() {
        assert!(super::is_ci_file(".github/workflows/x.yml"));
        assert!(super::is_ci_file(".gitlab-ci.yml"));
        assert!(!super::is_ci_file("src/workflows.rs"));
    }
}
