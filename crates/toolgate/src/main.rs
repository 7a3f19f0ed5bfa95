//! `toolgate`: the command line. Thin: parsing arguments, reading input and
//! printing output; decisions are made by `toolgate-core`, state is kept by
//! `toolgate-store`.

mod approvals_cmd;
mod approvals_remote;
mod audit_cmd;
mod bypass_cmd;
mod channels_cmd;
mod check;
mod codex_trust_cmd;
mod daemon_lock;
mod daemon_post;
mod daemon_token;
mod deadline;
mod decider;
mod doctor_cmd;
mod hardening;
mod hook_cmd;
mod install_cmd;
mod knowledge_cmd;
mod mcp_proxy;
mod memory_cmd;
mod operators_cmd;
mod output;
mod peer;
mod policy_cmd;
mod protocol_cmd;
mod serve_cmd;
mod settings_file;
mod setup_cmd;
mod state;
mod store_cmd;
mod ui_cmd;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

/// toolgate: the last gate between an AI agent and its tools.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    data: state::DataDirArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decide tool calls: `toolgate check -- CMD ARGS`, or one ToolCall JSON on
    /// stdin and one Decision JSON on stdout.
    Check(check::CheckArgs),
    /// Answer an agent runtime's pre-tool hook (claude-code, codex, gemini, cursor).
    Hook(hook_cmd::HookArgs),
    /// Register toolgate as an agent runtime's hook (claude-code, codex, gemini, cursor).
    Install(install_cmd::InstallArgs),
    /// Remove toolgate's hook from an agent runtime's settings (everything
    /// else stays; the file before is kept as a backup).
    Uninstall(install_cmd::UninstallArgs),
    /// Report hook set-ups a runtime would not run fail-closed, and how to fix each.
    Doctor(doctor_cmd::DoctorArgs),
    /// Sit between an MCP client and a stdio MCP server, judging every tool call.
    McpProxy(mcp_proxy::McpProxyArgs),
    /// Run the daemon: HTTP API, live control UI, metrics.
    Serve(serve_cmd::ServeArgs),
    /// Print a one-time link that signs a browser into the daemon's control UI.
    Ui(ui_cmd::UiArgs),
    /// Approval channels: `toolgate channels test NAME` sends a test message
    /// through a routing target of the running daemon.
    Channels(channels_cmd::ChannelsArgs),
    /// List, show, approve and deny pending approvals.
    Approvals {
        #[command(subcommand)]
        command: approvals_cmd::ApprovalsCommand,
        /// A running daemon to ask instead of the local data directory
        /// (`http://host:7878`); the token is `--token` or
        /// TOOLGATE_APPROVER_TOKEN (an operator's own, or the shared one),
        /// else TOOLGATE_OPERATOR_TOKEN, else the data directory's
        /// operator.token.
        #[arg(long, global = true, value_name = "URL")]
        url: Option<String>,
    },
    /// Add, list, rotate and remove operators: the people who may vote,
    /// each with a token of their own.
    Operators {
        #[command(subcommand)]
        command: operators_cmd::OperatorsCommand,
    },
    /// Emergency bypass: lift layers for a while, or approve one call at
    /// once, with a reason (audited).
    Bypass {
        #[command(subcommand)]
        command: bypass_cmd::BypassCommand,
    },
    /// Verify, tail and export the hash-chained audit log.
    Audit {
        #[command(subcommand)]
        command: audit_cmd::AuditCommand,
    },
    /// Acknowledge knowledge shown to an agent, see what applies to a call,
    /// check the knowledge layer's set-up.
    Knowledge {
        #[command(subcommand)]
        command: knowledge_cmd::KnowledgeCommand,
    },
    /// Add, import, export, search, list and remove memories: the lessons
    /// shown to agents before risky calls.
    Memory {
        #[command(subcommand)]
        command: memory_cmd::MemoryCommand,
    },
    /// Print the rules text for the agent's prompt (what /v1/protocol serves).
    Protocol(protocol_cmd::ProtocolArgs),
    /// Validate and test policy files.
    Policy {
        #[command(subcommand)]
        command: policy_cmd::PolicyCommand,
    },
    /// Set toolgate up as a service of its own user, with hooks the agent's
    /// user cannot change: `sudo toolgate setup separated --agent-user NAME`.
    Setup {
        #[command(subcommand)]
        command: setup_cmd::SetupCommand,
    },
    /// Move the whole state to another store: `toolgate store migrate
    /// --from sqlite:DIR --to postgres://…`.
    Store {
        #[command(subcommand)]
        command: store_cmd::StoreCommand,
    },
}

// `toolgate hook …` and `toolgate check …` are parsed on their own: each
// is often a process per tool call, and building the whole command line's
// parser (every subcommand's options) is a cost each call would pay for
// nothing.
/// Answer an agent runtime's pre-tool hook (claude-code, codex, gemini, cursor).
#[derive(Debug, Parser)]
#[command(name = "toolgate hook", version)]
struct HookCli {
    #[command(flatten)]
    data: state::DataDirArgs,
    #[command(flatten)]
    hook: hook_cmd::HookArgs,
}

/// Decide tool calls: one ToolCall JSON on stdin, one Decision JSON on stdout.
#[derive(Debug, Parser)]
#[command(name = "toolgate check", version)]
struct CheckCli {
    #[command(flatten)]
    data: state::DataDirArgs,
    #[command(flatten)]
    check: check::CheckArgs,
}

