//! A tool the catalogue does not describe, read by its name's words and
//! its arguments' shapes: `create_refund` moves money, `share_file` with
//! `type: anyone` publishes, `kubectl_scale` changes infrastructure.

use super::{Effect, EffectKind};
use crate::normalize::{NormalizedCall, ToolKind, name_words};
use crate::policy::Organization;
use serde_json::{Map, Value};

/// Words that only read when they lead a name (`list_refunds`).
const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "read",
    "search",
    "find",
    "describe",
    "retrieve",
    "show",
    "view",
    "query",
    "count",
    "lookup",
    "check",
    "inspect",
    "explain",
    "stat",
    "status",
    "logs",
    "log",
    "preview",
    "browse",
    "download",
    "fetch",
    "watch",
    "diff",
    "compare",
    "validate",
    "lint",
    "analyze",
    "summarize",
    "estimate",
    "suggest",
    "whoami",
    "me",
    "ping",
    "health",
    "render",
    "format",
    "parse",
    "convert",
    "calculate",
    "translate",
    "explore",
    "select",
    "top",
    "tail",
    "history",
    "inventory",
    "audit",
    "recommend",
    "plan",
    "report",
    "analytics",
    "metrics",
    "stats",
    "usage",
    "whois",
    "lookup",
    "navigate",
    "snapshot",
    "screenshot",
    "await",
    "wait",
];

/// Name words that move money or change what a customer pays.
const MONEY: &[&str] = &[
    "refund",
    "refunds",
    "transfer",
    "transfers",
    "payout",
    "payouts",
    "charge",
    "charges",
    "capture",
    "pay",
    "payment",
    "payments",
    "invoice",
    "invoices",
    "subscription",
    "subscriptions",
    "withdraw",
    "withdrawal",
    "wire",
    "disburse",
    "disbursement",
    "price",
    "prices",
    "pricing",
    "plan",
    "billing",
    "credit",
    "debit",
    "topup",
    "send_money",
    "remittance",
    "dispute",
    "coupon",
    "discount",
];
/// Name words that open something to an audience.
const SHARING: &[&str] = &[
    "share",
    "sharing",
    "unshare",
    "publish",
    "visibility",
    "public",
    "permission",
    "permissions",
    "acl",
    "expose",
    "link",
];
/// Name words that grant access or create a credential.
const GRANTING: &[&str] = &[
    "grant",
    "collaborator",
    "collaborators",
    "member",
    "members",
    "role",
    "roles",
    "policy",
    "policies",
    "token",
    "tokens",
    "key",
    "keys",
    "credential",
    "credentials",
    "secret",
    "secrets",
    "password",
    "invite",
    "invitation",
    "access",
    "mfa",
    "2fa",
    "oauth",
    "app",
    "installation",
    "webhook",
    "hook",
    "hooks",
    "iam",
    "sso",
    "saml",
    "trail",
    "protection",
    "admin",
    "owner",
    "user",
    "users",
    "team",
    "teams",
    "group",
    "groups",
    "protect",
    "unprotect",
    "watcher",
    "watchers",
    "dsn",
    "permission",
];
/// Name words that send to people.
const SENDING: &[&str] = &[
    "send",
    "post",
    "reply",
    "message",
    "messages",
    "email",
    "mail",
    "dm",
    "notify",
    "forward",
    "chat",
    "sms",
    "text",
    "broadcast",
    "announce",
    "say",
    "respond",
    "tweet",
    "toot",
    "event",
    "events",
    "meeting",
    "invite",
];
/// Name words that post in a shared workspace (a repository, a tracker).
const POSTING: &[&str] = &[
    "issue",
    "issues",
    "comment",
    "comments",
    "pull",
    "pr",
    "merge_request",
    "branch",
    "review",
    "label",
    "labels",
    "ticket",
    "tickets",
    "page",
    "pages",
    "task",
    "tasks",
    "story",
    "epic",
    "milestone",
    "project",
    "card",
    "doc",
    "document",
    "note",
    "discussion",
    "gist",
    "release",
    "tag",
    "worklog",
    "attachment",
    "block",
    "blocks",
    "database",
    "todo",
    "reaction",
    "sprint",
];
/// Name words that change running infrastructure.
const INFRA: &[&str] = &[
    "scale",
    "deploy",
    "deployment",
    "apply",
    "rollout",
    "rollback",
    "restart",
    "promote",
    "patch",
    "dns",
    "record",
    "records",
    "zone",
    "firewall",
    "ingress",
    "security",
    "cluster",
    "node",
    "nodepool",
    "pool",
    "instance",
    "instances",
    "service",
    "helm",
    "install",
    "upgrade",
    "release",
    "worker",
    "function",
    "lambda",
    "env",
    "environment",
    "domain",
    "route",
    "config",
    "cordon",
    "drain",
    "taint",
    "autoscal",
    "redeploy",
    "reboot",
    "stop",
    "start",
    "resize",
];
/// Name words that change something.
const CHANGING: &[&str] = &[
    "create",
    "add",
    "update",
    "edit",
    "set",
    "put",
    "post",
    "write",
    "insert",
    "upsert",
    "modify",
    "change",
    "make",
    "new",
    "open",
    "submit",
    "commit",
    "push",
    "upload",
    "assign",
    "move",
    "rename",
    "replace",
    "enable",
    "invite",
    "attach",
    "link",
    "apply",
    "run",
    "execute",
    "trigger",
    "start",
    "stop",
    "cancel",
    "close",
    "reopen",
    "approve",
    "accept",
    "merge",
    "finalize",
    "void",
    "issue",
    "send",
    "schedule",
    "book",
    "transfer",
    "refund",
    "pay",
    "capture",
    "scale",
    "deploy",
    "restart",
    "rollback",
    "promote",
    "install",
    "upgrade",
    "grant",
    "share",
    "publish",
    "store",
    "save",
    "remember",
    "record",
    "register",
    "import",
    "sync",
    "fork",
    "duplicate",
    "copy",
    "clone",
    "tag",
    "archive",
    "lock",
    "unlock",
    "transition",
    "resolve",
    "reply",
    "forward",
    "react",
    "manage",
    "configure",
    "protect",
    "unprotect",
    "mute",
    "silence",
    "drain",
    "cordon",
    "trash",
];

