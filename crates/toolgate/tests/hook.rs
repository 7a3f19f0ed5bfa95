//! `toolgate hook` and `toolgate install` as processes: every runtime
//! answers in its own format, every failure is a denial (exit 0 with JSON,
//! or exit 2 with the reason on stderr where the runtime reads that as a
//! block), the daemon path gives the same answers as the in-process one,
//! the hook answers before its timeout, and `[hooks]` holds and prompts.

mod common;

use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use toolgate_core::hooks::install::shell_word;
use toolgate_gate::DaemonKey;
use toolgate_server::proof;

/// A fresh directory, removed with everything in it when the returned
/// guard drops (declare it before anything that uses the directory, such
/// as a daemon, so that it is dropped after them).
fn temp_dir(tag: &str) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix(&format!("tg-hook-{tag}-"))
        .tempdir()
        .unwrap();
    // Used as a data directory, which toolgate refuses when it is open to
    // other users.
    let private = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o700);
    std::fs::set_permissions(d.path(), private).unwrap();
    d
}

fn hook(runtime: &str, data: &Path, env: &[(&str, &str)], input: &str) -> (i32, Value) {
    hook_with(runtime, data, &[], env, input)
}

/// `toolgate --data-dir DATA hook RUNTIME ARGS…` with `env` and `input`.
fn hook_with(
    runtime: &str,
    data: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    input: &str,
) -> (i32, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("--data-dir")
        .arg(data)
        .args(["hook", runtime])
        .args(args);
    cmd.env_remove("TOOLGATE_URL")
        .env_remove("TOOLGATE_AGENT_TOKEN")
        .env_remove("TOOLGATE_POLICY")
        .env_remove("TOOLGATE_STORE");
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
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(text.trim()).unwrap_or_else(|_| panic!("not JSON: {text:?}"));
    (out.status.code().unwrap_or(-1), v)
}

fn claude(cmd: &str) -> String {
    json!({"session_id": "s1", "cwd": "/tmp", "hook_event_name": "PreToolUse",
           "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "t1"})
    .to_string()
}

fn permission(v: &Value) -> &str {
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
}

#[test]
fn claude_code_hook_decides_in_process() {
    let data_tmp = temp_dir("inproc");
    let data = data_tmp.path();
    // Allowed: no decision, so Claude's own permission rules still apply;
    // with `[hooks] allow_is_final` an allow.
    assert_eq!(
        permission(&hook("claude-code", data, &[], &claude("ls -la")).1),
        "none"
    );
    let policy = data.with_extension("final.toml");
    std::fs::write(&policy, "[hooks]\nallow_is_final = true\n").unwrap();
    let policy_env = [("TOOLGATE_POLICY", policy.to_str().unwrap())];
    assert_eq!(
        permission(&hook("claude-code", data, &policy_env, &claude("ls -la")).1),
        "allow"
    );
    let (code, v) = hook("claude-code", data, &[], &claude("rm -rf /"));
    assert_eq!((code, permission(&v)), (0, "deny"));
    // An escalation is a denial naming the approval, whatever the mode:
    // Claude's `ask` runs the call in bypassPermissions.
    let (_, v) = hook("claude-code", data, &[], &claude("git push origin main"));
    assert_eq!(permission(&v), "deny");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("toolgate approvals approve "), "{reason}");
    assert!(reason.contains("did not run"), "{reason}");
    // Events toolgate does not judge get an empty answer.
    let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {}});
    assert_eq!(
        hook("claude-code", data, &[], &post.to_string()).1,
        json!({})
    );
}

