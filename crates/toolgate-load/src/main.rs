//! `toolgate-load`: drives `POST /v1/check` of a toolgate daemon at a fixed
//! rate and prints the achieved rate, errors, decisions and latency
//! percentiles.
//!
//! Open loop: request `i` is due at `start + i / rate` whatever the daemon
//! does, and its latency runs from that intended time to the end of the
//! answer. A stall therefore shows up in every request it delayed, not only
//! in the one that was in flight (no coordinated omission).

mod cpu;
mod direct;
mod http;
mod mix;
mod run;
mod schedule;
mod stats;
mod tally;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::http::Target;
use crate::mix::Mix;
use crate::run::{ClientKind, Plan, Report};
use crate::schedule::Schedule;

/// Load generator for the toolgate daemon: sends POST /v1/check at a fixed
/// rate over keep-alive connections and reports latency from each request's
/// intended send time.
#[derive(Parser, Debug)]
#[command(name = "toolgate-load", version, args_override_self = true)]
struct Args {
    /// The daemon's base URL.
    #[arg(long, default_value = "http://127.0.0.1:7878")]
    url: String,
    /// The agent token (from <data dir>/agent.token).
    #[arg(long, env = "TOOLGATE_AGENT_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Requests per second (open loop).
    #[arg(long, default_value_t = 1000.0)]
    rate: f64,
    /// How long to measure (humantime: 10s, 1m).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Load sent before measuring, not recorded.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// Keep-alive connections; each carries one request at a time.
    #[arg(long, default_value_t = 32)]
    connections: usize,
    /// What to send: `typical`, `escalate`, or a JSONL file of ToolCalls.
    #[arg(long, default_value = "typical")]
    mix: String,
    /// A request with no answer after this long counts as a timeout.
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    timeout: Duration,
    /// The HTTP client: `raw` (minimal HTTP/1.1, least overhead) or
    /// `reqwest` (to cross-check).
    #[arg(long, value_enum, default_value_t = ClientKind::Raw)]
    client: ClientKind,
    /// Runtime threads reading the answers (the pacer has its own). One
    /// keeps up with 10,000 req/s on a 2-core VM and leaves the rest of the
    /// CPU to the daemon.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The daemon's pid, to report its CPU use next to the generator's.
    #[arg(long)]
    daemon_pid: Option<u32>,
    /// Print one JSON object instead of the text report.
    #[arg(long, conflicts_with = "row")]
    json: bool,
    /// Print the figures on one line, for a table (see --row-header).
    #[arg(long)]
    row: bool,
    /// Print the column titles of --row and exit.
    #[arg(long)]
    row_header: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match real_main(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("toolgate-load: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main(args: Args) -> anyhow::Result<ExitCode> {
    if args.row_header {
        println!("{}", Report::row_header());
        return Ok(ExitCode::SUCCESS);
    }
    let token = args.token.as_deref().map(str::trim).unwrap_or_default();
    anyhow::ensure!(
        !token.is_empty(),
        "no token: pass --token or set TOOLGATE_AGENT_TOKEN to the agent token \
         (<data dir>/agent.token)"
    );
    anyhow::ensure!(args.connections >= 1, "--connections must be at least 1");
    anyhow::ensure!(args.threads >= 1, "--threads must be at least 1");
    anyhow::ensure!(
        !args.duration.is_zero(),
        "--duration must be longer than zero"
    );
    let schedule = Schedule::new(args.rate)?;
    let mix = Mix::load(&args.mix)?;
    let runtime = if args.threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(args.threads)
            .enable_all()
            .build()?
    };
    runtime.block_on(async {
        let plan = Plan {
            target: Target::resolve(&args.url, token).await?,
            schedule,
            warmup: args.warmup,
            duration: args.duration,
            connections: args.connections,
            timeout: args.timeout,
            mix,
            client: args.client,
            daemon_pid: args.daemon_pid,
        };
        let report = Report::new(&plan, run::run(&plan).await?);
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
        } else if args.row {
            println!("{}", report.row());
        } else {
            print!("{}", report.text());
        }
        // Exit 1 when no measured request succeeded: the figures mean nothing.
        Ok(if report.ok == 0 {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        })
    })
}
