//! Tools that multiplex: one tool, the real operation in an argument
//! (`{"subCommand": "status"}`, `{"method": "run_workflow"}`,
//! `{"operation": "drain"}`, an HTTP method and endpoint). The operation
//! decides the effect, read like a tool name of its own.

use super::{Effect, EffectKind, catalogue, read};
use crate::normalize::{NormalizedCall, name_words};
use serde_json::Value;

/// Keys that carry the operation of a multiplexing tool.
const OPERATION_KEYS: &[&str] = &[
    "subCommand",
    "subcommand",
    "operation",
    "op",
    "method",
    "action",
    "verb",
];

/// Effects that only a person may let through: once a tool's name says
/// one of these, no operation argument changes it (an agent can add
/// `"method": "GET"` to a `delete_records` call the server runs anyway).
const STRICT: &[EffectKind] = &[
    EffectKind::Delete,
    EffectKind::Pay,
    EffectKind::Grant,
    EffectKind::Publish,
    EffectKind::Send,
    EffectKind::Remember,
];

/// Words of a tool name that say the tool does whatever its operation
/// argument names (`manage_silences`, `make_api_request`, `kubectl_rollout`).
const MULTIPLEXING: &[&str] = &[
    "manage",
    "api",
    "generic",
    "rollout",
    "services",
    "service",
    "operation",
    "operations",
    "action",
    "actions",
    "tool",
    "tools",
    "execute",
    "call",
    "command",
    "reader",
    "updater",
    "admin",
];

/// The effect of the operation a multiplexing tool is asked to do, when
/// its arguments name one. An operation may make a call stricter; it may
/// make it laxer (a read) only for a tool whose name gives no effect of its
/// own or says it multiplexes, and never once the name says a strict
/// effect ([`STRICT`]).
pub(super) fn refine(
    effect: Option<Effect>,
    server: Option<&str>,
    tool: &str,
    n: &NormalizedCall,
) -> Option<Effect> {
    if n.mcp.is_none() || effect.as_ref().is_some_and(|e| STRICT.contains(&e.kind)) {
        return effect;
    }
    let Some(op) = operation_effect(effect.as_ref(), server, n) else {
        return effect;
    };
    let server_words = name_words(server.unwrap_or(""));
    let may_relax = effect.as_ref().is_none_or(|e| e.kind == EffectKind::Run)
        || read::tool_words(tool, &server_words)
            .iter()
            .any(|w| MULTIPLEXING.contains(&w.as_str()));
    let relaxes = matches!(
        op.kind,
        EffectKind::Read | EffectKind::Write | EffectKind::Fetch
    );
    if relaxes && !may_relax {
        return effect;
    }
    Some(op)
}

/// The effect the operation argument names, if it names one.
fn operation_effect(
    effect: Option<&Effect>,
    server: Option<&str>,
    n: &NormalizedCall,
) -> Option<Effect> {
    let op = OPERATION_KEYS
        .iter()
        .find_map(|k| n.params.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .filter(|op| !op.is_empty() && op.len() <= 64 && !op.contains(' '))?;
    let upper = op.to_ascii_uppercase();
    let via = effect.and_then(|e| e.via);
    let make = |kind| Some(Effect { kind, via });
    match upper.as_str() {
        "GET" | "HEAD" | "OPTIONS" => return make(EffectKind::Read),
        "DELETE" => return make(EffectKind::Delete),
        "POST" | "PUT" | "PATCH" => {
            // What an API call changes is in its endpoint.
            let endpoint: Vec<String> = ["endpoint", "path", "url", "uri", "resource"]
                .iter()
                .filter_map(|k| n.params.get(*k).and_then(Value::as_str))
                .flat_map(name_words)
                .collect();
            let grants = endpoint.iter().any(|w| {
                matches!(
                    w.as_str(),
                    "tokens"
                        | "token"
                        | "keys"
                        | "key"
                        | "permissions"
                        | "permission"
                        | "admin"
                        | "roles"
                        | "role"
                        | "members"
                        | "collaborators"
                        | "serviceaccounts"
                        | "apikeys"
                        | "credentials"
                        | "secrets"
                        | "users"
                        | "teams"
                )
            });
            return if grants {
                make(EffectKind::Grant)
            } else {
                effect.cloned().or_else(|| make(EffectKind::Write))
            };
        }
        _ => {}
    }
    if let Some(e) = catalogue::lookup(server, op) {
        return Some(e);
    }
    // `{"service": "payments", "method": "create"}` is `create_payments`.
    let op = match n.params.get("service").and_then(Value::as_str) {
        Some(service) if !service.contains('/') && service.len() <= 64 => format!("{op}_{service}"),
        _ => op.to_string(),
    };
    let server_words = name_words(server.unwrap_or(""));
    let e = read::by_words(&read::tool_words(&op, &server_words), &server_words, n)?;
    make(e.kind)
}
