//! Policy files: allow / ask / deny rules in the permission syntax people
//! know from Claude Code, never-block and always-ask lists, the escalation
//! threshold, approval settings, and `[[test]]` cases (docs/cli.md,
//! "Policies"). Deny wins over ask and ask over allow; in a compound shell
//! command every simple command is judged and the strictest answer stands.
//!
//! Parsing is strict: an unknown key anywhere, a rule that does not parse, a
//! value out of range is an error with the file, line and column of the
//! offending text and a sentence saying how to fix it — a typo in a security
//! policy must never be silently ignored.
//!
//! ```toml
//! workspace = "~/proj"              # optional; default: the call's cwd
//! [rules]
//! deny  = ["exec(rm -rf /)", "write(/etc/**)", "read(~/.ssh/**)"]
//! ask   = ["exec(git push:*)", "gateway(config.*)", "message(*)"]
//! allow = ["read(./**)", "exec(cargo test:*)", "web_fetch(domain:docs.rs)"]
//! never_block = ["memory_search", "memory_get", "session_status"]
//! always_ask  = []
//! [risk]
//! escalation_threshold = 36         # 1..=100
//! [approvals]
//! pending_ttl = "5m"
//! approval_window = "10m"
//! quorum = { R2 = 1, R3 = 1, R4 = 2 }
//! relay = false                    # more keys: see approvals.rs
//! [hooks]
//! hold = "2m"                      # a hook waits this long for an approval (default off)
//! host_prompt = false              # the runtime's own prompt may approve (person present only)
//! allow_is_final = false           # toolgate's allow also skips the runtime's own checks
//! [git]
//! protected_branches = ["main", "release*"]  # replaces the default list (git.rs)
//! [organization]
//! domains = ["acme.com"]           # who is inside (organization.rs)
//! code_orgs = ["acme"]
//! private_channels = ["#dev-team"]
//! [[test]]
//! call = { tool = "exec", params = { command = "ls && rm -rf ~" } }
//! expect = "block"
//! ```
//!
//! How rules match is described in [`Rule`]'s module (`rule.rs`) and the
//! specifier modules it uses (`exec.rs`, `path.rs`, `url.rs`).

mod approvals;
mod duration;
mod error;
mod exec;
mod git;
mod hooks;
mod knowledge;
mod lint;
mod organization;
mod path;
mod routing;
mod rule;
mod schema;
#[cfg(test)]
mod tests;
mod url;

use crate::knowledge::settings::KnowledgeSettings;
pub use approvals::{ApprovalRule, ApprovalSettings, ModelStage};
pub use error::{ErrorKind, PolicyError};
pub use git::GitSettings;
pub use hooks::HookSettings;
pub use organization::Organization;
pub use routing::{RouteTarget, Routing, RoutingMode};
pub use rule::Rule;

use crate::model::{Requester, ToolCall, Verdict};
use crate::normalize::{ToolKind, kind_of};
use crate::paths::normalize_abs;
use approvals::parse_approvals;
use schema::{RawPolicy, table_to_json};
use toml::Spanned;

/// The rule lists of a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleList {
    /// `[rules] deny`: matching calls are blocked; deny wins over everything.
    Deny,
    /// `[rules] ask`: matching calls are escalated for approval.
    Ask,
    /// `[rules] allow`: matching calls are allowed by the policy layer.
    Allow,
    /// `[rules] always_ask`: matching calls always need approval, whatever
    /// the other layers say.
    AlwaysAsk,
}

/// What a `[[test]]` case expects the decision to be.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
pub enum Expectation {
    /// `"allow"`
    Allow,
    /// `"block"`
    Block,
    /// `"escalate"`
    Escalate,
    /// `"stop"`: block or escalate, either will do.
    Stop,
}

impl Expectation {
    /// Parses `allow`, `block`, `escalate` or `stop` (ASCII case ignored).
    pub fn parse(s: &str) -> Option<Expectation> {
        s.trim().parse().ok()
    }

    /// The lowercase name as written in policies.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether a verdict satisfies the expectation.
    pub fn accepts(self, verdict: Verdict) -> bool {
        match self {
            Expectation::Allow => verdict == Verdict::Allow,
            Expectation::Block => verdict == Verdict::Block,
            Expectation::Escalate => verdict == Verdict::Escalate,
            Expectation::Stop => verdict != Verdict::Allow,
        }
    }
}