/// The effect a tool's name and arguments say it has, when they say one.
pub(super) fn by_name(server: Option<&str>, tool: &str, n: &NormalizedCall) -> Option<Effect> {
    let server_words = name_words(server.unwrap_or(""));
    let words = tool_words(tool, &server_words);
    by_words(&words, &server_words, n)
}

/// Products that prefix their tools' names (`slack_post_message`,
/// `discord_read_messages`, `API-post-page`): the verb follows them.
const PRODUCTS: &[&str] = &[
    "slack",
    "discord",
    "teams",
    "gmail",
    "mail",
    "jira",
    "confluence",
    "notion",
    "linear",
    "github",
    "gh",
    "gitlab",
    "stripe",
    "aws",
    "sentry",
    "vercel",
    "netlify",
    "cloudflare",
    "cf",
    "mongo",
    "mongodb",
    "redis",
    "postgres",
    "pg",
    "mysql",
    "sqlite",
    "puppeteer",
    "playwright",
    "gdrive",
    "drive",
    "gcal",
    "outlook",
    "api",
    "azmcp",
    "azure",
    "gcp",
    "gcloud",
    "datadog",
    "grafana",
    "pagerduty",
    "square",
    "paypal",
    "supabase",
    "neon",
    "atlas",
    "helm",
    "docker",
    "k8s",
    "kubectl",
    "kubernetes",
    "figma",
    "asana",
    "trello",
    "hubspot",
    "salesforce",
    "zendesk",
    "intercom",
    "twilio",
    "sendgrid",
    "mailgun",
    "shopify",
    "airtable",
    "clickup",
    "monday",
    "google",
    "microsoft",
    "ms",
    "msgraph",
    "graph",
    "workspace",
    "firebase",
    "heroku",
    "fly",
    "render",
    "railway",
    "digitalocean",
    "do",
    "linode",
    "hetzner",
    "openai",
    "anthropic",
    "mcp",
];

