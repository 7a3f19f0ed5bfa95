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
    /// built-in default policy when absent (or `builtin`).
    #[arg(long, env = "TOOLGATE_POLICY", value_name = "FILE|builtin")]
    policy: Option<PathBuf>,
    /// Address to listen on (`127.0.0.1:7878`, `localhost:7878`, or a bare
    /// port meaning 127.0.0.1:PORT), or `none` for the socket only.
    /// Anything but loopback exposes the API to the network over plain
    /// HTTP: put TLS in front of it.
    #[arg(
        long,
        default_value = "127.0.0.1:7878",
        env = "TOOLGATE_LISTEN",
        value_name = "ADDR|none"
    )]
    listen: String,
    /// Not an option of `serve`: refused with the `--listen` to use
    /// instead.
    #[arg(long, hide = true, value_name = "PORT", value_parser = no_port_option)]
    port: Option<String>,
    /// A Unix socket to listen on too (e.g. /run/toolgate/toolgate.sock),
    /// in a directory only the daemon's user can write: hooks check that
    /// the socket is the daemon user's. Peers running as another user
    /// reach the agent's endpoints only, and need no token there.
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Where your team reaches this daemon (`https://toolgate.example.com`,
    /// the TLS proxy in front of it): every link toolgate sends (chat
    /// notices, one-time approve and deny links, `approve_url` in decisions,
    /// sign-in links from `toolgate ui`) starts with it instead of the
    /// listen address, which behind a proxy is a loopback address nobody
    /// else can open.
    #[arg(long, env = "TOOLGATE_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,
    /// Serve a policy that a user other than root can change (same-user
    /// mode); without it such a policy is refused, at start and on reload.
    #[arg(long)]
    allow_writable_policy: bool,
}

/// `--port PORT`: always refused, saying what to write instead (a bare
/// port means loopback, never every interface).
fn no_port_option(port: &str) -> Result<String, String> {
    let port = port.trim();
    let shown = if port.parse::<u16>().is_ok() {
        port
    } else {
        "PORT"
    };
    Err(format!(
        "toolgate serve has no --port: use --listen 127.0.0.1:{shown} (or --listen {shown}, \
         which means the same)"
    ))
}

/// Reads `--listen`: `none`; a bare port, meaning 127.0.0.1:PORT (never
/// every interface); `localhost:PORT`, meaning 127.0.0.1:PORT; or an
/// address such as `127.0.0.1:7878` or `[::1]:7878`.
fn listen_addr(text: &str) -> Result<Option<SocketAddr>> {
    let l = text.trim();
    if l.eq_ignore_ascii_case(crate::decider::NONE) {
        return Ok(None);
    }
    let loopback = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
    if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) {
        return l.parse::<u16>().map(|p| Some(loopback(p))).map_err(|_| {
            anyhow!("--listen {l:?}: a port is a number from 0 to 65535, such as 7878")
        });
    }
    if let Some((host, port)) = l.rsplit_once(':')
        && host.eq_ignore_ascii_case("localhost")
    {
        return port.parse::<u16>().map(|p| Some(loopback(p))).map_err(|_| {
            anyhow!("--listen {l:?}: the port after localhost: is a number from 0 to 65535")
        });
    }
    l.parse::<SocketAddr>().map(Some).map_err(|e| {
        anyhow!(
            "--listen {l:?}: {e}; give an address such as 127.0.0.1:7878, localhost:7878, a \
             port (7878, on 127.0.0.1), or none"
        )
    })
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
    if let Some(port) = &args.port {
        // The value parser refuses it first; kept for any other way in.
        anyhow::bail!("{}", no_port_option(port).unwrap_err());
    }
    let tcp = listen_addr(&args.listen)?;
    let socket = args
        .socket
        .as_deref()
        .map(crate::install_cmd::absolute)
        .transpose()?;
    if tcp.is_none() && socket.is_none() {
        anyhow::bail!("--listen none needs --socket PATH: the daemon must listen somewhere");
    }
    // The data directory holds the tokens and keys: created private, and
    // refused when it is open to other users.
    crate::state::ensure_private_dir(&dir)?;
    let store = data.open()?;
    let daemon_key = toolgate_gate::DaemonKey::load_or_create(&dir)
        .map_err(|e| anyhow!("the daemon's signing key: {e}"))?;
    let tokens = Tokens::load(
        &dir,
        std::env::var("TOOLGATE_AGENT_TOKEN").ok(),
        std::env::var("TOOLGATE_OPERATOR_TOKEN").ok(),
    )
    .context("cannot set up the API tokens")?;
    let policy_path = crate::decider::policy_file(args.policy.as_deref()).map(PathBuf::from);
    let shown_policy = policy_path.clone();
    let guard = if args.allow_writable_policy {
        warn_writable(policy_path.as_deref());
        toolgate_bundle::PolicyGuard::Allowed
    } else {
        toolgate_bundle::PolicyGuard::Refuse(toolgate_bundle::Writers::AnyButRoot)
    };
    // The protected set: the data directory, the port and the socket
    // served, besides the policy's own files (the bundle adds those).
    let mut own = crate::check::own_places(Some(&dir)).pid(std::process::id());
    if let Some(t) = tcp {
        own = own.port(t.port());
    }
    if let Some(s) = &socket {
        own = own.socket(&s.to_string_lossy());
    }
    let loader = Arc::new(move || {
        toolgate_bundle::load_guarded(policy_path.as_deref(), &load_env(), guard)
            .map(|b| b.protecting(&own))
            .map_err(|e| e.to_string())
    });
    let config = ServerConfig {
        listen: tcp.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0))),
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
    let listening = toolgate_server::Listening {
        tcp: tcp.is_some(),
        socket,
        daemon_key: Some(daemon_key),
    };
    // Hooks deciding in their own process read it to know this daemon's
    // process by number (`kill 4242` after a `pgrep` in an earlier call).
    let pid_file = dir.join(crate::check::PID_FILE);
    write_pid_file(&pid_file);
    let served = runtime.block_on(async move {
        let server = Server::bind_with(config, listening)
            .await
            .map_err(|e| anyhow!("{e}"))?;
        // One key signs the answers and the audit log's checkpoints
        // (docs/audit.md).
        server.sign_audit_with(server.daemon_key());
        if let Some(url) = args.public_url.as_deref() {
            server
                .set_public_url(url)
                .map_err(|e| anyhow!("--public-url: {e}"))?;
        }
        let addr = server.local_addr().ok();
        // A sign-in code is a credential: printed for a person at a
        // terminal, never into a log file.
        use std::io::IsTerminal;
        let link = std::io::stderr()
            .is_terminal()
            .then(|| server.sign_in_link().ok())
            .flatten();
        announce(&Announced {
            addr: addr.as_ref(),
            socket: server.socket_path(),
            key: &server.daemon_public_key().to_string(),
            tokens: &tokens,
            store: &store.location(),
            policy: shown_policy.as_deref(),
            sign_in: link.as_deref(),
        });
        server.run(shutdown_signal()).await?;
        Ok::<(), anyhow::Error>(())
    });
    // Blocking work still queued (a store locked by another process) must
    // not hold the exit: what it would record is not acknowledged anyway.
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    // Only ours: another daemon started on the directory since owns it now.
    if std::fs::read_to_string(&pid_file).is_ok_and(|t| t.trim() == std::process::id().to_string())
    {
        let _ = std::fs::remove_file(&pid_file);
    }
    served?;
    eprintln!("toolgate serve: stopped");
    Ok(())
}