#[test]
fn every_failure_is_a_denial() {
    let data_tmp = temp_dir("fail");
    let data = data_tmp.path();
    for input in [
        "not json",
        "{}",
        r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"}"#,
        // A key given twice: judged as `ls` by one reader, run as `rm -rf /`
        // by another. Refused, at any depth.
        r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /","command":"ls"}}"#,
        r#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
    ] {
        let (code, v) = hook("claude-code", data, &[], input);
        assert_eq!((code, permission(&v)), (0, "deny"), "{input}: {v}");
    }
    let unreachable = [
        ("TOOLGATE_URL", "http://127.0.0.1:9"),
        ("TOOLGATE_AGENT_TOKEN", "x"),
    ];
    // A daemon named without its pin: nothing it could answer would count.
    let (code, v) = hook("claude-code", data, &unreachable, &claude("ls"));
    assert_eq!((code, permission(&v)), (0, "deny"));
    assert!(v.to_string().contains("not pinned"), "{v}");
    let key = DaemonKey::from_seed([1; 32]).public().to_string();
    let pin = ["--daemon-key", key.as_str()];
    let (code, v) = hook_with("claude-code", data, &pin, &unreachable, &claude("ls"));
    assert_eq!((code, permission(&v)), (0, "deny"));
    assert!(v.to_string().contains("did not answer"), "{v}");
    let (_, v) = hook_with(
        "gemini",
        data,
        &pin,
        &unreachable,
        &json!({"hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command", "tool_input": {"command": "ls"}})
        .to_string(),
    );
    assert_eq!(v["decision"], "deny", "{v}");
    // Nobody on a pinned socket.
    let (_, v) = hook_with(
        "claude-code",
        data,
        &[
            "--url",
            "unix:/nonexistent/toolgate.sock",
            "--daemon-uid",
            "0",
            "--store",
            "none",
        ],
        &[],
        &claude("ls"),
    );
    assert_eq!(permission(&v), "deny", "{v}");
    assert!(v.to_string().contains("did not answer"), "{v}");
}

/// Reads one whole request: its nonce header and its body.
fn read_request(s: &mut std::net::TcpStream) -> Option<(Option<String>, Vec<u8>)> {
    use std::io::Read;
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = req.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&req[..head_end]).to_string();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let len: usize = header("content-length")?.parse().ok()?;
    while req.len() < head_end + 4 + len {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    Some((
        header(proof::NONCE_HEADER),
        req[head_end + 4..head_end + 4 + len].to_vec(),
    ))
}

/// A program on 127.0.0.1 posing as the daemon: every check is answered
/// `allow`, signed with `key` (for the nonce and request it got) when
/// given, bare otherwise. Its URL.
fn impostor(key: Option<DaemonKey>) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        while let Ok((mut s, _)) = l.accept() {
            let Some((nonce, request)) = read_request(&mut s) else {
                continue;
            };
            let body = r#"{"decision":"allow","risk":"R0","score":1,"layer":"policy","reason":"allowed: ok","elapsed_us":0}"#;
            let sig = match (&key, nonce) {
                (Some(k), Some(n)) => format!(
                    "{}: {}\r\n",
                    proof::SIGNATURE_HEADER,
                    k.sign(&proof::message(&n, &request, 200, "allow", body.as_bytes()))
                ),
                _ => String::new(),
            };
            let _ = s.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\n{sig}content-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    url
}

/// The attack of the issue: a 20-line server on the daemon's address that
/// answers `{"decision":"allow"}`. Believed by nothing pinned; a signature
/// by the pinned key is what makes an answer count.
#[test]
fn a_fake_daemon_answering_allow_is_a_denial() {
    let data_tmp = temp_dir("impostor");
    let data = data_tmp.path();
    let pinned = DaemonKey::from_seed([7; 32]);
    let key = pinned.public().to_string();
    let rm = claude("rm -rf ~/important");
    for (what, signer) in [
        ("unsigned", None),
        ("signed by another key", Some(DaemonKey::from_seed([8; 32]))),
    ] {
        let url = impostor(signer);
        let (code, v) = hook_with(
            "claude-code",
            data,
            &["--url", &url, "--daemon-key", &key, "--token", "t"],
            &[],
            &rm,
        );
        assert_eq!((code, permission(&v)), (0, "deny"), "{what}: {v}");
        assert!(v.to_string().contains("does not prove"), "{what}: {v}");
    }
    // The same program holding the pinned key is believed (the control).
    let url = impostor(Some(DaemonKey::from_seed([7; 32])));
    let (_, v) = hook_with(
        "claude-code",
        data,
        &["--url", &url, "--daemon-key", &key, "--token", "t"],
        &[],
        &rm,
    );
    assert_eq!(permission(&v), "none", "{v}");
}

