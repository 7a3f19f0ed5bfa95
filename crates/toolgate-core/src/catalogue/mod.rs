//! The catalogue of dangerous operations, kept as data: named rule packs in
//! `packs/*.toml`, compiled once, each rule with examples that are checked as
//! tests (`Catalogue::self_test`). The engine asks it what a simple command,
//! a path access, an action or a URL is.

pub mod argv;
mod model;
pub mod pathset;

use crate::model::{RiskClass, Verdict};
use crate::normalize::{Access, ToolKind};
use crate::paths::Env;
use crate::shell::{RedirectKind, SimpleCommand, Word};
use model::{ExecRuleSpec, PackFile, SetSpec};
use pathset::{PathPattern, candidates, glob_covers, is_glob};
use regex::Regex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// The packs shipped in the binary.
pub const BUILTIN_PACKS: &[(&str, &str)] = &[
    ("sets.toml", include_str!("../../packs/sets.toml")),
    ("filesystem.toml", include_str!("../../packs/filesystem.toml")),
    ("system.toml", include_str!("../../packs/system.toml")),
    ("git.toml", include_str!("../../packs/git.toml")),
    ("data.toml", include_str!("../../packs/data.toml")),
    ("infra.toml", include_str!("../../packs/infra.toml")),
    ("network.toml", include_str!("../../packs/network.toml")),
    ("secrets.toml", include_str!("../../packs/secrets.toml")),
    ("tools.toml", include_str!("../../packs/tools.toml")),
    ("code.toml", include_str!("../../packs/code.toml")),
];

/// A catalogue entry that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// `pack.rule`.
    pub rule: String,
    /// Risk class of the operation.
    pub class: RiskClass,
    /// What the operation calls for.
    pub verdict: Verdict,
    /// A sentence fragment naming what the operation does.
    pub reason: String,
}

impl Finding {
    /// Orders findings: verdict first, then class.
    pub fn severity(&self) -> (Verdict, RiskClass) {
        (self.verdict, self.class)
    }
}

/// Why the catalogue could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("catalogue pack {pack}: {message}")]
pub struct CatalogueError {
    /// The pack file.
    pub pack: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug)]
struct PathSet {
    patterns: Vec<PathPattern>,
    probes: Vec<String>,
    /// The patterns of the set `not_<name>`, which carve exceptions out.
    exclude: Vec<PathPattern>,
}

#[derive(Debug)]
struct Common {
    id: String,
    class: RiskClass,
    verdict: Verdict,
    reason: String,
}

#[derive(Debug)]
struct ExecRule {
    common: Common,
    programs: Vec<String>,
    programs_not: Vec<String>,
    sub: Vec<Vec<String>>,
    operands_regex: Option<Regex>,
    operands_not_regex: Option<Regex>,
    flags_any: Vec<String>,
    flags_all: Vec<String>,
    flags_none: Vec<String>,
    arg_regex: Option<Regex>,
    args_regex: Option<Regex>,
    args_not_regex: Option<Regex>,
    paths_any: Vec<SetRef>,
    operand_scope: OperandScope,
    dynamic_paths: bool,
    redirect_to: Vec<SetRef>,
    redirect_from: Vec<SetRef>,
    stdin_from: Vec<String>,
    privileged: Option<bool>,
    code_regex: Option<Regex>,
    via_all: Vec<String>,
    recursive_function: bool,
    no_operands: bool,
    examples: Vec<String>,
    counter_examples: Vec<String>,
}

/// Which operands a rule's path test looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OperandScope {
    All,
    Last,
    ButLast,
}

/// A reference to a path set, a special set, or an inline pattern.
#[derive(Debug)]
enum SetRef {
    Named(String),
    /// The workspace root itself.
    WorkspaceRoot,
    /// Anywhere outside the workspace and the temp dirs.
    OutsideWorkspace,
    /// An operand whose value is known only at run time.
    Unknown,
    Pattern(PathPattern),
}

