//! Checking packs and turning them into the catalogue's tables: what the
//! core used to do at every start, done once by the build.

use crate::automata::{self, Blob};
use crate::load::{Pack, PackError};
use crate::model::{ExecRuleSpec, RuleHeader, SetSpec};
use std::collections::BTreeMap;
use std::ops::Range;

/// What every rule has, checked.
#[derive(Debug, Clone)]
pub struct Header {
    /// `pack.rule`.
    pub id: String,
    /// `R0`..`R4`.
    pub class: String,
    /// `Block`, `Escalate` or `Allow` (the default applied: R3 and up
    /// escalate).
    pub verdict: &'static str,
    /// The reason, with `{placeholders}`.
    pub reason: String,
    /// Texts the rule must match.
    pub examples: Vec<String>,
    /// Texts it must not match.
    pub counter_examples: Vec<String>,
}

/// A reference to a path set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetRef {
    /// A set in [`Compiled::sets`] (named, or a rule's inline pattern).
    Set(usize),
    /// `@workspace_root`.
    WorkspaceRoot,
    /// `@outside_workspace`.
    OutsideWorkspace,
    /// `@other_users`: inside a home that is not the agent's.
    OtherUsers,
    /// `@unknown`: an operand known only at run time.
    Unknown,
}

/// A regex, checked, with its automaton when it has one.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// As written.
    pub text: String,
    /// Its ASCII form's DFAs in the blob (any may match; none: the
    /// pattern is compiled at run time).
    pub dfas: Vec<Range<usize>>,
}

/// A path set, compiled.
#[derive(Debug, Clone, Default)]
pub struct CompiledSet {
    /// `@name`, or `None` for a rule's inline pattern.
    pub name: Option<String>,
    /// The DFAs of the absolute patterns (any may match).
    pub abs: Vec<Range<usize>>,
    /// The DFAs of the home-relative patterns (over `/~/…` forms).
    pub home: Vec<Range<usize>>,
    /// The patterns, home-relative ones as `/~/…`.
    pub patterns: Vec<String>,
    /// Per pattern: the literal start and end of every path it matches,
    /// and whether it is home-relative.
    pub fences: Vec<(String, String, bool)>,
    /// `dir` of each `dir/**` pattern (which covers `dir` too).
    pub dirs: Vec<String>,
    /// Patterns without wildcards, as written.
    pub concrete: Vec<String>,
    /// The directory before the first wildcard of each pattern.
    pub literal_dirs: Vec<String>,
    /// File names tried inside a glob argument's directory.
    pub probes: Vec<String>,
    /// The set `not_<name>`: exceptions.
    pub exclude: Option<usize>,
    /// Members count only outside the workspace.
    pub outside_workspace_only: bool,
}

/// A shell-command rule, checked.
#[derive(Debug, Clone)]
pub struct Exec {
    /// Id, class, verdict, reason, examples.
    pub header: Header,
    /// See [`ExecRuleSpec`] for each field.
    pub programs: Vec<String>,
    /// Programs the rule never applies to.
    pub programs_not: Vec<String>,
    /// Leading operands, alternatives split.
    pub sub: Vec<Vec<String>>,
    /// Index into [`Compiled::patterns`].
    pub operands_regex: Option<usize>,
    /// Index into [`Compiled::patterns`].
    pub operands_not_regex: Option<usize>,
    /// Flags, any of which must be there.
    pub flags_any: Vec<String>,
    /// Flags that must all be there.
    pub flags_all: Vec<String>,
    /// Flags that must not be there.
    pub flags_none: Vec<String>,
    /// Index into [`Compiled::patterns`].
    pub arg_regex: Option<usize>,
    /// Index into [`Compiled::patterns`].
    pub args_regex: Option<usize>,
    /// Index into [`Compiled::patterns`].
    pub args_not_regex: Option<usize>,
    /// Sets an operand must be in.
    pub paths_any: Vec<SetRef>,
    /// `All`, `Last` or `ButLast`.
    pub operand_scope: &'static str,
    /// Unknown operands count as matching.
    pub dynamic_paths: bool,
    /// Sets a write redirection must go into.
    pub redirect_to: Vec<SetRef>,
    /// Only a replacing write redirection counts.
    pub redirect_overwrites: bool,
    /// Sets the command's working directory must be in.
    pub cwd_in: Vec<SetRef>,
    /// Some operand names another machine.
    pub remote_operand: bool,
    /// How a protected git branch must be used: `Named`, `Pushed`,
    /// `Forced` or `Deleted`.
    pub protected_branch: Option<&'static str>,
    /// The program run comes from stdin.
    pub program_from_stdin: bool,
    /// Sets a read redirection must come from.
    pub redirect_from: Vec<SetRef>,
    /// Programs upstream in the pipeline.
    pub stdin_from: Vec<String>,
    /// Privilege the command must (not) have.
    pub privileged: Option<bool>,
    /// Index into [`Compiled::patterns`].
    pub code_regex: Option<usize>,
    /// Wrappers the command must be found inside.
    pub via_all: Vec<String>,
    /// A function calling itself.
    pub recursive_function: bool,
    /// Only without operands.
    pub no_operands: bool,
}

