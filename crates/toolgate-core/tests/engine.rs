//! Decision semantics (the strictest verdict wins, deny over ask over allow,
//! what cannot be read escalates), through the public engine API.

use serde_json::json;
use toolgate_core::paths::Env;
use toolgate_core::{Decision, Layer, RiskClass, ToolCall, Verdict};
use toolgate_core::{Engine, Policy};

fn engine(policy: &str) -> Engine {
    Engine::new(Policy::from_toml_str(policy, "test.toml").expect("policy parses"))
}

fn call(v: serde_json::Value) -> ToolCall {
    serde_json::from_value(v).expect("a ToolCall")
}

fn decide(e: &Engine, env: &Env, v: serde_json::Value) -> Decision {
    e.decide(&call(v), env).decision
}

fn env() -> Env {
    Env::new("/home/dev", "/home/dev/proj")
}

#[test]
fn a_workspace_inside_a_system_tree_is_still_the_agents_own() {
    let e = engine("");
    let srv = Env::new("/home/dev", "/srv/app");
    let d = decide(
        &e,
        &srv,
        json!({"tool": "Write", "params": {"file_path": "src/main.rs", "content": "x"}}),
    );
    assert_eq!(d.decision, Verdict::Allow, "{}", d.reason);
    let d = decide(
        &e,
        &srv,
        json!({"tool": "exec", "params": {"command": "rm -rf build && sed -i s/a/b/ config.ini"}}),
    );
    assert_eq!(d.decision, Verdict::Allow, "{}", d.reason);
    let d = decide(
        &e,
        &srv,
        json!({"tool": "Write", "params": {"file_path": "/srv/other/x", "content": "x"}}),
    );
    assert_ne!(d.decision, Verdict::Allow);
}

#[test]
fn an_allow_rule_lifts_an_escalation_but_never_a_block_or_r4() {
    let e = engine("[rules]\nallow = [\"exec(git push:*)\", \"exec(rm:*)\"]\n");
    let d = decide(
        &e,
        &env(),
        json!({"tool": "exec", "params": {"command": "git push origin main"}}),
    );
    assert_eq!(d.decision, Verdict::Allow, "{}", d.reason);
    assert_eq!(d.layer, Layer::Policy);
    let d = decide(
        &e,
        &env(),
        json!({"tool": "exec", "params": {"command": "git push --force origin main"}}),
    );
    assert_eq!(d.decision, Verdict::Escalate, "R4 stays: {}", d.reason);
    let d = decide(
        &e,
        &env(),
        json!({"tool": "exec", "params": {"command": "rm -rf /"}}),
    );
    assert_eq!(d.decision, Verdict::Block);
}

#[test]
fn deny_wins_over_ask_and_allow_in_any_part_of_a_compound_command() {
    let e = engine(
        "[rules]\ndeny = [\"exec(curl:*)\"]\nask = [\"exec(ls:*)\"]\nallow = [\"exec(ls:*)\", \"exec(curl:*)\"]\n",
    );
    let d = decide(
        &e,
        &env(),
        json!({"tool": "exec", "params": {"command": "ls && echo $(curl -s https://x.example)"}}),
    );
    assert_eq!(d.decision, Verdict::Block, "{}", d.reason);
    assert!(d.reason.contains("curl"), "{}", d.reason);
    let d = decide(
        &e,
        &env(),
        json!({"tool": "exec", "params": {"command": "ls -la"}}),
    );
    assert_eq!(d.decision, Verdict::Escalate);
}

#[test]
fn never_block_exempts_and_always_ask_holds() {
    let e = engine("[rules]\nnever_block = [\"memory_search\"]\nalways_ask = [\"web_fetch\"]\n");
    assert_eq!(
        decide(&e, &env(), json!({"tool": "memory_search", "params": {}})).decision,
        Verdict::Allow
    );
    let d = decide(
        &e,
        &env(),
        json!({"tool": "WebFetch", "params": {"url": "https://docs.rs", "prompt": "x"}}),
    );
    assert_eq!(d.decision, Verdict::Escalate);
}

#[test]
fn the_openclaw_bridge_is_judged_as_the_call_it_wraps() {
    let e = engine("");
    let d = decide(
        &e,
        &env(),
        json!({"tool": "tool_call", "params": {"id": "exec", "args": {"command": "rm -rf ~"}}}),
    );
    assert_eq!(d.decision, Verdict::Block);
    let d = decide(
        &e,
        &env(),
        json!({"tool": "tool_call", "params": {"id": "read", "args": {"path": "README.md"}}}),
    );
    assert_eq!(d.decision, Verdict::Allow);
}

#[test]
fn the_score_is_clarity_times_stakes_and_the_threshold_escalates() {
    let low = engine("[risk]\nescalation_threshold = 10\n");
    let d = decide(
        &low,
        &env(),
        json!({"tool": "browser", "params": {"action": "navigate", "url": "https://example.com"}}),
    );
    assert_eq!(d.risk, RiskClass::R2);
    assert!(d.score >= 10, "{}", d.score);
    assert_eq!(d.decision, Verdict::Escalate);
    assert_eq!(d.layer, Layer::Risk);
    let default = engine("");
    assert_eq!(
        decide(
            &default,
            &env(),
            json!({"tool": "browser", "params": {"action": "navigate"}})
        )
        .decision,
        Verdict::Allow
    );
    let d = decide(
        &default,
        &env(),
        json!({"tool": "gateway", "params": {"action": "config.apply", "raw": "{}"}}),
    );
    assert_eq!(
        (d.decision, d.risk, d.score),
        (Verdict::Escalate, RiskClass::R3, 42)
    );
}

