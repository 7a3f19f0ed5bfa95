//! `toolgate approvals list | show ID | approve ID | deny ID`.

use crate::state::{DataDirArgs, os_user};
use anyhow::{Result, anyhow};
use clap::Subcommand;
use std::process::ExitCode;
use toolgate_core::{ApprovalId, ApprovalState, rfc3339_ms, visible, visible_line};
use toolgate_gate::{ApprovalView, Clock, SystemClock, VoteInput, VoteOutcome};
use toolgate_store::StoreError;

/// What to do with approvals.
#[derive(Debug, Subcommand)]
pub(crate) enum ApprovalsCommand {
    /// List open approvals (pending or approved), newest first.
    List {
        /// Include consumed, denied and expired approvals.
        #[arg(long)]
        all: bool,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// One JSON object per line instead of a table (the default when
        /// stdout is not a terminal).
        #[arg(long)]
        json: bool,
        /// A table even when stdout is not a terminal (`| less`).
        #[arg(long, conflicts_with = "json")]
        table: bool,
        /// With --url: an operator token to ask the daemon with.
        #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Show one approval: the call, why it needs approval, and its votes.
    Show {
        /// The approval id (from TOOLGATE_ESCALATE|<id>|… or `approvals
        /// list`), or a unique start of it (`0123`).
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// With --url: an operator token to ask the daemon with.
        #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Approve a pending call. The agent must then retry the exact call
    /// within the approval window.
    Approve {
        /// The approval id, or a unique start of it.
        id: String,
        /// Your own operator token (from `toolgate operators add`): the vote
        /// is yours. Without one it is the administrator's ("operator"), as
        /// whoever can write the data directory, which approves alone only
        /// below R4 where one approval is enough (R4 needs named operators).
        #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Checked against who the token says you are (it cannot choose).
        #[arg(long = "as", value_name = "NAME", hide = true)]
        as_: Option<String>,
        /// Why you approve (recorded in the audit log).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Deny a pending call; retries of it are blocked until the pending TTL
    /// passes.
    Deny {
        /// The approval id, or a unique start of it.
        id: String,
        /// Your own operator token (from `toolgate operators add`): the vote
        /// is yours. Without one it is the administrator's ("operator"), as
        /// whoever can write the data directory.
        #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Checked against who the token says you are (it cannot choose).
        #[arg(long = "as", value_name = "NAME", hide = true)]
        as_: Option<String>,
        /// Why you deny (recorded in the audit log).
        #[arg(long)]
        reason: Option<String>,
    },
}

/// Runs an approvals subcommand: exit 0 on success, 1 when refused or not
/// found, 2 on bad usage or an unusable store.
pub(crate) fn run(cmd: ApprovalsCommand, data: &DataDirArgs) -> ExitCode {
    match run_inner(cmd, data) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "toolgate approvals: {}",
                format!("{e:#}").replace('\n', " ")
            );
            let refused = e
                .downcast_ref::<StoreError>()
                .is_some_and(|s| matches!(s, StoreError::Refused(_) | StoreError::NotFound(_)))
                || e.downcast_ref::<NoSuchApproval>().is_some();
            ExitCode::from(if refused { 1 } else { 2 })
        }
    }
}

/// An approval id as a person typed it.
pub(crate) enum IdArg {
    /// The whole id.
    Whole(ApprovalId),
    /// A start of one: 4 hex digits or more, lowercased.
    Start(String),
}

/// Reads an approval id argument: whole (32 hex digits) or a start of one.
pub(crate) fn id_arg(id: &str) -> Result<IdArg> {
    if let Ok(whole) = ApprovalId::parse(id) {
        return Ok(IdArg::Whole(whole));
    }
    let prefix = id.trim().to_ascii_lowercase();
    if prefix.len() < 4 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(anyhow!(
            "{id:?} is not an approval id: give the id from `toolgate approvals list` \
             (32 hex digits) or at least its first 4"
        ));
    }
    Ok(IdArg::Start(prefix))
}

