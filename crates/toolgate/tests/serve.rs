//! `toolgate serve` as a process: start-up with no configuration, token
//! files, SIGHUP reload, and a clean stop on SIGTERM.

mod common;

use common::spawn;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A fresh directory, removed with everything in it when the returned
/// guard drops (declare it before anything that uses the directory, such
/// as a daemon, so that it is dropped after them).
fn temp_dir(tag: &str) -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix(&format!("tg-serve-{tag}-"))
        .tempdir()
        .unwrap();
    // Used as a data directory, which toolgate refuses when it is open to
    // other users.
    let private = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o700);
    std::fs::set_permissions(d.path(), private).unwrap();
    d
}

fn request(addr: &str, method: &str, path: &str, token: &str, body: &str) -> (u16, Value) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status: u16 = raw.split(' ').nth(1).unwrap().parse().unwrap();
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    // Bodies of our JSON answers are small and sent with Content-Length.
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// `toolgate serve` on a free port with its data in `<dir>/data`.
fn daemon_on_a_fresh_dir(dir: &Path) -> (common::Daemon, PathBuf) {
    let data_arg = dir.join("data").display().to_string();
    let d = spawn(
        &["--listen", "127.0.0.1:0", "--data-dir", &data_arg],
        &[] as &[(&str, &str)],
    )
    .unwrap();
    (d, dir.to_path_buf())
}

fn token(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{name}.token")))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn serve_with_no_arguments_uses_the_defaults() {
    let home_tmp = temp_dir("home");
    let home = home_tmp.path().to_path_buf();
    let d = match spawn(
        &[],
        &[("HOME", &home), ("XDG_STATE_HOME", &home.join("state"))],
    ) {
        Ok(d) => d,
        Err(out) if out.contains("Address already in use") => {
            eprintln!("skipped: 127.0.0.1:7878 is taken on this machine ({out})");
            return;
        }
        Err(out) => panic!("toolgate serve did not start: {out}"),
    };
    assert_eq!(d.addr, "127.0.0.1:7878");
    let data = home.join("state/toolgate");
    use std::os::unix::fs::PermissionsExt;
    for name in ["agent", "operator"] {
        let mode = std::fs::metadata(data.join(format!("{name}.token")))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{name}.token");
    }
    let (s, v) = request(
        &d.addr,
        "POST",
        "/v1/check",
        &token(&data, "agent"),
        r#"{"tool":"exec","params":{"command":"ls"}}"#,
    );
    assert_eq!((s, v["decision"].as_str()), (200, Some("allow")));
    let (s, v) = request(&d.addr, "GET", "/v1/state", &token(&data, "operator"), "");
    assert_eq!(s, 200);
    assert_eq!(v["policy"]["origin"], "policies/default.toml");
    assert!(data.join("toolgate.db").exists());
}

#[test]
fn sighup_reloads_and_sigterm_stops() {
    let tmp = temp_dir("hup");
    let dir = tmp.path();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "[rules]\nallow = [\"exec(ls:*)\"]\n").unwrap();
    let policy_arg = policy.display().to_string();
    let data_arg = dir.join("data").display().to_string();
    let mut d = spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--policy",
            &policy_arg,
            // A file in a temporary directory: its user's own.
            "--allow-writable-policy",
            "--data-dir",
            &data_arg,
        ],
        &[] as &[(&str, &str)],
    )
    .unwrap();
    let op = token(&dir.join("data"), "operator");
    let (_, v) = request(&d.addr, "GET", "/v1/state", &op, "");
    assert_eq!(v["policy"]["reloads"], 0);
    let pid = d.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, v) = request(&d.addr, "GET", "/v1/state", &op, "");
        if v["policy"]["reloads"] == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "SIGHUP did not reload: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = d.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(Instant::now() < deadline, "SIGTERM did not stop the daemon");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn bad_tokens_in_the_environment_stop_start_up_with_a_reason() {
    let tmp = temp_dir("badtok");
    let dir = tmp.path();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    let out = cmd
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .env("TOOLGATE_AGENT_TOKEN", "short")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shorter than 16"), "{err}");
}

