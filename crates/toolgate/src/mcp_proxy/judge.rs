//! Routing the client's messages: every `tools/call` is judged before the
//! server sees it; answers to the proxy's own elicitations are taken out;
//! everything else passes byte for byte.

use super::{error_message, line_of};
use crate::decider::{Decider, approval_id, relay_call};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, mpsc, oneshot};
use toolgate_core::hooks::mcp::{self, ElicitAnswer, McpSession};
use toolgate_core::model::{Decision, ToolCall, Verdict};

/// A held call's cancellation: by the client (`notifications/cancelled`),
/// by the client's user (a declined elicitation), or the client leaving.
#[derive(Default)]
struct Cancel {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancel {
    fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    async fn cancelled(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

/// What becomes of a judged call.
enum Outcome {
    /// Forward it to the server with these (judged) params.
    Forward(Value),
    /// Answer the client with this tool result; the server never sees it.
    Answer(Value),
    /// Nothing: the client cancelled it.
    Drop,
}

/// The proxy's shared state.
pub struct Proxy {
    decider: Arc<Decider>,
    session: Mutex<McpSession>,
    wait: Duration,
    waiting: Arc<Semaphore>,
    to_client: mpsc::Sender<Vec<u8>>,
    to_server: mpsc::Sender<Vec<u8>>,
    elicits: AtomicBool,
    /// The proxy's own requests to the client, by id, awaiting answers.
    asked: Mutex<HashMap<String, oneshot::Sender<Value>>>,
    /// Tool calls being judged or held, by their JSON-RPC id (as JSON text).
    held: Mutex<HashMap<String, Arc<Cancel>>>,
    next_request: AtomicU64,
    request_prefix: String,
}

impl Proxy {
    /// A proxy deciding with `decider`, holding escalations up to `wait`
    /// (at most `max_waiting` at once).
    pub fn new(
        decider: Decider,
        session: McpSession,
        wait: Duration,
        max_waiting: usize,
        to_client: mpsc::Sender<Vec<u8>>,
        to_server: mpsc::Sender<Vec<u8>>,
    ) -> Proxy {
        Proxy {
            decider: Arc::new(decider),
            session: Mutex::new(session),
            wait,
            waiting: Arc::new(Semaphore::new(max_waiting)),
            to_client,
            to_server,
            elicits: AtomicBool::new(false),
            asked: Mutex::new(HashMap::new()),
            held: Mutex::new(HashMap::new()),
            next_request: AtomicU64::new(1),
            request_prefix: format!(
                "toolgate-{}",
                toolgate_store::random_hex().unwrap_or_else(|_| std::process::id().to_string())
            ),
        }
    }

    /// Ends every held call without an answer (the client left).
    pub fn cancel_all(&self) {
        for c in lock(&self.held).values() {
            c.cancel();
        }
    }

    /// Handles one line from the client.
    pub async fn from_client(self: &Arc<Self>, line: &[u8]) {
        let msg = match toolgate_core::input::parse_json(line) {
            Ok(v) => v,
            Err(e) => {
                // What cannot be read cannot be judged: it never reaches
                // the server, whose parser might read it differently.
                let why = format!(
                    "toolgate mcp-proxy: not a JSON-RPC message ({e}); it was not forwarded"
                );
                eprintln!("{why}");
                return self.reply_error(Value::Null, -32700, &why).await;
            }
        };
        match msg {
            Value::Array(batch) => {
                for m in batch {
                    let raw = line_of(&m);
                    self.route(m, raw).await;
                }
            }
            m => {
                let mut raw = line.to_vec();
                raw.push(b'\n');
                self.route(m, raw).await;
            }
        }
    }

    async fn route(self: &Arc<Self>, msg: Value, raw: Vec<u8>) {
        if !msg.is_object() {
            return self
                .reply_error(
                    Value::Null,
                    -32600,
                    "toolgate mcp-proxy: a JSON-RPC message must be an object; it was not forwarded",
                )
                .await;
        }
        match msg.get("method") {
            None => {
                // A response: to one of the proxy's own requests, or to the
                // server's.
                if let Some(Value::String(id)) = msg.get("id")
                    && let Some(tx) = lock(&self.asked).remove(id)
                {
                    let _ = tx.send(msg);
                    return;
                }
                self.forward(raw).await;
            }
            Some(Value::String(m)) if m == mcp::TOOLS_CALL => self.judge(msg).await,
            Some(Value::String(m)) if m == "initialize" => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                self.elicits
                    .store(mcp::client_elicits(&params), Ordering::SeqCst);
                if let Some(name) = params.pointer("/clientInfo/name").and_then(Value::as_str) {
                    lock(&self.session).agent = Some(name.chars().take(128).collect());
                }
                self.forward(raw).await;
            }
            Some(Value::String(m)) if m == "notifications/cancelled" => {
                if let Some(id) = msg.pointer("/params/requestId")
                    && let Some(c) = lock(&self.held).get(&id.to_string())
                {
                    c.cancel();
                }
                self.forward(raw).await;
            }
            Some(_) => self.forward(raw).await,
        }
    }

    async fn forward(&self, raw: Vec<u8>) {
        let _ = self.to_server.send(raw).await;
    }

    async fn to_client(&self, msg: &Value) {
        let _ = self.to_client.send(line_of(msg)).await;
    }

    /// Sends the client a JSON-RPC error.
    pub async fn reply_error(&self, id: Value, code: i64, message: &str) {
        self.to_client(&error_message(id, code, message)).await;
    }

    /// Judges a `tools/call`. Allowed and blocked calls are settled before
    /// the next client message is read, so they reach the server in the
    /// order the client sent them; only an escalation is held on the side.
    async fn judge(self: &Arc<Self>, msg: Value) {
        let id = msg.get("id").cloned();
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let session = lock(&self.session).clone();
        let call = match mcp::to_call(&session, &params, id.as_ref()) {
            Ok(c) => c,
            Err(why) => {
                if let Some(id) = id {
                    self.reply_error(id, -32602, &format!("toolgate mcp-proxy: {why}"))
                        .await;
                }
                return;
            }
        };
        let d = match self.blocking_check(call.clone()).await {
            Ok(d) => d,
            Err(e) => {
                return self
                    .finish(msg, Outcome::Answer(mcp::failed_result(&e)))
                    .await;
            }
        };
        let outcome = match d.decision {
            Verdict::Allow => Outcome::Forward(mcp::forwarded_params(&params, &d)),
            Verdict::Block => Outcome::Answer(mcp::stopped_result(&d)),
            Verdict::Escalate => {
                // Registered before the next message is read, so a
                // cancellation that follows finds it.
                let cancel = Arc::new(Cancel::default());
                let key = msg.get("id").map(Value::to_string);
                if let Some(k) = &key {
                    lock(&self.held).insert(k.clone(), cancel.clone());
                }
                let me = self.clone();
                tokio::spawn(async move {
                    let outcome = me.hold(&call, &params, d, &cancel).await;
                    if let Some(k) = &key {
                        lock(&me.held).remove(k);
                    }
                    me.finish(msg, outcome).await;
                });
                return;
            }
        };
        self.finish(msg, outcome).await;
    }

    /// Forwards or answers a judged call.
    async fn finish(&self, mut msg: Value, outcome: Outcome) {
        match outcome {
            Outcome::Forward(params) => {
                msg["params"] = params;
                // The server gets the message as judged, re-serialized: what
                // toolgate parsed is exactly what the server parses.
                self.forward(line_of(&msg)).await;
            }
            Outcome::Answer(result) => {
                if let Some(id) = msg.get("id").cloned() {
                    self.to_client(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
                        .await;
                }
            }
            Outcome::Drop => {}
        }
    }

    async fn blocking_check(&self, call: ToolCall) -> Result<Decision, String> {
        let decider = self.decider.clone();
        tokio::task::spawn_blocking(move || decider.check(&call))
            .await
            .map_err(|e| format!("the check failed: {e}"))?
            .map_err(|e| format!("{e:#}"))
    }

    /// Holds an escalated call for an operator (and asks the client's user,
    /// when the client can be asked) until it is resolved or the wait ends.
    async fn hold(
        &self,
        call: &ToolCall,
        params: &Value,
        escalated: Decision,
        cancel: &Arc<Cancel>,
    ) -> Outcome {
        if self.wait.is_zero() {
            return Outcome::Answer(mcp::stopped_result(&escalated));
        }
        let Ok(_slot) = self.waiting.clone().try_acquire_owned() else {
            return Outcome::Answer(mcp::stopped_result(&escalated));
        };
        let waiter = {
            let (decider, call, d, cancel, wait) = (
                self.decider.clone(),
                call.clone(),
                escalated.clone(),
                cancel.clone(),
                self.wait,
            );
            tokio::task::spawn_blocking(move || decider.wait(&call, d, wait, &cancel.flag))
        };
        tokio::pin!(waiter);
        let mut asking = if self.elicits.load(Ordering::SeqCst) {
            Some(self.elicit(call, &escalated))
        } else {
            None
        };
        let mut relay_refusal: Option<String> = None;
        loop {
            tokio::select! {
                done = &mut waiter => {
                    if let Some((id, _)) = &asking {
                        self.withdraw(id).await;
                    }
                    return match done {
                        Ok(Ok(d)) => match d.decision {
                            Verdict::Allow => Outcome::Forward(mcp::forwarded_params(params, &d)),
                            _ if cancel.is_set() => Outcome::Drop,
                            _ => {
                                let mut r = mcp::stopped_result(&d);
                                if let Some(why) = relay_refusal {
                                    append_text(&mut r, &format!("Your approval at the client was not accepted: {why}"));
                                }
                                Outcome::Answer(r)
                            }
                        },
                        Ok(Err(e)) => Outcome::Answer(mcp::failed_result(&format!("{e:#}"))),
                        Err(e) => Outcome::Answer(mcp::failed_result(&format!("waiting failed: {e}"))),
                    };
                }
                answer = async { (&mut asking.as_mut().expect("guarded").1).await }, if asking.is_some() => {
                    asking = None;
                    match answer.map(|a| mcp::elicit_answer(&a)).unwrap_or(ElicitAnswer::Unknown) {
                        ElicitAnswer::Approve => {
                            if let Some(why) = self.relay(call, &escalated).await {
                                relay_refusal = Some(why);
                            }
                        }
                        ElicitAnswer::Refuse => {
                            cancel.cancel();
                            let id = approval_id(&escalated).map(|i| i.to_string()).unwrap_or_default();
                            return Outcome::Answer(mcp::error_result(&format!(
                                "The user declined {} at the MCP client, so it did not run. \
                                 (toolgate approval {id} stays pending until it expires.)",
                                call.tool
                            )));
                        }
                        // A client that cannot answer: the operator still can.
                        ElicitAnswer::Unknown => {}
                    }
                }
                _ = cancel.cancelled() => {
                    if let Some((id, _)) = &asking {
                        self.withdraw(id).await;
                    }
                    return Outcome::Drop;
                }
            }
        }
    }

    /// Asks the client's user about the call; the answer arrives on the
    /// receiver (dropped unanswered when the proxy stops asking).
    fn elicit(&self, call: &ToolCall, d: &Decision) -> (String, oneshot::Receiver<Value>) {
        let id = format!(
            "{}-{}",
            self.request_prefix,
            self.next_request.fetch_add(1, Ordering::Relaxed)
        );
        let (tx, rx) = oneshot::channel();
        lock(&self.asked).insert(id.clone(), tx);
        let relay = match &*self.decider {
            Decider::Local(gate) => Some(gate.engine().policy().approvals().relay),
            Decider::Daemon { .. } => None,
        };
        let request = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": mcp::ELICITATION_CREATE,
            "params": mcp::elicitation_params(call, d, relay),
        });
        let to_client = self.to_client.clone();
        tokio::spawn(async move {
            let _ = to_client.send(line_of(&request)).await;
        });
        (id, rx)
    }

