//! The toolgate daemon: the HTTP API over the decision core
//! and the store, with agent and operator tokens, group-committed durable
//! checks, live events on `/ws`, Prometheus metrics, policy hot reload and
//! the embedded control UI. `docs/http-api.md` is the contract.
//!
//! Handlers are thin: they check the token, parse input within limits, and
//! hand work to the store's [`toolgate_gate::Gate`] on blocking threads.
#![forbid(unsafe_code)]

pub mod activity;
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
pub mod proof;
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
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use toolgate_core::paths::Env;
use toolgate_gate::{Clock, DaemonKey, Gate, PublicKey};
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

/// Where a daemon listens besides (or instead of) [`ServerConfig::listen`],
/// and the key it proves its answers with. `Listening::default()` is TCP
/// only, with a key made for this process.
#[derive(Debug)]
pub struct Listening {
    /// Whether to listen on [`ServerConfig::listen`] at all.
    pub tcp: bool,
    /// A Unix socket to listen on too (see [`listen::bind_socket`]): peers
    /// running as another user than the daemon's reach the agent's routes
    /// only, and one that sends no token is taken as the agent.
    pub socket: Option<PathBuf>,
    /// The key signing answers for callers that send a nonce
    /// ([`proof`]); `None`: a new random one (tests, embedding).
    pub daemon_key: Option<DaemonKey>,
}

impl Default for Listening {
    fn default() -> Listening {
        Listening {
            tcp: true,
            socket: None,
            daemon_key: None,
        }
    }
}

/// A bound, not yet running daemon.
pub struct Server {
    app: Arc<App>,
    listener: Option<TcpListener>,
    socket: Option<(tokio::net::UnixListener, PathBuf)>,
    key: Arc<DaemonKey>,
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
    /// The Unix socket could not be bound.
    #[error("cannot listen on the socket {path}: {source}")]
    Socket {
        /// The socket's path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Neither TCP nor a socket to listen on.
    #[error("nothing to listen on: give --listen ADDR, --socket PATH, or both")]
    Nowhere,
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
        Server::bind_with(config, Listening::default()).await
    }

    /// [`Server::bind`], listening where `listening` says and proving
    /// answers with its key.
    pub async fn bind_with(
        config: ServerConfig,
        listening: Listening,
    ) -> Result<Server, StartError> {
        if !listening.tcp && listening.socket.is_none() {
            return Err(StartError::Nowhere);
        }
        let key = match listening.daemon_key {
            Some(k) => k,
            None => DaemonKey::generate().map_err(|e| StartError::State(e.to_string()))?,
        };
        let loader = config.policy.loader.clone();
        let bundle = tokio::task::spawn_blocking(move || loader())
            .await
            .unwrap_or_else(|_| Err("loading the policy panicked".into()))
            .map_err(StartError::Policy)?;
        let sources = bundle.sources().to_vec();
        let engine = bundle.into_engine();
        let listener = if listening.tcp {
            Some(
                TcpListener::bind(config.listen)
                    .await
                    .map_err(|source| StartError::Bind {
                        addr: config.listen,
                        source,
                    })?,
            )
        } else {
            None
        };
        let socket = match listening.socket {
            Some(path) => Some((
                listen::bind_socket(&path).map_err(|source| StartError::Socket {
                    path: path.display().to_string(),
                    source,
                })?,
                path,
            )),
            None => None,
        };
        let listen = match (&listener, &socket) {
            (Some(l), _) => l
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_else(|_| config.listen.to_string()),
            (None, Some((_, path))) => format!("unix:{}", path.display()),
            (None, None) => config.listen.to_string(),
        };
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
            public_url: std::sync::OnceLock::new(),
        });
        Ok(Server {
            app,
            listener,
            socket,
            key: Arc::new(key),
        })
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

    /// Builds every link toolgate sends (approval links in decisions, chat
    /// notices, one-time approve and deny links, sign-in links) on `url`
    /// (`https://toolgate.example.com`, where the team reaches the daemon
    /// through a proxy) instead of the listen address. Refused unless it is
    /// an absolute `http://` or `https://` URL with a host and no query or
    /// fragment.
    pub fn set_public_url(&self, url: &str) -> Result<(), String> {
        let base = public_base(url)?;
        let _ = self.app.public_url.set(base);
        Ok(())
    }

    /// The key the daemon signs its answers with (the one given in
    /// [`Listening`], or a fresh one): what [`Server::sign_audit_with`]
    /// should be handed, so one key vouches for both.
    pub fn daemon_key(&self) -> Arc<DaemonKey> {
        self.key.clone()
    }

    /// The address actually bound (useful with port 0); an error when the
    /// daemon listens on a socket only.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match &self.listener {
            Some(l) => l.local_addr(),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the daemon listens on a Unix socket only",
            )),
        }
    }

    /// The Unix socket the daemon listens on, if any.
    pub fn socket_path(&self) -> Option<&Path> {
        self.socket.as_ref().map(|(_, p)| p.as_path())
    }

    /// The public half of the key the daemon signs answers with: what a
    /// hook pins (`--daemon-key`).
    pub fn daemon_public_key(&self) -> PublicKey {
        self.key.public()
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
        let full = router(self.app.clone(), self.key.clone());
        let app = self.app.clone();
        let stop = async move {
            shutdown.await;
            // Release `?wait` long polls and WebSockets, which would
            // otherwise hold shutdown open.
            app.shutdown.send_replace(true);
        };
        let socket_path = self.socket.as_ref().map(|(_, p)| p.clone());
        let unix = self.socket.map(|(listener, _)| listen::UnixServe {
            listener,
            own: full.clone().layer(axum::middleware::from_fn_with_state(
                self.app.clone(),
                socket_agent,
            )),
            others: agent_router(self.app.clone(), self.key.clone()).layer(
                axum::middleware::from_fn_with_state(self.app.clone(), socket_agent),
            ),
            own_uid: own_uid(),
        });
        let tcp = self.listener.map(|l| (l, full));
        listen::serve_on(tcp, unix, stop).await;
        if let Some(p) = socket_path {
            let _ = std::fs::remove_file(p);
        }
        if let Some(key) = self.app.audit_key.get() {
            checkpoints::at_shutdown(&self.app, key).await;
        }
        self.app.watchers.stop();
        Ok(())
    }
}