#[derive(Debug)]
struct PathRule {
    common: Common,
    access: Vec<Access>,
    paths: Vec<SetRef>,
    examples: Vec<String>,
    counter_examples: Vec<String>,
}

#[derive(Debug)]
struct ActionRule {
    common: Common,
    tools: Vec<String>,
    actions: Vec<String>,
    examples: Vec<String>,
    counter_examples: Vec<String>,
}

#[derive(Debug)]
struct UrlRule {
    common: Common,
    hosts: Vec<String>,
    examples: Vec<String>,
    counter_examples: Vec<String>,
}

/// The compiled catalogue.
#[derive(Debug, Default)]
pub struct Catalogue {
    packs: Vec<(String, String)>,
    sets: HashMap<String, PathSet>,
    options: HashMap<String, Vec<String>>,
    exec: Vec<ExecRule>,
    by_program: HashMap<String, Vec<usize>>,
    any_program: Vec<usize>,
    paths: Vec<PathRule>,
    actions: Vec<ActionRule>,
    urls: Vec<UrlRule>,
}

const TEMP_DIRS: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

impl Catalogue {
    /// The catalogue built from the shipped packs, compiled once per process.
    pub fn builtin() -> &'static Catalogue {
        static BUILTIN: OnceLock<Catalogue> = OnceLock::new();
        BUILTIN.get_or_init(|| match Catalogue::from_packs(BUILTIN_PACKS) {
            Ok(c) => c,
            // The shipped packs are checked by tests; a broken build must
            // not silently run with an empty catalogue.
            Err(e) => panic!("built-in catalogue does not load: {e}"),
        })
    }

    /// Compiles packs given as `(file name, TOML text)`.
    pub fn from_packs(packs: &[(&str, &str)]) -> Result<Catalogue, CatalogueError> {
        let mut cat = Catalogue::default();
        let mut files = Vec::new();
        for (name, text) in packs {
            let err = |message: String| CatalogueError { pack: (*name).to_string(), message };
            let file: PackFile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
            for (set, spec) in &file.sets {
                let (patterns, probes) = match spec {
                    SetSpec::Patterns(p) => (p.clone(), Vec::new()),
                    SetSpec::Full { patterns, probes } => (patterns.clone(), probes.clone()),
                };
                let patterns = patterns
                    .iter()
                    .map(|p| PathPattern::new(p).map_err(|e| err(format!("set {set}: {e}"))))
                    .collect::<Result<Vec<_>, _>>()?;
                cat.sets.insert(set.clone(), PathSet { patterns, probes, exclude: Vec::new() });
            }
            for (prog, opts) in &file.options {
                cat.options.entry(prog.clone()).or_default().extend(opts.iter().cloned());
            }
            cat.packs.push((file.pack.name.clone(), file.pack.description.clone()));
            files.push((name.to_string(), file));
        }
        let names: Vec<String> = cat.sets.keys().cloned().collect();
        for name in names {
            if let Some(ex) = cat.sets.get(&format!("not_{name}")).map(|s| s.patterns.clone()) {
                if let Some(set) = cat.sets.get_mut(&name) {
                    set.exclude = ex;
                }
            }
        }
        for (name, file) in files {
            let err = |message: String| CatalogueError { pack: name.clone(), message };
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
                let common = common(&pack, &spec.id, &spec.class, spec.verdict.as_deref(), &spec.reason).map_err(&err)?;
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
                let paths = spec.paths.iter().map(|p| cat.set_ref(p)).collect::<Result<Vec<_>, _>>().map_err(&err)?;
                cat.paths.push(PathRule { common, access, paths, examples: spec.examples, counter_examples: spec.counter_examples });
            }
            for spec in file.action_rule {
                let common = common(&pack, &spec.id, &spec.class, spec.verdict.as_deref(), &spec.reason).map_err(&err)?;
                cat.actions.push(ActionRule {
                    common,
                    tools: spec.tools,
                    actions: spec.actions,
                    examples: spec.examples,
                    counter_examples: spec.counter_examples,
                });
            }
            for spec in file.url_rule {
                let common = common(&pack, &spec.id, &spec.class, spec.verdict.as_deref(), &spec.reason).map_err(&err)?;
                cat.urls.push(UrlRule {
                    common,
                    hosts: spec.hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
                    examples: spec.examples,
                    counter_examples: spec.counter_examples,
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
                Some(name) if self.sets.contains_key(name) => Ok(SetRef::Named(name.to_string())),
                Some(name) => Err(format!("unknown path set @{name}")),
                None => PathPattern::new(text).map(SetRef::Pattern).map_err(|e| format!("pattern {text:?}: {e}")),
            },
        }
    }

    fn compile_exec(&self, pack: &str, s: ExecRuleSpec) -> Result<ExecRule, String> {
        let re = |r: &Option<String>| -> Result<Option<Regex>, String> {
            r.as_deref().map(Regex::new).transpose().map_err(|e| format!("rule {}: bad regex: {e}", s.id))
        };
        let sets = |list: &[String]| list.iter().map(|p| self.set_ref(p)).collect::<Result<Vec<_>, _>>();
        Ok(ExecRule {
            common: common(pack, &s.id, &s.class, s.verdict.as_deref(), &s.reason)?,
            programs: s.programs.clone(),
            programs_not: s.programs_not.clone(),
            operands_regex: re(&s.operands_regex)?,
            operands_not_regex: re(&s.operands_not_regex)?,
            sub: s.sub.iter().map(|w| w.split('|').map(str::to_string).collect()).collect(),
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
                Some(other) => return Err(format!("rule {}: operand_scope must be all, last or but_last, not {other:?}", s.id)),
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
            examples: s.examples,
            counter_examples: s.counter_examples,
        })
    }

    /// Names and descriptions of the loaded packs.
    pub fn packs(&self) -> &[(String, String)] {
        &self.packs
    }

    /// How many rules of each type are loaded: (exec, path, action, url).
    pub fn rule_counts(&self) -> (usize, usize, usize, usize) {
        (self.exec.len(), self.paths.len(), self.actions.len(), self.urls.len())
    }

    /// Every finding for one simple command, most severe first.
    pub fn match_command(&self, cmd: &SimpleCommand, env: &Env) -> Vec<Finding> {
        let mut out = Vec::new();
        let specific = self.by_program.get(&cmd.program).map(Vec::as_slice).unwrap_or(&[]);
        for &i in specific.iter().chain(self.any_program.iter()) {
            if let Some(f) = self.exec_rule_matches(&self.exec[i], cmd, env) {
                out.push(f);
            }
        }
        out.sort_by(|a, b| b.severity().cmp(&a.severity()));
        out
    }

    fn exec_rule_matches(&self, rule: &ExecRule, cmd: &SimpleCommand, env: &Env) -> Option<Finding> {
        if rule.programs_not.iter().any(|p| p == &cmd.program) {
            return None;
        }
        if let Some(p) = rule.privileged {
            if cmd.privileged != p {
                return None;
            }
        }
        if rule.recursive_function && !cmd.via.iter().any(|v| v.wrapper.strip_prefix("function ") == Some(cmd.program.as_str())) {
            return None;
        }
        if !rule.via_all.iter().all(|v| cmd.via.iter().any(|w| &w.wrapper == v)) {
            return None;
        }
        if !rule.stdin_from.is_empty() && !cmd.stdin_from.iter().any(|s| rule.stdin_from.iter().any(|r| r == s)) {
            return None;
        }
        let args = cmd.args();
        let no_opts = Vec::new();
        let opts = self.options.get(&cmd.program).unwrap_or(&no_opts);
        let classified = argv::classify(args, opts);
        if !rule.sub.is_empty() {
            let mut ops = argv::operands(&classified);
            for alternatives in &rule.sub {
                let w = ops.next()?;
                if w.dynamic || !alternatives.iter().any(|a| a == &w.text) {
                    return None;
                }
            }
        }
        if !rule.flags_any.is_empty() && !rule.flags_any.iter().any(|f| argv::has_flag(&classified, f)) {
            return None;
        }
        if !rule.flags_all.iter().all(|f| argv::has_flag(&classified, f)) {
            return None;
        }
        if rule.flags_none.iter().any(|f| argv::has_flag(&classified, f)) {
            return None;
        }
        if rule.no_operands && argv::operands(&classified).next().is_some() {
            return None;
        }
        if let Some(re) = &rule.arg_regex {
            if !args.iter().any(|w| re.is_match(&w.text)) {
                return None;
            }
        }
        if rule.args_regex.is_some() || rule.args_not_regex.is_some() {
            let joined = args.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
            if rule.args_regex.as_ref().is_some_and(|re| !re.is_match(&joined)) {
                return None;
            }
            if rule.args_not_regex.as_ref().is_some_and(|re| re.is_match(&joined)) {
                return None;
            }
        }
        if rule.operands_regex.is_some() || rule.operands_not_regex.is_some() {
            let joined = argv::operands(&classified).map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
            if rule.operands_regex.as_ref().is_some_and(|re| !re.is_match(&joined)) {
                return None;
            }
            if rule.operands_not_regex.as_ref().is_some_and(|re| re.is_match(&joined)) {
                return None;
            }
        }
        if let Some(re) = &rule.code_regex {
            if !cmd.inline_code.as_ref().is_some_and(|c| re.is_match(&c.code)) {
                return None;
            }
        }
        let mut detail: Option<String> = None;
        let mut via_dynamic = false;
        if !rule.paths_any.is_empty() {
            let skip = rule.sub.len();
            let mut hit = false;
            // Operands, and option values (`curl -T FILE`, `dd of=FILE`).
            let mut ops: Vec<&Word> = argv::operands(&classified).skip(skip).collect();
            // Option values that are paths rather than patterns
            // (`curl -T FILE`, but not `find -path './x/*'`).
            let mut flag_values: Vec<Word> = Vec::new();
            if rule.operand_scope == OperandScope::All {
                ops.extend(classified.iter().filter_map(|a| match a {
                    argv::Arg::Value(w) if !is_glob(&w.text) => Some(*w),
                    _ => None,
                }));
                for a in &classified {
                    if let argv::Arg::Flag(w) = a {
                        if let Some((_, v)) = w.text.split_once('=') {
                            if w.text.starts_with("--") && (v.starts_with('/') || v.starts_with('~') || v.starts_with('@')) {
                                flag_values.push(Word { text: v.to_string(), dynamic: w.dynamic });
                            }
                        }
                    }
                }
            }
            ops.extend(flag_values.iter());
            let unknown_counts = rule.dynamic_paths || rule.paths_any.iter().any(|s| matches!(s, SetRef::Unknown));
            let ops: &[&Word] = match rule.operand_scope {
                OperandScope::All => &ops,
                OperandScope::Last => ops.get(ops.len().saturating_sub(1)..).unwrap_or(&[]),
                OperandScope::ButLast if ops.len() > 1 => &ops[..ops.len() - 1],
                OperandScope::ButLast => &[],
            };
            for w in ops.iter().copied() {
                match resolve(w, cmd, env).or_else(|| dynamic_as_glob(w, env)) {
                    Some(abs) => {
                        if rule.paths_any.iter().any(|s| self.set_matches(s, &abs, env)) {
                            if w.dynamic {
                                // matched only through a value unknown statically
                                detail = Some(format!("{abs} (known only at run time)"));
                                via_dynamic = true;
                            } else {
                                detail = Some(abs);
                                via_dynamic = false;
                            }
                            hit = true;
                            break;
                        }
                        if w.dynamic && unknown_counts {
                            detail.get_or_insert_with(|| format!("{} (known only at run time)", w.text));
                            via_dynamic = true;
                            hit = true;
                        }
                    }
                    None if unknown_counts => {
                        detail.get_or_insert_with(|| format!("{} (known only at run time)", w.text));
                        via_dynamic = true;
                        hit = true;
                    }
                    None => {}
                }
            }
            if !hit {
                return None;
            }

        }
        if !rule.redirect_to.is_empty() || !rule.redirect_from.is_empty() {
            let found = cmd.redirects.iter().find(|r| {
                let sets = match r.kind {
                    RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite => &rule.redirect_to,
                    RedirectKind::Read => &rule.redirect_from,
                    RedirectKind::Dup => return false,
                };
                !r.target.dynamic && sets.iter().any(|s| self.set_matches(s, &r.target.text, env))
            });
            detail = Some(found?.target.text.clone());
        }
        let mut verdict = rule.common.verdict;
        if via_dynamic && verdict == Verdict::Block {
            verdict = Verdict::Escalate;
        }
        let reason = rule
            .common
            .reason
            .replace("{path}", detail.as_deref().unwrap_or("its target"))
            .replace("{program}", &cmd.program);
        Some(Finding { rule: rule.common.id.clone(), class: rule.common.class, verdict, reason })
    }

    fn set_matches(&self, set: &SetRef, abs: &str, env: &Env) -> bool {
        match set {
            SetRef::Unknown => false,
            SetRef::WorkspaceRoot => candidates(abs).iter().any(|c| c == &env.workspace || (c != "/" && crate::paths::is_within(&env.workspace, c))),
            SetRef::OutsideWorkspace => candidates(abs).iter().any(|c| !env.in_workspace(c) && !TEMP_DIRS.iter().any(|t| crate::paths::is_within(c, t))),
            SetRef::Pattern(p) => candidates(abs).iter().any(|c| p.matches(c, env)),
            SetRef::Named(name) => {
                let Some(set) = self.sets.get(name) else { return false };
                let excluded = |c: &str| set.exclude.iter().any(|p| p.matches(c, env));
                if candidates(abs).iter().any(|c| !excluded(c) && set.patterns.iter().any(|p| p.matches(c, env))) {
                    return true;
                }
                if !is_glob(abs) {
                    return false;
                }
                // A glob argument: does it cover a concrete member, or a probe?
                let base = abs.rsplit_once('/').map(|(b, _)| if b.is_empty() { "/" } else { b }).unwrap_or("/");
                for p in &set.patterns {
                    let t = p.text();
                    if !is_glob(t) {
                        let concrete = if t == "~" { env.home.clone() } else if let Some(r) = t.strip_prefix("~/") { format!("{}/{r}", env.home) } else { t.to_string() };
                        if glob_covers(abs, &concrete) {
                            return true;
                        }
                    }
                }
                // A probe counts when the shell could expand the glob to it (a
                // leading `*` never matches a dot file) and the glob aims at it:
                // it shares the probe's first letters (`.en?`, `cred*`) or
                // lists a directory that holds secrets (`~/.ssh/*`).
                let last = abs.rsplit('/').next().unwrap_or(abs);
                let literal: &str = &last[..last.find(['*', '?', '[']).unwrap_or(last.len())];
                let secret_dir = set.patterns.iter().any(|p| p.literal_dir(env).as_deref() == Some(base));
                set.probes.iter().any(|probe| {
                    let cand = format!("{}/{probe}", base.trim_end_matches('/'));
                    let dot_ok = !probe.starts_with('.') || last.starts_with('.');
                    let aimed = secret_dir || (!literal.is_empty() && probe.starts_with(literal));
                    dot_ok && aimed && glob_covers(abs, &cand) && set.patterns.iter().any(|p| p.matches(&cand, env))
                })
            }
        }
    }

    /// The most severe finding for a file tool touching `abs` (resolved).
    pub fn match_path(&self, access: Access, abs: &str, env: &Env) -> Option<Finding> {
        self.paths
            .iter()
            .filter(|r| r.access.contains(&access) && r.paths.iter().any(|s| self.set_matches(s, abs, env)))
            .map(|r| Finding { rule: r.common.id.clone(), class: r.common.class, verdict: r.common.verdict, reason: r.common.reason.replace("{path}", abs) })
            .max_by_key(Finding::severity)
    }

    /// The finding for an action tool call: the most specific matching rule
    /// (an exact action beats a prefix, which beats `*`), then the most severe.
    pub fn match_action(&self, kind: ToolKind, action: Option<&str>) -> Option<Finding> {
        let tool = kind.as_str();
        self.actions
            .iter()
            .filter(|r| r.tools.iter().any(|t| t == tool))
            .filter_map(|r| r.actions.iter().filter_map(|a| action_specificity(a, action)).max().map(|s| (s, r)))
            .max_by_key(|(s, r)| (*s, r.common.verdict, r.common.class))
            .map(|(_, r)| Finding {
                rule: r.common.id.clone(),
                class: r.common.class,
                verdict: r.common.verdict,
                reason: r.common.reason.replace("{action}", action.unwrap_or("no action")),
            })
    }

    /// The most severe finding for fetching or opening `url`.
    pub fn match_url(&self, url: &str) -> Option<Finding> {
        let lower = url.trim().to_ascii_lowercase();
        let hosts: Vec<String> = crate::policy::url_hosts(url);
        self.urls
            .iter()
            .filter(|r| {
                r.hosts.iter().any(|h| match h.strip_suffix(':') {
                    Some(scheme) => lower.starts_with(&format!("{scheme}:")),
                    None => hosts.iter().any(|host| glob_covers(h, host) || h == host),
                })
            })
            .map(|r| Finding { rule: r.common.id.clone(), class: r.common.class, verdict: r.common.verdict, reason: r.common.reason.replace("{url}", url) })
            .max_by_key(Finding::severity)
    }

    /// Checks every rule's examples and counter-examples; returns one line per
    /// failure (empty when all hold). `env` is the context examples assume.
    pub fn self_test(&self, env: &Env) -> Vec<String> {
        let mut failures = Vec::new();
        for rule in &self.exec {
            for ex in &rule.examples {
                let a = crate::shell::analyze(ex, env);
                let hits: Vec<Finding> = a.commands.iter().flat_map(|c| self.match_command(c, env)).collect();
                match hits.iter().find(|f| f.rule == rule.common.id) {
                    None => failures.push(format!("{}: example {ex:?} does not match", rule.common.id)),
                    Some(f) if f.verdict != rule.common.verdict => {
                        failures.push(format!("{}: example {ex:?} gives {} instead of {}", rule.common.id, f.verdict, rule.common.verdict))
                    }
                    Some(_) => {}
                }
            }
            for ex in &rule.counter_examples {
                let a = crate::shell::analyze(ex, env);
                if a.commands.iter().any(|c| self.match_command(c, env).iter().any(|f| f.rule == rule.common.id)) {
                    failures.push(format!("{}: counter-example {ex:?} matches", rule.common.id));
                }
            }
        }
        for rule in &self.paths {
            for (list, want) in [(&rule.examples, true), (&rule.counter_examples, false)] {
                for ex in list {
                    let abs = env.resolve(ex);
                    let got = rule.paths.iter().any(|s| self.set_matches(s, &abs, env));
                    if got != want {
                        failures.push(format!("{}: path {ex:?} {}", rule.common.id, if want { "does not match" } else { "matches" }));
                    }
                }
            }
        }
        for rule in &self.actions {
            for (list, want) in [(&rule.examples, true), (&rule.counter_examples, false)] {
                for ex in list {
                    let action = (ex != "-").then_some(ex.as_str());
                    let got = rule.actions.iter().any(|a| action_matches(a, action));
                    if got != want {
                        failures.push(format!("{}: action {ex:?} {}", rule.common.id, if want { "does not match" } else { "matches" }));
                    }
                }
            }
        }
        for rule in &self.urls {
            for (list, want) in [(&rule.examples, true), (&rule.counter_examples, false)] {
                for ex in list {
                    let got = self.match_url(ex).is_some_and(|f| f.rule == rule.common.id);
                    if got != want {
                        failures.push(format!("{}: url {ex:?} {}", rule.common.id, if want { "does not match" } else { "matches" }));
                    }
                }
            }
        }
        failures
    }
}

