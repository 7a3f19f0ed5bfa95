//! The profile's layers on one call (docs/profiles.md), in order: tool policy
//! lockdown, exec allowlist, sandbox posture, safety guard (autonomy
//! tiers), audit. Each writes a verdict with its layer name even when it
//! passes or is switched off; the first that blocks ends the walk (later
//! layers are not consulted).

use super::Profile;
use super::model::Tier;
use crate::model::LayerVerdict;
use crate::model::{Layer, RiskClass, Verdict};
use crate::normalize::NormalizedCall;
use crate::paths::Env;
use crate::posture::Posture;
use crate::shell;

/// Read-only programs the exec allowlist always admits (a base set of
/// read-only tools, less `git`, whose subcommands, hooks and `GIT_*` variables run other
/// programs and reach the network; add it to `exec_allowlist` knowingly).
pub(crate) const BASE_ALLOWLIST: &[&str] = &[
    "cat", "ls", "head", "tail", "wc", "grep", "find", "pwd", "echo", "date",
];

/// Where an allowlisted program may be called by path (`/usr/bin/cat`);
/// anywhere else (`./x/cat`) it is another program with the same name.
const TRUSTED_DIRS: &[&str] = &[
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
];

/// Redirection targets that write nothing.
const HARMLESS_SINKS: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr"];

/// Why one simple command is outside the allowlist, if it is.
fn exec_refusal(p: &Profile, cmd: &shell::SimpleCommand) -> Option<String> {
    let program = cmd.program.rsplit('/').next().unwrap_or(&cmd.program);
    if !p.exec_allowed(program) {
        return Some(format!(
            "`{program}` is not on the scope profile's exec allowlist"
        ));
    }
    // The program as written (the analyzer names commands by file name).
    let written = cmd
        .argv
        .first()
        .map_or(cmd.program.as_str(), |w| w.text.as_str());
    for name in [written, cmd.program.as_str()] {
        if name.contains('/') && !TRUSTED_DIRS.iter().any(|d| name.starts_with(d)) {
            return Some(format!(
                "`{name}` is not the system's `{program}` (only /bin, /usr/bin, /usr/local/bin)"
            ));
        }
    }
    if let Some((name, _)) = cmd.assignments.first() {
        return Some(format!(
            "`{name}=…` changes what `{program}` runs or loads; the allowlist admits plain commands"
        ));
    }
    for r in &cmd.redirects {
        let writes = matches!(
            r.kind,
            shell::RedirectKind::Write
                | shell::RedirectKind::Append
                | shell::RedirectKind::ReadWrite
        );
        if writes && !HARMLESS_SINKS.contains(&r.target.text.as_str()) {
            return Some(format!(
                "`{program}` writes to {} through a redirection; the allowlist admits read-only commands",
                r.target.text
            ));
        }
    }
    let args: Vec<&str> = cmd.args().iter().map(|w| w.text.as_str()).collect();
    let writes = match program {
        "find" => args.iter().any(|a| {
            matches!(
                *a,
                "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls" | "-ok" | "-okdir"
            )
        }),
        "sort" => args.iter().any(|a| {
            *a == "-o"
                || a.starts_with("--output")
                || a.starts_with("--compress-program")
                || (a.starts_with("-o") && !a.starts_with("--"))
        }),
        "uniq" => args.iter().filter(|a| !a.starts_with('-')).count() >= 2,
        "tee" | "dd" | "cp" | "mv" | "rm" | "install" => true,
        _ => false,
    };
    writes.then(|| {
        format!(
            "`{}` writes or deletes files; the allowlist admits read-only commands",
            cmd.display()
        )
    })
}

/// What the profile says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileJudgement {
    /// One verdict per layer consulted, in order.
    pub verdicts: Vec<LayerVerdict>,
    /// The strictest verdict and the layer and reason behind it (`None`:
    /// everything passed).
    pub stop: Option<(Verdict, Layer, String, &'static str)>,
}

fn verdict(layer: Layer, v: Verdict, class: RiskClass, rule: &str, reason: String) -> LayerVerdict {
    LayerVerdict {
        layer,
        verdict: v,
        class,
        reason,
        rule: Some(rule.to_string()),
        command: None,
    }
}

