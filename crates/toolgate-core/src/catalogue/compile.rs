//! Turning pack files into compiled rules.

use super::model::{ExecRuleSpec, PackFile, RuleHeader, SetSpec};
use super::sets::PathSet;
use super::{Catalogue, CatalogueError};
use crate::model::{RiskClass, Verdict};
use crate::normalize::Access;
use regex::Regex;
use std::sync::OnceLock;

/// A regex checked for syntax when the pack loads and compiled on first
/// use: a short-lived process (a hook) pays only for the rules it touches.
#[derive(Debug)]
pub(super) struct LazyRegex {
    pattern: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    /// Keeps the pattern for compiling on first use. Nothing is parsed
    /// here: loading the catalogue is on the path of every short-lived hook
    /// process, and the built-in patterns are all compiled by a unit test
    /// (`compile_all`), so a bad one fails the build's tests instead.
    fn new(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            compiled: OnceLock::new(),
        }
    }

    /// The compiled regex. Every shipped pattern is compiled by a unit test,
    /// so the fallback (a regex that never matches) is unreachable for them.
    pub fn get(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            Regex::new(&self.pattern).unwrap_or_else(|_| Regex::new("$^").expect("trivial regex"))
        })
    }

    /// Whether the regex matches `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.get().is_match(text)
    }

    /// Compiles now; an error for a pattern the regex engine refuses.
    pub fn compile(&self) -> Result<(), String> {
        Regex::new(&self.pattern)
            .map(|_| ())
            .map_err(|e| format!("{}: {e}", self.pattern))
    }
}

/// What every rule has.
#[derive(Debug)]
pub(super) struct Common {
    pub id: String,
    pub class: RiskClass,
    pub verdict: Verdict,
    pub reason: String,
    /// Calls the rule must match, and calls it must not (checked as tests).
    pub examples: Vec<String>,
    pub counter_examples: Vec<String>,
}

impl Common {
    /// The finding this rule reports, with `{placeholder}` in its reason
    /// filled in.
    pub fn finding(&self, placeholder: &str, value: &str) -> super::Finding {
        super::Finding {
            rule: self.id.clone(),
            class: self.class,
            verdict: self.verdict,
            reason: self.reason.replace(placeholder, value),
        }
    }
}

/// Which operands a rule's path test looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OperandScope {
    All,
    Last,
    ButLast,
}

/// A reference to a path set, a special set, or an inline pattern set.
#[derive(Debug)]
pub(super) enum SetRef {
    /// An index into [`Catalogue::sets`].
    Named(usize),
    /// The workspace root itself.
    WorkspaceRoot,
    /// Anywhere outside the workspace and the temp dirs.
    OutsideWorkspace,
    /// An operand whose value is known only at run time.
    Unknown,
    /// Patterns written inline in the rule.
    Inline(PathSet),
}

#[derive(Debug)]
pub(super) struct ExecRule {
    pub common: Common,
    pub programs: Vec<String>,
    pub programs_not: Vec<String>,
    pub sub: Vec<Vec<String>>,
    pub operands_regex: Option<LazyRegex>,
    pub operands_not_regex: Option<LazyRegex>,
    pub flags_any: Vec<String>,
    pub flags_all: Vec<String>,
    pub flags_none: Vec<String>,
    pub arg_regex: Option<LazyRegex>,
    pub args_regex: Option<LazyRegex>,
    pub args_not_regex: Option<LazyRegex>,
    pub paths_any: Vec<SetRef>,
    pub operand_scope: OperandScope,
    pub dynamic_paths: bool,
    pub redirect_to: Vec<SetRef>,
    pub redirect_from: Vec<SetRef>,
    pub stdin_from: Vec<String>,
    pub privileged: Option<bool>,
    pub code_regex: Option<LazyRegex>,
    pub via_all: Vec<String>,
    pub recursive_function: bool,
    pub no_operands: bool,
}

#[derive(Debug)]
pub(super) struct PathRule {
    pub common: Common,
    pub access: Vec<Access>,
    pub paths: Vec<SetRef>,
}

