//! One table from an effect and its targets to a verdict: the same effect
//! gets the same answer whichever server spells it.

use super::targets::{self, Recipient};
use super::{Effect, EffectKind, Judged};
use crate::model::{RiskClass, Verdict};
use crate::normalize::{NormalizedCall, name_words};
use crate::policy::Organization;
use serde_json::Value;

/// The verdict on one effect, the class it puts the call in, and whether
/// where it goes is inside the organisation (for the outgoing-secrets scan).
pub(super) struct EffectVerdict {
    pub(super) found: Option<Judged>,
    pub(super) class: RiskClass,
    pub(super) destination_inside: bool,
}

fn allow(class: RiskClass, inside: bool) -> EffectVerdict {
    EffectVerdict {
        found: None,
        class,
        destination_inside: inside,
    }
}

fn hold(class: RiskClass, rule: &'static str, reason: String, inside: bool) -> EffectVerdict {
    EffectVerdict {
        found: Some(Judged {
            verdict: Verdict::Escalate,
            class,
            reason,
            rule,
        }),
        class,
        destination_inside: inside,
    }
}

fn block(rule: &'static str, reason: String) -> EffectVerdict {
    EffectVerdict {
        found: Some(Judged {
            verdict: Verdict::Block,
            class: RiskClass::R4,
            reason,
            rule,
        }),
        class: RiskClass::R4,
        destination_inside: true,
    }
}

fn outside_list(rs: &[Recipient]) -> String {
    let out: Vec<&str> = rs
        .iter()
        .filter(|r| !r.inside)
        .map(|r| r.text.as_str())
        .take(3)
        .collect();
    out.join(", ")
}

/// Whether the tool is a chat server's (a bare user id is a colleague
/// there): by the catalogue entry or the server's configured name, which
/// the user chose; a tool's own name is the server author's to pick.
fn is_chat(server: Option<&str>, via: Option<&str>) -> bool {
    matches!(via, Some("slack" | "discord" | "teams"))
        || name_words(server.unwrap_or("")).iter().any(|w| {
            matches!(
                w.as_str(),
                "slack" | "discord" | "teams" | "chat" | "mattermost" | "zulip"
            )
        })
}

