//! The decision path (ARCHITECTURE.md, "Bird's-eye view"): normalize, then the policy layer, the
//! exec layer (shell analysis + catalogue), the risk layer (class and
//! clarity × stakes), and one decision. Pure: the caller hands in the
//! environment and measures time.

use crate::catalogue::{Catalogue, Finding};
use crate::model::{Decision, Layer, RiskClass, ToolCall, Verdict};
use crate::normalize::{Access, NormalizedCall, ToolKind, normalize_unwrapped, unwrap_bridges};
use crate::paths::Env;
use crate::policy::{Policy, Rule, RuleList};
use crate::posture::Posture;
use crate::protected::{self, Hit, Protected};
use crate::shell::{self, ShellAnalysis, SimpleCommand};
use crate::tool_effects::EffectKind;
use serde_json::Value;

use crate::meaning;
/// One layer's verdict on a call; defined beside the other decision types.
pub use crate::model::LayerVerdict;

/// The `rule` of the risk layer's verdict when the clarity × stakes score
/// alone escalated a call (at or above `[risk] escalation_threshold`): a
/// guess, not a finding, and the one kind of escalation the model stage is asked about.
pub(crate) const THRESHOLD_RULE: &str = "escalation_threshold";

/// A decision with everything that led to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    /// The decision to return (with `elapsed_us` 0: the caller measures).
    pub decision: Decision,
    /// Every layer's verdict, in evaluation order.
    pub verdicts: Vec<LayerVerdict>,
    /// The normalized call that was judged.
    pub call: NormalizedCall,
}

/// A failed `[[test]]` case of a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestFailure {
    /// `name` or `line:col` of the case.
    pub case: String,
    /// What was expected.
    pub expected: String,
    /// What the engine decided, and why.
    pub got: String,
}

/// The decision engine for one policy.
#[derive(Debug)]
pub struct Engine {
    policy: Policy,
    catalogue: &'static Catalogue,
    posture: Posture,
    protected: Protected,
}

/// Stakes per risk class, on a 1..10 scale (times clarity, also 1..10, is
/// the score).
fn stakes(class: RiskClass) -> u32 {
    match class {
        RiskClass::R0 => 1,
        RiskClass::R1 => 2,
        RiskClass::R2 => 4,
        RiskClass::R3 => 7,
        RiskClass::R4 => 10,
    }
}

/// How ambiguous a tool's effect is before looking at its params (1 = obvious).
fn base_clarity(kind: ToolKind) -> u32 {
    match kind {
        ToolKind::Read | ToolKind::Memory => 1,
        ToolKind::Fetch | ToolKind::Search | ToolKind::Process => 2,
        ToolKind::Exec | ToolKind::Write | ToolKind::Sessions => 3,
        ToolKind::Browser | ToolKind::Other => 4,
        ToolKind::Message | ToolKind::Automation | ToolKind::Plugins | ToolKind::Secrets => 5,
        ToolKind::Gateway | ToolKind::Nodes => 6,
    }
}

/// The strongest concern found so far.
#[derive(Debug, Clone)]
struct Concern {
    verdict: Verdict,
    class: RiskClass,
    layer: Layer,
    reason: String,
    rule: Option<String>,
    command: Option<String>,
}

impl Concern {
    fn key(&self) -> (Verdict, RiskClass) {
        (self.verdict, self.class)
    }
}

impl Engine {
    /// An engine deciding with `policy` and the built-in catalogue.
    pub fn new(policy: Policy) -> Engine {
        Engine {
            policy,
            catalogue: Catalogue::builtin(),
            posture: Posture {
                in_container: false,
                confidence: crate::posture::Confidence::None,
                runtime: None,
                signals: Vec::new(),
            },
            protected: Protected::new(),
        }
    }

    /// The same engine, also protecting `more`'s members (the policy's own
    /// files, data directories, the daemon's socket and port): added to
    /// those it protects already.
    pub fn with_protected(mut self, more: &Protected) -> Engine {
        self.protected = std::mem::take(&mut self.protected).merged(more);
        self
    }

    /// The protected set's dynamic members it was handed.
    pub fn protected(&self) -> &Protected {
        &self.protected
    }

    /// The same engine, told the sandbox posture it runs in (the scope
    /// profile's sandbox layer reports or requires it).
    pub fn with_posture(mut self, posture: Posture) -> Engine {
        self.posture = posture;
        self
    }

