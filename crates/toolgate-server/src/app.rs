//! The daemon's shared state, handed to every handler.

use crate::auth::{Principal, Role, Tokens, bearer};
use crate::checker::Checker;
use crate::error::ApiError;
use crate::stats::Stats;
use arc_swap::ArcSwap;
use axum::http::HeaderMap;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, broadcast};
use toolgate_bundle::Bundle;
use toolgate_core::Engine;
use toolgate_core::paths::Env;
use toolgate_gate::{ADMIN, Clock, Gate, TOKEN_PREFIX};
use toolgate_store::Store;

/// Loads the policy the daemon decides with, running its `[[test]]` cases;
/// the error says what is wrong with it. The bundle names the files it was
/// read from, which the daemon watches.
pub type PolicyLoader = Arc<dyn Fn() -> Result<Bundle, String> + Send + Sync>;

/// Where the policy comes from and how to reload it.
#[derive(Clone)]
pub struct PolicySource {
    /// Loads it (again).
    pub loader: PolicyLoader,
}

/// One live event, as sent on `/ws`, with what waiters need to filter it.
#[derive(Debug, Clone)]
pub struct Event {
    /// The JSON text sent to WebSocket clients.
    pub text: Arc<str>,
    /// For approval events: the approval id and the event name
    /// (`approved`, `denied`, …).
    pub approval: Option<(String, String)>,
}

/// The policy as loaded, for `/v1/state`.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyStatus {
    /// Where it came from.
    pub origin: String,
    /// When the current one was loaded (RFC 3339).
    pub loaded: String,
    /// Successful reloads since start.
    pub reloads: u64,
    /// Why the last reload was rejected, if it was (cleared by a good one).
    pub last_error: Option<String>,
}

/// The policy as `/v1/state` shows it: its status and the files behind it,
/// read from the watchers (which hold them) when asked.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyView {
    /// Origin, load time, reloads, last error.
    #[serde(flatten)]
    pub status: PolicyStatus,
    /// The files the policy in force was read from (the policy, then the
    /// scope profile it names); a change to any of them reloads.
    pub sources: Vec<String>,
    /// The files being watched for changes now: `sources`, less any that
    /// could not be watched (reload those with SIGHUP).
    pub watched: Vec<String>,
}

/// Everything handlers share.
pub struct App {
    /// The gate deciding calls; replaced whole on policy reload.
    pub gate: Arc<ArcSwap<Gate>>,
    /// Durable state.
    pub store: Arc<dyn Store>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Calls without a `cwd` are judged here.
    pub base: Env,
    /// The two tokens.
    pub tokens: Tokens,
    /// Group-committing decider.
    pub checker: Checker,
    /// Woken after every commit so live events go out at once.
    pub committed: Arc<Notify>,
    /// Live events.
    pub events: broadcast::Sender<Event>,
    /// Per-second counts and latency.
    pub stats: Stats,
    /// The policy and its reloads.
    pub policy: Mutex<PolicyStatus>,
    /// How to reload the policy.
    pub source: PolicySource,
    /// The watchers of the policy's files, kept in step with its sources.
    pub watchers: crate::watchers::Watchers,
    /// Open approvals, as last counted.
    pub pending: AtomicU64,
    /// The audit chain's length and head, as last seen.
    pub audit_head: Mutex<(u64, String)>,
    /// When the daemon started (Unix ms).
    pub started_ms: i64,
    /// The address it listens on.
    pub listen: String,
    /// Set to `true` when the daemon is stopping.
    pub shutdown: tokio::sync::watch::Sender<bool>,
    /// What integrations' canaries reported.
    pub canaries: crate::canary::Canaries,
    /// Whether the daemon runs in a container (the sandbox posture), read at start.
    pub posture: toolgate_core::Posture,
    /// Slots for `?wait` long polls.
    pub waiters: Arc<tokio::sync::Semaphore>,
    /// Which approvals an agent waits on now, and until when.
    pub waiting: Arc<crate::waiting_agents::WaitingAgents>,
    /// The emergency bypasses active as last read (`/v1/state`).
    pub bypasses: Mutex<Vec<toolgate_store::Bypass>>,
    /// Where approvals are sent (`[approvals.routing]`), rebuilt on reload.
    pub router: ArcSwap<crate::routing::Router>,
    /// What was sent for each open approval, and each target's status.
    pub deliveries: Arc<crate::routing::Deliveries>,
    /// Approval changes, as the audit tail sees them (the router listens).
    pub approval_changes: broadcast::Sender<crate::routing::ApprovalChange>,
    /// Signs and checks one-time approve/deny links.
    pub links: toolgate_channels::LinkSigner,
    /// The control UI's sign-in codes and browser sessions.
    pub sessions: crate::session::Sessions,
    /// The session cookie's name (per port: browsers share cookies across
    /// the ports of one host).
    pub cookie: String,
    /// The daemon's key, when it signs the audit log's checkpoints
    /// ([`crate::Server::sign_audit_with`]).
    pub audit_key: std::sync::OnceLock<Arc<toolgate_gate::DaemonKey>>,
    /// Where people reach the daemon (`https://toolgate.example.com`, behind
    /// a TLS proxy), when set: every link toolgate sends starts with it.
    pub public_url: std::sync::OnceLock<String>,
}

/// How a browser proves a cookie-authenticated request is its own page's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieProof {
    /// An API request: it must carry `X-Toolgate-Channel`.
    ChannelHeader,
    /// A WebSocket handshake, which cannot carry headers of its own: it
    /// must carry an `Origin` naming this daemon.
    Origin,
}

