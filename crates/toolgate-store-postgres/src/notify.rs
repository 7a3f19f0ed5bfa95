//! Commits across daemons: every write transaction that appended to the
//! audit log sends `NOTIFY toolgate_commits, '<space>:<instance>'` as part
//! of its commit (PostgreSQL delivers it only if the commit succeeds, after
//! it is visible), and [`watch`] listens on a connection of its own, waking
//! its caller for notifications from the same schema (`space`, the lock
//! key's hash of the schema name) sent by another store (`instance`, random
//! per [`crate::PostgresStore`]).
//!
//! The payload is made of two numbers only, so nothing from outside is ever
//! spliced into the statement. A lost listening connection is reconnected
//! (every second until it works), and the caller woken once it is back,
//! since notifications sent meanwhile are gone.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Config, NoTls};

/// The channel every toolgate store notifies and listens on.
pub(crate) const CHANNEL: &str = "toolgate_commits";

/// How long to wait before connecting again after the listening connection
/// failed or ended.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// Who sent a notification: the schema's key and the sending store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sender {
    /// The schema's lock key ([`crate::Keys::space`]).
    pub(crate) space: i32,
    /// The sending store's random instance number.
    pub(crate) instance: u64,
}

impl Sender {
    /// The statement a commit sends, ending in `;`.
    pub(crate) fn statement(&self) -> String {
        format!("NOTIFY {CHANNEL}, '{}:{}';", self.space, self.instance)
    }

    /// Whether `payload` was sent by another store on this schema.
    fn is_other(&self, payload: &str) -> bool {
        let Some((space, instance)) = payload.split_once(':') else {
            return false;
        };
        // A payload that is not two numbers is no store's: it wakes nobody
        // (`parse() != Ok(..)` would call an unreadable instance "other").
        matches!(
            (space.parse::<i32>(), instance.parse::<u64>()),
            (Ok(space), Ok(instance)) if space == self.space && instance != self.instance
        )
    }
}

/// Listens, on the current tokio runtime, for commits by other stores on
/// `me.space` and calls `wake` for each (and once after each reconnect),
/// until the runtime shuts down.
pub(crate) fn watch(config: Config, me: Sender, wake: Arc<dyn Fn() + Send + Sync>) {
    tokio::spawn(async move {
        let mut first = true;
        loop {
            if !first {
                tokio::time::sleep(RECONNECT_AFTER).await;
            }
            match listen(&config, me, &wake, first).await {
                Ok(()) => tracing::warn!(
                    "the connection listening for other daemons' commits closed; connecting again"
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot listen for other daemons' commits; connecting again in 1 s (meanwhile they show up when the audit log is next read)")
                }
            }
            first = false;
        }
    });
}

/// One listening connection, until it ends.
async fn listen(
    config: &Config,
    me: Sender,
    wake: &Arc<dyn Fn() + Send + Sync>,
    first: bool,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    // The connection object does the I/O and hands over notifications; it
    // must be polled for the client's own statements to complete.
    let pump = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send(n.payload().to_string()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    });
    client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
    if !first {
        // Whatever was sent while no connection listened is lost.
        wake();
    }
    while let Some(payload) = rx.recv().await {
        if me.is_other(&payload) {
            wake();
        }
    }
    pump.abort();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_other_stores_on_the_same_schema_wake() {
        let me = Sender {
            space: -42,
            instance: 7,
        };
        assert!(me.is_other("-42:8"));
        assert!(!me.is_other("-42:7"), "its own commit");
        assert!(!me.is_other("41:8"), "another schema");
        assert!(!me.is_other(""));
        assert!(!me.is_other("-42"));
        assert!(!me.is_other("-42:x"));
        assert_eq!(me.statement(), "NOTIFY toolgate_commits, '-42:7';");
    }
}
