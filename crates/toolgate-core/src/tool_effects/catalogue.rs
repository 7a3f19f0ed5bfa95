//! The catalogue of MCP servers agents use, described by data
//! (`crates/toolgate-core/packs/servers/mcp.toml`): for each server, the
//! names it is configured under and the effect of each of its tools, with
//! examples and counter-examples the tests judge. Checked and compiled into
//! statics at build time (`toolgate_packs::servers`), so nothing is parsed
//! when a call is judged.

use super::{Effect, EffectKind};

/// One server of the catalogue.
pub(super) struct Server {
    /// Short id, the `via` of the effects it describes (`stripe`).
    pub(super) id: &'static str,
    /// Server names (as configured in the client, `*` wildcards,
    /// lowercase) it is recognised by.
    pub(super) servers: &'static [&'static str],
    /// Tool names (`*` wildcards, lowercase, `_` for `-`) per effect.
    pub(super) tools: &'static [(EffectKind, &'static [&'static str])],
}

include!(concat!(env!("OUT_DIR"), "/servers.rs"));

/// The effect the catalogue gives `tool` of `server`, among the servers
/// recognised by that configured name: exact tool names first, then
/// patterns. Another server's entry is never used: a name one server lists
/// as harmless (Redis's `publish`) may be anything elsewhere.
pub(super) fn lookup(server: Option<&str>, tool: &str) -> Option<Effect> {
    let server = server?.to_ascii_lowercase().replace('_', "-");
    let tool = tool.to_ascii_lowercase().replace('-', "_");
    let own = || {
        SERVERS.iter().filter(|s| {
            s.servers
                .iter()
                .any(|p| crate::wildcard::star_match(p, &server))
        })
    };
    let exact = own().find_map(|s| {
        s.tools
            .iter()
            .find(|(_, names)| names.contains(&tool.as_str()))
            .map(|(kind, _)| (s, *kind))
    });
    let (s, kind) = exact.or_else(|| {
        own().find_map(|s| {
            s.tools
                .iter()
                .find(|(_, names)| {
                    names
                        .iter()
                        .any(|n| n.contains('*') && crate::wildcard::star_match(n, &tool))
                })
                .map(|(kind, _)| (s, *kind))
        })
    })?;
    Some(Effect {
        kind,
        via: Some(s.id),
    })
}