pub(super) fn judge_effect(
    e: &Effect,
    server: Option<&str>,
    tool: &str,
    n: &NormalizedCall,
    org: &Organization,
    protected_branches: &[String],
) -> EffectVerdict {
    let p = &n.params;
    let who = &n.tool;
    let production = super::read::production(p, org);
    match e.kind {
        EffectKind::Read | EffectKind::Fetch => allow(RiskClass::R0, false),
        EffectKind::Run => (e.via == Some("fetch") || is_browser(server, tool))
            .then(|| browser_code(who, p))
            .flatten()
            .or_else(|| redis_command(who, p))
            .unwrap_or_else(|| allow(RiskClass::R0, false)),
        EffectKind::Write => allow(RiskClass::R1, false),
        EffectKind::Post => {
            // A ticket, page or document in the organisation's own tracker
            // is inside once the organisation is named; a repository is
            // inside when its owner is one of ours.
            let words = name_words(tool);
            if words.iter().any(|w| w == "fork")
                && targets::repo_owner(p).is_some_and(|o| org.owner_inside(&o))
                && !targets::values_under(
                    p,
                    &["organization", "org", "namespace", "targetnamespace"],
                )
                .iter()
                .any(|o| org.owner_inside(o))
            {
                return hold(
                    RiskClass::R3,
                    "effects.fork-out",
                    format!(
                        "{who} forks a repository of the organisation into an account outside it"
                    ),
                    false,
                );
            }
            match targets::repo_owner(p) {
                Some(owner)
                    if org.configured && !org.owner_inside(&owner) && is_code_host(server, e) =>
                {
                    hold(
                        RiskClass::R2,
                        "effects.post-outside",
                        format!(
                            "{who} posts in a repository of `{owner}`, outside the organisation"
                        ),
                        false,
                    )
                }
                Some(owner) => allow(RiskClass::R1, org.owner_inside(&owner)),
                None => allow(RiskClass::R1, org.configured),
            }
        }
        EffectKind::Send => {
            let words = name_words(tool);
            // A draft by the tool's name; a `draft: true` argument is the
            // agent's to add and a server may ignore it. OpenClaw's own
            // `message` tool honours `dryRun`.
            let draft = words.iter().any(|w| w == "draft" || w == "drafts")
                && !words.iter().any(|w| w == "send");
            let dry_run = e.via == Some("openclaw-message")
                && p.iter()
                    .any(|(k, v)| targets::fold(k) == "dryrun" && v.as_bool() == Some(true));
            if draft || dry_run {
                return allow(RiskClass::R1, true);
            }
            let mut rs = targets::recipients(p, org, is_chat(server, e.via));
            // An address under a key toolgate does not know still reaches
            // someone.
            for a in super::checks::addresses(p) {
                if !rs.iter().any(|r| r.text == a) {
                    let inside = org.email_inside(&a);
                    rs.push(Recipient { text: a, inside });
                }
            }
            let all_inside = !rs.is_empty() && rs.iter().all(|r| r.inside);
            // A mail filter that only labels or archives, an event on the
            // user's own calendar: nobody is reached.
            let reaches_nobody = words.iter().any(|w| {
                matches!(
                    w.as_str(),
                    "filter"
                        | "filters"
                        | "label"
                        | "labels"
                        | "rule"
                        | "rules"
                        | "event"
                        | "events"
                        | "meeting"
                        | "calendar"
                )
            });
            if rs.is_empty() && reaches_nobody {
                return allow(RiskClass::R1, true);
            }
            if rs.is_empty() {
                return hold(
                    RiskClass::R3,
                    "effects.send-unknown",
                    format!("{who} sends a message, and toolgate cannot tell to whom"),
                    false,
                );
            }
            if all_inside {
                if rs.len() > 20 {
                    return hold(
                        RiskClass::R3,
                        "effects.send-bulk",
                        format!("{who} sends one message to {} recipients", rs.len()),
                        true,
                    );
                }
                return allow(RiskClass::R1, true);
            }
            let why = if org.configured {
                "outside the organisation"
            } else {
                "and no [organization] section says who is inside"
            };
            hold(
                RiskClass::R3,
                "effects.send-outside",
                format!("{who} sends a message to {} {why}", outside_list(&rs)),
                false,
            )
        }
        EffectKind::Publish => publish(who, p, org),
        EffectKind::Grant => grant(who, tool, p, org),
        EffectKind::Pay if targets::test_mode(server, p) => allow(RiskClass::R1, true),
        EffectKind::Pay => {
            let amount = targets::amount(p)
                .map(|a| format!(" ({a})"))
                .unwrap_or_default();
            hold(
                RiskClass::R3,
                "effects.pay",
                format!(
                    "{who} moves money or changes what a customer pays{amount}, on a server not configured as a test one"
                ),
                false,
            )
        }
        EffectKind::Delete => {
            // A topic branch, or a file on one, is reviewable work: the
            // shell's `git push origin --delete topic` runs too.
            let words = name_words(tool);
            if is_code_host(server, e)
                && words
                    .iter()
                    .any(|w| matches!(w.as_str(), "branch" | "file" | "files"))
                && let Some(branch) = targets::first_under(p, &["branch", "branchname", "ref"])
                && !crate::branches::is_protected(
                    branch.trim_start_matches("refs/heads/"),
                    protected_branches,
                )
                && targets::repo_owner(p).is_none_or(|o| !org.configured || org.owner_inside(&o))
            {
                return allow(RiskClass::R2, true);
            }
            let (class, what) = if production {
                (RiskClass::R4, " on a production-looking target")
            } else {
                (RiskClass::R3, "")
            };
            hold(
                class,
                "effects.delete",
                format!("{who} deletes or overwrites what it names{what}"),
                false,
            )
        }
        EffectKind::Infra => infra(who, tool, p, production, org),
        EffectKind::Remember => {
            let texts = crate::normalize::param_strings(p, true);
            if let Some(phrase) = texts
                .iter()
                .find_map(|t| super::claims_standing_approval(t))
            {
                return block(
                    "effects.instructions",
                    format!(
                        "{who} writes an instruction for later that {phrase}: no approval may stand in for a check"
                    ),
                );
            }
            hold(
                RiskClass::R2,
                "effects.remember",
                format!("{who} writes the agent's long-term memory, which steers later sessions"),
                true,
            )
        }
    }
}

