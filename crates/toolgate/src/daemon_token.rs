//! The token a command sends to a running daemon when the command line
//! does not give one: the same order for `toolgate ui`, `toolgate approvals
//! --url` and `toolgate check --url`.

use anyhow::{Context, Result};

use crate::state::DataDirArgs;

/// Which of the daemon's shared tokens a command falls back to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shared {
    /// The operator token: `TOOLGATE_OPERATOR_TOKEN`, else `operator.token`.
    Operator,
    /// The agent token: `TOOLGATE_AGENT_TOKEN`, else `agent.token`.
    Agent,
}

impl Shared {
    /// The environment variable `toolgate serve` takes this token from.
    fn env(self) -> &'static str {
        match self {
            Shared::Operator => "TOOLGATE_OPERATOR_TOKEN",
            Shared::Agent => "TOOLGATE_AGENT_TOKEN",
        }
    }

    /// The file in the data directory `toolgate serve` keeps it in.
    fn file(self) -> &'static str {
        match self {
            Shared::Operator => "operator.token",
            Shared::Agent => "agent.token",
        }
    }
}

/// `given` (`--token` or its environment variable) when not blank, else
/// the shared token's environment variable, else its file in the data
/// directory (what `toolgate serve` made there). The error says what to
/// pass, `how` naming the person's own option.
pub(crate) fn token(
    given: Option<&str>,
    shared: Shared,
    data: &DataDirArgs,
    how: &str,
) -> Result<String> {
    if let Some(t) = given.map(str::trim).filter(|t| !t.is_empty()) {
        return Ok(t.to_string());
    }
    if let Some(t) = std::env::var(shared.env())
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
    {
        return Ok(t);
    }
    let path = data.resolve().0.join(shared.file());
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "no {} token: {how}, or set {}, or run this as the user whose daemon keeps {}",
            match shared {
                Shared::Operator => "operator",
                Shared::Agent => "agent",
            },
            shared.env(),
            path.display()
        )
    })?;
    let t = text.trim();
    if t.is_empty() {
        anyhow::bail!("{} is empty: {how}", path.display());
    }
    Ok(t.to_string())
}
