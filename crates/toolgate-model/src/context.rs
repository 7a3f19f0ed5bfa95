//! The context package: what the model is shown about one call.
//!
//! Every string that goes in passes through toolgate-core's redaction
//! ([`redact_value`], [`redact_text`]) and then a size bound, inside the
//! constructors and setters here. The fields are private, so a caller cannot
//! put unredacted text in by forgetting a step. The package holds no chain
//! of thought, only facts about the call and the static rules' verdict.

use crate::bound::{bound_args, clip, clip_list};
use serde::Serialize;
use serde_json::{Map, Value};
use toolgate_core::{NormalizedCall, RiskClass, ToolCall, redact_text, redact_value};

/// Longest tool name kept.
const MAX_TOOL: usize = 256;
/// Longest agent, session, channel or sender role kept.
const MAX_META: usize = 128;
/// Longest summary kept.
const MAX_SUMMARY: usize = 512;
/// Most targets kept, and the longest of each.
const MAX_TARGETS: usize = 32;
const MAX_TARGET: usize = 512;
/// Most static reasons kept, and the longest of each.
const MAX_REASONS: usize = 16;
const MAX_REASON: usize = 512;

/// What the static rules concluded about the call, shown to the model so it
/// can disagree with reasons rather than start from nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StaticAssessment {
    /// The static rules' risk class.
    pub risk_class: RiskClass,
    /// Why, in short sentences (redacted and bounded when put in a package).
    pub reasons: Vec<String>,
}

/// The model's whole view of one call: tool, redacted and bounded args,
/// targets, a one-line summary, session metadata, sandbox posture and the
/// static assessment. Serializes to the JSON sent as the user message.
///
/// Every setter redacts and bounds what it is given; see the module docs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextPackage {
    tool: String,
    args: Value,
    targets: Vec<String>,
    summary: String,
    agent: Option<String>,
    session: Option<String>,
    channel: Option<String>,
    sender_role: Option<String>,
    sandboxed: Option<bool>,
    static_assessment: StaticAssessment,
}

impl ContextPackage {
    /// A package for a call of `tool` with `args` (the normalized arguments;
    /// redacted and bounded here), and nothing else known yet.
    pub fn new(tool: &str, args: &Value, static_assessment: StaticAssessment) -> ContextPackage {
        ContextPackage {
            tool: text(tool, MAX_TOOL),
            args: bound_args(redact_args(args)),
            targets: Vec::new(),
            summary: String::new(),
            agent: None,
            session: None,
            channel: None,
            sender_role: None,
            sandboxed: None,
            static_assessment: StaticAssessment {
                risk_class: static_assessment.risk_class,
                reasons: list(static_assessment.reasons, MAX_REASONS, MAX_REASON),
            },
        }
    }

    /// A package from the call as the runtime sent it: its tool and params,
    /// agent, session, channel and requester role.
    pub fn from_call(call: &ToolCall, static_assessment: StaticAssessment) -> ContextPackage {
        ContextPackage::new(
            &call.tool,
            &Value::Object(call.params.clone()),
            static_assessment,
        )
        .with_call_metadata(call)
    }

    /// A package from the normalized call: the params it judged (for a
    /// bridge, the wrapped ones), its paths (as `access: path`) and URLs as
    /// targets, and the metadata of the original `call`.
    pub fn from_normalized(
        call: &ToolCall,
        normalized: &NormalizedCall,
        static_assessment: StaticAssessment,
    ) -> ContextPackage {
        let targets = normalized
            .paths
            .iter()
            .map(|p| {
                let access = serde_json::to_value(p.access).unwrap_or(Value::Null);
                format!("{}: {}", access.as_str().unwrap_or("touch"), p.path)
            })
            .chain(normalized.urls.iter().cloned());
        ContextPackage::new(
            &normalized.tool,
            &Value::Object(normalized.params.clone()),
            static_assessment,
        )
        .with_call_metadata(call)
        .with_targets(targets)
    }

