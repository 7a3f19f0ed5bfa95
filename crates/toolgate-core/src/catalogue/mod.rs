//! The catalogue of dangerous operations, kept as data: named rule packs in
//! `packs/*.toml`, checked and compiled by the build (`build.rs`, the
//! `toolgate-packs` crate) into static tables and automata in the binary,
//! each rule with examples that are checked as tests
//! ([`Catalogue::self_test`]). The engine asks it what a simple command, a
//! path access, an action or a URL is.

pub(crate) mod argv;
mod automata;
mod branch;
mod exec;
mod gate_env;
mod gomod;
mod index_env;
pub(crate) mod remote;
mod rules;
#[cfg(test)]
mod selftest;
pub(crate) mod sets;
mod squat;
mod tables;
#[cfg(test)]
mod tests;

use crate::model::{RiskClass, Verdict};
use crate::normalize::{Access, ToolKind};
use crate::paths::Env;
use crate::shell::SimpleCommand;
use crate::wildcard::path_match as wildcard_match;
use automata::Pattern;
use rules::{ActionRule, ExecRule, PathRule, UrlRule};
use sets::PathSet;

/// A catalogue entry that matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
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
    pub(crate) fn severity(&self) -> (Verdict, RiskClass) {
        (self.verdict, self.class)
    }
}

/// The compiled catalogue: tables the build generated from the packs
/// (`tables.rs`), in the binary.
#[derive(Debug)]
pub(crate) struct Catalogue {
    sets: &'static [PathSet],
    options: &'static [(&'static str, &'static [&'static str])],
    patterns: &'static [Pattern],
    exec: &'static [ExecRule],
    /// Sorted by program: the exec rules that name it.
    by_program: &'static [(&'static str, &'static [u16])],
    any_program: &'static [u16],
    paths: &'static [PathRule],
    actions: &'static [ActionRule],
    urls: &'static [UrlRule],
}

static BUILTIN: Catalogue = Catalogue {
    sets: &tables::SETS,
    options: &tables::OPTIONS,
    patterns: &tables::PATTERNS,
    exec: &tables::EXEC,
    by_program: &tables::BY_PROGRAM,
    any_program: &tables::ANY_PROGRAM,
    paths: &tables::PATH_RULES,
    actions: &tables::ACTION_RULES,
    urls: &tables::URL_RULES,
};

/// Looks `key` up in a table sorted by its first column.
fn lookup<T: Copy>(table: &'static [(&'static str, T)], key: &str) -> Option<T> {
    table
        .binary_search_by(|(k, _)| (*k).cmp(key))
        .ok()
        .map(|i| table[i].1)
}

impl Catalogue {
    /// The catalogue built from the shipped packs: static data, nothing is
    /// built when a process starts.
    pub(crate) fn builtin() -> &'static Catalogue {
        &BUILTIN
    }

    /// Reads every automaton and compiles every pattern's Unicode form; an
    /// error names what does not load (the unit tests run it on the built-in
    /// catalogue).
    #[cfg(test)]
    pub(crate) fn compile_all(&self) -> Result<(), String> {
        for p in self.patterns {
            p.check()?;
        }
        for s in self.sets {
            s.check()
                .map_err(|e| format!("set {}: {e}", s.name().unwrap_or("(inline)")))?;
        }
        Ok(())
    }

    fn pattern(&self, i: u16) -> &'static Pattern {
        &self.patterns[usize::from(i)]
    }

    fn set(&self, i: u16) -> &'static PathSet {
        &self.sets[usize::from(i)]
    }

    /// Whether some rule names `program` (the catalogue describes it).
    pub(crate) fn knows(&self, program: &str) -> bool {
        lookup(self.by_program, program).is_some()
    }

    /// Every finding for one simple command, most severe first.
    /// `branches` are the policy's protected git branches.
    pub(crate) fn match_command(
        &self,
        cmd: &SimpleCommand,
        env: &Env,
        branches: &[String],
    ) -> Vec<Finding> {
        let view = exec::CmdView::new(self, cmd, env, branches);
        let specific = lookup(self.by_program, &cmd.program).unwrap_or(&[]);
        let mut out: Vec<Finding> = specific
            .iter()
            .chain(self.any_program)
            .filter_map(|&i| self.exec_rule_matches(&self.exec[usize::from(i)], &view))
            .collect();
        out.extend(squat::check(cmd));
        out.extend(gomod::check(cmd));
        out.extend(index_env::check(cmd));
        out.extend(gate_env::check(cmd));
        if specific.is_empty() {
            out.extend(program_verb(&cmd.program));
        }
        out.sort_by_key(|f| std::cmp::Reverse(f.severity()));
        out
    }

    /// The most severe finding for a file tool touching `abs` (resolved).
    pub(crate) fn match_path(&self, access: Access, abs: &str, env: &Env) -> Option<Finding> {
        self.paths
            .iter()
            .filter(|r| {
                r.access.contains(&access) && r.paths.iter().any(|s| self.set_matches(s, abs, env))
            })
            .map(|r| r.common.finding("{path}", abs))
            .max_by_key(Finding::severity)
    }

    /// The finding for an action tool call: the most specific matching rule
    /// (an exact action beats a prefix, which beats `*`), then the most severe.
    pub(crate) fn match_action(&self, kind: ToolKind, action: Option<&str>) -> Option<Finding> {
        let tool = kind.as_str();
        self.actions
            .iter()
            .filter(|r| r.tools.contains(&tool))
            .filter_map(|r| {
                r.actions
                    .iter()
                    .filter_map(|a| action_specificity(a, action))
                    .max()
                    .map(|s| (s, r))
            })
            .max_by_key(|(s, r)| (*s, r.common.verdict, r.common.class))
            .map(|(_, r)| r.common.finding("{action}", action.unwrap_or("no action")))
    }

    /// The most severe finding for fetching or opening `url`.
    pub(crate) fn match_url(&self, url: &str) -> Option<Finding> {
        let lower = url.trim().to_ascii_lowercase();
        let hosts: Vec<String> = crate::url::hosts(url);
        self.urls
            .iter()
            .filter(|r| {
                r.hosts.iter().any(|h| match h.strip_suffix(':') {
                    Some(scheme) => lower.starts_with(&format!("{scheme}:")),
                    None => hosts
                        .iter()
                        .any(|host| h == host || wildcard_match(h, host)),
                })
            })
            .map(|r| r.common.finding("{url}", url))
            .max_by_key(Finding::severity)
    }
}

/// The finding for a program the catalogue does not describe whose name
/// has two or more words, one a destructive verb (`kafka-delete-records.sh`,
/// `drop_all_tables`); a lone `reset` is the terminal command. A name with
/// no separator is one word and is passed over without a copy.
fn program_verb(program: &str) -> Option<Finding> {
    if !program.contains(['-', '_', '.']) && !program.contains(char::is_uppercase) {
        return None;
    }
    let words: Vec<String> = crate::normalize::name_words(program)
        .into_iter()
        .filter(|w| !matches!(w.as_str(), "sh" | "py" | "rb" | "pl" | "js"))
        .collect();
    let verb = crate::meaning::destructive_verb(&words)?;
    (words.len() >= 2).then(|| Finding {
        rule: "verbs.destructive-program-name".to_string(),
        class: RiskClass::R3,
        verdict: Verdict::Escalate,
        reason: format!(
            "runs {program}, whose name says it does `{verb}`; toolgate has no finer description of it"
        ),
    })
}

/// How specifically `pattern` matches an action: 2 exact, 1 prefix, 0 `*`;
/// `-` stands for a call without an action.
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
