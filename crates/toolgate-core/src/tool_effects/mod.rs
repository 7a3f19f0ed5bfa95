//! Every tool by what it does (docs/tool-effects.md): an MCP or other
//! non-shell tool call read as effects — send a message (to whom), move
//! money (live or test), share or publish (to whom), grant access or a
//! credential, delete, change infrastructure (which environment), post in a
//! shared workspace, remember an instruction, fetch, run code — with each
//! target classified as the organisation's own or outside
//! (`[organization]`, [`Organization`]).
//!
//! The reading comes from the server catalogue (`packs/servers/*.toml`,
//! [`catalogue`]) when it knows the tool, and from the tool's name and
//! argument shapes otherwise ([`read`]). Judging is one table
//! ([`judge_effect`]): the same effect gets the same verdict whichever
//! server spells it. Outgoing arguments are scanned for credentials with
//! the redaction's detectors ([`outbound`]).

mod catalogue;
mod checks;
mod instructions;
mod judge;
mod operation;
mod outbound;
mod read;
mod targets;
#[cfg(test)]
mod tests;

use crate::model::{RiskClass, Verdict};
use crate::normalize::{NormalizedCall, ToolKind};
use crate::policy::Organization;

use instructions::claims_standing_approval;

/// What a tool call does, in the vocabulary every analyzer ends in
/// (docs/tool-effects.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum EffectKind {
    /// Reads, lists or searches; changes nothing.
    Read,
    /// A change the organisation makes every day and can undo: a customer
    /// record, a label, a page in its own workspace.
    Write,
    /// Posts in a shared workspace: an issue, a pull request, a comment, a
    /// branch, a ticket (the target is a repository or project).
    Post,
    /// Sends a message, an email or an invitation to people (the targets
    /// are recipients).
    Send,
    /// Opens something to an audience: sharing, visibility, publishing.
    Publish,
    /// Grants a permission or creates a credential.
    Grant,
    /// Moves money or changes what a customer pays.
    Pay,
    /// Deletes or overwrites what it names.
    Delete,
    /// Changes running infrastructure: deploys, scales, DNS, firewalls.
    Infra,
    /// Writes the agent's long-term memory or instructions.
    Remember,
    /// Runs code or a command.
    Run,
    /// Fetches a URL.
    Fetch,
}

/// One effect of a call and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Effect {
    /// What it does.
    pub(crate) kind: EffectKind,
    /// The catalogue entry that described the tool (`stripe`), or `None`
    /// when the tool's name and arguments were read generically.
    pub(crate) via: Option<&'static str>,
}

/// A verdict on one effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judged {
    pub(crate) verdict: Verdict,
    pub(crate) class: RiskClass,
    pub(crate) reason: String,
    /// The rule id it is recorded under (`effects.send-outside`).
    pub(crate) rule: &'static str,
}

/// What the effect reading made of a call.
#[derive(Debug, Clone)]
pub(crate) struct Reading {
    /// The effect the tool has, when its name or the catalogue tells it.
    pub(crate) effect: Option<Effect>,
    /// The verdicts that are not a plain allow.
    pub(crate) found: Vec<Judged>,
    /// The class of the call by its effect, even when allowed.
    pub(crate) class: RiskClass,
}

impl Default for Reading {
    /// Nothing read: no effect, nothing found, R0.
    fn default() -> Self {
        Reading {
            effect: None,
            found: Vec::new(),
            class: RiskClass::R0,
        }
    }
}

/// Reads an MCP or unfamiliar tool call as effects and judges them
/// against the organisation. `tool` is the tool's own name (the part after
/// `mcp__server__`), `server` the MCP server's name when there is one.
pub(crate) fn judge_call(
    n: &NormalizedCall,
    org: &Organization,
    protected_branches: &[String],
) -> Reading {
    let (server, tool) = match &n.mcp {
        Some((s, t)) => (Some(s.as_str()), t.as_str()),
        None => (None, n.tool.as_str()),
    };
    let foreign = n.mcp.is_some() || n.kind == ToolKind::Other;
    let effect = if foreign {
        catalogue::lookup(server, tool).or_else(|| read::by_name(server, tool, n))
    } else {
        builtin_effect(n)
    };
    let effect = operation::refine(effect, server, tool, n);
    let planted = instruction_file_claim(n);
    if effect.is_none() && !foreign {
        let mut reading = Reading::default();
        if let Some(j) = planted {
            reading.class = j.class;
            reading.found.push(j);
        }
        return reading;
    }
    // OpenClaw's `message` names the chat provider under `channel`; the
    // people it reaches are under `target`/`to`.
    let openclaw;
    let n = if n.mcp.is_none() && n.kind == ToolKind::Message && n.params.contains_key("channel") {
        let mut m = n.clone();
        m.params.remove("channel");
        openclaw = m;
        &openclaw
    } else {
        n
    };
    let mut reading = Reading {
        effect: effect.clone(),
        ..Reading::default()
    };
    let mut destination_inside = false;
    if let Some(e) = &effect {
        let j = judge::judge_effect(e, server, tool, n, org, protected_branches);
        reading.class = j.class;
        reading.found.extend(j.found);
        destination_inside = j.destination_inside;
        let words = read::tool_words(tool, &crate::normalize::name_words(server.unwrap_or("")));
        for j in checks::findings(n, e.kind, &words, org) {
            reading.class = reading.class.max(j.class);
            reading.found.push(j);
        }
    }
    // What is opened to everyone leaves the organisation.
    if checks::opens_to_everyone(&n.params) {
        destination_inside = false;
    }
    // Credentials leaving: every outgoing argument of every tool, known
    // effect or not, except what stays here (a memory, a file tool naming
    // the local paths it reads or writes).
    let local = effect.as_ref().is_some_and(|e| {
        e.kind == EffectKind::Remember
            || (matches!(e.kind, EffectKind::Read | EffectKind::Write) && !n.paths.is_empty())
    });
    let leaving = if local {
        None
    } else {
        outbound::judge(n, destination_inside)
    };
    for j in leaving.into_iter().chain(planted) {
        reading.class = reading.class.max(j.class);
        reading.found.push(j);
    }
    reading
}

