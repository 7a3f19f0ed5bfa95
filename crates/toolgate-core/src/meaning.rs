//! What an MCP (or other unfamiliar) tool call means, read from its
//! arguments and name rather than from a list of known servers: SQL in any
//! argument, a shell command under any key, a name that says the tool
//! destroys something. Each reading ends in the same terms as the shell's
//! (a class and a reason), so one server's `query`, another's `sql` and a
//! third's `statement` are judged alike.

use crate::model::RiskClass;
use crate::normalize::{name_words, param_strings};
use serde_json::{Map, Value};

pub(crate) use crate::normalize::destructive_verb;

/// What one SQL text does at worst: its class and a reason, or `None` for
/// text that is not SQL or only reads and adds.
pub(crate) fn sql(text: &str) -> Option<(RiskClass, String)> {
    // Most strings name none of the statements that change anything:
    // answered without splitting or copying them.
    let changes = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| CHANGING.iter().any(|k| w.eq_ignore_ascii_case(k)));
    if !changes {
        return None;
    }
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

/// The first words of the statements [`statement`] reports.
const CHANGING: &[&str] = &[
    "drop",
    "truncate",
    "alter",
    "rename",
    "delete",
    "update",
    "grant",
    "revoke",
    "create",
    "with",
    "copy",
    "explain",
    "outfile",
    "dumpfile",
    "do",
    "load",
    "vacuum",
    "program",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "dblink",
    "dblink_exec",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "lo_import",
    "lo_export",
    "pg_reload_conf",
    "set_config",
    "load_file",
    "xp_cmdshell",
    "sys_exec",
    "sys_eval",
    "pg_stat_file",
    "query_to_xml",
];

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
                // `WITH d AS (DELETE …)`: the words inside count as words.
                '(' | ')' | ',' => cur.push(' '),
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
    // `EXPLAIN ANALYZE` runs the statement it explains.
    if first == "EXPLAIN" && (has("ANALYZE") || has("ANALYSE")) {
        let rest: Vec<&str> = words
            .iter()
            .skip(1)
            .skip_while(|w| {
                matches!(
                    **w,
                    "ANALYZE"
                        | "ANALYSE"
                        | "VERBOSE"
                        | "BUFFERS"
                        | "COSTS"
                        | "TRUE"
                        | "FALSE"
                        | "ON"
                        | "OFF"
                        | "FORMAT"
                        | "JSON"
                        | "TEXT"
                )
            })
            .copied()
            .collect();
        let inner = rest.join(" ");
        if let Some(found) = statement(&inner) {
            return Some(found);
        }
        return matches!(
            rest.first(),
            Some(&"DELETE" | &"UPDATE" | &"INSERT" | &"MERGE")
        )
        .then(|| {
            (
                RiskClass::R3,
                "changes data while explaining it (EXPLAIN ANALYZE runs the statement)".to_string(),
            )
        });
    }
    // Functions and clauses that act outside the query: run a program,
    // read or write the server's files, reach another server, end sessions.
    const SIDE_EFFECTS: &[(&str, RiskClass, &str)] = &[
        (
            "XP_CMDSHELL",
            RiskClass::R4,
            "runs a shell command on the database server",
        ),
        (
            "SYS_EXEC",
            RiskClass::R4,
            "runs a shell command on the database server",
        ),
        (
            "SYS_EVAL",
            RiskClass::R4,
            "runs a shell command on the database server",
        ),
        (
            "DBLINK",
            RiskClass::R3,
            "runs a query on another database server (dblink)",
        ),
        (
            "DBLINK_EXEC",
            RiskClass::R3,
            "runs a statement on another database server (dblink_exec)",
        ),
        (
            "PG_TERMINATE_BACKEND",
            RiskClass::R3,
            "ends other database sessions",
        ),
        (
            "PG_CANCEL_BACKEND",
            RiskClass::R3,
            "cancels other sessions' queries",
        ),
        (
            "PG_READ_FILE",
            RiskClass::R3,
            "reads a file of the database server",
        ),
        (
            "PG_READ_BINARY_FILE",
            RiskClass::R3,
            "reads a file of the database server",
        ),
        (
            "PG_LS_DIR",
            RiskClass::R3,
            "lists the database server's directories",
        ),
        (
            "PG_STAT_FILE",
            RiskClass::R3,
            "reads the database server's files",
        ),
        (
            "LO_IMPORT",
            RiskClass::R3,
            "reads a file of the database server",
        ),
        (
            "LO_EXPORT",
            RiskClass::R3,
            "writes a file on the database server",
        ),
        (
            "OUTFILE",
            RiskClass::R3,
            "writes a file on the database server (INTO OUTFILE)",
        ),
        (
            "DUMPFILE",
            RiskClass::R3,
            "writes a file on the database server (INTO DUMPFILE)",
        ),
        (
            "LOAD_FILE",
            RiskClass::R3,
            "reads a file of the database server",
        ),
        (
            "PG_RELOAD_CONF",
            RiskClass::R3,
            "reloads the database server's configuration",
        ),
        ("SET_CONFIG", RiskClass::R3, "changes a server setting"),
    ];
    if first == "COPY" && has("PROGRAM") {
        return Some((
            RiskClass::R4,
            "runs a program on the database server (COPY … PROGRAM)".to_string(),
        ));
    }
    if let Some((_, class, what)) = SIDE_EFFECTS.iter().find(|(w, _, _)| has(w)) {
        return Some((*class, what.to_string()));
    }
    match first {
        "COPY" if has("FROM") => Some((
            RiskClass::R3,
            "loads data into a table (COPY FROM)".to_string(),
        )),
        "DO" if has("$$") || has("LANGUAGE") => {
            Some((RiskClass::R3, "runs server-side code (DO)".to_string()))
        }
        "LOAD" if has("INFILE") || has("EXTENSION") => Some((
            RiskClass::R3,
            "loads a file or library into the server".to_string(),
        )),
        "VACUUM" if has("FULL") => Some((
            RiskClass::R3,
            "rewrites tables under an exclusive lock (VACUUM FULL)".to_string(),
        )),
        "CREATE" if has("FUNCTION") || has("PROCEDURE") || has("TRIGGER") || has("EXTENSION") => {
            Some((RiskClass::R3, "creates server-side code".to_string()))
        }
        "ALTER" if has("SYSTEM") => Some((
            RiskClass::R3,
            "changes the server's configuration (ALTER SYSTEM)".to_string(),
        )),
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
        "WITH" if has("DELETE") && !has("WHERE") => Some((
            RiskClass::R4,
            "deletes rows inside a WITH query, without WHERE".to_string(),
        )),
        "WITH" if has("DELETE") || has("UPDATE") || has("DROP") || has("TRUNCATE") => Some((
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

/// Whether the strings a file tool writes into a `package.json` set a
/// lifecycle script (`"postinstall": …`): code that runs on the next install.
pub(crate) fn plants_lifecycle_script(strings: &[&str]) -> bool {
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
    strings.iter().any(|s| {
        HOOKS.iter().any(|h| {
            s.match_indices(h)
                .any(|(i, _)| s[i + h.len()..].trim_start().starts_with(':'))
        })
    })
}

/// Whether a word of a name marks production (`prod`, `production`,
/// `prd`, `live`).
pub(crate) fn is_production_word(w: &str) -> bool {
    matches!(w, "prod" | "production" | "prd" | "live")
}

/// Whether the call's arguments name a production-looking target
/// (`prod`, `production`, `live` as a word of any string or key).
pub(crate) fn production_target(params: &Map<String, Value>) -> bool {
    let words = |s: &str| name_words(s).iter().any(|w| is_production_word(w));
    params.keys().any(|k| words(k)) || param_strings(params, true).into_iter().any(words)
}

/// Keys under which forge tools name the branch they change (`base` is
/// left out: a pull request *into* `main` changes nothing yet).
const BRANCH_KEYS: &[&str] = &[
    "branch",
    "ref",
    "target_branch",
    "branch_name",
    "branchName",
];

/// Words of a tool name that change what they name.
const CHANGING_WORDS: &[&str] = &[
    "push", "update", "create", "delete", "write", "commit", "force", "reset", "set", "put",
    "upload", "remove", "revert", "rebase", "replace",
];

/// The protected branch a forge tool changes (`push_files` or
/// `create_or_update_file` with `branch: "main"`, `update_ref` with
/// `ref: "heads/main"`), and whether it forces.
pub(crate) fn changes_protected_branch(
    name_words: &[String],
    params: &Map<String, Value>,
    protected: &[String],
) -> Option<(String, bool)> {
    if !name_words
        .iter()
        .any(|w| CHANGING_WORDS.contains(&w.as_str()))
    {
        return None;
    }
    // Opening a pull or merge request into `main`, or a branch from it,
    // changes no shared branch yet (a merge is judged as one).
    let has = |w: &str| name_words.iter().any(|n| n == w);
    if has("request") || has("pr") || (has("create") && has("branch")) {
        return None;
    }
    let branch = BRANCH_KEYS.iter().find_map(|k| {
        let v = params.get(*k)?.as_str()?;
        let name = v.trim_start_matches("refs/").trim_start_matches("heads/");
        crate::branches::is_protected(name, protected).then(|| name.to_string())
    })?;
    let forced = params.get("force").and_then(Value::as_bool) == Some(true);
    Some((branch, forced))
}

/// Words of a tool name that deploy or change a live system.
const DEPLOY_WORDS: &[&str] = &[
    "apply", "deploy", "upgrade", "install", "rollback", "restore", "scale", "patch", "promote",
    "release", "migrate", "sync", "update", "restart",
];

/// Whether a tool whose name deploys or changes a live system is aimed at
/// a production-looking target (`terraform_apply {workspace: "prod"}`).
pub(crate) fn changes_production(tool_words: &[String], params: &Map<String, Value>) -> bool {
    let prod = |s: &str| name_words(s).iter().any(|w| is_production_word(w));
    // Free text (a title, a message) may mention production without
    // aiming at it: only keys and the other strings count.
    tool_words
        .iter()
        .any(|w| DEPLOY_WORDS.contains(&w.as_str()))
        && (params.keys().any(|k| prod(k)) || param_strings(params, false).into_iter().any(prod))
}

/// The changing HTTP method a fetch-like tool is asked to use
/// (`{"url": …, "method": "DELETE"}`), upper-cased.
pub(crate) fn changing_method(params: &Map<String, Value>) -> Option<String> {
    let m = ["method", "http_method", "verb"]
        .iter()
        .find_map(|k| params.get(*k)?.as_str())?
        .trim()
        .to_ascii_uppercase();
    matches!(m.as_str(), "DELETE" | "PUT" | "PATCH").then_some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_read_by_their_verbs() {
        let verb = |n: &str| destructive_verb(&name_words(n)).map(str::to_string);
        assert_eq!(verb("purge_cache").as_deref(), Some("purge"));
        assert_eq!(verb("destroyCluster").as_deref(), Some("destroy"));
        assert_eq!(verb("delete-index").as_deref(), Some("delete"));
        assert_eq!(verb("list_indexes"), None);
        assert_eq!(verb("read_file"), None);
        assert_eq!(verb("dropdown_options"), None);
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
    fn lifecycle_scripts_in_a_manifest_are_seen() {
        let with = r#"{"scripts": {"postinstall": "sh x"}}"#;
        let without = r#"{"scripts": {"test": "vitest", "build": "tsc"}}"#;
        assert!(plants_lifecycle_script(&[with]));
        assert!(!plants_lifecycle_script(&[without]));
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
