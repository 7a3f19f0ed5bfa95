//! Routing the client's messages: every `tools/call` is judged before the
//! server sees it; answers to the proxy's own elicitations are taken out;
//! everything else passes byte for byte.

use super::{error_message, line_of};
use crate::decider::{Decider, approval_id, relay_call};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, Semaphore, mpsc, oneshot};
use toolgate_core::hooks::mcp::{self, ElicitAnswer, McpSession};
use toolgate_core::{Decision, RiskClass, ToolCall, Verdict};

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
pub(super) struct Proxy {
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
}

/// The id prefix of the proxy's own requests to the client; answers with it
/// are never forwarded to the server.
const ELICIT_PREFIX: &str = "toolgate-elicit-";

impl Proxy {
    /// A proxy deciding with `decider`, holding escalations up to `wait`
    /// (at most `max_waiting` at once).
    pub(super) fn new(
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
        }
    }

    /// Ends every held call without an answer (the client left).
    pub(super) fn cancel_all(&self) {
        for c in lock(&self.held).values() {
            c.cancel();
        }
    }

    /// Handles one line from the client. Every message reaches the server
    /// re-serialized from what the proxy parsed, never as the client's
    /// bytes: a server whose reader splits lines at a bare `\r`, or matches
    /// keys loosely, cannot see anything the proxy did not.
    pub(super) async fn from_client(self: &Arc<Self>, line: &[u8]) {
        let msg = match toolgate_core::parse_json(line) {
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
                    self.route(m).await;
                }
            }
            m => self.route(m).await,
        }
    }

    async fn route(self: &Arc<Self>, msg: Value) {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        if !msg.is_object() {
            return self
                .reply_error(
                    Value::Null,
                    -32600,
                    "toolgate mcp-proxy: a JSON-RPC message must be an object; it was not forwarded",
                )
                .await;
        }
        if let Err(why) = mcp::check_keys(&msg) {
            let why = format!("toolgate mcp-proxy: {why}; the message was not forwarded");
            eprintln!("{why}");
            return self.reply_error(id, -32600, &why).await;
        }
        match msg.get("method") {
            None => {
                // A response: to one of the proxy's own requests (taken out
                // even when late, so the server never learns their ids), or
                // to the server's.
                if let Some(Value::String(rid)) = msg.get("id")
                    && rid.starts_with(ELICIT_PREFIX)
                {
                    if let Some(tx) = lock(&self.asked).remove(rid) {
                        let _ = tx.send(msg);
                    }
                    return;
                }
                self.forward(&msg).await;
            }
            Some(Value::String(m)) if m == mcp::TOOLS_CALL => {
                if msg.get("id").is_none_or(Value::is_null) {
                    // A tool call nobody can be answered about: never run.
                    eprintln!(
                        "toolgate mcp-proxy: dropped a tools/call without an id (not a valid request)"
                    );
                    return;
                }
                self.judge(msg).await
            }
            Some(Value::String(m)) if m == mcp::RESOURCES_READ || m == mcp::PROMPTS_GET => {
                self.judge_other(msg).await
            }
            Some(Value::String(m)) if m == "initialize" => {
                let params = msg.get("params").cloned().unwrap_or(Value::Null);
                self.elicits
                    .store(mcp::client_elicits(&params), Ordering::SeqCst);
                if let Some(name) = params.pointer("/clientInfo/name").and_then(Value::as_str) {
                    lock(&self.session).agent = Some(name.chars().take(128).collect());
                }
                self.forward(&msg).await;
            }
            Some(Value::String(m)) if m == "notifications/cancelled" => {
                if let Some(rid) = msg.pointer("/params/requestId")
                    && let Some(c) = lock(&self.held).get(&rid.to_string())
                {
                    c.cancel();
                }
                self.forward(&msg).await;
            }
            Some(_) => self.forward(&msg).await,
        }
    }

    /// Judges a `resources/read` or `prompts/get`: forwarded when allowed,
    /// else answered with a JSON-RPC error saying why (not held: their
    /// answers have no error shape a model would read as a tool result).
    async fn judge_other(&self, msg: Value) {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let method = msg["method"].as_str().unwrap_or_default();
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let session = lock(&self.session).clone();
        let call = match mcp::call_for(&session, method, &params, Some(&id)) {
            Some(Ok(c)) => c,
            Some(Err(why)) => {
                return self
                    .reply_error(id, -32602, &format!("toolgate mcp-proxy: {why}"))
                    .await;
            }
            None => return self.forward(&msg).await,
        };
        match self.blocking_check(call).await {
            Ok(d) if d.decision == Verdict::Allow => self.forward(&msg).await,
            Ok(d) => {
                let text = mcp::stopped_result(&d)["content"][0]["text"]
                    .as_str()
                    .unwrap_or("blocked by toolgate")
                    .to_string();
                self.reply_error(id, -32001, &text).await
            }
            Err(e) => {
                let text = mcp::failed_result(&e)["content"][0]["text"]
                    .as_str()
                    .unwrap_or("toolgate failed")
                    .to_string();
                self.reply_error(id, -32001, &text).await
            }
        }
    }

    async fn forward(&self, msg: &Value) {
        let _ = self.to_server.send(line_of(msg)).await;
    }

    async fn to_client(&self, msg: &Value) {
        let _ = self.to_client.send(line_of(msg)).await;
    }

    /// Sends the client a JSON-RPC error.
    pub(super) async fn reply_error(&self, id: Value, code: i64, message: &str) {
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
                let taken = key.as_ref().is_some_and(|k| {
                    let mut held = lock(&self.held);
                    if held.contains_key(k) {
                        return true;
                    }
                    held.insert(k.clone(), cancel.clone());
                    false
                });
                if taken {
                    let id = msg.get("id").cloned().unwrap_or(Value::Null);
                    return self
                        .reply_error(
                            id,
                            -32600,
                            "toolgate mcp-proxy: a call with this id is still held; use a new id",
                        )
                        .await;
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
                self.forward(&msg).await;
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
        let Ok(slot) = self.waiting.clone().try_acquire_owned() else {
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
            // The slot goes with the thread: a wait given up on (cancelled,
            // declined) still holds it until its thread ends, so abandoned
            // waits cannot pile up past --max-waiting.
            tokio::task::spawn_blocking(move || {
                let _slot = slot;
                decider.wait(&call, d, wait, &cancel.flag)
            })
        };
        tokio::pin!(waiter);
        let mut asking = if self.elicits.load(Ordering::SeqCst) {
            self.elicit(call, &escalated)
        } else {
            None
        };
        let mut relay_refusal: Option<String> = None;
        loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => {
                    if let Some((id, _)) = &asking {
                        self.withdraw(id).await;
                    }
                    return Outcome::Drop;
                }
                done = &mut waiter => {
                    if let Some((id, _)) = &asking {
                        self.withdraw(id).await;
                    }
                    return match done {
                        Ok(Ok(d)) => match d.decision {
                            _ if cancel.is_set() => Outcome::Drop,
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
            }
        }
    }

    /// Asks the client's user about the call; the answer arrives on the
    /// receiver (dropped unanswered when the proxy stops asking). Each
    /// request gets a fresh random id, so a server that saw one cannot
    /// guess the next; `None` when no random id can be made.
    fn elicit(&self, call: &ToolCall, d: &Decision) -> Option<(String, oneshot::Receiver<Value>)> {
        let id = format!("{ELICIT_PREFIX}{}", toolgate_gate::random_hex().ok()?);
        let (tx, rx) = oneshot::channel();
        lock(&self.asked).insert(id.clone(), tx);
        // A relayed approval never counts for R4, so never suggest it does.
        let relay = if d.risk >= RiskClass::R4 {
            Some(false)
        } else {
            match &*self.decider {
                Decider::Local(gate) => Some(gate.engine().policy().approvals().relay),
                Decider::Daemon { .. } => None,
            }
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
        Some((id, rx))
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
