//! `toolgate channels test NAME`: asks the running daemon to send a test
//! message through one of its routing targets, with its own settings and
//! secrets (which live in the daemon's environment, not this shell's), and
//! says whether it arrived or why not.

use anyhow::Result;
use clap::{Args, Subcommand};
use std::process::ExitCode;

use crate::state::DataDirArgs;

/// Arguments of `toolgate channels`.
#[derive(Debug, Args)]
pub(crate) struct ChannelsArgs {
    #[command(subcommand)]
    command: ChannelsCommand,
}

/// What `toolgate channels` does.
#[derive(Debug, Subcommand)]
enum ChannelsCommand {
    /// Send a test message through a routing target (`[[approvals.routing.target]]`
    /// `name`): the daemon sends it as it would an approval request.
    Test {
        /// The target's `name` in the policy.
        name: String,
        /// The daemon's address.
        #[arg(long, env = "TOOLGATE_URL", default_value = "http://127.0.0.1:7878")]
        url: String,
        /// An operator token. Default: TOOLGATE_OPERATOR_TOKEN, else
        /// operator.token in the data dir.
        #[arg(long, env = "TOOLGATE_APPROVER_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
}

/// Runs `toolgate channels`: exit 0 when the message was sent, 1 when the
/// daemon could not send it (the reason on stderr), 2 when it could not be
/// asked.
pub(crate) fn run(args: ChannelsArgs, data: &DataDirArgs) -> ExitCode {
    let ChannelsCommand::Test { name, url, token } = args.command;
    match test(&name, &url, token.as_deref(), data) {
        Ok(to) => {
            println!("sent a test message through {name} ({to}): check that it arrived");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "toolgate channels test: {}",
                format!("{e:#}").replace('\n', " ")
            );
            if e.is::<crate::daemon_post::Refused>() {
                ExitCode::from(1)
            } else {
                ExitCode::from(2)
            }
        }
    }
}

fn test(name: &str, url: &str, token: Option<&str>, data: &DataDirArgs) -> Result<String> {
    let base = crate::daemon_post::base_url(url)?;
    let token = crate::daemon_token::token(
        token,
        crate::daemon_token::Shared::Operator,
        data,
        "pass --token (an operator's, from `toolgate operators add NAME`)",
    )?;
    let path = format!("/v1/channels/{}/test", percent_path(name));
    let answer = crate::daemon_post::post(base, &path, &token)?;
    let kind = answer["kind"].as_str().unwrap_or("?");
    let to = answer["to"].as_str().unwrap_or("?");
    Ok(format!("{kind} {to}"))
}

/// A target name as one path segment: anything but unreserved characters
/// percent-encoded, so a name cannot reach another endpoint.
fn percent_path(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::percent_path;

    #[test]
    fn a_target_name_stays_one_path_segment() {
        assert_eq!(percent_path("ops-slack"), "ops-slack");
        assert_eq!(percent_path("../approvals"), "..%2Fapprovals");
        assert_eq!(percent_path("a b?c"), "a%20b%3Fc");
    }
}
