//! Maps every runtime's tool names and parameter shapes onto canonical kinds.
//!
//! Params keep their runtime's field names in the [`ToolCall`]; this module
//! only extracts what the layers judge: the command, the paths and how they
//! are accessed, URLs, and action names.

use crate::model::ToolCall;
use crate::paths::Env;
use serde::Serialize;
use serde_json::{Map, Value};
use toolgate_shell::quote as shell_quote;

pub use crate::tool_kind::{ToolKind, split_mcp};

/// Maps a tool name from any runtime (or from a policy rule) to its kind.
/// MCP tools (`mcp__server__tool`) are classified by the tool part's verb.
pub fn kind_of(tool: &str) -> ToolKind {
    if let Some((server, t)) = split_mcp(tool) {
        // A database server's `execute_command` runs a query language,
        // not a shell: judged by what that text does (`crate::tool_effects`).
        let database = name_words(server).iter().any(|w| {
            matches!(
                w.as_str(),
                "redis"
                    | "valkey"
                    | "memcached"
                    | "mongo"
                    | "mongodb"
                    | "postgres"
                    | "pg"
                    | "mysql"
                    | "sql"
                    | "sqlite"
                    | "db"
                    | "database"
                    | "neo4j"
                    | "clickhouse"
                    | "elasticsearch"
            )
        });
        // A tool that names a shell outright (`run_bash`) stays one.
        let names_shell = name_words(t).iter().any(|w| {
            SHELL_WORDS.contains(&w.as_str())
                && !matches!(w.as_str(), "exec" | "execute" | "command" | "repl")
        });
        return match mcp_kind(t) {
            ToolKind::Exec if database && !names_shell => ToolKind::Other,
            kind => kind,
        };
    }
    // Each runtime's own tool names live in its module (`crate::hooks`);
    // the list below is the generic vocabulary (OpenClaw, MCP-style names).
    if let Some(kind) = crate::hooks::vocabulary_kind(tool) {
        return kind;
    }
    match tool.to_ascii_lowercase().as_str() {
        "exec" | "bash" | "run_shell_command" | "shell" | "local_shell" | "run_terminal_cmd"
        | "execute_command" | "terminal" | "container.exec" | "shell_command" | "exec_command"
        | "powershell" => ToolKind::Exec,
        "read"
        | "read_file"
        | "read_many_files"
        | "glob"
        | "grep"
        | "ls"
        | "list_directory"
        | "search_file_content"
        | "notebookread"
        | "view"
        | "list_dir"
        | "file_search"
        | "codebase_search"
        | "grep_search"
        | "read_text_file" => ToolKind::Read,
        "write"
        | "edit"
        | "multiedit"
        | "apply_patch"
        | "file_write"
        | "write_file"
        | "replace"
        | "create_file"
        | "edit_file"
        | "delete_file"
        | "notebookedit"
        | "str_replace_editor"
        | "str_replace_based_edit_tool"
        | "search_replace"
        | "insert" => ToolKind::Write,
        "web_fetch" | "webfetch" | "fetch" | "http_request" | "curl" => ToolKind::Fetch,
        "web_search" | "websearch" | "google_web_search" => ToolKind::Search,
        "message" | "send_message" | "sessions_send_message" => ToolKind::Message,
        "gateway" => ToolKind::Gateway,
        "cron" | "automations" | "schedule" => ToolKind::Automation,
        "nodes" | "node" | "canvas" => ToolKind::Nodes,
        "browser" => ToolKind::Browser,
        "process" | "killshell" | "bashoutput" => ToolKind::Process,
        "sessions_spawn" | "sessions_send" | "sessions_list" | "sessions_history" | "agent"
        | "task" => ToolKind::Sessions,
        "plugins" | "plugin" => ToolKind::Plugins,
        "secrets" => ToolKind::Secrets,
        "memory_search" | "memory_get" | "memory" | "session_status" | "todowrite" | "todoread"
        | "save_memory" | "update_plan" | "exitplanmode" => ToolKind::Memory,
        _ => ToolKind::Other,
    }
}

