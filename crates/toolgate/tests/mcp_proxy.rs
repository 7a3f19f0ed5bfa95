//! `toolgate mcp-proxy` as a process, between a scripted client (this test)
//! and `examples/fake_mcp_server.rs`, which logs every line it receives, so
//! each test can say what the server never saw.

mod common;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

struct Dirs {
    root: PathBuf,
    /// Removes `root` when the test ends.
    _tmp: tempfile::TempDir,
}

impl Dirs {
    fn new(name: &str) -> Dirs {
        let tmp = tempfile::Builder::new()
            .prefix(&format!("mcp-{name}-"))
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let base = tmp.path().to_path_buf();
        std::fs::create_dir_all(base.join("ws/.claude/commands")).unwrap();
        Dirs {
            root: base,
            _tmp: tmp,
        }
    }
    fn ws(&self) -> PathBuf {
        self.root.join("ws")
    }
    fn data(&self) -> PathBuf {
        self.root.join("data")
    }
    fn log(&self) -> PathBuf {
        self.root.join("server.log")
    }
    fn server_saw(&self) -> String {
        std::fs::read_to_string(self.log()).unwrap_or_default()
    }
}

/// `examples/fake_mcp_server`, built once per test run: `cargo test`
/// builds every example, but `cargo test --test mcp_proxy` does not. The
/// build names the whole workspace, as `cargo test --workspace` does, so
/// that after it this is a no-op: `-p toolgate` would compile two dozen
/// dependencies again with another set of features.
fn fake_server() -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples/fake_mcp_server");
    BUILT.call_once(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-q", "--locked", "--workspace", "--examples"])
            .status()
            .unwrap();
        assert!(status.success(), "cannot build examples/fake_mcp_server");
    });
    assert!(p.exists(), "no {}", p.display());
    p
}

struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    out: mpsc::Receiver<Value>,
}

