//! The catalogue of MCP servers agents use, described by data
//! (`crates/toolgate-core/packs/servers/mcp.toml`): for each server, the
//! names it is configured under and the effect of each of its tools, with
//! examples and counter-examples the tests judge. Read once, on the first
//! tool call that needs it.

use super::{Effect, EffectKind};
use serde::Deserialize;
use std::sync::LazyLock;

/// The catalogue's text, embedded.
pub(super) const SOURCE: &str = include_str!("../../packs/servers/mcp.toml");

/// One server of the catalogue.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "title, family and examples are for tests and docs"
    )
)]
pub(super) struct Server {
    /// Short id, the `via` of the effects it describes (`stripe`).
    pub(super) id: String,
    /// What it is, for people (`Stripe (stripe/agent-toolkit)`).
    pub(super) title: String,
    /// The family its corpus lives in (`payments`).
    pub(super) family: String,
    /// Server names (as configured in the client, `*` wildcards, case
    /// ignored) it is recognised by.
    pub(super) servers: Vec<String>,
    /// Tool names (`*` wildcards) per effect.
    #[serde(default)]
    pub(super) tools: std::collections::BTreeMap<EffectKind, Vec<String>>,
    /// Calls and what they must get, judged by the tests.
    #[serde(default)]
    pub(super) example: Vec<Example>,
}

/// An example call of one server's tool and its expected outcome.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "examples are judged by the tests")
)]
pub(super) struct Example {
    pub(super) tool: String,
    #[serde(default)]
    pub(super) params: toml::Table,
    /// `allow`, `stop` (escalated or blocked) or `block`.
    pub(super) expect: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    server: Vec<Server>,
}

/// The parsed catalogue. A broken file is a test failure (`tests.rs`),
/// and at run time an empty catalogue: every tool is then read by name.
pub(super) static SERVERS: LazyLock<Vec<Server>> = LazyLock::new(|| {
    toml::from_str::<File>(SOURCE)
        .map(|f| f.server)
        .unwrap_or_default()
});

/// `crate::wildcard::star_match`, ignoring ASCII case (`names` are lowercase).
fn matches(pattern: &str, name: &str) -> bool {
    crate::wildcard::star_match(pattern, name)
}

/// The effect the catalogue gives `tool` of `server`: first among the
/// servers recognised by that name, then any server's exactly named tool.
pub(super) fn lookup(server: Option<&str>, tool: &str) -> Option<Effect> {
    let tool = tool.to_ascii_lowercase().replace('-', "_");
    let server = server.map(|s| s.to_ascii_lowercase().replace('_', "-"));
    let servers: &'static [Server] = &SERVERS;
    let own = servers.iter().filter(|s| {
        server
            .as_deref()
            .is_some_and(|n| s.servers.iter().any(|p| matches(p, n)))
    });
    for s in own {
        if let Some(kind) = kind_in(s, &tool, true) {
            return Some(Effect {
                kind,
                via: Some(s.id.as_str()),
            });
        }
    }
    servers.iter().find_map(|s| {
        kind_in(s, &tool, false).map(|kind| Effect {
            kind,
            via: Some(s.id.as_str()),
        })
    })
}

/// The effect a server lists `tool` under: exact names first, then (when
/// `globs`) patterns.
fn kind_in(s: &Server, tool: &str, globs: bool) -> Option<EffectKind> {
    let exact = s
        .tools
        .iter()
        .find(|(_, names)| names.iter().any(|n| n == tool))
        .map(|(k, _)| *k);
    exact.or_else(|| {
        globs
            .then(|| {
                s.tools
                    .iter()
                    .find(|(_, names)| names.iter().any(|n| n.contains('*') && matches(n, tool)))
                    .map(|(k, _)| *k)
            })
            .flatten()
    })
}