/// Words of a tool name: split at non-alphanumerics and camelCase humps,
/// lowercased (`runBashCmd` → `run`, `bash`, `cmd`).
pub(crate) fn name_words(tool: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in tool.chars() {
        if !c.is_ascii_alphanumeric() {
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

/// Destructive verbs, as words of a name: an MCP tool's (`purge_cache`,
/// `destroyCluster`) or a program's (`kafka-delete-records.sh`). The verbs
/// pack (`packs/verbs.toml`) reads the same verbs in subcommands and flags.
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
    "flushdb",
    "flushall",
    "nuke",
    "deprovision",
    "decommission",
    "expunge",
    "teardown",
    "obliterate",
    "shred",
    "evict",
    "deregister",
    "unpublish",
    "deactivate",
    "pause",
    "suspend",
];

/// The destructive verb among the words of a name (`purge_cache` →
/// `purge`), if any.
pub(crate) fn destructive_verb(words: &[String]) -> Option<&str> {
    words.iter().map(String::as_str).find(|w| VERBS.contains(w))
}

/// Whole words that name a shell or a command runner.
const SHELL_WORDS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "ksh",
    "fish",
    "pwsh",
    "powershell",
    "cmd",
    "shell",
    "terminal",
    "exec",
    "execute",
    "command",
    "repl",
    "ssh",
    "subprocess",
];

/// Interpreters whose code a tool may run: (name word, how the shell runs
/// a snippet with it), so the shell analyzer's embedded-code checks apply.
const INTERPRETERS: &[(&str, &str)] = &[
    ("python", "python3 -c"),
    ("python3", "python3 -c"),
    ("py", "python3 -c"),
    ("node", "node -e"),
    ("nodejs", "node -e"),
    ("javascript", "node -e"),
    ("js", "node -e"),
    ("deno", "deno eval"),
    ("bun", "bun -e"),
    ("ruby", "ruby -e"),
    ("perl", "perl -e"),
    ("php", "php -r"),
];

/// Programs a tool may be named for and called with an argument list
/// (`{"args": ["rm", "-rf", "x"]}` to a `docker` tool is `docker rm -rf x`).
const PROGRAM_WORDS: &[&str] = &[
    "sudo",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "git",
    "npm",
    "pip",
    "rsync",
    "scp",
    "curl",
    "wget",
    "rm",
    "chmod",
    "chown",
    "dd",
    "terraform",
    "aws",
    "gcloud",
    "az",
    "systemctl",
];

fn mcp_kind(tool: &str) -> ToolKind {
    let t = tool.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    let words = name_words(tool);
    // Shell names only as whole words: `sh` is in `push`, `exec` in
    // `list_executions`, `command` in `list_commands`.
    let shell_word = words.iter().any(|w| SHELL_WORDS.contains(&w.as_str()))
        && !words.iter().any(|w| {
            matches!(
                w.as_str(),
                "list" | "get" | "search" | "history" | "sql" | "query" | "cypher" | "graphql"
            )
        });
    // A file tool by a writing verb (`write_file`, `edit`, `apply_patch`;
    // held when it names no path), or by another changing verb on a
    // file-system noun (`create_directory`, `delete_file`): `create_issue`
    // or `delete_repository` change something else, judged by their
    // meaning.
    let file_noun = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "file"
                | "files"
                | "dir"
                | "dirs"
                | "directory"
                | "directories"
                | "folder"
                | "folders"
                | "path"
                | "paths"
                | "fs"
                | "notebook"
                | "tree"
        )
    });
    let changing = has(&[
        "write", "edit", "create", "delete", "remove", "move", "rename", "upload", "replace",
        "append", "insert",
    ]);
    if shell_word || has(&["run_script", "runscript"]) {
        ToolKind::Exec
    } else if has(&["mkdir", "patch", "write", "edit"])
        || (changing && (file_noun || words.len() == 1))
    {
        ToolKind::Write
    } else if changing || destructive_verb(&words).is_some() {
        // A changing or destructive name is never a read (`purge_cache`,
        // `create_issue`): judged by its meaning and its arguments.
        ToolKind::Other
    } else if has(&[
        "read", "list", "search", "get", "find", "tree", "info", "stat", "view",
    ]) {
        ToolKind::Read
    } else if has(&["fetch", "http", "url", "browse"]) {
        ToolKind::Fetch
    } else if has(&["send", "post", "message", "email", "reply", "notify"]) {
        ToolKind::Message
    } else {
        ToolKind::Other
    }
}

/// How a path is used by a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read or listed.
    Read,
    /// Created or modified.
    Write,
    /// Removed.
    Delete,
}

/// A path a call touches, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathTarget {
    /// The path as given.
    pub raw: String,
    /// The absolute, lexically normalized path.
    pub path: String,
    /// What the call does to it.
    pub access: Access,
}

/// A tool call reduced to what the layers judge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NormalizedCall {
    /// The runtime's tool name of the call judged (for a `tool_call` bridge,
    /// the wrapped tool's name).
    pub tool: String,
    /// The canonical kind.
    pub kind: ToolKind,
    /// The params judged (for a bridge, the wrapped `args`).
    pub params: Map<String, Value>,
    /// The shell command text: for exec calls, and for any other call that
    /// carries one (judged both as its tool and as that command).
    pub command: Option<String>,
    /// Further, different command texts under other keys (`command` and
    /// `cmd` both given): each is judged too.
    pub alt_commands: Vec<String>,
    /// For exec calls given as an argv array (Codex): the argv.
    pub argv: Option<Vec<String>>,
    /// Paths touched, resolved against the call's working directory.
    pub paths: Vec<PathTarget>,
    /// URLs fetched or opened.
    pub urls: Vec<String>,
    /// The `action` param (message, gateway, automations, nodes, browser …).
    pub action: Option<String>,
    /// For MCP tools: `(server, tool)`.
    pub mcp: Option<(String, String)>,
    /// The working directory the call runs in (absolute).
    pub cwd: String,
    /// Further, different working directories the params name (`workdir`
    /// and `cwd` both given): commands are judged in each.
    pub alt_cwds: Vec<String>,
    /// True when the call came wrapped in a `tool_call` bridge.
    pub bridged: bool,
    /// Why part of the call cannot be read (a bridge without a tool name,
    /// params past the walking bounds), if so: the engine escalates it.
    pub unreadable: Option<String>,
    /// The shell analyses of its command texts, shared by every layer that
    /// judges it (each text analysed once).
    #[serde(skip)]
    pub analyses: crate::shell::Analyses,
}