impl Proxy {
    fn start(d: &Dirs, opts: &[&str], env: &[(&str, &str)]) -> Proxy {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.arg("--data-dir")
            .arg(d.data())
            .arg("mcp-proxy")
            .args(["--name", "fs"])
            .args(opts)
            .arg("--")
            .arg(fake_server())
            .arg(d.log())
            .current_dir(d.ws())
            .env_remove("TOOLGATE_URL")
            .env_remove("TOOLGATE_AGENT_TOKEN")
            .env_remove("TOOLGATE_POLICY")
            .env_remove("TOOLGATE_DATA_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("the proxy printed a non-JSON line {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut p = Proxy {
            child,
            stdin,
            out: rx,
        };
        p.send_line(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test-client", "version": "1"}}})
            .to_string(),
        );
        assert_eq!(p.next()["id"], 0);
        p
    }

    fn start_eliciting(d: &Dirs, opts: &[&str]) -> Proxy {
        let mut p = Proxy::start(d, opts, &[]);
        // A second initialize declaring elicitation (the proxy keeps the
        // latest client capabilities).
        p.send_line(
            &json!({"jsonrpc": "2.0", "id": "i2", "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "test-client", "version": "1"}}})
            .to_string(),
        );
        assert_eq!(p.next()["id"], "i2");
        p
    }

    fn send_line(&mut self, line: &str) {
        let s = self.stdin.as_mut().unwrap();
        writeln!(s, "{line}").unwrap();
        s.flush().unwrap();
    }

    fn call(&mut self, id: u64, tool: &str, args: Value) {
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": args}})
            .to_string(),
        );
    }

    fn next(&mut self) -> Value {
        self.out
            .recv_timeout(Duration::from_secs(30))
            .map(|v| {
                eprintln!("<- {v}");
                v
            })
            .expect("the proxy answered nothing within 30 s")
    }

    fn close(mut self) -> i32 {
        drop(self.stdin.take());
        for _ in 0..100 {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("the proxy did not exit within 10 s of its client leaving");
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn allowed_calls_reach_the_server_and_blocked_ones_never_do() {
    let d = Dirs::new("block");
    let mut p = Proxy::start(&d, &[], &[]);
    p.call(1, "write_file", json!({"path": "in.txt", "content": "ok"}));
    let a = p.next();
    assert_eq!(a["id"], 1);
    assert!(a["result"]["isError"].is_null(), "{a}");
    assert_eq!(
        std::fs::read_to_string(d.ws().join("in.txt")).unwrap(),
        "ok"
    );

    // A shell tool deleting the root: blocked outright, at once.
    p.call(2, "run_command", json!({"command": "rm -rf /"}));
    let a = p.next();
    assert_eq!(a["id"], 2);
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(text_of(&a).contains("rm -rf /"), "{a}");
    assert!(
        !d.server_saw().contains("run_command"),
        "{}",
        d.server_saw()
    );

    // Not JSON: answered with a parse error, not forwarded.
    p.send_line("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",NaN}");
    let a = p.next();
    assert_eq!(a["error"]["code"], -32700, "{a}");
    assert!(!d.server_saw().contains("NaN"));

    // A key given twice, at any depth: refused, never forwarded.
    p.send_line(
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"rm -rf /","command":"ls"}}}"#,
    );
    let a = p.next();
    assert_eq!(a["error"]["code"], -32700, "{a}");
    assert!(a.to_string().contains("appears twice"), "{a}");
    assert!(!d.server_saw().contains("rm -rf"), "{}", d.server_saw());

    // Other methods pass through.
    p.send_line(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
    assert_eq!(p.next()["result"]["tools"][0]["name"], "write_file");
    assert_eq!(p.close(), 0);

    // Everything judged is in a verifying audit log.
    let out = toolgate(&d, &["audit", "verify"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Dirs {
    /// A path whose writing needs one approval (R3) wherever the checkout
    /// lives: one of the agent's own command files, which later sessions
    /// read as instructions. A path outside
    /// the workspace would not do: when the checkout is under /tmp, so is
    /// every directory these tests can make, and toolgate lets writes to
    /// temp dirs through.
    fn held_path(&self, name: &str) -> String {
        self.ws()
            .join(".claude/commands")
            .join(name)
            .to_string_lossy()
            .into_owned()
    }
}

#[test]
fn what_the_server_gets_is_what_was_judged() {
    let d = Dirs::new("dup");
    let mut p = Proxy::start(&d, &["--wait", "0s"], &[]);
    let held = d.held_path("x.txt");
    // Duplicate keys: which copy counts depends on the reader, so the
    // message is refused and the server gets none of it.
    p.send_line(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"write_file","arguments":{{"path":"{held}","content":"a","path":"in.txt"}}}}}}"#
    ));
    let a = p.next();
    assert_eq!(a["error"]["code"], -32700, "{a}");
    assert!(a.to_string().contains("appears twice"), "{a}");
    assert!(!d.ws().join("in.txt").exists());
    assert!(!Path::new(&held).exists());
    assert!(!d.server_saw().contains(&held), "{}", d.server_saw());
    assert!(!d.server_saw().contains("in.txt"), "{}", d.server_saw());
    // A message read once reaches the server as it was read.
    p.call(2, "write_file", json!({"path": "in.txt", "content": "b"}));
    let a = p.next();
    assert!(a["result"]["isError"].is_null(), "{a}");
    assert_eq!(std::fs::read_to_string(d.ws().join("in.txt")).unwrap(), "b");
}

/// Runs `toolgate --data-dir <test data dir> ARGS`.
fn toolgate(d: &Dirs, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(d.data())
        .args(args)
        .output()
        .unwrap()
}

/// Approves `id` as an operator from another process.
fn approve(d: &Dirs, id: &str) {
    let out = toolgate(d, &["approvals", "approve", id]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `toolgate approvals list --json`: one approval per line.
fn approvals_json(d: &Dirs) -> Vec<Value> {
    let out = toolgate(d, &["approvals", "list", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn first_pending(d: &Dirs) -> String {
    for _ in 0..100 {
        let v = approvals_json(d);
        if let Some(id) = v
            .iter()
            .find(|a| a["state"] == "pending")
            .and_then(|a| a["id"].as_str())
        {
            return id.to_string();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("no pending approval appeared");
}

#[test]
fn an_escalation_waits_for_an_operator() {
    let d = Dirs::new("wait");
    let held = d.held_path("report.txt");
    // Not held: answered at once with the approval id.
    let mut p = Proxy::start(&d, &["--wait", "0s"], &[]);
    p.call(1, "write_file", json!({"path": held, "content": "r"}));
    let a = p.next();
    assert_eq!(a["result"]["isError"], true, "{a}");
    let id = first_pending(&d);
    assert!(text_of(&a).contains(&id), "{a}");
    assert!(!Path::new(&held).exists());
    p.close();

    // Held: an operator approves from another process; the call runs.
    let mut p = Proxy::start(&d, &["--wait", "20s"], &[]);
    p.call(2, "write_file", json!({"path": held, "content": "r"}));
    std::thread::sleep(Duration::from_millis(300));
    let id = first_pending(&d);
    approve(&d, &id);
    let a = p.next();
    assert_eq!(a["id"], 2);
    assert!(a["result"]["isError"].is_null(), "{a}");
    assert_eq!(std::fs::read_to_string(&held).unwrap(), "r");
}

#[test]
fn a_held_call_that_nobody_approves_is_answered_in_time() {
    let d = Dirs::new("timeout");
    let held = d.held_path("late.txt");
    let mut p = Proxy::start(&d, &["--wait", "1s"], &[]);
    p.call(1, "write_file", json!({"path": held, "content": "r"}));
    let a = p.next();
    assert_eq!(a["result"]["isError"], true, "{a}");
    let text = text_of(&a);
    assert!(text.contains("still pending"), "{text}");
    assert!(!Path::new(&held).exists());
    assert!(!d.server_saw().contains("late.txt"));
}

#[test]
fn the_clients_user_is_asked_and_can_decline_or_approve() {
    let d = Dirs::new("elicit");
    let held = d.held_path("asked.txt");
    let mut p = Proxy::start_eliciting(&d, &["--wait", "20s"]);
    p.call(1, "write_file", json!({"path": held, "content": "r"}));
    let ask = p.next();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    assert!(
        ask["params"]["message"]
            .as_str()
            .unwrap()
            .contains("mcp__fs__write_file")
    );
    p.send_line(
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}).to_string(),
    );
    let a = p.next();
    assert_eq!(a["id"], 1);
    assert_eq!(a["result"]["isError"], true);
    assert!(text_of(&a).contains("declined"), "{a}");
    assert!(!d.server_saw().contains("asked.txt"));
    assert!(
        !d.server_saw().contains("decline"),
        "answers to the proxy stay in the proxy"
    );
    p.close();

    // With relayed approvals on, accepting approves it: the call runs.
    let policy = d.root.join("relay.toml");
    let default = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/default.toml"),
    )
    .unwrap();
    std::fs::write(&policy, relay_on(&default)).unwrap();
    let mut p =
        Proxy::start_eliciting(&d, &["--wait", "20s", "--policy", policy.to_str().unwrap()]);
    p.call(2, "write_file", json!({"path": held, "content": "yes"}));
    let ask = p.next();
    assert_eq!(ask["method"], "elicitation/create", "{ask}");
    p.send_line(
        &json!({"jsonrpc": "2.0", "id": ask["id"],
            "result": {"action": "accept", "content": {"approve": true}}})
        .to_string(),
    );
    let a = p.next();
    assert_eq!(a["id"], 2, "{a}");
    assert!(a["result"]["isError"].is_null(), "{a}");
    assert_eq!(std::fs::read_to_string(&held).unwrap(), "yes");
}

/// The default policy with `[approvals] relay = true`.
fn relay_on(policy: &str) -> String {
    if policy.contains("[approvals]") {
        let mut out = String::new();
        for line in policy.lines() {
            if line.trim_start().starts_with("relay") {
                continue;
            }
            out.push_str(line);
            out.push('\n');
            if line.trim() == "[approvals]" {
                out.push_str("relay = true\n");
            }
        }
        out
    } else {
        format!("{policy}\n[approvals]\nrelay = true\n")
    }
}

#[test]
fn a_cancelled_held_call_is_dropped() {
    let d = Dirs::new("cancel");
    let held = d.held_path("cancelled.txt");
    let mut p = Proxy::start(&d, &["--wait", "20s"], &[]);
    p.call(7, "write_file", json!({"path": held, "content": "r"}));
    std::thread::sleep(Duration::from_millis(300));
    p.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#);
    p.send_line(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#);
    let a = p.next();
    assert_eq!(a["id"], 8, "no answer for the cancelled call: {a}");
    let id = first_pending(&d);
    approve(&d, &id);
    std::thread::sleep(Duration::from_millis(600));
    assert!(!Path::new(&held).exists());
    assert_eq!(p.close(), 0);
}

const AGENT: &str = "agent-token-for-mcp-proxy-tests-0001";

/// `toolgate serve` on the test's data dir: the process, its URL and its
/// public key (what a proxy pins with --daemon-key).
fn daemon_for(d: &Dirs) -> (common::Daemon, String, String) {
    let daemon = common::spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            d.data().to_str().unwrap(),
        ],
        &[
            ("TOOLGATE_AGENT_TOKEN", AGENT),
            (
                "TOOLGATE_OPERATOR_TOKEN",
                "operator-token-for-mcp-proxy-tests-01",
            ),
        ],
    )
    .unwrap();
    let url = format!("http://{}", daemon.addr);
    let key = std::fs::read_to_string(d.data().join("daemon.pub"))
        .unwrap()
        .trim()
        .to_string();
    (daemon, url, key)
}

#[test]
fn through_the_daemon_and_failing_closed_without_it() {
    let d = Dirs::new("daemon");
    let (daemon, url, key) = daemon_for(&d);
    let agent = AGENT;
    let held = d.held_path("x.txt");
    let mut p = Proxy::start(
        &d,
        &["--wait", "0s", "--daemon-key", &key],
        &[("TOOLGATE_URL", &url), ("TOOLGATE_AGENT_TOKEN", agent)],
    );
    p.call(1, "write_file", json!({"path": "in.txt", "content": "ok"}));
    assert!(p.next()["result"]["isError"].is_null());
    p.call(2, "run_command", json!({"command": "rm -rf /"}));
    assert_eq!(p.next()["result"]["isError"], true);
    p.call(3, "write_file", json!({"path": held, "content": "x"}));
    let a = p.next();
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(!Path::new(&held).exists());
    assert!(!d.server_saw().contains("run_command"));
    p.close();
    drop(daemon);

    // The daemon is gone: every call fails closed.
    let mut p = Proxy::start(
        &d,
        &["--wait", "0s", "--daemon-key", &key],
        &[("TOOLGATE_URL", &url), ("TOOLGATE_AGENT_TOKEN", agent)],
    );
    p.call(3, "write_file", json!({"path": "in2.txt", "content": "ok"}));
    let a = p.next();
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(text_of(&a).contains("fail-closed"), "{a}");
    assert!(!d.ws().join("in2.txt").exists());
}

#[test]
fn a_cancelled_call_held_by_the_daemon_does_not_use_its_approval() {
    let d = Dirs::new("daemon-cancel");
    let (daemon, url, key) = daemon_for(&d);
    let agent = AGENT;
    let held = d.held_path("ghost.txt");
    let mut p = Proxy::start(
        &d,
        &["--wait", "30s", "--daemon-key", &key],
        &[("TOOLGATE_URL", &url), ("TOOLGATE_AGENT_TOKEN", agent)],
    );
    p.call(9, "write_file", json!({"path": held, "content": "x"}));
    let id = first_pending(&d);
    p.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#);
    // Give the proxy a moment to hang up on the daemon.
    std::thread::sleep(Duration::from_millis(800));
    approve(&d, &id);
    std::thread::sleep(Duration::from_millis(1500));
    let out = toolgate(&d, &["approvals", "list", "--all", "--json"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let state = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|a| a["id"] == id.as_str())
        .map(|a| a["state"].clone());
    assert_eq!(state, Some(json!("approved")), "{text}");
    assert!(!Path::new(&held).exists());
    assert!(!d.server_saw().contains("ghost.txt"));
    drop(daemon);
}
