//! The knowledge gate (seed 004, issue 6): what a call is about, so the SOP
//! sections and memories that apply can be shown before it runs. Pure: the
//! caller reads SOP files and the memory store.
//!
//! Built so far: [`context`], the facts extracted from a call. Matching,
//! SOP sections, memories and enforcement are still to come (issue 6).

pub mod context;
