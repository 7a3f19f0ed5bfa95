//! Prepares the built-in default policy for the processes that decide.

use std::path::Path;

fn main() {
    default_policy_for_deciding();
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