/// Writes this process's id to `path` (private, replaced whole). A daemon
/// that cannot write it still serves: the file only adds protection.
fn write_pid_file(path: &std::path::Path) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension("pid.tmp");
    let _ = std::fs::remove_file(&tmp);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| writeln!(f, "{}", std::process::id()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
}

/// What the start-up message says.
struct Announced<'a> {
    addr: Option<&'a SocketAddr>,
    socket: Option<&'a std::path::Path>,
    key: &'a str,
    tokens: &'a Tokens,
    store: &'a str,
    policy: Option<&'a std::path::Path>,
    sign_in: Option<&'a str>,
}

fn announce(a: &Announced<'_>) {
    let where_ = |s: &TokenSource| match s {
        TokenSource::Env(v) => format!("from ${v}"),
        TokenSource::File(p) => p.display().to_string(),
    };
    let (tokens, store, policy) = (a.tokens, a.store, a.policy);
    // Tests and scripts wait for the first line naming where it listens.
    if let Some(addr) = a.addr {
        eprintln!("toolgate serve: listening on http://{addr}");
    }
    if let Some(p) = a.socket {
        eprintln!("toolgate serve: listening on unix:{}", p.display());
    }
    match (a.sign_in, a.addr) {
        (Some(link), _) => eprintln!(
            "  control UI     {link}  (signs this browser in; works once, for 15 minutes; `toolgate ui` prints another)"
        ),
        (None, Some(addr)) => {
            eprintln!("  control UI     http://{addr}/  (`toolgate ui` prints a sign-in link)")
        }
        (None, None) => eprintln!("  control UI     none (no --listen address)"),
    }
    eprintln!(
        "  daemon key     {}  (hooks pin it: toolgate install <runtime> --url … --daemon-key …)",
        a.key
    );
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
    if let Some(addr) = a.addr.filter(|addr| !addr.ip().is_loopback()) {
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

/// Says so when `--allow-writable-policy` lets through a policy others can
/// change.
fn warn_writable(policy: Option<&std::path::Path>) {
    let Some(path) = policy else {
        return;
    };
    let files = [std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())];
    let cwd = std::env::current_dir().unwrap_or_default();
    if let Some(w) =
        toolgate_bundle::agent_writable(&files, toolgate_bundle::Writers::AnyButRoot, &cwd)
    {
        eprintln!(
            "toolgate serve: warning: --allow-writable-policy: {} {}; an agent running as that \
             user can rewrite the policy (same-user mode: protected by judgement only)",
            w.path.display(),
            w.why
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bare port and `localhost:PORT` mean loopback; a bare port never
    /// means every interface; anything else is an address or refused.
    #[test]
    fn listen_takes_a_port_localhost_or_an_address() {
        let at = |t: &str| listen_addr(t).unwrap().map(|a| a.to_string());
        assert_eq!(at("7881").as_deref(), Some("127.0.0.1:7881"));
        assert_eq!(at("localhost:7882").as_deref(), Some("127.0.0.1:7882"));
        assert_eq!(at("LOCALHOST:7882").as_deref(), Some("127.0.0.1:7882"));
        assert_eq!(at("0.0.0.0:7878").as_deref(), Some("0.0.0.0:7878"));
        assert_eq!(at("[::1]:7878").as_deref(), Some("[::1]:7878"));
        assert_eq!(at("none"), None);
        for bad in ["99999", "localhost:http", "localhost", "example.com:80", ""] {
            let e = listen_addr(bad).unwrap_err().to_string();
            assert!(e.contains("--listen"), "{bad}: {e}");
        }
        let e = no_port_option("7881").unwrap_err();
        assert!(e.contains("--listen 127.0.0.1:7881"), "{e}");
    }
}
