//! The `[knowledge]` policy section, validated: how strictly knowledge is
//! enforced, where SOPs live, which rules pick them, and the confidence a
//! memory needs for each kind of operation.

use super::context::{CallContext, ContextConfig};
use super::memory::Category;
use crate::model::RiskClass;
use regex::{Regex, RegexSet, RegexSetBuilder};
use std::fmt;
use std::time::Duration;

/// The enforcement levels (docs/knowledge.md, "Enforcement").
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
pub enum Enforcement {
    /// Any knowledge that applies must be acknowledged before the call runs.
    Strict,
    /// Knowledge is shown (the decision's `context`); the call is not held.
    Advisory,
    /// Knowledge in the blocking categories is enforced, the rest shown.
    Category,
    /// The layer does nothing.
    #[strum(to_string = "disabled", serialize = "off")]
    Disabled,
}

impl Enforcement {
    /// The lowercase name used in policy files.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses a level name, case-insensitively.
    pub fn parse(s: &str) -> Option<Enforcement> {
        s.trim().parse().ok()
    }
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How critical an operation is, from its risk class (it picks the
/// confidence threshold a memory must reach to be shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::VariantArray)]
#[strum(serialize_all = "lowercase")]
pub enum Criticality {
    /// R3 and R4: irreversible or high impact.
    Critical,
    /// R1 and R2: ordinary changes.
    Routine,
    /// R0: reads and exploration.
    Experimental,
}

impl Criticality {
    /// The criticality of a call of risk class `risk`.
    pub fn of(risk: RiskClass) -> Criticality {
        match risk {
            RiskClass::R3 | RiskClass::R4 => Criticality::Critical,
            RiskClass::R1 | RiskClass::R2 => Criticality::Routine,
            RiskClass::R0 => Criticality::Experimental,
        }
    }

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The confidence a memory needs to be shown, by criticality.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// For critical operations (default 0.8).
    pub critical: f64,
    /// For routine operations (default 0.5).
    pub routine: f64,
    /// For experimental operations (default 0.2).
    pub experimental: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            critical: 0.8,
            routine: 0.5,
            experimental: 0.2,
        }
    }
}

impl Thresholds {
    /// The minimum confidence for a call of risk class `risk`.
    pub fn for_risk(&self, risk: RiskClass) -> f64 {
        match Criticality::of(risk) {
            Criticality::Critical => self.critical,
            Criticality::Routine => self.routine,
            Criticality::Experimental => self.experimental,
        }
    }
}

/// One `[[knowledge.rule]]`: calls whose context matches `pattern` get the
/// SOP named `sop`.
#[derive(Debug, Clone)]
pub struct SopRule {
    /// The regex as written (matched case-insensitively, `^`/`$` per line).
    pub pattern: String,
    /// The SOP's name (its file is `<sop>.ai.sop` in an SOP directory).
    pub sop: String,
    /// Only for these tool kinds or names (empty: every tool).
    pub tools: Vec<String>,
    /// Where the rule is written (line, column), for messages.
    pub location: (usize, usize),
}

/// Why an SOP applies to a call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SopReason {
    /// A `[[knowledge.rule]]` matched (its index and pattern).
    Rule(usize, String),
    /// The call is in this project (`/Projects/{name}`).
    Project(String),
    /// The call touches this service.
    Service(String),
}

impl fmt::Display for SopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SopReason::Rule(i, p) => write!(f, "rule {} /{p}/", i + 1),
            SopReason::Project(p) => write!(f, "project {p}"),
            SopReason::Service(s) => write!(f, "service {s}"),
        }
    }
}

/// An SOP the call needs, by name, and why. For a project, `project_dir`
/// is the project's directory: its own `*.ai.sop` files apply too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SopWanted {
    /// The SOP's name.
    pub name: String,
    /// Why it applies.
    pub reason: SopReason,
    /// For a project: its directory (absolute).
    pub project_dir: Option<String>,
    /// False when `name` cannot name a file (a project called `my app`):
    /// only the project directory's own SOPs apply then.
    pub named: bool,
}

