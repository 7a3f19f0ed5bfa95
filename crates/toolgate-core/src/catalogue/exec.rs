//! Matching exec rules against one simple command. Everything derived from
//! the command (classified argv, joined text, resolved operands, set
//! membership) is computed at most once per command, whatever the number of
//! rules that look at it.

use super::argv::{self, Arg};
use super::automata::Pattern;
use super::remote;
use super::rules::{BranchUse, ExecRule, OperandScope, SetRef};
use super::sets::candidates;
use super::{Catalogue, Finding};
use crate::model::Verdict;
use crate::paths::Env;
use crate::shell::{RedirectKind, SimpleCommand, Word};
use crate::wildcard::is_glob;
use regex::Regex;
use std::cell::{OnceCell, RefCell};
use std::sync::OnceLock;

const TEMP_DIRS: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// An operand as a path: resolved, a glob standing for an unknown part,
/// or unknown.
#[derive(Debug, Clone)]
enum Resolved {
    Path(String),
    /// Partly unknown (`/proc/$(pgrep x)/environ` → `/proc/*/environ`).
    Partial(String),
    Unknown,
    /// A file on another machine (`user@host:path` to scp, a URL to
    /// curl): in no local set, and not unknown either.
    Remote,
}

/// One command, with what rules need from it computed lazily.
pub(super) struct CmdView<'a> {
    pub cmd: &'a SimpleCommand,
    pub env: &'a Env,
    /// The policy's protected git branches.
    pub branches: &'a [String],
    classified: Vec<Arg<'a>>,
    joined_args: OnceCell<String>,
    joined_operands: OnceCell<String>,
    args_from_subcommand: OnceCell<Option<String>>,
    /// Operands, option values that are paths, and `--opt=/path` values.
    path_words: OnceCell<Vec<(Word, bool)>>,
    resolved: OnceCell<Vec<Resolved>>,
    memo: RefCell<Vec<(usize, usize, bool)>>,
}

