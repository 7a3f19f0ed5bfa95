//! `toolgate mcp-proxy [--name N] -- CMD ARGS…`: a stdio MCP proxy. It
//! starts the server CMD, relays newline-delimited JSON-RPC between its own
//! stdin/stdout (the client) and the server, and judges every `tools/call`
//! first (`toolgate_core::hooks::mcp`). Everything else passes unchanged.
//!
//! Why not rmcp's service layer: it terminates the protocol on each side,
//! so a proxy built on it forwards only the methods and fields the SDK
//! version knows. A relay that parses each message, judges the one method
//! that runs tools and passes the rest byte for byte keeps working across
//! protocol versions and server extensions.

mod judge;
mod lines;

use crate::decider::DeciderArgs;
use crate::state::DataDirArgs;
use anyhow::{Context, Result};
use clap::Args;
use judge::Proxy;
use lines::LineReader;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use toolgate_core::hooks::mcp::{self, McpSession};

/// Longest JSON-RPC message read from the client. Every one is parsed (and
/// a tool call judged), which costs many times its size in memory, so this
/// is lower than what the server may send.
const MAX_CLIENT_MESSAGE: usize = 16 << 20;
/// Longest message relayed from the server (not parsed; MCP results carry
/// whole files).
const MAX_MESSAGE: usize = 64 << 20;
/// How long the server gets to exit after its stdin closes.
const SERVER_EXIT_GRACE: Duration = Duration::from_secs(5);

/// Arguments of `toolgate mcp-proxy`.
#[derive(Debug, Args)]
pub(crate) struct McpProxyArgs {
    /// The server's name in judged tool names (`mcp__<NAME>__<tool>`);
    /// default: the command's file name.
    #[arg(long)]
    name: Option<String>,
    /// How long to hold an escalated call for an operator's approval before
    /// answering it with an error (0s: answer at once).
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    wait: Duration,
    /// Most escalated calls held at once; more are answered at once.
    #[arg(long, default_value_t = 32)]
    max_waiting: usize,
    #[command(flatten)]
    decide: DeciderArgs,
    /// The session recorded with every call; default: one per proxy process.
    #[arg(long, env = "TOOLGATE_SESSION")]
    session: Option<String>,
    /// The MCP server to start, after `--`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    command: Vec<OsString>,
}

/// Runs the proxy until the client or the server goes away; exits with the
/// server's status.
pub(crate) fn run(args: McpProxyArgs, data: &DataDirArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toolgate mcp-proxy: cannot start: {e}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(async {
        match proxy(args, data).await {
            Ok(code) => code,
            Err(e) => {
                eprintln!("toolgate mcp-proxy: {e:#}");
                2
            }
        }
    });
    // Held escalations may sit in blocking threads; do not wait for them.
    runtime.shutdown_timeout(Duration::from_millis(100));
    ExitCode::from(code)
}

