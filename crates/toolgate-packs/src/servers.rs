//! The MCP server catalogue (`crates/toolgate-core/packs/servers/mcp.toml`)
//! at build time: checked completely and written as Rust statics, so no
//! process parses it and a broken entry fails the build, never empties the
//! catalogue at run time.

use crate::load::PackError;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

/// The effects a server's tools may be listed under, and the
/// `EffectKind` variant each becomes.
pub const EFFECTS: &[(&str, &str)] = &[
    ("read", "Read"),
    ("write", "Write"),
    ("post", "Post"),
    ("send", "Send"),
    ("publish", "Publish"),
    ("grant", "Grant"),
    ("pay", "Pay"),
    ("delete", "Delete"),
    ("infra", "Infra"),
    ("remember", "Remember"),
    ("run", "Run"),
    ("fetch", "Fetch"),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    server: Vec<Server>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Server {
    id: String,
    title: String,
    family: String,
    servers: Vec<String>,
    #[serde(default)]
    tools: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    example: Vec<Example>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Example {
    tool: String,
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "judged by toolgate-core's tests, checked for shape here"
    )]
    params: toml::Table,
    expect: String,
}

/// Reads and checks the server catalogue at `path` and returns the Rust
/// source of `static SERVERS: &[Server]` (the `Server` type and
/// `EffectKind` are the includer's).
pub fn build(path: &Path) -> Result<String, PackError> {
    let err = |line: usize, message: String| PackError {
        file: path.to_path_buf(),
        line,
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(0, format!("cannot read: {e}")))?;
    let file: File = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map_or(0, |s| text[..s.start].matches('\n').count() + 1);
        err(line, e.message().to_string())
    })?;
    let line_of = |needle: &str| {
        text.find(needle)
            .map_or(0, |i| text[..i].matches('\n').count() + 1)
    };
    let mut ids = HashSet::new();
    let mut out = String::from("pub(super) static SERVERS: &[Server] = &[\n");
    for s in &file.server {
        let at = line_of(&format!("id = \"{}\"", s.id));
        if !ids.insert(s.id.clone()) {
            return Err(err(at, format!("server id `{}` is used twice", s.id)));
        }
        if s.title.trim().is_empty() || s.family.trim().is_empty() || s.servers.is_empty() {
            return Err(err(
                at,
                format!(
                    "server `{}` needs a title, a family and at least one name in `servers`",
                    s.id
                ),
            ));
        }
        let mut seen = HashSet::new();
        let _ = writeln!(
            out,
            "    Server {{\n        id: {:?},\n        servers: &{:?},\n        tools: &[",
            s.id, s.servers
        );
        for (effect, names) in &s.tools {
            let Some((_, variant)) = EFFECTS.iter().find(|(e, _)| e == effect) else {
                let known: Vec<&str> = EFFECTS.iter().map(|(e, _)| *e).collect();
                return Err(err(
                    at,
                    format!(
                        "server `{}`: `{effect}` is not an effect; use one of {}",
                        s.id,
                        known.join(", ")
                    ),
                ));
            };
            for n in names {
                if *n != n.to_ascii_lowercase().replace('-', "_") || n.is_empty() {
                    return Err(err(
                        line_of(&format!("\"{n}\"")),
                        format!(
                            "server `{}`: write the tool name `{n}` lowercase, with `_` for `-`",
                            s.id
                        ),
                    ));
                }
                if !seen.insert(n.clone()) {
                    return Err(err(
                        line_of(&format!("\"{n}\"")),
                        format!("server `{}`: `{n}` is listed twice", s.id),
                    ));
                }
            }
            let _ = writeln!(out, "            (EffectKind::{variant}, &{names:?}),");
        }
        for p in &s.servers {
            if *p != p.to_ascii_lowercase() {
                return Err(err(
                    at,
                    format!("server `{}`: write the server name `{p}` lowercase", s.id),
                ));
            }
        }
        for ex in &s.example {
            if !matches!(ex.expect.as_str(), "allow" | "stop" | "block") {
                return Err(err(
                    line_of(&format!("tool = \"{}\"", ex.tool)),
                    format!(
                        "server `{}`: example expect `{}` is not allow, stop or block",
                        s.id, ex.expect
                    ),
                ));
            }
        }
        out.push_str("        ],\n    },\n");
    }
    out.push_str("];\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(text: &str) -> Result<String, PackError> {
        let dir = std::env::temp_dir().join(format!("toolgate-servers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{:x}.toml", text.len()));
        std::fs::write(&path, text).unwrap();
        build(&path)
    }

    #[test]
    fn a_good_entry_becomes_statics_and_mistakes_name_their_line() {
        let ok = "[[server]]\nid = \"x\"\ntitle = \"X\"\nfamily = \"f\"\nservers = [\"x*\"]\n[server.tools]\nread = [\"list_*\"]\npay = [\"create_refund\"]\n";
        let rust = built(ok).unwrap();
        assert!(
            rust.contains("(EffectKind::Pay, &[\"create_refund\"])"),
            "{rust}"
        );
        let e = built(&ok.replace("pay =", "payy =")).unwrap_err();
        assert!(e.message.contains("`payy` is not an effect"), "{e}");
        let e = built(&ok.replace("create_refund", "Create-Refund")).unwrap_err();
        assert_eq!(e.line, 8, "{e}");
        let e = built(&ok.replace(
            "[\"create_refund\"]",
            "[\"create_refund\", \"create_refund\"]",
        ))
        .unwrap_err();
        assert!(e.message.contains("twice"), "{e}");
        assert!(built(&ok.replace("title", "titel")).is_err());
    }
}
