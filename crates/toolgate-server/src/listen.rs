//! Accepting connections with limits the default `axum::serve` lacks: a
//! deadline for request headers (a client that never finishes them is
//! dropped), a cap on open connections (below the file-descriptor limit, so
//! the daemon can always open its database and answer), and a bounded
//! graceful shutdown.

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::Semaphore;

/// A client must send a request's headers within this.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long shutdown waits for requests in flight.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// File descriptors kept free for the database, logs and the file watcher.
const FD_RESERVE: u64 = 256;

/// Open connections allowed: the soft file-descriptor limit less a reserve,
/// between 64 and 16,384.
pub fn max_connections() -> usize {
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3).map(str::to_string))
        })
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(1024);
    soft.saturating_sub(FD_RESERVE).clamp(64, 16_384) as usize
}

/// Serves `router` on `listener` until `shutdown` completes, then stops
/// accepting and waits up to [`SHUTDOWN_GRACE`] for connections to finish.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    serve_on(Some((listener, router)), None, shutdown).await;
}

/// A Unix socket to serve, and what each peer may reach: the daemon's own
/// user gets every route (operator endpoints still need an operator
/// credential), any other user only the agent's routes.
pub struct UnixServe {
    /// The bound socket.
    pub listener: UnixListener,
    /// The routes for a peer running as the daemon's own user.
    pub own: Router,
    /// The routes for every other peer.
    pub others: Router,
    /// The daemon's user id.
    pub own_uid: u32,
}

/// Serves a TCP listener, a Unix socket, or both, under one connection cap,
/// until `shutdown` completes; then stops accepting and waits up to
/// [`SHUTDOWN_GRACE`] for connections to finish.
pub async fn serve_on(
    tcp: Option<(TcpListener, Router)>,
    unix: Option<UnixServe>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    // HTTP/1 only: the API needs nothing more, and the auto-detecting
    // builder's version sniff and idle HTTP/2 connections have no deadline,
    // so silent clients could hold every slot.
    let mut builder = Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let limit = Arc::new(Semaphore::new(max_connections()));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = limit.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = &mut shutdown => break,
        };
        let accept_tcp = async {
            match &tcp {
                Some((l, _)) => l.accept().await.map(|(s, _)| s),
                None => std::future::pending().await,
            }
        };
        let accept_unix = async {
            match &unix {
                Some(u) => u.listener.accept().await.map(|(s, _)| s),
                None => std::future::pending().await,
            }
        };
        let accepted = tokio::select! {
            a = accept_tcp => a.map(Conn::Tcp),
            a = accept_unix => a.map(Conn::Unix),
            _ = &mut shutdown => break,
        };
        let conn = match accepted {
            Ok(c) => c,
            Err(e) => {
                // Out of descriptors or similar: back off instead of spinning.
                tracing::warn!(error = %e, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let (builder, watcher) = (builder.clone(), graceful.watcher());
        match conn {
            Conn::Tcp(stream) => {
                let Some((_, router)) = &tcp else { continue };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(router.clone());
                tokio::spawn(async move {
                    // hyper's header deadline starts with the first byte; a
                    // client that connects and says nothing is dropped here
                    // instead.
                    let mut first = [0u8; 1];
                    match tokio::time::timeout(HEADER_READ_TIMEOUT, stream.peek(&mut first)).await {
                        Ok(Ok(n)) if n > 0 => {}
                        _ => return,
                    }
                    let conn = builder
                        .serve_connection_with_upgrades(TokioIo::new(stream), service)
                        .into_owned();
                    let _ = watcher.watch(conn).await;
                    drop(permit);
                });
            }
            Conn::Unix(stream) => {
                let Some(u) = &unix else { continue };
                // The kernel's word on who connected: no credential of the
                // client's own choosing picks its routes.
                let router = match stream.peer_cred() {
                    Ok(c) if c.uid() == u.own_uid => u.own.clone(),
                    Ok(_) => u.others.clone(),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read a socket peer's credentials");
                        continue;
                    }
                };
                let service = TowerToHyperService::new(router);
                tokio::spawn(async move {
                    if !matches!(
                        tokio::time::timeout(HEADER_READ_TIMEOUT, stream.readable()).await,
                        Ok(Ok(()))
                    ) {
                        return;
                    }
                    let conn = builder
                        .serve_connection_with_upgrades(TokioIo::new(stream), service)
                        .into_owned();
                    let _ = watcher.watch(conn).await;
                    drop(permit);
                });
            }
        }
    }
    drop(tcp);
    drop(unix);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {SHUTDOWN_GRACE:?}; stopping anyway");
    }
}

/// An accepted connection.
enum Conn {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

/// Binds the daemon's Unix socket at `path`, connectable by every local
/// user (mode 0666: who may reach it is decided by the directory it is in,
/// and what a peer may do by its uid). A stale socket left by a daemon that
/// died is replaced; a live one, or anything that is not a socket, is an
/// error saying what to do.
pub fn bind_socket(path: &Path) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AddrInUse,
                    format!(
                        "a daemon already listens on {} (stop it, or pick another --socket)",
                        path.display()
                    ),
                ));
            }
            Err(_) => std::fs::remove_file(path)?,
        },
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!(
                    "{} exists and is not a socket: remove it, or pick another --socket",
                    path.display()
                ),
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cap_stays_in_bounds() {
        let n = super::max_connections();
        assert!((64..=16_384).contains(&n), "{n}");
    }
}