/// The validated `[knowledge]` section.
#[derive(Debug, Clone)]
pub struct KnowledgeSettings {
    /// How strictly knowledge is enforced (default strict: consulting
    /// knowledge is mandatory).
    pub enforcement: Enforcement,
    /// Under `category` enforcement, knowledge in these categories must be
    /// acknowledged (default process and security; SOPs count as process).
    pub block_categories: Vec<Category>,
    /// How long an acknowledgement holds, and how long a retry of a call
    /// that showed knowledge counts as acknowledging it (default 5 min).
    pub cooldown: Duration,
    /// When a knowledge source fails, let the call through without it
    /// (default true: knowledge advises, and a broken source must not stop
    /// all work); false blocks instead.
    pub fail_open: bool,
    /// Show SOP credentials sections and credentials memories to the agent
    /// (default false: it is told they exist and to ask a person).
    pub show_credentials: bool,
    /// Directories holding `*.ai.sop` files (`~` is home). Default
    /// `~/.config/toolgate/sop`.
    pub sop_dirs: Vec<String>,
    /// Read a project's own `*.ai.sop` files (top level of its directory).
    /// Off by default: anything in a project (a cloned repository, a file
    /// the agent wrote) would be shown with toolgate's authority.
    pub project_sops: bool,
    /// Memory confidence needed per criticality.
    pub thresholds: Thresholds,
    /// Memory categories consulted (default all).
    pub memory_categories: Vec<Category>,
    /// At most this many memories are shown per call (default 5).
    pub max_memories: usize,
    /// Project roots and service words for context extraction.
    pub context: ContextConfig,
    rules: Vec<SopRule>,
    set: Option<RegexSet>,
}

impl Default for KnowledgeSettings {
    fn default() -> Self {
        KnowledgeSettings {
            enforcement: Enforcement::Strict,
            block_categories: vec![Category::Process, Category::Security],
            cooldown: Duration::from_secs(300),
            fail_open: true,
            show_credentials: false,
            sop_dirs: vec!["~/.config/toolgate/sop".to_string()],
            project_sops: false,
            thresholds: Thresholds::default(),
            memory_categories: Category::ALL.to_vec(),
            max_memories: 5,
            context: ContextConfig::default(),
            rules: Vec::new(),
            set: None,
        }
    }
}

/// The longest a rule's pattern may be, and how many rules there may be.
pub const MAX_RULE_PATTERN: usize = 1024;
/// At most this many `[[knowledge.rule]]` entries (they compile into one
/// automaton; a short-lived process compiles it on every start).
pub const MAX_RULES: usize = 1000;

impl KnowledgeSettings {
    /// Sets the rules, compiling their patterns into one set. Each pattern
    /// is matched case-insensitively with `^`/`$` at line ends. The error
    /// names the first rule (by index) that does not compile and why, or
    /// `usize::MAX` when each compiles but together they are too big.
    pub fn set_rules(&mut self, rules: Vec<SopRule>) -> Result<(), (usize, String)> {
        for (i, r) in rules.iter().enumerate() {
            if let Err(e) = Regex::new(&wrap(&r.pattern)) {
                return Err((i, e.to_string()));
            }
        }
        let set = if rules.is_empty() {
            None
        } else {
            // A lazy DFA cache big enough for hundreds of patterns: the
            // default makes it give up and fall back to a slower engine.
            Some(
                RegexSetBuilder::new(rules.iter().map(|r| wrap(&r.pattern)))
                    .dfa_size_limit(16 << 20)
                    .build()
                    .map_err(|e| (usize::MAX, e.to_string()))?,
            )
        };
        self.rules = rules;
        self.set = set;
        Ok(())
    }

    /// The rules, in the order written.
    pub fn rules(&self) -> &[SopRule] {
        &self.rules
    }

    /// True when the layer does anything.
    pub fn enabled(&self) -> bool {
        self.enforcement != Enforcement::Disabled
    }

    /// The SOPs a call needs: rules whose pattern matches its context (and
    /// whose tool filter admits it), then its projects, then its services;
    /// each name once (the first reason wins).
    pub fn sops_for(&self, ctx: &CallContext) -> Vec<SopWanted> {
        let mut out: Vec<SopWanted> = Vec::new();
        let mut add = |name: &str, reason: SopReason, project_dir: Option<String>| {
            let named = super::sop::valid_sop_name(name);
            if !named && project_dir.is_none() {
                return;
            }
            match out.iter_mut().find(|w| w.name == name) {
                Some(w) if w.project_dir.is_none() => w.project_dir = project_dir,
                Some(_) => {}
                None => out.push(SopWanted {
                    name: name.to_string(),
                    reason,
                    project_dir,
                    named,
                }),
            }
        };
        if let Some(set) = &self.set {
            let hay = haystack(ctx);
            for i in set.matches(&hay).iter() {
                let r = &self.rules[i];
                let admitted = r.tools.is_empty()
                    || r.tools
                        .iter()
                        .any(|t| t.eq_ignore_ascii_case(&ctx.tool) || t == &ctx.kind);
                if admitted {
                    add(&r.sop, SopReason::Rule(i, r.pattern.clone()), None);
                }
            }
        }
        for (name, dir) in &ctx.project_dirs {
            add(name, SopReason::Project(name.clone()), Some(dir.clone()));
        }
        for s in &ctx.services {
            add(s, SopReason::Service(s.clone()), None);
        }
        out
    }
}

