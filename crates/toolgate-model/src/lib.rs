//! The model approver's client (`llm_evaluation`, the fast model stage;
//! docs/approvals.md).
//!
//! When the static rules are unsure of a call, the integrator may ask a
//! small, fast model for a structured risk assessment. This crate makes that
//! one request and nothing more: it never decides. The policy engine does,
//! with [`vote_for`] as the pure mapping from an outcome to an approval
//! factor's vote.
//!
//! The flow:
//! 1. [`ModelConfig`] (from TOML, validated) says where the model is and how
//!    long to wait for it.
//! 2. [`ContextPackage`] is what the model sees: the call, redacted with
//!    toolgate-core's redaction and bounded in size, plus the static
//!    assessment. Its fields are private so nothing unredacted can be put in.
//! 3. [`ModelClient::assess`] sends it to an OpenAI-compatible
//!    `/chat/completions` endpoint and returns a [`ModelOutcome`]: either a
//!    schema-valid, confident [`ModelAssessment`], or an [`Abstention`].
//!
//! Fail closed: a timeout, a network error, an HTTP error, any answer that
//! is not exactly the schema, or a confidence below the configured minimum
//! is an abstention, never an approval.
//!
//! Layout: `config.rs` (settings), `context.rs` and `bound.rs` (what is
//! sent), `prompt.rs` (system prompt, schema, request body), `assessment.rs`
//! (parsing the answer), `outcome.rs` (results), `client.rs` (HTTP),
//! `vote.rs` (outcome → vote).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod assessment;
mod bound;
mod client;
mod config;
mod context;
mod outcome;
mod prompt;
mod vote;

pub use assessment::{MAX_LABEL_CHARS, MAX_LABELS, MAX_RATIONALE_CHARS, ModelAssessment};
pub use client::ModelClient;
pub use config::{ConfigError, ModelConfig};
pub use context::{ContextPackage, StaticAssessment};
pub use outcome::{Abstention, ModelOutcome};
pub use prompt::{SCHEMA_NAME, SYSTEM_PROMPT, response_schema};
pub use vote::vote_for;