/// The daemon does not know where an agent runs: a call without `cwd` is
/// judged as running somewhere unknown (its relative paths in no workspace,
/// and said so), never in the daemon's own directory.
#[test]
fn a_call_without_cwd_is_not_judged_in_the_daemons_directory() {
    let tmp = temp_dir("cwd");
    let (d, dir) = daemon_on_a_fresh_dir(tmp.path());
    let agent = token(&dir.join("data"), "agent");
    let (s, v) = request(
        &d.addr,
        "POST",
        "/v1/check",
        &agent,
        r#"{"tool":"exec","params":{"command":"rm -rf build"},"cwd":"/home/dev/proj"}"#,
    );
    assert_eq!((s, v["decision"].as_str()), (200, Some("allow")), "{v}");
    let (s, v) = request(
        &d.addr,
        "POST",
        "/v1/check",
        &agent,
        r#"{"tool":"exec","params":{"command":"rm -rf build"}}"#,
    );
    assert_eq!(s, 200, "{v}");
    assert_ne!(v["decision"], "allow", "{v}");
    assert!(
        v["reason"].as_str().unwrap_or("").contains("(cwd unknown)"),
        "{v}"
    );
    // Misspelled or missing params: refused, not judged.
    for body in [
        r#"{"tool":"Bash"}"#,
        r#"{"tool":"exec","param":{"command":"rm -rf /"},"cwd":"/"}"#,
    ] {
        let (s, v) = request(&d.addr, "POST", "/v1/check", &agent, body);
        assert_eq!(s, 400, "{body}: {v}");
    }
}

/// `toolgate approvals … --url`: list, show and approve through a running
/// daemon, by a start of the id, with an operator token.
#[test]
fn approvals_work_against_a_daemon() {
    let tmp = temp_dir("remote");
    let (d, dir) = daemon_on_a_fresh_dir(tmp.path());
    let agent = token(&dir.join("data"), "agent");
    let operator = token(&dir.join("data"), "operator");
    let (s, v) = request(
        &d.addr,
        "POST",
        "/v1/check",
        &agent,
        r#"{"tool":"exec","params":{"command":"kubectl apply -f prod.yaml"},"cwd":"/srv"}"#,
    );
    assert_eq!((s, v["decision"].as_str()), (200, Some("escalate")), "{v}");
    let id = v["approval"]["id"].as_str().unwrap().to_string();
    let url = format!("http://{}", d.addr);
    let cli = |args: &[&str], token: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        c.args(["approvals"]).args(args).args(["--url", &url]);
        // The local data dir is elsewhere: only the daemon has the approval.
        c.env("TOOLGATE_DATA_DIR", dir.join("elsewhere"));
        c.env_remove("TOOLGATE_APPROVER_TOKEN");
        if let Some(t) = token {
            c.env("TOOLGATE_APPROVER_TOKEN", t);
        }
        c.output().unwrap()
    };
    let out = cli(&["list"], Some(&operator));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("kubectl apply"),
        "{text}"
    );
    let out = cli(&["list", "--token", &operator], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli(&["list"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("operator token"));
    let out = cli(&["list"], Some("wrong-token-0123456789abcdef"));
    assert_ne!(out.status.code(), Some(0));
    let out = cli(&["approve", &id[..6]], Some(&operator));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("approved {id}")));
    let out = cli(&["show", &id[..6], "--json"], Some(&operator));
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["state"], "approved");
    let out = cli(&["show", "0000ffff"], Some(&operator));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn serve_logs_each_hold_vote_and_outcome_and_links_to_its_public_url() {
    let tmp = temp_dir("activity");
    let data_arg = tmp.path().join("data").display().to_string();
    let d = spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            &data_arg,
            "--public-url",
            "https://toolgate.example.test/",
        ],
        &[] as &[(&str, &str)],
    )
    .unwrap();
    let data = tmp.path().join("data");
    let (s, v) = request(
        &d.addr,
        "POST",
        "/v1/check",
        &token(&data, "agent"),
        r#"{"tool":"exec","params":{"command":"kubectl apply -f prod.yaml"},"cwd":"/srv","requester":{"id":"carol"}}"#,
    );
    assert_eq!((s, v["decision"].as_str()), (200, Some("escalate")), "{v}");
    let id = v["approval"]["id"].as_str().unwrap().to_string();
    // Links are built on the public URL, never the loopback address.
    assert_eq!(
        v["approval"]["approve_url"].as_str(),
        Some(format!("https://toolgate.example.test/#approval/{id}").as_str()),
        "{v}"
    );
    let log = d.log_once("held ");
    let held = log
        .lines()
        .find(|l| l.contains("held "))
        .unwrap_or_default();
    assert!(
        held.contains(&id[..8])
            && held.contains("kubectl apply -f prod.yaml")
            && held.contains(&format!("https://toolgate.example.test/#approval/{id}")),
        "{log}"
    );
    let (s, v) = request(
        &d.addr,
        "POST",
        &format!("/v1/approvals/{id}/approve"),
        &token(&data, "operator"),
        r#"{"reason":"release 42"}"#,
    );
    assert_eq!(s, 200, "{v}");
    let log = d.log_once(&format!("approved {}", &id[..8]));
    assert!(
        log.contains(&format!("vote on {}: operator voted approve", &id[..8]))
            && log.contains("release 42"),
        "{log}"
    );
    assert!(log.contains(&format!("approved {}", &id[..8])), "{log}");
    // A public URL that is not one is refused at start, saying what to give.
    drop(d);
    let bad = spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            &data_arg,
            "--public-url",
            "toolgate.example.test",
        ],
        &[] as &[(&str, &str)],
    );
    let err = match bad {
        Ok(_) => panic!("a public URL without a scheme was accepted"),
        Err(e) => e,
    };
    assert!(err.contains("https://"), "{err}");
}

