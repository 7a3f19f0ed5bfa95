//! Shared fixtures, the [`Runtime`] dispatch, and properties over every
//! runtime: `to_call` never panics, and no reply lets a blocked or escalated
//! call (or a toolgate failure) run.

use super::*;
use crate::model::{ApprovalRef, Layer, RiskClass, Verdict};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// The approval id the escalation fixture carries.
pub(crate) const APPROVAL_ID: &str = "ap_0123456789abcdef";

/// An allow with no rewrite and no context.
pub(crate) fn allow() -> Decision {
    Decision::new(
        Verdict::Allow,
        RiskClass::R0,
        1,
        Layer::Exec,
        "ls is read-only",
    )
}

/// A hard block with its protocol line.
pub(crate) fn block() -> Decision {
    Decision::new(
        Verdict::Block,
        RiskClass::R4,
        100,
        Layer::Exec,
        "rm -rf / deletes the filesystem",
    )
}

/// An escalation with a pending approval ([`APPROVAL_ID`]).
pub(crate) fn escalate() -> Decision {
    let mut d = Decision::new(
        Verdict::Escalate,
        RiskClass::R3,
        48,
        Layer::Policy,
        "git push changes a remote",
    );
    d.block_reason = Decision::protocol_line(Verdict::Escalate, Some(APPROVAL_ID), &d.reason);
    d.approval = Some(ApprovalRef {
        id: APPROVAL_ID.into(),
        expires_at: "2026-11-01T00:05:00Z".into(),
        min_approvals: 1,
        approve_url: None,
    });
    d
}

/// The outcome of `answer` for `runtime` in `mode`, per the answer table.
pub(crate) fn outcome(runtime: Runtime, mode: Option<&str>, answer: &HookAnswer) -> Outcome {
    let spec = runtime.spec();
    spec.answers.mode(mode).outcome(answer.kind(spec.classify))
}

/// Every mode name of `runtime`, plus `None` and a name no runtime uses
/// (both read as the most permissive mode).
pub(crate) fn modes(runtime: Runtime) -> Vec<Option<&'static str>> {
    let mut out: Vec<Option<&'static str>> = runtime
        .spec()
        .answers
        .modes
        .iter()
        .map(|m| Some(m.name))
        .collect();
    out.push(None);
    out.push(Some("someFutureMode"));
    out
}

/// True when `answer` keeps the call from running in every mode of
/// `runtime` (a person deciding counts only where `host_prompt` allows it).
pub(crate) fn stops(runtime: Runtime, answer: &HookAnswer, host_prompt: bool) -> bool {
    modes(runtime)
        .into_iter()
        .all(|m| match outcome(runtime, m, answer) {
            Outcome::Stops => true,
            Outcome::PersonDecides => host_prompt,
            Outcome::Runs => false,
        })
}

/// Checks a reply against the rules of Codex's output parser; a reply it
/// rejects would let the call go on.
pub(crate) fn codex_accepts(v: &Value) -> Result<(), String> {
    match codex::classify(v) {
        AnswerKind::Malformed => Err(format!("Codex rejects {v}")),
        _ => Ok(()),
    }
}

fn ctx(mode: Option<&str>, host_prompt: bool) -> ReplyContext<'_> {
    ReplyContext {
        mode,
        host_prompt,
        allow_is_final: false,
    }
}

#[test]
fn runtime_names_parse_and_display() {
    for r in Runtime::ALL {
        assert_eq!(Runtime::parse(r.as_str()), Some(r));
        assert_eq!(
            Runtime::parse(&format!(" {} ", r.as_str().to_uppercase())),
            Some(r)
        );
        assert_eq!(r.to_string(), r.as_str());
    }
    for bad in ["", "claude", "claude_code", "openclaw", "gemini-cli"] {
        assert_eq!(Runtime::parse(bad), None, "{bad}");
    }
}