/// A daemon on 127.0.0.1 that answers each connection with the next of
/// `answers` (written a few bytes at a time) and closes it; its URL.
fn fake_daemon(answers: Vec<Vec<u8>>) -> String {
    use std::io::Read;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for answer in answers {
            let Ok((mut s, _)) = l.accept() else { return };
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            for piece in answer.chunks(3) {
                if s.write_all(piece).is_err() {
                    break;
                }
            }
        }
    });
    url
}

#[test]
fn every_bad_daemon_answer_is_a_denial() {
    let data_tmp = temp_dir("bad-daemon");
    let data = data_tmp.path();
    // A whole, valid allow (the control: the hook passes it on), and the
    // same answer spoiled in each way a daemon (or something posing as
    // one) could spoil it.
    let allow = r#"{"decision":"allow","risk":"R0","score":1,"layer":"policy","reason":"allowed: ok","elapsed_us":0}"#;
    let with_length = |status: &str, body: &[u8]| {
        [
            format!(
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\n\r\n",
                body.len()
            )
            .as_bytes(),
            body,
        ]
        .concat()
    };
    let answers: Vec<(&str, Vec<u8>)> = vec![
        ("closed without an answer", Vec::new()),
        (
            "short body",
            with_length("200 OK", allow.as_bytes())[..60].to_vec(),
        ),
        ("bad status", with_length("500 Oops", allow.as_bytes())),
        (
            "bad status line",
            b"HTTP/1.1 2xx\r\ncontent-length: 0\r\n\r\n".to_vec(),
        ),
        ("bad JSON", with_length("200 OK", b"{\"decision\":")),
        (
            // Read lossily, this was an allow ("o\u{fffd}").
            "bad UTF-8",
            with_length(
                "200 OK",
                &allow
                    .replace("ok", "o\u{1}")
                    .bytes()
                    .map(|b| if b == 1 { 0xff } else { b })
                    .collect::<Vec<u8>>(),
            ),
        ),
        (
            "no length",
            [b"HTTP/1.1 200 OK\r\n\r\n".as_slice(), allow.as_bytes()].concat(),
        ),
    ];
    let control = with_length("200 OK", allow.as_bytes());
    let url = fake_daemon(
        std::iter::once(control)
            .chain(answers.iter().map(|(_, a)| a.clone()))
            .collect(),
    );
    let env = [
        ("TOOLGATE_URL", url.as_str()),
        ("TOOLGATE_AGENT_TOKEN", "x"),
    ];
    // Even whole and valid, an answer without the pinned key's signature
    // is a denial…
    let key = DaemonKey::from_seed([3; 32]).public().to_string();
    let pin = ["--daemon-key", key.as_str()];
    let (code, v) = hook_with("claude-code", data, &pin, &env, &claude("ls"));
    assert_eq!((code, permission(&v)), (0, "deny"), "the control: {v}");
    assert!(v.to_string().contains("no signature"), "the control: {v}");
    // …and so is each spoiled one.
    for (what, _) in &answers {
        let (code, v) = hook_with("claude-code", data, &pin, &env, &claude("ls"));
        assert_eq!((code, permission(&v)), (0, "deny"), "{what}: {v}");
        assert!(v.to_string().contains("daemon"), "{what}: {v}");
    }
}

#[test]
fn other_runtimes_answer_in_their_own_format() {
    let data_tmp = temp_dir("rt");
    let data = data_tmp.path();
    let gemini = json!({"session_id": "s", "cwd": "/tmp", "hook_event_name": "BeforeTool",
                        "tool_name": "run_shell_command", "tool_input": {"command": "rm -rf /"}});
    assert_eq!(
        hook("gemini", data, &[], &gemini.to_string()).1["decision"],
        "deny"
    );
    let cursor = json!({"hook_event_name": "beforeShellExecution", "command": "rm -rf /",
                        "cwd": "/tmp", "workspace_roots": ["/tmp"]});
    assert_eq!(
        hook("cursor", data, &[], &cursor.to_string()).1["permission"],
        "deny"
    );
    let (_, v) = hook("codex", data, &[], &claude("rm -rf /"));
    assert_eq!(permission(&v), "deny");
}