/// A shortened id that matches no approval, or bypass (exit 1, as a whole
/// unknown id).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NoSuchApproval(pub(crate) String);

/// An approval id as a person gives it: whole (32 hex digits), or any
/// unique start of it, at least 4 hex digits (`3f1b`).
pub(crate) fn resolve_id(store: &dyn toolgate_store::Store, id: &str) -> Result<ApprovalId> {
    let prefix = match id_arg(id)? {
        IdArg::Whole(whole) => return Ok(whole),
        IdArg::Start(prefix) => prefix,
    };
    let found = store.approval_ids_starting(&prefix, 2)?;
    match found.as_slice() {
        [one] => ApprovalId::parse(one).map_err(|e| anyhow!("{one:?}: {e}")),
        [] => Err(NoSuchApproval(format!(
            "no approval id starts with {prefix}: check it with `toolgate approvals list --all`"
        ))
        .into()),
        _ => Err(anyhow!(
            "{prefix} is the start of more than one approval id ({}, …): give more of it",
            found.join(", ")
        )),
    }
}

fn run_inner(cmd: ApprovalsCommand, data: &DataDirArgs) -> Result<()> {
    let clock = SystemClock;
    match cmd {
        ApprovalsCommand::List {
            all,
            limit,
            json,
            table,
            ..
        } => {
            let store = data.open_existing()?;
            let views = toolgate_gate::list(&*store, &clock, all, limit)?;
            if crate::output::json_lines(json, table) {
                for v in &views {
                    println!("{}", serde_json::to_string(v)?);
                }
            } else if views.is_empty() {
                let what = if all { "approvals" } else { "open approvals" };
                println!("no {what} in {}", store.location());
            } else {
                print_table(&views, clock.now_ms());
            }
        }
        ApprovalsCommand::Show { id, json, .. } => {
            let store = data.open_existing()?;
            let id = resolve_id(&*store, &id)?;
            let v = toolgate_gate::show(&*store, &clock, &id)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print_view(&v, clock.now_ms());
            }
        }
        ApprovalsCommand::Approve {
            id,
            token,
            as_,
            reason,
        } => vote(data, &id, token, as_, reason, true)?,
        ApprovalsCommand::Deny {
            id,
            token,
            as_,
            reason,
        } => vote(data, &id, token, as_, reason, false)?,
    }
    Ok(())
}

fn vote(
    data: &DataDirArgs,
    id: &str,
    token: Option<String>,
    as_: Option<String>,
    reason: Option<String>,
    approve: bool,
) -> Result<()> {
    let store = data.open_existing()?;
    let id = resolve_id(&*store, id)?;
    let identity = crate::operators_cmd::voter(&*store, data, token.as_deref(), as_.as_deref())?;
    let input = VoteInput {
        identity: identity.clone(),
        approve,
        reason,
        // The OS account that ran the command, beside the identity.
        channel: match crate::state::os_uid() {
            Some(uid) => format!("cli uid={uid} user={}", os_user()),
            None => "cli".to_string(),
        },
        relayed: false,
    };
    let outcome = toolgate_gate::vote(&*store, &SystemClock, &id, input)?;
    let view = toolgate_gate::show(&*store, &SystemClock, &id)?;
    println!(
        "call: {} ({}: {})",
        view.approval.summary, view.approval.risk, view.approval.reason
    );
    match outcome {
        VoteOutcome::Approved { usable_until_ms } => println!(
            "approved {id} as {identity}: the agent may retry the exact call once, until {}",
            rfc3339_ms(usable_until_ms)
        ),
        VoteOutcome::Recorded {
            have,
            need,
            user_missing,
        } => {
            let more = if user_missing && have >= need {
                "a person's approval is still needed".to_string()
            } else {
                format!("{} more needed", need.saturating_sub(have).max(1))
            };
            println!("recorded {identity}'s approval of {id}: {have} of {need}; {more}");
        }
        VoteOutcome::Denied => println!("denied {id} as {identity}"),
    }
    Ok(())
}