impl App {
    /// The start of every link toolgate sends: the public URL when one is
    /// set, else `http://` and the listen address.
    pub fn base_url(&self) -> String {
        match self.public_url.get() {
            Some(url) => url.clone(),
            None => format!("http://{}", self.listen),
        }
    }

    /// Authenticates a request's `Authorization: Bearer` token (or
    /// `fallback`) for `need`: the agent token, the shared operator token,
    /// or a named operator's own token, which is looked up in the store on
    /// every request so a removed operator is refused at once.
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        fallback: Option<&str>,
        need: Role,
    ) -> Result<Principal, ApiError> {
        if bearer(headers).is_none()
            && fallback.is_none()
            && let Some(secret) = crate::session::cookie(headers, &self.cookie)
        {
            return self
                .from_session(headers, secret, CookieProof::ChannelHeader)
                .await;
        }
        let shared = self.tokens.authorize(headers, fallback, need);
        let presented = bearer(headers).or(fallback).map(str::trim);
        match (shared, presented) {
            (Ok(role), _) => Ok(Principal {
                role,
                identity: match role {
                    Role::Agent => "agent".to_string(),
                    Role::Operator => ADMIN.to_string(),
                },
                person: false,
            }),
            (Err(e), Some(token))
                if e.code == "unauthorized" && token.starts_with(TOKEN_PREFIX) =>
            {
                let (store, token) = (self.store.clone(), token.to_string());
                let found = tokio::task::spawn_blocking(move || {
                    toolgate_gate::operator_for_token(&*store, &token)
                })
                .await
                .map_err(|_| ApiError::internal("reading the operators failed"))??;
                match found {
                    Some(op) => Ok(Principal {
                        role: Role::Operator,
                        identity: op.name,
                        person: true,
                    }),
                    None => Err(ApiError::unauthorized(
                        "this operator token is not (or no longer) valid: it was rotated or its operator removed; ask an administrator for a new one (`toolgate operators rotate NAME`)",
                    )),
                }
            }
            (Err(e), _) => Err(e),
        }
    }

    /// The operator a browser session cookie signs in, after checking the
    /// request is the daemon's own page's (`proof`) and, for a person, that
    /// they are still an operator: removing one signs their browsers out.
    pub async fn from_session(
        &self,
        headers: &HeaderMap,
        secret: &str,
        proof: CookieProof,
    ) -> Result<Principal, ApiError> {
        let proven = match proof {
            CookieProof::ChannelHeader => headers.contains_key(crate::session::CHANNEL_HEADER),
            CookieProof::Origin => headers.contains_key(axum::http::header::ORIGIN),
        };
        if !proven {
            return Err(ApiError::forbidden(
                "a request signed in by the browser cookie must come from the control UI (it \
                 sends X-Toolgate-Channel); scripts and tools use `Authorization: Bearer <token>`",
            ));
        }
        if let Some(why) = crate::session::cross_site(headers) {
            return Err(ApiError::forbidden(format!(
                "{why}: the control UI's session works only on the daemon's own page"
            )));
        }
        let who = self
            .sessions
            .principal(secret, self.clock.now_ms())
            .ok_or_else(|| {
                ApiError::unauthorized(
                    "this browser's session ended (signed out, 12 hours passed, or the daemon \
                     restarted): sign in again with the link `toolgate ui` prints",
                )
            })?;
        if who.person {
            let (store, name) = (self.store.clone(), who.identity.clone());
            let active = tokio::task::spawn_blocking(move || {
                store
                    .read_operators()
                    .map(|ops| ops.iter().any(|o| o.active() && o.name == name))
            })
            .await
            .map_err(|_| ApiError::internal("reading the operators failed"))??;
            if !active {
                self.sessions.end(secret);
                return Err(ApiError::unauthorized(format!(
                    "{} is no longer an operator here, so this browser was signed out",
                    who.identity
                )));
            }
        }
        Ok(who)
    }

    /// Sends an event to every WebSocket client and waiter (none listening
    /// is fine).
    pub fn publish(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Swaps in a newly loaded engine; the next batch decides with it.
    pub fn install(&self, engine: Engine) {
        let gate = crate::model_stage::attach(
            Gate::new(
                Arc::new(engine),
                self.store.clone(),
                self.clock.clone(),
                self.base.clone(),
            )
            .with_knowledge_stats(self.gate.load().knowledge().stats().clone()),
        );
        gate.feed_bypasses(
            self.bypasses
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        );
        self.router.store(Arc::new(crate::routing::Router::build(
            &gate.engine().policy().approvals().routing,
        )));
        self.gate.store(Arc::new(gate));
    }

    /// Open approvals, as last counted.
    pub fn pending(&self) -> u64 {
        self.pending.load(Ordering::Relaxed)
    }

    /// The policy status, cloned.
    pub fn policy_status(&self) -> PolicyStatus {
        self.policy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The policy's status and the files behind it, for `/v1/state`.
    pub fn policy_view(&self) -> PolicyView {
        let (sources, watched) = self.watchers.shown();
        PolicyView {
            status: self.policy_status(),
            sources,
            watched,
        }
    }

    /// Updates the policy status.
    pub fn set_policy_status(&self, f: impl FnOnce(&mut PolicyStatus)) {
        f(&mut self.policy.lock().unwrap_or_else(|p| p.into_inner()));
    }
}
