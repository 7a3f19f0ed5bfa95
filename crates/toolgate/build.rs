//! Links the `toolgate` binary as a position-dependent executable.
//!
//! `toolgate hook` is one process per tool call, so start-up is on every
//! call's path. A position-independent executable has every pointer in its
//! static data (the rule tables the build generates, the automata index,
//! vtables) relocated by the loader at start, which writes — and so faults
//! in — every page that holds one: about 170 page faults, some 0.7 ms, per
//! process (scripts/bench-hook). At a fixed address nothing is relocated and
//! a page is read only if a call uses it. Address-space randomization of the
//! binary's own image is what is given up; the stack, heap and libraries are
//! still randomized.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bin=toolgate=-no-pie");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