fn common(pack: &str, id: &str, class: &str, verdict: Option<&str>, reason: &str) -> Result<Common, String> {
    let class = RiskClass::parse(class).ok_or_else(|| format!("rule {id}: class must be R0..R4, not {class:?}"))?;
    let verdict = match verdict {
        None if class >= RiskClass::R3 => Verdict::Escalate,
        None => Verdict::Allow,
        Some("block") => Verdict::Block,
        Some("escalate") => Verdict::Escalate,
        Some("allow") => Verdict::Allow,
        Some(other) => return Err(format!("rule {id}: verdict must be block, escalate or allow, not {other:?}")),
    };
    Ok(Common { id: format!("{pack}.{id}"), class, verdict, reason: reason.to_string() })
}

fn action_matches(pattern: &str, action: Option<&str>) -> bool {
    action_specificity(pattern, action).is_some()
}

/// How specifically `pattern` matches: 2 exact, 1 prefix, 0 `*`.
fn action_specificity(pattern: &str, action: Option<&str>) -> Option<u8> {
    match (pattern, action) {
        ("*", _) => Some(0),
        ("-", None) => Some(2),
        (_, None) => None,
        (p, Some(a)) => {
            let a = a.to_ascii_lowercase();
            match p.strip_suffix('*') {
                Some(prefix) => a.starts_with(prefix).then_some(1),
                None => (a == p).then_some(2),
            }
        }
    }
}

