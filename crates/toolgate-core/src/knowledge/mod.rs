//! The knowledge gate (seed 004, issue 6): what a call is about, the SOP
//! sections and memories that apply to it, and whether they must be
//! acknowledged before it runs. Pure: the caller reads SOP files and the
//! memory store and hands in what it found.

pub mod context;
pub mod memory;