/// A file-tool rule, checked.
#[derive(Debug, Clone)]
pub struct PathRule {
    /// Id, class, verdict, reason, examples.
    pub header: Header,
    /// `Read`, `Write`, `Delete`.
    pub access: Vec<&'static str>,
    /// The sets the path must be in.
    pub paths: Vec<SetRef>,
}

/// An action-tool rule or a URL rule, checked.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Id, class, verdict, reason, examples.
    pub header: Header,
    /// Tool kinds and action globs (action rules), or lower-cased host
    /// globs and schemes (URL rules).
    pub matches: Vec<String>,
    /// Action globs (action rules only).
    pub actions: Vec<String>,
}

/// The whole catalogue, checked and compiled.
#[derive(Debug, Clone, Default)]
pub struct Compiled {
    /// Named sets first (sorted by name, `named` of them), then inline ones.
    pub sets: Vec<CompiledSet>,
    /// How many of `sets` are named.
    pub named: usize,
    /// Options that take a value, per program.
    pub options: BTreeMap<String, Vec<String>>,
    /// Every regex.
    pub patterns: Vec<Pattern>,
    /// Shell-command rules, in pack order.
    pub exec: Vec<Exec>,
    /// For each program, the exec rules naming it.
    pub by_program: BTreeMap<String, Vec<usize>>,
    /// Exec rules that name no program (they look at every command).
    pub any_program: Vec<usize>,
    /// File-tool rules.
    pub paths: Vec<PathRule>,
    /// Action-tool rules.
    pub actions: Vec<Rule>,
    /// URL rules.
    pub urls: Vec<Rule>,
    /// The automata.
    pub automata: Vec<u8>,
}

