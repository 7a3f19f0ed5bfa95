//! `toolgate serve`: the daemon.

use anyhow::{Context, Result, anyhow};
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use toolgate_gate::SystemClock;
use toolgate_server::{PolicySource, Server, ServerConfig, TokenSource, Tokens};

use crate::check::{daemon_env, load_env};
use crate::state::DataDirArgs;

/// Arguments of `toolgate serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Policy file (TOML), reloaded when it changes or on SIGHUP; the
    /// built-in default policy when absent.
    #[arg(long, env = "TOOLGATE_POLICY")]
    policy: Option<PathBuf>,
    /// Address to listen on. Anything but loopback exposes the API to the
    /// network over plain HTTP: put TLS in front of it.
    #[arg(long, default_value = "127.0.0.1:7878", env = "TOOLGATE_LISTEN")]
    listen: SocketAddr,
}

pub(crate) fn run(args: ServeArgs, data: &DataDirArgs) -> ExitCode {
    init_logs();
    match serve(args, data) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolgate serve: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}

fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colour codes only for a person at a terminal, never into a log file.
    use std::io::IsTerminal;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_writer(std::io::stderr)
        .try_init();
}

fn serve(args: ServeArgs, data: &DataDirArgs) -> Result<()> {
    let (dir, _) = data.resolve();
    let store = data.open()?;
    // With --store elsewhere, nothing else has made the data directory the
    // tokens and the link key live in.
    crate::state::ensure_private_dir(&dir)?;
    let tokens = Tokens::load(
        &dir,
        std::env::var("TOOLGATE_AGENT_TOKEN").ok(),
        std::env::var("TOOLGATE_OPERATOR_TOKEN").ok(),
    )
    .context("cannot set up the API tokens")?;
    let policy_path = args.policy.clone();
    // The protected set: the data directory and the port served, besides
    // the policy's own files (the bundle adds those).
    let own = crate::check::own_places(Some(&dir)).port(args.listen.port());
    let loader = Arc::new(move || {
        toolgate_bundle::load(policy_path.as_deref(), &load_env())
            .map(|b| b.protecting(&own))
            .map_err(|e| e.to_string())
    });
    let config = ServerConfig {
        listen: args.listen,
        store: store.clone(),
        clock: Arc::new(SystemClock),
        tokens: tokens.clone(),
        policy: PolicySource { loader },
        base: daemon_env(),
        link_key: Some(
            toolgate_server::auth::load_link_key(
                &data.resolve().0,
                std::env::var("TOOLGATE_LINK_KEY").ok(),
            )
            .map_err(|e| anyhow::anyhow!("{e}"))?,
        ),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("toolgate-http")
        // Store calls run on blocking threads; a few suffice (the store has
        // one writer), and each extra thread can keep its own malloc arena.
        .max_blocking_threads(16)
        .build()
        .context("cannot start the async runtime")?;
    let served = runtime.block_on(async move {
        let server = Server::bind(config).await.map_err(|e| anyhow!("{e}"))?;
        let addr = server.local_addr()?;
        // A sign-in code is a credential: printed for a person at a
        // terminal, never into a log file.
        use std::io::IsTerminal;
        let link = std::io::stderr()
            .is_terminal()
            .then(|| server.sign_in_link().ok())
            .flatten();
        announce(
            &addr,
            &tokens,
            &store.location(),
            args.policy.as_deref(),
            link.as_deref(),
        );
        server.run(shutdown_signal()).await?;
        Ok::<(), anyhow::Error>(())
    });
    // Blocking work still queued (a store locked by another process) must
    // not hold the exit: what it would record is not acknowledged anyway.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    served?;
    eprintln!("toolgate serve: stopped");
    Ok(())
}

fn announce(
    addr: &SocketAddr,
    tokens: &Tokens,
    store: &str,
    policy: Option<&std::path::Path>,
    sign_in: Option<&str>,
) {
    let where_ = |s: &TokenSource| match s {
        TokenSource::Env(v) => format!("from ${v}"),
        TokenSource::File(p) => p.display().to_string(),
    };
    eprintln!("toolgate serve: listening on http://{addr}");
    match sign_in {
        Some(link) => eprintln!(
            "  control UI     {link}  (signs this browser in; works once, for 15 minutes; `toolgate ui` prints another)"
        ),
        None => eprintln!("  control UI     http://{addr}/  (`toolgate ui` prints a sign-in link)"),
    }
    eprintln!("  agent token    {}", where_(&tokens.agent_source));
    eprintln!("  operator token {}", where_(&tokens.operator_source));
    eprintln!("  state          {store}");
    match policy {
        Some(p) => eprintln!(
            "  policy         {} (reloads on change and SIGHUP)",
            p.display()
        ),
        None => eprintln!("  policy         built-in default (pass --policy FILE to use your own)"),
    }
    if !addr.ip().is_loopback() {
        eprintln!(
            "  warning: {addr} is reachable from the network and tokens travel in plain HTTP; \
             put a TLS proxy in front or listen on 127.0.0.1"
        );
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