/// One `[[test]]` case: a call and the decision the policy must give it.
/// Running them is the decision engine's job; the policy only parses them.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyTest {
    /// The optional `name` label.
    pub name: Option<String>,
    /// The call to decide.
    pub call: ToolCall,
    /// The decision expected.
    pub expect: Expectation,
    /// 1-based (line, column) of the test in the policy file, for reports.
    pub location: (usize, usize),
}

/// The escalation threshold used when a policy does not set one.
pub(crate) const DEFAULT_ESCALATION_THRESHOLD: u32 = 36;

/// A parsed and validated policy. Immutable; cheap to share behind an `Arc`.
#[derive(Debug, Clone)]
pub struct Policy {
    origin: String,
    workspace: Option<String>,
    deny: Vec<Rule>,
    ask: Vec<Rule>,
    allow: Vec<Rule>,
    always_ask: Vec<Rule>,
    never_block: Vec<String>,
    escalation_threshold: u32,
    approvals: ApprovalSettings,
    knowledge: std::sync::Arc<KnowledgeSettings>,
    hooks: HookSettings,
    git: GitSettings,
    organization: Organization,
    profile_path: Option<String>,
    profile: Option<std::sync::Arc<crate::profile::Profile>>,
    tests: Vec<PolicyTest>,
}

impl Default for Policy {
    /// A policy with no rules and every setting at its default.
    fn default() -> Self {
        Policy {
            origin: "<default>".to_string(),
            workspace: None,
            deny: Vec::new(),
            ask: Vec::new(),
            allow: Vec::new(),
            always_ask: Vec::new(),
            never_block: Vec::new(),
            escalation_threshold: DEFAULT_ESCALATION_THRESHOLD,
            approvals: ApprovalSettings::default(),
            knowledge: Default::default(),
            hooks: HookSettings::default(),
            git: GitSettings::default(),
            organization: Organization::default(),
            profile_path: None,
            profile: None,
            tests: Vec::new(),
        }
    }
}

impl Policy {
    /// Parses and validates a policy. `origin` names where the text came
    /// from (a file path, `<built-in default>`) and prefixes every error.
    /// All sections are optional. Fails on the first problem found: TOML
    /// syntax, an unknown key at any level, a value of the wrong type, a rule
    /// that does not parse, a value out of range, an incomplete test.
    pub fn from_toml_str(src: &str, origin: &str) -> Result<Policy, PolicyError> {
        let raw: RawPolicy = toml::from_str(src).map_err(|e| toml_error(origin, src, &e))?;
        let at = |offset: usize, kind: ErrorKind, msg: String| {
            PolicyError::at(origin, src, offset, kind, msg)
        };

        let workspace = match raw.workspace {
            None => None,
            Some(w) => Some(
                parse_workspace(w.get_ref())
                    .map_err(|m| at(w.span().start, ErrorKind::Value, m))?,
            ),
        };

        let rules = raw.rules.unwrap_or_default();
        let lines = error::LineIndex::new(src);
        let parse_list = |list: &[Spanned<String>]| -> Result<Vec<Rule>, PolicyError> {
            list.iter()
                .map(|s| {
                    let start = s.span().start;
                    let (line, col) = lines.line_col(start);
                    Rule::parse(s.get_ref())
                        .map(|r| r.with_location(line, col))
                        .map_err(|e| at(start, ErrorKind::Rule, e.message().to_string()))
                })
                .collect()
        };
        let deny = parse_list(&rules.deny)?;
        let ask = parse_list(&rules.ask)?;
        let allow = parse_list(&rules.allow)?;
        let always_ask = parse_list(&rules.always_ask)?;
        let never_block = rules
            .never_block
            .iter()
            .map(|s| {
                let name = s.get_ref().trim();
                let ok = !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
                if ok {
                    Ok(name.to_string())
                } else {
                    Err(at(
                        s.span().start,
                        ErrorKind::Value,
                        format!(
                            "never_block entry {:?} is not a tool name — never_block lists \
                             tool names such as memory_search; put rules in allow instead",
                            s.get_ref()
                        ),
                    ))
                }
            })
            .collect::<Result<Vec<_>, _>>()?;

        let escalation_threshold = match raw.risk.and_then(|r| r.escalation_threshold) {
            None => DEFAULT_ESCALATION_THRESHOLD,
            Some(t) => {
                let v = *t.get_ref();
                u32::try_from(v)
                    .ok()
                    .filter(|v| (1..=100).contains(v))
                    .ok_or_else(|| {
                        at(
                            t.span().start,
                            ErrorKind::Value,
                            format!(
                                "escalation_threshold = {v} is out of range — use a whole \
                                 number from 1 to 100 (default {DEFAULT_ESCALATION_THRESHOLD})"
                            ),
                        )
                    })?
            }
        };

        let approvals = parse_approvals(raw.approvals, src, origin)?;
        let knowledge = knowledge::parse_knowledge(raw.knowledge, src, origin)?.into();
        let hooks = hooks::parse_hooks(raw.hooks, src, origin)?;
        let git = git::parse_git(raw.git, src, origin)?;
        let organization = organization::parse_organization(raw.organization, src, origin)?;
        let profile_path = match raw.profile {
            None => None,
            Some(p) if p.get_ref().trim().is_empty() || p.get_ref().contains('\0') => {
                return Err(at(
                    p.span().start,
                    ErrorKind::Value,
                    "profile is empty — name the scope profile file, e.g. \
                     profile = \"clinical-assistant.profile.md\" (relative to this file)"
                        .to_string(),
                ));
            }
            Some(p) => Some(p.get_ref().trim().to_string()),
        };

        let tests = raw
            .tests
            .iter()
            .map(|t| parse_test(t, src, &lines, origin))
            .collect::<Result<Vec<_>, _>>()?;

        Ok(Policy {
            origin: origin.to_string(),
            workspace,
            deny,
            ask,
            allow,
            always_ask,
            never_block,
            escalation_threshold,
            approvals,
            knowledge,
            hooks,
            git,
            organization,
            profile_path,
            profile: None,
            tests,
        })
    }

