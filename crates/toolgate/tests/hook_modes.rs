//! The hook's fail-closed paths as processes: an escalation in every Claude
//! Code permission mode, `[hooks] host_prompt` and `hold`, the deadline that
//! answers before the runtime's timeout (a daemon that never answers, a
//! store another process has locked), and `toolgate install` entries that
//! carry every setting on the command line (runtimes may strip the hook's
//! environment), a fail-closed switch and a timeout above the hold.

use serde_json::{Value, json};
use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A fresh directory, removed with everything in it when the returned
/// guard drops (declare it before anything that uses the directory, such
/// as a daemon, so that it is dropped after them).
fn temp_dir(tag: &str) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix(&format!("tg-modes-{tag}-"))
        .tempdir()
        .unwrap();
    // Used as a data directory, which toolgate refuses when it is open to
    // other users.
    let private = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o700);
    std::fs::set_permissions(d.path(), private).unwrap();
    d
}

/// `toolgate ARGS` with stdin, the toolgate environment cleared, `env` set.
fn run(args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args);
    for k in [
        "TOOLGATE_URL",
        "TOOLGATE_AGENT_TOKEN",
        "TOOLGATE_POLICY",
        "TOOLGATE_DATA_DIR",
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
    ] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_json(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|_| panic!("not JSON: {text:?}"))
}

fn claude(mode: &str, cmd: &str) -> String {
    json!({"session_id": "s1", "cwd": "/tmp", "hook_event_name": "PreToolUse",
           "permission_mode": mode, "tool_name": "Bash", "tool_input": {"command": cmd},
           "tool_use_id": "t1"})
    .to_string()
}

fn permission(v: &Value) -> &str {
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
}

const ESCALATED: &str = "git push origin main";

#[test]
fn an_escalation_is_denied_in_every_mode_unless_a_person_may_answer() {
    let dir_tmp = temp_dir("modes");
    let dir = dir_tmp.path();
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let asking = dir.join("asking.toml");
    std::fs::write(&asking, "[hooks]\nhost_prompt = true\n").unwrap();
    let asking = asking.to_str().unwrap();
    for mode in [
        "bypassPermissions",
        "acceptEdits",
        "dontAsk",
        "default",
        "plan",
        "auto",
        "",
    ] {
        let out = run(
            &["--data-dir", data, "hook", "claude-code"],
            &[],
            &claude(mode, ESCALATED),
        );
        assert_eq!(permission(&stdout_json(&out)), "deny", "{mode}");
        let out = run(
            &[
                "--data-dir",
                data,
                "hook",
                "claude-code",
                "--policy",
                asking,
                // A test's own temporary file (its user's).
                "--allow-writable-policy",
            ],
            &[],
            &claude(mode, ESCALATED),
        );
        let want = if matches!(mode, "default" | "plan") {
            "ask"
        } else {
            "deny"
        };
        assert_eq!(
            permission(&stdout_json(&out)),
            want,
            "{mode} with host_prompt"
        );
    }
}

