//! Turning pack files into compiled rules.

use super::model::{ExecRuleSpec, PackFile, RuleHeader, SetSpec};
use super::sets::PathSet;
use super::{Catalogue, CatalogueError};
use crate::model::{RiskClass, Verdict};
use crate::normalize::Access;
use regex::Regex;
use std::sync::OnceLock;

/// A regex compiled on first use: a short-lived process (a hook) pays only
/// for the rules it touches, and as little as possible for each.
///
/// Only `is_match` is ever asked of these regexes, and most texts are ASCII,
/// so what is compiled is what answers that fastest to build, with the same
/// answers as the pattern itself:
/// - its search form ([`search_form`]): an anchored regex skips the literal
///   extraction and reverse-search strategies that make up most of the
///   compile time of an unanchored one;
/// - for an ASCII text, the pattern with Unicode off (ASCII classes, ASCII
///   case folding), on bytes: on ASCII text every Unicode class and case
///   fold answers as its ASCII counterpart does (the Unicode-only members,
///   such as `ſ` for `(?i)s`, never occur in it), and no UTF-8 automata are
///   built. Patterns that are not plain ASCII, or that name code points or
///   Unicode properties (`\x`, `\u`, `\p` …), always use the Unicode form.
///
/// The answers are those of the pattern as written for every pattern the
/// regex engine accepts (all shipped ones: a unit test compiles them and
/// compares the forms on the packs' examples and on generated texts).
#[derive(Debug)]
pub(super) struct LazyRegex {
    pattern: String,
    /// For ASCII texts; `None` inside when the pattern has no ASCII form.
    ascii: OnceLock<Option<regex::bytes::Regex>>,
    /// For any text.
    unicode: OnceLock<Regex>,
}

impl LazyRegex {
    /// Keeps the pattern for compiling on first use. Nothing is parsed
    /// here: loading the catalogue is on the path of every short-lived hook
    /// process, and the built-in patterns are all compiled by a unit test
    /// (`compile_all`), so a bad one fails the build's tests instead.
    fn new(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            ascii: OnceLock::new(),
            unicode: OnceLock::new(),
        }
    }

    /// The regex for any text. Every shipped pattern is compiled by a unit
    /// test, so the fallback (a regex that never matches) is unreachable for
    /// them.
    fn unicode(&self) -> &Regex {
        self.unicode.get_or_init(|| {
            search_form(&self.pattern)
                .and_then(|s| Regex::new(&s).ok())
                .or_else(|| Regex::new(&self.pattern).ok())
                .unwrap_or_else(|| Regex::new("$^").expect("trivial regex"))
        })
    }

    /// The regex for ASCII texts, if the pattern has one.
    fn ascii(&self) -> Option<&regex::bytes::Regex> {
        self.ascii
            .get_or_init(|| {
                let p = &self.pattern;
                let plain = p.is_ascii()
                    && !["\\x", "\\u", "\\U", "\\p", "\\P"]
                        .iter()
                        .any(|e| p.contains(e));
                if !plain {
                    return None;
                }
                let form = search_form(p);
                regex::bytes::RegexBuilder::new(form.as_deref().unwrap_or(p))
                    .unicode(false)
                    .build()
                    .ok()
            })
            .as_ref()
    }

    /// Whether the regex matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        if text.is_ascii()
            && let Some(re) = self.ascii()
        {
            return re.is_match(text.as_bytes());
        }
        self.unicode().is_match(text)
    }

    /// Compiles now (the pattern as written, and the forms used); an error
    /// for a pattern the regex engine refuses.
    pub fn compile(&self) -> Result<(), String> {
        Regex::new(&self.pattern).map_err(|e| format!("{}: {e}", self.pattern))?;
        if let Some(s) = search_form(&self.pattern) {
            Regex::new(&s).map_err(|e| format!("{s}: {e}"))?;
        }
        let _ = (self.unicode(), self.ascii());
        Ok(())
    }
}

