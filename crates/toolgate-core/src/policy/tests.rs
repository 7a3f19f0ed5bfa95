//! Policy-level tests: the example in `policy/mod.rs`'s docs, every error path with its
//! exact location, and never-panic properties.

use super::*;
use crate::model::RiskClass;
use proptest::prelude::*;
use std::time::Duration;

const EXAMPLE: &str = r#"workspace = "~/proj"

[rules]
deny  = ["exec(rm -rf /)", "write(/etc/**)", "read(~/.ssh/**)"]
ask   = ["exec(git push:*)", "gateway(config.*)", "message(*)"]
allow = ["read(./**)", "exec(cargo test:*)", "web_fetch(domain:docs.rs)"]
never_block = ["memory_search", "memory_get", "session_status"]
always_ask  = ["secrets", "exec(git push --force:*)"]

[risk]
escalation_threshold = 40

[approvals]
pending_ttl = "10m"
approval_window = "45s"
quorum = { R3 = 2, R4 = 3 }
relay = true

[[test]]
call = { tool = "exec", params = { command = "ls && rm -rf ~" } }
expect = "block"

[[test]]
name = "pushing needs approval"
call = { tool = "Bash", params = { command = "git push origin main" }, cwd = "/srv/app", requester = { id = "u1", role = "owner" } }
expect = "escalate"
"#;

fn parse(src: &str) -> Result<Policy, PolicyError> {
    Policy::from_toml_str(src, "policies/x.toml")
}

/// Asserts the error's location, kind and a fragment of its message.
#[track_caller]
fn fails(src: &str, line: usize, col: usize, kind: ErrorKind, fragment: &str) -> PolicyError {
    let e = parse(src).expect_err("policy should be refused");
    assert_eq!((e.line, e.col), (line, col), "location of: {e}");
    assert_eq!(e.kind, kind, "kind of: {e}");
    assert!(
        e.message.contains(fragment),
        "{e}\n  should mention {fragment:?}"
    );
    assert_eq!(e.origin, "policies/x.toml");
    assert!(
        e.to_string()
            .starts_with(&format!("policies/x.toml:{line}:{col}: "))
    );
    e
}

#[test]
fn parses_the_example() {
    let p = parse(EXAMPLE).unwrap();
    assert_eq!(p.origin(), "policies/x.toml");
    assert_eq!(p.workspace(), Some("~/proj"));
    let texts = |l: RuleList| p.rules(l).iter().map(Rule::text).collect::<Vec<_>>();
    assert_eq!(
        texts(RuleList::Deny),
        ["exec(rm -rf /)", "write(/etc/**)", "read(~/.ssh/**)"]
    );
    assert_eq!(
        texts(RuleList::Ask),
        ["exec(git push:*)", "gateway(config.*)", "message(*)"]
    );
    assert_eq!(
        texts(RuleList::Allow),
        [
            "read(./**)",
            "exec(cargo test:*)",
            "web_fetch(domain:docs.rs)"
        ]
    );
    assert_eq!(
        texts(RuleList::AlwaysAsk),
        ["secrets", "exec(git push --force:*)"]
    );
    // Rules remember where they were written.
    assert_eq!(p.rules(RuleList::Deny)[1].location(), Some((4, 28)));
    assert_eq!(p.escalation_threshold(), 40);
    let a = p.approvals();
    assert_eq!(a.pending_ttl, Duration::from_secs(600));
    assert_eq!(a.approval_window, Duration::from_secs(45));
    assert!(a.relay);
    assert_eq!(
        a.quorum(RiskClass::R2),
        1,
        "unset classes keep their default"
    );
    assert_eq!(a.quorum(RiskClass::R3), 2);
    assert_eq!(a.quorum(RiskClass::R4), 3);

    assert!(p.never_block("memory_search"));
    assert!(p.never_block("session_status"));
    assert!(!p.never_block("save_memory"), "only the names listed");
    assert!(!p.never_block("exec"));

    let tests = p.tests();
    assert_eq!(tests.len(), 2);
    assert_eq!(tests[0].name, None);
    assert_eq!(tests[0].call.tool, "exec");
    assert_eq!(
        tests[0].call.params.get("command"),
        Some(&serde_json::json!("ls && rm -rf ~"))
    );
    assert_eq!(tests[0].expect, Expectation::Block);
    assert_eq!(tests[0].location, (19, 1));
    assert_eq!(tests[1].name.as_deref(), Some("pushing needs approval"));
    assert_eq!(tests[1].call.cwd.as_deref(), Some("/srv/app"));
    assert_eq!(
        tests[1].call.requester,
        Some(Requester {
            id: Some("u1".into()),
            role: Some("owner".into())
        })
    );
    assert_eq!(tests[1].expect, Expectation::Escalate);
    assert_eq!(tests[1].location, (23, 1));
}

