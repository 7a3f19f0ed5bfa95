//! `[approvals.routing]`: where a pending approval is sent (the daemon's
//! approval router; docs/channels.md).
//!
//! ```toml
//! [approvals.routing]
//! mode = "both"                      # "targets" (default) | "session" | "both"
//!
//! [[approvals.routing.target]]       # an operator target
//! name = "ops-slack"
//! kind = "slack"                     # the adapter's own keys follow (toolgate-channels)
//! channel = "C0123ABCD"
//! bot_token_env = "SLACK_BOT_TOKEN"
//! signing_secret_env = "SLACK_SIGNING_SECRET"
//! risk = ["R3", "R4"]                # optional: only these classes
//! tools = ["exec"]                   # optional: only these tools (name or kind)
//! agents = ["main"]                  # optional: only these agents
//!
//! [[approvals.routing.target]]       # a session route: the chat a call came from
//! name = "team-telegram"
//! kind = "telegram"
//! session = ["telegram"]             # serves calls whose `channel` is one of these
//! ```
//!
//! `targets` sends to every operator target whose filters match; `session`
//! to every session route serving the call's `channel`; `both` to both.
//! Every matching target gets the request (fan-out); one failing holds up
//! none of the others.

use super::error::{ErrorKind, PolicyError};
use crate::model::RiskClass;

/// Which targets a request goes to.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum RoutingMode {
    /// The configured operator targets.
    #[default]
    Targets,
    /// The chat the call came from (session routes).
    Session,
    /// Both.
    Both,
}

impl RoutingMode {
    /// The policy-file name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One `[[approvals.routing.target]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteTarget {
    /// Its name (unique), for status and callbacks
    /// (`/v1/channels/{name}/callback`).
    pub name: String,
    /// Only calls of these classes (empty: any).
    pub risks: Vec<RiskClass>,
    /// Only calls of these tools, by name or kind (empty: any).
    pub tools: Vec<String>,
    /// Only calls of these agents (empty: any).
    pub agents: Vec<String>,
    /// Not empty: a session route, serving calls whose `channel` is one of
    /// these (used by the `session` and `both` modes only).
    pub session: Vec<String>,
    /// The operator whose signed approve/deny links the requests carry (a
    /// webhook relaying to that person's mail); none when not set.
    pub links_for: Option<String>,
    /// The adapter's settings as written (`kind`, `name` and the adapter's
    /// own keys), read by the daemon.
    pub adapter: toml::Table,
}

impl RouteTarget {
    /// Whether this target's filters let a call of `risk`, tool `tool`
    /// (or kind `kind`) and `agent` through.
    pub fn admits(&self, risk: RiskClass, tool: &str, kind: &str, agent: Option<&str>) -> bool {
        (self.risks.is_empty() || self.risks.contains(&risk))
            && (self.tools.is_empty() || self.tools.iter().any(|t| t == tool || t == kind))
            && (self.agents.is_empty() || agent.is_some_and(|a| self.agents.iter().any(|x| x == a)))
    }
}

/// `[approvals.routing]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Routing {
    /// Which targets a request goes to.
    pub mode: RoutingMode,
    /// Every target, in file order.
    pub targets: Vec<RouteTarget>,
}

impl Routing {
    /// The targets a pending approval for a call of `risk`, `tool` (of
    /// `kind`), `agent`, from chat `channel`, goes to.
    pub fn targets_for(
        &self,
        risk: RiskClass,
        tool: &str,
        kind: &str,
        agent: Option<&str>,
        channel: Option<&str>,
    ) -> Vec<&RouteTarget> {
        self.targets
            .iter()
            .filter(|t| t.admits(risk, tool, kind, agent))
            .filter(|t| {
                if t.session.is_empty() {
                    self.mode != RoutingMode::Session
                } else {
                    self.mode != RoutingMode::Targets
                        && channel.is_some_and(|c| t.session.iter().any(|s| s == c))
                }
            })
            .collect()
    }
}