/// Runs `sql` on the test database (a fresh runtime for one statement).
fn postgres(url: &str, sql: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client.batch_execute(sql).await.unwrap();
    });
}

/// A fresh schema of the test database for one test, dropped with it;
/// `None` (with a line saying why) without a test database.
struct PgSchema {
    url: String,
    name: String,
    /// The `--store` value naming it.
    store: String,
}

impl PgSchema {
    fn new(tag: &str) -> Option<PgSchema> {
        let Ok(url) = std::env::var("TOOLGATE_TEST_POSTGRES_URL") else {
            eprintln!(
                "skipped: TOOLGATE_TEST_POSTGRES_URL is unset (a PostgreSQL database to test on)"
            );
            return None;
        };
        let name = format!("{tag}_{}", std::process::id());
        postgres(
            &url,
            &format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"),
        );
        let sep = if url.contains('?') { '&' } else { '?' };
        let store = format!("{url}{sep}options=-csearch_path%3D{name}");
        Some(PgSchema { url, name, store })
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        postgres(
            &self.url,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}

#[test]
fn serve_on_postgres_keeps_its_state_in_the_database_and_its_tokens_in_the_data_dir() {
    let Some(pg) = PgSchema::new("serve") else {
        return;
    };
    let store = pg.store.clone();
    let tmp = temp_dir("postgres");
    let dir = tmp.path();
    let data = dir.join("data");
    let d = spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            data.to_str().unwrap(),
            "--store",
            &store,
        ],
        &[] as &[(&str, &str)],
    )
    .unwrap();
    // The data directory was made (privately) for the tokens alone.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&data).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    assert!(
        !data.join("toolgate.db").exists(),
        "no SQLite beside PostgreSQL"
    );
    let (s, v) = request(
        &d.addr,
        "POST",
        "/v1/check",
        &token(&data, "agent"),
        r#"{"tool":"exec","params":{"command":"git push origin main"}}"#,
    );
    assert_eq!((s, v["decision"].as_str()), (200, Some("escalate")), "{v}");
    drop(d);
    // What the daemon recorded is in the database: the CLI reads it there.
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["--store", &store, "approvals", "list", "--json"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("git push origin main"), "{listed}");
}