/// Every route, with the timeout and the JSON fallbacks; `/v1/check`
/// signs its answers with `key` for callers that send a nonce.
pub fn router(app: Arc<App>, key: Arc<DaemonKey>) -> Router {
    Router::new()
        .merge(ui::routes())
        .route(
            "/v1/check",
            post(api::check::check).layer(axum::middleware::from_fn_with_state(key, proof::sign)),
        )
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
        .route("/v1/channels/{target}/test", post(api::channel_test::test))
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

/// The routes an agent may reach, and nothing else: what a peer of the Unix
/// socket running as another user than the daemon's gets. Operator
/// endpoints are not there at all, whatever token comes with the request.
pub fn agent_router(app: Arc<App>, key: Arc<DaemonKey>) -> Router {
    Router::new()
        .route(
            "/v1/check",
            post(api::check::check).layer(axum::middleware::from_fn_with_state(key, proof::sign)),
        )
        .route("/v1/whoami", get(api::read::whoami))
        .route("/v1/protocol", get(api::read::protocol))
        .route("/v1/canary", post(api::canary::canary))
        .route("/v1/knowledge/ack", post(api::knowledge::ack))
        .route("/v1/hooks/{runtime}", post(api::hooks::hook))
        .route("/healthz", get(api::read::healthz))
        .fallback(agent_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(timeout))
        .with_state(app)
}

/// Over the Unix socket the peer's uid is the agent's credential: a
/// request with no token of its own is the agent's (operator endpoints
/// still need an operator's token).
async fn socket_agent(State(app): State<Arc<App>>, mut req: Request, next: Next) -> Response {
    let h = req.headers();
    if !h.contains_key(axum::http::header::AUTHORIZATION)
        && !h.contains_key(axum::http::header::COOKIE)
    {
        req.headers_mut()
            .insert(axum::http::header::AUTHORIZATION, app.tokens.agent_bearer());
    }
    next.run(req).await
}

/// This process's effective user id, as the kernel shows it in `/proc`
/// (the socket's peers are compared with it); `u32::MAX` when unreadable,
/// which matches no peer.
fn own_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX)
}

async fn not_found(uri: axum::http::Uri) -> Response {
    if let Some(answer) = api::hooks::unknown_hook_path(uri.path()) {
        return answer;
    }
    ApiError::not_found(format!(
        "no endpoint {}: see docs/http-api.md for the API",
        uri.path()
    ))
    .into_response()
}

async fn agent_not_found(uri: axum::http::Uri) -> Response {
    if let Some(answer) = api::hooks::unknown_hook_path(uri.path()) {
        return answer;
    }
    ApiError::not_found(format!(
        "no endpoint {} for an agent on this socket (operators use their own token over TCP, \
         or the daemon's own user): see docs/http-api.md",
        uri.path()
    ))
    .into_response()
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

/// `url` as the base of links: checked, without a trailing `/`.
fn public_base(url: &str) -> Result<String, String> {
    let trimmed = url.trim().trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .ok_or_else(|| {
            format!("public URL {url:?} must start with https:// (or http://), e.g. https://toolgate.example.com")
        })?;
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty()
        || rest.contains(['?', '#'])
        || rest.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "public URL {url:?} must name a host and have no query, fragment or spaces, e.g. https://toolgate.example.com or https://example.com/toolgate"
        ));
    }
    Ok(trimmed.to_string())
}

#[cfg(test)]
mod public_url_tests {
    use super::public_base;

    #[test]
    fn a_public_url_is_checked_and_trimmed() {
        assert_eq!(
            public_base("https://tg.example.com/").unwrap(),
            "https://tg.example.com"
        );
        assert_eq!(
            public_base("http://10.0.0.5:7878/toolgate").unwrap(),
            "http://10.0.0.5:7878/toolgate"
        );
        for bad in [
            "tg.example.com",
            "https://",
            "https://x?y=1",
            "https://a b",
            "ftp://x",
        ] {
            assert!(public_base(bad).is_err(), "{bad}");
        }
    }
}