impl<'a> CmdView<'a> {
    pub(super) fn new(
        cat: &Catalogue,
        cmd: &'a SimpleCommand,
        env: &'a Env,
        branches: &'a [String],
    ) -> CmdView<'a> {
        let opts = super::lookup(cat.options, &cmd.program).unwrap_or(&[]);
        CmdView {
            cmd,
            env,
            branches,
            classified: argv::classify(cmd.args(), opts),
            joined_args: OnceCell::new(),
            joined_operands: OnceCell::new(),
            args_from_subcommand: OnceCell::new(),
            path_words: OnceCell::new(),
            resolved: OnceCell::new(),
            memo: RefCell::new(Vec::new()),
        }
    }

    fn joined_args(&self) -> &str {
        self.joined_args.get_or_init(|| {
            self.cmd
                .args()
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    /// The arguments from the first operand on, when options come before
    /// it (`-C repo checkout .` → `checkout .`); `None` otherwise.
    fn args_from_subcommand(&self) -> Option<&str> {
        self.args_from_subcommand
            .get_or_init(|| {
                let first = self
                    .classified
                    .iter()
                    .position(|a| matches!(a, Arg::Operand(_)))?;
                (first > 0).then(|| {
                    self.classified[first..]
                        .iter()
                        .map(|a| match a {
                            Arg::Operand(w) | Arg::Flag(w) | Arg::Value(w) => w.text.as_str(),
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
            })
            .as_deref()
    }

    fn joined_operands(&self) -> &str {
        self.joined_operands.get_or_init(|| {
            argv::operands(&self.classified)
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    /// Words that may name paths, each marked `true` when it is an operand.
    fn path_words(&self) -> &[(Word, bool)] {
        self.path_words.get_or_init(|| {
            let mut out: Vec<(Word, bool)> = Vec::new();
            // sed's script (`s/a/b/g`) is not a file: the shell analyzer
            // says which words are surely scripts (none when unsure).
            let scripts = match self.cmd.program.as_str() {
                "sed" | "gsed" => crate::shell::sed_script_args(self.cmd.args()),
                _ => Vec::new(),
            };
            let args = self.cmd.args();
            for a in &self.classified {
                let (Arg::Operand(w) | Arg::Value(w) | Arg::Flag(w)) = a;
                if scripts.iter().any(|&i| std::ptr::eq(&args[i], *w)) {
                    continue;
                }
                match a {
                    Arg::Operand(w) => out.push(((*w).clone(), true)),
                    Arg::Value(w) if !is_glob(&w.text) => out.push(((*w).clone(), false)),
                    Arg::Flag(w) => {
                        if let Some((_, v)) = w.text.split_once('=')
                            && w.text.starts_with("--")
                            && (v.starts_with('/') || v.starts_with('~') || v.starts_with('@'))
                        {
                            out.push((
                                Word {
                                    text: v.to_string(),
                                    dynamic: w.dynamic,
                                },
                                false,
                            ));
                        }
                    }
                    Arg::Value(_) => {}
                }
            }
            out
        })
    }

    fn resolved(&self) -> &[Resolved] {
        self.resolved.get_or_init(|| {
            self.path_words()
                .iter()
                .map(|(w, operand)| resolve(w, *operand, self.cmd, self.env))
                .collect()
        })
    }

    /// Whether path word `i` is in `set` (memoized per named set).
    fn in_set(&self, cat: &Catalogue, i: usize, set: &SetRef, set_key: usize) -> bool {
        if let Some(&(_, _, v)) = self
            .memo
            .borrow()
            .iter()
            .find(|(a, b, _)| *a == i && *b == set_key)
        {
            return v;
        }
        let v = match &self.resolved()[i] {
            Resolved::Path(p) | Resolved::Partial(p) => cat.set_matches(set, p, self.env),
            Resolved::Unknown | Resolved::Remote => false,
        };
        if let SetRef::Set(_) = set {
            self.memo.borrow_mut().push((i, set_key, v));
        }
        v
    }
}

impl Catalogue {
    pub(super) fn exec_rule_matches(&self, rule: &ExecRule, view: &CmdView) -> Option<Finding> {
        let cmd = view.cmd;
        if rule
            .programs_not
            .binary_search(&cmd.program.as_str())
            .is_ok()
        {
            return None;
        }
        if rule.privileged.is_some_and(|p| cmd.privileged != p) {
            return None;
        }
        if rule.recursive_function
            && !cmd
                .via
                .iter()
                .any(|v| v.wrapper.strip_prefix("function ") == Some(cmd.program.as_str()))
        {
            return None;
        }
        if !rule
            .via_all
            .iter()
            .all(|v| cmd.via.iter().any(|w| w.wrapper == *v))
        {
            return None;
        }
        if rule.program_from_stdin && !program_from_stdin(view) {
            return None;
        }
        if rule.remote_operand
            && !argv::operands(&view.classified)
                .any(|w| super::remote::reaches_another_machine(&w.text, w.dynamic))
        {
            return None;
        }
        if let Some(how) = rule.protected_branch
            && !uses_protected_branch(rule, how, view)
        {
            return None;
        }
        if !rule.cwd_in.is_empty()
            && !cmd.cwd.as_deref().is_some_and(|cwd| {
                rule.cwd_in
                    .iter()
                    .any(|s| self.set_matches(s, cwd, view.env))
            })
        {
            return None;
        }
        if !rule.stdin_from.is_empty()
            && !cmd
                .stdin_from
                .iter()
                .any(|s| rule.stdin_from.iter().any(|r| r == s))
        {
            return None;
        }
        if !rule.sub.is_empty() {
            let mut ops = argv::operands(&view.classified);
            for alternatives in rule.sub {
                let w = ops.next()?;
                if w.dynamic || !alternatives.contains(&w.text.as_str()) {
                    return None;
                }
            }
        }
        if !rule.flags_any.is_empty()
            && !rule
                .flags_any
                .iter()
                .any(|f| argv::has_flag(&view.classified, f))
        {
            return None;
        }
        if !rule
            .flags_all
            .iter()
            .all(|f| argv::has_flag(&view.classified, f))
        {
            return None;
        }
        if rule
            .flags_none
            .iter()
            .any(|f| argv::has_flag(&view.classified, f))
        {
            return None;
        }
        if rule.no_operands && argv::operands(&view.classified).next().is_some() {
            return None;
        }
        if let Some(re) = rule.arg_regex.map(|i| self.pattern(i))
            && !cmd.args().iter().any(|w| re.is_match(&w.text))
        {
            return None;
        }
        let pattern = |i: Option<u16>| i.map(|i| self.pattern(i));
        if let Some(must_not) = pattern(rule.args_not_regex)
            && must_not.is_match(view.joined_args())
        {
            return None;
        }
        // A regex anchored at the subcommand (`^apply`) also holds past
        // global options before it (`terraform -chdir=infra apply`,
        // `git -C repo checkout .`).
        if let Some(must) = pattern(rule.args_regex)
            && !must.is_match(view.joined_args())
            && !view
                .args_from_subcommand()
                .is_some_and(|t| must.is_match(t))
        {
            return None;
        }
        if !regex_pair_holds(
            pattern(rule.operands_regex),
            pattern(rule.operands_not_regex),
            || view.joined_operands(),
        ) {
            return None;
        }
        if let Some(re) = pattern(rule.code_regex)
            && !cmd
                .inline_code
                .as_ref()
                .is_some_and(|c| re.is_match(&c.code))
        {
            return None;
        }
        let mut detail: Option<String> = None;
        let mut via_dynamic = false;
        if !rule.paths_any.is_empty() {
            let (hit, d, dynamic) = self.paths_hit(rule, view)?;
            debug_assert!(hit);
            detail = Some(d);
            via_dynamic = dynamic;
        }
        if !rule.redirect_to.is_empty() || !rule.redirect_from.is_empty() {
            let found = cmd.redirects.iter().find(|r| {
                let sets = match r.kind {
                    RedirectKind::Append if rule.redirect_overwrites => return false,
                    RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite => {
                        &rule.redirect_to
                    }
                    RedirectKind::Read => &rule.redirect_from,
                    RedirectKind::Dup => return false,
                };
                !r.target.dynamic
                    && sets
                        .iter()
                        .any(|s| self.set_matches(s, &r.target.text, view.env))
            });
            detail = Some(found?.target.text.clone());
        }
        let mut finding = rule
            .common
            .finding("{path}", detail.as_deref().unwrap_or("its target"));
        finding.reason = finding.reason.replace("{program}", &cmd.program);
        if via_dynamic && finding.verdict == Verdict::Block {
            // only a value unknown statically made it catastrophic
            finding.verdict = Verdict::Escalate;
        }
        Some(finding)
    }

    /// The first path word in one of the rule's sets: (hit, detail, matched
    /// only through an unknown value).
    fn paths_hit(&self, rule: &ExecRule, view: &CmdView) -> Option<(bool, String, bool)> {
        let words = view.path_words();
        let operand_idx: Vec<usize> = (0..words.len())
            .filter(|&i| words[i].1)
            .skip(rule.sub.len())
            .collect();
        // `cp|mv|ln|install -t DIR SRC…`: the destination is an option's
        // value and every operand is a source, so "the last operand" is
        // no destination and "all but the last" misses a source. Both
        // scopes then look at every path word: stricter, never looser.
        let target_dir = matches!(view.cmd.program.as_str(), "cp" | "mv" | "ln" | "install")
            && ["-t", "--target-directory"]
                .iter()
                .any(|f| argv::has_flag(&view.classified, f));
        let idx: Vec<usize> = match rule.operand_scope {
            OperandScope::All => (0..words.len())
                .filter(|i| !words[*i].1 || operand_idx.contains(i))
                .collect(),
            OperandScope::Last | OperandScope::ButLast if target_dir => (0..words.len())
                .filter(|i| !words[*i].1 || operand_idx.contains(i))
                .collect(),
            OperandScope::Last => operand_idx.last().copied().into_iter().collect(),
            OperandScope::ButLast if operand_idx.len() > 1 => {
                operand_idx[..operand_idx.len() - 1].to_vec()
            }
            OperandScope::ButLast => Vec::new(),
        };
        let unknown_counts =
            rule.dynamic_paths || rule.paths_any.iter().any(|s| matches!(s, SetRef::Unknown));
        let mut unknown_hit: Option<String> = None;
        for i in idx {
            let w = &words[i].0;
            let resolved = &view.resolved()[i];
            let matched = rule.paths_any.iter().enumerate().any(|(k, s)| {
                let key = match s {
                    SetRef::Set(n) => usize::from(*n),
                    _ => usize::MAX - k,
                };
                view.in_set(self, i, s, key)
            });
            match resolved {
                Resolved::Path(p) if matched => return Some((true, p.clone(), false)),
                Resolved::Partial(p) if matched => {
                    return Some((true, format!("{p} (known only at run time)"), true));
                }
                Resolved::Partial(_) | Resolved::Unknown if unknown_counts => {
                    unknown_hit
                        .get_or_insert_with(|| format!("{} (known only at run time)", w.text));
                }
                _ => {}
            }
        }
        unknown_hit.map(|d| (true, d, true))
    }

    /// Whether a resolved path (or glob) is in a set.
    pub(super) fn set_matches(&self, set: &SetRef, abs: &str, env: &Env) -> bool {
        match set {
            SetRef::Unknown => false,
            SetRef::WorkspaceRoot => candidates(abs).iter().any(|c| {
                c == &env.workspace || (c != "/" && crate::paths::is_within(&env.workspace, c))
            }),
            SetRef::OutsideWorkspace => candidates(abs).iter().any(|c| {
                // Temp-dir leniency is for the temp dirs, never for a home
                // that lies in one.
                !env.in_workspace(c)
                    && (env.home_of(c).is_some()
                        || !TEMP_DIRS.iter().any(|t| crate::paths::is_within(c, t)))
            }),
            SetRef::OtherUsers => candidates(abs).iter().any(|c| {
                !env.in_workspace(c)
                    && env
                        .home_of(c)
                        .is_some_and(|h| h != env.home && !SHARED_HOMES.iter().any(|s| h == *s))
            }),
            SetRef::Set(i) => self.set(*i).matches_arg(abs, env),
        }
    }
}

/// Whether a shell or interpreter runs what it reads on stdin: it was given
/// no code on its command line (inline code, `-c`, `-m module`) and no
/// script to run, or was told to read its script from stdin (`-`, `-s`) or
/// from a process substitution.
/// Whether the command uses one of the policy's protected branches the
/// way the rule says (past its `sub` words).
fn uses_protected_branch(rule: &ExecRule, how: BranchUse, view: &CmdView) -> bool {
    let past_sub: Vec<&Word> = argv::operands(&view.classified)
        .skip(rule.sub.len())
        .collect();
    let flag = |f: &str| argv::has_flag(&view.classified, f);
    let force = ["-f", "--force", "--force-with-lease", "--force-if-includes"]
        .into_iter()
        .any(flag);
    let delete = flag("-d") || flag("--delete");
    super::branch::uses_protected(how, &past_sub, force, delete, view.branches)
}

fn program_from_stdin(view: &CmdView) -> bool {
    if view.cmd.inline_code.is_some()
        || argv::has_flag(&view.classified, "-c")
        || argv::has_flag(&view.classified, "-m")
    {
        return false;
    }
    argv::has_flag(&view.classified, "-s")
        || argv::operands(&view.classified).next().is_none_or(|w| {
            // `bash <(curl …)`: the script is the pipe a process
            // substitution opens.
            w.text == "-" || w.text == "/dev/stdin" || w.text.starts_with("/dev/fd/")
        })
}

/// Homes that belong to no person: tools installed for every user.
const SHARED_HOMES: &[&str] = &["/home/linuxbrew", "/Users/Shared"];

/// A `*_regex` / `*_not_regex` pair over one text, computed only when a
/// regex is there to use it: the first must match, the second must not.
fn regex_pair_holds<'t>(
    must: Option<&Pattern>,
    must_not: Option<&Pattern>,
    text: impl FnOnce() -> &'t str,
) -> bool {
    if must.is_none() && must_not.is_none() {
        return true;
    }
    let text = text();
    must.is_none_or(|r| r.is_match(text)) && !must_not.is_some_and(|r| r.is_match(text))
}

/// A path word as an absolute path. Only an operand may name a file on
/// another machine: an option's value (`--log-file x:y`, `-i host:key`) is
/// a local name whatever it looks like.
fn resolve(w: &Word, operand: bool, cmd: &SimpleCommand, env: &Env) -> Resolved {
    if w.dynamic {
        return dynamic_as_glob(w, env)
            .map(Resolved::Partial)
            .unwrap_or(Resolved::Unknown);
    }
    let t = w.text.as_str();
    // `of=/dev/sda`, `file=@.env`: the value is the path; `@file` is curl's
    // "read this file".
    let t = match t.split_once('=') {
        Some((k, v))
            if !k.contains('/')
                && (v.starts_with('/') || v.starts_with('~') || v.starts_with('@')) =>
        {
            v
        }
        _ => t,
    };
    let t = t
        .strip_prefix('@')
        .filter(|r| !r.is_empty() && *r != "-")
        .unwrap_or(t);
    let this_machine;
    let t = match operand.then(|| remote::classify(&cmd.program, t)) {
        Some(remote::Operand::Remote) => return Resolved::Remote,
        Some(remote::Operand::ThisMachine(path)) => {
            this_machine = path;
            this_machine.as_str()
        }
        Some(remote::Operand::Local) | None => t,
    };
    let absolute = t.starts_with('/')
        || t.starts_with('~')
        || t.starts_with("$HOME")
        || t.starts_with("${HOME}");
    match (&cmd.cwd, absolute) {
        (_, true) => Resolved::Path(env.resolve(t)),
        (Some(cwd), false) => Resolved::Path(env.resolve_from(cwd, t)),
        (None, false) => Resolved::Unknown,
    }
}

/// A partly unknown absolute path as a glob: `/proc/$(pgrep x)/environ` →
/// `/proc/*/environ`. Only for words that start with a literal `/` or `~/`,
/// where the unknown parts cannot move the path's start elsewhere.
fn dynamic_as_glob(w: &Word, env: &Env) -> Option<String> {
    static DYN: OnceLock<Regex> = OnceLock::new();
    if !(w.text.starts_with('/') || w.text.starts_with("~/")) || w.text.starts_with("~/$") {
        return None;
    }
    let re = DYN.get_or_init(|| {
        Regex::new(r"\$\([^)]*\)|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$.|`[^`]*`")
            .expect("valid regex")
    });
    Some(env.resolve(&re.replace_all(&w.text, "*")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `host:path` is remote only as scp's operand: as an option's value it
    /// is a local name, judged where it lies.
    #[test]
    fn only_an_operand_names_a_remote_file() {
        let env = Env::new("/home/dev", "/home/dev/proj");
        let analysis = crate::shell::analyze("scp -F h:cfg a user@h:/srv", &env);
        let cmd = &analysis.commands[0];
        let word = Word::lit("user@h:/srv");
        assert!(matches!(resolve(&word, true, cmd, &env), Resolved::Remote));
        match resolve(&word, false, cmd, &env) {
            Resolved::Path(p) => assert_eq!(p, "/home/dev/proj/user@h:/srv"),
            other => panic!("a value was read as {other:?}"),
        }
    }
}
