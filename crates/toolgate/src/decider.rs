//! Who decides for an integration (`toolgate hook`, `toolgate mcp-proxy`):
//! the daemon named by `--url` (or `TOOLGATE_URL` when the command names
//! none), else this process with the policy and the data dir. Both answer
//! the same Decisions; both can hold an escalation until an operator
//! resolves it.
//!
//! A daemon is believed only once it proves itself: over a Unix socket
//! (`unix:/run/toolgate/toolgate.sock`) the kernel names the user that
//! bound it, which must be the daemon's user pinned at install
//! (`--daemon-uid`); over TCP the daemon signs each answer, with the nonce
//! this process sent, the request it judged and the decision
//! (`toolgate_server::proof`), and the signature must verify with the key
//! pinned at install (`--daemon-key`). Any other answer is a denial, and so
//! is a daemon named with neither pin: a program the agent started on the
//! daemon's address would otherwise decide for it.

use crate::check::{base_env, load_engine};
use crate::state::DataDirArgs;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use toolgate_core::{ApprovalId, Decision, ToolCall, Verdict};
use toolgate_gate::{Clock, Gate, GiveUp, Look, Next, PublicKey, SystemClock, Waiter};
use toolgate_server::proof;
use toolgate_store::Store;

/// How long to wait for the daemon's answer to a plain check.
pub(crate) const DAEMON_TIMEOUT: Duration = Duration::from_secs(8);
/// How often an in-process wait looks at the approval.
const POLL_EVERY: Duration = Duration::from_millis(200);
/// The daemon refuses longer waits.
const MAX_WAIT: Duration = Duration::from_secs(600);
pub(crate) use crate::state::NONE;
/// The word for the built-in default policy (`--policy builtin`).
pub(crate) const BUILTIN: &str = "builtin";

/// Where decisions come from: the options every integration command shares.
#[derive(Debug, Clone, Args)]
pub(crate) struct DeciderArgs {
    /// Policy file for in-process decisions, or `builtin` for the built-in
    /// default (with a daemon: where the hook's `[hooks]` settings come from).
    #[arg(long, env = "TOOLGATE_POLICY", value_name = "FILE|builtin")]
    pub policy: Option<PathBuf>,
    /// The daemon to ask: `unix:/run/toolgate/toolgate.sock` (with
    /// --daemon-uid), `http://127.0.0.1:7878` (with --daemon-key), or
    /// `none` to decide in this process.
    #[arg(long, env = "TOOLGATE_URL", value_name = "URL|unix:PATH|none")]
    pub url: Option<String>,
    /// The daemon's public key (`ed25519:<64 hex>`, its `daemon.pub`): an
    /// answer over TCP counts only with a valid signature by it.
    #[arg(long, value_name = "ed25519:HEX")]
    pub daemon_key: Option<String>,
    /// The user id the daemon runs as: an answer over a Unix socket counts
    /// only when the socket is that user's.
    #[arg(long, value_name = "UID")]
    pub daemon_uid: Option<u32>,
    /// The daemon's agent token; default: `agent.token` in the data dir
    /// (over TCP; a Unix socket peer needs none).
    #[arg(long, env = "TOOLGATE_AGENT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

impl DeciderArgs {
    /// The decider these options describe (see [`Decider::new`]).
    pub(crate) fn decider(&self, data: &DataDirArgs) -> Result<Decider> {
        Decider::new(self, data)
    }

    /// The policy file named, `None` for the built-in default.
    pub(crate) fn policy_file(&self) -> Option<&Path> {
        policy_file(self.policy.as_deref())
    }
}

/// `path`, unless it is the word `builtin` (the built-in default policy).
pub(crate) fn policy_file(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| p.as_os_str() != BUILTIN)
}

/// How to reach a daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// `http://HOST:PORT`.
    Tcp {
        /// The URL as given, without a trailing slash.
        url: String,
        /// `HOST:PORT`.
        hostport: String,
    },
    /// `unix:/PATH`.
    Unix(PathBuf),
}