#[test]
fn hold_waits_for_the_approval_and_then_allows() {
    let dir_tmp = temp_dir("hold");
    let dir = dir_tmp.path();
    let data = dir.join("data");
    let policy = dir.join("hold.toml");
    // Generous: on a loaded machine the approval may take seconds to show.
    std::fs::write(&policy, "[hooks]\nhold = \"50s\"\n").unwrap();
    let args_owned = [
        "--data-dir".to_string(),
        data.to_string_lossy().into_owned(),
        "hook".into(),
        "claude-code".into(),
        "--policy".into(),
        policy.to_string_lossy().into_owned(),
        "--allow-writable-policy".into(),
        "--timeout".into(),
        "60".into(),
    ];
    let started = Instant::now();
    let finished: Arc<Mutex<Option<String>>> = Arc::default();
    let seen = finished.clone();
    let hook = std::thread::spawn(move || {
        let args: Vec<&str> = args_owned.iter().map(String::as_str).collect();
        let out = run(
            &args,
            &[("USER", "agent")],
            &claude("bypassPermissions", ESCALATED),
        );
        *seen.lock().unwrap() = Some(format!(
            "the hook already answered: {} {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
        out
    });
    // The pending approval appears in the shared store, marked as waited on
    // (the UI's "agent waiting"); an operator approves it.
    let id = wait_for_pending(&data, || {
        finished
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| "the hook is still waiting".to_string())
    });
    let show = |data: &Path, id: &str| {
        let out = run(
            &[
                "--data-dir",
                data.to_str().unwrap(),
                "approvals",
                "show",
                id,
                "--json",
            ],
            &[],
            "",
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)
    };
    let mark_deadline = Instant::now() + Duration::from_secs(20);
    while show(&data, &id)["waiting_until_ms"].as_i64().is_none() {
        assert!(
            Instant::now() < mark_deadline,
            "the hold never marked the approval as waited on: {}",
            show(&data, &id)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = run(
        &[
            "--data-dir",
            data.to_str().unwrap(),
            "approvals",
            "approve",
            &id,
            "--as",
            "operator",
        ],
        &[("USER", "operator")],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = hook.join().unwrap();
    let v = stdout_json(&out);
    assert_eq!(permission(&v), "allow", "{v}");
    // The wait is over: the mark is gone.
    assert!(
        show(&data, &id).get("waiting_until_ms").is_none(),
        "{}",
        show(&data, &id)
    );
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "answered when approved, not at the end"
    );
}

/// The id of the first pending approval in `data`; `hook` says what the
/// hook did, for the message when none appears.
fn wait_for_pending(data: &Path, hook: impl Fn() -> String) -> String {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let out = run(
            &[
                "--data-dir",
                data.to_str().unwrap(),
                "approvals",
                "list",
                "--json",
            ],
            &[],
            "",
        );
        let text = String::from_utf8_lossy(&out.stdout);
        if let Some(id) = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["id"].as_str().map(str::to_string))
        {
            return id;
        }
        assert!(
            Instant::now() < deadline,
            "no pending approval appeared; the last `approvals list` exited {:?}: {}{}; {}",
            out.status.code(),
            text,
            String::from_utf8_lossy(&out.stderr),
            hook()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_hold_that_runs_out_is_a_denial() {
    let dir_tmp = temp_dir("holdout");
    let dir = dir_tmp.path();
    let policy = dir.join("hold.toml");
    std::fs::write(&policy, "[hooks]\nhold = \"1s\"\n").unwrap();
    let out = run(
        &[
            "--data-dir",
            dir.join("data").to_str().unwrap(),
            "hook",
            "codex",
            "--policy",
            policy.to_str().unwrap(),
            "--allow-writable-policy",
        ],
        &[],
        &claude("bypassPermissions", ESCALATED),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(permission(&stdout_json(&out)), "deny");
}

#[test]
fn the_hook_answers_before_the_runtimes_timeout() {
    // A daemon that accepts and never answers: the hook's own deadline
    // (8 s) is longer than this runtime's timeout (3 s), so the watchdog
    // must answer first.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let _hold = std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s);
        }
    });
    let key = toolgate_gate::DaemonKey::from_seed([1; 32])
        .public()
        .to_string();
    for (runtime, input) in [
        ("codex", claude("bypassPermissions", "ls")),
        (
            "gemini",
            json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                "tool_input": {"command": "ls"}})
            .to_string(),
        ),
        ("claude-code", claude("default", "ls")),
    ] {
        let started = Instant::now();
        let out = run(
            &[
                "hook",
                runtime,
                "--timeout",
                "3",
                "--url",
                &addr,
                "--daemon-key",
                &key,
                "--token",
                "t",
            ],
            &[],
            &input,
        );
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(3),
            "{runtime} answered after {took:?}"
        );
        let v = stdout_json(&out);
        let text = v.to_string();
        assert!(text.contains("deny"), "{runtime}: {text}");
        assert!(text.contains("no decision within"), "{runtime}: {text}");
        let code = out.status.code();
        match runtime {
            "claude-code" => assert_eq!(code, Some(0)),
            _ => assert_eq!(code, Some(2), "{runtime}"),
        }
    }
}