#[test]
fn protocol_lines_follow_seed_000_under_toolgates_prefix() {
    let e = engine("");
    let d = decide(
        &e,
        &env(),
        json!({"tool": "exec", "params": {"command": "mkfs.ext4 /dev/sda1"}}),
    );
    assert!(
        d.block_reason
            .as_deref()
            .unwrap_or("")
            .starts_with("TOOLGATE_BLOCK|")
    );
    let d = decide(
        &e,
        &env(),
        json!({"tool": "message", "params": {"action": "send", "message": "a|b"}}),
    );
    let line = d.block_reason.unwrap_or_default();
    assert_eq!(line.split('|').count(), 3, "{line}");
    assert!(line.starts_with("TOOLGATE_ESCALATE|"));
}

#[test]
fn the_call_cwd_moves_relative_paths_and_the_workspace() {
    let e = engine("");
    let d = decide(
        &e,
        &env(),
        json!({"tool": "exec", "params": {"command": "rm -rf *"}, "cwd": "/"}),
    );
    assert_eq!(d.decision, Verdict::Block, "{}", d.reason);
    let d = decide(
        &e,
        &env(),
        json!({"tool": "exec", "params": {"command": "rm -rf build", "workdir": "/home/dev/proj/web"}}),
    );
    assert_eq!(d.decision, Verdict::Allow, "{}", d.reason);
}

#[test]
fn a_command_argument_never_hides_the_tools_own_rules() {
    let e = engine(
        r#"
[rules]
deny = ["write(/etc/**)", "mcp__fs__delete_file", "mcp__prod__*", "deploy"]
ask = ["mcp__github__merge_pull_request"]
"#,
    );
    let env = Env::new("/home/dev", "/home/dev/project");
    for (v, want) in [
        (
            json!({"tool": "mcp__fs__delete_file", "params": {"path": "/etc/hosts", "script": "true"}}),
            Verdict::Block,
        ),
        (
            json!({"tool": "mcp__prod__drop_database", "params": {"name": "main", "cmd": "true"}}),
            Verdict::Block,
        ),
        (
            json!({"tool": "deploy", "params": {"env": "prod", "command": "ls"}}),
            Verdict::Block,
        ),
        (
            json!({"tool": "mcp__github__merge_pull_request", "params": {"command": "true"}}),
            Verdict::Escalate,
        ),
        // A shell tool of a denied server is denied by name too.
        (
            json!({"tool": "mcp__prod__bash", "params": {"command": "ls"}}),
            Verdict::Block,
        ),
    ] {
        let d = decide(&e, &env, v.clone());
        assert_eq!(d.decision, want, "{v} → {}", d.reason);
    }
}

#[test]
fn the_policy_names_the_protected_branches() {
    let run = |e: &Engine, cmd: &str| {
        decide(
            e,
            &env(),
            json!({"tool": "exec", "params": {"command": cmd}}),
        )
    };
    let defaults = engine("");
    for cmd in [
        "git push --force-with-lease origin main",
        "git push origin +release/2.0",
        "git push origin --delete develop",
        "git push origin main",
        "git branch -D master",
    ] {
        assert_eq!(run(&defaults, cmd).decision, Verdict::Escalate, "{cmd}");
    }
    for cmd in [
        "git push --force-with-lease origin feature/login",
        "git push origin --delete feature/old",
        "git branch -D feature/old",
        "git push origin stable",
    ] {
        let d = run(&defaults, cmd);
        assert_eq!(d.decision, Verdict::Allow, "{cmd}: {}", d.reason);
    }

    let mine = engine("[git]\nprotected_branches = [\"stable\", \"v*\"]\n");
    for cmd in [
        "git push --force-with-lease origin stable",
        "git push origin :v2",
        "git push origin stable",
        "git branch -D Stable",
    ] {
        let d = run(&mine, cmd);
        assert_eq!(d.decision, Verdict::Escalate, "{cmd}: {}", d.reason);
        assert!(d.reason.contains("shared branch"), "{cmd}: {}", d.reason);
    }
    for cmd in [
        "git push --force-with-lease origin main",
        "git branch -D develop",
    ] {
        let d = run(&mine, cmd);
        assert_eq!(d.decision, Verdict::Allow, "{cmd}: {}", d.reason);
    }
    // Without a lease, a force push still needs a person, whatever the list.
    assert_eq!(
        run(&mine, "git push --force origin main").decision,
        Verdict::Escalate
    );
}

#[test]
fn a_protected_branch_entry_that_is_not_a_branch_name_is_an_error() {
    for (entry, says) in [
        ("\"\"", "is empty"),
        ("\"my branch\"", "space"),
        ("\"+main\"", "refspec"),
        ("\"refs/heads/main\"", "refspec"),
        ("\"a:b\"", "refspec"),
    ] {
        let text = format!("[git]\nprotected_branches = [{entry}]\n");
        let err = Policy::from_toml_str(&text, "test.toml").expect_err(entry);
        let shown = err.to_string();
        assert!(shown.contains(says), "{entry}: {shown}");
        assert!(shown.contains("test.toml:2"), "{entry}: {shown}");
    }
    let err = Policy::from_toml_str("[git]\nprotected = [\"main\"]\n", "test.toml")
        .expect_err("unknown key");
    assert!(err.to_string().contains("protected"), "{err}");
}