    /// Stops waiting for an elicitation and tells the client so.
    async fn withdraw(&self, id: &str) {
        if lock(&self.asked).remove(id).is_some() {
            self.to_client(&json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "toolgate no longer needs the answer"},
            }))
            .await;
        }
    }

    /// Records the client's user's approval as a relayed approval; the
    /// waiter then sees it approved. Returns why it was refused, if it was.
    async fn relay(&self, call: &ToolCall, escalated: &Decision) -> Option<String> {
        let id = approval_id(escalated)?.to_string();
        let who = call.agent.as_deref().unwrap_or("an MCP client");
        let relay = relay_call(
            &id,
            &format!("approved by the user at {who} (MCP elicitation)"),
            call,
        );
        match self.blocking_check(relay).await {
            Ok(d) if d.decision == Verdict::Allow => None,
            Ok(d) => {
                eprintln!(
                    "toolgate mcp-proxy: the user's approval of {id} was not accepted: {}",
                    d.reason
                );
                Some(d.reason)
            }
            Err(e) => {
                eprintln!("toolgate mcp-proxy: cannot record the user's approval of {id}: {e}");
                Some(e)
            }
        }
    }
}

/// Adds a paragraph to a tool result's text.
fn append_text(result: &mut Value, extra: &str) {
    if let Some(Value::String(t)) = result.pointer_mut("/content/0/text") {
        t.push_str("\n\n");
        t.push_str(extra);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