#[test]
fn the_hook_answers_before_the_runtimes_timeout_while_its_store_is_locked() {
    // Deciding in this process: another connection holds the database's
    // write lock, so recording the decision waits (SQLite's busy timeout
    // is 30 s); the deadline (--timeout 2 leaves 0.5 s) must answer first,
    // with the runtime's denial, and nothing may be recorded as allowed.
    let data_tmp = temp_dir("locked");
    let data = data_tmp.path();
    let data_s = data.to_str().unwrap();
    let env = [("TOOLGATE_DATA_DIR", data_s)];
    let first = run(&["hook", "claude-code"], &env, &claude("default", "ls"));
    // Allowed: no decision (Claude's own permission rules apply).
    assert_eq!(permission(&stdout_json(&first)), "none");
    let conn = rusqlite::Connection::open(data.join("toolgate.db")).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    for (runtime, input, code) in [
        ("claude-code", claude("default", "ls"), 0),
        ("codex", claude("bypassPermissions", "ls"), 2),
    ] {
        let started = Instant::now();
        let out = run(&["hook", runtime, "--timeout", "2"], &env, &input);
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "{runtime} answered after {took:?}"
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(text.contains("deny"), "{runtime}: {text}");
        assert!(
            text.contains("no decision within 0.5 s"),
            "{runtime}: {text}"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("no decision within"), "{runtime}: {stderr}");
        assert_eq!(out.status.code(), Some(code), "{runtime}");
    }
    conn.execute_batch("ROLLBACK").unwrap();
    drop(conn);
}

fn install(runtime: &str, home: &Path, extra: &[&str], env: &[(&str, &str)]) -> (Output, Value) {
    let mut args = vec!["install", runtime];
    args.extend_from_slice(extra);
    let home_s = home.to_str().unwrap();
    let mut all_env = vec![("HOME", home_s)];
    all_env.extend_from_slice(env);
    let out = run(&args, &all_env, "");
    let file = match runtime {
        "claude-code" => home.join(".claude/settings.json"),
        "codex" => home.join(".codex/hooks.json"),
        "gemini" => home.join(".gemini/settings.json"),
        _ => home.join(".cursor/hooks.json"),
    };
    let v = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (out, v)
}

#[test]
fn cursor_entries_are_fail_closed_with_a_timeout_for_every_tool_event() {
    let home_tmp = temp_dir("cursor");
    let home = home_tmp.path();
    let (out, v) = install("cursor", home, &[], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["version"], 1);
    for event in [
        "preToolUse",
        "beforeShellExecution",
        "beforeMCPExecution",
        "beforeReadFile",
    ] {
        let e = &v["hooks"][event][0];
        assert_eq!(e["failClosed"], true, "{event}: {v}");
        assert_eq!(e["timeout"], 10, "{event}");
        assert!(
            e["command"]
                .as_str()
                .unwrap()
                .contains(" hook cursor --timeout 10")
        );
    }
}

#[test]
fn settings_are_on_the_command_line_and_survive_a_stripped_environment() {
    let home_tmp = temp_dir("gemini");
    let home = home_tmp.path();
    let data = home.join("tg-data");
    let policy = home.join("my policy.toml");
    std::fs::write(
        &policy,
        "[rules]\ndeny = [\"exec(echo toolgate-marker:*)\"]\n[hooks]\nhold = \"2m\"\n",
    )
    .unwrap();
    let (out, v) = install(
        "gemini",
        home,
        &[],
        &[
            ("TOOLGATE_POLICY", policy.to_str().unwrap()),
            ("TOOLGATE_DATA_DIR", data.to_str().unwrap()),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let entry = &v["hooks"]["BeforeTool"][0]["hooks"][0];
    // The hold is 2 minutes: the runtime's timeout (ms here) is above it.
    assert_eq!(entry["timeout"], 135_000, "{v}");
    let command = entry["command"].as_str().unwrap().to_string();
    assert!(command.contains("--timeout 135"), "{command}");
    assert!(
        command.contains("--policy '"),
        "quoted path with a blank: {command}"
    );
    assert!(command.contains("--data-dir"), "{command}");
    // Run the installed command as Gemini would under GitHub Actions: with
    // no TOOLGATE_* variables at all.
    let payload = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
        "tool_input": {"command": "echo toolgate-marker hi"}})
    .to_string();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&command)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v = stdout_json(&out);
    assert_eq!(
        v["decision"], "deny",
        "the policy on the command line was used: {v}"
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        data.join("toolgate.db").exists(),
        "the data dir on the command line was used"
    );
}

#[test]
fn a_timeout_shorter_than_the_hold_is_refused() {
    let home_tmp = temp_dir("short");
    let home = home_tmp.path();
    let policy = home.join("hold.toml");
    std::fs::write(&policy, "[hooks]\nhold = \"2m\"\n").unwrap();
    let (out, _) = install(
        "claude-code",
        home,
        &["--policy", policy.to_str().unwrap(), "--timeout", "30"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("too short"), "{err}");
    assert!(!home.join(".claude/settings.json").exists());
}