/// Two daemons on one PostgreSQL schema (the same tokens, data dirs of
/// their own). Fields drop in order: the daemons stop, then the schema goes.
struct Replicas {
    a: common::Daemon,
    b: common::Daemon,
    pg: PgSchema,
    /// Holds the data dirs; bind it first when destructuring, so that it
    /// drops after the daemons using it.
    dir: tempfile::TempDir,
}

/// [`Replicas`] for one test; `None` (with a line saying why) without a
/// test database.
fn two_daemons_on_postgres(tag: &str) -> Option<Replicas> {
    let pg = PgSchema::new(tag)?;
    let env = [
        ("TOOLGATE_AGENT_TOKEN", REPLICA_AGENT),
        ("TOOLGATE_OPERATOR_TOKEN", REPLICA_OPERATOR),
    ];
    let dir = temp_dir(tag);
    let start = |name: &str| {
        let data = dir.path().join(name).display().to_string();
        spawn(
            &[
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
                &data,
                "--store",
                &pg.store,
            ],
            &env,
        )
        .unwrap()
    };
    Some(Replicas {
        a: start("a"),
        b: start("b"),
        pg,
        dir,
    })
}

/// Approves `id` on the daemon at `addr` as the operator (asserts a 200).
fn approve(addr: &str, id: &str) {
    let (s, v) = request(
        addr,
        "POST",
        &format!("/v1/approvals/{id}/approve"),
        REPLICA_OPERATOR,
        "{}",
    );
    assert_eq!(s, 200, "{v}");
}

const REPLICA_AGENT: &str = "agent-token-for-replicas-0123456789";
const REPLICA_OPERATOR: &str = "operator-token-for-replicas-0123456789";

/// The id of the open approval for `command` on `addr`, once it shows (10 s).
fn open_approval_for(addr: &str, command: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, v) = request(addr, "GET", "/v1/approvals", REPLICA_OPERATOR, "");
        let found = v["approvals"].as_array().and_then(|list| {
            list.iter()
                .find(|a| a["summary"] == command && a["state"] == "pending")
                .and_then(|a| a["id"].as_str().map(str::to_string))
        });
        if let Some(id) = found {
            return id;
        }
        assert!(
            Instant::now() < deadline,
            "no pending approval for {command:?} on {addr}: {v}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_check_waiting_on_one_replica_returns_when_the_approval_lands_on_the_other() {
    let Some(Replicas {
        dir: _dir,
        a,
        b,
        pg: _pg,
    }) = two_daemons_on_postgres("replicas_wait")
    else {
        return;
    };
    let call = r#"{"tool":"exec","params":{"command":"git push origin main"},"session":"s-wait"}"#;
    let addr_a = a.addr.clone();
    let waiting = std::thread::spawn(move || {
        request(&addr_a, "POST", "/v1/check?wait=30s", REPLICA_AGENT, call)
    });
    let id = open_approval_for(&b.addr, "git push origin main");
    approve(&b.addr, &id);
    let (s, v) = waiting.join().unwrap();
    assert_eq!((s, v["decision"].as_str()), (200, Some("allow")), "{v}");
    // One chain for both: it verifies from either replica.
    let (_, v) = request(&a.addr, "GET", "/v1/audit/verify", REPLICA_OPERATOR, "");
    assert_eq!(v["ok"], true, "{v}");
    drop((a, b));
}