#[test]
fn runtime_dispatches_to_its_module() {
    let payload = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"}});
    assert_eq!(
        Runtime::ClaudeCode.to_call(&payload),
        claude_code::to_call(&payload)
    );
    assert_eq!(Runtime::Codex.to_call(&payload), codex::to_call(&payload));
    assert_eq!(Runtime::Gemini.to_call(&payload), Ok(None));
    assert_eq!(Runtime::Cursor.to_call(&payload), Ok(None));
    let c = ReplyContext::default();
    for d in [allow(), block(), escalate()] {
        assert_eq!(
            Runtime::ClaudeCode.reply(&d, &c),
            claude_code::reply(&d, &c)
        );
        assert_eq!(Runtime::Codex.reply(&d, &c), codex::reply(&d, &c));
        assert_eq!(Runtime::Gemini.reply(&d, &c), gemini::reply(&d, &c));
        assert_eq!(Runtime::Cursor.reply(&d, &c), cursor::reply(&d, &c));
    }
    assert_eq!(Runtime::Cursor.reply_error("x"), cursor::reply_error("x"));
    assert_eq!(Runtime::Gemini.reply_error("x"), gemini::reply_error("x"));
}

#[test]
fn every_runtime_stops_blocks_escalations_and_failures() {
    for r in Runtime::ALL {
        for m in modes(r) {
            for host_prompt in [false, true] {
                let c = ctx(m, host_prompt);
                let block = r.reply(&block(), &c);
                assert_eq!(outcome(r, m, &block), Outcome::Stops, "{r} {m:?} block");
                let esc = r.reply(&escalate(), &c);
                let o = outcome(r, m, &esc);
                assert!(
                    o == Outcome::Stops || (host_prompt && o == Outcome::PersonDecides),
                    "{r} {m:?} escalate: {o:?}"
                );
                assert_eq!(
                    outcome(r, m, &r.reply(&allow(), &c)),
                    Outcome::Runs,
                    "{r} {m:?}"
                );
            }
            assert_eq!(
                outcome(r, m, &r.reply_error("boom")),
                Outcome::Stops,
                "{r} {m:?}"
            );
        }
        assert_eq!(r.no_opinion(), HookAnswer::json(json!({})));
    }
    assert_eq!(
        claude_code::reply_error("x").stdout["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

/// A call held until knowledge is acknowledged.
pub(crate) fn held() -> Decision {
    let mut d = Decision::new(
        Verdict::Block,
        RiskClass::R1,
        10,
        Layer::Knowledge,
        "knowledge must be acknowledged before this call runs: SOP fleet",
    );
    d.block_reason = Some(Decision::ack_line("ab12", &d.reason));
    d.context = Some("## SOP fleet\n### preflight\nrun uptime first".into());
    d
}

#[test]
fn held_calls_stop_and_carry_the_knowledge_in_the_reason() {
    for r in Runtime::ALL {
        let reply = r.reply(&held(), &ReplyContext::default());
        assert!(stops(r, &reply, false), "{r} held");
        let text = format!("{} {}", reply.stdout, reply.stderr.unwrap_or_default());
        assert!(text.contains("run uptime first"), "{r}: {text}");
        assert!(text.contains("TOOLGATE_ACK|ab12|"), "{r}: {text}");
        assert!(!text.contains("No approval can unlock"), "{r}: {text}");
    }
}

#[test]
fn missing_field_errors_say_which_event_to_register() {
    let err = Runtime::Gemini
        .to_call(&json!({"tool_input": {}}))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "gemini hook input has no `tool_name`; register `toolgate hook gemini` for BeforeTool only"
    );
    let err = Runtime::Cursor.to_call(&json!({})).unwrap_err().to_string();
    assert!(
        err.contains("beforeShellExecution, beforeMCPExecution or beforeReadFile"),
        "{err}"
    );
}

/// Hook event names, the judged ones and one that is not.
const EVENTS: &[&str] = &[
    "PreToolUse",
    "preToolUse",
    "BeforeTool",
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
    "PostToolUse",
];

/// Keys and strings hook payloads use, so random payloads reach deep paths.
const WORDS: &[&str] = &[
    "hook_event_name",
    "tool_name",
    "tool_input",
    "session_id",
    "cwd",
    "tool_use_id",
    "command",
    "file_path",
    "workspace_roots",
    "conversation_id",
    "permission_mode",
    "bypassPermissions",
    "mcp_context",
    "server_name",
    "mcp_fsx_write_file",
    "apply_patch",
    "write_stdin",
    "*** Begin Patch",
    "Bash",
    "mcp__fs__read",
    "{\"a\":1}",
    "[1,2]",
    "",
    "TOOLGATE_ESCALATE|ap_1|why",
    "TOOLGATE_ESCALATE||",
];

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(WORDS).prop_map(str::to_string),
        prop::sample::select(EVENTS).prop_map(str::to_string),
        ".{0,12}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        word().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(word(), inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A field that is usually well formed, sometimes anything, sometimes absent.
fn field(valid: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Option<Value>> {
    prop_oneof![
        8 => valid.prop_map(Some),
        1 => json_value().prop_map(Some),
        1 => Just(None),
    ]
    .boxed()
}

fn object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(word(), json_value(), 0..4)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// Payloads shaped like the runtimes' own, with fields broken at random.
fn payload() -> impl Strategy<Value = Value> {
    let text = || word().prop_map(Value::String);
    let event = prop::sample::select(EVENTS).prop_map(Value::from);
    let input = prop_oneof![
        object(),
        object().prop_map(|o| Value::String(o.to_string()))
    ];
    let roots = prop::collection::vec(text(), 0..3).prop_map(Value::Array);
    let names = [
        "hook_event_name",
        "tool_name",
        "tool_input",
        "session_id",
        "cwd",
        "tool_use_id",
        "command",
        "file_path",
        "workspace_roots",
        "conversation_id",
    ];
    (
        (
            field(event),
            field(text()),
            field(input),
            field(text()),
            field(text()),
        ),
        (
            field(text()),
            field(text()),
            field(text()),
            field(roots),
            field(text()),
        ),
        object(),
    )
        .prop_map(move |((a, b, c, d, e), (f, g, h, i, j), extra)| {
            let mut map = match extra {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            for (name, value) in names.iter().zip([a, b, c, d, e, f, g, h, i, j]) {
                if let Some(v) = value {
                    map.insert(name.to_string(), v);
                }
            }
            Value::Object(map)
        })
}

fn params() -> impl Strategy<Value = Option<Map<String, Value>>> {
    prop::option::of(
        prop::collection::btree_map(word(), json_value(), 0..4)
            .prop_map(|m| m.into_iter().collect()),
    )
}

fn decision() -> impl Strategy<Value = Decision> {
    let verdict = prop::sample::select(vec![Verdict::Allow, Verdict::Block, Verdict::Escalate]);
    let approval = prop::option::of((word(), word(), any::<u32>(), prop::option::of(word())))
        .prop_map(|a| {
            a.map(|(id, expires_at, min_approvals, approve_url)| ApprovalRef {
                id,
                expires_at,
                min_approvals,
                approve_url,
            })
        });
    let texts = (word(), prop::option::of(word()), prop::option::of(word()));
    (verdict, texts, approval, params()).prop_map(
        |(verdict, (reason, block_reason, context), approval, params)| {
            let mut d = Decision::new(verdict, RiskClass::R2, 50, Layer::Risk, "x");
            d.reason = reason;
            d.block_reason = block_reason;
            d.context = context;
            d.approval = approval;
            d.params = params;
            d
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn to_call_never_panics_and_errors_name_the_runtime(
        payload in prop_oneof![json_value(), payload()]
    ) {
        for r in Runtime::ALL {
            match r.to_call(&payload) {
                Ok(Some(HookCall { call, .. })) => {
                    prop_assert!(!call.tool.is_empty());
                    prop_assert_eq!(call.agent.as_deref(), Some(r.as_str()));
                }
                Ok(None) => {}
                Err(e) => {
                    let prefix = format!("{r} hook input");
                    prop_assert!(e.to_string().starts_with(&prefix));
                }
            }
        }
    }

    #[test]
    fn reply_never_lets_a_block_or_escalation_run(d in decision(), host_prompt in any::<bool>()) {
        // Every (runtime, mode, decision): the answer table says a blocked or
        // escalated call does not run, unless the policy lets a person at
        // the runtime's own prompt decide and the mode has one.
        for r in Runtime::ALL {
            for m in modes(r) {
                let v = r.reply(&d, &ctx(m, host_prompt));
                let o = outcome(r, m, &v);
                match d.decision {
                    Verdict::Allow => {}
                    Verdict::Block => prop_assert_eq!(o, Outcome::Stops, "{} {:?}: {:?}", r, m, v),
                    Verdict::Escalate => {
                        let person = r.spec().answers.mode(m).person_at_prompt;
                        prop_assert!(
                            o == Outcome::Stops || (o == Outcome::PersonDecides && host_prompt && person),
                            "{} {:?}: {:?}", r, m, v
                        );
                    }
                }
            }
        }
        let v = codex::reply(&d, &ReplyContext::default()).stdout;
        prop_assert!(codex_accepts(&v).is_ok(), "{:?}", codex_accepts(&v));
    }

    #[test]
    fn escalations_name_their_approval_id(id in "[A-Za-z0-9_-]{1,24}", mut d in decision()) {
        d.decision = Verdict::Escalate;
        d.approval = Some(ApprovalRef {
            id: id.clone(),
            expires_at: "2026-11-01T00:05:00Z".into(),
            min_approvals: 1,
            approve_url: None,
        });
        let command = format!("toolgate approvals approve {id}");
        for r in Runtime::ALL {
            let v = r.reply(&d, &ReplyContext::default()).stdout.to_string();
            prop_assert!(v.contains(&command), "{r}: {v}");
        }
    }

    #[test]
    fn reply_error_never_allows(message in ".{0,40}") {
        for r in Runtime::ALL {
            let v = r.reply_error(&message);
            prop_assert!(stops(r, &v, false), "{}: {:?}", r, v);
            prop_assert!(!v.stdout.to_string().contains("\"allow\""));
        }
        prop_assert!(codex_accepts(&codex::reply_error(&message).stdout).is_ok());
    }
}

/// Keys an MCP message may carry, near spellings included.
fn mcp_key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &[
                "jsonrpc",
                "id",
                "method",
                "params",
                "name",
                "arguments",
                "path",
                "Path",
                "METHOD",
                "paramſ",
                "Name",
                "ſource",
                "source",
                "\u{212a}ey",
                "key",
                "_meta",
            ][..]
        )
        .prop_map(str::to_string),
        ".{0,6}",
    ]
}

fn mcp_message() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(
            &[
                "tools/call",
                "resources/read",
                "prompts/get",
                "ping",
                "file:///etc/x"
            ][..]
        )
        .prop_map(Value::from),
        ".{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(mcp_key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// The proxy's pure half on arbitrary messages: no panic; a message it
    /// accepts never holds two keys a lenient server could read as one; a
    /// call it maps is always named for the proxy's own server.
    #[test]
    fn mcp_messages_are_mapped_or_refused_never_confused(msg in mcp_message()) {
        let session = mcp::McpSession { server: "fs".into(), ..Default::default() };
        if mcp::check_keys(&msg).is_ok() {
            if let Value::Object(m) = &msg {
                let mut folded: Vec<String> = m.keys().map(|k| k.to_lowercase().replace('ſ', "s")).collect();
                folded.sort();
                let n = folded.len();
                folded.dedup();
                prop_assert_eq!(n, folded.len());
            }
            let params = msg.get("params").cloned().unwrap_or(Value::Null);
            let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
            let call = mcp::call_for(&session, method, &params, msg.get("id"));
            if let Some(Ok(c)) = call {
                prop_assert!(c.tool.starts_with("mcp__fs__"), "{}", c.tool);
            }
        }
        let _ = mcp::elicit_answer(&msg);
    }
}

/// docs/integrations.md carries every runtime's answer table, rendered from
/// the data above, between `<!-- answer-tables -->` markers. Run with
/// `TOOLGATE_BLESS_DOCS=1` to rewrite that part after changing a table.
#[test]
fn the_docs_carry_the_answer_tables() {
    const BEGIN: &str = "<!-- answer-tables: generated from crates/toolgate-core/src/hooks by \
                         the_docs_carry_the_answer_tables; do not edit by hand -->\n";
    const END: &str = "<!-- /answer-tables -->";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/integrations.md");
    let doc = std::fs::read_to_string(path).expect("docs/integrations.md");
    let mut want = String::new();
    for r in Runtime::ALL {
        let spec = r.spec();
        want.push_str(&answers::render_markdown(spec.title, spec.answers));
        want.push('\n');
    }
    let (Some(a), Some(b)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/integrations.md has no answer-tables markers");
    };
    let have = &doc[a + BEGIN.len()..b];
    if have != want {
        if std::env::var_os("TOOLGATE_BLESS_DOCS").is_some() {
            let new = format!("{}{BEGIN}{want}{}", &doc[..a], &doc[b..]);
            std::fs::write(path, new).expect("rewrite docs/integrations.md");
            return;
        }
        panic!(
            "docs/integrations.md's answer tables differ from the data; run \
             TOOLGATE_BLESS_DOCS=1 cargo test -p toolgate-core --lib the_docs_carry"
        );
    }
}
