//! `toolgate`: the command line. Thin: parsing arguments, reading input and
//! printing output; every decision is made by `toolgate-core`.

mod check;
mod policy_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// toolgate: the last gate between an AI agent and its tools.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decide tool calls: one ToolCall JSON on stdin, one Decision JSON on stdout.
    Check(check::CheckArgs),
    /// Validate and test policy files.
    Policy {
        #[command(subcommand)]
        command: policy_cmd::PolicyCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Policy { command } => policy_cmd::run(command),
    }
}
