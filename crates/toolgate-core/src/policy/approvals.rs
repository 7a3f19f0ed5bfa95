//! `[approvals]`: how long approvals live, who may give them, and how many
//! are needed (docs/approvals.md).
//!
//! ```toml
//! [approvals]
//! pending_ttl = "5m"                 # how long a request waits for its quorum
//! approval_window = "10m"            # how long a granted approval stays usable
//! quorum = { R2 = 1, R3 = 1, R4 = 2 }
//! require_user = ["R3", "R4"]        # classes that need a person among the approvers
//! allowed_approvers = ["user_request", "rules_based"]   # + "llm_evaluation"
//! disabled_approvers = []
//! operators = []                     # when set, the only people who may approve
//! relay = false                      # agent-relayed approval (never for R4)
//! max_open = 1000                    # open approvals at most; past it escalations block
//! max_open_per_session = 20          # open approvals one session may have at once
//! max_open_per_agent = 100           # open approvals one agent may have at once
//! allow_weak_r4 = false              # DANGEROUS: accept R4 quorum 1 and R4 rules
//!
//! [approvals.model]                  # the llm_evaluation approver (see ModelStage)
//! base_url = "http://127.0.0.1:8080/v1"
//! model = "qwen2.5-3b-instruct"
//! api_key_env = "TOOLGATE_MODEL_KEY" # optional; the key itself never in the file
//! timeout = "800ms"
//! min_confidence = 0.7
//! max_auto_approve = "R2"            # the highest class its vote may approve
//!
//! [[approvals.rule]]                 # the rules_based approver
//! name = "owners may message the team channel"
//! approve = ["message(send)"]
//! requester_roles = ["owner"]
//! max_risk = "R3"
//! ```

use super::duration::parse_duration;
use super::error::{ErrorKind, PolicyError, line_col};
use super::routing::{Routing, parse_routing};
use super::rule::Rule;
use super::schema::RawApprovals;
use crate::approval::{ApproverKind, InsufficientFactors, QuorumRule};
use crate::model::RiskClass;
use std::time::Duration;
use toml::Spanned;

/// One `[[approvals.rule]]`: when the `rules_based` approver approves.
#[derive(Debug, Clone)]
pub struct ApprovalRule {
    /// A name shown in votes and the audit trail.
    pub name: String,
    /// Calls it approves, in rule syntax, matched as strictly as allow rules
    /// (for shell commands: every simple command must match one).
    pub approve: Vec<Rule>,
    /// When not empty, the requester must have one of these roles. The role
    /// comes from the call (`requester.role`), so it is only as trustworthy
    /// as whoever fills it in: the runtime (OpenClaw sets the sender's role)
    /// or, where the agent writes its own calls, the agent.
    pub requester_roles: Vec<String>,
    /// The highest risk class it may approve (default R3).
    pub max_risk: RiskClass,
}

/// `[approvals.model]`: the model approver (`llm_evaluation`, a fast model
/// asked for a risk assessment; docs/approvals.md). It is asked only about
/// escalations the static stage is unsure of ([`crate::approvers::is_unsure`]), only when
/// `allowed_approvers` lets it vote, and its vote is a factor like any
/// other: the policy's quorum decides.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelStage {
    /// The client's settings as written (`base_url`, `model`,
    /// `api_key_env`, `timeout`, `min_confidence`, `max_tokens`,
    /// `temperature`), checked by whoever builds the client (the daemon).
    pub client: toml::Table,
    /// The highest risk class its vote may approve (default R2, at most
    /// R3: an R4 call always needs people).
    pub max_auto_approve: RiskClass,
    /// Where the table starts in the policy file (1-based line).
    pub line: usize,
}