    /// The sandbox posture it was told.
    pub fn posture(&self) -> &Posture {
        &self.posture
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The environment a call runs in: the call's `cwd` (or `base.cwd`), and
    /// the workspace the policy names (or that directory).
    pub fn env_for(&self, call: &ToolCall, base: &Env) -> Env {
        let cwd = call
            .cwd
            .as_deref()
            .map(|c| base.resolve(c))
            .unwrap_or_else(|| base.cwd.clone());
        let workspace = match self.policy.workspace() {
            Some(w) => base.resolve(w),
            None if call.cwd.is_some() => cwd.clone(),
            None => base.workspace.clone(),
        };
        let env = Env {
            cwd,
            workspace,
            ..base.clone()
        };
        // The agent's own home, when the hook sent it, is where `~` points.
        match call.home.as_deref().map(str::trim) {
            Some(h) if h.starts_with('/') => env.with_home(h),
            _ => env,
        }
    }

    /// Decides one call. A bridge (`tool_call` and its kin) is judged as
    /// every call it may stand for, and the strictest answer stands.
    pub fn decide(&self, call: &ToolCall, base: &Env) -> Assessment {
        self.decide_lifting(call, base, &[])
    }

    /// [`Engine::decide`] with `lifted` layers not consulted (an emergency
    /// bypass, [`crate::bypass`]): their verdicts are recorded but stop
    /// nothing, and the layers after them are consulted as if they had
    /// allowed — a scope profile's block no longer ends the walk before
    /// the catalogue has judged the command.
    pub fn decide_lifting(&self, call: &ToolCall, base: &Env, lifted: &[Layer]) -> Assessment {
        let u = unwrap_bridges(call);
        let mut best: Option<Assessment> = None;
        for inner in &u.calls {
            let a = self.decide_one(call, inner, u.bridged, u.unreadable.clone(), base, lifted);
            if best.as_ref().is_none_or(|b| strictness(&a) > strictness(b)) {
                best = Some(a);
            }
        }
        match best {
            Some(a) => a,
            None => self.decide_one(call, call, false, u.unreadable, base, lifted),
        }
    }

    fn decide_one(
        &self,
        call: &ToolCall,
        inner: &ToolCall,
        bridged: bool,
        unreadable: Option<String>,
        base: &Env,
        lifted: &[Layer],
    ) -> Assessment {
        let env = self.env_for(call, base);
        let n = normalize_unwrapped(call, inner, bridged, unreadable, &env);
        let env = env.with_cwd(&n.cwd);
        let mut verdicts: Vec<LayerVerdict> = Vec::new();

        // The scope profile's layers come first (docs/profiles.md): a block there
        // ends the walk; a manual action class is one more concern.
        let mut profile_concern: Option<Concern> = None;
        if self.policy.profile().is_none()
            && let Some(path) = self.policy.profile_path()
        {
            // Named but never read: fail closed rather than run unscoped.
            let reason = format!("the scope profile {path} named by the policy was not loaded");
            verdicts.push(LayerVerdict {
                layer: Layer::Scope,
                verdict: Verdict::Block,
                class: RiskClass::R4,
                reason: reason.clone(),
                rule: Some("profile".to_string()),
                command: None,
            });
            return self.finish(
                n,
                verdicts,
                Some(Verdict::Block),
                RiskClass::R4,
                100,
                Layer::Scope,
                reason,
            );
        }
        if let Some(profile) = self.policy.profile() {
            let j =
                profile.judge_lifting(&n, &env, &self.posture, lifted.contains(&Layer::Posture));
            verdicts.extend(j.verdicts);
            match j.stop {
                Some((Verdict::Block, layer, reason, _)) => {
                    return self.finish(
                        n,
                        verdicts,
                        Some(Verdict::Block),
                        RiskClass::R4,
                        100,
                        layer,
                        reason,
                    );
                }
                Some((verdict, layer, reason, rule)) => {
                    profile_concern = Some(Concern {
                        verdict,
                        class: RiskClass::R3,
                        layer,
                        reason,
                        rule: Some(rule.to_string()),
                        command: None,
                    });
                }
                None => {}
            }
        }

        // The protected set, for every analyzer alike (`crate::protected`).
        let guarded = self.judge_protected(&n, &env);
        let gate_blocked = guarded.iter().any(|c| c.verdict == Verdict::Block);

        // never_block cannot lift what the scope profile holds for a person,
        // nor the gate's own protection.
        let never_block =
            self.policy.never_block(&n.tool) || (n.bridged && self.policy.never_block(&call.tool));
        if never_block && profile_concern.is_none() && !gate_blocked {
            let reason = format!("{} is on the never_block list", n.tool);
            verdicts.push(LayerVerdict {
                layer: Layer::Policy,
                verdict: Verdict::Allow,
                class: RiskClass::R0,
                reason: reason.clone(),
                rule: None,
                command: None,
            });
            return self.finish(n, verdicts, None, RiskClass::R0, 1, Layer::Policy, reason);
        }

        let (concerns, class, clarity) = if n.kind == ToolKind::Exec {
            self.judge_exec(&n, &env)
        } else if n.command.is_some() {
            // A tool that is not a shell but carries a command: judged as
            // itself (its name, paths and URLs) and as that command, the
            // stricter answer winning. Its name cannot make a command
            // harmless, nor a command make its name rules vanish.
            let (mut concerns, class, clarity) = self.judge_tool(&n, &env);
            let (more, exec_class, exec_clarity) = self.judge_exec(&n, &env);
            concerns.extend(more);
            (concerns, class.max(exec_class), clarity.max(exec_clarity))
        } else {
            self.judge_tool(&n, &env)
        };

        // The gate's own protection comes first: of two equal findings, it
        // is the one that names the reason (what is protected, and why).
        let mut class = class;
        let mut concerns = {
            let mut all = guarded;
            for c in &all {
                class = class.max(c.class);
            }
            all.extend(concerns);
            all
        };
        if let Some(why) = &n.unreadable {
            // What cannot be read is never allowed.
            concerns.push(Concern {
                verdict: Verdict::Escalate,
                class: RiskClass::R3,
                layer: Layer::Policy,
                reason: format!("{why}, so it cannot be checked before it runs"),
                rule: None,
                command: None,
            });
            class = class.max(RiskClass::R3);
        }

        // The profile's own verdicts are already recorded above.
        let mut top: Option<Concern> = profile_concern;
        let class = class.max(top.as_ref().map_or(RiskClass::R0, |c| c.class));
        for c in &concerns {
            verdicts.push(LayerVerdict {
                layer: c.layer,
                verdict: c.verdict,
                class: c.class,
                reason: c.reason.clone(),
                rule: c.rule.clone(),
                command: c.command.clone(),
            });
            // A lifted layer's finding is recorded and decides nothing.
            if !is_lifted(c, lifted) && top.as_ref().is_none_or(|t| c.key() > t.key()) {
                top = Some(c.clone());
            }
        }
        let score = (clarity.clamp(1, 10) * stakes(class)).min(100);
        let mut decided = top.clone();
        if top.as_ref().is_none_or(|t| t.verdict == Verdict::Allow)
            && score >= self.policy.escalation_threshold()
            && !lifted.contains(&Layer::Risk)
        {
            let reason = format!(
                "risk score {score} (clarity {clarity} × stakes {}) reaches the escalation threshold {}",
                stakes(class),
                self.policy.escalation_threshold()
            );
            let c = Concern {
                verdict: Verdict::Escalate,
                class,
                layer: Layer::Risk,
                reason,
                rule: Some(THRESHOLD_RULE.to_string()),
                command: None,
            };
            verdicts.push(LayerVerdict {
                layer: Layer::Risk,
                verdict: c.verdict,
                class,
                reason: c.reason.clone(),
                rule: c.rule.clone(),
                command: c.command.clone(),
            });
            decided = Some(c);
        }
        match decided {
            Some(c) if c.verdict != Verdict::Allow => {
                let layer = c.layer;
                let reason = c.reason.clone();
                self.finish(n, verdicts, Some(c.verdict), class, score, layer, reason)
            }
            other => {
                // An allow names the layer that allowed it (an allow rule is
                // the policy layer); with nothing found, the risk layer.
                let (layer, reason) = other
                    .map(|c| (c.layer, c.reason))
                    .unwrap_or_else(|| (Layer::Risk, "nothing risky found".to_string()));
                self.finish(n, verdicts, None, class, score, layer, reason)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        call: NormalizedCall,
        verdicts: Vec<LayerVerdict>,
        verdict: Option<Verdict>,
        class: RiskClass,
        score: u32,
        layer: Layer,
        reason: String,
    ) -> Assessment {
        let verdict = verdict.unwrap_or(Verdict::Allow);
        let decision = Decision::new(verdict, class, score, layer, &reason);
        Assessment {
            decision,
            verdicts,
            call,
        }
    }

    /// Policy rules and catalogue findings for every command the call
    /// carries, in every working directory it names, plus the deny and ask
    /// rules naming the tool itself (`mcp__prod__*` covers a shell tool of
    /// that server too).
    fn judge_exec(&self, n: &NormalizedCall, env: &Env) -> (Vec<Concern>, RiskClass, u32) {
        let Some(first) = n.command.as_deref() else {
            let c = Concern {
                verdict: Verdict::Escalate,
                class: RiskClass::R3,
                layer: Layer::Exec,
                reason: format!("{} call has no command to check", n.tool),
                rule: None,
                command: None,
            };
            return (vec![c], RiskClass::R3, 10);
        };
        let mut concerns = Vec::new();
        if n.kind == ToolKind::Exec {
            concerns.extend(self.rule_concerns(&n.tool, |r| r.matches(n, env, false)));
        }
        let mut class = RiskClass::R0;
        let mut clarity = 1;
        let cwds = std::iter::once(env.cwd.clone()).chain(n.alt_cwds.iter().cloned());
        for cwd in cwds {
            let env = env.with_cwd(&cwd);
            for command in std::iter::once(first).chain(n.alt_commands.iter().map(String::as_str)) {
                let (more, c, k) = self.judge_shell(&n.analyses.get(command, &env), &env);
                // Text written into the agent's instructions that claims
                // standing approval is blocked by every analyzer alike.
                if let Some(j) = crate::tool_effects::instructions_written(
                    more.iter().filter_map(|c| c.rule.as_deref()),
                    command,
                ) {
                    class = class.max(j.class);
                    concerns.push(Concern {
                        verdict: j.verdict,
                        class: j.class,
                        layer: Layer::Exec,
                        reason: j.reason,
                        rule: Some(j.rule.to_string()),
                        command: Some(command.to_string()),
                    });
                }
                concerns.extend(more);
                class = class.max(c);
                clarity = clarity.max(k);
            }
        }
        (concerns, class, clarity)
    }

    /// Policy rules and catalogue findings for one shell command.
    fn judge_shell(&self, analysis: &ShellAnalysis, env: &Env) -> (Vec<Concern>, RiskClass, u32) {
        let mut concerns = Vec::new();
        let mut class = RiskClass::R0;
        // Several commands at the top level (`ls && rm …`): say which one.
        let compound = analysis
            .commands
            .iter()
            .filter(|c| c.via.is_empty())
            .count()
            > 1;

        let mut exfil = crate::exfil::Exfil::default();
        for cmd in &analysis.commands {
            let shown = describe(cmd, compound);
            let mut cmd_concern: Option<Concern> = None;
            let mut raise = |c: Concern| {
                if cmd_concern.as_ref().is_none_or(|t| c.key() > t.key()) {
                    cmd_concern = Some(c);
                }
            };
            for c in self.rule_concerns(&shown, |r| r.matches_exec_broad(cmd, env)) {
                raise(c);
            }
            let findings =
                self.catalogue
                    .match_command(cmd, env, &self.policy.git().protected_branches);
            exfil.note(cmd, &findings);
            let worst: Option<&Finding> = findings.first();
            let cmd_class = worst.map(|f| f.class).unwrap_or(if cmd.wrapper {
                RiskClass::R0
            } else {
                RiskClass::R1
            });
            class = class.max(cmd_class);
            if let Some(f) = worst {
                raise(self.finding_concern(&shown, f, Layer::Exec, |r| r.matches_exec_strict(cmd)));
            }
            if let Some(mut c) = cmd_concern {
                c.command = Some(cmd.display());
                concerns.push(c);
            }
        }
        if let Some(reason) = exfil.verdict() {
            concerns.push(Concern {
                verdict: Verdict::Block,
                class: RiskClass::R4,
                layer: Layer::Exec,
                reason,
                rule: Some(crate::exfil::RULE.to_string()),
                command: None,
            });
            class = RiskClass::R4;
        }
        for o in &analysis.opaque {
            concerns.push(Concern {
                verdict: Verdict::Escalate,
                class: RiskClass::R3,
                layer: Layer::Exec,
                reason: format!(
                    "{} (`{}`), so it cannot be checked before it runs",
                    o.reason, o.snippet
                ),
                rule: None,
                command: Some(o.snippet.clone()),
            });
            class = class.max(RiskClass::R3);
        }
        if analysis.commands.is_empty() && analysis.opaque.is_empty() {
            return (concerns, RiskClass::R0, 1);
        }
        (concerns, class, exec_clarity(analysis))
    }

    /// Policy rules and catalogue findings for a non-shell tool.
    fn judge_tool(&self, n: &NormalizedCall, env: &Env) -> (Vec<Concern>, RiskClass, u32) {
        let mut concerns = Vec::new();
        let name = &n.tool;
        concerns.extend(self.rule_concerns(name, |r| r.matches(n, env, false)));
        let mut findings: Vec<Finding> = Vec::new();
        for p in &n.paths {
            if let Some(f) = self.catalogue.match_path(p.access, &p.path, env) {
                findings.push(f);
            }
        }
        for u in &n.urls {
            if let Some(f) = self.catalogue.match_url(u) {
                findings.push(f);
            }
        }
        // What the tool does, by the server catalogue or its name and
        // arguments (`crate::tool_effects`), for every MCP or unfamiliar
        // tool and every message a tool sends.
        let effects = crate::tool_effects::judge_call(
            n,
            self.policy.organization(),
            &self.policy.git().protected_branches,
        );
        let understood = effects.effect.as_ref().map(|e| e.kind);
        // A message judged by its recipients replaces the blanket "sends a
        // message" rule; any other action of a message tool keeps it.
        let sends_judged = n.kind == ToolKind::Message && understood.is_some();
        if !sends_judged && let Some(f) = self.catalogue.match_action(n.kind, n.action.as_deref()) {
            findings.push(f);
        }
        let default_class = match n.kind {
            ToolKind::Read | ToolKind::Memory => RiskClass::R0,
            ToolKind::Write if n.paths.iter().all(|p| p.access != Access::Delete) => RiskClass::R1,
            ToolKind::Write => RiskClass::R2,
            _ => RiskClass::R2,
        };
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity()));
        let class = findings
            .first()
            .map(|f| f.class)
            .unwrap_or(default_class)
            .max(default_class);
        // The catalogue's findings, for any tool, are the exec layer's (what
        // a call does), which no bypass lifts; the risk layer only guesses.
        if let Some(f) = findings.first() {
            concerns.push(self.finding_concern(name, f, Layer::Exec, |r| r.matches(n, env, true)));
        }
        let mut planted = RiskClass::R0;
        if n.kind == ToolKind::Write
            && let Some(p) = n
                .paths
                .iter()
                .find(|p| p.path.rsplit('/').next() == Some("package.json"))
            && meaning::plants_lifecycle_script(&crate::normalize::param_strings(&n.params, true))
        {
            concerns.push(Concern {
                verdict: Verdict::Escalate,
                class: RiskClass::R3,
                layer: Layer::Exec,
                reason: format!(
                    "{name} writes a package lifecycle script into {}, code that runs on the next install",
                    p.path
                ),
                rule: Some("supply.lifecycle-script-file".to_string()),
                command: None,
            });
            planted = RiskClass::R3;
        }
        let (meant, meant_class) = self.judge_meaning(n, env, understood);
        concerns.extend(meant);
        concerns.extend(effects.found.into_iter().map(|j| Concern {
            verdict: j.verdict,
            class: j.class,
            layer: Layer::Exec,
            reason: j.reason,
            rule: Some(j.rule.to_string()),
            command: None,
        }));
        let class = class.max(meant_class).max(planted).max(effects.class);
        // A tool read as posting, sending, paying or running a query (its
        // text judged as such) writes no file: "names no path" is for every
        // other tool its name calls a writer (`patch_file` with its path
        // under a key toolgate does not know).
        let no_path = n.kind == ToolKind::Write
            && n.paths.is_empty()
            && !understood.is_some_and(|k| {
                matches!(
                    k,
                    EffectKind::Post
                        | EffectKind::Send
                        | EffectKind::Publish
                        | EffectKind::Grant
                        | EffectKind::Pay
                        | EffectKind::Remember
                        | EffectKind::Run
                )
            });
        if no_path {
            concerns.push(Concern {
                verdict: Verdict::Escalate,
                class: RiskClass::R3,
                layer: Layer::Exec,
                reason: format!("{name} writes a file but names no path toolgate can check"),
                rule: None,
                command: None,
            });
        }
        let mut clarity = base_clarity(n.kind);
        if n.bridged {
            clarity += 1;
        }
        (
            concerns,
            class.max(if no_path {
                RiskClass::R3
            } else {
                RiskClass::R0
            }),
            clarity,
        )
    }

    /// An MCP or unfamiliar tool read by what its arguments and name mean
    /// (`crate::meaning`): SQL in any argument, a shell command under any
    /// key that is not free text, a name that says it destroys. A file tool
    /// naming its paths is judged by them (a migration's `DROP TABLE` in a
    /// file's content is not run), a message's text is not executed.
    fn judge_meaning(
        &self,
        n: &NormalizedCall,
        env: &Env,
        understood: Option<EffectKind>,
    ) -> (Vec<Concern>, RiskClass) {
        let mut out = Vec::new();
        let unfamiliar = n.mcp.is_some() || n.kind == ToolKind::Other;
        let sends_text = matches!(
            n.kind,
            ToolKind::Message | ToolKind::Search | ToolKind::Fetch | ToolKind::Browser
        );
        let concern = |class: RiskClass, reason: String, rule: &str| Concern {
            verdict: Verdict::Escalate,
            class,
            layer: Layer::Exec,
            reason,
            rule: Some(rule.to_string()),
            command: None,
        };
        // A changing HTTP method to another machine, through any tool that
        // fetches (`{"url": …, "method": "DELETE"}`).
        if (unfamiliar || n.kind == ToolKind::Fetch)
            && let Some(method) = meaning::changing_method(&n.params)
            && let Some(url) = n
                .urls
                .iter()
                .find(|u| crate::catalogue::remote::reaches_another_machine(u, false))
        {
            let reason = format!(
                "{} sends an HTTP {method} to {url}, changing a remote resource",
                n.tool
            );
            out.push(concern(RiskClass::R3, reason, "meaning.http-method"));
        }
        if !unfamiliar || sends_text {
            let class = out.iter().map(|c| c.class).max().unwrap_or(RiskClass::R0);
            return (out, class);
        }
        let words = crate::normalize::name_words(
            n.mcp.as_ref().map_or(n.tool.as_str(), |(_, t)| t.as_str()),
        );
        if let Some((branch, forced)) = meaning::changes_protected_branch(
            &words,
            &n.params,
            &self.policy.git().protected_branches,
        ) {
            let (class, how) = if forced {
                (RiskClass::R4, "force-updates")
            } else {
                (RiskClass::R3, "changes")
            };
            let reason = format!(
                "{} {how} the shared branch `{branch}` of a repository",
                n.tool
            );
            out.push(concern(class, reason, "meaning.protected-branch"));
        }
        // A ticket, a message or a read that mentions production does not
        // change it.
        let may_change_systems = understood.is_none_or(|k| {
            matches!(
                k,
                EffectKind::Infra
                    | EffectKind::Delete
                    | EffectKind::Run
                    | EffectKind::Grant
                    | EffectKind::Write
            )
        });
        if n.kind != ToolKind::Read
            && may_change_systems
            && meaning::changes_production(&words, &n.params)
        {
            let reason = format!("{} changes a production-looking target", n.tool);
            out.push(concern(RiskClass::R3, reason, "meaning.production"));
        }
        if n.kind != ToolKind::Read
            && words.iter().any(|w| w == "merge")
            && !words
                .iter()
                .any(|w| matches!(w.as_str(), "create" | "open" | "update" | "list" | "get"))
        {
            let reason = format!("{} merges on the remote", n.tool);
            out.push(concern(RiskClass::R3, reason, "meaning.merge"));
        }
        // A tool naming paths is judged by them, except for SQL it carries
        // (`/* note */ DROP …` reads as a path too).
        let named_paths = !n.paths.is_empty();
        let tool_name = n.mcp.as_ref().map_or(n.tool.as_str(), |(_, t)| t.as_str());
        // A path a file tool names is judged as a path; one an unfamiliar
        // tool names (`delete_secret {path: "secret/prod/db"}`) may be
        // anything, and the tool's verb still counts.
        // A delete the effect reading judged is judged there (a topic
        // branch may go); a destructive name read as anything else still
        // counts here.
        if n.kind != ToolKind::Read
            && understood != Some(EffectKind::Delete)
            && (!named_paths || n.kind == ToolKind::Other)
            && let Some(verb) = meaning::destructive_verb(&crate::normalize::name_words(tool_name))
        {
            let reason = format!("{} is a tool whose name says it does `{verb}`", n.tool);
            out.push(concern(RiskClass::R3, reason, "meaning.tool-verb"));
        }
        let all = crate::normalize::param_strings(&n.params, true);
        // A file tool's SQL is content it writes (a migration), not run.
        // Nor is SQL in the prose of a message, a ticket or a memory: for
        // those only the other keys (`sql`, `query`, `statement`) count.
        let runs_sql = !(named_paths && n.kind == ToolKind::Write);
        let prose_runs = understood.is_none_or(|k| {
            matches!(
                k,
                EffectKind::Run | EffectKind::Read | EffectKind::Delete | EffectKind::Infra
            )
        });
        let texts = if prose_runs {
            all
        } else {
            crate::normalize::param_strings(&n.params, false)
        };
        let sql: Vec<_> = texts
            .iter()
            .filter(|_| runs_sql)
            .filter_map(|s| meaning::sql(s))
            .collect();
        if !sql.is_empty() {
            let production = meaning::production_target(&n.params);
            for (sql_class, what) in sql {
                let class = if production { RiskClass::R4 } else { sql_class };
                let target = if production {
                    " on a production-looking target"
                } else {
                    ""
                };
                let reason = format!("{} runs SQL that {what}{target}", n.tool);
                out.push(concern(class, reason, "meaning.sql"));
            }
        }
        // A command under a key toolgate does not know (free text aside):
        // judged as one when it starts with a program the catalogue
        // describes. Only what the catalogue and the rules find counts;
        // prose that merely fails to parse as shell is not a command.
        for text in crate::normalize::param_strings(&n.params, false) {
            if named_paths {
                break;
            }
            let mut words = text.split_whitespace();
            let known = words
                .next()
                .is_some_and(|p| self.catalogue.knows(p.rsplit('/').next().unwrap_or(p)));
            if !known
                || words.next().is_none()
                || text.len() > 4096
                || Some(text) == n.command.as_deref()
                || n.alt_commands.iter().any(|c| c == text)
            {
                continue;
            }
            let (found, _, _) = self.judge_shell(&crate::shell::analyze(text, env), env);
            out.extend(
                found
                    .into_iter()
                    .filter(|f| f.verdict != Verdict::Allow && f.rule.is_some()),
            );
        }
        let class = out.iter().map(|c| c.class).max().unwrap_or(RiskClass::R0);
        (out, class)
    }

    /// The protected set's findings for a call, from every analyzer alike:
    /// the paths file, patch and MCP tools touch (by their access), the URLs
    /// any tool fetches, every string of a tool toolgate has no precise
    /// reading of, and every command a call carries (redirections, path
    /// operands, inline code, the gate's process, port and endpoints).
    /// Recorded under the exec layer: they judge what the call does, and no
    /// bypass lifts them.
    fn judge_protected(&self, n: &NormalizedCall, env: &Env) -> Vec<Concern> {
        let p = &self.protected;
        let mut out = Vec::new();
        let concern = |h: Hit, subject: &str, command: Option<String>| Concern {
            verdict: h.verdict,
            class: h.class,
            layer: Layer::Exec,
            reason: format!("{subject} {}", h.reason),
            rule: Some(h.rule.to_string()),
            command,
        };
        // A tool whose kind is a guess from its name (MCP) or unknown reads
        // a path with an effect toolgate cannot be sure of.
        let unsure = n.kind == ToolKind::Other || (n.mcp.is_some() && n.kind != ToolKind::Read);
        for t in &n.paths {
            let access = match protected::Access::of_tool(t.access) {
                protected::Access::Read if unsure => protected::Access::Unknown,
                a => a,
            };
            let tree = matches!(access, protected::Access::Delete | protected::Access::Move);
            if let Some(h) = p.judge_path(access, &t.path, tree, env) {
                out.push(concern(h, &n.tool, None));
            }
        }
        for u in &n.urls {
            if let Some(h) = p.judge_url(u) {
                out.push(concern(h, &n.tool, None));
            }
        }
        if n.mcp.is_some()
            || matches!(
                n.kind,
                ToolKind::Other | ToolKind::Fetch | ToolKind::Browser | ToolKind::Nodes
            )
        {
            let judged: Vec<&str> = n.paths.iter().map(|t| t.raw.as_str()).collect();
            if let Some(h) = judge_params(p, &n.params, &judged, &n.cwd, env) {
                out.push(concern(h, &n.tool, None));
            }
        }
        if let Some(first) = n.command.as_deref() {
            // The call's own directory needs no new environment.
            let alt: Vec<Env> = n.alt_cwds.iter().map(|c| env.with_cwd(c)).collect();
            for env in std::iter::once(env).chain(&alt) {
                for command in
                    std::iter::once(first).chain(n.alt_commands.iter().map(String::as_str))
                {
                    let analysis = n.analyses.get(command, env);
                    for (h, cmd) in p.judge_shell(&analysis, command, env) {
                        let subject = match cmd.as_deref().map(str::trim) {
                            Some("") => "a redirection".to_string(),
                            Some(c) => format!("`{}`", shell::shorten(c, 80)),
                            None => format!("`{}`", shell::shorten(command, 80)),
                        };
                        out.push(concern(h, &subject, cmd));
                    }
                }
            }
        }
        out
    }

    /// The deny and ask rules that match, as concerns about `subject`.
    fn rule_concerns(&self, subject: &str, matches: impl Fn(&Rule) -> bool) -> Vec<Concern> {
        let mut out = Vec::new();
        let lists = [
            (RuleList::Deny, Verdict::Block, RiskClass::R4, "deny"),
            (RuleList::Ask, Verdict::Escalate, RiskClass::R3, "ask"),
            (
                RuleList::AlwaysAsk,
                Verdict::Escalate,
                RiskClass::R3,
                "always_ask",
            ),
        ];
        for (list, verdict, class, name) in lists {
            if let Some(rule) = self.policy.rules(list).iter().find(|r| matches(r)) {
                out.push(Concern {
                    verdict,
                    class,
                    layer: Layer::Policy,
                    reason: format!("{subject} matches the {name} rule {}", rule.text()),
                    rule: Some(rule.text().to_string()),
                    command: None,
                });
            }
        }
        out
    }

    /// What a catalogue finding becomes: an R2/R3 escalation is lifted when an
    /// allow rule matches (strictly); R4 and blocks never are.
    fn finding_concern(
        &self,
        subject: &str,
        f: &Finding,
        layer: Layer,
        allowed: impl Fn(&Rule) -> bool,
    ) -> Concern {
        let liftable = f.verdict == Verdict::Escalate && f.class <= RiskClass::R3;
        match liftable
            .then(|| {
                self.policy
                    .rules(RuleList::Allow)
                    .iter()
                    .find(|r| allowed(r))
            })
            .flatten()
        {
            Some(rule) => Concern {
                verdict: Verdict::Allow,
                class: f.class,
                layer: Layer::Policy,
                reason: format!(
                    "{subject} {} but the allow rule {} permits it",
                    f.reason,
                    rule.text()
                ),
                rule: Some(rule.text().to_string()),
                command: None,
            },
            None => Concern {
                verdict: f.verdict,
                class: f.class,
                layer,
                reason: format!("{subject} {}", f.reason),
                rule: Some(f.rule.clone()),
                command: None,
            },
        }
    }

    /// Runs the policy's `[[test]]` cases in `env`; returns the failures.
    pub fn run_policy_tests(&self, env: &Env) -> Vec<TestFailure> {
        let mut failures = Vec::new();
        for t in self.policy.tests() {
            let a = self.decide(&t.call, env);
            if !t.expect.accepts(a.decision.decision) {
                let case = t.name.clone().unwrap_or_else(|| {
                    format!("{}:{}:{}", self.policy.origin(), t.location.0, t.location.1)
                });
                failures.push(TestFailure {
                    case,
                    expected: t.expect.as_str().to_string(),
                    got: format!("{} ({})", a.decision.decision, a.decision.reason),
                });
            }
        }
        failures
    }
}

/// Whether a concern is lifted by a bypass of `lifted` layers: a lifted
/// layer's findings decide nothing — except that lifting `risk` lifts only
/// the clarity × stakes guess ([`THRESHOLD_RULE`]), never a finding, and
/// the protected set's findings are lifted by nothing.
fn is_lifted(c: &Concern, lifted: &[Layer]) -> bool {
    let rule = c.rule.as_deref();
    lifted.contains(&c.layer)
        && (c.layer != Layer::Risk || rule == Some(THRESHOLD_RULE))
        && !rule.is_some_and(|r| r.starts_with("protected."))
}

/// The strictest protected-set finding among the strings of a tool's
/// params (bounded walk; free text such as a message or a file's content
/// is data, not a target), skipping the paths already judged by access.
fn judge_params(
    p: &Protected,
    params: &serde_json::Map<String, Value>,
    judged: &[&str],
    cwd: &str,
    env: &Env,
) -> Option<Hit> {
    crate::normalize::param_strings(params, false)
        .into_iter()
        .filter(|s| !s.is_empty() && !judged.contains(s))
        .fold(None, |best, s| {
            protected::stricter(best, p.judge_value(s, cwd, env))
        })
}

/// How ambiguous a shell command is: wrappers, inline code, privilege,
/// remote hosts and size all make its effect harder to see.
fn exec_clarity(a: &ShellAnalysis) -> u32 {
    if !a.opaque.is_empty() {
        return 10;
    }
    let depth = a.commands.iter().map(|c| c.via.len()).max().unwrap_or(0) as u32;
    let mut c = 2 + depth.min(3);
    if a.commands.iter().any(|c| c.inline_code.is_some()) {
        c += 2;
    }
    if a.commands.iter().any(|c| c.privileged) {
        c += 1;
    }
    if a.commands.iter().any(|c| c.remote.is_some()) {
        c += 1;
    }
    if a.commands.len() > 3 {
        c += 1;
    }
    c.min(10)
}

/// `` `rm -fr ~` `` plus where it was found, for reasons.
fn describe(cmd: &SimpleCommand, compound: bool) -> String {
    let mut text = shell::shorten(&cmd.display(), 80);
    if text.is_empty() {
        text = "a redirection".to_string();
    }
    let mut s = format!("`{text}`");
    if !cmd.via.is_empty() {
        let chain: Vec<&str> = cmd.via.iter().map(|v| v.wrapper.as_str()).collect();
        s.push_str(&format!(" (run through {})", chain.join(" → ")));
    } else if compound {
        s.push_str(" (part of a compound command)");
    }
    s
}

/// How strict an assessment is: block over escalate over allow, then the
/// risk class, then the score.
fn strictness(a: &Assessment) -> (u8, RiskClass, u32) {
    let v = match a.decision.decision {
        Verdict::Allow => 0,
        Verdict::Escalate => 1,
        Verdict::Block => 2,
    };
    (v, a.decision.risk, a.decision.score)
}