#[test]
fn the_daemon_path_gives_the_same_answers() {
    let dir_tmp = temp_dir("daemon");
    let dir = dir_tmp.path();
    let agent = "agent-token-hook-test-0123456789";
    let data = dir.join("daemon");
    let daemon = common::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            data.to_str().unwrap(),
        ],
        &[
            ("TOOLGATE_AGENT_TOKEN", agent),
            (
                "TOOLGATE_OPERATOR_TOKEN",
                "operator-token-hook-test-0123456789",
            ),
        ],
    )
    .expect("the daemon starts");
    let addr = format!("http://{}", daemon.addr);
    let env = [
        ("TOOLGATE_URL", addr.as_str()),
        ("TOOLGATE_AGENT_TOKEN", agent),
    ];
    // The key the daemon made in its data dir, pinned as install pins it.
    let key = std::fs::read_to_string(data.join("daemon.pub")).unwrap();
    let pin = ["--daemon-key", key.trim()];
    let local = dir.join("unused");
    assert_eq!(
        permission(&hook_with("claude-code", &local, &pin, &env, &claude("ls")).1),
        "none"
    );
    assert_eq!(
        permission(&hook_with("claude-code", &local, &pin, &env, &claude("rm -rf /")).1),
        "deny"
    );
    let (_, v) = hook_with(
        "claude-code",
        &local,
        &pin,
        &env,
        &claude("git push origin main"),
    );
    assert_eq!(permission(&v), "deny");
    // Nothing was decided locally: the daemon holds the record.
    assert!(!local.join("toolgate.db").exists());
    let bad = [
        ("TOOLGATE_URL", addr.as_str()),
        ("TOOLGATE_AGENT_TOKEN", "wrong-token-0123456789"),
    ];
    let (_, v) = hook_with("claude-code", &local, &pin, &bad, &claude("ls"));
    assert_eq!(permission(&v), "deny");
    assert!(v.to_string().contains("401"), "{v}");
    // Unpinned, the real daemon is not believed either.
    let (_, v) = hook("claude-code", &local, &env, &claude("ls"));
    assert_eq!(permission(&v), "deny");
    assert!(v.to_string().contains("not pinned"), "{v}");
}