/// Message actions that reach people (OpenClaw's `message`); its other
/// actions (reads, moderation, channel changes) keep their catalogue rules.
const SEND_ACTIONS: &[&str] = &[
    "send",
    "reply",
    "thread-reply",
    "post",
    "forward",
    "sendattachment",
    "send_message",
    "dm",
    "react",
];

/// The effect of a runtime's own tool that the catalogue's action and path
/// rules do not fully judge: a message sent, a memory saved, a URL fetched.
fn builtin_effect(n: &NormalizedCall) -> Option<Effect> {
    let kind = match n.kind {
        ToolKind::Message => {
            let action = n.action.as_deref().unwrap_or("send").to_ascii_lowercase();
            SEND_ACTIONS
                .contains(&action.as_str())
                .then_some(EffectKind::Send)?
        }
        ToolKind::Memory
            if matches!(
                n.tool.to_ascii_lowercase().as_str(),
                "save_memory" | "add_memory"
            ) =>
        {
            EffectKind::Remember
        }
        ToolKind::Fetch | ToolKind::Search | ToolKind::Browser => EffectKind::Fetch,
        // Read by the action rules; the effect reading adds what the
        // configuration it writes says (toolgate's own plugin switched off).
        ToolKind::Gateway => EffectKind::Write,
        _ => return None,
    };
    let via = if n.kind == ToolKind::Message {
        "openclaw-message"
    } else {
        "builtin"
    };
    Some(Effect {
        kind,
        via: Some(via),
    })
}

/// A file tool writing an instruction file (`CLAUDE.md`, `AGENTS.md`,
/// `.cursor/rules/…`) with text that claims standing approval or tells
/// the agent to skip checks: a block.
fn instruction_file_claim(n: &NormalizedCall) -> Option<Judged> {
    if n.kind != ToolKind::Write {
        return None;
    }
    // An editor task that runs when the folder is opened is code for later.
    if let Some(p) = n
        .paths
        .iter()
        .find(|p| p.path.ends_with("/.vscode/tasks.json"))
        && may_run_on_open(&n.params)
    {
        return Some(Judged {
            verdict: Verdict::Escalate,
            class: RiskClass::R3,
            reason: format!(
                "{} writes {}, editor tasks that can run whenever the folder is opened",
                n.tool, p.path
            ),
            rule: "effects.task-on-open",
        });
    }
    let path = n.paths.iter().find(|p| is_instruction_file(&p.path))?;
    let texts = crate::normalize::param_strings(&n.params, true);
    let phrase = texts.iter().find_map(|t| claims_standing_approval(t))?;
    Some(Judged {
        verdict: Verdict::Block,
        class: RiskClass::R4,
        reason: format!(
            "{} writes an instruction into {} that {phrase}: no approval may stand in for a check",
            n.tool, path.path
        ),
        rule: "effects.instructions",
    })
}

/// Whether a file tool's write of `.vscode/tasks.json` may leave a task
/// that runs when the folder is opened. Only a whole new file (a `content`
/// string) can be read for that: an edit changes part of a file whose rest
/// is unseen, so two harmless-looking edits could assemble `folderOpen`.
/// The text is searched for the key and the value, lower-cased, and for any
/// `\u` escape, which JSON would decode into either.
fn may_run_on_open(params: &serde_json::Map<String, serde_json::Value>) -> bool {
    let Some(content) = params.get("content").and_then(serde_json::Value::as_str) else {
        return true;
    };
    let text = content.to_ascii_lowercase();
    ["folderopen", "runon", "\\u"]
        .iter()
        .any(|needle| text.contains(needle))
}

/// The catalogue rules that find a command writing an instruction file.
const INSTRUCTION_WRITES: &[&str] = &[
    "filesystem.write-agent-instructions",
    "filesystem.copy-agent-instructions",
    "filesystem.edit-agent-instructions",
    "code.write-agent-instructions-code",
];

/// A command that writes an instruction file (one of `rules` is a
/// catalogue finding that says so) with text claiming standing approval:
/// a block, as the same text through a file tool is.
pub(crate) fn instructions_written<'a>(
    mut rules: impl Iterator<Item = &'a str>,
    command: &str,
) -> Option<Judged> {
    if !rules.any(|r| INSTRUCTION_WRITES.contains(&r)) {
        return None;
    }
    let phrase = claims_standing_approval(command)?;
    Some(Judged {
        verdict: Verdict::Block,
        class: RiskClass::R4,
        reason: format!(
            "`{}` writes an instruction into the agent's instructions that {phrase}: no approval may stand in for a check",
            crate::shell::shorten(command, 80)
        ),
        rule: "effects.instructions",
    })
}

/// Whether a path is one of the agents' instruction files.
fn is_instruction_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "CLAUDE.md"
            | "CLAUDE.local.md"
            | "AGENTS.md"
            | "AGENTS.override.md"
            | "GEMINI.md"
            | ".cursorrules"
            | ".windsurfrules"
            | ".clinerules"
            | "copilot-instructions.md"
    ) || [
        "/.cursor/rules/",
        "/.windsurf/rules/",
        "/.clinerules/",
        "/.claude/commands/",
        "/.claude/agents/",
        "/.github/instructions/",
        "/.gemini/commands/",
        "/.codex/prompts/",
    ]
    .iter()
    .any(|d| path.contains(d))
}
