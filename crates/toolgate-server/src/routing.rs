//! The approval router's state (docs/channels.md): which chat channels and
//! webhooks `[approvals.routing]` names ([`Router`], rebuilt on reload), the
//! typed approval changes that drive it ([`ApprovalChange`]), and what was
//! sent for each open approval ([`Deliveries`]). The daemon's `App` holds
//! these; `dispatch` does the sending. Imports nothing of the daemon's, so
//! `App` can hold it without a cycle.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use toolgate_channels::{
    CallbackAuth, Channel, ChannelConfig, Delivered, DeliveryState, Notice, Resolution,
    RetryPolicy, TargetStatus,
};
use toolgate_core::{ApprovalId, RouteTarget, Routing, RoutingMode};

/// What happened to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// It was created: someone must decide.
    Created,
    /// Its quorum was reached.
    Approved,
    /// Someone denied it.
    Denied,
    /// Its time ran out.
    Expired,
}

impl Change {
    /// The change an audit kind (`approval.created`, …) records, if any.
    pub fn from_audit(event: &str) -> Option<Change> {
        match event {
            "created" => Some(Change::Created),
            "approved" => Some(Change::Approved),
            "denied" => Some(Change::Denied),
            "expired" => Some(Change::Expired),
            _ => None,
        }
    }
}

/// One approval changed (seen by the audit tail, so changes made by any
/// process on the store count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalChange {
    /// The approval.
    pub id: ApprovalId,
    /// What happened.
    pub change: Change,
}

/// One configured target, ready or not.
pub struct Routed {
    /// Its routing settings.
    pub spec: RouteTarget,
    /// The adapter, when it could be built.
    pub channel: Option<Arc<dyn Channel>>,
    /// How its callbacks are verified (chat services with buttons).
    pub auth: Option<CallbackAuth>,
    /// Why it could not be built (a variable unset, …).
    pub error: Option<String>,
}

/// The targets of the policy in force.
pub struct Router {
    /// Which targets a request goes to.
    pub mode: RoutingMode,
    /// Every target, ready or not.
    pub targets: Vec<Routed>,
    /// Tries per target.
    pub retry: RetryPolicy,
}

impl Router {
    /// The router `routing` describes, secrets read from the environment.
    /// A target that cannot be built is kept with its error (shown in
    /// `/v1/state`) and skipped.
    pub fn build(routing: &Routing) -> Router {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let targets = routing
            .targets
            .iter()
            .map(|spec| {
                let config: Result<ChannelConfig, String> =
                    toml::Value::Table(spec.adapter.clone())
                        .try_into()
                        .map_err(|e| format!("routing target {:?}: {e}", spec.name));
                let built = config.and_then(|c| {
                    let channel = c.build(&env).map_err(|e| e.to_string())?;
                    let auth = c.callback_auth(&env).map_err(|e| e.to_string())?;
                    Ok((channel, auth))
                });
                match built {
                    Ok((channel, auth)) => Routed {
                        spec: spec.clone(),
                        channel: Some(channel),
                        auth,
                        error: None,
                    },
                    Err(e) => {
                        tracing::error!(target = %spec.name, error = %e, "routing target not ready");
                        Routed {
                            spec: spec.clone(),
                            channel: None,
                            auth: None,
                            error: Some(e),
                        }
                    }
                }
            })
            .collect();
        Router {
            mode: routing.mode,
            targets,
            retry: RetryPolicy::default(),
        }
    }

    /// The target named `name`.
    pub fn target(&self, name: &str) -> Option<&Routed> {
        self.targets.iter().find(|t| t.spec.name == name)
    }

    /// `/v1/state`'s view: the mode and each target's readiness.
    pub fn view(&self) -> serde_json::Value {
        serde_json::json!({
            "mode": self.mode.as_str(),
            "targets": self.targets.iter().map(|t| serde_json::json!({
                "name": t.spec.name,
                "kind": t.spec.adapter.get("kind").and_then(|k| k.as_str()),
                "ready": t.channel.is_some(),
                "error": t.error,
            })).collect::<Vec<_>>(),
        })
    }
}

/// What was sent for one approval, and where each target stands.
#[derive(Default)]
pub(crate) struct Sent {
    /// The notice the request was built from.
    pub(crate) notice: Option<Notice>,
    /// Each target the request reached, with what to update there.
    pub(crate) delivered: Vec<(String, Arc<dyn Channel>, Delivered)>,
    status: BTreeMap<String, TargetStatus>,
    /// How it ended, once it did: a request delivered after that is
    /// updated as soon as it lands.
    pub(crate) resolution: Option<Resolution>,
}

/// Most approvals whose deliveries are remembered.
const REMEMBERED: usize = 10_000;

/// The deliveries of open approvals (in memory: a restarted daemon does
/// not update messages sent before it started).
#[derive(Default)]
pub struct Deliveries {
    sent: Mutex<HashMap<String, Sent>>,
}

impl Deliveries {
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut HashMap<String, Sent>) -> R) -> R {
        f(&mut self.sent.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Each target's status for approval `id`, by target name.
    pub fn status(&self, id: &str) -> Vec<(String, TargetStatus)> {
        self.with(|m| {
            m.get(id)
                .map(|s| {
                    s.status
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default()
        })
    }

    /// What target `name` delivered for approval `id`, if it did.
    pub fn delivered(&self, id: &str, name: &str) -> Option<Delivered> {
        self.with(|m| {
            m.get(id).and_then(|s| {
                s.delivered
                    .iter()
                    .find(|(n, _, _)| n == name)
                    .map(|(_, _, d)| d.clone())
            })
        })
    }

    /// Every remembered approval's target statuses, for `/v1/state`:
    /// `{approval id: {target name: status}}`, open approvals only.
    pub fn open(&self) -> serde_json::Value {
        self.with(|m| {
            m.iter()
                .filter(|(_, s)| s.resolution.is_none() && !s.status.is_empty())
                .map(|(id, s)| {
                    (
                        id.clone(),
                        serde_json::to_value(&s.status).unwrap_or_default(),
                    )
                })
                .collect::<serde_json::Map<_, _>>()
                .into()
        })
    }

    pub(crate) fn report(self: &Arc<Self>, id: &str, name: &str, status: TargetStatus) {
        match &status.state {
            DeliveryState::Failed { error } => {
                tracing::warn!(approval = %id, target = %name, attempts = status.attempts, %error, "approval request not delivered");
            }
            DeliveryState::Retrying { error, .. } => {
                tracing::info!(approval = %id, target = %name, attempts = status.attempts, %error, "approval request delivery failed; retrying");
            }
            _ => {}
        }
        self.with(|m| {
            if m.len() >= REMEMBERED && !m.contains_key(id) {
                m.retain(|_, s| s.resolution.is_none());
                if m.len() >= REMEMBERED {
                    m.clear();
                }
            }
            m.entry(id.to_string())
                .or_default()
                .status
                .insert(name.to_string(), status);
        });
    }
}