fn is_code_host(server: Option<&str>, e: &Effect) -> bool {
    matches!(e.via, Some("github" | "gitlab" | "bitbucket" | "gitea"))
        || name_words(server.unwrap_or("")).iter().any(|w| {
            matches!(
                w.as_str(),
                "github" | "gitlab" | "gh" | "git" | "bitbucket" | "gitea" | "forgejo"
            )
        })
}

fn publish(who: &str, p: &serde_json::Map<String, Value>, org: &Organization) -> EffectVerdict {
    let flat = targets::flat(p);
    let public = super::checks::opens_to_everyone(p);
    if public {
        return hold(
            RiskClass::R4,
            "effects.publish-public",
            format!("{who} opens what it names to everyone (public)"),
            false,
        );
    }
    // Who else it is opened to: addresses, a domain, accounts.
    let mut outside: Vec<String> = Vec::new();
    let mut named = 0;
    for (k, v) in &flat {
        let Value::String(s) = v else { continue };
        let k = targets::fold(k);
        if s.contains('@') && s.rsplit('@').next().is_some_and(|d| d.contains('.')) {
            named += 1;
            if !org.email_inside(s) {
                outside.push(s.clone());
            }
        } else if k == "domain"
            || (matches!(k.as_str(), "sharewith" | "target" | "grantee")
                && s.contains('.')
                && !s.contains(' '))
        {
            named += 1;
            if !org.domain_inside(s) {
                outside.push(s.clone());
            }
        } else if matches!(k.as_str(), "visibility" | "privacy") {
            named += 1;
            if !matches!(
                s.to_ascii_lowercase().as_str(),
                "private" | "internal" | "members" | "organization" | "workspace" | "team"
            ) {
                outside.push(s.clone());
            }
        }
    }
    if named > 0 && outside.is_empty() {
        return allow(RiskClass::R1, true);
    }
    let to = if outside.is_empty() {
        "an audience toolgate cannot tell".to_string()
    } else {
        format!(
            "{}, outside the organisation",
            outside
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    hold(
        RiskClass::R3,
        "effects.publish",
        format!("{who} shares what it names with {to}"),
        false,
    )
}

/// Words of a role or policy that give full control.
fn is_admin(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    [
        "admin",
        "owner",
        "root",
        "superuser",
        "fullaccess",
        "full_access",
        "maintain",
        "\"*\"",
        "iam:*",
        "*:*",
    ]
    .iter()
    .any(|w| s.contains(w))
        || s.trim() == "*"
}

fn grant(
    who: &str,
    tool: &str,
    p: &serde_json::Map<String, Value>,
    org: &Organization,
) -> EffectVerdict {
    let words = name_words(tool);
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let strings: Vec<String> = crate::normalize::param_strings(p, true)
        .into_iter()
        .map(str::to_string)
        .collect();
    // Turning off a safeguard: MFA, audit logging, branch protection.
    if has(&[
        "mfa",
        "2fa",
        "trail",
        "audit",
        "logging",
        "protection",
        "guardduty",
        "cloudtrail",
    ]) && has(&[
        "delete",
        "disable",
        "deactivate",
        "stop",
        "remove",
        "update",
        "put",
        "turn",
    ]) {
        return hold(
            RiskClass::R4,
            "effects.safeguard-off",
            format!("{who} turns off a safeguard (MFA, audit logging or branch protection)"),
            false,
        );
    }
    if strings.iter().any(|s| is_admin(s)) || has(&["admin", "owner"]) {
        return hold(
            RiskClass::R4,
            "effects.grant-admin",
            format!(
                "{who} grants full control (an admin or owner role, or a policy on everything)"
            ),
            false,
        );
    }
    if has(&[
        "token",
        "tokens",
        "key",
        "keys",
        "credential",
        "credentials",
        "secret",
        "secrets",
        "password",
        "pat",
        "oauth",
        "webhook",
        "hook",
        "app",
        "installation",
        "deploy",
    ]) {
        let read_only = p.iter().any(|(k, v)| {
            matches!(targets::fold(k).as_str(), "readonly") && v.as_bool() == Some(true)
        });
        let class = if read_only {
            RiskClass::R2
        } else {
            RiskClass::R3
        };
        return hold(
            class,
            "effects.credential",
            format!("{who} creates or widens a credential or an integration's access"),
            false,
        );
    }
    // A colleague given an ordinary role is everyday work: every principal
    // it names is an address inside, under any key.
    let rs = targets::recipients(p, org, false);
    let addresses = super::checks::addresses(p);
    let only_colleagues = !rs.is_empty()
        && rs.iter().all(|r| r.text.contains('@') && r.inside)
        && addresses.iter().all(|a| org.email_inside(a));
    if only_colleagues {
        return allow(RiskClass::R1, true);
    }
    let to = if rs.is_empty() {
        "someone toolgate cannot tell".to_string()
    } else {
        rs.iter()
            .map(|r| r.text.as_str())
            .take(3)
            .collect::<Vec<_>>()
            .join(", ")
    };
    hold(
        RiskClass::R3,
        "effects.grant",
        format!("{who} grants access to {to}, not known to be inside the organisation"),
        false,
    )
}

fn infra(
    who: &str,
    tool: &str,
    p: &serde_json::Map<String, Value>,
    production: bool,
    org: &Organization,
) -> EffectVerdict {
    let words = name_words(tool);
    let flat = targets::flat(p);
    let to_zero = flat.iter().any(|(k, v)| {
        matches!(
            targets::fold(k).as_str(),
            "replicas"
                | "replicacount"
                | "desiredcount"
                | "count"
                | "size"
                | "nodecount"
                | "mincount"
                | "maxcount"
                | "instances"
                | "scale"
        ) && (v.as_u64() == Some(0) || v.as_str() == Some("0"))
    });
    let world_open = crate::normalize::param_strings(p, true)
        .iter()
        .any(|s| s.contains("0.0.0.0/0") || s.contains("::/0"));
    if world_open {
        return hold(
            RiskClass::R4,
            "effects.infra-open",
            format!("{who} opens a firewall or security group to the whole internet"),
            false,
        );
    }
    let dns = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "dns" | "record" | "records" | "zone" | "domain" | "domains" | "route53"
        )
    });
    let outside_account =
        targets::values_under(p, &["accountid", "awsaccountid", "subscriptionid"])
            .iter()
            .any(|a| {
                org.configured && !org.cloud_accounts.is_empty() && !org.cloud_account_inside(a)
            });
    let disruptive = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "drain" | "cordon" | "taint" | "shutdown" | "failover" | "reboot"
        )
    }) || targets::values_under(p, &["operation", "subcommand", "action"])
        .iter()
        .any(|o| {
            matches!(
                o.to_ascii_lowercase().as_str(),
                "drain" | "cordon" | "taint" | "shutdown" | "failover" | "reboot"
            )
        });
    if disruptive {
        return hold(
            RiskClass::R3,
            "effects.infra-disrupt",
            format!("{who} drains, cordons or restarts machines that run workloads"),
            false,
        );
    }
    let deploys = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "deploy" | "deployment" | "deployments" | "promote" | "redeploy"
        )
    }) || targets::values_under(p, &["operation", "subcommand", "action"])
        .iter()
        .any(|o| o.to_ascii_lowercase().contains("deploy"));
    // Where it deploys, by the arguments a deploy tool takes for that
    // (`target: preview`); another argument saying `test` is not one.
    let names_stage = targets::values_under(
        p,
        &[
            "target",
            "environment",
            "env",
            "stage",
            "context",
            "deploymenttype",
            "alias",
        ],
    )
    .iter()
    .any(|s| {
        name_words(s).iter().any(|w| {
            matches!(
                w.as_str(),
                "preview"
                    | "staging"
                    | "stage"
                    | "dev"
                    | "development"
                    | "test"
                    | "testing"
                    | "sandbox"
                    | "qa"
                    | "draft"
                    | "local"
            )
        })
    });
    if deploys
        && !names_stage
        && !words
            .iter()
            .any(|w| matches!(w.as_str(), "list" | "get" | "logs" | "status"))
    {
        return hold(
            RiskClass::R3,
            "effects.infra-deploy",
            format!(
                "{who} deploys without naming a non-production target, which defaults to the live site"
            ),
            false,
        );
    }
    if to_zero {
        let class = if production {
            RiskClass::R4
        } else {
            RiskClass::R3
        };
        return hold(
            class,
            "effects.infra-zero",
            format!("{who} scales a workload to zero"),
            false,
        );
    }
    if production {
        return hold(
            RiskClass::R3,
            "effects.infra-production",
            format!("{who} changes production infrastructure"),
            false,
        );
    }
    if dns {
        return hold(
            RiskClass::R3,
            "effects.infra-dns",
            format!("{who} changes DNS, which every user of the domain sees at once"),
            false,
        );
    }
    if outside_account {
        return hold(
            RiskClass::R3,
            "effects.infra-account",
            format!("{who} changes a cloud account the organisation does not list"),
            false,
        );
    }
    allow(RiskClass::R2, true)
}