/// `toolgate <sub> ARGS…` as the argv of a parser named `toolgate <sub>`.
fn sub_args(sub: &str) -> impl Iterator<Item = std::ffi::OsString> {
    std::iter::once(format!("toolgate {sub}").into()).chain(std::env::args_os().skip(2))
}

fn main() -> ExitCode {
    match std::env::args_os()
        .nth(1)
        .as_deref()
        .and_then(|a| a.to_str())
    {
        Some("hook") => {
            let matches = HookCli::command().get_matches_from(sub_args("hook"));
            let mut cli = HookCli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
            cli.data.pin_to_command_line(&matches);
            return hook_cmd::run(cli.hook, &cli.data);
        }
        Some("check") => {
            let cli = CheckCli::command()
                .try_get_matches_from(sub_args("check"))
                .and_then(|m| CheckCli::from_arg_matches(&m))
                .unwrap_or_else(|e| hint_command_after_dashes(e).exit());
            return check::run(cli.check, &cli.data);
        }
        _ => {}
    }
    let matches = Cli::command()
        .try_get_matches()
        .unwrap_or_else(|e| hint_command_after_dashes(e).exit());
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    cli.data.pin_to_command_line(&matches);
    if prints_for_a_reader(&cli.command) {
        exit_quietly_when_the_reader_leaves();
    }
    match cli.command {
        Command::Check(args) => check::run(args, &cli.data),
        Command::Serve(args) => {
            // Held until the daemon has stopped (the kernel drops it if the
            // process dies first).
            let _lock = match one_daemon_per_data_dir(&cli.data) {
                Ok(lock) => lock,
                Err(e) => {
                    eprintln!("toolgate serve: {}", format!("{e:#}").replace('\n', " "));
                    return ExitCode::from(2);
                }
            };
            serve_cmd::run(args, &cli.data)
        }
        Command::Ui(args) => ui_cmd::run(args, &cli.data),
        Command::Channels(args) => channels_cmd::run(args, &cli.data),
        Command::Hook(args) => hook_cmd::run(args, &cli.data),
        Command::Install(args) => install_cmd::run(args, &cli.data),
        Command::Doctor(args) => doctor_cmd::run(args),
        Command::McpProxy(args) => mcp_proxy::run(args, &cli.data),
        Command::Uninstall(args) => install_cmd::run_uninstall(args),
        Command::Approvals { command, url } => match url {
            Some(url) => approvals_remote::run(command, &url, &cli.data),
            None => approvals_cmd::run(command, &cli.data),
        },
        Command::Operators { command } => operators_cmd::run(command, &cli.data),
        Command::Bypass { command } => bypass_cmd::run(command, &cli.data),
        Command::Audit { command } => audit_cmd::run(command, &cli.data),
        Command::Knowledge { command } => knowledge_cmd::run(command, &cli.data),
        Command::Memory { command } => memory_cmd::run(command, &cli.data),
        Command::Protocol(args) => protocol_cmd::run(args),
        Command::Policy { command } => policy_cmd::run(command),
        Command::Store { command } => store_cmd::run(command),
        Command::Setup { command } => setup_cmd::run(command),
    }
}

/// Creates the data directory if need be (private, as `serve` does) and
/// takes its daemon lock: a second daemon on one data directory is refused.
fn one_daemon_per_data_dir(data: &state::DataDirArgs) -> anyhow::Result<daemon_lock::DaemonLock> {
    let (dir, _) = data.resolve();
    state::ensure_private_dir(&dir)?;
    daemon_lock::acquire(&dir)
}

/// `toolgate check git push origin main`, without the `--`: clap finds an
/// unexpected `git`; the error then shows the same command line with the
/// `--` where it belongs (the words after it cannot be taken as the
/// command unasked: `toolgate check rm -rf x` would read `-rf` as options).
fn hint_command_after_dashes(mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(stray)) = e.get(ContextKind::InvalidArg).cloned() else {
        return e;
    };
    if stray.starts_with('-') {
        return e;
    }
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let Some(check) = args
        .iter()
        .skip(1)
        .position(|a| a == "check")
        .map(|i| i + 1)
    else {
        return e;
    };
    let Some(at) = args
        .iter()
        .skip(check + 1)
        .position(|a| *a == stray)
        .map(|i| i + check + 1)
    else {
        return e;
    };
    let quoted = |words: &[String]| {
        words
            .iter()
            .map(|w| toolgate_core::shell::quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let tip = format!(
        "a command to judge goes after `--`: toolgate {} -- {}",
        quoted(&args[1..at]),
        quoted(&args[at..])
    );
    e.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
    e
}

/// Commands whose output a person pipes into `head`, `less` or `grep`:
/// when that reader goes away they should stop, as other command-line tools
/// do, not panic on the closed pipe. Never a hook, the daemon or the MCP
/// proxy: those answer on their own terms whatever their reader does.
fn prints_for_a_reader(command: &Command) -> bool {
    matches!(
        command,
        Command::Approvals { .. }
            | Command::Operators { .. }
            | Command::Bypass { .. }
            | Command::Audit { .. }
            | Command::Knowledge { .. }
            | Command::Memory { .. }
            | Command::Protocol(_)
            | Command::Policy { .. }
            | Command::Doctor(_)
    )
}

/// Restores SIGPIPE's default action (Rust ignores it, so a write to a
/// closed pipe is an error that `println!` panics on): the process ends
/// quietly when its reader has gone.
fn exit_quietly_when_the_reader_leaves() {
    // SAFETY: setting a signal's disposition to its default is always sound;
    // no handler of ours is involved.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