#[test]
fn a_one_time_approval_is_consumed_once_across_two_replicas_under_a_thousand_racing_retries() {
    let Some(Replicas {
        dir: _dir,
        a,
        b,
        pg: _pg,
    }) = two_daemons_on_postgres("replicas_race")
    else {
        return;
    };
    const CALLS: usize = 20;
    const RETRIES_EACH: usize = 50; // 20 × 50 = 1,000 racing retries
    let call = |i: usize| {
        format!(
            r#"{{"tool":"exec","params":{{"command":"ssh race-{i} systemctl restart web"}},"session":"s-race"}}"#
        )
    };
    for i in 0..CALLS {
        let (s, v) = request(&a.addr, "POST", "/v1/check", REPLICA_AGENT, &call(i));
        assert_eq!((s, v["decision"].as_str()), (200, Some("escalate")), "{v}");
        let id = v["approval"]["id"].as_str().unwrap().to_string();
        approve(&b.addr, &id);
    }
    let threads: Vec<_> = (0..CALLS * RETRIES_EACH)
        .map(|n| {
            let addr = if n % 2 == 0 {
                a.addr.clone()
            } else {
                b.addr.clone()
            };
            let body = call(n % CALLS);
            std::thread::spawn(move || {
                let (s, v) = request(&addr, "POST", "/v1/check", REPLICA_AGENT, &body);
                assert_eq!(s, 200, "{v}");
                (n % CALLS, v["decision"].as_str() == Some("allow"))
            })
        })
        .collect();
    let mut allowed = [0usize; CALLS];
    for t in threads {
        let (i, allow) = t.join().unwrap();
        allowed[i] += usize::from(allow);
    }
    assert_eq!(
        allowed, [1; CALLS],
        "each approval must let exactly one retry run"
    );
    let (_, v) = request(&b.addr, "GET", "/v1/audit/verify", REPLICA_OPERATOR, "");
    assert_eq!(v["ok"], true, "{v}");
    drop((a, b));
}

#[test]
fn a_replica_killed_mid_load_loses_nothing_it_answered_and_the_other_keeps_serving() {
    let Some(Replicas {
        dir: _dir,
        mut a,
        b,
        pg,
    }) = two_daemons_on_postgres("replicas_kill")
    else {
        return;
    };
    let store = pg.store.clone();
    // Load on both; every answered decision's audit number is kept.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = |addr: String, who: &'static str| {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut answered = Vec::new();
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                let body = format!(r#"{{"tool":"exec","params":{{"command":"echo {who}-{n}"}}}}"#);
                // A request to a killed daemon fails; what it answered stays.
                let Ok(mut s) = TcpStream::connect(&addr) else {
                    break;
                };
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let req = format!(
                    "POST /v1/check HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {REPLICA_AGENT}\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                if s.write_all(req.as_bytes()).is_err() {
                    break;
                }
                let mut raw = String::new();
                if s.read_to_string(&mut raw).is_err() {
                    break;
                }
                let Some((_, json)) = raw.split_once("\r\n\r\n") else {
                    break;
                };
                match serde_json::from_str::<Value>(json)
                    .ok()
                    .and_then(|v| v["audit_seq"].as_u64())
                {
                    Some(seq) => answered.push((seq, format!("echo {who}-{n}"))),
                    None => break,
                }
            }
            answered
        })
    };
    let on_a = load(a.addr.clone(), "a");
    let on_b = load(b.addr.clone(), "b");
    std::thread::sleep(Duration::from_millis(700));
    a.child.kill().unwrap(); // SIGKILL, mid-load
    let _ = a.child.wait();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let answered_a = on_a.join().unwrap();
    let answered_b = on_b.join().unwrap();
    assert!(
        !answered_a.is_empty() && !answered_b.is_empty(),
        "both took load"
    );
    // The survivor still answers.
    let (s, v) = request(
        &b.addr,
        "POST",
        "/v1/check",
        REPLICA_AGENT,
        r#"{"tool":"exec","params":{"command":"ls"}}"#,
    );
    assert_eq!((s, v["decision"].as_str()), (200, Some("allow")), "{v}");
    // Every answered decision is in the one chain, at the number it was
    // given, and the chain verifies.
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["--store", &store, "audit", "export"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recorded: std::collections::HashMap<u64, String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| {
            Some((
                e["seq"].as_u64()?,
                e["data"]["call"]["params"]["command"].as_str()?.to_string(),
            ))
        })
        .collect();
    for (seq, command) in answered_a.iter().chain(&answered_b) {
        assert_eq!(
            recorded.get(seq),
            Some(command),
            "answered decision {seq} ({command}) is not in the chain"
        );
    }
    let verify = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["--store", &store, "audit", "verify"])
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    eprintln!(
        "answered before/after the kill: a {} (killed), b {}",
        answered_a.len(),
        answered_b.len()
    );
    drop(b);
}

