//! Who decides for an integration (`toolgate hook`, `toolgate mcp-proxy`):
//! the daemon when `TOOLGATE_URL` is set, else this process with the policy
//! and the data dir. Both answer the same Decisions; both can hold an
//! escalation until an operator resolves it.

use crate::check::{base_env, load_engine};
use crate::state::DataDirArgs;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use toolgate_core::{ApprovalId, Decision, ToolCall, Verdict};
use toolgate_gate::{Clock, Gate, GiveUp, Look, Next, SystemClock, Waiter};
use toolgate_store::Store;

/// How long to wait for the daemon's answer to a plain check.
pub(crate) const DAEMON_TIMEOUT: Duration = Duration::from_secs(8);
/// How often an in-process wait looks at the approval.
const POLL_EVERY: Duration = Duration::from_millis(200);
/// The daemon refuses longer waits.
const MAX_WAIT: Duration = Duration::from_secs(600);

/// Where decisions come from: the options every integration command shares.
#[derive(Debug, Clone, Args)]
pub(crate) struct DeciderArgs {
    /// Policy file for in-process decisions (ignored when a daemon decides).
    #[arg(long, env = "TOOLGATE_POLICY")]
    pub policy: Option<PathBuf>,
    /// The daemon to ask (e.g. http://127.0.0.1:7878); without it this
    /// process decides.
    #[arg(long, env = "TOOLGATE_URL")]
    pub url: Option<String>,
    /// The daemon's agent token; default: `agent.token` in the data dir.
    #[arg(long, env = "TOOLGATE_AGENT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

impl DeciderArgs {
    /// The decider these options describe (see [`Decider::new`]).
    pub(crate) fn decider(&self, data: &DataDirArgs) -> Result<Decider> {
        Decider::new(
            self.policy.as_deref(),
            self.url.as_deref(),
            self.token.as_deref(),
            data,
        )
    }
}

/// Decides tool calls, here or through the daemon.
pub(crate) enum Decider {
    /// In this process, recording in the data dir like `toolgate check`.
    Local(Gate),
    /// `toolgate serve` at `url`, with an agent token.
    Daemon {
        /// `http://HOST:PORT`.
        url: String,
        /// The agent token.
        token: String,
    },
}

impl Decider {
    /// Readies an in-process decider's store for the process to exit
    /// without closing it ([`toolgate_store::Store::prepare_exit`]).
    pub(crate) fn prepare_exit(&self) {
        if let Decider::Local(gate) = self {
            gate.store().prepare_exit();
        }
    }
    /// The daemon when `url` is set (token from `token` or `agent.token`
    /// in the data dir), else an in-process gate with `policy` (or the
    /// built-in default) and the data dir's store.
    pub(crate) fn new(
        policy: Option<&Path>,
        url: Option<&str>,
        token: Option<&str>,
        data: &DataDirArgs,
    ) -> Result<Decider> {
        match url.map(str::trim).filter(|u| !u.is_empty()) {
            Some(url) => {
                let url = url.trim_end_matches('/').to_string();
                if !url.starts_with("http://") {
                    bail!(
                        "TOOLGATE_URL must be http://HOST:PORT (got {url:?}); put a TLS proxy on the daemon side"
                    );
                }
                Ok(Decider::Daemon {
                    token: agent_token(token, data)?,
                    url,
                })
            }
            None => {
                let engine = load_engine(policy)?;
                let store = data.open()?;
                // With the policy's model approver, as the daemon has it.
                Ok(Decider::Local(toolgate_server::model_stage::attach(
                    Gate::new(Arc::new(engine), store, Arc::new(SystemClock), base_env()),
                )))
            }
        }
    }

    /// Decides and records one call. The call carries the agent's home and
    /// user (this process's `$HOME` and `$USER`, as the runtime started it)
    /// unless it names them: a daemon running as another user then still
    /// judges `~` and home rules as the agent's.
    pub(crate) fn check(&self, call: &ToolCall) -> Result<Decision> {
        let call = &with_agent_env(call);
        match self {
            Decider::Local(gate) => Ok(gate.check(call)?),
            Decider::Daemon { url, token } => post_check(url, token, call, None),
        }
    }