/// `[approvals]`: how pending approvals behave and who may approve.
#[derive(Debug, Clone)]
pub struct ApprovalSettings {
    /// How long a pending approval waits before it expires (default 5 minutes).
    pub pending_ttl: Duration,
    /// How long an approval, once granted, stays usable (default 30 seconds).
    pub approval_window: Duration,
    /// Whether approvals relayed by the agent itself are accepted (default
    /// false; never for R4, whatever this says).
    pub relay: bool,
    /// The approver kinds the policy allows (default `user_request`,
    /// `rules_based`).
    pub allowed_approvers: Vec<ApproverKind>,
    /// Approver kinds removed before quorum is computed.
    pub disabled_approvers: Vec<ApproverKind>,
    /// When not empty, the only people who may approve as `user_request`;
    /// each counts as one factor towards what the quorum can reach.
    pub operators: Vec<String>,
    /// The `rules_based` approver's rules; it is inactive without any.
    pub rules: Vec<ApprovalRule>,
    /// Most approvals open (pending or approved) at once (default 1,000).
    /// Past it a new escalation is blocked: an agent sending endless
    /// distinct risky calls cannot bury the operators or fill the store.
    pub max_open: u32,
    /// Most approvals open at once for calls of one session (default 20),
    /// and of one agent (default 100): one runaway or hostile session
    /// cannot take the whole of `max_open` or flood the people asked.
    /// Calls naming no session (or no agent) share one count.
    pub max_open_per_session: u32,
    /// See [`ApprovalSettings::max_open_per_session`].
    pub max_open_per_agent: u32,
    /// The explicit, dangerous opt-in (`allow_weak_r4 = true`) without
    /// which a policy with an R4 quorum under two, or an
    /// `[[approvals.rule]]` reaching R4, is refused: R4 calls (force
    /// pushes, production deletes, infrastructure teardown) need two
    /// people. Even with it, the administrator never counts at R4.
    pub allow_weak_r4: bool,
    /// The model approver, when `[approvals.model]` configures one.
    pub model: Option<ModelStage>,
    /// Where pending approvals are sent (`[approvals.routing]`).
    pub routing: Routing,
    quorum: [u32; 5],
    require_user: [bool; 5],
}

impl ApprovalSettings {
    /// The quorum a call of `class` needs under these settings. `llm_available` says
    /// whether a model evaluator is actually configured: an approver that cannot
    /// vote does not count towards what is reachable.
    ///
    /// Fails closed when `min_approvals` exceeds the approvals the active
    /// approvers can give, or a person is required and `user_request` is off.
    /// People count one each when `operators` names them (those for whom
    /// `asked` says they asked for this call excepted, under any of their
    /// identities), and without limit when it does not (any distinct
    /// identity may approve); `rules_based` counts when one of its rules
    /// reaches `class`.
    pub fn requirement(
        &self,
        class: RiskClass,
        llm_available: bool,
        asked: &dyn Fn(&str) -> bool,
    ) -> Result<QuorumRule, InsufficientFactors> {
        let min_approvals = self.quorum(class);
        let require_user = self.require_user(class);
        let mut approvers = Vec::new();
        let mut capacity: u64 = 0;
        let mut people: u64 = 0;
        for kind in self.active_approvers() {
            let (usable, votes) = match kind {
                ApproverKind::UserRequest if self.operators.is_empty() => (true, u64::MAX / 4),
                // The requester cannot approve, so does not count among them.
                ApproverKind::UserRequest => {
                    let others = self.operators.iter().filter(|o| !asked(o)).count();
                    (true, others as u64)
                }
                // Rules count only if one of them may approve this class.
                ApproverKind::RulesBased => (self.rules.iter().any(|r| class <= r.max_risk), 1),
                ApproverKind::LlmEvaluation => (llm_available, 1),
            };
            if usable {
                approvers.push(kind);
                capacity += votes;
                if kind == ApproverKind::UserRequest {
                    people = votes;
                }
            }
        }
        let names: Vec<&str> = approvers.iter().map(|k| k.as_str()).collect();
        if require_user && !approvers.contains(&ApproverKind::UserRequest) {
            return Err(InsufficientFactors {
                detail: format!(
                    "{class} calls need a person's approval, but user_request is not an active \
                     approver (active: {}); enable it in [approvals] allowed_approvers or drop \
                     {class} from require_user",
                    list_or_none(&names)
                ),
            });
        }
        if require_user && people == 0 {
            return Err(InsufficientFactors {
                detail: format!(
                    "{class} calls need a person's approval, but the only operators named in \
                     [approvals] operators asked for this call themselves; name another operator"
                ),
            });
        }
        if u64::from(min_approvals) > capacity {
            return Err(InsufficientFactors {
                detail: format!(
                    "{class} calls need {min_approvals} approvals but the active approvers ({}) \
                     can give only {capacity}; add approvers or operators in [approvals], or \
                     lower quorum.{class}",
                    list_or_none(&names)
                ),
            });
        }
        Ok(QuorumRule {
            min_approvals,
            require_user,
            approvers,
            operators: self.operators.clone(),
        })
    }

    /// How many distinct approvers a call of this risk class needs; always
    /// at least 1 (defaults: R0–R3 need 1, R4 needs 2).
    pub fn quorum(&self, class: RiskClass) -> u32 {
        self.quorum[class as usize]
    }

    /// Whether a call of this class needs a person among its approvers
    /// (defaults: R3 and R4).
    pub fn require_user(&self, class: RiskClass) -> bool {
        self.require_user[class as usize]
    }