#[test]
fn toolgate_ui_prints_a_link_that_signs_a_browser_in_once() {
    let tmp = temp_dir("ui-link");
    let (d, dir) = daemon_on_a_fresh_dir(tmp.path());
    let data = dir.join("data");
    let ui = |token: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(["--data-dir", data.to_str().unwrap(), "ui", "--url"])
            .arg(format!("http://{}", d.addr))
            .env_remove("TOOLGATE_OPERATOR_TOKEN")
            .env_remove("TOOLGATE_APPROVER_TOKEN");
        if let Some(t) = token {
            cmd.args(["--token", t]);
        }
        cmd.output().unwrap()
    };
    // The operator token from the data directory, by default.
    let out = ui(None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let link = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let code = link
        .strip_prefix(&format!("http://{}/#signin/", d.addr))
        .unwrap_or_else(|| panic!("not a sign-in link: {link}"));
    let sign_in = |code: &str| {
        let mut s = TcpStream::connect(&d.addr).unwrap();
        let body = format!(r#"{{"code":"{code}"}}"#);
        write!(
            s,
            "POST /v1/session HTTP/1.1\r\nHost: {}\r\nX-Toolgate-Channel: ui\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            d.addr,
            body.len()
        )
        .unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).unwrap();
        raw
    };
    let first = sign_in(code);
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(
        first
            .to_ascii_lowercase()
            .contains("set-cookie: toolgate_session_"),
        "{first}"
    );
    assert!(
        sign_in(code).starts_with("HTTP/1.1 401"),
        "a link works once"
    );
    // The agent token cannot make one: exit 2 with the daemon's reason.
    let out = ui(Some(&token(&data, "agent")));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("toolgate ui:"));
}

/// Runs the toolgate binary to completion.
fn toolgate_cli(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .env_remove("TOOLGATE_STORE")
        .env_remove("TOOLGATE_DATA_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The head `audit verify --json` reports for the store `args` name.
fn verified_head(args: &[&str]) -> (u64, String) {
    let mut all = args.to_vec();
    all.extend(["audit", "verify", "--json"]);
    let out = toolgate_cli(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["head_seq"].as_u64().unwrap(),
        v["head_hash"].as_str().unwrap().to_string(),
    )
}

#[test]
fn store_migrate_moves_an_sqlite_deployment_and_the_chain_verifies_there() {
    let tmp = temp_dir("migrate");
    let dir = tmp.path();
    let data = dir.join("data").display().to_string();
    let from = format!("sqlite:{data}");
    for cmd in [
        &["--data-dir", &data, "check", "--", "ls", "-la"][..],
        &["--data-dir", &data, "check", "--", "rm", "-rf", "/"],
        &[
            "--data-dir",
            &data,
            "check",
            "--",
            "git",
            "push",
            "origin",
            "main",
        ],
        &[
            "--data-dir",
            &data,
            "memory",
            "add",
            "staging shares the prod database",
            "--confidence",
            "0.8",
        ],
    ] {
        toolgate_cli(cmd);
    }
    // Into PostgreSQL when there is one to test on, else into another
    // SQLite directory: the command is the same.
    let pg = PgSchema::new("migrate");
    let to = match &pg {
        Some(pg) => pg.store.clone(),
        None => format!("sqlite:{}", dir.join("moved").display()),
    };
    let source_head = verified_head(&["--data-dir", &data]);
    assert!(source_head.0 >= 4, "{source_head:?}");
    let out = toolgate_cli(&["store", "migrate", "--from", &from, "--to", &to]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("audit chain verified"), "{stdout}");
    assert!(stdout.contains("memories 1"), "{stdout}");
    assert_eq!(verified_head(&["--store", &to]), source_head);
    // The push's approval, still pending, is closed on the old store.
    assert!(stdout.contains("1 open approvals closed"), "{stdout}");
    assert_eq!(verified_head(&["--data-dir", &data]).0, source_head.0 + 1);
    let listed = toolgate_cli(&["--store", &to, "memory", "list"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("staging shares the prod database"));

    // Again into the same (now full) store: refused, nothing changes.
    let again = toolgate_cli(&["store", "migrate", "--from", &from, "--to", &to]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds"));
    assert_eq!(verified_head(&["--store", &to]), source_head);

    // A mistyped source is an error, not an empty copy.
    let missing = format!("sqlite:{}", dir.join("no-such-dir").display());
    let typo = toolgate_cli(&[
        "store",
        "migrate",
        "--from",
        &missing,
        "--to",
        &format!("sqlite:{}", dir.join("elsewhere").display()),
    ]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("no toolgate store"));
    let same = toolgate_cli(&["store", "migrate", "--from", &from, "--to", &from]);
    assert_eq!(same.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&same.stderr).contains("same store"));
}

/// The daemon refuses a policy a user other than root could change, and
/// says how to fix it; `--allow-writable-policy` serves it anyway.
#[test]
fn a_policy_others_can_change_is_refused_unless_allowed() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = temp_dir("writable");
    let dir = tmp.path();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "[rules]\nallow = [\"exec(ls:*)\"]\n").unwrap();
    std::fs::set_permissions(&policy, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--policy"])
        .arg(&policy)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("group or others") && err.contains("--allow-writable-policy"),
        "{err}"
    );
    let policy_arg = policy.display().to_string();
    let data_arg = dir.join("data").display().to_string();
    let d = spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--policy",
            &policy_arg,
            "--allow-writable-policy",
            "--data-dir",
            &data_arg,
        ],
        &[] as &[(&str, &str)],
    )
    .unwrap();
    let op = token(&dir.join("data"), "operator");
    let (_, v) = request(&d.addr, "GET", "/v1/state", &op, "");
    assert!(
        v["policy"]["origin"]
            .as_str()
            .unwrap()
            .ends_with("policy.toml"),
        "{v}"
    );
}

