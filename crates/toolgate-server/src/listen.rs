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
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
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
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of descriptors or similar: back off instead of spinning.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let (builder, watcher) = (builder.clone(), graceful.watcher());
        tokio::spawn(async move {
            // hyper's header deadline starts with the first byte; a client
            // that connects and says nothing is dropped here instead.
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
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after {SHUTDOWN_GRACE:?}; stopping anyway");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cap_stays_in_bounds() {
        let n = super::max_connections();
        assert!((64..=16_384).contains(&n), "{n}");
    }
}
