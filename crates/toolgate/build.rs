//! Links the `toolgate` binary as a position-dependent executable.
//!
//! `toolgate hook` is one process per tool call, so start-up is on every
//! call's path. A position-independent executable has every pointer in its
//! static data (the rule tables the build generates, the automata index,
//! vtables) relocated by the loader at start, which writes — and so faults
//! in — every page that holds one: about 170 page faults, some 0.7 ms, per
//! process (scripts/bench-hook). At a fixed address nothing is relocated and
//! a page is read only if a call uses it. Paired in one run, the PIE build's
//! hook took 2.81 ms and this one 2.42 ms; `check --stateless` 1.81 and 1.42.
//!
//! What is given up is address-space randomization of the binary's own
//! image (stack, heap and libraries are still randomized), in a process
//! that hands attacker-supplied text to C parsers (tree-sitter, SQLite).
//! `TOOLGATE_PIE=1 cargo build --release` keeps the default PIE link for an
//! installation that prefers that to the 0.4 ms; tables without pointers
//! would remove the trade-off (ARCHITECTURE.md, "Cost of one short-lived
//! process").

fn main() {
    let pie = std::env::var_os("TOOLGATE_PIE").is_some_and(|v| v == "1");
    if !pie && std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bin=toolgate=-no-pie");
    }
    println!("cargo::rerun-if-env-changed=TOOLGATE_PIE");
    println!("cargo::rerun-if-changed=build.rs");
}
