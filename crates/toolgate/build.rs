//! Links the `toolgate` binary as a position-dependent executable, and
//! prepares the built-in default policy for the processes that decide.
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
    default_policy_for_deciding();
    let pie = std::env::var_os("TOOLGATE_PIE").is_some_and(|v| v == "1");
    if !pie && std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bin=toolgate=-no-pie");
    }
    hot_functions_first();
    println!("cargo::rerun-if-env-changed=TOOLGATE_PIE");
    println!("cargo::rerun-if-changed=build.rs");
}

/// Writes `OUT_DIR/default_policy_for_deciding.toml`: `policies/default.toml`
/// with its comments and `[[test]]` cases blanked out, line for line, so
/// every line and column a decision or an error names is the shipped file's.
/// A process that decides on the built-in default (a hook, one `check`)
/// parses this instead: the comments and test cases were 80% of the text,
/// and most of the TOML parser's 0.3 M instructions per process. The test
/// cases still run in the test suite and in CI (`toolgate policy test`).
///
/// The blanking is line-based, so the build checks it: both texts must
/// parse to the same TOML document, the tests aside, or the build fails.
fn default_policy_for_deciding() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/default.toml");
    println!("cargo::rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(&source)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
    let mut out = String::with_capacity(text.len());
    let mut in_test = false;
    for line in text.lines() {
        let head = line.trim_start();
        if head.starts_with('[') {
            in_test = head.starts_with("[[test]]");
        }
        if !(in_test || head.starts_with('#')) {
            out.push_str(line);
        }
        out.push('\n');
    }
    let parse = |what: &str, text: &str| -> toml::Table {
        text.parse()
            .unwrap_or_else(|e| panic!("{what} does not parse: {e}"))
    };
    let mut whole = parse("policies/default.toml", &text);
    whole.remove("test");
    let stripped = parse("the default policy without its tests", &out);
    if whole != stripped {
        panic!(
            "blanking the comments and [[test]] cases of policies/default.toml changed \
             what it says (a multi-line string?): keep them on lines of their own"
        );
    }
    let dest = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR"))
        .join("default_policy_for_deciding.toml");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", dest.display()));
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