async fn proxy(args: McpProxyArgs, data: &DataDirArgs) -> Result<u8> {
    let decider = args.decide.decider(data)?;
    let program = &args.command[0];
    let server = mcp::server_name(&args.name.clone().unwrap_or_else(|| {
        let stem = std::path::Path::new(program)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        eprintln!(
            "toolgate mcp-proxy: no --name: judging this server's tools as mcp__{}__<tool>; \
             pass --name (the name your policy rules use) so launchers like npx or uvx do not \
             all share one",
            mcp::server_name(&stem)
        );
        stem
    }));
    let session = McpSession {
        session: Some(
            args.session
                .clone()
                .unwrap_or_else(|| format!("mcp-proxy:{server}:{}", std::process::id())),
        ),
        server,
        agent: None,
        cwd: std::env::current_dir()
            .ok()
            .map(|p| p.to_string_lossy().into_owned()),
    };

    let mut child = tokio::process::Command::new(program)
        .args(&args.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        // The server is what toolgate guards against: it gets no token.
        .env_remove("TOOLGATE_AGENT_TOKEN")
        .env_remove("TOOLGATE_OPERATOR_TOKEN")
        .env_remove("TOOLGATE_URL")
        .env_remove("TOOLGATE_SESSION")
        .kill_on_drop(true)
        .spawn()
        .with_context(|| {
            format!(
                "cannot start the MCP server {:?}: check the command after `--`",
                program
            )
        })?;
    let mut server_in = child.stdin.take().context("no stdin pipe to the server")?;
    let server_out = child
        .stdout
        .take()
        .context("no stdout pipe from the server")?;

    let (to_client, mut client_rx) = mpsc::channel::<Vec<u8>>(256);
    let (to_server, mut server_rx) = mpsc::channel::<Vec<u8>>(256);

    let client_writer = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(line) = client_rx.recv().await {
            if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
    });
    let server_writer = tokio::spawn(async move {
        while let Some(line) = server_rx.recv().await {
            if server_in.write_all(&line).await.is_err() || server_in.flush().await.is_err() {
                break;
            }
        }
        // Dropping the pipe tells the server the client is gone.
        drop(server_in);
    });
    let server_to_client = to_client.clone();
    let mut server_reader = tokio::spawn(async move {
        let mut lines = LineReader::new(server_out, MAX_MESSAGE);
        loop {
            match lines.next().await {
                Ok(Some(Ok(mut line))) => {
                    line.push(b'\n');
                    if server_to_client.send(line).await.is_err() {
                        break;
                    }
                }
                Ok(Some(Err(len))) => eprintln!(
                    "toolgate mcp-proxy: dropped a {len}-byte message from the server (over {} MiB)",
                    MAX_MESSAGE >> 20
                ),
                Ok(None) | Err(_) => break,
            }
        }
    });

    let proxy = Arc::new(Proxy::new(
        decider,
        session,
        args.wait,
        args.max_waiting,
        to_client.clone(),
        to_server,
    ));
    let client_reader =
        {
            let proxy = proxy.clone();
            tokio::spawn(async move {
                let mut lines = LineReader::new(tokio::io::stdin(), MAX_CLIENT_MESSAGE);
                loop {
                    match lines.next().await {
                        Ok(Some(Ok(line))) => proxy.from_client(&line).await,
                        Ok(Some(Err(len))) => proxy
                            .reply_error(
                                Value::Null,
                                -32600,
                                &format!(
                                    "toolgate mcp-proxy: a {len}-byte message is over the {} MiB \
                                     limit; it was not forwarded",
                                    MAX_CLIENT_MESSAGE >> 20
                                ),
                            )
                            .await,
                        Ok(None) | Err(_) => break,
                    }
                }
            })
        };

    tokio::select! {
        _ = client_reader => {
            // The client is gone: calls still held are moot.
            proxy.cancel_all();
        }
        _ = &mut server_reader => {
            eprintln!("toolgate mcp-proxy: the MCP server closed its output");
        }
    }
    // Closing the server's input lets it finish and exit.
    drop(proxy);
    drop(to_client);
    let status = match tokio::time::timeout(SERVER_EXIT_GRACE, child.wait()).await {
        Ok(Ok(status)) => status.code().unwrap_or(1),
        Ok(Err(_)) => 1,
        Err(_) => {
            eprintln!(
                "toolgate mcp-proxy: the MCP server did not exit within {} s of its input closing; killing it",
                SERVER_EXIT_GRACE.as_secs()
            );
            let _ = child.kill().await;
            1
        }
    };
    server_writer.abort();
    // Let the server's last words reach the client.
    let _ = tokio::time::timeout(Duration::from_secs(1), server_reader).await;
    let _ = tokio::time::timeout(Duration::from_secs(1), client_writer).await;
    Ok(u8::try_from(status).unwrap_or(1))
}

/// One JSON-RPC message as a line.
fn line_of(v: &Value) -> Vec<u8> {
    let mut s = serde_json::to_vec(v).unwrap_or_default();
    s.push(b'\n');
    s
}

/// A JSON-RPC error answer.
fn error_message(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