#[test]
fn everything_is_optional() {
    for src in ["", "# nothing\n", "[rules]\n", "[approvals]\n[risk]\n"] {
        let p = parse(src).unwrap();
        assert_eq!(p.escalation_threshold(), 36);
        assert_eq!(
            format!("{:?}", p.approvals()),
            format!("{:?}", ApprovalSettings::default())
        );
        assert_eq!(p.approvals().pending_ttl, Duration::from_secs(300));
        assert_eq!(p.approvals().approval_window, Duration::from_secs(600));
        assert!(!p.approvals().relay);
        let q: Vec<u32> = [
            RiskClass::R0,
            RiskClass::R1,
            RiskClass::R2,
            RiskClass::R3,
            RiskClass::R4,
        ]
        .into_iter()
        .map(|c| p.approvals().quorum(c))
        .collect();
        assert_eq!(q, [1, 1, 1, 1, 2]);
        assert!(p.rules(RuleList::Deny).is_empty());
        assert!(p.tests().is_empty());
        assert_eq!(p.workspace(), None);
    }
    let d = Policy::default();
    assert_eq!(d.escalation_threshold(), 36);
    assert!(d.rules(RuleList::Allow).is_empty());
}

#[test]
fn never_block_by_name_or_canonical_kind() {
    let p = parse("[rules]\nnever_block = [\"memory\", \"Custom\"]\n").unwrap();
    assert!(p.never_block("memory_search"));
    assert!(p.never_block("save_memory"));
    assert!(p.never_block("Custom"));
    assert!(!p.never_block("custom"));
    assert!(!p.never_block("exec"));
    assert_eq!(p.never_block_list(), ["memory", "Custom"]);
}

#[test]
fn workspace_forms() {
    let ws = |w: &str| {
        parse(&format!("workspace = {w:?}\n"))
            .unwrap()
            .workspace()
            .map(str::to_string)
    };
    assert_eq!(ws("/srv//app/./x/.."), Some("/srv/app".into()));
    assert_eq!(ws("~"), Some("~".into()));
    assert_eq!(ws("~/"), Some("~".into()));
    assert_eq!(ws("~/a/../b"), Some("~/b".into()));
}

#[test]
fn unknown_keys_are_errors_with_their_location() {
    fails(
        "workspace = \"/w\"\n[rulez]\n",
        2,
        2,
        ErrorKind::UnknownKey,
        "unknown field `rulez`",
    );
    let e = fails(
        "[rules]\ndeny = []\nalow = [\"read\"]\n",
        3,
        1,
        ErrorKind::UnknownKey,
        "unknown field `alow`",
    );
    assert!(e.message.contains("typo"), "{e}");
    fails(
        "[risk]\nescalation_treshold = 5\n",
        2,
        1,
        ErrorKind::UnknownKey,
        "escalation_treshold",
    );
    fails(
        "[approvals]\nquorum = { R2 = 1, R5 = 2 }\n",
        2,
        20,
        ErrorKind::UnknownKey,
        "unknown field `R5`",
    );
    fails(
        "[[tests]]\nexpect = \"block\"\n",
        1,
        3,
        ErrorKind::UnknownKey,
        "unknown field `tests`",
    );
    fails(
        "[[test]]\ncall = { tool = \"exec\", parms = { command = \"ls\" } }\nexpect = \"allow\"\n",
        2,
        25,
        ErrorKind::UnknownKey,
        "unknown field `parms`",
    );
    fails(
        "[[test]]\ncall = { tool = \"exec\" }\nexpect = \"allow\"\nnmae = \"x\"\n",
        4,
        1,
        ErrorKind::UnknownKey,
        "unknown field `nmae`",
    );
    fails(
        "[[test]]\ncall = { tool = \"x\", requester = { id = \"a\", rol = \"b\" } }\nexpect = \"allow\"\n",
        2,
        46,
        ErrorKind::UnknownKey,
        "unknown field `rol`",
    );
}