    /// Allowed approver kinds minus disabled ones, in the order allowed.
    pub fn active_approvers(&self) -> impl Iterator<Item = ApproverKind> + '_ {
        self.allowed_approvers
            .iter()
            .copied()
            .filter(|k| !self.disabled_approvers.contains(k))
    }
}

impl Default for ApprovalSettings {
    fn default() -> Self {
        ApprovalSettings {
            pending_ttl: Duration::from_secs(300),
            approval_window: Duration::from_secs(600),
            relay: false,
            allowed_approvers: vec![ApproverKind::UserRequest, ApproverKind::RulesBased],
            disabled_approvers: Vec::new(),
            operators: Vec::new(),
            rules: Vec::new(),
            max_open: 1000,
            max_open_per_session: 20,
            max_open_per_agent: 100,
            allow_weak_r4: false,
            model: None,
            routing: Routing::default(),
            quorum: [1, 1, 1, 1, 2],
            require_user: [false, false, false, true, true],
        }
    }
}

/// Reads `[approvals]`, with errors pointing into `src`.
pub(super) fn parse_approvals(
    raw: Option<RawApprovals>,
    src: &str,
    origin: &str,
) -> Result<ApprovalSettings, PolicyError> {
    let mut out = ApprovalSettings::default();
    let Some(a) = raw else { return Ok(out) };
    let at = |offset: usize, kind: ErrorKind, msg: String| {
        PolicyError::at(origin, src, offset, kind, msg)
    };
    // One-time approvals are for minutes, not months: a cap keeps a typo
    // (`5d` for `5m`) from leaving calls approvable for ages.
    const MAX: Duration = Duration::from_secs(7 * 24 * 3600);
    let dur = |d: &Spanned<String>, key: &str| {
        let v = parse_duration(d.get_ref())
            .map_err(|m| at(d.span().start, ErrorKind::Value, format!("{key} {m}")))?;
        if v > MAX {
            return Err(at(
                d.span().start,
                ErrorKind::Value,
                format!(
                    "{key} = {:?} is longer than 7 days — use minutes or hours",
                    d.get_ref()
                ),
            ));
        }
        Ok(v)
    };
    if let Some(d) = &a.pending_ttl {
        out.pending_ttl = dur(d, "pending_ttl")?;
    }
    if let Some(d) = &a.approval_window {
        out.approval_window = dur(d, "approval_window")?;
    }
    if let Some(r) = a.relay {
        out.relay = r;
    }
    let open_cap = |m: &Spanned<i64>, key: &str| {
        let n = *m.get_ref();
        u32::try_from(n)
            .ok()
            .filter(|n| (1..=1_000_000).contains(n))
            .ok_or_else(|| {
                at(
                    m.span().start,
                    ErrorKind::Value,
                    format!("{key} = {n} is out of range — use 1 to 1000000"),
                )
            })
    };
    if let Some(m) = &a.max_open {
        out.max_open = open_cap(m, "max_open")?;
    }
    if let Some(m) = &a.max_open_per_session {
        out.max_open_per_session = open_cap(m, "max_open_per_session")?;
    }
    if let Some(m) = &a.max_open_per_agent {
        out.max_open_per_agent = open_cap(m, "max_open_per_agent")?;
    }
    if let Some(w) = a.allow_weak_r4 {
        out.allow_weak_r4 = w;
    }
    if let Some(q) = a.quorum {
        if let Some(r4) = &q.r4
            && *r4.get_ref() < 2
            && *r4.get_ref() >= 1
            && !out.allow_weak_r4
        {
            return Err(at(
                r4.span().start,
                ErrorKind::Value,
                format!(
                    "quorum R4 = {} is refused: R4 calls (force pushes, production deletes, \
                     infrastructure teardown) need two people. Keep R4 = 2 or more; only if one \
                     person really must be enough here, add `allow_weak_r4 = true` to \
                     [approvals] (dangerous: one person, or one stolen operator token, then runs \
                     them)",
                    r4.get_ref()
                ),
            ));
        }
        for (i, v) in [q.r0, q.r1, q.r2, q.r3, q.r4].into_iter().enumerate() {
            let Some(v) = v else { continue };
            let n = *v.get_ref();
            out.quorum[i] = u32::try_from(n)
                .ok()
                .filter(|n| (1..=100).contains(n))
                .ok_or_else(|| {
                    at(
                        v.span().start,
                        ErrorKind::Value,
                        format!(
                            "quorum R{i} = {n} is out of range — each risk class needs from 1 \
                             to 100 approvals"
                        ),
                    )
                })?;
        }
    }
    if let Some(list) = &a.require_user {
        out.require_user = [false; 5];
        for c in list {
            let class = risk_class(c, &at)?;
            out.require_user[class as usize] = true;
        }
    }
    if let Some(list) = &a.allowed_approvers {
        out.allowed_approvers = approver_kinds(list, &at)?;
    }
    if let Some(list) = &a.disabled_approvers {
        out.disabled_approvers = approver_kinds(list, &at)?;
    }
    for name in &a.operators {
        let n = name.get_ref().trim();
        if n.is_empty() || n.chars().any(char::is_control) {
            return Err(at(
                name.span().start,
                ErrorKind::Value,
                "operators entries are approver names such as \"alice\"; this one is empty"
                    .to_string(),
            ));
        }
        if !out.operators.iter().any(|o| o == n) {
            out.operators.push(n.to_string());
        }
    }
    if let Some(m) = &a.model {
        let start = m.span().start;
        let mut client = m.get_ref().clone();
        let max_auto_approve = match client.remove("max_auto_approve") {
            None => RiskClass::R2,
            Some(toml::Value::String(c)) => match RiskClass::parse(&c) {
                Some(RiskClass::R4) => {
                    return Err(at(
                        start,
                        ErrorKind::Value,
                        "[approvals.model] max_auto_approve = \"R4\" is refused: R4 calls always need people; use R3 at most".to_string(),
                    ));
                }
                Some(class) => class,
                None => {
                    return Err(at(
                        start,
                        ErrorKind::Value,
                        format!(
                            "[approvals.model] max_auto_approve = {c:?} is not a risk class — use R0, R1, R2 or R3"
                        ),
                    ));
                }
            },
            Some(other) => {
                return Err(at(
                    start,
                    ErrorKind::Value,
                    format!(
                        "[approvals.model] max_auto_approve must be a risk class such as \"R2\", not {other}"
                    ),
                ));
            }
        };
        for key in ["base_url", "model"] {
            if !client.get(key).is_some_and(toml::Value::is_str) {
                return Err(at(
                    start,
                    ErrorKind::Value,
                    format!(
                        "[approvals.model] needs {key} = \"…\" (the OpenAI-compatible endpoint's base URL, e.g. http://127.0.0.1:8080/v1, and the model's name)"
                    ),
                ));
            }
        }
        out.model = Some(ModelStage {
            client,
            max_auto_approve,
            line: line_col(src, start).0,
        });
    }
    if let Some(r) = &a.routing {
        let start = r.span().start;
        out.routing = parse_routing(r.get_ref(), &|kind, msg| at(start, kind, msg))?;
    }
    for r in &a.rule {
        let span = r.span().start;
        let r = r.get_ref();
        let name = r
            .name
            .clone()
            .unwrap_or_else(|| format!("rule at line {}", line_col(src, span).0));
        if r.approve.is_empty() {
            return Err(at(
                span,
                ErrorKind::Value,
                format!(
                    "[[approvals.rule]] {name:?} approves nothing — add approve = [\"Tool(spec)\"]"
                ),
            ));
        }
        let approve = r
            .approve
            .iter()
            .map(|s| {
                let (line, col) = line_col(src, s.span().start);
                Rule::parse(s.get_ref())
                    .map(|rule| rule.with_location(line, col))
                    .map_err(|e| at(s.span().start, ErrorKind::Rule, e.message().to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let max_risk = match &r.max_risk {
            Some(c) => risk_class(c, &at)?,
            None => RiskClass::R3,
        };
        if let Some(c) = &r.max_risk
            && max_risk == RiskClass::R4
            && !out.allow_weak_r4
        {
            return Err(at(
                c.span().start,
                ErrorKind::Value,
                format!(
                    "[[approvals.rule]] {name:?} has max_risk = \"R4\", which is refused: a rule \
                     must never stand in for a person on R4 calls (force pushes, production \
                     deletes, infrastructure teardown). Use max_risk = \"R3\"; only if you \
                     accept that risk, add `allow_weak_r4 = true` to [approvals] (dangerous: \
                     anyone who can shape a call to match the rule then needs one person less)"
                ),
            ));
        }
        out.rules.push(ApprovalRule {
            name,
            approve,
            requester_roles: r.requester_roles.clone(),
            max_risk,
        });
    }
    Ok(out)
}

fn risk_class(
    c: &Spanned<String>,
    at: &impl Fn(usize, ErrorKind, String) -> PolicyError,
) -> Result<RiskClass, PolicyError> {
    RiskClass::parse(c.get_ref()).ok_or_else(|| {
        at(
            c.span().start,
            ErrorKind::Value,
            format!(
                "{:?} is not a risk class — use R0, R1, R2, R3 or R4",
                c.get_ref()
            ),
        )
    })
}

fn approver_kinds(
    list: &[Spanned<String>],
    at: &impl Fn(usize, ErrorKind, String) -> PolicyError,
) -> Result<Vec<ApproverKind>, PolicyError> {
    let mut kinds = Vec::new();
    for s in list {
        let kind = ApproverKind::parse(s.get_ref()).ok_or_else(|| {
            at(
                s.span().start,
                ErrorKind::Value,
                format!(
                    "{:?} is not an approver — use user_request, rules_based or llm_evaluation",
                    s.get_ref()
                ),
            )
        })?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Ok(kinds)
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use crate::model::RiskClass;
    use crate::policy::{Policy, PolicyError};

    fn parse(src: &str) -> Result<Policy, PolicyError> {
        Policy::from_toml_str(src, "p.toml")
    }

    const RULE_R4: &str = "[[approvals.rule]]\nname = \"deploys\"\napprove = [\"exec(make deploy)\"]\nmax_risk = \"R4\"\n";

    #[test]
    fn a_weak_r4_is_refused_without_the_explicit_opt_in() {
        let e = parse("[approvals]\nquorum = { R4 = 1 }\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 17), "{e}");
        assert!(e.message.contains("R4 = 1 is refused"), "{e}");
        assert!(e.message.contains("allow_weak_r4 = true"), "{e}");
        let e = parse(RULE_R4).unwrap_err();
        assert_eq!((e.line, e.col), (4, 12), "{e}");
        assert!(e.message.contains("\"deploys\""), "{e}");
        assert!(e.message.contains("allow_weak_r4 = true"), "{e}");
        // Two or more, and rules up to R3, need no opt-in.
        let p = parse("[approvals]\nquorum = { R2 = 1, R3 = 1, R4 = 3 }\n").unwrap();
        assert_eq!(p.approvals().quorum(RiskClass::R4), 3);
        assert!(!p.approvals().allow_weak_r4);
        parse("[[approvals.rule]]\napprove = [\"exec(make)\"]\nmax_risk = \"R3\"\n").unwrap();
        parse("[[approvals.rule]]\napprove = [\"exec(make)\"]\n").unwrap();
        // The opt-in accepts both, wherever it is written in the table.
        let p = parse(&format!(
            "[approvals]\nquorum = {{ R4 = 1 }}\nallow_weak_r4 = true\n{RULE_R4}"
        ))
        .unwrap();
        let a = p.approvals();
        assert!(a.allow_weak_r4);
        assert_eq!(a.quorum(RiskClass::R4), 1);
        assert_eq!(a.rules[0].max_risk, RiskClass::R4);
        // Saying false is the same as not saying it.
        assert!(parse("[approvals]\nallow_weak_r4 = false\nquorum = { R4 = 1 }\n").is_err());
    }

    #[test]
    fn the_shipped_policies_need_no_opt_in() {
        for (name, src) in [
            ("default", include_str!("../../../../policies/default.toml")),
            ("strict", include_str!("../../../../policies/strict.toml")),
            (
                "clinical",
                include_str!("../../../../policies/clinical.toml"),
            ),
        ] {
            let p = Policy::from_toml_str(src, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let a = p.approvals();
            assert!(!a.allow_weak_r4, "{name}");
            assert!(a.quorum(RiskClass::R4) >= 2, "{name}");
            assert!(a.rules.iter().all(|r| r.max_risk < RiskClass::R4), "{name}");
        }
    }

    #[test]
    fn fair_share_caps_have_defaults_and_bounds() {
        let a = crate::policy::ApprovalSettings::default();
        assert_eq!((a.max_open_per_session, a.max_open_per_agent), (20, 100));
        assert!(a.max_open_per_session < a.max_open_per_agent);
        assert!(a.max_open_per_agent < a.max_open);
        let p = parse("[approvals]\nmax_open_per_session = 3\nmax_open_per_agent = 7\n").unwrap();
        assert_eq!(
            (
                p.approvals().max_open_per_session,
                p.approvals().max_open_per_agent
            ),
            (3, 7)
        );
        let e = parse("[approvals]\nmax_open_per_session = 0\n").unwrap_err();
        assert!(
            e.message
                .contains("max_open_per_session = 0 is out of range"),
            "{e}"
        );
        let e = parse("[approvals]\nmax_open_per_agent = -1\n").unwrap_err();
        assert!(
            e.message
                .contains("max_open_per_agent = -1 is out of range"),
            "{e}"
        );
    }
}