fn until(ms: i64, now: i64) -> String {
    match u64::try_from((ms - now) / 1000) {
        Ok(d) if d > 0 => format!(
            "in {}",
            toolgate_core::span(d, toolgate_core::SpanStyle::About)
        ),
        _ => "now".to_string(),
    }
}

pub(crate) fn print_table(views: &[ApprovalView], now: i64) {
    println!(
        "{:<32}  {:<9} {:<4} {:<5} {:<9} CALL",
        "ID", "STATE", "RISK", "VOTES", "EXPIRES"
    );
    for v in views {
        let a = &v.approval;
        let expires = match a.state {
            ApprovalState::Pending => until(a.expires_ms, now),
            ApprovalState::Approved => until(a.usable_until_ms.unwrap_or(now), now),
            _ => "-".to_string(),
        };
        let summary: String = a.summary.chars().take(80).collect();
        let summary = visible_line(&summary);
        println!(
            "{:<32}  {:<9} {:<4} {:<5} {:<9} {}",
            a.id.to_string(),
            a.state.as_str(),
            a.risk.as_str(),
            format!("{}/{}", v.have, v.need),
            expires,
            summary
        );
    }
}

pub(crate) fn print_view(v: &ApprovalView, now: i64) {
    let a = &v.approval;
    println!("approval   {}", a.id);
    println!("state      {}", a.state);
    println!("risk       {}", a.risk);
    println!("call       {}", visible(&a.summary));
    println!("why        {}", visible(&a.reason));
    // Every finding, when there is more than the one `why` names.
    if a.findings.len() > 1 {
        for (i, f) in a.findings.iter().enumerate() {
            let label = if i == 0 { "findings" } else { "" };
            println!(
                "{label:<10} {} {}: {}",
                f.risk,
                f.layer.as_str(),
                visible_line(&f.reason)
            );
        }
    }
    if let Some(r) = &a.requester {
        println!(
            "requester  {} (cannot approve it)",
            visible_line(&r.to_string())
        );
    }
    if let Some(s) = &a.session {
        println!("session    {}", visible_line(s));
    }
    if let Some(c) = &a.cwd {
        println!(
            "judged in  {} (the approval holds only for this directory)",
            visible_line(c)
        );
    }
    let need_user = if a.quorum.require_user {
        ", one of them a person"
    } else {
        ""
    };
    println!(
        "quorum     {} of {} approval(s){need_user}; approvers: {}",
        v.have,
        v.need,
        a.quorum
            .approvers
            .iter()
            .map(|k| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !a.quorum.operators.is_empty() {
        println!("operators  {}", a.quorum.operators.join(", "));
    }
    println!("created    {}", rfc3339_ms(a.created_ms));
    match a.state {
        ApprovalState::Pending => println!(
            "expires    {} ({})",
            rfc3339_ms(a.expires_ms),
            until(a.expires_ms, now)
        ),
        ApprovalState::Approved => {
            let u = a.usable_until_ms.unwrap_or(now);
            println!("usable     until {} ({})", rfc3339_ms(u), until(u, now));
        }
        _ => {}
    }
    if let Some(r) = &a.resolution {
        println!("resolution {}", visible_line(r));
    }
    println!("binding    {}", a.binding);
    for vv in &v.votes {
        let x = &vv.vote;
        println!(
            "vote       {} {} by {} ({}{}) at {}{}{}",
            if x.approve { "approve" } else { "deny" },
            x.kind,
            visible_line(&x.identity),
            visible_line(&x.channel),
            if x.relayed { ", relayed" } else { "" },
            rfc3339_ms(x.at_ms),
            if vv.current { "" } else { " [stale]" },
            x.reason
                .as_deref()
                .map(|r| format!(": {}", visible_line(r)))
                .unwrap_or_default()
        );
    }
    println!(
        "params     {}",
        a.call
            .get("params")
            .map(|p| p.to_string())
            .unwrap_or_default()
    );
}
