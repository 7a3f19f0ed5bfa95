//! toolgate's rule packs at build time.
//!
//! `toolgate-core`'s build script calls [`build`]: it reads every pack in
//! `crates/toolgate-core/packs/`, checks it completely (its TOML, every
//! field, every set reference, every regex and glob, as the catalogue will
//! use them), and writes two files the core embeds:
//!
//! - `catalogue.rs`: the rule tables as Rust statics (rules indexed by the
//!   program they judge, options, sets, patterns), so a process builds
//!   nothing at start: the catalogue is data in the binary;
//! - `automata.bin`: every regex's and every path set's automata, sparse
//!   DFAs serialized here and read in place at run time
//!   (`regex_automata::dfa::sparse::DFA::from_bytes`), so matching a rule
//!   compiles nothing either.
//!
//! A pack that is wrong fails the build with its file and line.
//!
//! This crate is a build dependency only: nothing of it (TOML, the regex
//! compiler, globset) is linked into toolgate.

#![warn(missing_docs)]

pub mod automata;
mod codegen;
mod compile;
mod load;
pub mod model;
pub mod servers;

pub use compile::{
    Compiled, CompiledSet, Exec, Header, PathRule, Pattern, Rule, SetRef, fences, path_set,
};
pub use load::{Pack, PackError, load};

use std::path::Path;

/// What [`build`] writes.
#[derive(Debug)]
pub struct Output {
    /// The Rust source of the catalogue's statics.
    pub rust: String,
    /// The automata the statics point into (8-byte aligned entries).
    pub automata: Vec<u8>,
    /// The pack files read, for `cargo::rerun-if-changed`.
    pub files: Vec<std::path::PathBuf>,
}

/// Reads, checks and compiles the packs in `dir`, in `order` (every
/// `*.toml` in `dir` must be listed, so a new pack is never silently left
/// out); the error names the file and line of what is wrong.
pub fn build(dir: &Path, order: &[&str]) -> Result<Output, PackError> {
    let packs = load(dir, order)?;
    let compiled = compile::compile(&packs)?;
    Ok(Output {
        rust: codegen::rust(&compiled),
        automata: compiled.automata.clone(),
        files: packs.iter().map(|p| p.path.clone()).collect(),
    })
}
