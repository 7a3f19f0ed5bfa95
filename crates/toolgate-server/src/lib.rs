//! The toolgate daemon: the HTTP API over the decision core
//! and the store, with agent and operator tokens, group-committed durable
//! checks, live events on `/ws`, Prometheus metrics, policy hot reload and
//! the embedded control UI. `docs/http-api.md` is the contract.
//!
//! Handlers are thin: they check the token, parse input within limits, and
//! hand work to the store's [`toolgate_gate::Gate`] on blocking threads.
#![forbid(unsafe_code)]

pub mod api;
pub mod app;
pub mod auth;
pub mod canary;
pub mod checker;
mod checkpoints;
mod dispatch;
pub mod error;
pub mod events;
pub mod links;
pub mod listen;
pub mod metrics;
pub mod model_stage;
pub mod records;
pub mod reload;
pub mod routing;
pub mod session;
pub mod stats;
pub mod ui;
pub mod waiting_agents;
pub mod watchers;
pub mod ws;

pub use app::{PolicyLoader, PolicySource};
pub use auth::{Role, TokenSource, Tokens};
pub use error::ApiError;

use app::{App, PolicyStatus};
use arc_swap::ArcSwap;
use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use toolgate_core::paths::Env;
use toolgate_gate::{Clock, Gate};
use toolgate_store::Store;

/// Most `?wait` long polls held open at once (and never more than half the
/// connection cap); past it an escalation is answered at once, without
/// waiting.
pub const MAX_WAITERS: usize = 1024;

/// How long an ordinary request may take (not `/ws`, not a `?wait=` check).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What a daemon needs.
pub struct ServerConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// Durable state.
    pub store: Arc<dyn Store>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// The agent and operator tokens.
    pub tokens: Tokens,
    /// The policy and how to reload it.
    pub policy: PolicySource,
    /// Calls without a `cwd` are judged here.
    pub base: Env,
    /// The key signing approve/deny links (at least 32 bytes); `None`: a
    /// random one, so links die with the process.
    pub link_key: Option<Vec<u8>>,
}

/// A bound, not yet running daemon.
pub struct Server {
    app: Arc<App>,
    listener: TcpListener,
}

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The address could not be bound.
    #[error(
        "cannot listen on {addr}: {source} (is another toolgate running? pick another --listen)"
    )]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The policy did not load.
    #[error("{0}")]
    Policy(String),
    /// A thread could not be started.
    #[error("cannot start a worker thread: {0}")]
    Thread(std::io::Error),
    /// The state store or a key could not be read.
    #[error("cannot set up the daemon's state: {0}")]
    State(String),
}

