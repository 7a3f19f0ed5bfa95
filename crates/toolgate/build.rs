//! Links the `toolgate` binary position independent with full RELRO, and
//! with the functions a short-lived process runs placed together.
//!
//! `toolgate hook` is one process per tool call, so start-up is on every
//! call's path; the daemon, in separated mode, parses agent-written text
//! with C code (tree-sitter, SQLite) as a user more privileged than the
//! agent's. On Linux with glibc, `.cargo/config.toml` links the whole C
//! runtime statically and position independent (static-pie): no dynamic
//! loader, and every process at a random address. Full RELRO (`-z relro -z
//! now`) is asked for here explicitly, so no linker default can drop it:
//! the relocated data and the GOT are read-only before `main` runs.
//!
//! The other choice, a fixed address (`-C relocation-model=static`), saves
//! a hook ~0.6 ms of relocations but gives every process the same layout;
//! it was measured and set aside
//! (docs/decisions/0021-aslr-for-every-process.md), and `toolgate setup
//! separated` refuses such a binary.

use std::path::Path;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bin=toolgate=-Wl,-z,relro,-z,now");
    }
    hot_functions_first();
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
