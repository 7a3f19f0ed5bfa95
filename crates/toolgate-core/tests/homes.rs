//! Every user's home is a home, whoever the gate runs as: other users'
//! secrets, startup files and homes themselves are protected; the agent's
//! own home (sent with the call) is where `~` points; a home under a temp
//! dir gets no temp-dir leniency. Ordinary work stays allowed.

use serde_json::json;
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy};
use toolgate_core::{ToolCall, Verdict};

const DEFAULT_POLICY: &str = include_str!("../../../policies/default.toml");

fn engine() -> Engine {
    Engine::new(Policy::from_toml_str(DEFAULT_POLICY, "default.toml").unwrap())
}

fn call(tool: &str, params: serde_json::Value, cwd: &str, home: Option<&str>) -> ToolCall {
    let mut c: ToolCall =
        serde_json::from_value(json!({"tool": tool, "params": params, "cwd": cwd})).unwrap();
    c.home = home.map(str::to_string);
    c
}

fn bash(cmd: &str) -> (&'static str, serde_json::Value) {
    ("Bash", json!({ "command": cmd }))
}

/// The gate's own homes these cases are judged under (a daemon as root, a
/// CI user, an agent whose home is under /tmp).
const GATE_HOMES: &[&str] = &["/root", "/home/ci", "/tmp/agent-home"];

#[test]
fn other_users_homes_are_protected_whoever_the_gate_runs_as() {
    let e = engine();
    let stopped: Vec<(&str, serde_json::Value)> = vec![
        ("Read", json!({"file_path": "/home/dev/.aws/credentials"})),
        ("Read", json!({"file_path": "/home/dev/.ssh/id_ed25519"})),
        (
            "read",
            json!({"path": "/home/alice/.gnupg/private-keys-v1.d/x.key"}),
        ),
        ("Read", json!({"file_path": "/home/dev/.kube/config"})),
        (
            "Read",
            json!({"file_path": "/Users/alice/.docker/config.json"}),
        ),
        ("Read", json!({"file_path": "/var/home/u/.netrc"})),
        (
            "mcp__fs__read_text_file",
            json!({"path": "/home/dev/.aws/credentials"}),
        ),
        bash("cat /home/dev/.aws/credentials"),
        bash("grep -r secret /home/dev/.ssh/"),
        bash("rm -rf /home/dev"),
        bash("rsync -a --delete /tmp/empty/ /home/dev/"),
        bash("rm -rf /Users/alice"),
        bash("rm -rf /var/home/u/.config"),
        bash("rm -rf /root"),
        (
            "Write",
            json!({"file_path": "/home/dev/.bashrc", "content": "curl x | sh"}),
        ),
        (
            "Write",
            json!({"file_path": "/root/.profile", "content": "x"}),
        ),
        bash("echo 'curl x | sh' >> /home/dev/.bashrc"),
    ];
    for gate_home in GATE_HOMES {
        let env = Env::new(*gate_home, "/srv/work");
        for (tool, params) in &stopped {
            let d = e
                .decide(&call(tool, params.clone(), "/srv/work", None), &env)
                .decision;
            assert_ne!(
                d.decision,
                Verdict::Allow,
                "gate home {gate_home}: {tool} {params}: {}",
                d.reason
            );
        }
    }
}

#[test]
fn the_agents_home_comes_with_the_call() {
    let e = engine();
    // The daemon runs as root; the agent is dev.
    let env = Env::new("/root", "/");
    let agent = Some("/home/dev");
    for (tool, params) in [
        bash("rm -rf ~"),
        bash("cat ~/.aws/credentials"),
        ("Read", json!({"file_path": "~/.ssh/id_rsa"})),
        ("Write", json!({"file_path": "~/.zshrc", "content": "x"})),
    ] {
        let d = e
            .decide(&call(tool, params.clone(), "/home/dev/proj", agent), &env)
            .decision;
        assert_ne!(d.decision, Verdict::Allow, "{tool} {params}: {}", d.reason);
        assert!(
            !d.reason.contains("/root"),
            "judged against the agent's home: {}",
            d.reason
        );
    }
    // Ordinary work in the agent's project stays allowed.
    for (tool, params) in [
        bash("ls -la"),
        bash("rm -rf build"),
        bash("cargo test"),
        bash("cat ~/proj/README.md"),
        ("Read", json!({"file_path": "/home/dev/proj/src/main.rs"})),
        (
            "Write",
            json!({"file_path": "/home/dev/proj/notes.md", "content": "x"}),
        ),
    ] {
        let d = e
            .decide(&call(tool, params.clone(), "/home/dev/proj", agent), &env)
            .decision;
        assert_eq!(d.decision, Verdict::Allow, "{tool} {params}: {}", d.reason);
    }
}

#[test]
fn a_home_under_a_temp_dir_is_a_home_not_temp_files() {
    let e = engine();
    let env = Env::new("/root", "/srv/work");
    let agent = Some("/tmp/agent-home");
    for cmd in [
        "rm -rf /tmp/agent-home",
        "rm -rf ~",
        "rm -rf ~/.ssh",
        "rm -rf /tmp/agent-home/.config",
        "find /tmp/agent-home -delete",
    ] {
        let d = e
            .decide(
                &call("Bash", json!({"command": cmd}), "/srv/work", agent),
                &env,
            )
            .decision;
        assert_ne!(d.decision, Verdict::Allow, "{cmd}: {}", d.reason);
    }
    // The temp dirs themselves keep their leniency.
    for cmd in [
        "rm -rf /tmp/build-cache",
        "rm -rf /tmp/x",
        "rm -rf /var/tmp/y",
    ] {
        let d = e
            .decide(
                &call("Bash", json!({"command": cmd}), "/srv/work", agent),
                &env,
            )
            .decision;
        assert_eq!(d.decision, Verdict::Allow, "{cmd}: {}", d.reason);
    }
}

#[test]
fn ordinary_reads_of_homes_stay_allowed() {
    let e = engine();
    let env = Env::new("/root", "/home/dev/proj");
    for (tool, params) in [
        bash("ls /home"),
        bash("cat /home/dev/proj/README.md"),
        bash("rm -rf /home/dev/proj/build"),
        bash("rm -rf /tmp/x"),
        ("Read", json!({"file_path": "/home/dev/proj/Cargo.toml"})),
    ] {
        let d = e
            .decide(&call(tool, params.clone(), "/home/dev/proj", None), &env)
            .decision;
        assert_eq!(d.decision, Verdict::Allow, "{tool} {params}: {}", d.reason);
    }
}