/// The deepest `tool_call` nesting unwrapped before the call is judged as is.
const MAX_BRIDGE_DEPTH: usize = 8;
/// The most calls one bridge may stand for before it is judged unreadable.
const MAX_BRIDGE_CANDIDATES: usize = 8;

/// Tool names that wrap another tool call (OpenClaw's Tool Search bridge and
/// the spellings other runtimes and MCP gateways use), compared without
/// case and without `_`/`-`.
const BRIDGE_NAMES: &[&str] = &[
    "toolcall",
    "calltool",
    "invoketool",
    "usetool",
    "runtool",
    "executetool",
];
/// Where a bridge names the wrapped tool.
const BRIDGE_NAME_KEYS: &[&str] = &[
    "id",
    "toolId",
    "tool_id",
    "name",
    "tool",
    "tool_name",
    "toolName",
];
/// Where a bridge carries the wrapped tool's arguments.
const BRIDGE_ARG_KEYS: &[&str] = &[
    "args",
    "input",
    "arguments",
    "params",
    "parameters",
    "tool_input",
    "toolInput",
    "tool_args",
];

/// Whether `tool` is a bridge that wraps another tool call
/// (`tool_call`, `toolCall`, `call_tool`, `mcp__gateway__call_tool`, …).
pub(crate) fn is_bridge(tool: &str) -> bool {
    let t = split_mcp(tool).map_or(tool, |(_, t)| t);
    let folded: String = t
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    BRIDGE_NAMES.contains(&folded.as_str())
}

/// The calls a (possibly bridged) call stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Unwrapped {
    /// Every call it may run, each judged: one for a plain call or a clear
    /// bridge; one per (name, arguments) pair when a bridge's keys disagree.
    pub calls: Vec<ToolCall>,
    /// True when a bridge was unwrapped.
    pub bridged: bool,
    /// Why the wrapped call cannot be read (no tool name, arguments that
    /// are not a JSON object, nesting or ambiguity past the bounds), if so.
    pub unreadable: Option<String>,
}

/// Unwraps `tool_call`-style bridges, every shape any runtime sends: the
/// wrapped tool under any of [`BRIDGE_NAME_KEYS`], its arguments under any
/// of [`BRIDGE_ARG_KEYS`] as an object or JSON text holding one, nested up
/// to [`MAX_BRIDGE_DEPTH`]. When keys disagree every combination is kept,
/// so the strictest is judged; what cannot be read is said in `unreadable`
/// (and the raw bridge is kept as a call, judged as it is).
pub fn unwrap_bridges(call: &ToolCall) -> Unwrapped {
    let mut out = Unwrapped {
        calls: Vec::new(),
        bridged: false,
        unreadable: None,
    };
    let mut todo = vec![(call.clone(), 0usize)];
    while let Some((c, depth)) = todo.pop() {
        if !is_bridge(&c.tool) {
            out.calls.push(c);
            continue;
        }
        if depth >= MAX_BRIDGE_DEPTH {
            out.unreadable = Some(format!(
                "{} bridges nest more than {MAX_BRIDGE_DEPTH} deep",
                c.tool
            ));
            out.calls.push(c);
            continue;
        }
        let (names, args, bad) = bridge_parts(&c.params);
        if let Some(k) = bad {
            out.unreadable = Some(format!(
                "the arguments of a {} bridge under `{k}` are not a JSON object",
                c.tool
            ));
        }
        let mut args = args;
        if names.is_empty() {
            out.unreadable = Some(format!("a {} bridge names no tool to run", c.tool));
            out.calls.push(c);
            continue;
        }
        if args.is_empty() {
            args.push(Map::new());
        }
        out.bridged = true;
        for name in &names {
            for a in &args {
                let mut inner = c.clone();
                inner.tool = name.clone();
                inner.params = a.clone();
                todo.push((inner, depth + 1));
            }
        }
        if todo.len() + out.calls.len() > MAX_BRIDGE_CANDIDATES {
            out.unreadable = Some(format!(
                "a {} bridge stands for more than {MAX_BRIDGE_CANDIDATES} different calls",
                c.tool
            ));
            todo.truncate(MAX_BRIDGE_CANDIDATES);
        }
    }
    out.calls.reverse();
    out
}