#[test]
fn bad_rules_point_at_the_string_inside_the_array() {
    let e = fails(
        "[rules]\ndeny = [\"exec(rm -rf /)\",\n        \"exec(git push\"]\n",
        3,
        9,
        ErrorKind::Rule,
        "missing its closing ')'",
    );
    assert_eq!(
        e.to_string(),
        "policies/x.toml:3:9: rule \"exec(git push\" is missing its closing ')' — \
         write rules as Tool(specifier), e.g. exec(git push:*)"
    );
    // `domain:` belongs to fetch rules only: refused on a shell rule.
    fails(
        "[rules]\nallow = [\"read(./**)\", \"exec(domain:docs.rs)\"]\n",
        2,
        24,
        ErrorKind::Rule,
        "web_fetch(domain:docs.rs)",
    );
    fails(
        "[rules]\nask = [\"gateway(config.*)\"]\nalways_ask = [\"exec()\"]\n",
        3,
        15,
        ErrorKind::Rule,
        "empty specifier",
    );
    // Multi-byte characters before the string count as one column each.
    fails(
        "[rules]\n# é\nallow = [\"read(../ü)\"]\n",
        3,
        10,
        ErrorKind::Rule,
        "'..'",
    );
    fails(
        "[rules]\nallow = [\"web_fetch(domain:docs.rs:443)\"]\n",
        2,
        10,
        ErrorKind::Rule,
        "bare host name",
    );
}

#[test]
fn wrong_types_are_errors_with_their_location() {
    fails(
        "[rules]\ndeny = \"exec(ls)\"\n",
        2,
        8,
        ErrorKind::Type,
        "expected an array",
    );
    fails(
        "[rules]\ndeny = [\"exec(ls)\", 3]\n",
        2,
        21,
        ErrorKind::Type,
        "expected a string",
    );
    fails(
        "[risk]\nescalation_threshold = 1.5\n",
        2,
        24,
        ErrorKind::Type,
        "expected a whole number",
    );
    fails(
        "[approvals]\nrelay = \"yes\"\n",
        2,
        9,
        ErrorKind::Type,
        "expected true or false",
    );
    fails(
        "[approvals]\npending_ttl = 300\n",
        2,
        15,
        ErrorKind::Type,
        "expected a string",
    );
    fails(
        "[[test]]\ncall = \"exec ls\"\nexpect = \"block\"\n",
        2,
        8,
        ErrorKind::Type,
        "expected a table",
    );
}

#[test]
fn values_out_of_range() {
    fails(
        "[risk]\nescalation_threshold = 0\n",
        2,
        24,
        ErrorKind::Value,
        "from 1 to 100",
    );
    fails(
        "[risk]\nescalation_threshold = 101\n",
        2,
        24,
        ErrorKind::Value,
        "escalation_threshold = 101 is out of range",
    );
    fails(
        "[risk]\nescalation_threshold = -3\n",
        2,
        24,
        ErrorKind::Value,
        "out of range",
    );
    fails(
        "[approvals]\npending_ttl = \"5 min\"\n",
        2,
        15,
        ErrorKind::Value,
        "pending_ttl \"5 min\"",
    );
    fails(
        "[approvals]\napproval_window = \"0s\"\n",
        2,
        19,
        ErrorKind::Value,
        "approval_window \"0s\" is zero",
    );
    fails(
        "[approvals]\napproval_window = \"30\"\n",
        2,
        19,
        ErrorKind::Value,
        "has no unit",
    );
    fails(
        "[approvals]\nquorum = { R4 = 0 }\n",
        2,
        17,
        ErrorKind::Value,
        "quorum R4 = 0 is out of range",
    );
    fails(
        "[approvals]\nmax_open = 0\n",
        2,
        12,
        ErrorKind::Value,
        "max_open = 0 is out of range",
    );
    fails(
        "workspace = \"proj\"\n",
        1,
        13,
        ErrorKind::Value,
        "not an absolute path",
    );
    fails(
        "[rules]\nnever_block = [\"memory_get\", \"exec(ls)\"]\n",
        2,
        30,
        ErrorKind::Value,
        "never_block entry \"exec(ls)\" is not a tool name",
    );
    fails(
        "[rules]\nnever_block = [\"\"]\n",
        2,
        16,
        ErrorKind::Value,
        "not a tool name",
    );
}