/// A hook command that names its daemon, policy and store reads none of
/// TOOLGATE_URL, TOOLGATE_POLICY, TOOLGATE_DATA_DIR and TOOLGATE_STORE: an
/// agent that sets them for the runtime (Claude's `env` in
/// settings.local.json, Gemini's `.env`) redirects nothing.
#[test]
fn a_pinned_hook_ignores_every_variable_pointing_elsewhere() {
    let dir_tmp = temp_dir("pinned");
    let dir = dir_tmp.path();
    let data = dir.join("daemon");
    let agent = "agent-token-pinned-test-0123456789";
    let daemon = common::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            data.to_str().unwrap(),
        ],
        &[
            ("TOOLGATE_AGENT_TOKEN", agent),
            (
                "TOOLGATE_OPERATOR_TOKEN",
                "operator-token-pinned-test-0123456789",
            ),
        ],
    )
    .expect("the daemon starts");
    let real = format!("http://{}", daemon.addr);
    let key = std::fs::read_to_string(data.join("daemon.pub")).unwrap();
    // Everything the agent could point elsewhere: a fake daemon that
    // allows all, a policy allowing all, another data dir and store.
    let fake = impostor(None);
    let lax = dir.join("lax.toml");
    std::fs::write(
        &lax,
        "[rules]\nallow = [\"exec(rm:*)\"]\n[hooks]\nallow_is_final = true\n",
    )
    .unwrap();
    let elsewhere = dir.join("elsewhere");
    let hostile = [
        ("TOOLGATE_URL", fake.as_str()),
        ("TOOLGATE_POLICY", lax.to_str().unwrap()),
        ("TOOLGATE_DATA_DIR", elsewhere.to_str().unwrap()),
        ("TOOLGATE_STORE", "sqlite:/nonexistent/elsewhere"),
        ("TOOLGATE_AGENT_TOKEN", agent),
    ];
    // Through the daemon, pinned: the real daemon answers.
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "[risk]\nescalation_threshold = 36\n").unwrap();
    let pinned = [
        "--url",
        real.as_str(),
        "--daemon-key",
        key.trim(),
        "--policy",
        policy.to_str().unwrap(),
    ];
    let (_, v) = hook_with(
        "claude-code",
        &data,
        &pinned,
        &hostile,
        &claude("rm -rf ~/important"),
    );
    assert_eq!(permission(&v), "deny", "{v}");
    assert!(
        v.to_string().contains("TOOLGATE_"),
        "the real daemon's reason: {v}"
    );
    let (_, v) = hook_with("claude-code", &data, &pinned, &hostile, &claude("ls"));
    assert_eq!(
        permission(&v),
        "none",
        "the lax policy's allow_is_final is not read: {v}"
    );
    // In its own process, pinned to the built-in policy and its data dir.
    let own = dir.join("own");
    let local = ["--url", "none", "--policy", "builtin"];
    let (_, v) = hook_with(
        "claude-code",
        &own,
        &local,
        &hostile,
        &claude("rm -rf ~/important"),
    );
    assert_eq!(permission(&v), "deny", "{v}");
    assert!(own.join("toolgate.db").exists(), "recorded where pinned");
    assert!(!elsewhere.exists(), "nothing where the environment pointed");
    drop(daemon);
}

#[test]
fn install_writes_the_hook_entry_once_and_keeps_other_settings() {
    let dir_tmp = temp_dir("install");
    let dir = dir_tmp.path();
    let settings = dir.join("settings.json");
    std::fs::write(&settings, r#"{"model": "opus", "hooks": {"Stop": []}}"#).unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["install", "claude-code", "--settings"])
            .arg(&settings)
            .output()
            .unwrap()
    };
    assert!(run().status.success());
    assert!(String::from_utf8_lossy(&run().stdout).contains("already"));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(v["model"], "opus");
    assert!(v["hooks"]["Stop"].is_array());
    let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 1);
    let h = &pre[0]["hooks"][0];
    assert_eq!(h["onFailure"], "block");
    assert_eq!(h["timeout"], 10);
    let command = h["command"].as_str().unwrap();
    // Everything pinned: this binary, the built-in policy, no daemon, the
    // data dir (the default one, written out).
    assert!(
        command.starts_with(&format!(
            "{} hook claude-code --timeout 10 --policy builtin --url none --data-dir /",
            shell_word(env!("CARGO_BIN_EXE_toolgate"))
        )),
        "{command}"
    );
    assert!(dir.join("settings.json.bak").exists());
    // A broken settings file is left alone.
    std::fs::write(&settings, "{ not json").unwrap();
    let out = run();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
}

