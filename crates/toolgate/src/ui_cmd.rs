//! `toolgate ui`: prints a one-time link that signs a browser into a
//! running daemon's control UI, so nobody pastes a 64-character token.

use anyhow::{Result, anyhow};
use clap::Args;
use std::process::ExitCode;

use crate::state::DataDirArgs;

/// Arguments of `toolgate ui`.
#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    /// The daemon's address.
    #[arg(long, env = "TOOLGATE_URL", default_value = "http://127.0.0.1:7878")]
    url: String,
    /// An operator token to sign in with: your own (`toolgate operators add
    /// NAME`), so votes are recorded as you. Default: the shared operator
    /// token (TOOLGATE_OPERATOR_TOKEN, else operator.token in the data dir).
    #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Also open the link in the desktop's browser (xdg-open).
    #[arg(long)]
    open: bool,
}

/// Asks the daemon for a sign-in link and prints it on stdout: exit 0, or
/// 2 with the reason on stderr.
pub(crate) fn run(args: UiArgs, data: &DataDirArgs) -> ExitCode {
    match link(&args, data) {
        Ok((url, who, until)) => {
            println!("{url}");
            eprintln!(
                "Open the link above to sign in to the control UI as {who}. It works once, \
                 until {until}; the browser then stays signed in for 12 hours."
            );
            if args.open
                && let Err(e) = std::process::Command::new("xdg-open").arg(&url).spawn()
            {
                eprintln!("toolgate ui: could not open a browser ({e}); open the link yourself");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolgate ui: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}

fn link(args: &UiArgs, data: &DataDirArgs) -> Result<(String, String, String)> {
    let base = crate::daemon_post::base_url(&args.url)?;
    let token = operator_token(args, data)?;
    let body = crate::daemon_post::post(base, "/v1/session/links", &token)?;
    let field = |k: &str| body[k].as_str().map(str::to_string);
    let path = field("path")
        .filter(|p| p.starts_with("/#signin/"))
        .ok_or_else(|| {
            anyhow!(
                "the daemon's answer has no sign-in link: is it a toolgate daemon of this version?"
            )
        })?;
    let who = field("identity").unwrap_or_else(|| "the operator".into());
    let until = field("expires")
        .and_then(|e| e.get(..16).map(|m| format!("{} UTC", m.replace('T', " "))))
        .unwrap_or_else(|| "it expires".into());
    Ok((format!("{base}{path}"), who, until))
}

/// `--token`, else TOOLGATE_OPERATOR_TOKEN, else the data dir's
/// operator.token (what `toolgate serve` made there).
fn operator_token(args: &UiArgs, data: &DataDirArgs) -> Result<String> {
    crate::daemon_token::token(
        args.token.as_deref(),
        crate::daemon_token::Shared::Operator,
        data,
        "pass --token (yours from `toolgate operators add NAME`)",
    )
}