#[test]
fn incomplete_tests() {
    fails(
        "[[test]]\nexpect = \"allow\"\n",
        1,
        1,
        ErrorKind::Test,
        "has no `call`",
    );
    fails(
        "[[test]]\ncall = { tool = \"exec\" }\nexpect = \"allow\"\n\n[[test]]\nexpect = \"block\"\n",
        5,
        1,
        ErrorKind::Test,
        "has no `call`",
    );
    fails(
        "[[test]]\ncall = { tool = \"exec\" }\n",
        1,
        1,
        ErrorKind::Test,
        "has no `expect`",
    );
    fails(
        "[[test]]\ncall = { tool = \"exec\" }\nexpect = \"deny\"\n",
        3,
        10,
        ErrorKind::Test,
        "expect = \"deny\" is not a decision",
    );
    fails(
        "[[test]]\ncall = { params = { command = \"ls\" } }\nexpect = \"allow\"\n",
        2,
        8,
        ErrorKind::Test,
        "has no `tool`",
    );
    fails(
        "[[test]]\ncall = { tool = \" \" }\nexpect = \"allow\"\n",
        2,
        17,
        ErrorKind::Test,
        "`tool` is empty",
    );
    fails(
        "[[test]]\ncall = { tool = \"x\", params = { n = nan } }\nexpect = \"allow\"\n",
        2,
        31,
        ErrorKind::Test,
        "finite number",
    );
}

#[test]
fn tests_accept_every_expectation_and_toml_values() {
    let src = "[[test]]\ncall = { tool = \"x\", params = { a = 1, b = 2.5, c = true, d = 1979-05-27T07:32:00Z, e = [1, \"x\"], f = { g = \"h\" } } }\nexpect = \"Stop\"\n";
    let p = parse(src).unwrap();
    let t = &p.tests()[0];
    assert_eq!(t.expect, Expectation::Stop);
    assert_eq!(
        serde_json::Value::Object(t.call.params.clone()),
        serde_json::json!({"a": 1, "b": 2.5, "c": true, "d": "1979-05-27T07:32:00Z",
                           "e": [1, "x"], "f": {"g": "h"}})
    );
    assert!(Expectation::Stop.accepts(Verdict::Block));
    assert!(Expectation::Stop.accepts(Verdict::Escalate));
    assert!(!Expectation::Stop.accepts(Verdict::Allow));
    assert!(Expectation::Allow.accepts(Verdict::Allow));
    assert!(!Expectation::Block.accepts(Verdict::Escalate));
    for e in ["allow", "block", "escalate", "stop"] {
        assert_eq!(Expectation::parse(e).map(Expectation::as_str), Some(e));
    }
    // The inline-array spelling of tests works too.
    let p = parse("test = [{ call = { tool = \"exec\" }, expect = \"allow\" }]\n").unwrap();
    assert_eq!(p.tests()[0].location, (1, 9));
}