/// Code a browser tool runs in the page (`browser_evaluate`): reading the
/// page's cookies or storage is a stop; sending them anywhere is the
/// credential leaving, a block.
fn browser_code(who: &str, p: &serde_json::Map<String, Value>) -> Option<EffectVerdict> {
    let code: Vec<&str> = ["function", "script", "expression", "code", "js"]
        .iter()
        .filter_map(|k| p.get(*k).and_then(Value::as_str))
        .collect();
    let reads = code.iter().any(|c| {
        [
            "document.cookie",
            "localStorage",
            "sessionStorage",
            "indexedDB",
            "credentials",
            "cookies()",
            "storageState",
        ]
        .iter()
        .any(|w| c.contains(w))
    });
    if !reads {
        return None;
    }
    let sends = code.iter().any(|c| {
        [
            "fetch(",
            "XMLHttpRequest",
            "sendBeacon",
            "new Image",
            "WebSocket(",
            ".src =",
            ".src=",
            "request.post",
            "request.put",
            "axios",
            "$.post",
            "$.ajax",
        ]
        .iter()
        .any(|w| c.contains(w))
    });
    if sends {
        return Some(block(
            "effects.browser-credentials-out",
            format!(
                "{who} runs page code that reads the browser's cookies or storage and sends them away"
            ),
        ));
    }
    Some(hold(
        RiskClass::R3,
        "effects.browser-credentials",
        format!("{who} runs page code that reads the browser's cookies or storage"),
        false,
    ))
}