impl Profile {
    /// Why the call touches a protected file, if it does: writes or deletes
    /// it, or names it anywhere in a command (argument or redirection).
    fn touches_protected(
        &self,
        n: &NormalizedCall,
        env: &Env,
        analyses: &[std::sync::Arc<shell::ShellAnalysis>],
    ) -> Option<String> {
        let protected = |p: &str| self.protected.iter().any(|x| x == p);
        for t in &n.paths {
            if t.access != crate::normalize::Access::Read && protected(&t.path) {
                return Some(format!(
                    "{} changes {}, which guards this agent",
                    n.tool, t.path
                ));
            }
        }
        for a in analyses {
            for cmd in &a.commands {
                let here = env.with_cwd(cmd.cwd.as_deref().unwrap_or(&env.cwd));
                let words = cmd
                    .args()
                    .iter()
                    .map(|w| &w.text)
                    .chain(cmd.redirects.iter().map(|r| &r.target.text));
                for w in words {
                    if w.is_empty() {
                        continue;
                    }
                    let abs = here.resolve(w);
                    if protected(&abs) || self.protected.iter().any(|x| w.contains(x.as_str())) {
                        return Some(format!(
                            "the command names {abs}, which guards this agent; it may not be \
                             touched from inside the agent"
                        ));
                    }
                }
            }
        }
        None
    }

    /// Judges a normalized call (in `env`, with the sandbox `posture`).
    pub fn judge(&self, n: &NormalizedCall, env: &Env, posture: &Posture) -> ProfileJudgement {
        self.judge_lifting(n, env, posture, false)
    }

    /// [`Profile::judge`]; with `lift_posture` (an emergency bypass of the
    /// posture layer), a missing sandbox is recorded and stops nothing, and
    /// the layers after it are judged as usual.
    pub fn judge_lifting(
        &self,
        n: &NormalizedCall,
        env: &Env,
        posture: &Posture,
        lift_posture: bool,
    ) -> ProfileJudgement {
        let h = &self.doc.hardening;
        let mut out = ProfileJudgement {
            verdicts: Vec::new(),
            stop: None,
        };
        let classes = self.classes_of(n);
        let pass = |out: &mut ProfileJudgement, layer, rule: &str, why: String| {
            out.verdicts
                .push(verdict(layer, Verdict::Allow, RiskClass::R0, rule, why));
        };
        let block = |out: &mut ProfileJudgement, layer, rule: &'static str, why: String| {
            out.verdicts.push(verdict(
                layer,
                Verdict::Block,
                RiskClass::R4,
                rule,
                why.clone(),
            ));
            out.stop = Some((Verdict::Block, layer, why, rule));
        };

        // 1. Tool policy lockdown.
        let names: Vec<&str> = std::iter::once(n.tool.as_str())
            .chain(std::iter::once(n.kind.as_str()))
            .chain(classes.iter().map(String::as_str))
            .collect();
        // An MCP tool's kind is a guess from its name (`get_and_post` reads
        // as a read): it may make a tool prohibited, never permitted.
        let permit_names: Vec<&str> = names
            .iter()
            .copied()
            .filter(|x| n.mcp.is_none() || *x != n.kind.as_str())
            .collect();
        let scope = &self.doc.scope;
        let find_in = |names: &[&str], list: &[String]| {
            names
                .iter()
                .find(|n| list.iter().any(|l| l.eq_ignore_ascii_case(n)))
                .map(|s| s.to_string())
        };
        let listed = |list: &[String]| find_in(&names, list);
        let permitted = |list: &[String]| find_in(&permit_names, list);

        // 0. The policy, the profile and the sandbox markers are never
        // written or named by a call (whatever the switches say).
        // Every command text the call carries, analysed once for both the
        // protected files and the allowlist.
        let texts: Vec<&str> = n
            .command
            .iter()
            .chain(n.alt_commands.iter())
            .map(String::as_str)
            .collect();
        let analyses: Vec<std::sync::Arc<shell::ShellAnalysis>> =
            texts.iter().map(|t| n.analyses.get(t, env)).collect();
        if let Some(why) = self.touches_protected(n, env, &analyses) {
            block(&mut out, Layer::Scope, "protected_files", why);
            return out;
        }
        if !h.tool_policy_lockdown {
            pass(
                &mut out,
                Layer::Scope,
                "tool_policy_lockdown",
                "tool policy lockdown is off in the profile".into(),
            );
        } else if let Some(hit) = listed(&scope.prohibited_actions) {
            block(
                &mut out,
                Layer::Scope,
                "tool_policy_lockdown",
                format!("`{hit}` is a prohibited action in the scope profile"),
            );
            return out;
        } else if let Some(hit) = permitted(&scope.permitted_actions) {
            pass(
                &mut out,
                Layer::Scope,
                "tool_policy_lockdown",
                format!("`{hit}` is a permitted action"),
            );
        } else {
            block(
                &mut out,
                Layer::Scope,
                "tool_policy_lockdown",
                format!(
                    "{} ({}) is not among the scope profile's permitted actions",
                    n.tool,
                    if classes.is_empty() {
                        "no action class".to_string()
                    } else {
                        format!("action {}", classes.join(", "))
                    }
                ),
            );
            return out;
        }

