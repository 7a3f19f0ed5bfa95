//! What an MCP (or other unfamiliar) tool call means, read from its
//! arguments and name rather than from a list of known servers: SQL in any
//! argument, a shell command under any key, a name that says the tool
//! destroys something. Each reading ends in the same terms as the shell's
//! (a class and a reason), so one server's `query`, another's `sql` and a
//! third's `statement` are judged alike.

use crate::model::RiskClass;
use serde_json::{Map, Value};

/// How deep and how many strings of a call's params are read.
const MAX_DEPTH: usize = 8;
const MAX_STRINGS: usize = 256;

/// Destructive verbs, as words of a tool's name (`purge_cache`,
/// `destroyCluster`, `delete-index`).
const VERBS: &[&str] = &[
    "delete",
    "destroy",
    "drop",
    "purge",
    "remove",
    "rm",
    "prune",
    "terminate",
    "revoke",
    "disable",
    "forget",
    "wipe",
    "reset",
    "truncate",
    "uninstall",
    "unregister",
    "erase",
    "flush",
    "nuke",
    "deprovision",
    "decommission",
    "expunge",
    "teardown",
    "obliterate",
    "shred",
    "kill",
    "evict",
    "deregister",
    "archive",
    "deactivate",
    "suspend",
    "ban",
    "unpublish",
    "overwrite",
    "force",
];

/// The string values of `params`, depth first, bounded.
pub(crate) fn strings(params: &Map<String, Value>) -> Vec<&str> {
    fn walk<'a>(v: &'a Value, depth: usize, out: &mut Vec<&'a str>) {
        if depth > MAX_DEPTH || out.len() >= MAX_STRINGS {
            return;
        }
        match v {
            Value::String(s) => out.push(s),
            Value::Array(a) => a.iter().for_each(|x| walk(x, depth + 1, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, depth + 1, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for v in params.values() {
        walk(v, 0, &mut out);
    }
    out
}

/// The words of a tool name: split at `_`, `-`, `.`, `/` and lower-to-upper
/// case changes, lowercased.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | '/' | ':' | ' ') {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// The destructive verb an MCP tool's own name carries (`purge_cache` →
/// `purge`), if any.
pub(crate) fn destructive_verb(tool: &str) -> Option<String> {
    name_words(tool)
        .into_iter()
        .find(|w| VERBS.contains(&w.as_str()))
}

/// What one SQL text does at worst: its class and a reason, or `None` for
/// text that is not SQL or only reads and adds.
pub(crate) fn sql(text: &str) -> Option<(RiskClass, String)> {
    let mut worst: Option<(RiskClass, String)> = None;
    for stmt in statements(text) {
        let Some((class, what)) = statement(&stmt) else {
            continue;
        };
        if worst.as_ref().is_none_or(|(c, _)| class > *c) {
            worst = Some((class, what));
        }
    }
    worst
}

/// The statements of a batch, split at `;` outside quotes, comments
/// dropped, whitespace collapsed, uppercased.
fn statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                cur.push(' ');
            }
            None => match c {
                '\'' | '"' | '`' => {
                    quote = Some(c);
                    cur.push(' ');
                }
                '-' if chars.peek() == Some(&'-') => {
                    for n in chars.by_ref() {
                        if n == '\n' {
                            break;
                        }
                    }
                    cur.push(' ');
                }
                '/' if chars.peek() == Some(&'*') => {
                    chars.next();
                    let mut last = ' ';
                    for n in chars.by_ref() {
                        if last == '*' && n == '/' {
                            break;
                        }
                        last = n;
                    }
                    cur.push(' ');
                }
                ';' => out.push(std::mem::take(&mut cur)),
                c => cur.push(c.to_ascii_uppercase()),
            },
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| !s.is_empty())
        .collect()
}

/// One statement (uppercased, comments and quoted text blanked).
fn statement(s: &str) -> Option<(RiskClass, String)> {
    let words: Vec<&str> = s.split(' ').collect();
    let first = *words.first()?;
    let has = |w: &str| words.contains(&w);
    match first {
        "DROP" => Some((RiskClass::R4, format!("drops {}", object(&words)))),
        "TRUNCATE" => Some((RiskClass::R4, "empties a table (TRUNCATE)".to_string())),
        "ALTER" if has("DROP") => Some((RiskClass::R4, "drops part of a table's schema".into())),
        "ALTER" | "RENAME" => Some((RiskClass::R3, "changes the schema".to_string())),
        "DELETE" if !has("WHERE") => Some((
            RiskClass::R4,
            "deletes every row of a table (DELETE without WHERE)".into(),
        )),
        "UPDATE" if !has("WHERE") => Some((
            RiskClass::R3,
            "changes every row of a table (UPDATE without WHERE)".into(),
        )),
        "GRANT" | "REVOKE" => Some((RiskClass::R3, "changes privileges".to_string())),
        "CREATE" if has("USER") || has("ROLE") => {
            Some((RiskClass::R3, "creates a database user or role".to_string()))
        }
        "WITH" if has("DELETE") || has("UPDATE") || has("DROP") => Some((
            RiskClass::R3,
            "changes data inside a WITH query".to_string(),
        )),
        _ => None,
    }
}

fn object(words: &[&str]) -> String {
    match words.get(1) {
        Some(kind) => format!("a {}", kind.to_ascii_lowercase()),
        None => "a database object".to_string(),
    }
}

