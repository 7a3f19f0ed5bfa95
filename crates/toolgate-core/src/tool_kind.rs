//! The canonical kinds of tool, and MCP's `mcp__server__tool` names: the
//! vocabulary both the runtimes' hook protocols (`hooks`) and the
//! normalizer (`normalize`) speak. A leaf, so neither has to import the
//! other for it.

use serde::Serialize;

/// The canonical kind of a tool, whatever the runtime calls it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "lowercase")]
pub enum ToolKind {
    /// A shell command (`exec`, `Bash`, `run_shell_command`, `shell`, …).
    Exec,
    /// Reading files or listing / searching the tree.
    Read,
    /// Creating, editing, patching or deleting files.
    Write,
    /// Fetching a URL.
    #[strum(to_string = "web_fetch")]
    Fetch,
    /// A web search.
    #[strum(to_string = "web_search")]
    Search,
    /// Sending a message to a person or channel.
    Message,
    /// Gateway configuration and lifecycle (OpenClaw `gateway`).
    Gateway,
    /// Scheduled jobs (`cron`, `automations`).
    #[strum(to_string = "automations")]
    Automation,
    /// Device control (`nodes`).
    Nodes,
    /// Browser automation.
    Browser,
    /// Managing background processes.
    Process,
    /// Spawning or messaging other agent sessions.
    Sessions,
    /// Installing or configuring plugins.
    Plugins,
    /// Reading or writing stored secrets.
    Secrets,
    /// The agent's own memory and status (read-mostly; the default policy's never-block set).
    Memory,
    /// Anything else (unknown tools, most MCP tools).
    Other,
}

impl ToolKind {
    /// The canonical tool name used in policy rules (`exec`, `read`, `write`, …).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Splits `mcp__server__tool` into `(server, tool)`.
pub fn split_mcp(tool: &str) -> Option<(&str, &str)> {
    let rest = tool.strip_prefix("mcp__")?;
    let i = rest.find("__")?;
    let (server, tool) = (&rest[..i], &rest[i + 2..]);
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}
