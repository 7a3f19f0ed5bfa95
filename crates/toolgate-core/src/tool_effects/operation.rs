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

/// The effect of the operation a multiplexing tool is asked to do, when
/// its arguments name one; otherwise `effect` unchanged.
pub(super) fn refine(
    effect: Option<Effect>,
    server: Option<&str>,
    n: &NormalizedCall,
) -> Option<Effect> {
    if n.mcp.is_none() {
        return effect;
    }
    let Some(op) = OPERATION_KEYS
        .iter()
        .find_map(|k| n.params.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .filter(|op| !op.is_empty() && op.len() <= 64 && !op.contains(' '))
    else {
        return effect;
    };
    let upper = op.to_ascii_uppercase();
    let via = effect.as_ref().and_then(|e| e.via);
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
            let has = |list: &[&str]| endpoint.iter().any(|w| list.contains(&w.as_str()));
            if has(&[
                "tokens",
                "token",
                "keys",
                "key",
                "permissions",
                "permission",
                "admin",
                "roles",
                "role",
                "members",
                "collaborators",
                "serviceaccounts",
                "apikeys",
                "credentials",
                "secrets",
                "users",
                "teams",
            ]) {
                return make(EffectKind::Grant);
            }
            return effect.or_else(|| make(EffectKind::Write));
        }
        _ => {}
    }
    let server_words = name_words(server.unwrap_or(""));
    if let Some(e) = catalogue::lookup(server, op) {
        return Some(e);
    }
    let words = read::tool_words(op, &server_words);
    match read::by_words(&words, &server_words, n) {
        Some(e) if matches!(e.kind, EffectKind::Read | EffectKind::Delete) => make(e.kind),
        Some(e)
            if matches!(
                e.kind,
                EffectKind::Infra | EffectKind::Grant | EffectKind::Pay | EffectKind::Publish
            ) =>
        {
            make(e.kind)
        }
        _ => effect,
    }
}
