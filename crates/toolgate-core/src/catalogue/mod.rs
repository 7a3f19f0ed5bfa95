//! The catalogue of dangerous operations, kept as data: named rule packs in
//! `packs/*.toml`, compiled once, each rule with examples that are checked as
//! tests ([`Catalogue::self_test`]). The engine asks it what a simple
//! command, a path access, an action or a URL is.

pub mod argv;
mod compile;
mod exec;
mod model;
mod selftest;
pub mod sets;
mod toml_subset;

use crate::model::{RiskClass, Verdict};
use crate::normalize::{Access, ToolKind};
use crate::paths::Env;
use crate::shell::SimpleCommand;
use compile::{ActionRule, ExecRule, PathRule, UrlRule};
use sets::{PathSet, wildcard_match};
use std::collections::HashMap;
use std::sync::OnceLock;

/// The packs shipped in the binary.
pub const BUILTIN_PACKS: &[(&str, &str)] = &[
    ("sets.toml", include_str!("../../packs/sets.toml")),
    (
        "filesystem.toml",
        include_str!("../../packs/filesystem.toml"),
    ),
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

/// The compiled catalogue.
#[derive(Debug, Default)]
pub struct Catalogue {
    set_names: Vec<String>,
    sets: Vec<PathSet>,
    options: HashMap<String, Vec<String>>,
    exec: Vec<ExecRule>,
    by_program: HashMap<String, Vec<usize>>,
    any_program: Vec<usize>,
    paths: Vec<PathRule>,
    actions: Vec<ActionRule>,
    urls: Vec<UrlRule>,
}

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

    /// Compiles every regex and path set now instead of on first use: a
    /// long-running process may call it at start so no decision pays for
    /// compilation, and an error names a pattern the regex or glob engine
    /// refuses.
    pub fn compile_all(&self) -> Result<(), String> {
        self.exec.iter().try_for_each(|r| r.compile_regexes())?;
        for (name, set) in self.set_names.iter().zip(&self.sets) {
            set.compile().map_err(|e| format!("set {name}: {e}"))?;
        }
        let inline = self
            .exec
            .iter()
            .flat_map(|r| {
                r.paths_any
                    .iter()
                    .chain(&r.redirect_to)
                    .chain(&r.redirect_from)
                    .map(move |s| (&r.common.id, s))
            })
            .chain(
                self.paths
                    .iter()
                    .flat_map(|r| r.paths.iter().map(move |s| (&r.common.id, s))),
            );
        for (id, set) in inline {
            if let compile::SetRef::Inline(s) = set {
                s.compile().map_err(|e| format!("{id}: {e}"))?;
            }
        }
        Ok(())
    }

    /// Every finding for one simple command, most severe first.
    pub fn match_command(&self, cmd: &SimpleCommand, env: &Env) -> Vec<Finding> {
        let view = exec::CmdView::new(self, cmd, env);
        let specific = self
            .by_program
            .get(&cmd.program)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let mut out: Vec<Finding> = specific
            .iter()
            .chain(self.any_program.iter())
            .filter_map(|&i| self.exec_rule_matches(&self.exec[i], &view))
            .collect();
        out.sort_by_key(|f| std::cmp::Reverse(f.severity()));
        out
    }

    /// The most severe finding for a file tool touching `abs` (resolved).
    pub fn match_path(&self, access: Access, abs: &str, env: &Env) -> Option<Finding> {
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
    pub fn match_action(&self, kind: ToolKind, action: Option<&str>) -> Option<Finding> {
        let tool = kind.as_str();
        self.actions
            .iter()
            .filter(|r| r.tools.iter().any(|t| t == tool))
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
    pub fn match_url(&self, url: &str) -> Option<Finding> {
        let lower = url.trim().to_ascii_lowercase();
        let hosts: Vec<String> = crate::policy::url_hosts(url);
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