/// Reads `[approvals.routing]` from its table; `err` places an error.
pub(super) fn parse_routing(
    table: &toml::Table,
    err: &dyn Fn(ErrorKind, String) -> PolicyError,
) -> Result<Routing, PolicyError> {
    let mut out = Routing::default();
    for key in table.keys() {
        if key != "mode" && key != "target" {
            return Err(err(
                ErrorKind::Value,
                format!(
                    "[approvals.routing] has no setting {key:?}: use mode and [[approvals.routing.target]]"
                ),
            ));
        }
    }
    if let Some(m) = table.get("mode") {
        out.mode = match m.as_str().and_then(|s| s.parse().ok()) {
            Some(mode) => mode,
            None => {
                return Err(err(
                    ErrorKind::Value,
                    format!(
                        "[approvals.routing] mode = {m} — use \"targets\", \"session\" or \"both\""
                    ),
                ));
            }
        };
    }
    let targets = match table.get("target") {
        None => &Vec::new(),
        Some(toml::Value::Array(a)) => a,
        Some(_) => {
            return Err(err(
                ErrorKind::Value,
                "approvals.routing.target must be an array of tables: [[approvals.routing.target]]"
                    .to_string(),
            ));
        }
    };
    for t in targets {
        let Some(t) = t.as_table() else {
            return Err(err(
                ErrorKind::Value,
                "each [[approvals.routing.target]] is a table".to_string(),
            ));
        };
        let target = parse_target(t, err)?;
        if out.targets.iter().any(|o| o.name == target.name) {
            return Err(err(
                ErrorKind::Value,
                format!(
                    "two routing targets are named {:?}: names must differ",
                    target.name
                ),
            ));
        }
        out.targets.push(target);
    }
    Ok(out)
}

fn parse_target(
    t: &toml::Table,
    err: &dyn Fn(ErrorKind, String) -> PolicyError,
) -> Result<RouteTarget, PolicyError> {
    let name = t
        .get("name")
        .and_then(toml::Value::as_str)
        .map(str::trim)
        .filter(|n| {
            !n.is_empty()
                && n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
        .ok_or_else(|| {
            err(
                ErrorKind::Value,
                "every [[approvals.routing.target]] needs name = \"…\" (letters, digits, '-', '_', '.'; it is part of its callback URL)".to_string(),
            )
        })?
        .to_string();
    let strings = |key: &str| -> Result<Vec<String>, PolicyError> {
        match t.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        err(
                            ErrorKind::Value,
                            format!("routing target {name:?}: {key} is a list of strings"),
                        )
                    })
                })
                .collect(),
            Some(_) => Err(err(
                ErrorKind::Value,
                format!("routing target {name:?}: {key} is a list of strings, like [\"x\"]"),
            )),
        }
    };
    let risks = strings("risk")?
        .iter()
        .map(|r| {
            RiskClass::parse(r).ok_or_else(|| {
                err(
                    ErrorKind::Value,
                    format!("routing target {name:?}: {r:?} is not a risk class — use R0 to R4"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let links_for = match t.get("links_for") {
        None => None,
        Some(v) => Some(v.as_str().map(str::to_string).ok_or_else(|| {
            err(
                ErrorKind::Value,
                format!("routing target {name:?}: links_for names one operator, like \"alice\""),
            )
        })?),
    };
    let mut adapter = t.clone();
    for key in ["risk", "tools", "agents", "session", "links_for"] {
        adapter.remove(key);
    }
    if !adapter.get("kind").is_some_and(toml::Value::is_str) {
        return Err(err(
            ErrorKind::Value,
            format!(
                "routing target {name:?} needs kind = \"webhook\", \"slack\", \"telegram\" or \"discord\""
            ),
        ));
    }
    Ok(RouteTarget {
        risks,
        tools: strings("tools")?,
        agents: strings("agents")?,
        session: strings("session")?,
        links_for,
        adapter,
        name,
    })
}