/// Without `--token`, `approvals --url` and `check --url` read the
/// daemon's token files in the data directory as `toolgate ui` does (the
/// operator token for approvals, the agent token for check), and `check
/// --url` prints the daemon's decision as a local check prints its own.
#[test]
fn remote_commands_read_the_token_files_like_ui() {
    let tmp = temp_dir("tokfile");
    let (d, dir) = daemon_on_a_fresh_dir(tmp.path());
    let data = dir.join("data");
    let url = format!("http://{}", d.addr);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .env("TOOLGATE_DATA_DIR", &data)
            .env_remove("TOOLGATE_APPROVER_TOKEN")
            .env_remove("TOOLGATE_OPERATOR_TOKEN")
            .env_remove("TOOLGATE_AGENT_TOKEN")
            .output()
            .unwrap()
    };
    let out = run(&[
        "check",
        "--url",
        &url,
        "--cwd",
        "/srv",
        "--",
        "kubectl",
        "apply",
        "-f",
        "prod.yaml",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "escalate", "{v}");
    let id = v["approval"]["id"]
        .as_str()
        .expect("the daemon's approval")
        .to_string();
    // The daemon made it: the approvals list there shows it, asked with
    // the operator token read from the data directory.
    let out = run(&["approvals", "list", "--url", &url]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&id));
    // --exit-code works on the daemon's answer too.
    let out = run(&[
        "check",
        "--url",
        &url,
        "--exit-code",
        "--",
        "rm",
        "-rf",
        "/",
    ]);
    assert_eq!(out.status.code(), Some(1));
    // A wrong token is refused, with what to pass.
    let out = run(&[
        "check",
        "--url",
        &url,
        "--token",
        "wrong-token-0123456789",
        "--",
        "ls",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--token"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `serve --port` is refused with the `--listen` to use; `--listen
/// localhost:PORT` and a bare port both listen on 127.0.0.1, never on
/// every interface.
#[test]
fn listen_takes_localhost_and_a_bare_port_and_port_says_what_to_use() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--port", "7881"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--listen 127.0.0.1:7881"), "{err}");
    for listen in ["localhost:0", "0"] {
        let tmp = temp_dir("listen");
        let data = tmp.path().join("data").display().to_string();
        let d = spawn(
            &["--listen", listen, "--data-dir", &data],
            &[] as &[(&str, &str)],
        )
        .unwrap_or_else(|e| panic!("--listen {listen}: {e}"));
        assert!(d.addr.starts_with("127.0.0.1:"), "{listen}: {}", d.addr);
    }
}