/// `pattern` rewritten as a search anchored at the start of the text:
/// `\A(?s:.)*?(?:pattern)`, which matches a text exactly when `pattern`
/// matches somewhere in it (the lazy prefix consumes whatever comes before
/// the match; assertions such as `^`, `\b` and `(?m)^` still look at the
/// text itself, and the pattern's own flags stay inside the group).
///
/// `None` when the pattern is used as it is: when every top-level
/// alternative already starts with `^` or `\A` (anchored already: the
/// prefix would only slow matching down); when it is only literals
/// ([`literals_only`]); and whenever its structure is not plainly balanced
/// (stray parentheses, a trailing backslash, verbose mode with its
/// comments), so that wrapping can never turn a pattern the regex engine
/// refuses into one it accepts.
pub(super) fn search_form(pattern: &str) -> Option<String> {
    let b = pattern.as_bytes();
    let mut depth = 0usize;
    // Nesting of `[...]` classes (the regex crate allows nested classes).
    let mut class = 0usize;
    // Whether every top-level alternative seen so far starts anchored.
    let mut anchored = true;
    let mut at_branch_start = true;
    let mut multi_line = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if class > 0 {
            match c {
                b'\\' => i += 1,
                b'[' => {
                    class += 1;
                    i = skip_class_start(b, i + 1);
                    continue;
                }
                b']' => class -= 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        if at_branch_start && depth == 0 {
            // Leading flag groups such as `(?i)` do not unanchor a branch.
            if let Some(end) = flag_group_end(b, i) {
                multi_line |= b[i..end].contains(&b'm');
                if b[i..end].contains(&b'x') {
                    return None;
                }
                i = end;
                continue;
            }
            at_branch_start = false;
            if !(b[i] == b'^' || b[i..].starts_with(b"\\A")) {
                anchored = false;
            }
        }
        match c {
            b'\\' => {
                if i + 1 >= b.len() {
                    return None;
                }
                i += 1;
            }
            b'[' => {
                class = 1;
                i = skip_class_start(b, i + 1);
                continue;
            }
            b'(' => {
                if b.get(i + 1) == Some(&b'?') {
                    let flags_end = b[i + 2..]
                        .iter()
                        .position(|&f| !(f.is_ascii_alphabetic() || f == b'-'))
                        .map_or(b.len(), |p| i + 2 + p);
                    let flags = &b[i + 2..flags_end];
                    if flags.contains(&b'x') {
                        return None;
                    }
                    multi_line |= flags.contains(&b'm');
                }
                depth += 1;
            }
            b')' => {
                depth = depth.checked_sub(1)?;
            }
            b'|' if depth == 0 => at_branch_start = true,
            _ => {}
        }
        i += 1;
    }
    if depth != 0 || class != 0 {
        return None;
    }
    // An empty last alternative (`a|`) matches anywhere: not anchored.
    let anchored = anchored && !at_branch_start && !multi_line;
    (!anchored && !literals_only(b)).then(|| format!("\\A(?s:.)*?(?:{pattern})"))
}

/// Whether the pattern is only literals, grouped and alternated (`NOPASSWD`,
/// `/dev/(tcp|udp)/`): the regex engine answers those with a literal search
/// that is cheaper to build than the search form.
fn literals_only(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => match b.get(i + 1) {
                Some(c) if c.is_ascii_punctuation() => i += 1,
                _ => return false,
            },
            b'(' if b.get(i + 1) == Some(&b'?') => return false,
            b'^' | b'$' | b'.' | b'*' | b'+' | b'?' | b'{' | b'[' => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

/// Past the start of a class body: a `^` and then a `]` there are literal.
fn skip_class_start(b: &[u8], mut i: usize) -> usize {
    if b.get(i) == Some(&b'^') {
        i += 1;
    }
    if b.get(i) == Some(&b']') {
        i += 1;
    }
    i
}

/// The end of a flag group `(?flags)` starting at `i`, if one does.
fn flag_group_end(b: &[u8], i: usize) -> Option<usize> {
    let rest = b.get(i..)?.strip_prefix(b"(?")?;
    let n = rest
        .iter()
        .position(|&f| !(f.is_ascii_alphabetic() || f == b'-'))?;
    (rest[n] == b')').then_some(i + 2 + n + 1)
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
            // The fast reader reads every shipped pack (a unit test checks
            // it reads them as the `toml` crate does); the `toml` crate reads
            // anything else, and says what is wrong with a pack that does
            // not load.
            let fast = super::toml_subset::parse(text)
                .and_then(|t| toml::Value::Table(t).try_into::<PackFile>().ok());
            let file: PackFile = match fast {
                Some(file) => file,
                None => toml::from_str(text).map_err(|e| err(e.to_string()))?,
            };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_forms() {
        let wrapped = |p: &str| format!("\\A(?s:.)*?(?:{p})");
        for p in [
            "fo+", "(^| )rm", "a|^b", "^a|", "[)(]x", r"\(\w", "(?i)key", "(?m)^a",
        ] {
            assert_eq!(search_form(p), Some(wrapped(p)), "{p}");
        }
        // Anchored already, or only literals: used as written.
        for p in [
            "^a",
            "^a|^b",
            r"\Aa",
            "(?i)^a|(?-i)^b",
            "^(a|b)c",
            "",
            "NOPASSWD",
            r"/dev/(tcp|udp)/",
            r"a\.b",
        ] {
            assert_eq!(search_form(p), None, "{p}");
        }
        // Not plainly balanced, or verbose: used as written (and refused as
        // written, when it is invalid).
        for p in [
            "a)",
            "(a",
            "a)|(b",
            r"a\",
            "[a",
            "(?x)a # )",
            "(?ix:a)",
            "x(?x)a",
        ] {
            assert_eq!(search_form(p), None, "{p}");
        }
    }

    /// A tiny deterministic generator, so the comparison covers the same
    /// texts on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
            &from[(self.next() % from.len() as u64) as usize]
        }
    }

    /// The forms compiled for every shipped pattern answer like the pattern
    /// itself, on the packs' own examples (whole, by word, by run of words)
    /// and on texts made of pieces of the pattern, ASCII or not.
    #[test]
    fn search_forms_match_like_the_shipped_patterns() {
        let cat = super::super::Catalogue::builtin();
        let mut corpus: Vec<String> = Vec::new();
        for r in &cat.exec {
            for ex in r.common.examples.iter().chain(&r.common.counter_examples) {
                corpus.push(ex.clone());
                let words: Vec<&str> = ex.split_whitespace().collect();
                for i in 0..words.len() {
                    corpus.push(words[i].to_string());
                    corpus.push(words[i..].join(" "));
                }
            }
        }
        let odd = [
            "", " ", "\n", "ſ", "\u{212A}", "é", "日本", "\u{a0}", "-", "=", "/", "x",
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut compared = 0usize;
        let mut wrapped = 0usize;
        let mut ascii = 0usize;
        let mut matched = 0usize;
        for r in &cat.exec {
            for re in [
                &r.operands_regex,
                &r.operands_not_regex,
                &r.arg_regex,
                &r.args_regex,
                &r.args_not_regex,
                &r.code_regex,
            ]
            .into_iter()
            .flatten()
            {
                let original = Regex::new(&re.pattern).expect("shipped patterns compile");
                if search_form(&re.pattern).is_some() {
                    wrapped += 1;
                }
                if re.ascii().is_some() {
                    ascii += 1;
                }
                // Pieces of the pattern: its words and its characters.
                let pieces: Vec<String> = re
                    .pattern
                    .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
                    .filter(|w| !w.is_empty())
                    .map(str::to_string)
                    .chain(re.pattern.chars().map(String::from))
                    .chain(odd.iter().map(|s| s.to_string()))
                    .collect();
                let mut texts = corpus.clone();
                for _ in 0..400 {
                    let n = 1 + rng.next() % 6;
                    let mut t = String::new();
                    for _ in 0..n {
                        let piece: &String = rng.pick(&pieces);
                        t.push_str(piece);
                        if rng.next().is_multiple_of(2) {
                            t.push(' ');
                        }
                    }
                    texts.push(t.to_uppercase());
                    texts.push(t);
                }
                for t in &texts {
                    let m = original.is_match(t);
                    matched += usize::from(m);
                    assert_eq!(
                        re.is_match(t),
                        m,
                        "{} on {t:?} (rule {})",
                        re.pattern,
                        r.common.id
                    );
                    compared += 1;
                }
            }
        }
        assert!(wrapped > 50, "only {wrapped} patterns use the search form");
        assert!(ascii > 100, "only {ascii} patterns have an ASCII form");
        assert!(compared > 100_000, "only {compared} comparisons");
        assert!(matched > 5_000, "only {matched} of {compared} texts match");
    }
}