/// The interpreter one-liner a code-running tool's code is (`python3 -c`,
/// `node -e`), read from the tool's name (`run_python`, `execute_code`,
/// `jupyter_run_cell`, `eval_js`); `None` for any other tool.
pub(crate) fn code_runner(tool: &str) -> Option<&'static str> {
    let words = name_words(tool);
    let has = |w: &[&str]| words.iter().any(|x| w.contains(&x.as_str()));
    if !has(&[
        "run",
        "execute",
        "exec",
        "eval",
        "evaluate",
        "repl",
        "notebook",
        "jupyter",
        "cell",
        "interpreter",
        "sandbox",
    ]) {
        return None;
    }
    if has(&["js", "javascript", "node", "typescript", "ts", "deno"]) {
        Some("node -e")
    } else if has(&["ruby"]) {
        Some("ruby -e")
    } else if has(&["bash", "shell", "sh"]) {
        Some("bash -c")
    } else {
        // Python is what notebooks and code interpreters run by default.
        Some("python3 -c")
    }
}

/// Keys under which a code runner takes its code.
pub(crate) fn is_code_key(key: &str) -> bool {
    matches!(
        key.to_ascii_lowercase().as_str(),
        "code"
            | "source"
            | "script"
            | "cell"
            | "cell_source"
            | "program"
            | "snippet"
            | "python"
            | "js"
            | "javascript"
            | "input"
            | "command"
            | "src"
            | "body"
    )
}

/// Whether a file tool writing `path` with these strings puts a package
/// lifecycle script into a manifest (`package.json` with `postinstall`):
/// code that runs on the next install.
pub(crate) fn plants_lifecycle_script(path: &str, strings: &[&str]) -> bool {
    const HOOKS: &[&str] = &[
        "\"preinstall\"",
        "\"install\"",
        "\"postinstall\"",
        "\"prepare\"",
        "\"prepublish\"",
        "\"prepack\"",
        "\"postpack\"",
        "\"preuninstall\"",
        "\"postuninstall\"",
    ];
    path.rsplit('/').next() == Some("package.json")
        && strings.iter().any(|s| {
            HOOKS.iter().any(|h| {
                s.match_indices(h)
                    .any(|(i, _)| s[i + h.len()..].trim_start().starts_with(':'))
            })
        })
}

/// Whether the call's arguments name a production-looking target
/// (`prod`, `production`, `live` as a word of any string or key).
pub(crate) fn production_target(params: &Map<String, Value>) -> bool {
    let words = |s: &str| {
        name_words(s)
            .into_iter()
            .any(|w| matches!(w.as_str(), "prod" | "production" | "prd" | "live"))
    };
    params.keys().any(|k| words(k)) || strings(params).into_iter().any(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_read_by_their_verbs() {
        assert_eq!(destructive_verb("purge_cache").as_deref(), Some("purge"));
        assert_eq!(
            destructive_verb("destroyCluster").as_deref(),
            Some("destroy")
        );
        assert_eq!(destructive_verb("delete-index").as_deref(), Some("delete"));
        assert_eq!(destructive_verb("list_indexes"), None);
        assert_eq!(destructive_verb("read_file"), None);
        assert_eq!(destructive_verb("dropdown_options"), None);
    }

    #[test]
    fn every_statement_of_a_batch_is_read() {
        assert!(sql("SELECT 1; DROP TABLE users").is_some());
        assert_eq!(
            sql("ALTER TABLE t DROP COLUMN c").map(|x| x.0),
            Some(RiskClass::R4)
        );
        assert_eq!(sql("delete from users").map(|x| x.0), Some(RiskClass::R4));
        assert_eq!(sql("UPDATE t SET a = 1").map(|x| x.0), Some(RiskClass::R3));
        assert!(sql("truncate orders").is_some());
        assert!(sql("SELECT * FROM t WHERE note = 'drop table x'").is_none());
        assert!(sql("DELETE FROM sessions WHERE id = 3").is_none());
        assert!(sql("SELECT 1 -- ; DROP TABLE x").is_none());
        assert!(sql("INSERT INTO t VALUES (1)").is_none());
        assert!(sql("please drop me a line").is_none());
    }

    #[test]
    fn code_runners_are_read_from_their_names() {
        assert_eq!(code_runner("run_python"), Some("python3 -c"));
        assert_eq!(code_runner("execute_code"), Some("python3 -c"));
        assert_eq!(code_runner("evalJs"), Some("node -e"));
        assert_eq!(code_runner("read_file"), None);
        assert!(is_code_key("code") && !is_code_key("path"));
    }

    #[test]
    fn lifecycle_scripts_in_a_manifest_are_seen() {
        let with = r#"{"scripts": {"postinstall": "sh x"}}"#;
        let without = r#"{"scripts": {"test": "vitest", "build": "tsc"}}"#;
        assert!(plants_lifecycle_script("/p/package.json", &[with]));
        assert!(!plants_lifecycle_script("/p/package.json", &[without]));
        assert!(!plants_lifecycle_script("/p/notes.md", &[with]));
    }

    #[test]
    fn production_looking_targets_are_seen() {
        let p = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert!(production_target(&p(
            serde_json::json!({"database": "app_prod"})
        )));
        assert!(production_target(&p(
            serde_json::json!({"env": "production"})
        )));
        assert!(!production_target(&p(
            serde_json::json!({"database": "app_dev", "q": "products"})
        )));
    }
}