/// The words of a tool's name, without the product or server name it
/// starts with.
pub(super) fn tool_words(tool: &str, server_words: &[String]) -> Vec<String> {
    let mut words = name_words(tool);
    while words.len() > 1
        && (PRODUCTS.contains(&words[0].as_str()) || server_words.contains(&words[0]))
    {
        words.remove(0);
    }
    words
}

/// [`by_name`] on the words of a name.
pub(super) fn by_words(
    words: &[String],
    server_words: &[String],
    n: &NormalizedCall,
) -> Option<Effect> {
    let words = words.to_vec();
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    let effect = |kind| Some(Effect { kind, via: None });
    let first = words.first().map(String::as_str).unwrap_or("");
    // A memory server's writes, whatever they are called.
    let memory_server = server_words.iter().any(|w| {
        matches!(
            w.as_str(),
            "memory" | "mem0" | "memories" | "knowledge" | "graph" | "zep" | "letta" | "remember"
        )
    });
    if crate::normalize::destructive_verb(&words).is_some() {
        if memory_server && !has(&["delete", "drop", "purge", "wipe"]) {
            return effect(EffectKind::Remember);
        }
        return effect(EffectKind::Delete);
    }
    // A name that leads with a reading verb reads, unless a later word
    // changes something (`get_or_create_user`); a reader reads wherever
    // the word stands (`deploy_services_reader`); a report or metrics read
    // unless any word sends or changes (`send_report`).
    let changes_later = words.iter().skip(1).any(|w| CHANGING.contains(&w.as_str()));
    let reads = (READ_VERBS.contains(&first) && !changes_later)
        || (has(&["reader", "readonly"]) && !has(SENDING))
        || (has(&["report", "analytics", "metrics", "stats"]) && !has(CHANGING) && !has(SENDING));
    if reads {
        return effect(EffectKind::Read);
    }
    if memory_server
        || has(&[
            "remember",
            "memorize",
            "memory",
            "memories",
            "observation",
            "observations",
            "entities",
            "relations",
        ])
    {
        return effect(EffectKind::Remember);
    }
    if has(&["draft", "drafts"]) {
        return effect(EffectKind::Send);
    }
    if has(MONEY) && !has(&["customer", "customers", "product", "products"]) {
        return effect(EffectKind::Pay);
    }
    if has(SHARING) || has_visibility(&n.params) {
        return effect(EffectKind::Publish);
    }
    if has(GRANTING) && (has(CHANGING) || words.len() == 1) {
        return effect(EffectKind::Grant);
    }
    if has(SENDING) && !has(POSTING) {
        return effect(EffectKind::Send);
    }
    if has(POSTING) {
        return effect(EffectKind::Post);
    }
    if has(INFRA) {
        return effect(EffectKind::Infra);
    }
    if n.kind == ToolKind::Fetch || n.kind == ToolKind::Browser {
        return effect(EffectKind::Fetch);
    }
    // A tool that runs a query or a statement is judged by that text.
    if has(&[
        "sql",
        "query",
        "execute",
        "exec",
        "statement",
        "run",
        "command",
        "cypher",
        "eval",
    ]) {
        return effect(EffectKind::Run);
    }
    if has(CHANGING) {
        return effect(EffectKind::Write);
    }
    match n.kind {
        ToolKind::Read | ToolKind::Search => effect(EffectKind::Read),
        ToolKind::Message => effect(EffectKind::Send),
        _ => None,
    }
}

/// Whether the arguments set who may see something (`visibility`,
/// `private: false`).
fn has_visibility(params: &Map<String, Value>) -> bool {
    params.iter().any(|(k, v)| {
        let k = super::targets::fold(k);
        (k == "visibility" && v.is_string()) || (k == "private" && v == &Value::Bool(false))
    })
}

/// Whether the call's targets (keys and values that are not free text)
/// name production: `prod`, `production`, `prd`, `live`, or one of the
/// organisation's own production names.
pub(super) fn production(params: &Map<String, Value>, org: &Organization) -> bool {
    let marks = |s: &str| {
        name_words(s)
            .iter()
            .any(|w| crate::meaning::is_production_word(w) || org.production.contains(w))
    };
    params.keys().any(|k| marks(k))
        || crate::normalize::param_strings(params, false)
            .into_iter()
            .any(marks)
}
