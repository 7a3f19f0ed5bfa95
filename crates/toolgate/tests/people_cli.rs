//! The command line's approvers: `approvals approve`, `bypass approval` and
//! `policy check` as a person runs them. A token-less vote is the
//! administrator's, never a second person; a bypass of one approval is one
//! person's vote; a policy that lets fewer than two people approve R4 is
//! refused unless it says `allow_weak_r4 = true`.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Place {
    data: PathBuf,
    tmp: tempfile::TempDir,
}

fn place() -> Place {
    let tmp = tempfile::Builder::new()
        .prefix("toolgate-people-cli-")
        .tempdir()
        .unwrap();
    Place {
        data: tmp.path().join("data"),
        tmp,
    }
}

fn run(data: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .env("HOME", "/home/dev")
        .env("TOOLGATE_DATA_DIR", data)
        .env_remove("TOOLGATE_APPROVER_TOKEN")
        .env_remove("TOOLGATE_POLICY")
        .env("USER", "tester")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
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

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stdout)))
}

fn token(data: &Path, name: &str) -> String {
    let out = run(data, &["operators", "add", name, "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    json(&out)["token"].as_str().unwrap().to_string()
}

const R4: &str = r#"{"tool":"exec","params":{"command":"git push --force origin main"},"requester":{"id":"slack:U0ALICE1"}}"#;

#[test]
fn the_command_line_without_a_token_is_never_a_second_person() {
    let p = place();
    let d = &p.data;
    let id = json(&run(d, &["check"], R4))["approval"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let alice = token(d, "alice");
    run(
        d,
        &["operators", "identity", "alice", "--add", "slack:U0ALICE1"],
        "",
    );
    let bob = token(d, "bob");
    let carol = token(d, "carol");
    // The administrator: refused at R4, exit 1, saying what to do.
    let out = run(d, &["approvals", "approve", &id], "");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("not a named operator") && err.contains("operators add"),
        "{err}"
    );
    let out = run(
        d,
        &["bypass", "approval", &id, "--reason", "incident 5: ship it"],
        "",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    // alice asked (through her Slack account): not hers to approve or bypass.
    let out = run(d, &["approvals", "approve", &id, "--token", &alice], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("separation of duties"));
    // bob's bypass is one vote of two.
    let out = run(
        d,
        &[
            "bypass",
            "approval",
            &id,
            "--reason",
            "incident 5: ship it",
            "--token",
            &bob,
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("1 of 2"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(json(&run(d, &["check"], R4))["decision"], "escalate");
    // carol's vote completes it.
    let out = run(d, &["approvals", "approve", &id, "--token", &carol], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("approved"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(json(&run(d, &["check"], R4))["decision"], "allow");
}

#[test]
fn policy_check_refuses_a_weak_r4_unless_opted_in() {
    let p = place();
    let file = p.tmp.path().join("weak.toml");
    std::fs::write(&file, "[approvals]\nquorum = { R4 = 1 }\n").unwrap();
    let f = file.to_str().unwrap();
    let out = run(&p.data, &["policy", "check", f], "");
    assert_ne!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(
        err.contains("R4 = 1 is refused") && err.contains("allow_weak_r4 = true"),
        "{err}"
    );
    std::fs::write(
        &file,
        "[approvals]\nquorum = { R4 = 2 }\n\n[[approvals.rule]]\napprove = [\"exec(make deploy)\"]\nmax_risk = \"R4\"\n",
    )
    .unwrap();
    let out = run(&p.data, &["policy", "check", f], "");
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("max_risk = \"R4\""),
        "{}",
        text(&out.stderr)
    );
    std::fs::write(
        &file,
        "[approvals]\nallow_weak_r4 = true\nquorum = { R4 = 1 }\n\n[[approvals.rule]]\napprove = [\"exec(make deploy)\"]\nmax_risk = \"R4\"\n",
    )
    .unwrap();
    let out = run(&p.data, &["policy", "check", f], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The shipped policies need no opt-in, and their tests pass.
    for preset in ["default", "strict", "clinical"] {
        let path = format!("../../policies/{preset}.toml");
        let out = run(&p.data, &["policy", "test", &path], "");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{preset}: {}",
            text(&out.stderr)
        );
    }
}