/// A partly unknown absolute path as a glob: `/proc/$(pgrep x)/environ` →
/// `/proc/*/environ`. Only for words that start with a literal `/` or `~`,
/// where the unknown parts cannot move the path elsewhere.
fn dynamic_as_glob(w: &Word, env: &Env) -> Option<String> {
    static DYN: OnceLock<Regex> = OnceLock::new();
    if !w.dynamic || !(w.text.starts_with('/') || w.text.starts_with("~/")) || w.text.starts_with("~/$") {
        return None;
    }
    let re = DYN.get_or_init(|| Regex::new(r"\$\([^)]*\)|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$.|`[^`]*`").expect("valid regex"));
    let glob = re.replace_all(&w.text, "*");
    Some(env.resolve(&glob))
}

/// An operand as an absolute path; `None` when its value is unknown.
fn resolve(w: &Word, cmd: &SimpleCommand, env: &Env) -> Option<String> {
    if w.dynamic {
        return None;
    }
    let t = w.text.as_str();
    // `of=/dev/sda`, `file=@.env`: the value is the path; `@file` is curl's
    // "read this file".
    let t = match t.split_once('=') {
        Some((k, v)) if !k.contains('/') && (v.starts_with('/') || v.starts_with('~') || v.starts_with('@')) => v,
        _ => t,
    };
    let t = t.strip_prefix('@').filter(|r| !r.is_empty() && *r != "-").unwrap_or(t);
    let absolute = t.starts_with('/') || t.starts_with('~') || t.starts_with("$HOME") || t.starts_with("${HOME}");
    match (&cmd.cwd, absolute) {
        (_, true) => Some(env.resolve(t)),
        (Some(cwd), false) => Some(env.with_cwd(cwd).resolve(t)),
        (None, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_packs_pass_their_own_examples() {
        let env = Env::new("/home/dev", "/home/dev/proj");
        let failures = Catalogue::builtin().self_test(&env);
        assert!(failures.is_empty(), "{} failing examples:\n{}", failures.len(), failures.join("\n"));
    }
}