#[derive(Debug)]
pub(super) struct ActionRule {
    pub common: Common,
    pub tools: Vec<String>,
    pub actions: Vec<String>,
}

#[derive(Debug)]
pub(super) struct UrlRule {
    pub common: Common,
    pub hosts: Vec<String>,
}

impl ExecRule {
    /// Compiles every regex of the rule now.
    pub fn compile_regexes(&self) -> Result<(), String> {
        for r in [
            &self.operands_regex,
            &self.operands_not_regex,
            &self.arg_regex,
            &self.args_regex,
            &self.args_not_regex,
            &self.code_regex,
        ]
        .into_iter()
        .flatten()
        {
            r.compile()
                .map_err(|e| format!("{}: {e}", self.common.id))?;
        }
        Ok(())
    }
}

impl Catalogue {
    /// Compiles packs given as `(file name, TOML text)`.
    pub fn from_packs(packs: &[(&str, &str)]) -> Result<Catalogue, CatalogueError> {
        let mut cat = Catalogue::default();
        let mut files = Vec::new();
        let mut raw_sets: Vec<(String, Vec<String>, Vec<String>, bool)> = Vec::new();
        for (name, text) in packs {
            let err = |message: String| CatalogueError {
                pack: (*name).to_string(),
                message,
            };
            let file: PackFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
            for (set, spec) in &file.sets {
                let (patterns, probes, outside) = match spec {
                    SetSpec::Patterns(p) => (p.clone(), Vec::new(), false),
                    SetSpec::Full {
                        patterns,
                        probes,
                        outside_workspace,
                    } => (patterns.clone(), probes.clone(), *outside_workspace),
                };
                raw_sets.push((set.clone(), patterns, probes, outside));
            }
            for (prog, opts) in &file.options {
                cat.options
                    .entry(prog.clone())
                    .or_default()
                    .extend(opts.iter().cloned());
            }
            files.push((name.to_string(), file));
        }
        raw_sets.sort_by(|a, b| a.0.cmp(&b.0));
        for (set, patterns, probes, outside) in &raw_sets {
            let mut compiled =
                PathSet::new(patterns, probes.clone()).map_err(|e| CatalogueError {
                    pack: "sets".into(),
                    message: format!("set {set}: {e}"),
                })?;
            if let Some((_, ex, _, _)) = raw_sets
                .iter()
                .find(|(n, _, _, _)| n == &format!("not_{set}"))
            {
                let exclude = PathSet::new(ex, Vec::new()).map_err(|e| CatalogueError {
                    pack: "sets".into(),
                    message: format!("set not_{set}: {e}"),
                })?;
                compiled.set_exclude(exclude);
            }
            compiled.set_outside_workspace_only(*outside);
            cat.set_names.push(set.clone());
            cat.sets.push(compiled);
        }
        for (name, file) in files {
            let err = |message: String| CatalogueError {
                pack: name.clone(),
                message,
            };
            let pack = file.pack.name.clone();
            for spec in file.rule {
                let rule = cat.compile_exec(&pack, spec).map_err(&err)?;
                let idx = cat.exec.len();
                if rule.programs.is_empty() {
                    cat.any_program.push(idx);
                }
                for p in &rule.programs {
                    cat.by_program.entry(p.clone()).or_default().push(idx);
                }
                cat.exec.push(rule);
            }
            for spec in file.path_rule {
                let common = common(&pack, &spec).map_err(&err)?;
                let access = spec
                    .access
                    .iter()
                    .map(|a| match a.as_str() {
                        "read" => Ok(Access::Read),
                        "write" => Ok(Access::Write),
                        "delete" => Ok(Access::Delete),
                        other => Err(err(format!("rule {}: unknown access {other:?}", spec.id))),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let paths = spec
                    .paths
                    .iter()
                    .map(|p| cat.set_ref(p))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(&err)?;
                cat.paths.push(PathRule {
                    common,
                    access,
                    paths,
                });
            }
            for spec in file.action_rule {
                let common = common(&pack, &spec).map_err(&err)?;
                cat.actions.push(ActionRule {
                    common,
                    tools: spec.tools,
                    actions: spec.actions,
                });
            }
            for spec in file.url_rule {
                let common = common(&pack, &spec).map_err(&err)?;
                cat.urls.push(UrlRule {
                    common,
                    hosts: spec.hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
                });
            }
        }
        Ok(cat)
    }

    fn set_ref(&self, text: &str) -> Result<SetRef, String> {
        match text {
            "@workspace_root" => Ok(SetRef::WorkspaceRoot),
            "@outside_workspace" => Ok(SetRef::OutsideWorkspace),
            "@unknown" => Ok(SetRef::Unknown),
            _ => match text.strip_prefix('@') {
                Some(name) => match self.set_names.iter().position(|n| n == name) {
                    Some(i) => Ok(SetRef::Named(i)),
                    None => Err(format!("unknown path set @{name}")),
                },
                None => PathSet::new(&[text.to_string()], Vec::new())
                    .map(SetRef::Inline)
                    .map_err(|e| format!("pattern {text:?}: {e}")),
            },
        }
    }

    fn compile_exec(&self, pack: &str, s: ExecRuleSpec) -> Result<ExecRule, String> {
        let re = |r: &Option<String>| -> Result<Option<LazyRegex>, String> {
            Ok(r.as_deref().map(LazyRegex::new))
        };
        let sets = |list: &[String]| {
            list.iter()
                .map(|p| self.set_ref(p))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(ExecRule {
            common: common(pack, &s)?,
            programs: s.programs.clone(),
            programs_not: s.programs_not.clone(),
            sub: s
                .sub
                .iter()
                .map(|w| w.split('|').map(str::to_string).collect())
                .collect(),
            operands_regex: re(&s.operands_regex)?,
            operands_not_regex: re(&s.operands_not_regex)?,
            flags_any: s.flags_any.clone(),
            flags_all: s.flags_all.clone(),
            flags_none: s.flags_none.clone(),
            arg_regex: re(&s.arg_regex)?,
            args_regex: re(&s.args_regex)?,
            args_not_regex: re(&s.args_not_regex)?,
            paths_any: sets(&s.paths_any)?,
            operand_scope: match s.operand_scope.as_deref() {
                None | Some("all") => OperandScope::All,
                Some("last") => OperandScope::Last,
                Some("but_last") => OperandScope::ButLast,
                Some(other) => {
                    return Err(format!(
                        "rule {}: operand_scope must be all, last or but_last, not {other:?}",
                        s.id
                    ));
                }
            },
            dynamic_paths: s.dynamic_paths,
            redirect_to: sets(&s.redirect_to)?,
            redirect_from: sets(&s.redirect_from)?,
            stdin_from: s.stdin_from.clone(),
            privileged: s.privileged,
            code_regex: re(&s.code_regex)?,
            via_all: s.via_all.clone(),
            recursive_function: s.recursive_function,
            no_operands: s.no_operands,
        })
    }
}

fn common(pack: &str, spec: &impl RuleHeader) -> Result<Common, String> {
    let (id, class) = (spec.id(), spec.class());
    let class = RiskClass::parse(class)
        .ok_or_else(|| format!("rule {id}: class must be R0..R4, not {class:?}"))?;
    let verdict = match spec.verdict() {
        None if class >= RiskClass::R3 => Verdict::Escalate,
        None => Verdict::Allow,
        Some("block") => Verdict::Block,
        Some("escalate") => Verdict::Escalate,
        Some("allow") => Verdict::Allow,
        Some(other) => {
            return Err(format!(
                "rule {id}: verdict must be block, escalate or allow, not {other:?}"
            ));
        }
    };
    Ok(Common {
        id: format!("{pack}.{id}"),
        class,
        verdict,
        reason: spec.reason().to_string(),
        examples: spec.examples().0.to_vec(),
        counter_examples: spec.examples().1.to_vec(),
    })
}