#[test]
fn toml_syntax_errors_are_located() {
    fails("[rules\n", 1, 7, ErrorKind::Syntax, "invalid TOML");
    fails("a = \n", 1, 5, ErrorKind::Syntax, "invalid TOML");
    fails(
        "[rules]\ndeny = []\ndeny = []\n",
        3,
        1,
        ErrorKind::Syntax,
        "duplicate key",
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn from_toml_str_never_panics(src in "\\PC{0,200}") {
        let _ = Policy::from_toml_str(&src, "p");
    }

    #[test]
    fn from_toml_str_never_panics_on_policy_shaped_text(
        key in "(deny|ask|allow|never_block|always_ask|x)",
        items in proptest::collection::vec("[ -~é*~/()\\[\\]:.\"'\\\\]{0,24}", 0..4),
        section in "(rules|risk|approvals|test)",
    ) {
        let list = items
            .iter()
            .map(|i| format!("{i:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let src = format!("[{section}]\n{key} = [{list}]\n");
        if let Err(e) = Policy::from_toml_str(&src, "p") {
            prop_assert!(e.line >= 1 && e.col >= 1);
        }
    }

    #[test]
    fn rule_parsing_never_panics(text in "\\PC{0,60}") {
        let _ = Rule::parse(&text);
    }

    #[test]
    fn rule_shaped_parsing_and_matching_never_panic(
        tool in "(exec|Bash|read|write|web_fetch|gateway|mcp__a__\\*|\\*|x)",
        spec in "[ -~é\\t]{0,30}",
        probe in "\\PC{0,40}",
    ) {
        let env = crate::paths::Env::new("/home/dev", "/home/dev/proj");
        if let Ok(rule) = Rule::parse(&format!("{tool}({spec})")) {
            let _ = rule.matches_url(&probe);
            let _ = rule.matches_url_broad(&probe);
            let abs = env.resolve(&probe);
            let _ = rule.matches_path(&abs, &env);
            let _ = rule.matches_path_broad(&abs, &env);
            let _ = rule.matches_action(Some(&probe));
            let words: Vec<crate::shell::Word> = probe
                .split(' ')
                .map(|w| crate::shell::Word { text: w.to_string(), dynamic: w.contains('$') })
                .collect();
            let cmd = crate::shell::SimpleCommand {
                program: words.first().map(|w| w.text.clone()).unwrap_or_default(),
                argv: words,
                cwd: if probe.len() % 2 == 0 { Some("/home/dev/proj".into()) } else { None },
                ..Default::default()
            };
            let _ = rule.matches_exec_strict(&cmd);
            let _ = rule.matches_exec_broad(&cmd, &env);
        }
    }
}

#[test]
fn approvers_quorum_and_rules_parse_with_errors_that_point_at_them() {
    let p = parse(
        r#"[approvals]
allowed_approvers = ["user_request", "rules_based", "llm_evaluation"]
disabled_approvers = ["llm_evaluation"]
operators = ["alice", "bob", "alice"]
require_user = ["R4"]

[[approvals.rule]]
name = "staging"
approve = ["exec(kubectl apply -f staging.yaml)"]
requester_roles = ["owner"]
max_risk = "R2"
"#,
    )
    .unwrap();
    let a = p.approvals();
    use crate::approval::ApproverKind::*;
    assert_eq!(
        a.active_approvers().collect::<Vec<_>>(),
        vec![UserRequest, RulesBased]
    );
    assert_eq!(a.operators, vec!["alice", "bob"]);
    assert!(!a.require_user(RiskClass::R3) && a.require_user(RiskClass::R4));
    assert_eq!(a.rules[0].name, "staging");
    assert_eq!(a.rules[0].max_risk, RiskClass::R2);

    fails(
        "[approvals]\nallowed_approvers = [\"user_request\", \"robot\"]\n",
        2,
        38,
        ErrorKind::Value,
        "not an approver",
    );
    fails(
        "[approvals]\nrequire_user = [\"R9\"]\n",
        2,
        17,
        ErrorKind::Value,
        "not a risk class",
    );
    fails(
        "[approvals]\noperators = [\"  \"]\n",
        2,
        14,
        ErrorKind::Value,
        "approver names",
    );
    fails(
        "[[approvals.rule]]\nname = \"x\"\n",
        1,
        1,
        ErrorKind::Value,
        "approves nothing",
    );
    fails(
        "[[approvals.rule]]\napprove = [\"exec(\"]\n",
        2,
        12,
        ErrorKind::Rule,
        "",
    );
    let e =
        parse("[[approvals.rule]]\napprove = [\"exec(ls)\"]\nmax_risks = \"R2\"\n").unwrap_err();
    assert!(e.to_string().contains("max_risks"), "{e}");
}

#[test]
fn the_model_stage_parses_and_refuses_what_it_cannot_honour() {
    let p = parse(
        r#"[approvals]
allowed_approvers = ["user_request", "llm_evaluation"]

[approvals.model]
base_url = "http://127.0.0.1:8080/v1"
model = "small"
timeout = "500ms"
max_auto_approve = "R1"
"#,
    )
    .unwrap();
    let m = p.approvals().model.as_ref().expect("a model stage");
    assert_eq!(m.max_auto_approve, RiskClass::R1);
    assert_eq!(m.client["model"].as_str(), Some("small"));
    assert!(!m.client.contains_key("max_auto_approve"));
    let default = parse("[approvals.model]\nbase_url = \"http://x/v1\"\nmodel = \"m\"\n").unwrap();
    assert_eq!(
        default.approvals().model.as_ref().unwrap().max_auto_approve,
        RiskClass::R2
    );
    assert!(parse("[approvals]\n").unwrap().approvals().model.is_none());
    for (src, fragment) in [
        (
            "[approvals.model]\nbase_url = \"http://x/v1\"\nmodel = \"m\"\nmax_auto_approve = \"R4\"\n",
            "always need people",
        ),
        (
            "[approvals.model]\nbase_url = \"http://x/v1\"\nmodel = \"m\"\nmax_auto_approve = \"high\"\n",
            "not a risk class",
        ),
        ("[approvals.model]\nmodel = \"m\"\n", "needs base_url"),
        (
            "[approvals.model]\nbase_url = \"http://x/v1\"\n",
            "needs model",
        ),
    ] {
        let e = parse(src).expect_err(src);
        assert!(
            e.message.contains(fragment),
            "{e}\n  should mention {fragment:?}"
        );
        assert!(e.line >= 1, "{e}");
    }
}

#[test]
fn routing_targets_parse_filter_and_keep_their_adapter_settings() {
    use crate::policy::RoutingMode;
    let p = parse(
        r#"[approvals.routing]
mode = "both"

[[approvals.routing.target]]
name = "ops-slack"
kind = "slack"
channel = "C01"
bot_token_env = "SLACK_BOT_TOKEN"
signing_secret_env = "SLACK_SIGNING_SECRET"
risk = ["R3", "R4"]

[[approvals.routing.target]]
name = "team-telegram"
kind = "telegram"
chat_id = 42
session = ["telegram"]
agents = ["main"]
"#,
    )
    .unwrap();
    let r = &p.approvals().routing;
    assert_eq!(r.mode, RoutingMode::Both);
    assert_eq!(r.targets.len(), 2);
    let slack = &r.targets[0];
    assert_eq!(slack.adapter["kind"].as_str(), Some("slack"));
    assert_eq!(slack.adapter["name"].as_str(), Some("ops-slack"));
    assert!(
        !slack.adapter.contains_key("risk"),
        "routing keys are not the adapter's"
    );
    let names =
        |v: Vec<&crate::policy::RouteTarget>| v.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(r.targets_for(
            RiskClass::R3,
            "Bash",
            "exec",
            Some("main"),
            Some("telegram")
        )),
        ["ops-slack", "team-telegram"]
    );
    assert_eq!(
        names(r.targets_for(RiskClass::R2, "Bash", "exec", Some("main"), Some("slack"))),
        Vec::<String>::new()
    );
    assert_eq!(
        names(r.targets_for(
            RiskClass::R4,
            "Bash",
            "exec",
            Some("other"),
            Some("telegram")
        )),
        ["ops-slack"]
    );
    for (src, fragment) in [
        ("[approvals.routing]\nmode = \"everyone\"\n", "mode"),
        ("[approvals.routing]\nmodes = \"both\"\n", "no setting"),
        (
            "[[approvals.routing.target]]\nkind = \"slack\"\n",
            "needs name",
        ),
        ("[[approvals.routing.target]]\nname = \"a\"\n", "needs kind"),
        (
            "[[approvals.routing.target]]\nname = \"a\"\nkind = \"slack\"\n[[approvals.routing.target]]\nname = \"a\"\nkind = \"slack\"\n",
            "two routing targets",
        ),
        (
            "[[approvals.routing.target]]\nname = \"a\"\nkind = \"slack\"\nrisk = [\"R9\"]\n",
            "not a risk class",
        ),
    ] {
        let e = parse(src).expect_err(src);
        assert!(
            e.message.contains(fragment),
            "{e}\n  should mention {fragment:?}"
        );
    }
}