/// A second daemon on a data directory another daemon serves is refused,
/// naming the directory and the other process; the lock goes with the
/// process, so after a `kill -9` a new daemon starts.
#[test]
fn a_second_daemon_on_one_data_directory_is_refused_until_the_first_is_gone() {
    let tmp = temp_dir("twice");
    let (mut first, dir) = daemon_on_a_fresh_dir(tmp.path());
    let data = dir.join("data").display().to_string();
    let args = ["--listen", "127.0.0.1:0", "--data-dir", data.as_str()];
    let err = match spawn(&args, &[] as &[(&str, &str)]) {
        Ok(d) => panic!("a second daemon started on {data}, at {}", d.addr),
        Err(e) => e,
    };
    assert!(err.contains(&data), "names the data directory: {err}");
    assert!(
        err.contains(&format!("process {}", first.child.id())),
        "names the other daemon: {err}"
    );
    // Killed without a chance to clean up: the lock is gone with it.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let again = spawn(&args, &[] as &[(&str, &str)]).expect("starts once the first is gone");
    assert!(again.addr.starts_with("127.0.0.1:"));
}

#[test]
fn channels_test_sends_through_a_target_or_says_why_not() {
    use std::io::BufRead;
    // A webhook receiver that answers 200 and keeps the first request.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    let received = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut reader = std::io::BufReader::new(s.try_clone().unwrap());
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .unwrap();
        String::from_utf8_lossy(&body).to_string()
    });
    let tmp = temp_dir("channels-test");
    let policy = tmp.path().join("policy.toml");
    std::fs::write(
        &policy,
        format!(
            "[[approvals.routing.target]]\nname = \"relay\"\nkind = \"webhook\"\nurl = \"{hook}\"\nsecret_env = \"TG_E2E_HOOK_SECRET\"\n\n\
             [[approvals.routing.target]]\nname = \"unready\"\nkind = \"webhook\"\nurl = \"{hook}\"\nsecret_env = \"TG_E2E_UNSET_SECRET\"\n"
        ),
    )
    .unwrap();
    let data = tmp.path().join("data");
    let (policy_arg, data_arg) = (policy.display().to_string(), data.display().to_string());
    let d = spawn(
        &[
            "--listen",
            "127.0.0.1:0",
            "--policy",
            &policy_arg,
            "--allow-writable-policy",
            "--data-dir",
            &data_arg,
        ],
        &[("TG_E2E_HOOK_SECRET", "webhook-secret-for-tests-0123")],
    )
    .unwrap();
    let url = format!("http://{}", d.addr);
    let channels = |name: &str, url: &str| {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args([
                "--data-dir",
                &data_arg,
                "channels",
                "test",
                name,
                "--url",
                url,
            ])
            .env_remove("TOOLGATE_OPERATOR_TOKEN")
            .env_remove("TOOLGATE_APPROVER_TOKEN")
            .output()
            .unwrap()
    };
    let out = channels("relay", &url);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("sent a test message through relay"),
        "{stdout}"
    );
    let body = received.join().unwrap();
    assert!(body.contains("toolgate test message"), "{body}");
    // Not ready: which variable the daemon is missing; exit 1.
    let out = channels("unready", &url);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("TG_E2E_UNSET_SECRET"), "{stderr}");
    // No such target: the names there are.
    let out = channels("nope", &url);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("relay"));
    // No daemon there: exit 2, saying so.
    drop(d);
    let out = channels("relay", &url);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot reach the daemon"));
}
