//! Links the `toolgate` binary as a position-dependent executable, with the
//! functions a short-lived process runs placed together.
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
//! On Linux with glibc, `.cargo/config.toml` goes further and links the
//! whole C runtime statically, at a fixed address (`-C relocation-model=
//! static`, which implies this flag): no dynamic loader at all.
//!
//! What is given up is address-space randomization of the binary's image —
//! with the static link, libc's too (stack, heap and mappings are still
//! randomized) — in a process that hands attacker-supplied text to C
//! parsers (tree-sitter, SQLite). `RUSTFLAGS= TOOLGATE_PIE=1 cargo build
//! --release` builds the usual dynamically linked PIE instead, for an
//! installation that prefers that to ~0.9 ms per call
//! (docs/decisions/0006-hook-process-start-up.md).

use std::path::Path;

fn main() {
    let pie = std::env::var_os("TOOLGATE_PIE").is_some_and(|v| v == "1");
    if !pie && std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bin=toolgate=-no-pie");
    }
    hot_functions_first();
    println!("cargo::rerun-if-env-changed=TOOLGATE_PIE");
    println!("cargo::rerun-if-changed=build.rs");
}

/// Asks the linker to place the functions a short-lived process runs
/// (`hot-functions.txt`, written by `scripts/hot-functions`) together at the
/// start of the code: the kernel maps code in 64 KB windows, one page fault
/// each, and a hook's ~1,300 functions were spread over ~75 of them. Only
/// with LLD, the default linker of `x86_64-unknown-linux-gnu`, and not when
/// the flags ask for another linker. Names the binary no longer has (their
/// hashes change with the code) are skipped without a warning.
fn hot_functions_first() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("hot-functions.txt");
    println!("cargo::rerun-if-changed={}", file.display());
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let other_linker = flags
        .split('\x1f')
        .any(|f| (f.contains("linker") && !f.contains("lld")) || f.contains("-lld"));
    if target != "x86_64-unknown-linux-gnu" || other_linker || !file.exists() {
        return;
    }
    println!(
        "cargo::rustc-link-arg-bin=toolgate=-Wl,--symbol-ordering-file={}",
        file.display()
    );
    println!("cargo::rustc-link-arg-bin=toolgate=-Wl,--no-warn-symbol-ordering");
}
