//! `toolgate bypass start | approval | list | end`: emergency bypasses
//! (docs/approvals.md), as the administrator or with an operator's own token.

use crate::approvals_cmd::NoSuchApproval;
use crate::state::DataDirArgs;
use anyhow::{Result, anyhow};
use clap::Subcommand;
use std::process::ExitCode;
use std::time::Duration;
use toolgate_core::{BYPASSABLE, parse_layer, rfc3339_ms};
use toolgate_gate::{Clock, SystemClock, VoteOutcome};
use toolgate_store::StoreError;

/// What to do with bypasses.
#[derive(Debug, Subcommand)]
pub(crate) enum BypassCommand {
    /// Lift layers (knowledge, risk, posture) for a while, for
    /// everyone, with a reason that goes into the audit log.
    Start {
        /// A layer to lift; repeat for several.
        #[arg(long = "layer", value_name = "LAYER", required = true)]
        layers: Vec<String>,
        /// How long (at most 24h).
        #[arg(long = "for", value_name = "DURATION", default_value = "15m")]
        duration: String,
        /// What the emergency is.
        #[arg(long)]
        reason: String,
        /// Your own operator token (default: the administrator).
        #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Cast your approving vote on one pending approval, with a reason on
    /// the record. It counts once, like any vote: it approves where one
    /// approval is enough; an R4 call still needs a second named operator.
    Approval {
        /// The approval id, or a unique start of it (4 hex digits or more).
        id: String,
        /// What the emergency is.
        #[arg(long)]
        reason: String,
        /// Your own operator token (default: the administrator, who counts
        /// only below R4 where one approval is enough).
        #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// List bypasses, active ones first.
    List {
        /// One JSON object per line (also whenever stdout is not a terminal).
        #[arg(long)]
        json: bool,
        /// A readable line per bypass even when stdout is not a terminal.
        #[arg(long, conflicts_with = "json")]
        table: bool,
    },
    /// End a bypass now.
    End {
        /// The bypass id (from `toolgate bypass list`), or a unique start of
        /// it (4 hex digits or more).
        id: String,
        /// Your own operator token (default: the administrator).
        #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
}

/// Runs a bypass subcommand: exit 0 on success, 1 when refused, 2 on bad
/// usage or an unusable store.
pub(crate) fn run(cmd: BypassCommand, data: &DataDirArgs) -> ExitCode {
    match run_inner(cmd, data) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolgate bypass: {}", format!("{e:#}").replace('\n', " "));
            let refused = e.downcast_ref::<StoreError>().is_some_and(|s| {
                matches!(
                    s,
                    StoreError::Operators(_) | StoreError::NotFound(_) | StoreError::Refused(_)
                )
            }) || e.downcast_ref::<NoSuchApproval>().is_some();
            ExitCode::from(if refused { 1 } else { 2 })
        }
    }
}

fn run_inner(cmd: BypassCommand, data: &DataDirArgs) -> Result<()> {
    // Starting a bypass writes state for whatever reads this data
    // directory; the rest act on bypasses and approvals already there.
    let store = match cmd {
        BypassCommand::Start { .. } => data.open()?,
        _ => data.open_existing()?,
    };
    let clock = SystemClock;
    match cmd {
        BypassCommand::Start {
            layers,
            duration,
            reason,
            token,
        } => {
            let by = crate::operators_cmd::voter(&*store, data, token.as_deref(), None)?;
            let layers = layers
                .iter()
                .map(|l| {
                    parse_layer(l).ok_or_else(|| {
                        anyhow!(
                            "{l:?} is not a layer: use {}",
                            BYPASSABLE.map(|l| l.as_str()).join(", ")
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let d: Duration = humantime::parse_duration(duration.trim())
                .map_err(|e| anyhow!("--for {duration:?}: {e} (e.g. 30m)"))?;
            let b = toolgate_gate::start_bypass(&*store, &clock, &layers, d, &reason, &by)?;
            println!(
                "bypass {} started by {by}: {} lifted until {} (end it sooner with `toolgate bypass end {}`)",
                b.id,
                b.layers
                    .iter()
                    .map(|l| l.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                rfc3339_ms(b.until_ms),
                b.id
            );
        }
        BypassCommand::Approval { id, reason, token } => {
            let by = crate::operators_cmd::voter(&*store, data, token.as_deref(), None)?;
            let id = crate::approvals_cmd::resolve_id(&*store, &id)?;
            let (_, outcome) = toolgate_gate::bypass_approval(&*store, &clock, &id, &reason, &by)?;
            match outcome {
                VoteOutcome::Approved { usable_until_ms } => println!(
                    "approval {id} bypassed by {by}: the agent may retry the exact call once, until {}",
                    rfc3339_ms(usable_until_ms)
                ),
                VoteOutcome::Recorded { have, need, .. } => println!(
                    "bypass of {id} recorded as {by}'s approval: {have} of {need}; another named operator must approve (or bypass) it too"
                ),
                VoteOutcome::Denied => println!("approval {id} is denied"),
            }
        }
        BypassCommand::List { json, table } => {
            let json = crate::output::json_lines(json, table);
            let now = clock.now_ms();
            let mut all = store.read_bypasses()?;
            all.sort_by_key(|b| (!b.active(now), std::cmp::Reverse(b.started_ms)));
            if json {
                for b in &all {
                    println!("{}", serde_json::to_string(b)?);
                }
            } else if all.is_empty() {
                println!("no bypasses");
            } else {
                for b in &all {
                    let state = if b.active(now) { "ACTIVE" } else { "over" };
                    println!(
                        "{}  {state:<6}  {:<20}  by {:<12} until {}  {}",
                        b.id,
                        b.layers
                            .iter()
                            .map(|l| l.as_str())
                            .collect::<Vec<_>>()
                            .join(","),
                        b.by,
                        rfc3339_ms(b.until_ms),
                        b.reason
                    );
                }
            }
        }
        BypassCommand::End { id, token } => {
            let by = crate::operators_cmd::voter(&*store, data, token.as_deref(), None)?;
            let id = resolve_bypass_id(&*store, &id)?;
            let b = toolgate_gate::end_bypass(&*store, &clock, &id, &by)?;
            println!("bypass {} ended by {by}", b.id);
        }
    }
    Ok(())
}

/// A bypass id as a person gives it: whole, or any unique start of it, at
/// least 4 hex digits. Several matches are an error listing them all.
fn resolve_bypass_id(store: &dyn toolgate_store::Store, id: &str) -> Result<String> {
    let wanted = id.trim().to_ascii_lowercase();
    let all = store.read_bypasses()?;
    if all.iter().any(|b| b.id == wanted) {
        return Ok(wanted);
    }
    if wanted.len() < 4 || !wanted.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(anyhow!(
            "{id:?} is not a bypass id: give the id from `toolgate bypass list`, or at least \
             its first 4 hex digits"
        ));
    }
    let now = SystemClock.now_ms();
    let found: Vec<_> = all.iter().filter(|b| b.id.starts_with(&wanted)).collect();
    match found.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(NoSuchApproval(format!(
            "no bypass id starts with {wanted}: `toolgate bypass list` shows them"
        ))
        .into()),
        many => Err(anyhow!(
            "{wanted} is the start of more than one bypass id ({}): give more of it",
            many.iter()
                .map(|b| format!("{} {}", b.id, if b.active(now) { "active" } else { "over" }))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_store::Bypass;

    /// A unique start of a bypass id names it (any case); an ambiguous one
    /// is refused listing every candidate; an unknown one is "not found".
    #[test]
    fn a_bypass_id_may_be_given_by_a_unique_start() {
        let tmp = tempfile::tempdir().unwrap();
        let store = crate::state::open_store(&tmp.path().join("d")).unwrap();
        let mut tx = store.begin().unwrap();
        for id in ["abcd1111", "abcd2222", "ef001234"] {
            tx.put_bypass(&Bypass {
                id: id.into(),
                layers: vec![],
                reason: "testing prefixes".into(),
                by: "operator".into(),
                started_ms: 0,
                until_ms: i64::MAX,
                ended: None,
            })
            .unwrap();
        }
        tx.commit().unwrap();
        assert_eq!(resolve_bypass_id(&*store, "ef00").unwrap(), "ef001234");
        assert_eq!(resolve_bypass_id(&*store, "ABCD1").unwrap(), "abcd1111");
        assert_eq!(resolve_bypass_id(&*store, "abcd2222").unwrap(), "abcd2222");
        let e = resolve_bypass_id(&*store, "abcd").unwrap_err().to_string();
        assert!(
            e.contains("abcd1111") && e.contains("abcd2222") && e.contains("more than one"),
            "{e}"
        );
        let e = resolve_bypass_id(&*store, "9999").unwrap_err();
        assert!(e.downcast_ref::<NoSuchApproval>().is_some(), "{e}");
        let e = resolve_bypass_id(&*store, "ab").unwrap_err().to_string();
        assert!(e.contains("at least"), "{e}");
    }
}