        // 2. Exec allowlist: every program every command would run.
        if !h.exec_approval {
            pass(
                &mut out,
                Layer::Exec,
                "exec_allowlist",
                "exec allowlist is off in the profile".into(),
            );
        } else if n.kind == crate::normalize::ToolKind::Exec || !texts.is_empty() {
            if texts.iter().all(|t| t.trim().is_empty()) {
                block(
                    &mut out,
                    Layer::Exec,
                    "exec_allowlist",
                    "empty command".into(),
                );
                return out;
            }
            for a in &analyses {
                if let Some(o) = a.opaque.first() {
                    block(
                        &mut out,
                        Layer::Exec,
                        "exec_allowlist",
                        format!(
                            "the command cannot be read statically ({o:?}); the allowlist needs every program known"
                        ),
                    );
                    return out;
                }
                for cmd in &a.commands {
                    if let Some(why) = exec_refusal(self, cmd) {
                        block(&mut out, Layer::Exec, "exec_allowlist", why);
                        return out;
                    }
                }
            }
            pass(
                &mut out,
                Layer::Exec,
                "exec_allowlist",
                "every program is on the exec allowlist".into(),
            );
        }

        // 4. Sandbox posture.
        let seen = if posture.signals.is_empty() {
            "no container detected".to_string()
        } else {
            posture.signals.join("; ")
        };
        if h.require_sandbox && !posture.is_sandboxed() {
            let why = format!(
                "the scope profile requires a container sandbox and none is certain ({seen})"
            );
            if !lift_posture {
                block(&mut out, Layer::Posture, "require_sandbox", why);
                return out;
            }
            pass(
                &mut out,
                Layer::Posture,
                "require_sandbox",
                format!("lifted by a bypass: {why}"),
            );
        } else {
            pass(
                &mut out,
                Layer::Posture,
                "docker_sandbox",
                if !h.docker_sandbox && !h.require_sandbox {
                    "sandbox reporting is off in the profile".into()
                } else if posture.is_sandboxed() {
                    format!("running in a container: {seen}")
                } else {
                    format!("not sandboxed ({seen}); reported, not enforced")
                },
            );
        }

        // 5. Safety guard: autonomy tiers of the call's action classes.
        if !h.safety_guard {
            pass(
                &mut out,
                Layer::Scope,
                "safety_guard",
                "safety guard is off in the profile".into(),
            );
        } else {
            let manual = classes
                .iter()
                .find(|c| self.doc.autonomy.get(*c) == Some(&Tier::Manual));
            match manual {
                Some(c) => {
                    let why = format!(
                        "`{c}` actions are manual in the scope profile: a person approves each"
                    );
                    out.verdicts.push(verdict(
                        Layer::Scope,
                        Verdict::Escalate,
                        RiskClass::R3,
                        "safety_guard",
                        why.clone(),
                    ));
                    out.stop = Some((Verdict::Escalate, Layer::Scope, why, "safety_guard"));
                }
                None => {
                    let tiers: Vec<String> = classes
                        .iter()
                        .map(|c| {
                            let t = self
                                .doc
                                .autonomy
                                .get(c)
                                .copied()
                                .unwrap_or(Tier::Supervised);
                            format!("{c}: {}", t.as_str())
                        })
                        .collect();
                    pass(
                        &mut out,
                        Layer::Scope,
                        "safety_guard",
                        if tiers.is_empty() {
                            "no action class with an autonomy tier".into()
                        } else {
                            format!("within autonomy ({})", tiers.join(", "))
                        },
                    );
                }
            }
        }

        // 6. Audit: always written; the switch records consent only.
        pass(
            &mut out,
            Layer::Policy,
            "audit_trail",
            if h.audit_trail {
                "audit trail on".into()
            } else {
                "the profile turns the audit trail off; toolgate records it anyway".into()
            },
        );
        out
    }
}
