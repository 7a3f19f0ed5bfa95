//! The knowledge gate (docs/knowledge.md): what a call is about
//! ([`context`]), the SOPs ([`sop`]) and memories ([`memory`]) that apply to
//! it, chosen by the `[knowledge]` policy section ([`settings`]), and
//! whether they must be acknowledged before it runs ([`enforce`]). Pure:
//! the caller reads SOP files and the memory store and hands in what it
//! found.

pub mod context;
pub mod enforce;
pub mod memory;
pub mod settings;
pub mod sop;