impl Server {
    /// Loads the policy and binds the address; nothing is served until
    /// [`Server::run`]. Call inside a Tokio runtime.
    pub async fn bind(config: ServerConfig) -> Result<Server, StartError> {
        let loader = config.policy.loader.clone();
        let bundle = tokio::task::spawn_blocking(move || loader())
            .await
            .unwrap_or_else(|_| Err("loading the policy panicked".into()))
            .map_err(StartError::Policy)?;
        let sources = bundle.sources().to_vec();
        let engine = bundle.into_engine();
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| StartError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let listen = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| config.listen.to_string());
        crate::metrics::install();
        let origin = engine.policy().origin().to_string();
        let gate = Arc::new(ArcSwap::from_pointee(model_stage::attach(Gate::new(
            Arc::new(engine),
            config.store.clone(),
            config.clock.clone(),
            config.base.clone(),
        ))));
        // Where the audit tail starts, read before any request is taken:
        // read later (in the tail's own task), it could skip entries that
        // the first requests wrote, and their live events with them.
        let head_store = config.store.clone();
        let head = tokio::task::spawn_blocking(move || head_store.audit_head())
            .await
            .map_err(|_| StartError::State("reading the audit head panicked".into()))?
            .map_err(|e| StartError::State(e.to_string()))?;
        let routing_settings = gate.load().engine().policy().approvals().routing.clone();
        let link_key = match &config.link_key {
            Some(k) => k.clone(),
            None => {
                // No key given (tests, embedding): links last as long as
                // this process.
                let mut k = vec![0u8; 32];
                getrandom::fill(&mut k)
                    .map_err(|e| StartError::State(format!("no random link key: {e}")))?;
                k
            }
        };
        let committed = Arc::new(tokio::sync::Notify::new());
        let checker =
            checker::Checker::start(gate.clone(), committed.clone()).map_err(StartError::Thread)?;
        let now = config.clock.now_ms();
        let app = Arc::new(App {
            gate,
            store: config.store,
            clock: config.clock,
            base: config.base,
            tokens: config.tokens,
            checker,
            committed,
            events: tokio::sync::broadcast::channel(4096).0,
            stats: stats::Stats::default(),
            policy: Mutex::new(PolicyStatus {
                origin,
                loaded: toolgate_core::rfc3339_ms(now),
                reloads: 0,
                last_error: None,
            }),
            source: config.policy,
            watchers: watchers::Watchers::new(sources),
            pending: AtomicU64::new(0),
            audit_head: Mutex::new(head.map_or((0, String::new()), |(seq, hash)| {
                (seq, toolgate_core::hex(&hash))
            })),
            started_ms: now,
            shutdown: tokio::sync::watch::Sender::new(false),
            // Long polls may take at most half the connections, so operators
            // can always get in to resolve them.
            canaries: crate::canary::Canaries::default(),
            posture: toolgate_gate::posture::current(),
            waiting: Arc::default(),
            waiters: Arc::new(tokio::sync::Semaphore::new(
                MAX_WAITERS.min(listen::max_connections() / 2),
            )),
            bypasses: Mutex::new(Vec::new()),
            router: ArcSwap::from_pointee(routing::Router::build(&routing_settings)),
            deliveries: Arc::new(routing::Deliveries::default()),
            approval_changes: tokio::sync::broadcast::channel(1024).0,
            links: toolgate_channels::LinkSigner::new(&link_key)
                .map_err(|e| StartError::State(format!("the link key: {e}")))?,
            sessions: crate::session::Sessions::default(),
            cookie: crate::session::cookie_name(&listen),
            listen,
            audit_key: std::sync::OnceLock::new(),
        });
        Ok(Server { app, listener })
    }

    /// A one-time link signing a browser into the control UI as the
    /// administrator, for `toolgate serve` to print at start.
    pub fn sign_in_link(&self) -> std::io::Result<String> {
        let admin = crate::auth::Principal {
            role: crate::auth::Role::Operator,
            identity: toolgate_gate::ADMIN.to_string(),
            person: false,
        };
        let code = self
            .app
            .sessions
            .mint_code(&admin, self.app.clock.now_ms())?;
        Ok(format!(
            "http://{}{}",
            self.app.listen,
            api::session::link_path(&code)
        ))
    }

    /// Signs the audit log's checkpoints with `key` (the daemon's key, from
    /// its data directory): at start, as the log grows, at shutdown; and
    /// `GET /v1/audit/verify` checks them with its public half.
    pub fn sign_audit_with(&self, key: Arc<toolgate_gate::DaemonKey>) {
        let _ = self.app.audit_key.set(key);
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes, then stops accepting and lets
    /// requests in flight finish.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        // Recorded in the background: a store locked by another process
        // must not keep the daemon from accepting (hooks answer `deny`
        // within their deadline meanwhile).
        let origin = self.app.policy_status().origin;
        let starting = self.app.clone();
        tokio::spawn(async move {
            reload::record(&starting, "loaded", &origin, None, "start").await;
        });
        events::spawn_all(&self.app);
        if let Some(key) = self.app.audit_key.get() {
            checkpoints::spawn(&self.app, key.clone());
        }
        reload::start(&self.app);
        let router = router(self.app.clone());
        let app = self.app.clone();
        let stop = async move {
            shutdown.await;
            // Release `?wait` long polls and WebSockets, which would
            // otherwise hold shutdown open.
            app.shutdown.send_replace(true);
        };
        listen::serve(self.listener, router, stop).await;
        if let Some(key) = self.app.audit_key.get() {
            checkpoints::at_shutdown(&self.app, key).await;
        }
        self.app.watchers.stop();
        Ok(())
    }
}

/// Every route, with the timeout and the JSON fallbacks.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .merge(ui::routes())
        .route("/v1/check", post(api::check::check))
        .route("/v1/approvals", get(api::approvals::list))
        .route("/v1/approvals/{id}", get(api::approvals::show))
        .route("/v1/approvals/{id}/approve", post(api::approvals::approve))
        .route("/v1/approvals/{id}/deny", post(api::approvals::deny))
        .route("/v1/decisions", get(api::read::decisions))
        .route("/v1/state", get(api::read::state))
        .route("/v1/whoami", get(api::read::whoami))
        .route(
            "/v1/session",
            post(api::session::open).delete(api::session::close),
        )
        .route("/v1/session/links", post(api::session::mint))
        .route(
            "/v1/bypass",
            get(api::bypass::list).post(api::bypass::start),
        )
        .route("/v1/bypass/{id}/end", post(api::bypass::end))
        .route(
            "/v1/channels/{target}/callback",
            post(api::channels::callback),
        )
        .route("/v1/links/{token}", get(links::show).post(links::submit))
        .route("/v1/audit/verify", get(api::read::verify))
        .route("/v1/protocol", get(api::read::protocol))
        .route("/v1/canary", post(api::canary::canary))
        .route("/v1/knowledge/ack", post(api::knowledge::ack))
        .route("/v1/hooks/{runtime}", post(api::hooks::hook))
        .route("/ws", get(ws::ws))
        .route("/metrics", get(api::read::metrics))
        .route("/healthz", get(api::read::healthz))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(timeout))
        .with_state(app)
}

async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!(
        "no endpoint {}: see docs/http-api.md for the API",
        uri.path()
    ))
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::method_not_allowed(format!(
        "{} does not accept {method}: see docs/http-api.md",
        uri.path()
    ))
}

/// Bounds ordinary requests. Long polls and WebSockets are exempt, and so
/// are hook endpoints, which keep their own shorter deadline and must answer
/// `deny` (never an error status, which a hook runner treats as "run it").
async fn timeout(req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let long = path == "/ws"
        || path.starts_with("/v1/hooks/")
        || (path == "/v1/check" && req.uri().query().is_some_and(|q| q.contains("wait=")));
    if long {
        return next.run(req).await;
    }
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(req)).await {
        Ok(r) => r,
        Err(_) => ApiError::timeout(format!(
            "the request took longer than {}s",
            REQUEST_TIMEOUT.as_secs()
        ))
        .into_response(),
    }
}
