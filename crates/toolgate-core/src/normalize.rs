//! Maps every runtime's tool names and parameter shapes onto canonical kinds.
//!
//! Params keep their runtime's field names in the [`ToolCall`]; this module
//! only extracts what the layers judge: the command, the paths and how they
//! are accessed, URLs, and action names.

use crate::model::ToolCall;
use crate::paths::Env;
use serde::Serialize;
use serde_json::{Map, Value};

/// The canonical kind of a tool, whatever the runtime calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// A shell command (`exec`, `Bash`, `run_shell_command`, `shell`, …).
    Exec,
    /// Reading files or listing / searching the tree.
    Read,
    /// Creating, editing, patching or deleting files.
    Write,
    /// Fetching a URL.
    Fetch,
    /// A web search.
    Search,
    /// Sending a message to a person or channel.
    Message,
    /// Gateway configuration and lifecycle (OpenClaw `gateway`).
    Gateway,
    /// Scheduled jobs (`cron`, `automations`).
    Automation,
    /// Device control (`nodes`).
    Nodes,
    /// Browser automation.
    Browser,
    /// Managing background processes.
    Process,
    /// Spawning or messaging other agent sessions.
    Sessions,
    /// Installing or configuring plugins.
    Plugins,
    /// Reading or writing stored secrets.
    Secrets,
    /// The agent's own memory and status (read-mostly, seed 000's never-block set).
    Memory,
    /// Anything else (unknown tools, most MCP tools).
    Other,
}

impl ToolKind {
    /// The canonical tool name used in policy rules (`exec`, `read`, `write`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Exec => "exec",
            ToolKind::Read => "read",
            ToolKind::Write => "write",
            ToolKind::Fetch => "web_fetch",
            ToolKind::Search => "web_search",
            ToolKind::Message => "message",
            ToolKind::Gateway => "gateway",
            ToolKind::Automation => "automations",
            ToolKind::Nodes => "nodes",
            ToolKind::Browser => "browser",
            ToolKind::Process => "process",
            ToolKind::Sessions => "sessions",
            ToolKind::Plugins => "plugins",
            ToolKind::Secrets => "secrets",
            ToolKind::Memory => "memory",
            ToolKind::Other => "other",
        }
    }
}

/// Maps a tool name from any runtime (or from a policy rule) to its kind.
/// MCP tools (`mcp__server__tool`) are classified by the tool part's verb.
pub fn kind_of(tool: &str) -> ToolKind {
    if let Some((_, t)) = split_mcp(tool) {
        return mcp_kind(t);
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

/// Splits `mcp__server__tool` into `(server, tool)`.
pub fn split_mcp(tool: &str) -> Option<(&str, &str)> {
    let rest = tool.strip_prefix("mcp__")?;
    let i = rest.find("__")?;
    let (server, tool) = (&rest[..i], &rest[i + 2..]);
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// Words of a tool name: split at non-alphanumerics and camelCase humps,
/// lowercased (`runBashCmd` → `run`, `bash`, `cmd`).
fn name_words(tool: &str) -> Vec<String> {
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
        && !words
            .iter()
            .any(|w| matches!(w.as_str(), "list" | "get" | "search" | "history"));
    if shell_word || has(&["run_script", "runscript"]) {
        ToolKind::Exec
    } else if has(&[
        "write", "edit", "create", "delete", "remove", "move", "rename", "mkdir", "patch", "upload",
    ]) {
        ToolKind::Write
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
}

/// The deepest `tool_call` nesting unwrapped before the call is judged as is.
const MAX_BRIDGE_DEPTH: usize = 8;

/// Normalizes a call. `env` supplies home and the default working directory;
/// the call's own `cwd` (or an exec `workdir`/`cwd`/`directory` param) wins.
pub fn normalize(call: &ToolCall, env: &Env) -> NormalizedCall {
    let mut tool = call.tool.clone();
    let mut params = call.params.clone();
    let mut bridged = false;
    for _ in 0..MAX_BRIDGE_DEPTH {
        if !tool.eq_ignore_ascii_case("tool_call") {
            break;
        }
        let Some(inner) = params.get("id").and_then(Value::as_str).map(str::to_string) else {
            break;
        };
        let args = match params.get("args") {
            Some(Value::Object(m)) => m.clone(),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(m)) => m,
                _ => Map::new(),
            },
            _ => Map::new(),
        };
        tool = inner;
        params = args;
        bridged = true;
    }

    let kind = kind_of(&tool);
    let base_cwd = call
        .cwd
        .as_deref()
        .map(|c| env.resolve(c))
        .unwrap_or_else(|| env.cwd.clone());
    // Every command and working directory the params name: a tool may read
    // any of these keys, so a harmless decoy under one key must not hide
    // the real one under another. The engine judges each combination.
    let (commands, argv) = exec_commands(&tool, &params);
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
    let paths = collect_paths(kind, &tool, &params, &local);
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
    }
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
    let code = ["code", "source", "snippet"]
        .iter()
        .find_map(|k| params.get(*k).and_then(Value::as_str));
    if let Some(code) = code {
        let lang = ["language", "lang", "runtime"]
            .iter()
            .find_map(|k| params.get(*k).and_then(Value::as_str))
            .map(str::to_ascii_lowercase);
        let runner = INTERPRETERS
            .iter()
            .find(|(w, _)| lang.as_deref() == Some(*w) || words.iter().any(|x| x == w))
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
        if let Some(runner) = runner {
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

/// Quotes one argument for a POSIX shell so re-parsing yields it unchanged.
pub fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        return arg.to_string();
    }
    format!("'{}'", arg.replace('\'', "'\\''"))
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