impl Endpoint {
    /// Reads `http://HOST:PORT` or `unix:/ABSOLUTE/PATH`; `None` for `none`
    /// or nothing.
    pub(crate) fn parse(text: &str) -> Result<Option<Endpoint>> {
        let t = text.trim().trim_end_matches('/');
        if t.is_empty() || t.eq_ignore_ascii_case(NONE) {
            return Ok(None);
        }
        if let Some(path) = t.strip_prefix("unix:") {
            let path = PathBuf::from(path.strip_prefix("//").unwrap_or(path));
            if !path.is_absolute() {
                bail!(
                    "--url {t}: a socket is named by its absolute path, as in \
                     unix:/run/toolgate/toolgate.sock"
                );
            }
            return Ok(Some(Endpoint::Unix(path)));
        }
        match t.strip_prefix("http://") {
            Some(hostport) if !hostport.is_empty() && !hostport.contains('/') => {
                Ok(Some(Endpoint::Tcp {
                    url: t.to_string(),
                    hostport: hostport.to_string(),
                }))
            }
            _ => bail!(
                "--url {t:?}: give http://HOST:PORT (a TLS proxy goes on the daemon's side), \
                 unix:/PATH for the daemon's socket, or none"
            ),
        }
    }

    /// As written on a command line.
    pub(crate) fn shown(&self) -> String {
        match self {
            Endpoint::Tcp { url, .. } => url.clone(),
            Endpoint::Unix(p) => format!("unix:{}", p.display()),
        }
    }
}

/// A daemon, and what it must prove to be believed.
pub(crate) struct Daemon {
    /// Where it is.
    pub endpoint: Endpoint,
    /// The agent token, when there is one to send.
    pub token: Option<String>,
    /// Its public key: every answer must carry a signature by it.
    pub key: Option<PublicKey>,
    /// Its user id: the socket must be that user's.
    pub uid: Option<u32>,
}

/// Decides tool calls, here or through the daemon.
pub(crate) enum Decider {
    /// In this process, recording in the data dir like `toolgate check`.
    Local(Gate),
    /// `toolgate serve`, pinned.
    Daemon(Box<Daemon>),
}

impl Decider {
    /// Readies an in-process decider's store for the process to exit
    /// without closing it ([`toolgate_store::Store::prepare_exit`]).
    pub(crate) fn prepare_exit(&self) {
        if let Decider::Local(gate) = self {
            gate.store().prepare_exit();
        }
    }

    /// The daemon `args.url` names, pinned by `--daemon-key` (TCP) or
    /// `--daemon-uid` (a socket), with the token from `--token`, or over TCP
    /// from `agent.token` in the data dir; else an in-process gate with the
    /// policy (or the built-in default) and the data dir's store.
    pub(crate) fn new(args: &DeciderArgs, data: &DataDirArgs) -> Result<Decider> {
        let endpoint = match args.url.as_deref() {
            Some(u) => Endpoint::parse(u)?,
            None => None,
        };
        let Some(endpoint) = endpoint else {
            if args.daemon_key.is_some() || args.daemon_uid.is_some() {
                bail!(
                    "--daemon-key and --daemon-uid pin a daemon: give its --url too (or remove \
                     them to decide in this process)"
                );
            }
            if data.store_is_none() {
                bail!(
                    "--store none: without a daemon (--url) this process decides and needs a \
                     store; give --data-dir DIR or --store sqlite:DIR"
                );
            }
            // The data dir this hook was pointed at is toolgate's own too.
            let engine = load_engine(args.policy_file())?
                .with_protected(&crate::check::own_places(Some(&data.resolve().0)));
            let store = data.open()?;
            // With the policy's model approver, as the daemon has it.
            return Ok(Decider::Local(toolgate_server::model_stage::attach(
                Gate::new(Arc::new(engine), store, Arc::new(SystemClock), base_env()),
            )));
        };
        let key = args
            .daemon_key
            .as_deref()
            .map(|k| PublicKey::parse(k).map_err(|e| anyhow!("--daemon-key: {e}")))
            .transpose()?;
        let token = explicit_token(args.token.as_deref());
        let shown = endpoint.shown();
        let (token, uid) = match &endpoint {
            Endpoint::Unix(_) => {
                let Some(uid) = args.daemon_uid else {
                    bail!(
                        "the daemon at {shown} is not pinned, so whatever listens there would be \
                         believed: add --daemon-uid UID (the user the daemon runs as: id -u \
                         toolgate), or run toolgate install again; the call was not allowed"
                    );
                };
                (token, Some(uid))
            }
            Endpoint::Tcp { .. } => {
                if args.daemon_uid.is_some() {
                    bail!(
                        "--daemon-uid pins a daemon on a Unix socket (unix:PATH); over TCP pin \
                         its key with --daemon-key"
                    );
                }
                if key.is_none() {
                    bail!(
                        "the daemon at {shown} is not pinned, so any program answering on that \
                         address would be believed: add --daemon-key with the key in the \
                         daemon's daemon.pub (toolgate serve prints it), or run toolgate install \
                         again; the call was not allowed"
                    );
                }
                let token = match token {
                    Some(t) => t,
                    None => agent_token(data)?,
                };
                (Some(token), None)
            }
        };
        Ok(Decider::Daemon(Box::new(Daemon {
            endpoint,
            token,
            key,
            uid,
        })))
    }