/// Checks and compiles `packs`.
pub(crate) fn compile(packs: &[Pack]) -> Result<Compiled, PackError> {
    let mut blob = Blob::default();
    let mut out = Compiled::default();
    let mut set_specs: Vec<(String, &Pack, Range<usize>, &SetSpec)> = Vec::new();
    for pack in packs {
        for (name, spec) in &pack.spec.sets {
            if let Some((_, other, _, _)) = set_specs.iter().find(|(n, ..)| n == name.get_ref()) {
                return Err(pack.error(
                    name.span(),
                    format!(
                        "path set {} is defined in {} already",
                        name.get_ref(),
                        other.path.display()
                    ),
                ));
            }
            set_specs.push((name.get_ref().clone(), pack, name.span(), spec));
        }
        for (program, options) in &pack.spec.options {
            out.options
                .entry(program.clone())
                .or_default()
                .extend(options.iter().cloned());
        }
    }
    set_specs.sort_by(|a, b| a.0.cmp(&b.0));
    out.named = set_specs.len();
    for (name, pack, span, spec) in &set_specs {
        let (patterns, probes, outside) = match spec {
            SetSpec::Patterns(p) => (p.as_slice(), &[][..], false),
            SetSpec::Full {
                patterns,
                probes,
                outside_workspace,
            } => (patterns.as_slice(), probes.as_slice(), *outside_workspace),
        };
        let mut set = path_set(patterns, probes, &mut blob)
            .map_err(|e| pack.error(span.clone(), format!("path set {name}: {e}")))?;
        set.name = Some(name.clone());
        set.outside_workspace_only = outside;
        set.exclude = set_specs
            .iter()
            .position(|(n, ..)| *n == format!("not_{name}"));
        out.sets.push(set);
    }
    let mut ids: Vec<String> = Vec::new();
    for pack in packs {
        let prefix = &pack.spec.pack.name;
        let mut header = |spec: &dyn RuleHeader| -> Result<Header, PackError> {
            let h = check_header(prefix, spec).map_err(|e| pack.error(spec.id_span(), e))?;
            if ids.contains(&h.id) {
                return Err(pack.error(spec.id_span(), format!("rule {} is defined twice", h.id)));
            }
            ids.push(h.id.clone());
            Ok(h)
        };
        for spec in &pack.spec.rule {
            let h = header(spec)?;
            let rule = exec_rule(spec, h, &mut out, &mut blob)
                .map_err(|e| pack.error(spec.id_span(), format!("rule {}: {e}", spec.id())))?;
            let index = out.exec.len();
            if rule.programs.is_empty() {
                out.any_program.push(index);
            }
            for p in &rule.programs {
                out.by_program.entry(p.clone()).or_default().push(index);
            }
            out.exec.push(rule);
        }
        for spec in &pack.spec.path_rule {
            let h = header(spec)?;
            let fail = |e: String| pack.error(spec.id_span(), format!("rule {}: {e}", spec.id()));
            let access = spec
                .access
                .iter()
                .map(|a| match a.as_str() {
                    "read" => Ok("Read"),
                    "write" => Ok("Write"),
                    "delete" => Ok("Delete"),
                    other => Err(fail(format!(
                        "access must be read, write or delete, not {other:?}"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let paths = set_refs(&spec.paths, &mut out, &mut blob).map_err(fail)?;
            out.paths.push(PathRule {
                header: h,
                access,
                paths,
            });
        }
        for spec in &pack.spec.action_rule {
            let h = header(spec)?;
            out.actions.push(Rule {
                header: h,
                matches: spec.tools.clone(),
                actions: spec.actions.clone(),
            });
        }
        for spec in &pack.spec.url_rule {
            let h = header(spec)?;
            out.urls.push(Rule {
                header: h,
                matches: spec.hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
                actions: Vec::new(),
            });
        }
    }
    out.automata = blob.into_bytes();
    Ok(out)
}

fn check_header(pack: &str, spec: &dyn RuleHeader) -> Result<Header, String> {
    let (id, class) = (spec.id(), spec.class());
    let class = class.trim().to_ascii_uppercase();
    let rank = match class.as_str() {
        "R0" => 0,
        "R1" => 1,
        "R2" => 2,
        "R3" => 3,
        "R4" => 4,
        _ => {
            return Err(format!(
                "rule {id}: class must be R0..R4, not {:?}",
                spec.class()
            ));
        }
    };
    let verdict = match spec.verdict() {
        None if rank >= 3 => "Escalate",
        None => "Allow",
        Some("block") => "Block",
        Some("escalate") => "Escalate",
        Some("allow") => "Allow",
        Some(other) => {
            return Err(format!(
                "rule {id}: verdict must be block, escalate or allow, not {other:?}"
            ));
        }
    };
    if id.is_empty() || id.contains(char::is_whitespace) {
        return Err(format!("rule id {id:?} must be a word"));
    }
    let (examples, counter_examples) = spec.examples();
    Ok(Header {
        id: format!("{pack}.{id}"),
        class,
        verdict,
        reason: spec.reason().to_string(),
        examples: examples.to_vec(),
        counter_examples: counter_examples.to_vec(),
    })
}

fn exec_rule(
    s: &ExecRuleSpec,
    header: Header,
    out: &mut Compiled,
    blob: &mut Blob,
) -> Result<Exec, String> {
    let mut regex = |r: &Option<String>, field: &str| -> Result<Option<usize>, String> {
        let Some(text) = r else { return Ok(None) };
        let dfas = automata::regex_dfas(text).map_err(|e| format!("{field} {text:?}: {e}"))?;
        out.patterns.push(Pattern {
            text: text.clone(),
            dfas: dfas.iter().map(|d| blob.add(d)).collect(),
        });
        Ok(Some(out.patterns.len() - 1))
    };
    let operands_regex = regex(&s.operands_regex, "operands_regex")?;
    let operands_not_regex = regex(&s.operands_not_regex, "operands_not_regex")?;
    let arg_regex = regex(&s.arg_regex, "arg_regex")?;
    let args_regex = regex(&s.args_regex, "args_regex")?;
    let args_not_regex = regex(&s.args_not_regex, "args_not_regex")?;
    let code_regex = regex(&s.code_regex, "code_regex")?;
    let protected_branch = match s.protected_branch.as_deref() {
        None => None,
        Some("named") => Some("Named"),
        Some("pushed") => Some("Pushed"),
        Some("forced") => Some("Forced"),
        Some("deleted") => Some("Deleted"),
        Some(other) => {
            return Err(format!(
                "protected_branch must be named, pushed, forced or deleted, not {other:?}"
            ));
        }
    };
    let operand_scope = match s.operand_scope.as_deref() {
        None | Some("all") => "All",
        Some("last") => "Last",
        Some("but_last") => "ButLast",
        Some(other) => {
            return Err(format!(
                "operand_scope must be all, last or but_last, not {other:?}"
            ));
        }
    };
    Ok(Exec {
        header,
        programs: s.programs.clone(),
        programs_not: {
            // Sorted, so the matcher finds a program by binary search (the
            // any-program verb rules list hundreds).
            let mut v = s.programs_not.clone();
            v.sort();
            v.dedup();
            v
        },
        sub: s
            .sub
            .iter()
            .map(|w| w.split('|').map(str::to_string).collect())
            .collect(),
        operands_regex,
        operands_not_regex,
        flags_any: s.flags_any.clone(),
        flags_all: s.flags_all.clone(),
        flags_none: s.flags_none.clone(),
        arg_regex,
        args_regex,
        args_not_regex,
        paths_any: set_refs(&s.paths_any, out, blob)?,
        operand_scope,
        dynamic_paths: s.dynamic_paths,
        redirect_to: set_refs(&s.redirect_to, out, blob)?,
        redirect_overwrites: s.redirect_overwrites,
        cwd_in: set_refs(&s.cwd_in, out, blob)?,
        remote_operand: s.remote_operand,
        protected_branch,
        program_from_stdin: s.program_from_stdin,
        redirect_from: set_refs(&s.redirect_from, out, blob)?,
        stdin_from: s.stdin_from.clone(),
        privileged: s.privileged,
        code_regex,
        via_all: s.via_all.clone(),
        recursive_function: s.recursive_function,
        no_operands: s.no_operands,
    })
}

/// `@name` (a named set), a special set, or an inline pattern (compiled as
/// a set of its own).
fn set_refs(list: &[String], out: &mut Compiled, blob: &mut Blob) -> Result<Vec<SetRef>, String> {
    list.iter()
        .map(|text| match text.as_str() {
            "@workspace_root" => Ok(SetRef::WorkspaceRoot),
            "@outside_workspace" => Ok(SetRef::OutsideWorkspace),
            "@other_users" => Ok(SetRef::OtherUsers),
            "@unknown" => Ok(SetRef::Unknown),
            _ => match text.strip_prefix('@') {
                Some(name) => out.sets[..out.named]
                    .iter()
                    .position(|s| s.name.as_deref() == Some(name))
                    .map(SetRef::Set)
                    .ok_or_else(|| format!("unknown path set @{name}")),
                None => {
                    let set = path_set(std::slice::from_ref(text), &[], blob)
                        .map_err(|e| format!("pattern {text:?}: {e}"))?;
                    out.sets.push(set);
                    Ok(SetRef::Set(out.sets.len() - 1))
                }
            },
        })
        .collect()
}

/// Compiles a path set's patterns into `blob`: `**` crosses directories, `*` does not; `~` and
/// `~/…` are relative to the home directory (matched against the `/~/…`
/// form of a path); `dir/**` covers `dir` too.
pub fn path_set(
    patterns: &[String],
    probes: &[String],
    blob: &mut Blob,
) -> Result<CompiledSet, String> {
    let mut set = CompiledSet {
        probes: probes.to_vec(),
        ..CompiledSet::default()
    };
    let (mut abs, mut home) = (Vec::new(), Vec::new());
    for p in patterns {
        let home_relative = p == "~" || p.starts_with("~/");
        let body = if home_relative {
            p.replacen('~', "/~", 1)
        } else {
            p.clone()
        };
        automata::glob_regex(&body).map_err(|e| format!("pattern {p:?}: {e}"))?;
        let (start, end) = fences(&body);
        set.patterns.push(body.clone());
        set.fences.push((start, end, home_relative));
        if let Some(d) = body.strip_suffix("/**").filter(|d| !is_glob(d)) {
            set.dirs.push(d.to_string());
        }
        match p.find(['*', '?', '[', '{']) {
            None => set.concrete.push(p.clone()),
            Some(i) => {
                if let Some((d, _)) = p[..i].rsplit_once('/')
                    && !d.is_empty()
                {
                    set.literal_dirs.push(d.to_string());
                }
            }
        }
        if home_relative {
            home.push(body);
        } else {
            abs.push(body);
        }
    }
    set.abs = automata::globs_dfas(&abs)?
        .iter()
        .map(|d| blob.add(d))
        .collect();
    set.home = automata::globs_dfas(&home)?
        .iter()
        .map(|d| blob.add(d))
        .collect();
    Ok(set)
}

fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// The literal text every path a pattern matches starts with and ends with:
/// what comes before its first special character (`*?[]{}\\`) and after its
/// last, or the whole pattern when it has none. A `**` next to a `/` may
/// match nothing, taking the `/` with it (`**/.env` matches `.env`, `a/**`
/// is treated as possibly matching `a`), so that `/` is left out.
pub fn fences(pattern: &str) -> (String, String) {
    const SPECIAL: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];
    let (Some(first), Some(last)) = (pattern.find(SPECIAL), pattern.rfind(SPECIAL)) else {
        return (pattern.to_string(), pattern.to_string());
    };
    let mut start = &pattern[..first];
    if pattern[first..].starts_with("**") {
        start = start.strip_suffix('/').unwrap_or(start);
    }
    let mut end = &pattern[last + 1..];
    if pattern[..=last].ends_with("**") {
        end = end.strip_prefix('/').unwrap_or(end);
    }
    (start.to_string(), end.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `packs` compiled from a temporary directory: its error, if any.
    fn build_error(files: &[(&str, &str)]) -> Option<PackError> {
        let dir = std::env::temp_dir().join(format!(
            "toolgate-packs-compile-{}-{}",
            std::process::id(),
            files[0].0
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let order: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
        let out = crate::build(&dir, &order).err();
        let _ = std::fs::remove_dir_all(&dir);
        out
    }

    const HEAD: &str = "[pack]\nname = \"p\"\ndescription = \"x\"\n";

    #[test]
    fn a_bad_rule_fails_at_its_id_line() {
        let cases = [
            (
                "regex.toml",
                "[[rule]]\nid = \"r\"\nclass = \"R4\"\nreason = \"x\"\nargs_regex = \"(a\"\n",
                "unclosed group",
            ),
            (
                "class.toml",
                "[[rule]]\nid = \"r\"\nclass = \"R9\"\nreason = \"x\"\n",
                "class must be R0..R4",
            ),
            (
                "set.toml",
                "[[rule]]\nid = \"r\"\nclass = \"R4\"\nreason = \"x\"\npaths_any = [\"@nope\"]\n",
                "unknown path set @nope",
            ),
            (
                "glob.toml",
                "[[path_rule]]\nid = \"r\"\nclass = \"R4\"\nreason = \"x\"\naccess = [\"read\"]\npaths = [\"/a[\"]\n",
                "pattern",
            ),
            (
                "access.toml",
                "[[path_rule]]\nid = \"r\"\nclass = \"R4\"\nreason = \"x\"\naccess = [\"exec\"]\npaths = [\"/a\"]\n",
                "access must be",
            ),
        ];
        for (name, body, says) in cases {
            let e = build_error(&[(name, &format!("{HEAD}\n{body}"))]).expect(name);
            assert_eq!(e.line, 6, "{name}: {e}");
            assert!(e.file.ends_with(name), "{e}");
            assert!(e.message.contains(says), "{name}: {e}");
        }
    }

    #[test]
    fn a_rule_defined_twice_fails_at_the_second() {
        let rule = "[[rule]]\nid = \"r\"\nclass = \"R1\"\nreason = \"x\"\n";
        let e = build_error(&[("twice.toml", &format!("{HEAD}\n{rule}\n{rule}"))]).unwrap();
        assert_eq!(e.line, 11, "{e}");
        assert!(e.message.contains("p.r is defined twice"), "{e}");
    }

    #[test]
    fn a_good_pack_builds_rules_indexed_by_program() {
        let body = "[[rule]]\nid = \"r\"\nclass = \"R4\"\nreason = \"x\"\nprograms = [\"rm\"]\nargs_regex = \"-rf\"\n";
        let dir = std::env::temp_dir().join(format!("toolgate-packs-good-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("good.toml"), format!("{HEAD}\n{body}")).unwrap();
        let out = crate::build(&dir, &["good.toml"]).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(out.rust.contains("(\"rm\", &[0])"), "{}", out.rust);
        assert!(
            out.rust.contains("verdict: Verdict::Escalate"),
            "R4 escalates by default"
        );
        assert!(!out.automata.is_empty());
    }

    #[test]
    fn fences_of_patterns() {
        let f = |p: &str| fences(p);
        assert_eq!(f("/etc"), ("/etc".into(), "/etc".into()));
        assert_eq!(f("**/.env"), ("".into(), ".env".into()));
        assert_eq!(f("/~/.ssh/**"), ("/~/.ssh".into(), "".into()));
        assert_eq!(f("/~/.ssh/id_*"), ("/~/.ssh/id_".into(), "".into()));
        assert_eq!(f("/a/**/b.json"), ("/a".into(), "b.json".into()));
        assert_eq!(f("/etc/cron*/**"), ("/etc/cron".into(), "".into()));
        assert_eq!(f("/x/{a,b}.y"), ("/x/".into(), ".y".into()));
    }
}
