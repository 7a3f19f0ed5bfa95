//! `toolgate approvals … --url URL`: the same commands against a running
//! daemon's HTTP API instead of the local data directory, so a person can
//! approve from another machine.

use crate::approvals_cmd::{ApprovalsCommand, IdArg, id_arg, print_table, print_view};
use crate::state::DataDirArgs;
use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};
use std::process::ExitCode;
use std::time::Duration;
use toolgate_gate::{ApprovalView, Clock, SystemClock};

/// Runs an approvals subcommand against the daemon at `url`: exit 0 on
/// success, 1 when refused or not found, 2 on bad usage or an unreachable
/// daemon.
pub(crate) fn run(cmd: ApprovalsCommand, url: &str, data: &DataDirArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toolgate approvals: cannot start: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run_inner(cmd, url.trim_end_matches('/'), data)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "toolgate approvals: {}",
                format!("{e:#}").replace('\n', " ")
            );
            let refused = e.downcast_ref::<Answer>().is_some_and(|a| a.refused);
            ExitCode::from(if refused { 1 } else { 2 })
        }
    }
}

/// What the daemon's error answer says (`{"error": {"message": …}}`), else
/// its status.
pub(crate) fn error_message(status: reqwest::StatusCode, body: &Value) -> String {
    body["error"]["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| format!("the daemon answered {status}"))
}

/// An error answer from the daemon.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct Answer {
    message: String,
    /// Not found or refused (exit 1), rather than a failure to ask (2).
    refused: bool,
}

struct Daemon {
    http: reqwest::Client,
    url: String,
    token: String,
}

impl Daemon {
    async fn send(&self, req: reqwest::RequestBuilder) -> Result<Value> {
        let resp = req
            .bearer_auth(&self.token)
            .send()
            .await
            .with_context(|| format!("cannot reach the daemon at {}", self.url))?;
        let status = resp.status();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(body);
        }
        let message = error_message(status, &body);
        let advice = match status.as_u16() {
            401 => " (check --token or TOOLGATE_APPROVER_TOKEN: an operator's token)",
            _ => "",
        };
        Err(Answer {
            message: format!("{message}{advice}"),
            refused: matches!(status.as_u16(), 403 | 404 | 409),
        }
        .into())
    }

    async fn get(&self, path: &str) -> Result<Value> {
        self.send(self.http.get(format!("{}{path}", self.url)))
            .await
    }

    async fn list(&self, all: bool, limit: usize) -> Result<Vec<ApprovalView>> {
        let v = self
            .get(&format!("/v1/approvals?all={all}&limit={limit}"))
            .await?;
        serde_json::from_value(v["approvals"].clone())
            .context("the daemon's approval list is not in the expected form")
    }

    /// The full id for what a person typed: a whole id is used as it is; a
    /// start of one (4 hex digits or more) must match exactly one approval.
    async fn resolve(&self, id: &str) -> Result<String> {
        let id = match id_arg(id)? {
            IdArg::Whole(whole) => return Ok(whole.to_string()),
            IdArg::Start(prefix) => prefix,
        };
        let found: Vec<String> = self
            .list(true, 1000)
            .await?
            .into_iter()
            .map(|v| v.approval.id.to_string())
            .filter(|full| full.starts_with(&id))
            .collect();
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(Answer {
                message: format!(
                    "no approval id starts with {id} among the daemon's latest 1000: check \
                     it with `toolgate approvals list --all --url …`"
                ),
                refused: true,
            }
            .into()),
            _ => Err(anyhow!(
                "{id} is the start of more than one approval id ({}): give more of it",
                found.join(", ")
            )),
        }
    }
}

async fn run_inner(cmd: ApprovalsCommand, url: &str, data: &DataDirArgs) -> Result<()> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(anyhow!(
            "--url {url:?}: give the daemon's address, such as http://127.0.0.1:7878"
        ));
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let given = match &cmd {
        ApprovalsCommand::List { token, .. }
        | ApprovalsCommand::Show { token, .. }
        | ApprovalsCommand::Approve { token, .. }
        | ApprovalsCommand::Deny { token, .. } => token.clone(),
    };
    // As `toolgate ui`: the shared operator token of this user's daemon
    // when no token of a person's own is given.
    let token = crate::daemon_token::token(
        given.as_deref(),
        crate::daemon_token::Shared::Operator,
        data,
        "pass --token TOKEN or set TOOLGATE_APPROVER_TOKEN (`toolgate operators add NAME` \
         makes one of your own)",
    )?;
    let daemon = Daemon {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .context("cannot set up the HTTP client")?,
        url: url.to_string(),
        token,
    };
    let now = SystemClock.now_ms();
    match cmd {
        ApprovalsCommand::List {
            all,
            limit,
            json,
            table,
            ..
        } => {
            let views = daemon.list(all, limit).await?;
            if crate::output::json_lines(json, table) {
                for v in &views {
                    println!("{}", serde_json::to_string(v)?);
                }
            } else if views.is_empty() {
                let what = if all { "approvals" } else { "open approvals" };
                println!("no {what} at {url}");
            } else {
                print_table(&views, now);
            }
        }
        ApprovalsCommand::Show { id, json, .. } => {
            let id = daemon.resolve(&id).await?;
            let v = daemon.get(&format!("/v1/approvals/{id}")).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                let view: ApprovalView = serde_json::from_value(v)
                    .context("the daemon's approval is not in the expected form")?;
                print_view(&view, now);
            }
        }
        ApprovalsCommand::Approve {
            id, as_, reason, ..
        } => vote(&daemon, &id, as_, reason, true).await?,
        ApprovalsCommand::Deny {
            id, as_, reason, ..
        } => vote(&daemon, &id, as_, reason, false).await?,
    }
    Ok(())
}

async fn vote(
    daemon: &Daemon,
    id: &str,
    as_: Option<String>,
    reason: Option<String>,
    approve: bool,
) -> Result<()> {
    let id = daemon.resolve(id).await?;
    let verb = if approve { "approve" } else { "deny" };
    let mut body = json!({});
    if let Some(r) = reason {
        body["reason"] = Value::String(r);
    }
    if let Some(a) = as_ {
        body["as"] = Value::String(a);
    }
    let url = format!("{}/v1/approvals/{id}/{verb}", daemon.url);
    let v = daemon.send(daemon.http.post(url).json(&body)).await?;
    let summary = v["approval"]["summary"].as_str().unwrap_or("?");
    println!("call: {summary}");
    match v["outcome"].as_str() {
        Some("approved") => println!(
            "approved {id}: the agent may retry the exact call once, until {}",
            v["usable_until_ms"]
                .as_i64()
                .map(toolgate_core::rfc3339_ms)
                .unwrap_or_else(|| "the window closes".into())
        ),
        Some("denied") => println!("denied {id}"),
        _ => println!(
            "vote recorded on {id}: {} of {} approvals",
            v["have"], v["need"]
        ),
    }
    Ok(())
}