    /// Decides and records one call. The call carries the agent's home and
    /// user (this process's `$HOME` and `$USER`, as the runtime started it)
    /// unless it names them: a daemon running as another user then still
    /// judges `~` and home rules as the agent's.
    pub(crate) fn check(&self, call: &ToolCall) -> Result<Decision> {
        let call = &with_agent_env(call);
        match self {
            Decider::Local(gate) => Ok(gate.check(call)?),
            Decider::Daemon(d) => post_check(d, call, None),
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
            Decider::Daemon(d) => match post_check(d, call, Some((wait, cancel))) {
                // Closing the connection ends the daemon's wait without using
                // the approval; the escalation is the answer.
                Err(_) if cancel.load(Ordering::Relaxed) => Ok(escalated),
                other => other,
            },
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

/// A token given on the command line or in the environment, if not blank.
fn explicit_token(token: Option<&str>) -> Option<String> {
    token
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// `agent.token` in the data dir (never with `--store none`).
fn agent_token(data: &DataDirArgs) -> Result<String> {
    if data.store_is_none() {
        bail!(
            "no agent token for the daemon: with --store none give --token (or \
             TOOLGATE_AGENT_TOKEN), or ask the daemon on its socket (unix:PATH), where the \
             agent needs none"
        );
    }
    let (dir, _) = data.resolve();
    let path = dir.join("agent.token");
    let t = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "there is no agent token for the daemon: set TOOLGATE_AGENT_TOKEN or make {} readable",
            path.display()
        )
    })?;
    Ok(t.trim().to_string())
}

/// `POST /v1/check[?wait=Ns]` over plain HTTP/1.1 (a Unix socket or
/// loopback TCP; no TLS, no async runtime: a hook is a short-lived process
/// and starts faster without them). The answer counts only once the daemon
/// has proved itself (see the module's documentation).
fn post_check(
    daemon: &Daemon,
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
    let nonce = match daemon.key {
        Some(_) => Some(fresh_nonce()?),
        None => None,
    };
    let answer = http_post(daemon, &path, &body, nonce.as_deref(), timeout, cancel)?;
    let shown = daemon.endpoint.shown();
    if answer.status != 200 {
        let why = serde_json::from_str::<Value>(&answer.body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| answer.body.chars().take(200).collect());
        bail!("the toolgate daemon answered {}: {why}", answer.status);
    }
    let decision: Decision = serde_json::from_str(&answer.body)
        .with_context(|| format!("the daemon at {shown} sent no Decision"))?;
    if let (Some(key), Some(nonce)) = (&daemon.key, &nonce) {
        proof::verify(
            key,
            nonce,
            body.as_bytes(),
            answer.status,
            decision.decision.as_str(),
            answer.body.as_bytes(),
            answer.signature.as_deref(),
        )
        .map_err(|e| {
            anyhow!(
                "the answer from {shown} does not prove it comes from the pinned toolgate \
                 daemon ({e}); the call was not allowed"
            )
        })?;
    }
    Ok(decision)
}

/// [`proof::NONCE_BYTES`] fresh random bytes, as hex.
fn fresh_nonce() -> Result<String> {
    let mut bytes = [0u8; proof::NONCE_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| {
        anyhow!("no randomness for the daemon's challenge ({e}); the call was not allowed")
    })?;
    Ok(toolgate_core::hex(&bytes))
}

/// A connection to the daemon.
enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    fn set_timeouts(&self, read: Duration, write: Duration) -> std::io::Result<()> {
        match self {
            Conn::Tcp(s) => s
                .set_read_timeout(Some(read))
                .and_then(|()| s.set_write_timeout(Some(write))),
            Conn::Unix(s) => s
                .set_read_timeout(Some(read))
                .and_then(|()| s.set_write_timeout(Some(write))),
        }
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Tcp(s) => s.flush(),
            Conn::Unix(s) => s.flush(),
        }
    }
}

