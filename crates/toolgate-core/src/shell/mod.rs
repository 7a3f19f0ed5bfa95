//! Shell analysis: every simple command a command string would run.
mod types;
pub use types::*;
