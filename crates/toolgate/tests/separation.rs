//! The daemon's Unix socket and what it proves, as processes: a hook
//! pinned to the daemon's uid reaches it over the socket and a hook pinned
//! to another uid is denied; a peer of another user gets the agent's
//! routes only (no token needed for a check, operator endpoints absent
//! whatever token it sends); a misspelled `/v1/hooks/<runtime>` is a
//! denial Claude Code honours; a data directory open to other users is
//! refused with what to run.
//!
//! Run as root, the daemon runs as `nobody` and the test is "another
//! user"; otherwise the test runs as the daemon's own user and the
//! other-user half is skipped with a printed reason.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const AGENT: &str = "agent-token-separation-test-0123456789";
const OPERATOR: &str = "operator-token-separation-test-0123456789";

fn my_uid() -> u32 {
    std::fs::metadata("/proc/self").unwrap().uid()
}

fn uid_of(name: &str) -> Option<u32> {
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&name)).then(|| f.get(2)?.parse().ok())?
        })
}

/// A running daemon, killed when dropped.
struct Daemon {
    child: Child,
    addr: String,
    socket: PathBuf,
    uid: u32,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolgate serve` on TCP and a socket in `dir`, as `uid` (when this
/// process may switch to it).
fn daemon(dir: &Path, uid: u32) -> Daemon {
    use std::os::unix::process::CommandExt;
    let data = dir.join("data");
    let run = dir.join("run");
    for (d, mode) in [(&data, 0o700), (&run, 0o755)] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode)).unwrap();
        if uid != my_uid() {
            std::os::unix::fs::chown(d, Some(uid), Some(uid)).unwrap();
        }
    }
    let socket = run.join("toolgate.sock");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("--data-dir")
        .arg(&data)
        .args(["serve", "--listen", "127.0.0.1:0", "--socket"])
        .arg(&socket)
        .env_remove("TOOLGATE_DATA_DIR")
        .env_remove("TOOLGATE_STORE")
        .env_remove("TOOLGATE_POLICY")
        .env("TOOLGATE_AGENT_TOKEN", AGENT)
        .env("TOOLGATE_OPERATOR_TOKEN", OPERATOR)
        .current_dir("/")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if uid != my_uid() {
        cmd.uid(uid).gid(uid);
    }
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut addr = None;
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap_or_default();
        seen.push_str(&line);
        seen.push('\n');
        if let Some(a) = line.strip_prefix("toolgate serve: listening on http://") {
            addr = Some(a.trim().to_string());
        }
        if line.starts_with("toolgate serve: listening on unix:") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    let addr = addr.unwrap_or_else(|| panic!("the daemon did not start: {seen}"));
    Daemon {
        child,
        addr,
        socket,
        uid,
    }
}

/// One HTTP request over the socket: the status and JSON body.
fn over_socket(
    socket: &Path,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, Value) {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw.split(' ').nth(1).unwrap().parse().unwrap();
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn hook(args: &[&str], input: &str) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["hook", "claude-code"])
        .args(args)
        .env_remove("TOOLGATE_URL")
        .env_remove("TOOLGATE_AGENT_TOKEN")
        .env_remove("TOOLGATE_DATA_DIR")
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
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&out.stdout)))
}

fn claude(cmd: &str) -> String {
    json!({"session_id": "s1", "cwd": "/tmp", "hook_event_name": "PreToolUse",
           "permission_mode": "bypassPermissions", "tool_name": "Bash",
           "tool_input": {"command": cmd}, "tool_use_id": "t1"})
    .to_string()
}

fn permission(v: &Value) -> &str {
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
}

fn temp(tag: &str) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix(&format!("tg-sep-{tag}-"))
        .tempdir()
        .unwrap();
    // The daemon's user (nobody, when this runs as root) must reach into it.
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

#[test]
fn a_hook_pinned_to_the_daemons_uid_reaches_it_over_the_socket_and_no_other() {
    let tmp = temp("socket");
    let uid = if my_uid() == 0 {
        uid_of("nobody").unwrap_or(0)
    } else {
        my_uid()
    };
    let d = daemon(tmp.path(), uid);
    let url = format!("unix:{}", d.socket.display());
    let pinned = |uid: u32| {
        vec![
            "--url".to_string(),
            url.clone(),
            "--daemon-uid".to_string(),
            uid.to_string(),
            "--store".to_string(),
            "none".to_string(),
        ]
    };
    let args = pinned(d.uid);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Allowed, blocked, escalated: the daemon's answers, no token sent.
    assert_eq!(permission(&hook(&args, &claude("ls"))), "none");
    let v = hook(&args, &claude("rm -rf /"));
    assert_eq!(permission(&v), "deny", "{v}");
    assert!(
        v.to_string().contains("TOOLGATE_BLOCK"),
        "the daemon's reason: {v}"
    );
    // Pinned to another uid: the socket is not believed.
    let wrong = pinned(d.uid.wrapping_add(1));
    let wrong: Vec<&str> = wrong.iter().map(String::as_str).collect();
    let v = hook(&wrong, &claude("ls"));
    assert_eq!(permission(&v), "deny", "{v}");
    assert!(
        v.to_string().contains(&format!("served by uid {}", d.uid)),
        "{v}"
    );
    // The socket is the daemon's; its directory is not writable by others.
    let m = std::fs::metadata(&d.socket).unwrap();
    assert_eq!(m.uid(), d.uid);
    assert_eq!(
        std::fs::metadata(d.socket.parent().unwrap())
            .unwrap()
            .mode()
            & 0o022,
        0
    );
}

#[test]
fn another_users_peer_gets_the_agents_routes_only() {
    let Some(nobody) = uid_of("nobody").filter(|_| my_uid() == 0) else {
        eprintln!(
            "skipped: needs root, to run the daemon as nobody and be another user on its socket"
        );
        return;
    };
    let tmp = temp("peer");
    let d = daemon(tmp.path(), nobody);
    let call = json!({"tool": "exec", "params": {"command": "ls"}, "cwd": "/tmp"}).to_string();
    // No token: the peer's uid makes it the agent.
    let (s, v) = over_socket(&d.socket, "POST", "/v1/check", None, &call);
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["decision"], "allow", "{v}");
    let (s, v) = over_socket(&d.socket, "GET", "/v1/whoami", None, "");
    assert_eq!((s, v["role"].as_str()), (200, Some("agent")), "{v}");
    // Operator endpoints are not there for it, whatever token it sends.
    for path in ["/v1/approvals", "/v1/state", "/v1/bypass", "/v1/decisions"] {
        let (s, v) = over_socket(&d.socket, "GET", path, Some(OPERATOR), "");
        assert_eq!(s, 404, "{path}: {v}");
    }
    let (s, _) = over_socket(
        &d.socket,
        "POST",
        "/v1/approvals/x/approve",
        Some(OPERATOR),
        "{}",
    );
    assert_eq!(s, 404);
    // Over TCP the operator token still works as before.
    let mut t = std::net::TcpStream::connect(&d.addr).unwrap();
    write!(
        t,
        "GET /v1/state HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {OPERATOR}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    t.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
}

#[test]
fn the_daemons_own_user_needs_an_operator_token_on_the_socket_too() {
    let tmp = temp("own");
    let d = daemon(tmp.path(), my_uid());
    let (s, _) = over_socket(&d.socket, "GET", "/v1/approvals", None, "");
    assert_eq!(s, 403, "no token is the agent's role, never an operator's");
    let (s, v) = over_socket(&d.socket, "GET", "/v1/approvals", Some(OPERATOR), "");
    assert_eq!(s, 200, "{v}");
}

#[test]
fn a_misspelled_hook_route_is_a_denial_claude_code_honours() {
    let tmp = temp("route");
    let d = daemon(tmp.path(), my_uid());
    for path in ["/v1/hooks/claude", "/v1/hooks/claude-code/x", "/v1/hooks/"] {
        let mut t = std::net::TcpStream::connect(&d.addr).unwrap();
        let body = claude("rm -rf ~/important");
        write!(
            t,
            "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {AGENT}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut raw = String::new();
        t.read_to_string(&mut raw).unwrap();
        assert!(raw.starts_with("HTTP/1.1 200"), "{path}: {raw}");
        let v: Value = serde_json::from_str(raw.split_once("\r\n\r\n").unwrap().1).unwrap();
        assert_eq!(permission(&v), "deny", "{path}: {v}");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    }
}

#[test]
fn a_data_directory_open_to_others_is_refused_with_what_to_run() {
    let tmp = temp("loose");
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(&data)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("open to other users (mode 777)"), "{err}");
    assert!(
        err.contains(&format!("chmod 700 {}", data.display())),
        "{err}"
    );
    // The hook deciding in its own process: a denial saying the same.
    let d = data.to_str().unwrap();
    let v = hook(
        &["--url", "none", "--policy", "builtin", "--data-dir", d],
        &claude("ls"),
    );
    assert_eq!(permission(&v), "deny", "{v}");
    assert!(v.to_string().contains("chmod 700"), "{v}");
    // Group access alone is enough to refuse.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o750)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--data-dir")
        .arg(&data)
        .args(["audit", "verify"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("chmod 700"));
    // Private again: accepted.
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
    let v = hook(
        &["--url", "none", "--policy", "builtin", "--data-dir", d],
        &claude("ls"),
    );
    assert_eq!(permission(&v), "none", "{v}");
}
