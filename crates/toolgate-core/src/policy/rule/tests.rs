use super::*;
use crate::model::ToolCall;
use crate::normalize::normalize;
use crate::shell::Word;
use serde_json::{Value, json};

fn env() -> Env {
    Env::new("/home/dev", "/home/dev/proj")
}

fn rule(s: &str) -> Rule {
    Rule::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn call(v: Value) -> NormalizedCall {
    let c: ToolCall = serde_json::from_value(v).unwrap();
    normalize(&c, &env())
}

fn cmd(line: &str) -> SimpleCommand {
    let argv: Vec<Word> = line
        .split_whitespace()
        .map(|t| Word {
            text: t.to_string(),
            dynamic: t.contains('$'),
        })
        .collect();
    SimpleCommand {
        program: argv
            .first()
            .map(|w| super::super::exec::basename(&w.text).to_string())
            .unwrap_or_default(),
        argv,
        cwd: Some("/home/dev/proj".into()),
        ..Default::default()
    }
}

#[test]
fn parse_errors_say_what_and_how() {
    let cases: &[(&str, &str)] = &[
        ("exec(git push", "is missing its closing ')'"),
        ("exec(ls) now", "has text after its closing ')'"),
        ("exec)", "has a ')' without an opening '('"),
        ("", "is empty"),
        ("   ", "is empty"),
        ("(ls)", "has no tool name"),
        ("ex ec(ls)", "invalid tool name"),
        ("Bash*(ls)", "has '*' in the tool name"),
        ("mcp__(x)", "incomplete MCP tool name"),
        ("mcp__a__(x)", "incomplete MCP tool name"),
        ("exec()", "has an empty specifier"),
        ("exec(domain:docs.rs)", "domain: only applies to web_fetch"),
        ("read(domain:docs.rs)", "domain: only applies to web_fetch"),
        ("message(domain:x)", "domain: only applies to web_fetch"),
        ("exec(ls && rm -rf /)", "shell operator '&'"),
        ("exec(echo 'hi)", "unclosed single quote"),
        ("exec(git * push)", "'*' in the middle"),
        ("exec(:*)", "has no command before ':*'"),
        ("read(../x)", "'..'"),
        ("write(/a/[z)", "invalid glob"),
        ("web_fetch(docs.rs)", "neither domain:HOST nor a URL glob"),
        ("web_fetch(domain:https://docs.rs)", "bare host name"),
        ("web_search(rust)", "web_search rules take none"),
        ("*(ls)", "* rules take none"),
        ("gateway([x)", "invalid action glob"),
    ];
    for (text, want) in cases {
        let err = Rule::parse(text).expect_err(text).to_string();
        assert!(err.contains(want), "{text:?}: {err}");
        assert!(err.starts_with(&format!("rule {text:?} ")), "{err}");
    }
    let e = Rule::parse("exec(git push").unwrap_err();
    assert_eq!(
        e.message(),
        "rule \"exec(git push\" is missing its closing ')' — write rules as \
         Tool(specifier), e.g. exec(git push:*)"
    );
}

#[test]
fn tool_names_map_to_kinds() {
    for (text, kind) in [
        ("Bash(ls)", Some(ToolKind::Exec)),
        ("exec(ls)", Some(ToolKind::Exec)),
        ("run_shell_command(ls)", Some(ToolKind::Exec)),
        ("Write", Some(ToolKind::Write)),
        ("Edit(/x)", Some(ToolKind::Write)),
        ("MultiEdit", Some(ToolKind::Write)),
        ("apply_patch", Some(ToolKind::Write)),
        ("Read(./**)", Some(ToolKind::Read)),
        ("WebFetch(domain:docs.rs)", Some(ToolKind::Fetch)),
        ("web_fetch", Some(ToolKind::Fetch)),
        ("gateway(config.*)", Some(ToolKind::Gateway)),
        ("sessions_spawn", Some(ToolKind::Sessions)),
        ("my_custom_tool", Some(ToolKind::Other)),
        ("mcp__github__*", None),
        ("*", None),
    ] {
        assert_eq!(rule(text).tool_kind(), kind, "{text}");
    }
    assert_eq!(rule("  exec( git push:* )  ").text(), "exec( git push:* )");
}

#[test]
fn applies_to_tool_table() {
    let exec = call(json!({"tool":"Bash","params":{"command":"ls"}}));
    let codex = call(json!({"tool":"shell","params":{"command":["ls"]}}));
    let write = call(json!({"tool":"MultiEdit","params":{"file_path":"/x"}}));
    let mcp_issue = call(json!({"tool":"mcp__github__create_issue","params":{}}));
    let mcp_fs = call(json!({"tool":"mcp__filesystem__write_file","params":{"path":"/etc/x"}}));
    let spawn = call(json!({"tool":"sessions_spawn","params":{}}));
    let list = call(json!({"tool":"sessions_list","params":{}}));
    let custom = call(json!({"tool":"my_tool","params":{}}));
    let cases: &[(&str, &NormalizedCall, bool)] = &[
        ("exec", &exec, true),
        ("run_shell_command", &codex, true),
        ("Bash", &write, false),
        ("write", &write, true),
        ("Edit", &write, true),
        ("write", &mcp_fs, true),
        ("*", &custom, true),
        ("mcp__github__*", &mcp_issue, true),
        ("mcp__github", &mcp_issue, true),
        ("mcp__*__create_*", &mcp_issue, true),
        ("mcp__github__*", &mcp_fs, false),
        ("mcp__git__*", &mcp_issue, false),
        ("mcp__github__create", &mcp_issue, false),
        ("sessions_spawn", &spawn, true),
        ("SESSIONS_SPAWN", &spawn, true),
        ("sessions_spawn", &list, false),
        ("sessions", &list, true),
        ("sessions", &spawn, true),
        ("my_tool", &custom, true),
        ("My_Tool", &custom, false),
        ("my_tool", &exec, false),
    ];
    for (text, c, want) in cases {
        assert_eq!(rule(text).applies_to_tool(c), *want, "{text} vs {}", c.tool);
    }
}

#[test]
fn path_rules_any_for_deny_all_for_allow() {
    let e = env();
    let two = call(json!({"tool":"Read","params":{"paths":["src/a.rs","/etc/passwd"]}}));
    let inside = call(json!({"tool":"Read","params":{"file_path":"src/a.rs"}}));
    let none = call(json!({"tool":"Read","params":{}}));
    let allow = rule("read(./**)");
    let deny = rule("read(/etc/**)");
    assert!(!allow.matches(&two, &e, true));
    assert!(allow.matches(&inside, &e, true));
    assert!(
        !allow.matches(&none, &e, true),
        "allow needs at least one path"
    );
    assert!(deny.matches(&two, &e, false));
    assert!(!deny.matches(&inside, &e, false));
    assert!(!deny.matches(&none, &e, false));
    // A bare rule matches every call of its tools, paths or not.
    assert!(rule("Read").matches(&none, &e, true));
    // Deny ignores case; allow does not.
    let upper = call(json!({"tool":"Read","params":{"file_path":"~/.SSH/id_rsa"}}));
    assert!(rule("read(~/.ssh/**)").matches(&upper, &e, false));
    assert!(!rule("read(~/.ssh/**)").matches(&upper, &e, true));
    // Tool part gates everything.
    assert!(!rule("write(/etc/**)").matches(&two, &e, false));
    // MCP and unknown tools take path globs.
    let mcp = call(json!({"tool":"mcp__fs__frobnicate","params":{"path":"/srv/data/x"}}));
    assert!(rule("mcp__fs__*(/srv/**)").matches(&mcp, &e, true));
    assert!(!rule("mcp__fs__*(/etc/**)").matches(&mcp, &e, false));
    let mcp_no_paths = call(json!({"tool":"mcp__fs__frobnicate","params":{}}));
    assert!(!rule("mcp__fs__*(/srv/**)").matches(&mcp_no_paths, &e, false));
    assert!(rule("mcp__fs__*").matches(&mcp_no_paths, &e, true));
    assert!(rule("mcp__fs__*(*)").matches(&mcp_no_paths, &e, true));
}

#[test]
fn path_helpers() {
    let e = env();
    assert!(rule("write(/etc/**)").matches_path("/etc", &e));
    assert!(rule("write(/etc/**)").matches_path("/etc/hosts", &e));
    assert!(!rule("write(/etc/**)").matches_path("/etcx", &e));
    assert!(rule("write(/etc/**)").matches_path_broad("/ETC/hosts", &e));
    assert!(rule("write").matches_path("/anything", &e));
    assert!(!rule("exec(ls)").matches_path("/anything", &e));
}

#[test]
fn url_rules() {
    let e = env();
    let docs = call(json!({"tool":"WebFetch","params":{"url":"https://docs.rs/serde"}}));
    let evil = call(json!({"tool":"web_fetch","params":{"url":"https://docs.rs.evil.com/"}}));
    let trick = call(json!({"tool":"web_fetch","params":{"url":"https://evil.com@docs.rs/"}}));
    let garbage = call(json!({"tool":"web_fetch","params":{"url":"::::"}}));
    let allow = rule("web_fetch(domain:docs.rs)");
    assert!(allow.matches(&docs, &e, true));
    assert!(!allow.matches(&evil, &e, true));
    assert!(!allow.matches(&trick, &e, true), "userinfo never allowed");
    assert!(
        allow.matches(&trick, &e, false),
        "but it is the host for deny"
    );
    assert!(!allow.matches(&garbage, &e, true));
    assert!(rule("web_fetch(domain:*)").matches(&garbage, &e, false));
    assert!(!rule("web_fetch(domain:docs.rs)").matches(&garbage, &e, false));
    assert!(allow.matches_url("https://api.docs.rs/x"));
    assert!(!allow.matches_url("https://evildocs.rs/"));
    assert!(allow.matches_url_broad("https://DOCS.rs\\@x/"));
    assert!(rule("WebFetch").matches_url("anything"));
    assert!(!rule("read(/x)").matches_url("https://docs.rs"));
}

#[test]
fn action_rules() {
    let e = env();
    let apply = call(json!({"tool":"gateway","params":{"action":"config.apply"}}));
    let restart = call(json!({"tool":"gateway","params":{"action":"restart"}}));
    let shouty = call(json!({"tool":"gateway","params":{"action":"CONFIG.APPLY"}}));
    let bare = call(json!({"tool":"message","params":{"to":"x"}}));
    let send = call(json!({"tool":"message","params":{"action":"send"}}));
    assert!(rule("gateway(config.*)").matches(&apply, &e, true));
    assert!(!rule("gateway(config.*)").matches(&restart, &e, false));
    assert!(rule("gateway(config.*)").matches(&shouty, &e, false));
    assert!(!rule("gateway(config.*)").matches(&shouty, &e, true));
    assert!(rule("message(*)").matches(&bare, &e, true));
    assert!(rule("message").matches(&bare, &e, true));
    assert!(!rule("message(send)").matches(&bare, &e, false));
    assert!(rule("message(send)").matches(&send, &e, true));
    assert!(rule("message(s?nd)").matches_action(Some("send")));
    assert!(!rule("message(send)").matches_action(None));
    assert!(rule("message(*)").matches_action(None));
    assert!(rule("message(send)").matches_action_broad(Some("SEND")));
}

#[test]
fn exec_rules_through_the_rule_api() {
    let e = env();
    let r = rule("Bash(git push:*)");
    assert!(r.matches_exec_strict(&cmd("git push origin")));
    assert!(r.matches_exec_broad(&cmd("git -C . push --force"), &e));
    assert!(!r.matches_exec_strict(&cmd("git -C . push")));
    // Whole-call matching leaves command patterns to the per-command methods.
    let c = call(json!({"tool":"exec","params":{"command":"git push"}}));
    assert!(!r.matches(&c, &e, false));
    assert!(rule("exec").matches(&c, &e, true));
    // Bare and `*` rules cover every command, strictly only known programs.
    for text in ["exec", "exec(*)", "*"] {
        let r = rule(text);
        assert!(r.matches_exec_broad(&cmd("$X"), &e), "{text}");
        assert!(!r.matches_exec_strict(&cmd("$X")), "{text}");
        assert!(r.matches_exec_strict(&cmd("ls -la")), "{text}");
        let mut sudo = cmd("ls");
        sudo.privileged = true;
        assert!(!r.matches_exec_strict(&sudo), "{text}");
        assert!(r.matches_exec_broad(&sudo, &e), "{text}");
    }
    // Non-shell rules never match commands.
    assert!(!rule("read").matches_exec_broad(&cmd("ls"), &e));
    assert!(!rule("read").matches_exec_strict(&cmd("ls")));
    assert!(!rule("mcp__x__*").matches_exec_broad(&cmd("ls"), &e));
}