    /// Holds `escalated` (this call's escalation) until an operator resolves
    /// it, `wait` runs out or `cancel` is set: approved → the re-check
    /// consumes it (`allow`); denied → `block`; time out → a recorded
    /// `block` saying so. A set `cancel` returns the escalation as it was.
    pub(crate) fn wait(
        &self,
        call: &ToolCall,
        escalated: Decision,
        wait: Duration,
        cancel: &AtomicBool,
    ) -> Result<Decision> {
        let call = &with_agent_env(call);
        let wait = wait.min(MAX_WAIT);
        if escalated.decision != Verdict::Escalate || wait.is_zero() {
            return Ok(escalated);
        }
        match self {
            Decider::Daemon { url, token } => {
                match post_check(url, token, call, Some((wait, cancel))) {
                    // Closing the connection ends the daemon's wait without using
                    // the approval; the escalation is the answer.
                    Err(_) if cancel.load(Ordering::Relaxed) => Ok(escalated),
                    other => other,
                }
            }
            Decider::Local(gate) => wait_here(gate, call, escalated, wait, cancel),
        }
    }
}

/// `call` with `home` and `user` filled from this process's environment
/// where it names none (an absolute `$HOME`; `$USER`, else `$LOGNAME`).
pub(crate) fn with_agent_env(call: &ToolCall) -> ToolCall {
    let mut call = call.clone();
    if call.home.is_none() {
        call.home = std::env::var("HOME").ok().filter(|h| h.starts_with('/'));
    }
    if call.user.is_none() {
        call.user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .ok()
            .filter(|u| !u.trim().is_empty());
    }
    call
}

/// The in-process wait, following the rules of [`Waiter`]: the store is
/// shared with every other toolgate process on the data dir, so an approval
/// from `toolgate approvals approve` (or a daemon on the same dir) shows up
/// in it; it is polled every [`POLL_EVERY`].
fn wait_here(
    gate: &Gate,
    call: &ToolCall,
    escalated: Decision,
    wait: Duration,
    cancel: &AtomicBool,
) -> Result<Decision> {
    let Some(mut waiter) = Waiter::new(escalated.clone(), wait) else {
        return Ok(escalated);
    };
    let started = Instant::now();
    let deadline = started + wait;
    let until_ms = SystemClock.now_ms().saturating_add(wait.as_millis() as i64);
    let mut mark = WaitMark::new(&**gate.store());
    let why = loop {
        mark.on(&waiter.id(), until_ms);
        if cancel.load(Ordering::Relaxed) {
            return Ok(waiter.escalated().clone());
        }
        if Instant::now() >= deadline {
            break GiveUp::Timeout;
        }
        let approval = gate.store().read_approval(&waiter.id())?;
        match waiter.look(approval.as_ref(), SystemClock.now_ms()) {
            Look::Wait => std::thread::sleep(POLL_EVERY.min(deadline - Instant::now())),
            Look::Gone(why) => break why,
            Look::Recheck => match waiter.rechecked(gate.check(call)?) {
                Next::Answer(d) => return Ok(*d),
                Next::Wait { pause } => std::thread::sleep(pause),
            },
        }
    };
    let (label, block) = waiter.give_up(why);
    let waited = started.elapsed().as_millis() as i64;
    Ok(gate.record_wait_end(call, &waiter.id(), label, waited, block)?)
}

/// The "agent waiting" mark on the approval this process waits on, moved
/// when the waiter moves to another approval and cleared when it stops
/// (however it stops). Best effort: a mark that cannot be written only
/// costs the people asked the hint that someone waits now.
struct WaitMark<'s> {
    store: &'s dyn Store,
    marked: Option<ApprovalId>,
}