fn wrap(pattern: &str) -> String {
    format!("(?im:{pattern})")
}

/// The text rule patterns are matched against: one line per fact — the
/// tool and its kind, each command, program, host, IP address, path, the
/// working directory, each project and service.
pub fn haystack(ctx: &CallContext) -> String {
    let mut lines: Vec<&str> = vec![&ctx.tool, &ctx.kind];
    lines.extend(ctx.command_texts.iter().map(String::as_str));
    lines.extend(ctx.commands.iter().map(String::as_str));
    for set in [
        &ctx.programs,
        &ctx.hosts,
        &ctx.ips,
        &ctx.paths,
        &ctx.projects,
        &ctx.services,
    ] {
        lines.extend(set.iter().map(String::as_str));
    }
    lines.push(&ctx.cwd);
    lines.join("\n")
}

/// Programs that say nothing about what a command does: a memory that
/// mentions `echo` is not about every command that echoes.
const PLAIN_PROGRAMS: &[&str] = &[
    "cd", "echo", "printf", "true", "false", "test", "[", "[[", ":", "export", "set", "unset",
    "exit", "return", "local", "sleep", "pwd", "read", "shift", "wait",
];

/// At most this many search terms per call.
pub const MAX_TERMS: usize = 32;

/// The words a memory search looks for: services, projects, hosts, IP
/// addresses, the programs that run (minus shell plumbing), file names
/// with an extension, and an MCP server's name. Lowercase, each once,
/// at most [`MAX_TERMS`].
pub fn memory_terms(ctx: &CallContext) -> Vec<String> {
    // Each kind of word gets its own share, so a call naming forty hosts
    // cannot push the program it runs (or the one host that matters) out.
    const SHARE: usize = 6;
    let mut out: Vec<String> = Vec::new();
    let mut group = |words: &mut dyn Iterator<Item = String>| {
        let mut taken = 0;
        for w in words {
            if taken == SHARE || out.len() == MAX_TERMS {
                break;
            }
            let t = w.trim().to_lowercase();
            if t.chars().any(char::is_alphanumeric) && t.len() <= 128 && !out.contains(&t) {
                out.push(t);
                taken += 1;
            }
        }
    };
    group(&mut ctx.services.iter().cloned());
    group(&mut ctx.projects.iter().cloned());
    group(
        &mut ctx
            .programs
            .iter()
            .filter(|p| !PLAIN_PROGRAMS.contains(&p.as_str()))
            .cloned()
            .chain(
                ctx.tool
                    .strip_prefix("mcp__")
                    .and_then(|r| r.split("__").next())
                    .map(str::to_string),
            ),
    );
    // The host's own name (`grafana` of grafana.internal) too: that is how
    // people write about it.
    group(&mut ctx.hosts.iter().flat_map(|h| {
        let first = h
            .split_once('.')
            .map(|(f, _)| f)
            .filter(|f| f.len() >= 3 && f.chars().any(|c| c.is_ascii_alphabetic()))
            .map(str::to_string);
        std::iter::once(h.clone()).chain(first)
    }));
    group(&mut ctx.ips.iter().cloned());
    group(&mut ctx.paths.iter().filter_map(|p| {
        let base = p.rsplit('/').next().unwrap_or("");
        (base.len() >= 4 && base.contains('.') && !base.starts_with('.')).then(|| base.to_string())
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use crate::normalize::normalize;
    use crate::paths::Env;
    use serde_json::json;

    fn ctx(v: serde_json::Value) -> CallContext {
        let call: ToolCall = serde_json::from_value(v).unwrap();
        let env = Env::new("/home/dev", "/home/dev/Projects/shop");
        super::super::context::extract(&normalize(&call, &env), &env, &ContextConfig::default())
    }

    fn rule(p: &str, sop: &str, tools: &[&str]) -> SopRule {
        SopRule {
            pattern: p.into(),
            sop: sop.into(),
            tools: tools.iter().map(|t| t.to_string()).collect(),
            location: (1, 1),
        }
    }

    fn names(s: &KnowledgeSettings, c: &CallContext) -> Vec<String> {
        s.sops_for(c).into_iter().map(|w| w.name).collect()
    }

    #[test]
    fn seed_patterns_pick_their_sops() {
        let mut s = KnowledgeSettings::default();
        s.set_rules(vec![
            rule("comfyui|flux|8188", "comfyui", &[]),
            rule(r"ssh|\.163|\.179|\.141", "fleet", &[]),
            rule("docker|compose", "docker-deploy", &["exec"]),
            rule("^/etc/", "etc", &["write"]),
        ])
        .unwrap();
        let c = ctx(
            json!({"tool":"exec","params":{"command":"curl http://10.0.0.163:8188/prompt"}, "cwd": "/tmp"}),
        );
        assert_eq!(names(&s, &c), ["comfyui", "fleet"]);
        let c =
            ctx(json!({"tool":"Bash","params":{"command":"docker compose up -d"}, "cwd": "/tmp"}));
        assert_eq!(names(&s, &c), ["docker-deploy", "docker"]);
        let c = ctx(
            json!({"tool":"Write","params":{"file_path":"/etc/hosts","content":"docker"}, "cwd": "/tmp"}),
        );
        assert_eq!(
            names(&s, &c),
            ["etc"],
            "tool filter: docker rule is exec only"
        );
        let c = ctx(json!({"tool":"exec","params":{"command":"ls"}, "cwd": "/tmp"}));
        assert!(names(&s, &c).is_empty());
        let c = ctx(json!({"tool":"exec","params":{"command":"FLUX=1 make"}, "cwd": "/tmp"}));
        assert_eq!(names(&s, &c), ["comfyui"], "case-insensitive");
    }

    #[test]
    fn projects_and_services_need_no_rule() {
        let s = KnowledgeSettings::default();
        let c = ctx(json!({"tool":"exec","params":{"command":"kubectl apply -f k.yaml"}}));
        let w = s.sops_for(&c);
        assert_eq!(w[0].name, "shop");
        assert_eq!(w[0].project_dir.as_deref(), Some("/home/dev/Projects/shop"));
        assert_eq!(w[1].reason, SopReason::Service("kubernetes".into()));
    }

    #[test]
    fn bad_patterns_name_their_rule() {
        let mut s = KnowledgeSettings::default();
        let e = s
            .set_rules(vec![rule("ok", "a", &[]), rule("(unclosed", "b", &[])])
            .unwrap_err();
        assert_eq!(e.0, 1);
    }

    #[test]
    fn thresholds_follow_the_risk_class() {
        let t = Thresholds::default();
        assert_eq!(t.for_risk(RiskClass::R4), 0.8);
        assert_eq!(t.for_risk(RiskClass::R3), 0.8);
        assert_eq!(t.for_risk(RiskClass::R2), 0.5);
        assert_eq!(t.for_risk(RiskClass::R1), 0.5);
        assert_eq!(t.for_risk(RiskClass::R0), 0.2);
    }

    #[test]
    fn terms_skip_shell_plumbing() {
        let c = ctx(json!({"tool":"exec","params":{"command":
            "cd /srv && echo hi && pg_dump -h 10.0.0.5 billing > /tmp/billing.sql"}}));
        let t = memory_terms(&c);
        for want in ["postgres", "shop", "10.0.0.5", "pg_dump", "billing.sql"] {
            assert!(t.contains(&want.to_string()), "{want} in {t:?}");
        }
        assert!(!t.contains(&"cd".to_string()) && !t.contains(&"echo".to_string()));
        let c =
            ctx(json!({"tool":"exec","params":{"command":"curl https://grafana.example.com/x"}}));
        let t = memory_terms(&c);
        assert!(
            t.contains(&"grafana.example.com".to_string()) && t.contains(&"grafana".to_string())
        );
        let many: Vec<String> = (0..40).map(|i| format!("ping -c1 a{i:02}")).collect();
        let c = ctx(json!({"tool":"exec","params":{"command":
            format!("{} ; ssh zeta1 sudo reboot", many.join(" ; "))}}));
        let t = memory_terms(&c);
        assert!(
            t.contains(&"ssh".to_string()) && t.contains(&"reboot".to_string()),
            "{t:?}"
        );
        assert!(t.len() <= MAX_TERMS);
        let c = ctx(json!({"tool":"mcp__github__create_issue","params":{}}));
        assert!(memory_terms(&c).contains(&"github".to_string()));
    }
}
