//! `toolgate knowledge …`: acknowledge knowledge shown to an agent, see
//! what knowledge applies to a call without recording anything, and check
//! the knowledge layer's configuration.

use crate::check::{base_env, load_engine};
use crate::state::{DataDirArgs, os_user};
use anyhow::{Context, Result, anyhow};
use clap::Subcommand;
use serde_json::json;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use toolgate_core::knowledge::enforce::{Audience, Outcome, outcome, render};
use toolgate_core::knowledge::sop::sop_name;
use toolgate_core::{parse_json, tool_call};
use toolgate_gate::{AckError, Gate, SystemClock};

/// Prints a line; a closed pipe (`| head`) ends the output quietly.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `toolgate knowledge` subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum KnowledgeCommand {
    /// Acknowledge the knowledge shown under ID (from a TOOLGATE_ACK line):
    /// calls it covers, in the session it was shown to, run for the cooldown.
    Ack {
        /// The id from `TOOLGATE_ACK|<id>|…`.
        id: String,
        /// Policy file whose `[knowledge] cooldown` applies (default: built in).
        #[arg(long, value_name = "FILE", env = "TOOLGATE_POLICY")]
        policy: Option<PathBuf>,
        /// Who acknowledges (default: the OS user).
        #[arg(long = "as", value_name = "NAME")]
        by: Option<String>,
    },
    /// Show which SOP sections and memories apply to a ToolCall read from
    /// stdin, and what the layer would do. Records nothing.
    Show {
        /// Policy file (default: built in).
        #[arg(long, value_name = "FILE", env = "TOOLGATE_POLICY")]
        policy: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The layer's settings, SOP directories and files, rules and memories.
    Status {
        /// Policy file (default: built in).
        #[arg(long, value_name = "FILE", env = "TOOLGATE_POLICY")]
        policy: Option<PathBuf>,
    },
}

/// Runs a knowledge subcommand: exit 0 done, 1 refused (unknown or expired
/// id), 2 bad input or failure.
pub(crate) fn run(cmd: KnowledgeCommand, data: &DataDirArgs) -> ExitCode {
    match run_inner(cmd, data) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "toolgate knowledge: {}",
                format!("{e:#}").replace('\n', " ")
            );
            let refused = e
                .downcast_ref::<AckError>()
                .is_some_and(|a| !matches!(a, AckError::Store(_)));
            ExitCode::from(if refused { 1 } else { 2 })
        }
    }
}

fn gate(policy: Option<&std::path::Path>, data: &DataDirArgs) -> Result<Gate> {
    let engine = load_engine(policy)?;
    let store = data.open_existing()?;
    Ok(Gate::new(
        Arc::new(engine),
        store,
        Arc::new(SystemClock),
        base_env(),
    ))
}

fn run_inner(cmd: KnowledgeCommand, data: &DataDirArgs) -> Result<()> {
    match cmd {
        KnowledgeCommand::Ack { id, policy, by } => {
            let gate = gate(policy.as_deref(), data)?;
            let by = by.unwrap_or_else(os_user);
            let shown = gate.acknowledge(&id, &by, None)?;
            let cooldown = gate.knowledge().settings().cooldown.as_secs();
            say!(
                "acknowledged {} item(s) for {} ({}s): {}",
                shown.keys.len(),
                shown.scope,
                cooldown,
                shown.keys.join(", ")
            );
            Ok(())
        }
        KnowledgeCommand::Show { policy, json } => {
            let mut text = String::new();
            std::io::stdin()
                .take(16 * 1024 * 1024)
                .read_to_string(&mut text)
                .context("cannot read the ToolCall from stdin")?;
            let call = parse_json(text.trim().as_bytes())
                .and_then(|v| tool_call(v, &[]))
                .map_err(|e| anyhow!("stdin is not a ToolCall: {e}"))?;
            let gate = gate(policy.as_deref(), data)?;
            let engine = gate.engine();
            let env = engine.env_for(&call, &base_env());
            let assessed = engine.decide(&call, &base_env());
            let decided = assessed.decision;
            let kb = gate.knowledge();
            let settings = kb.settings();
            let lookup = kb.lookup(&**gate.store(), &assessed.call, &env, decided.risk);
            let result = outcome(settings, &lookup.found, &|_| false);
            let what = match &result {
                Outcome::Nothing => "nothing applies",
                Outcome::Advise => "shown to the agent; the call is not held",
                Outcome::Require(_) => "the call is held until the agent acknowledges it",
            };
            if json {
                let out = json!({
                    "enforcement": settings.enforcement.as_str(),
                    "risk": decided.risk,
                    "outcome": match result { Outcome::Nothing => "nothing", Outcome::Advise => "advise", Outcome::Require(_) => "hold" },
                    "sops": lookup.found.sops.iter().map(|s| json!({
                        "name": s.sop.name, "origin": s.sop.origin, "reason": s.reason.to_string(),
                        "sections": s.sop.sections.iter().map(|x| x.kind.as_str()).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                    "memories": lookup.found.memories.iter().map(|m| json!({
                        "id": m.id, "confidence": m.confidence, "categories": m.categories,
                    })).collect::<Vec<_>>(),
                    "errors": lookup.errors,
                    "lookup_us": lookup.elapsed_us,
                });
                say!("{}", serde_json::to_string_pretty(&out)?);
            } else {
                say!(
                    "enforcement {}, risk {}: {what} (lookup {} µs)",
                    settings.enforcement,
                    decided.risk,
                    lookup.elapsed_us
                );
                for e in &lookup.errors {
                    say!("source error: {e}");
                }
                if !lookup.found.is_empty() {
                    let audience = Audience::Agent {
                        show_credentials: settings.show_credentials,
                    };
                    say!("\n{}", render(&lookup.found, audience, None));
                }
            }
            Ok(())
        }
        KnowledgeCommand::Status { policy } => {
            let gate = gate(policy.as_deref(), data)?;
            let kb = gate.knowledge();
            let s = kb.settings();
            say!(
                "enforcement {}  cooldown {}s  fail_open {}  show_credentials {}",
                s.enforcement,
                s.cooldown.as_secs(),
                s.fail_open,
                s.show_credentials
            );
            say!(
                "thresholds: critical ≥ {}, routine ≥ {}, experimental ≥ {}",
                s.thresholds.critical,
                s.thresholds.routine,
                s.thresholds.experimental
            );
            for d in kb.sop_dirs() {
                let names: Vec<String> = match std::fs::read_dir(d) {
                    Ok(rd) => {
                        let mut v: Vec<String> = rd
                            .filter_map(Result::ok)
                            .filter_map(|e| {
                                e.file_name()
                                    .to_str()
                                    .and_then(sop_name)
                                    .map(str::to_string)
                            })
                            .collect();
                        v.sort();
                        v
                    }
                    Err(e) => {
                        say!("SOP dir {}: {e}", d.display());
                        continue;
                    }
                };
                say!(
                    "SOP dir {}: {} SOP(s) {}",
                    d.display(),
                    names.len(),
                    names.join(" ")
                );
            }
            say!("rules: {}", s.rules().len());
            for r in s.rules().iter().take(20) {
                say!("  /{}/ → {}.ai.sop", r.pattern, r.sop);
            }
            let store = gate.store();
            let mems = store.list_memories(None, usize::MAX)?.len();
            say!("memories: {mems} ({})", store.location());
            Ok(())
        }
    }
}