    /// Sets the paths and hosts the call touches (at most 32 kept).
    pub fn with_targets<I, S>(mut self, targets: I) -> ContextPackage
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let targets = targets
            .into_iter()
            .map(|t| t.as_ref().to_string())
            .collect();
        self.targets = list(targets, MAX_TARGETS, MAX_TARGET);
        self
    }

    /// Sets the one-line summary of the current task step; line breaks
    /// become spaces.
    pub fn with_summary(mut self, summary: &str) -> ContextPackage {
        let line: String = summary
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        self.summary = text(line.trim(), MAX_SUMMARY);
        self
    }

    /// Sets whether the call runs in a sandbox, when that is known.
    pub fn with_sandboxed(mut self, sandboxed: Option<bool>) -> ContextPackage {
        self.sandboxed = sandboxed;
        self
    }

    /// Sets the agent that made the call.
    pub fn with_agent(mut self, agent: Option<&str>) -> ContextPackage {
        self.agent = agent.map(|a| text(a, MAX_META));
        self
    }

    /// Sets the session the call belongs to.
    pub fn with_session(mut self, session: Option<&str>) -> ContextPackage {
        self.session = session.map(|s| text(s, MAX_META));
        self
    }

    /// Sets the channel the session talks on.
    pub fn with_channel(mut self, channel: Option<&str>) -> ContextPackage {
        self.channel = channel.map(|c| text(c, MAX_META));
        self
    }

    /// Sets the role of the person the agent acts for.
    pub fn with_sender_role(mut self, role: Option<&str>) -> ContextPackage {
        self.sender_role = role.map(|r| text(r, MAX_META));
        self
    }

    fn with_call_metadata(self, call: &ToolCall) -> ContextPackage {
        let role = call.requester.as_ref().and_then(|r| r.role.as_deref());
        self.with_agent(call.agent.as_deref())
            .with_session(call.session.as_deref())
            .with_channel(call.channel.as_deref())
            .with_sender_role(role)
    }

    /// The tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The redacted, bounded args.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The redacted, bounded targets.
    pub fn targets(&self) -> &[String] {
        &self.targets
    }

    /// The redacted, bounded summary (empty when none was set).
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// The static assessment, its reasons redacted and bounded.
    pub fn static_assessment(&self) -> &StaticAssessment {
        &self.static_assessment
    }

    /// The package as the JSON text sent to the model.
    pub fn to_json(&self) -> String {
        // Serializing plain strings, bools and a JSON value cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// `s` redacted, then clipped to `max` bytes.
fn text(s: &str, max: usize) -> String {
    clip(&redact_text(s), max)
}

/// Each item redacted, then the list bounded.
fn list(items: Vec<String>, max_items: usize, max_len: usize) -> Vec<String> {
    let redacted = items
        .into_iter()
        .map(|s| redact_text(&s).into_owned())
        .collect();
    clip_list(redacted, max_items, max_len)
}

/// The args redacted, object keys included: toolgate-core keeps keys as
/// they are (for stored records they are names), but here nothing secret
/// should reach the model, so keys go through the text scan too.
fn redact_args(args: &Value) -> Value {
    fn keys(value: Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (redact_text(&k).into_owned(), keys(v)))
                    .collect::<Map<String, Value>>(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(keys).collect()),
            v => v,
        }
    }
    keys(redact_value(args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bound::CUT_MARK;
    use serde_json::json;
    use toolgate_core::Requester;

    const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
    const GH: &str = "ghp_1234567890abcdefghijklmnopqrstuvwxyz";

    fn assessment() -> StaticAssessment {
        StaticAssessment {
            risk_class: RiskClass::R2,
            reasons: vec![format!("command sets GITHUB_TOKEN={GH}")],
        }
    }

    #[test]
    fn secrets_never_reach_the_package_text() {
        let call = ToolCall {
            tool: "exec".into(),
            params: json!({
                "command": format!("AWS_ACCESS_KEY_ID={AWS} aws s3 ls"),
                "env": {"GITHUB_TOKEN": GH},
                GH: "a key that is a secret",
            })
            .as_object()
            .unwrap()
            .clone(),
            agent: Some("builder".into()),
            session: Some("s-1".into()),
            channel: Some("cli".into()),
            requester: Some(Requester {
                id: Some("u1".into()),
                role: Some("owner".into()),
            }),
            ..ToolCall::default()
        };
        let p = ContextPackage::from_call(&call, assessment())
            .with_summary(&format!("push with {GH}\nnow"))
            .with_targets([format!("https://user:{GH}@github.com/x")])
            .with_sandboxed(Some(false));
        let text = p.to_json();
        assert!(!text.contains(AWS), "{text}");
        assert!(!text.contains(GH), "{text}");
        assert!(text.contains("[REDACTED"), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["tool"], "exec");
        assert_eq!(v["agent"], "builder");
        assert_eq!(v["session"], "s-1");
        assert_eq!(v["channel"], "cli");
        assert_eq!(v["sender_role"], "owner");
        assert_eq!(v["sandboxed"], false);
        assert_eq!(v["static_assessment"]["risk_class"], "R2");
        assert!(!p.summary().contains('\n'));
        assert!(v.get("chain_of_thought").is_none());
    }

    #[test]
    fn every_field_is_bounded() {
        let long = "a".repeat(5_000);
        let p = ContextPackage::new(
            &long,
            &json!({"content": long}),
            StaticAssessment {
                risk_class: RiskClass::R1,
                reasons: vec![long.clone(); 40],
            },
        )
        .with_summary(&long)
        .with_agent(Some(&long))
        .with_targets(vec![long.clone(); 100]);
        assert!(p.tool().len() < MAX_TOOL + 64 && p.tool().contains(CUT_MARK));
        assert!(p.summary().len() < MAX_SUMMARY + 64);
        assert_eq!(p.targets().len(), MAX_TARGETS + 1);
        assert_eq!(p.static_assessment().reasons.len(), MAX_REASONS + 1);
        // The whole package stays within a few tens of KiB whatever it is given.
        assert!(p.to_json().len() < 48 * 1024, "{}", p.to_json().len());
    }

    #[test]
    fn normalized_targets_name_their_access() {
        use toolgate_core::normalize;
        use toolgate_core::paths::Env;
        let call = ToolCall {
            tool: "write".into(),
            params: json!({"path": "/tmp/x.txt", "content": "hi"})
                .as_object()
                .unwrap()
                .clone(),
            ..ToolCall::default()
        };
        let env = Env::new("/home/u", "/home/u/work");
        let n = normalize(&call, &env);
        let p = ContextPackage::from_normalized(&call, &n, assessment());
        assert!(
            p.targets().iter().any(|t| t == "write: /tmp/x.txt"),
            "{:?}",
            p.targets()
        );
    }
}
