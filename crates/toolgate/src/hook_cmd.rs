//! `toolgate hook <runtime>`: an agent runtime's pre-tool hook. Reads the
//! runtime's payload on stdin, decides (through the daemon when
//! `TOOLGATE_URL` is set, else in this process), and prints the runtime's
//! answer. It always exits 0 with a JSON answer, because every runtime reads
//! the JSON only then; whatever goes wrong is answered with a denial that
//! says what happened — never a silent allow.

use crate::check::{base_env, load_engine};
use crate::state::DataDirArgs;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::hooks::Runtime;
use toolgate_core::model::{Decision, ToolCall};
use toolgate_store::{Gate, SystemClock};

/// Largest payload read from stdin.
const MAX_INPUT: u64 = 1 << 20;
/// How long to wait for the daemon; under the runtimes' own hook timeouts
/// (10 s in the install snippet), so toolgate answers before they give up.
const DAEMON_TIMEOUT: Duration = Duration::from_secs(8);

/// Arguments of `toolgate hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The runtime whose protocol to speak: claude-code, codex, gemini or cursor.
    runtime: String,
    /// Policy file for in-process decisions (ignored when a daemon decides).
    #[arg(long, env = "TOOLGATE_POLICY")]
    policy: Option<PathBuf>,
    /// The daemon to ask (e.g. http://127.0.0.1:7878); without it the hook
    /// decides in this process.
    #[arg(long, env = "TOOLGATE_URL")]
    url: Option<String>,
    /// The daemon's agent token; default: `agent.token` in the data dir.
    #[arg(long, env = "TOOLGATE_AGENT_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

pub fn run(args: HookArgs, data: &DataDirArgs) -> ExitCode {
    let Some(runtime) = Runtime::parse(&args.runtime) else {
        eprintln!(
            "toolgate hook: unknown runtime {:?}: use claude-code, codex, gemini or cursor",
            args.runtime
        );
        return ExitCode::from(2);
    };
    let answer = match answer(runtime, &args, data) {
        Ok(v) => v,
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("toolgate hook: {msg}");
            runtime.reply_error(&msg)
        }
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{answer}")
        .and_then(|()| out.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

fn answer(runtime: Runtime, args: &HookArgs, data: &DataDirArgs) -> Result<Value> {
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut input)
        .context("cannot read the hook payload on stdin")?;
    if input.len() as u64 > MAX_INPUT {
        bail!("the hook payload is over {} KiB", MAX_INPUT / 1024);
    }
    let payload = toolgate_core::input::parse_json(&input).map_err(|e| anyhow!("{e}"))?;
    let Some(call) = runtime.to_call(&payload).map_err(|e| anyhow!("{e}"))? else {
        return Ok(runtime.no_opinion());
    };
    let decision = match args.url.as_deref().filter(|u| !u.trim().is_empty()) {
        Some(url) => ask_daemon(url, &token(args, data)?, &call)?,
        None => decide_here(args, data, &call)?,
    };
    Ok(runtime.reply(&decision))
}

fn token(args: &HookArgs, data: &DataDirArgs) -> Result<String> {
    if let Some(t) = args.token.as_deref().filter(|t| !t.trim().is_empty()) {
        return Ok(t.trim().to_string());
    }
    let (dir, _) = data.resolve();
    let path = dir.join("agent.token");
    let t = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "TOOLGATE_URL is set but there is no agent token: set TOOLGATE_AGENT_TOKEN or make {} readable",
            path.display()
        )
    })?;
    Ok(t.trim().to_string())
}

/// Decides in this process, recording in the data dir like `toolgate check`.
fn decide_here(args: &HookArgs, data: &DataDirArgs, call: &ToolCall) -> Result<Decision> {
    let engine = load_engine(args.policy.as_deref())?;
    let store = data.open()?;
    let gate = Gate::new(Arc::new(engine), store, Arc::new(SystemClock), base_env());
    Ok(gate.check(call)?)
}

/// Asks the daemon over plain HTTP/1.1 (loopback; no TLS, no async runtime:
/// a hook is a short-lived process and starts faster without them).
fn ask_daemon(url: &str, token: &str, call: &ToolCall) -> Result<Decision> {
    let rest = url.trim().trim_end_matches('/');
    let hostport = rest.strip_prefix("http://").ok_or_else(|| {
        anyhow!("TOOLGATE_URL must be http://HOST:PORT (got {url:?}); put a TLS proxy on the daemon side")
    })?;
    let addr = hostport
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {hostport}"))?
        .next()
        .ok_or_else(|| anyhow!("{hostport} resolves to no address"))?;
    let unreachable = |e: std::io::Error| {
        anyhow!("the toolgate daemon at {url} did not answer ({e}); the call was not allowed")
    };
    let mut s = TcpStream::connect_timeout(&addr, DAEMON_TIMEOUT).map_err(unreachable)?;
    s.set_read_timeout(Some(DAEMON_TIMEOUT))
        .map_err(unreachable)?;
    s.set_write_timeout(Some(DAEMON_TIMEOUT))
        .map_err(unreachable)?;
    let body = serde_json::to_string(call)?;
    let request = format!(
        "POST /v1/check HTTP/1.1\r\nHost: {hostport}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).map_err(unreachable)?;
    let mut raw = Vec::new();
    s.take(4 << 20).read_to_end(&mut raw).map_err(unreachable)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| anyhow!("the daemon at {url} sent a malformed answer"))?;
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("the daemon at {url} sent a malformed status line"))?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)?
    } else {
        body.to_string()
    };
    if status != 200 {
        let why = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| body.chars().take(200).collect());
        bail!("the toolgate daemon answered {status}: {why}");
    }
    serde_json::from_str(&body).with_context(|| format!("the daemon at {url} sent no Decision"))
}

/// The body of a chunked HTTP/1.1 answer.
fn dechunk(mut body: &str) -> Result<String> {
    let mut out = String::new();
    loop {
        let (size, rest) = body
            .split_once("\r\n")
            .ok_or_else(|| anyhow!("malformed chunked answer"))?;
        let n = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| anyhow!("malformed chunk size {size:?}"))?;
        if n == 0 {
            return Ok(out);
        }
        let chunk = rest
            .get(..n)
            .ok_or_else(|| anyhow!("truncated chunked answer"))?;
        out.push_str(chunk);
        body = rest.get(n + 2..).unwrap_or("");
    }
}

#[cfg(test)]
mod tests {
    use super::dechunk;

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n").unwrap(),
            "hello world"
        );
        assert!(dechunk("zz\r\n").is_err());
        assert!(dechunk("9\r\nshort").is_err());
    }
}
