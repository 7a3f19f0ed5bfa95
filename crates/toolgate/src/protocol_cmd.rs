//! `toolgate protocol`: the rules text for the agent's prompt (a scope
//! profile's protocol layer), the same text the daemon serves at `/v1/protocol`.

use crate::check::load_engine;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `toolgate protocol`.
#[derive(Debug, Args)]
pub(crate) struct ProtocolArgs {
    /// Policy file (default: the built-in policy).
    #[arg(long, value_name = "FILE", env = "TOOLGATE_POLICY")]
    policy: Option<PathBuf>,
}

/// Prints the protocol text; exit 2 when the policy cannot be loaded.
pub(crate) fn run(args: ProtocolArgs) -> ExitCode {
    match load_engine(args.policy.as_deref()) {
        Ok(engine) => {
            let text = toolgate_core::protocol_text(engine.policy());
            // A closed pipe (`| head`) is not an error.
            let _ = std::io::stdout().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolgate protocol: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