/// Install keeps one truth and can be undone: the hook carries the data dir,
/// the daemon URL with its key (read from the daemon's daemon.pub), and the
/// policy it was installed with (as flags), and names this binary by its
/// absolute path, a project's entry too (only `--portable` names
/// `toolgate` from PATH); the file's key order is kept; no backup replaces
/// an earlier one; `uninstall` restores the file's settings.
#[test]
fn install_carries_its_settings_keeps_order_and_backups_and_uninstall_restores() {
    let dir_tmp = temp_dir("install2");
    let dir = dir_tmp.path();
    let project = dir.join("proj");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let settings = project.join(".claude/settings.json");
    let original =
        "{\n  \"zeta\": 1,\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n";
    std::fs::write(&settings, original).unwrap();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "[hooks]\nhost_prompt = false\n").unwrap();
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let key = DaemonKey::from_seed([4; 32]).public().to_string();
    std::fs::write(data.join("daemon.pub"), format!("{key}\n")).unwrap();
    let toolgate = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .current_dir(&project)
            .env_remove("TOOLGATE_URL")
            .env_remove("TOOLGATE_POLICY")
            .env_remove("TOOLGATE_DATA_DIR")
            .output()
            .unwrap()
    };
    let out = toolgate(&[
        "--data-dir",
        data.to_str().unwrap(),
        "install",
        "claude-code",
        "--project",
        "--policy",
        policy.to_str().unwrap(),
        "--url",
        "http://127.0.0.1:7878",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("next:") && said.contains("toolgate uninstall claude-code --project"),
        "{said}"
    );
    let text = std::fs::read_to_string(&settings).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let command = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.starts_with(&format!(
            "{} hook claude-code ",
            shell_word(env!("CARGO_BIN_EXE_toolgate"))
        )),
        "{command}"
    );
    for flag in [
        "--data-dir",
        "--policy",
        "--url http://127.0.0.1:7878",
        &format!("--daemon-key {key}"),
    ] {
        assert!(command.contains(flag), "{flag} missing: {command}");
    }
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["zeta", "model", "hooks"], "key order kept");
    assert_eq!(
        std::fs::read_to_string(project.join(".claude/settings.json.bak")).unwrap(),
        original
    );
    // A second install (another setting) keeps the first backup; with
    // nothing named, it pins the built-in policy and no daemon; with
    // --portable it names `toolgate` from PATH.
    assert!(
        toolgate(&["install", "claude-code", "--project", "--portable"])
            .status
            .success()
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let command = v["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(
        command,
        "toolgate hook claude-code --timeout 10 --policy builtin --url none"
    );
    assert_eq!(
        std::fs::read_to_string(project.join(".claude/settings.json.bak")).unwrap(),
        original
    );
    assert!(project.join(".claude/settings.json.bak.1").exists());
    // Uninstall: toolgate's entry gone, every other setting as before.
    let out = toolgate(&["uninstall", "claude-code", "--project"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let before: Value = serde_json::from_str(original).unwrap();
    assert_eq!(after, before);
    let keys: Vec<&str> = after
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["zeta", "model", "hooks"]);
    let again = toolgate(&["uninstall", "claude-code", "--project"]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to remove"));
}

/// A hook refuses a policy the agent's user can change (one in its working
/// directory, the agent's workspace; one others may write) with a denial
/// that says how to fix it, unless `--allow-writable-policy` is on its
/// command line; an environment variable cannot say so.
#[test]
fn a_policy_the_agent_can_change_is_a_denial_unless_allowed_on_the_command_line() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = temp_dir("writable");
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let in_project = project.join("toolgate.toml");
    std::fs::write(&in_project, "[hooks]\nallow_is_final = true\n").unwrap();
    let open = tmp.path().join("open.toml");
    std::fs::write(&open, "[hooks]\nallow_is_final = true\n").unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).unwrap();
    let data = tmp.path().join("data");
    let run = |policy: &Path, extra: &[&str], env: &[(&str, &str)]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.arg("--data-dir")
            .arg(&data)
            .args(["hook", "claude-code", "--policy"])
            .arg(policy)
            .args(extra)
            .current_dir(&project)
            .env_remove("TOOLGATE_URL")
            .env_remove("TOOLGATE_POLICY");
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
            .write_all(claude("ls -la").as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), v)
    };
    for policy in [&in_project, &open] {
        let (code, v) = run(policy, &[], &[("TOOLGATE_ALLOW_WRITABLE_POLICY", "1")]);
        assert_eq!((code, permission(&v)), (Some(0), "deny"), "{v}");
        let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(reason.contains("--allow-writable-policy"), "{reason}");
        let (_, v) = run(policy, &["--allow-writable-policy"], &[]);
        assert_eq!(permission(&v), "allow", "{v}");
    }
    let (_, v) = run(&in_project, &[], &[]);
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("working directory"), "{reason}");
    let (_, v) = run(&open, &[], &[]);
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("group or others"), "{reason}");
}