    /// The rules of one list, in the order written.
    pub fn rules(&self, list: RuleList) -> &[Rule] {
        match list {
            RuleList::Deny => &self.deny,
            RuleList::Ask => &self.ask,
            RuleList::Allow => &self.allow,
            RuleList::AlwaysAsk => &self.always_ask,
        }
    }

    /// True when the tool is on the never-block list: listed by its exact
    /// runtime name (case-sensitive), or its kind is known and listed by its
    /// canonical name (`memory` covers every memory tool).
    pub fn never_block(&self, tool: &str) -> bool {
        let kind = kind_of(tool);
        self.never_block.iter().any(|n| {
            n == tool || (kind != ToolKind::Other && n.eq_ignore_ascii_case(kind.as_str()))
        })
    }

    /// The never-block list as written.
    pub fn never_block_list(&self) -> &[String] {
        &self.never_block
    }

    /// The clarity × stakes score at or above which a call escalates, 1..=100
    /// (default 36).
    pub fn escalation_threshold(&self) -> u32 {
        self.escalation_threshold
    }

    /// The `[approvals]` settings (defaults when the section is absent).
    pub fn approvals(&self) -> &ApprovalSettings {
        &self.approvals
    }

    /// The `[hooks]` settings (defaults when the section is absent).
    pub fn hooks(&self) -> &HookSettings {
        &self.hooks
    }

    /// The `[git]` settings (defaults when the section is absent).
    pub fn git(&self) -> &GitSettings {
        &self.git
    }

    /// The `[organization]` settings: who is inside (nobody when the section
    /// is absent).
    pub fn organization(&self) -> &Organization {
        &self.organization
    }

    /// The `[knowledge]` settings (defaults when the section is absent).
    pub fn knowledge(&self) -> &std::sync::Arc<KnowledgeSettings> {
        &self.knowledge
    }

    /// The scope profile file the policy names (`profile = "…"`), as
    /// written: relative paths are relative to the policy file. The caller
    /// reads it and attaches it with [`Policy::with_profile`].
    pub fn profile_path(&self) -> Option<&str> {
        self.profile_path.as_deref()
    }

    /// The attached scope profile, if any.
    pub fn profile(&self) -> Option<&crate::profile::Profile> {
        self.profile.as_deref()
    }

    /// The policy with `profile` attached: its layers judge every call.
    pub fn with_profile(mut self, profile: crate::profile::Profile) -> Policy {
        self.profile = Some(std::sync::Arc::new(profile));
        self
    }

    /// The `[[test]]` cases, in the order written.
    pub fn tests(&self) -> &[PolicyTest] {
        &self.tests
    }

    /// The workspace the policy names, if any: an absolute, normalized path,
    /// or a `~` / `~/…` path for the caller to resolve against home. `None`
    /// means the call's working directory is the workspace.
    pub fn workspace(&self) -> Option<&str> {
        self.workspace.as_deref()
    }

