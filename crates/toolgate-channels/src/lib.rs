//! Where approvals reach people (docs/channels.md): channel adapters over real HTTP
//! APIs, verified callbacks, signed links, and fan-out with retries.
//!
//! - Out: a [`Notice`] goes to every configured [`Channel`] (generic
//!   signed [`webhook`], [`slack`], [`telegram`], [`discord`]) through
//!   [`fan_out`], which retries each target on its own and reports
//!   [`TargetStatus`] after every try; when the approval ends,
//!   [`fan_out_resolved`] replaces the buttons with the [`Resolution`].
//! - Back: a button press arrives as a callback that
//!   [`CallbackAuth::accept`] (or each module's `accept`) verifies —
//!   signature, timestamp window, then a [`ReplayGuard`] — before it
//!   becomes a [`ChannelVote`]. Anything unverifiable is an error, never a
//!   vote.
//! - Links: [`LinkSigner`] makes one-time approve/deny links for email or
//!   any channel without buttons.
//!
//! Secrets (bot tokens, signing secrets) are read from environment
//! variables named in the config, kept private in the adapters, and never
//! appear in an error, a `Debug` output or a log line.

#![warn(missing_docs)]

mod callback;
mod channel;
mod config;
mod config_error;
mod crypto;
pub mod discord;
mod fanout;
mod http;
mod json;
mod links;
mod notice;
mod replay;
pub mod slack;
pub mod telegram;
mod vote;
pub mod webhook;

pub use callback::CallbackAuth;
pub use channel::{Channel, ClientOptions, DEFAULT_TIMEOUT, Delivered, DeliveryError};
pub use config::{ChannelConfig, DiscordConfig, Env, SlackConfig, TelegramConfig, WebhookConfig};
pub use config_error::ConfigError;
pub use discord::DiscordChannel;
pub use fanout::{DeliveryState, Phase, RetryPolicy, TargetStatus, fan_out, fan_out_resolved};
pub use links::{LinkAction, LinkClaims, LinkError, LinkSigner};
pub use notice::{Notice, Resolution};
pub use replay::{DEFAULT_REPLAY_CAPACITY, MemoryReplayGuard, ReplayGuard};
pub use slack::SlackChannel;
pub use telegram::TelegramChannel;
pub use vote::{CallbackError, ChannelVote, Inbound};
pub use webhook::WebhookChannel;