/// A bridge's tool names and argument objects, every reading of them: the
/// name keys (a catalogue id `source:name:tool` names `tool`), a name nested
/// in the arguments (lifted, as OpenClaw does), each argument key (object or
/// JSON text), and the remaining top-level keys as flattened arguments;
/// `args.x` keys are merged into each. Also the first argument key whose
/// value is not a JSON object, if any.
fn bridge_parts(
    params: &Map<String, Value>,
) -> (Vec<String>, Vec<Map<String, Value>>, Option<&'static str>) {
    fn names_in(m: &Map<String, Value>) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for k in BRIDGE_NAME_KEYS {
            if let Some(Value::String(n)) = m.get(*k) {
                let n = n.trim();
                let n = catalogue_tool(n);
                if !n.is_empty() && !names.iter().any(|x| x == n) {
                    names.push(n.to_string());
                }
            }
        }
        names
    }
    let mut names = names_in(params);
    let mut args: Vec<Map<String, Value>> = Vec::new();
    let mut bad = None;
    let push = |m: Map<String, Value>, args: &mut Vec<Map<String, Value>>| {
        if !args.contains(&m) {
            args.push(m);
        }
    };
    let mut nested_objects: Vec<Map<String, Value>> = Vec::new();
    for k in BRIDGE_ARG_KEYS {
        match params.get(*k) {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => nested_objects.push(m.clone()),
            Some(Value::String(text)) => match crate::input::parse_embedded_json(text) {
                Ok(Value::Object(m)) => nested_objects.push(m),
                _ => bad = bad.or(Some(*k)),
            },
            Some(_) => bad = bad.or(Some(*k)),
        }
    }
    for m in &nested_objects {
        let inner_names = names_in(m);
        if names.is_empty() && !inner_names.is_empty() {
            // The name sits inside the arguments: lifted, the rest flattened.
            names = inner_names;
            let rest: Map<String, Value> = m
                .iter()
                .filter(|(k, _)| !BRIDGE_NAME_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            push(rest, &mut args);
        } else if !m.is_empty() {
            push(m.clone(), &mut args);
        }
    }
    let flat: Map<String, Value> = params
        .iter()
        .filter(|(k, _)| {
            !BRIDGE_NAME_KEYS.contains(&k.as_str())
                && !BRIDGE_ARG_KEYS.contains(&k.as_str())
                && !k.starts_with("args.")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !flat.is_empty() {
        // Flattened arguments (OpenClaw reads them when the argument key is
        // missing or empty). Beside argument objects, a top-level key that
        // contradicts one of them is its own reading (a decoy under `args`
        // must not hide the real call); the others are merged in.
        let conflicts = args.iter().any(|a| {
            flat.iter()
                .any(|(k, v)| a.get(k).is_some_and(|have| have != v))
        });
        if args.is_empty() || conflicts {
            push(flat.clone(), &mut args);
        }
        let merged: Vec<Map<String, Value>> = args
            .iter()
            .map(|a| {
                let mut m = a.clone();
                for (k, v) in &flat {
                    m.entry(k.clone()).or_insert_with(|| v.clone());
                }
                m
            })
            .collect();
        args.clear();
        for m in merged {
            push(m, &mut args);
        }
    }
    let dotted: Map<String, Value> = params
        .iter()
        .filter_map(|(k, v)| {
            k.strip_prefix("args.")
                .filter(|r| !r.is_empty())
                .map(|r| (r.to_string(), v.clone()))
        })
        .collect();
    if !dotted.is_empty() {
        if args.is_empty() {
            args.push(Map::new());
        }
        for a in &mut args {
            for (k, v) in &dotted {
                a.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    (names, args, bad)
}

/// `openclaw:core:exec` → `exec`; any other name as it is.
fn catalogue_tool(id: &str) -> &str {
    let mut parts = id.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(src), Some(_), Some(tool))
            if !src.is_empty()
                && src.bytes().all(|b| b.is_ascii_lowercase())
                && !tool.is_empty() =>
        {
            tool
        }
        _ => id,
    }
}

/// Normalizes a call. `env` supplies home and the default working directory;
/// the call's own `cwd` (or an exec `workdir`/`cwd`/`directory` param) wins.
/// A bridge is unwrapped to the first call it stands for
/// ([`unwrap_bridges`]; the engine judges every one).
pub fn normalize(call: &ToolCall, env: &Env) -> NormalizedCall {
    let u = unwrap_bridges(call);
    let first = u.calls.first().cloned().unwrap_or_else(|| call.clone());
    normalize_unwrapped(call, &first, u.bridged, u.unreadable, env)
}

/// Normalizes `inner`, one of the calls `outer` stands for (the same call
/// when it is no bridge).
pub(crate) fn normalize_unwrapped(
    outer: &ToolCall,
    inner: &ToolCall,
    bridged: bool,
    unreadable: Option<String>,
    env: &Env,
) -> NormalizedCall {
    let call = outer;
    let tool = inner.tool.clone();
    let params = inner.params.clone();

    let kind = kind_of(&tool);
    let base_cwd = call
        .cwd
        .as_deref()
        .map(|c| env.resolve(c))
        .unwrap_or_else(|| env.cwd.clone());
    // Every command and working directory the params name: a tool may read
    // any of these keys, so a harmless decoy under one key must not hide
    // the real one under another. The engine judges each combination.
    let (mut commands, argv) = exec_commands(&tool, &params);
    let mut unreadable = unreadable;
    let deep = is_unknown(kind, &tool).then(|| deep_scan(&params));
    if let Some(d) = &deep {
        for c in &d.commands {
            if !commands.contains(c) {
                commands.push(c.clone());
            }
        }
        if d.truncated && unreadable.is_none() {
            unreadable = Some(format!(
                "{tool}'s params are nested deeper than {DEEP_DEPTH} levels or hold more than \
                 {DEEP_STRINGS} strings"
            ));
        }
    }
    let mut cwds: Vec<String> = Vec::new();
    if !commands.is_empty() {
        for k in [
            "workdir",
            "cwd",
            "directory",
            "dir_path",
            "working_directory",
        ] {
            if let Some(w) = params.get(k).and_then(Value::as_str) {
                let w = env.with_cwd(&base_cwd).resolve(w);
                if !cwds.contains(&w) {
                    cwds.push(w);
                }
            }
        }
    }
    let cwd = cwds.first().cloned().unwrap_or(base_cwd);
    let alt_cwds = cwds.into_iter().skip(1).collect();
    let local = env.with_cwd(&cwd);
    let command = commands.first().cloned();
    let alt_commands = commands.into_iter().skip(1).collect();
    let mut paths = collect_paths(kind, &tool, &params, &local);
    if let Some(d) = &deep {
        // Under a path-ish key an unknown tool may do anything to the path:
        // judged as a write (a known kind keeps its own access). A value
        // that merely looks like a path is at least read.
        // A tool whose name deletes (`delete_tree`, `rmtree`) deletes it.
        let deletes = [
            "delete", "remove", "rmtree", "unlink", "trash", "purge", "wipe",
        ]
        .iter()
        .any(|v| tool.to_ascii_lowercase().contains(v));
        let keyed = match kind {
            ToolKind::Other if deletes => Access::Delete,
            ToolKind::Other => Access::Write,
            _ => paths.first().map_or(Access::Read, |p| p.access),
        };
        for (raw, keyed_path) in &d.paths {
            let access = if *keyed_path { keyed } else { Access::Read };
            let path = local.resolve(raw);
            if !paths.iter().any(|p| p.path == path && p.access == access) {
                paths.push(PathTarget {
                    raw: raw.clone(),
                    path,
                    access,
                });
            }
        }
    }
    let urls = ["url", "uri", "href", "targetUrl", "target_url"]
        .iter()
        .filter_map(|k| params.get(*k).and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    let action = params
        .get("action")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mcp = split_mcp(&tool).map(|(s, t)| (s.to_string(), t.to_string()));

    NormalizedCall {
        tool,
        kind,
        params,
        command,
        alt_commands,
        argv,
        paths,
        urls,
        action,
        mcp,
        cwd,
        alt_cwds,
        bridged,
        unreadable,
        analyses: crate::shell::Analyses::default(),
    }
}

/// Whether toolgate has no precise reading of `tool`'s params: a kind it
/// does not know, or an MCP tool (whose kind is a guess from its name).
fn is_unknown(kind: ToolKind, tool: &str) -> bool {
    kind == ToolKind::Other || split_mcp(tool).is_some()
}

/// How deep [`deep_scan`] walks.
const DEEP_DEPTH: usize = 16;
/// How many strings [`deep_scan`] looks at.
const DEEP_STRINGS: usize = 512;

/// Keys whose string (or argv array) value is a shell command, at any depth.
const COMMAND_KEYS: &[&str] = &[
    "command",
    "cmd",
    "cmdline",
    "commandline",
    "command_line",
    "script",
    "shell",
    "shell_command",
    "bash",
    "sh",
    "run",
    "exec",
    "execute",
    "argv",
];

/// Keys whose string value is a path, at any depth.
const PATH_KEYS_DEEP: &[&str] = &[
    "path",
    "paths",
    "file",
    "files",
    "filepath",
    "file_path",
    "filename",
    "file_name",
    "dir",
    "directory",
    "folder",
    "target",
    "target_file",
    "dest",
    "destination",
    "src",
    "source",
    "output",
    "output_path",
    "location",
    "root",
];

/// Keys of free text (a message, a file's content): a path-looking value
/// there is prose or data, not a path the tool acts on.
pub(crate) const TEXT_KEYS: &[&str] = &[
    "content",
    "contents",
    "text",
    "body",
    "message",
    "description",
    "data",
    "new_string",
    "old_string",
    "new_str",
    "old_str",
    "newtext",
    "oldtext",
    "new_text",
    "old_text",
    "diff",
    "prompt",
    "query",
    "title",
    "comment",
    "note",
];

/// The strings of a call's params, depth first, within the bounds of
/// [`deep_scan`] (past them an unknown tool is unreadable, and escalated).
/// With `free_text` false, what lies under a [`TEXT_KEYS`] key (a message,
/// a file's content) is left out: it is data, not a target or a command.
pub(crate) fn param_strings(params: &Map<String, Value>, free_text: bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut stack: Vec<(&str, &Value, usize)> =
        params.iter().map(|(k, v)| (k.as_str(), v, 1)).collect();
    while let Some((key, v, depth)) = stack.pop() {
        if depth > DEEP_DEPTH || out.len() >= DEEP_STRINGS {
            break;
        }
        if !free_text && TEXT_KEYS.contains(&fold_key(key).as_str()) {
            continue;
        }
        match v {
            Value::String(s) => out.push(s.as_str()),
            Value::Array(items) => stack.extend(items.iter().map(|i| (key, i, depth + 1))),
            Value::Object(m) => stack.extend(m.iter().map(|(k, i)| (k.as_str(), i, depth + 1))),
            _ => {}
        }
    }
    out
}

/// What a walk of an unknown tool's params found.
#[derive(Debug, Default)]
struct Deep {
    commands: Vec<String>,
    /// `(raw path, found under a path-ish key)`.
    paths: Vec<(String, bool)>,
    truncated: bool,
}

pub(crate) fn fold_key(k: &str) -> String {
    k.chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn looks_like_path(s: &str) -> bool {
    let s = s.trim();
    (s.starts_with('/') || s.starts_with("~/") || s == "~" || s.starts_with("$HOME"))
        && s.len() < 4096
        && !s.contains(['\n', '\r'])
        && !s.contains("://")
}

/// Walks every nested value of `params` (bounded): strings under
/// command-ish keys are commands, under path-ish keys paths, and strings
/// that look like absolute or home paths (outside free-text keys) paths too.
fn deep_scan(params: &Map<String, Value>) -> Deep {
    let mut out = Deep::default();
    let mut budget = DEEP_STRINGS;
    let mut stack: Vec<(Option<String>, &Value, usize, bool)> = params
        .iter()
        .map(|(k, v)| (Some(fold_key(k)), v, 1, false))
        .collect();
    while let Some((key, v, depth, in_text)) = stack.pop() {
        if depth > DEEP_DEPTH {
            out.truncated = true;
            continue;
        }
        let key = key.as_deref();
        let in_text = in_text || key.is_some_and(|k| TEXT_KEYS.contains(&k));
        match v {
            Value::String(s) => {
                if budget == 0 {
                    out.truncated = true;
                    continue;
                }
                budget -= 1;
                if key.is_some_and(|k| COMMAND_KEYS.contains(&k)) && !s.trim().is_empty() {
                    out.commands.push(s.clone());
                } else if key.is_some_and(|k| PATH_KEYS_DEEP.contains(&k)) && !s.trim().is_empty() {
                    if looks_like_path(s) || !s.contains(char::is_whitespace) {
                        out.paths.push((s.clone(), true));
                    }
                } else if !in_text && looks_like_path(s) {
                    out.paths.push((s.clone(), false));
                }
            }
            Value::Array(items) => {
                if key.is_some_and(|k| COMMAND_KEYS.contains(&k))
                    && !items.is_empty()
                    && items.iter().all(Value::is_string)
                {
                    let argv: Vec<String> = items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(shell_quote)
                        .collect();
                    out.commands.push(argv.join(" "));
                    continue;
                }
                for item in items {
                    stack.push((key.map(str::to_string), item, depth + 1, in_text));
                }
            }
            Value::Object(m) => {
                for (k, item) in m {
                    stack.push((Some(fold_key(k)), item, depth + 1, in_text));
                }
            }
            _ => {}
        }
    }
    out
}

/// Every shell text a call carries, first the one under the first key
/// present, without repeats; and the argv of the first array. An argv array
/// (Codex's `shell` tool: `["bash", "-lc", "…"]`) is kept as argv and also
/// joined, quoted, so the same analyzer sees it. A tool named for an
/// interpreter that gets `code` runs it as `python3 -c '<code>'` would; one
/// named for a program that gets `args` runs that program with them.
fn exec_commands(tool: &str, params: &Map<String, Value>) -> (Vec<String>, Option<Vec<String>>) {
    let mut texts: Vec<String> = Vec::new();
    let mut argv_out = None;
    let words = name_words(split_mcp(tool).map_or(tool, |(_, t)| t));
    let code = [
        "code",
        "source",
        "snippet",
        "cell",
        "cell_source",
        "program",
        "python_code",
        "js_code",
        "javascript_code",
        "script",
    ]
    .iter()
    .find_map(|k| params.get(*k).and_then(Value::as_str));
    if let Some(code) = code {
        let lang = ["language", "lang", "runtime"]
            .iter()
            .find_map(|k| params.get(*k).and_then(Value::as_str))
            .map(str::to_ascii_lowercase);
        // Code for a shell (`sh`, `bash`, `terminal` tools, or a shell
        // language) is a command line.
        let shell = lang.as_deref().map_or_else(
            || {
                words.iter().any(|w| {
                    SHELL_WORDS.contains(&w.as_str())
                        && !matches!(w.as_str(), "exec" | "execute" | "command" | "repl")
                })
            },
            |l| matches!(l, "bash" | "sh" | "shell" | "zsh" | "ksh"),
        );
        let runner = INTERPRETERS
            .iter()
            .find(|(w, _)| {
                lang.as_deref()
                    .is_some_and(|l| l == *w || (*w == "node" && matches!(l, "typescript" | "ts")))
                    || words.iter().any(|x| x == w)
            })
            .map(|(_, r)| *r)
            .or_else(|| {
                // Named for running code, in no language it says: Python,
                // the usual one; its analysis still sees shell escapes.
                words
                    .iter()
                    .any(|w| {
                        matches!(
                            w.as_str(),
                            "eval" | "interpreter" | "exec" | "execute" | "run"
                        )
                    })
                    .then_some("python3 -c")
            });
        if shell {
            texts.push(code.to_string());
        } else if let Some(runner) = runner {
            texts.push(format!("{runner} {}", shell_quote(code)));
        }
    }
    if let Some(program) = words.iter().find(|w| PROGRAM_WORDS.contains(&w.as_str()))
        && let Some(Value::Array(items)) = params.get("args").or_else(|| params.get("argv"))
    {
        let mut text = program.clone();
        for a in items {
            text.push(' ');
            text.push_str(&shell_quote(&match a {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }));
        }
        texts.push(text);
    }
    for key in ["command", "cmd", "script", "commandLine", "command_line"] {
        let text = match params.get(key) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(items)) => {
                let argv: Vec<String> = items
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                let joined = argv
                    .iter()
                    .map(|a| shell_quote(a))
                    .collect::<Vec<_>>()
                    .join(" ");
                if argv_out.is_none() {
                    argv_out = Some(argv);
                }
                joined
            }
            _ => continue,
        };
        if !texts.contains(&text) {
            texts.push(text);
        }
    }
    (texts, argv_out)
}

const PATH_KEYS: [&str; 8] = [
    "file_path",
    "path",
    "absolute_path",
    "filePath",
    "notebook_path",
    "target_file",
    "filename",
    "file",
];

fn collect_paths(
    kind: ToolKind,
    tool: &str,
    params: &Map<String, Value>,
    env: &Env,
) -> Vec<PathTarget> {
    let lower = tool.to_ascii_lowercase();
    let access = match kind {
        ToolKind::Write if lower.contains("delete") || lower.contains("remove") => Access::Delete,
        ToolKind::Write => Access::Write,
        _ => Access::Read,
    };
    let mut out = Vec::new();
    let mut push = |raw: &str, access: Access| {
        if !raw.is_empty() {
            out.push(PathTarget {
                raw: raw.to_string(),
                path: env.resolve(raw),
                access,
            });
        }
    };
    for key in PATH_KEYS {
        if let Some(Value::String(s)) = params.get(key) {
            push(s, access);
        }
    }
    for key in ["paths", "files", "file_paths", "include"] {
        if let Some(Value::Array(items)) = params.get(key) {
            for s in items.iter().filter_map(Value::as_str) {
                push(s, access);
            }
        }
    }
    // Moves and copies: the source may be read or removed, the destination written.
    for key in ["source", "src", "from", "old_path", "oldPath"] {
        if let Some(Value::String(s)) = params.get(key) {
            let a = if lower.contains("move") || lower.contains("rename") {
                Access::Delete
            } else {
                Access::Read
            };
            push(
                s,
                if kind == ToolKind::Write {
                    a
                } else {
                    Access::Read
                },
            );
        }
    }
    for key in ["destination", "dest", "to", "new_path", "newPath", "target"] {
        if let Some(Value::String(s)) = params.get(key)
            && kind == ToolKind::Write
        {
            push(s, Access::Write);
        }
    }
    if kind == ToolKind::Read
        && let Some(Value::String(dir)) = params.get("dir_path").or_else(|| params.get("directory"))
    {
        push(dir, Access::Read);
    }
    // apply_patch carries its targets inside the patch text.
    for key in ["input", "patch"] {
        if let Some(Value::String(patch)) = params.get(key) {
            for line in patch.lines() {
                let line = line.trim_start();
                let found = [
                    ("*** Add File: ", Access::Write),
                    ("*** Update File: ", Access::Write),
                    ("*** Delete File: ", Access::Delete),
                    ("*** Move to: ", Access::Write),
                    ("+++ b/", Access::Write),
                    ("--- a/", Access::Write),
                ]
                .iter()
                .find_map(|(p, a)| line.strip_prefix(p).map(|rest| (rest.trim(), *a)));
                if let Some((p, a)) = found
                    && p != "/dev/null"
                {
                    push(p, a);
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.path, a.access).cmp(&(&b.path, b.access)));
    out.dedup_by(|a, b| a.path == b.path && a.access == b.access);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(v: Value) -> ToolCall {
        serde_json::from_value(v).unwrap()
    }

    fn env() -> Env {
        Env::new("/home/dev", "/home/dev/proj")
    }

    #[test]
    fn shell_tool_names_map_to_exec() {
        for t in [
            "exec",
            "Bash",
            "run_shell_command",
            "shell",
            "run_terminal_cmd",
        ] {
            assert_eq!(kind_of(t), ToolKind::Exec, "{t}");
        }
    }

    #[test]
    fn bridge_is_unwrapped() {
        let n = normalize(
            &call(json!({"tool":"tool_call","params":{"id":"exec","args":{"command":"ls"}}})),
            &env(),
        );
        assert_eq!(n.kind, ToolKind::Exec);
        assert_eq!(n.command.as_deref(), Some("ls"));
        assert!(n.bridged);
    }

    #[test]
    fn paths_resolve_against_cwd_and_workdir() {
        let n = normalize(
            &call(
                json!({"tool":"Write","params":{"file_path":"../x","content":""},"cwd":"/srv/app"}),
            ),
            &env(),
        );
        assert_eq!(n.paths[0].path, "/srv/x");
        assert_eq!(n.paths[0].access, Access::Write);
        let n = normalize(
            &call(json!({"tool":"exec","params":{"command":"ls","workdir":"sub"}})),
            &env(),
        );
        assert_eq!(n.cwd, "/home/dev/proj/sub");
    }

    #[test]
    fn codex_argv_is_joined_for_analysis() {
        let n = normalize(
            &call(json!({"tool":"shell","params":{"command":["bash","-lc","rm -rf ~"]}})),
            &env(),
        );
        assert_eq!(n.command.as_deref(), Some("bash -lc 'rm -rf ~'"));
    }

    #[test]
    fn shell_tools_are_exec_whatever_their_name() {
        for t in [
            "mcp__x__bash",
            "mcp__x__run_sh",
            "mcp__x__zsh",
            "mcp__x__runBashCmd",
            "mcp__x__pwsh",
            "mcp__x__ssh_run",
        ] {
            assert_eq!(kind_of(t), ToolKind::Exec, "{t}");
        }
        // `sh` inside a word is not a shell.
        assert_ne!(kind_of("mcp__git__push"), ToolKind::Exec);
        assert_ne!(kind_of("mcp__x__refresh"), ToolKind::Exec);
        // Any other tool keeps its kind and carries the command too (the
        // engine judges both).
        for t in [
            "mcp__x__do_it",
            "mcp__fs__write_file",
            "custom_runner",
            "message",
        ] {
            let c = call(json!({"tool": t, "params": {"command": "rm -rf /"}}));
            let n = normalize(&c, &env());
            assert_eq!(n.kind, kind_of(t), "{t}");
            assert_eq!(n.command.as_deref(), Some("rm -rf /"));
        }
        // Every command and working directory is kept.
        let c = call(
            json!({"tool": "bash", "params": {"command": "ls", "cmd": "rm -rf ~",
            "script": "ls", "cwd": "/a", "workdir": "/b"}}),
        );
        let n = normalize(&c, &env());
        assert_eq!(n.command.as_deref(), Some("ls"));
        assert_eq!(n.alt_commands, vec!["rm -rf ~".to_string()]);
        assert_eq!(n.cwd, "/b");
        assert_eq!(n.alt_cwds, vec!["/a".to_string()]);
    }

    #[test]
    fn mcp_tools_are_classified_by_verb() {
        assert_eq!(kind_of("mcp__filesystem__write_file"), ToolKind::Write);
        assert_eq!(kind_of("mcp__filesystem__read_text_file"), ToolKind::Read);
        assert_eq!(split_mcp("mcp__fs__write_file"), Some(("fs", "write_file")));
        assert_eq!(split_mcp("mcp__broken"), None);
    }

    #[test]
    fn apply_patch_targets_are_found() {
        let n = normalize(
            &call(
                json!({"tool":"apply_patch","params":{"input":"*** Begin Patch\n*** Update File: src/a.rs\n*** Delete File: /etc/hosts\n"}}),
            ),
            &env(),
        );
        let got: Vec<_> = n
            .paths
            .iter()
            .map(|p| (p.path.as_str(), p.access))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/etc/hosts", Access::Delete),
                ("/home/dev/proj/src/a.rs", Access::Write)
            ]
        );
    }
}
