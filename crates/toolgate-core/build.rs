//! Builds the catalogue from `packs/*.toml`, and the MCP server catalogue
//! from `packs/servers/mcp.toml`, at compile time (see the
//! `toolgate-packs` crate): a pack that is wrong fails the build with its
//! file and line, and the binary carries the rule tables and automata ready
//! to use, so no process parses or compiles a pack.

use std::path::PathBuf;

/// The packs, in the order their rules are read (the order in which
/// findings of equal severity are reported).
const PACKS: &[&str] = &[
    "sets.toml",
    "filesystem.toml",
    "system.toml",
    "git.toml",
    "data.toml",
    "infra.toml",
    "network.toml",
    "secrets.toml",
    "tools.toml",
    "code.toml",
    "supply.toml",
    "verbs.toml",
];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let dir = manifest.join("packs");
    println!("cargo::rerun-if-changed=packs");
    println!("cargo::rerun-if-changed=build.rs");
    let built = match toolgate_packs::build(&dir, PACKS) {
        Ok(b) => b,
        Err(e) => {
            println!("cargo::error=rule pack: {e}");
            std::process::exit(1);
        }
    };
    for file in &built.files {
        println!("cargo::rerun-if-changed={}", file.display());
    }
    let write = |name: &str, bytes: &[u8]| {
        let path = out.join(name);
        if let Err(e) = std::fs::write(&path, bytes) {
            println!("cargo::error=cannot write {}: {e}", path.display());
            std::process::exit(1);
        }
    };
    write("catalogue.rs", built.rust.as_bytes());
    match toolgate_packs::servers::build(&dir.join("servers/mcp.toml")) {
        Ok(rust) => write("servers.rs", rust.as_bytes()),
        Err(e) => {
            println!("cargo::error=server catalogue: {e}");
            std::process::exit(1);
        }
    }
    write("automata.bin", &built.automata);
}