impl<'s> WaitMark<'s> {
    fn new(store: &'s dyn Store) -> WaitMark<'s> {
        WaitMark {
            store,
            marked: None,
        }
    }

    fn on(&mut self, id: &ApprovalId, until_ms: i64) {
        if self.marked.as_ref() == Some(id) {
            return;
        }
        self.clear();
        let _ = toolgate_gate::mark_waiting(self.store, id, Some(until_ms));
        self.marked = Some(*id);
    }

    fn clear(&mut self) {
        if let Some(id) = self.marked.take() {
            let _ = toolgate_gate::mark_waiting(self.store, &id, None);
        }
    }
}

impl Drop for WaitMark<'_> {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The approval an escalation waits on.
pub(crate) fn approval_id(d: &Decision) -> Option<ApprovalId> {
    d.approval
        .as_ref()
        .and_then(|a| ApprovalId::parse(&a.id).ok())
}

/// The relayed approval call (`toolgate_approve`), as an agent-side surface
/// (an MCP client's user, a chat owner) sends it. The policy honours it only
/// with `[approvals] relay = true`.
pub(crate) fn relay_call(approval: &str, reason: &str, like: &ToolCall) -> ToolCall {
    let params = json!({"id": approval, "reason": reason});
    ToolCall {
        tool: "toolgate_approve".to_string(),
        params: params.as_object().cloned().unwrap_or_default(),
        call_id: None,
        agent: like.agent.clone(),
        session: like.session.clone(),
        channel: like.channel.clone(),
        cwd: like.cwd.clone(),
        requester: None,
        home: like.home.clone(),
        user: like.user.clone(),
    }
}

fn agent_token(token: Option<&str>, data: &DataDirArgs) -> Result<String> {
    if let Some(t) = token.map(str::trim).filter(|t| !t.is_empty()) {
        return Ok(t.to_string());
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

/// `POST /v1/check[?wait=Ns]` over plain HTTP/1.1 (loopback; no TLS, no
/// async runtime: a hook is a short-lived process and starts faster
/// without them).
fn post_check(
    url: &str,
    token: &str,
    call: &ToolCall,
    wait: Option<(Duration, &AtomicBool)>,
) -> Result<Decision> {
    let (path, timeout, cancel) = match wait {
        Some((w, cancel)) => (
            format!("/v1/check?wait={}s", w.as_secs().max(1)),
            w + DAEMON_TIMEOUT,
            Some(cancel),
        ),
        None => ("/v1/check".to_string(), DAEMON_TIMEOUT, None),
    };
    let body = serde_json::to_string(call)?;
    let (status, body) = http_post(url, &path, token, &body, timeout, cancel)?;
    if status != 200 {
        let why = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| body.chars().take(200).collect());
        bail!("the toolgate daemon answered {status}: {why}");
    }
    serde_json::from_str(&body).with_context(|| format!("the daemon at {url} sent no Decision"))
}

/// How often a long wait for the daemon looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(200);

/// One HTTP/1.1 POST; the status and the body, read strictly by
/// [`AnswerReader`] (any answer it cannot read exactly is an error, so the
/// caller fails closed as for a daemon that is down). The whole answer
/// must come within `timeout`; a set `cancel` drops the connection (the
/// daemon then stops waiting for that call) and fails. The answer is taken
/// as soon as its framing says it is complete, without waiting for the
/// daemon to close the connection.
fn http_post(
    url: &str,
    path: &str,
    token: &str,
    body: &str,
    timeout: Duration,
    cancel: Option<&AtomicBool>,
) -> Result<(u16, String)> {
    let hostport = url
        .strip_prefix("http://")
        .ok_or_else(|| anyhow!("TOOLGATE_URL must be http://HOST:PORT (got {url:?})"))?;
    let addr = hostport
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {hostport}"))?
        .next()
        .ok_or_else(|| anyhow!("{hostport} resolves to no address"))?;
    let unreachable = |e: std::io::Error| {
        anyhow!("the toolgate daemon at {url} did not answer ({e}); the call was not allowed")
    };
    let deadline = Instant::now() + timeout;
    let mut s = TcpStream::connect_timeout(&addr, DAEMON_TIMEOUT).map_err(unreachable)?;
    s.set_read_timeout(Some(if cancel.is_some() {
        CANCEL_POLL
    } else {
        timeout
    }))
    .map_err(unreachable)?;
    s.set_write_timeout(Some(DAEMON_TIMEOUT))
        .map_err(unreachable)?;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {hostport}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).map_err(unreachable)?;
    let malformed = |e: String| anyhow!("the daemon at {url} sent a malformed answer: {e}");
    let mut answer = AnswerReader::default();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match s.read(&mut chunk) {
            Ok(0) => return Err(malformed(answer.ended())),
            Ok(n) => {
                if let Some(done) = answer.push(&chunk[..n]).map_err(malformed)? {
                    return Ok(done);
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    bail!("the wait was cancelled");
                }
                if Instant::now() >= deadline {
                    return Err(unreachable(e));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(unreachable(e)),
        }
        if Instant::now() >= deadline {
            return Err(anyhow!(
                "the toolgate daemon at {url} did not answer within {} s; the call was not allowed",
                timeout.as_secs()
            ));
        }
    }
}

/// The most an answer may take, head and body.
const MAX_ANSWER: usize = 4 << 20;

/// Reads one HTTP/1.1 answer from bytes as they arrive, in pieces of any
/// size. Everything is parsed on bytes; only the finished body is decoded,
/// strictly, as UTF-8, so no piece boundary (even one inside a character)
/// can change what is read. Anything it does not understand is an error,
/// which the caller turns into the daemon-failure answer (fail closed):
/// a status line that is not `HTTP/1.x NNN`, a header line without a name,
/// no `Content-Length` and no chunked encoding (an answer cut short could
/// not be told from a whole one), both, several disagreeing lengths, a
/// transfer coding other than `chunked`, an answer that ends early, over
/// [`MAX_ANSWER`] bytes, or a body that is not UTF-8. The answer ends where
/// its framing says: whatever follows (in the same piece or later) is not
/// part of it and is not read, so where the pieces split never matters.
#[derive(Default)]
struct AnswerReader {
    raw: Vec<u8>,
    head: Option<Head>,
}

/// The parsed head of an answer.
struct Head {
    status: u16,
    /// Where the body starts in the raw bytes.
    body_at: usize,
    framing: Framing,
}

/// How the body's end is known.
enum Framing {
    Length(usize),
    Chunked,
}

impl AnswerReader {
    /// Takes the next bytes; `Some((status, body))` once the answer is
    /// complete.
    fn push(&mut self, bytes: &[u8]) -> Result<Option<(u16, String)>, String> {
        self.raw.extend_from_slice(bytes);
        if self.raw.len() > MAX_ANSWER {
            return Err(format!("over {} MiB", MAX_ANSWER >> 20));
        }
        if self.head.is_none() {
            let Some(end) = find(&self.raw, b"\r\n\r\n") else {
                return Ok(None);
            };
            self.head = Some(parse_head(&self.raw[..end], end + 4)?);
        }
        let Some(head) = &self.head else {
            return Ok(None);
        };
        let rest = &self.raw[head.body_at..];
        let body = match head.framing {
            Framing::Length(n) if rest.len() >= n => rest[..n].to_vec(),
            Framing::Length(_) => return Ok(None),
            Framing::Chunked => match dechunk(rest)? {
                Some(body) => body,
                None => return Ok(None),
            },
        };
        let body = String::from_utf8(body).map_err(|_| "a body that is not UTF-8".to_string())?;
        Ok(Some((head.status, body)))
    }

    /// Why an answer whose connection closed now is incomplete.
    fn ended(&self) -> String {
        match &self.head {
            None if self.raw.is_empty() => "nothing".into(),
            None => "a head cut short".into(),
            Some(_) => "a body cut short".into(),
        }
    }
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The status line and headers: `head` is the answer up to the CRLF CRLF
/// ending them, exclusive.
fn parse_head(head: &[u8], body_at: usize) -> Result<Head, String> {
    let mut lines = Vec::new();
    let mut rest = head;
    while let Some(eol) = find(rest, b"\r\n") {
        lines.push(&rest[..eol]);
        rest = &rest[eol + 2..];
    }
    lines.push(rest);
    // A bare CR or LF: lines a lenient parser could split differently.
    if lines
        .iter()
        .any(|l| l.iter().any(|&b| b == b'\r' || b == b'\n'))
    {
        return Err("a line not ended by CRLF".into());
    }
    let mut lines = lines.into_iter();
    let status_line = lines.next().ok_or("no status line")?;
    let status = parse_status_line(status_line).ok_or("a malformed status line")?;
    let (mut length, mut chunked) = (None, false);
    for line in lines {
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or("a header line without a name")?;
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if name.is_empty() || name.iter().any(|b| b.is_ascii_whitespace()) {
            return Err("a header line without a name".into());
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = std::str::from_utf8(value)
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<usize>().ok())
                .ok_or("an unreadable Content-Length")?;
            if length.is_some_and(|l| l != n) {
                return Err("two different Content-Lengths".into());
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            if !value.eq_ignore_ascii_case(b"chunked") {
                return Err("a transfer coding other than chunked".into());
            }
            chunked = true;
        }
    }
    let framing = match (length, chunked) {
        (Some(n), _) if n > MAX_ANSWER => return Err(format!("over {} MiB", MAX_ANSWER >> 20)),
        (Some(_), true) => return Err("both Content-Length and chunked encoding".into()),
        (Some(n), false) => Framing::Length(n),
        (None, true) => Framing::Chunked,
        // No body by definition.
        (None, false) if matches!(status, 204 | 304) => Framing::Length(0),
        (None, false) => return Err("no Content-Length".into()),
    };
    Ok(Head {
        status,
        body_at,
        framing,
    })
}

/// `HTTP/1.x NNN[ reason]` → NNN.
fn parse_status_line(line: &[u8]) -> Option<u16> {
    let rest = line.strip_prefix(b"HTTP/1.")?;
    let (minor, rest) = rest.split_first()?;
    let rest = rest.strip_prefix(b" ").filter(|_| minor.is_ascii_digit())?;
    let (code, after) = rest.split_at_checked(3)?;
    if !code.iter().all(u8::is_ascii_digit) || !(after.is_empty() || after[0] == b' ') {
        return None;
    }
    std::str::from_utf8(code).ok()?.parse().ok()
}

/// The body of a chunked answer: `Some` once the last chunk and the
/// trailers' blank line are in, `None` while more is needed.
fn dechunk(mut rest: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = find(rest, b"\r\n") else {
            return if rest.len() > 1024 {
                Err("a chunk size line over 1 KiB".into())
            } else {
                Ok(None)
            };
        };
        let line = &rest[..eol];
        let size = line
            .split(|&b| b == b';')
            .next()
            .unwrap_or(b"")
            .trim_ascii();
        let n = std::str::from_utf8(size)
            .ok()
            .filter(|s| !s.is_empty() && s.len() <= 8 && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|s| usize::from_str_radix(s, 16).ok())
            .ok_or("a malformed chunk size")?;
        rest = &rest[eol + 2..];
        if n == 0 {
            // Trailers (ignored), then a blank line: the end.
            let ended = rest.starts_with(b"\r\n") || find(rest, b"\r\n\r\n").is_some();
            return Ok(ended.then_some(out));
        }
        if rest.len() < n + 2 {
            return Ok(None);
        }
        if &rest[n..n + 2] != b"\r\n" {
            return Err("a chunk longer than its size".into());
        }
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n + 2..];
    }
}

#[cfg(test)]
mod tests;