    /// Where the policy came from, as given to [`Policy::from_toml_str`].
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

fn parse_workspace(w: &str) -> Result<String, String> {
    let t = w.trim();
    if t.starts_with('/') {
        Ok(normalize_abs(t))
    } else if t == "~" || t.starts_with("~/") {
        let rest = normalize_abs(&t[1..]);
        Ok(if rest == "/" {
            "~".to_string()
        } else {
            format!("~{rest}")
        })
    } else {
        Err(format!(
            "workspace {w:?} is not an absolute path — write an absolute path such as \
             \"/home/me/proj\" or one under home such as \"~/proj\", or leave workspace out \
             to use each call's working directory"
        ))
    }
}

fn parse_test(
    t: &Spanned<schema::RawTest>,
    src: &str,
    lines: &error::LineIndex,
    origin: &str,
) -> Result<PolicyTest, PolicyError> {
    let at =
        |offset: usize, msg: String| PolicyError::at(origin, src, offset, ErrorKind::Test, msg);
    let start = t.span().start;
    let raw = t.get_ref();
    let Some(call) = &raw.call else {
        return Err(at(
            start,
            "this [[test]] has no `call` — add one, e.g. \
             call = { tool = \"exec\", params = { command = \"ls\" } }"
                .to_string(),
        ));
    };
    let Some(expect) = &raw.expect else {
        return Err(at(
            start,
            "this [[test]] has no `expect` — add expect = \"allow\", \"block\", \"escalate\" \
             or \"stop\" (block or escalate)"
                .to_string(),
        ));
    };
    let expectation = Expectation::parse(expect.get_ref()).ok_or_else(|| {
        at(
            expect.span().start,
            format!(
                "expect = {:?} is not a decision — write \"allow\", \"block\", \"escalate\" \
                 or \"stop\" (block or escalate)",
                expect.get_ref()
            ),
        )
    })?;
    let c = call.get_ref();
    let tool = match &c.tool {
        Some(tool) if !tool.get_ref().trim().is_empty() => tool.get_ref().trim().to_string(),
        Some(tool) => {
            return Err(at(
                tool.span().start,
                "the test call's `tool` is empty — name the tool, e.g. tool = \"exec\"".to_string(),
            ));
        }
        None => {
            return Err(at(
                call.span().start,
                "the test call has no `tool` — write e.g. \
                 call = { tool = \"exec\", params = { command = \"ls\" } }"
                    .to_string(),
            ));
        }
    };
    let params = match &c.params {
        None => serde_json::Map::new(),
        Some(p) => table_to_json(p.get_ref()).map_err(|m| at(p.span().start, m))?,
    };
    let requester = c.requester.as_ref().map(|r| Requester {
        id: r.id.clone(),
        role: r.role.clone(),
    });
    Ok(PolicyTest {
        name: raw.name.clone(),
        call: ToolCall {
            tool,
            params,
            call_id: c.call_id.clone(),
            agent: c.agent.clone(),
            session: c.session.clone(),
            channel: c.channel.clone(),
            cwd: c.cwd.clone(),
            requester,
            ..ToolCall::default()
        },
        expect: expectation,
        location: lines.line_col(start),
    })
}

/// Turns a TOML / serde error into a located policy error with advice.
fn toml_error(origin: &str, src: &str, e: &toml::de::Error) -> PolicyError {
    let offset = e.span().map_or(0, |s| s.start);
    let msg = e.message().trim();
    let (kind, message) = if msg.starts_with("unknown field") {
        (
            ErrorKind::UnknownKey,
            format!(
                "{msg} — policy files reject unknown keys so a typo cannot silently weaken \
                 them; fix the spelling or remove the key"
            ),
        )
    } else if msg.starts_with("invalid type") || msg.starts_with("invalid value") {
        (ErrorKind::Type, friendly_type_message(msg))
    } else {
        (ErrorKind::Syntax, format!("invalid TOML: {msg}"))
    };
    PolicyError::at(origin, src, offset, kind, message)
}

fn friendly_type_message(msg: &str) -> String {
    let (head, expected) = match msg.rsplit_once(", expected ") {
        Some((h, e)) => (h, e),
        None => return msg.to_string(),
    };
    let want = match expected {
        "i64" | "u64" | "u32" | "i32" => "a whole number",
        "a sequence" => "an array, e.g. [\"exec(git push:*)\"]",
        "a boolean" => "true or false",
        "a string" => "a string in quotes",
        e if e.starts_with("struct ") || e == "a map" => "a table, e.g. { key = \"value\" }",
        e => e,
    };
    format!("{head}, expected {want}")
}