/// Connects to the daemon; over a socket, only if the kernel says the user
/// that bound it is the pinned daemon user.
fn connect(daemon: &Daemon) -> Result<Conn> {
    let shown = daemon.endpoint.shown();
    let unreachable = |e: std::io::Error| {
        anyhow!("the toolgate daemon at {shown} did not answer ({e}); the call was not allowed")
    };
    match &daemon.endpoint {
        Endpoint::Tcp { hostport, .. } => {
            let addr = hostport
                .to_socket_addrs()
                .with_context(|| format!("cannot resolve {hostport}"))?
                .next()
                .ok_or_else(|| anyhow!("{hostport} resolves to no address"))?;
            Ok(Conn::Tcp(
                TcpStream::connect_timeout(&addr, DAEMON_TIMEOUT).map_err(unreachable)?,
            ))
        }
        Endpoint::Unix(path) => {
            let s = UnixStream::connect(path).map_err(unreachable)?;
            if let Some(want) = daemon.uid {
                let got = crate::peer::peer_uid(&s).map_err(|e| {
                    anyhow!("cannot tell who serves {shown} ({e}); the call was not allowed")
                })?;
                if got != want {
                    bail!(
                        "{shown} is served by uid {got}, not by the toolgate daemon's user (uid \
                         {want}, pinned at install): another program took the daemon's place; \
                         the call was not allowed"
                    );
                }
            }
            Ok(Conn::Unix(s))
        }
    }
}

/// How often a long wait for the daemon looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(200);

/// One HTTP/1.1 POST; the answer, read strictly by [`AnswerReader`] (any
/// answer it cannot read exactly is an error, so the caller fails closed
/// as for a daemon that is down). The whole answer must come within
/// `timeout`; a set `cancel` drops the connection (the daemon then stops
/// waiting for that call) and fails. The answer is taken as soon as its
/// framing says it is complete, without waiting for the daemon to close
/// the connection.
fn http_post(
    daemon: &Daemon,
    path: &str,
    body: &str,
    nonce: Option<&str>,
    timeout: Duration,
    cancel: Option<&AtomicBool>,
) -> Result<Answer> {
    let shown = daemon.endpoint.shown();
    let unreachable = |e: std::io::Error| {
        anyhow!("the toolgate daemon at {shown} did not answer ({e}); the call was not allowed")
    };
    let deadline = Instant::now() + timeout;
    let mut s = connect(daemon)?;
    let read_timeout = if cancel.is_some() {
        CANCEL_POLL
    } else {
        timeout
    };
    s.set_timeouts(read_timeout, DAEMON_TIMEOUT)
        .map_err(unreachable)?;
    let host = match &daemon.endpoint {
        Endpoint::Tcp { hostport, .. } => hostport.as_str(),
        Endpoint::Unix(_) => "localhost",
    };
    let mut request = format!("POST {path} HTTP/1.1\r\nHost: {host}\r\n");
    if let Some(token) = &daemon.token {
        request.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    if let Some(nonce) = nonce {
        request.push_str(&format!("{}: {nonce}\r\n", proof::NONCE_HEADER));
    }
    request.push_str(&format!(
        "Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    s.write_all(request.as_bytes()).map_err(unreachable)?;
    let malformed = |e: String| anyhow!("the daemon at {shown} sent a malformed answer: {e}");
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
                "the toolgate daemon at {shown} did not answer within {} s; the call was not allowed",
                timeout.as_secs()
            ));
        }
    }
}

/// One answer, read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    status: u16,
    body: String,
    /// The daemon's [`proof::SIGNATURE_HEADER`], if it sent one.
    signature: Option<String>,
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
    /// The signature header's value.
    signature: Option<String>,
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
    /// Takes the next bytes; the answer once it is complete.
    fn push(&mut self, bytes: &[u8]) -> Result<Option<Answer>, String> {
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
        Ok(Some(Answer {
            status: head.status,
            body,
            signature: head.signature.clone(),
        }))
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
    let (mut length, mut chunked, mut signature) = (None, false, None);
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
        } else if name.eq_ignore_ascii_case(proof::SIGNATURE_HEADER.as_bytes()) {
            // Two signatures: which one counts would be a guess.
            if signature.is_some() {
                return Err("two signatures".into());
            }
            let v = std::str::from_utf8(value).map_err(|_| "an unreadable signature")?;
            signature = Some(v.to_string());
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
        signature,
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