/// A Redis command sent as text (`{"command": "FLUSHALL"}`): the ones
/// that wipe data, rewrite the server's configuration or files, or hand
/// the server to another.
fn redis_command(who: &str, p: &serde_json::Map<String, Value>) -> Option<EffectVerdict> {
    let cmd = ["command", "cmd"]
        .iter()
        .find_map(|k| p.get(*k).and_then(Value::as_str))?;
    let args: Vec<String> = p
        .get("args")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_ascii_uppercase)
                .collect()
        })
        .unwrap_or_default();
    let mut words = cmd.split_whitespace().map(str::to_ascii_uppercase);
    let first = words.next()?;
    let second = words
        .next()
        .or_else(|| args.first().cloned())
        .unwrap_or_default();
    if first == "CONFIG" && matches!(second.as_str(), "GET" | "HELP") {
        return None;
    }
    let what = match first.as_str() {
        "FLUSHALL" | "FLUSHDB" => "empties the database",
        "CONFIG" => "changes the server's configuration or the files it writes",
        "SHUTDOWN" => "shuts the server down",
        "SLAVEOF" | "REPLICAOF" => "hands the server's data to another server",
        "MODULE" => "loads code into the server",
        "DEBUG" | "MIGRATE" | "SWAPDB" | "RESTORE" => {
            "changes or moves the server's data wholesale"
        }
        "EVAL" | "EVALSHA" | "FUNCTION" | "FCALL" => "runs a script on the server",
        "ACL" => "changes who may use the server",
        "DEL" | "UNLINK" if cmd.split_whitespace().count() > 4 => "deletes many keys at once",
        _ => return None,
    };
    Some(hold(
        RiskClass::R3,
        "effects.redis",
        format!("{who} runs a Redis command that {what}"),
        false,
    ))
}

/// Whether the tool drives a browser page.
fn is_browser(server: Option<&str>, tool: &str) -> bool {
    name_words(server.unwrap_or(""))
        .iter()
        .chain(name_words(tool).iter())
        .any(|w| {
            matches!(
                w.as_str(),
                "browser" | "page" | "playwright" | "puppeteer" | "chrome" | "selenium"
            )
        })
}
