//! The catalogue's file format: rule packs in TOML, kept in
//! `crates/toolgate-core/packs/`.
//!
//! ```toml
//! [pack]
//! name = "filesystem"
//! description = "…"
//!
//! [options]                      # options that take a value, per program
//! git = ["-C", "-c", "--git-dir"]
//!
//! [sets]                         # named path sets usable as "@name"
//! critical = ["/", "/etc", "~"]
//!
//! [[rule]]                       # a shell command
//! id = "rm-critical"
//! class = "R4"
//! verdict = "block"              # block | escalate | allow (default: R3+ escalate)
//! reason = "recursively deletes {path}"
//! programs = ["rm"]
//! flags_any = ["-r", "-R", "--recursive"]
//! paths_any = ["@critical"]
//! examples = ["rm -rf /"]
//! counter_examples = ["rm -rf build"]
//! ```
//!
//! Every condition given must hold; within a list, any entry may match.

use serde::Deserialize;
use std::collections::HashMap;
use std::ops::Range;
use toml::Spanned;

/// One pack file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackFile {
    /// Name and description.
    pub pack: PackHeader,
    /// Options that take a value, per program name.
    #[serde(default)]
    pub options: HashMap<String, Vec<String>>,
    /// Named path sets.
    #[serde(default)]
    pub sets: HashMap<Spanned<String>, SetSpec>,
    /// Shell-command rules.
    #[serde(default)]
    pub rule: Vec<ExecRuleSpec>,
    /// File-tool rules (read / write / delete of paths).
    #[serde(default)]
    pub path_rule: Vec<PathRuleSpec>,
    /// Action-tool rules (message, gateway, automations, nodes …).
    #[serde(default)]
    pub action_rule: Vec<ActionRuleSpec>,
    /// URL rules for fetch and browser tools.
    #[serde(default)]
    pub url_rule: Vec<UrlRuleSpec>,
}

/// A pack's header.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackHeader {
    /// Short name, used as the prefix of rule ids (`filesystem.rm-critical`).
    pub name: String,
    /// What the pack covers: required so that every pack says what it
    /// covers; read by people editing packs, not by code.
    pub description: String,
}

/// A named path set: patterns, plus probe file names used when an argument
/// is itself a glob (`cat .en?` is tested as `cat .env`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum SetSpec {
    /// Just patterns.
    Patterns(Vec<String>),
    /// Patterns and probes.
    Full {
        /// Path patterns (`~/`, `**`).
        patterns: Vec<String>,
        /// File names tried inside a glob argument's directory.
        #[serde(default)]
        probes: Vec<String>,
        /// Members count only outside the workspace (a project that lives
        /// under `/srv` or `/opt` is not a system tree to its own agent).
        #[serde(default)]
        outside_workspace: bool,
    },
}

/// A shell-command rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecRuleSpec {
    /// The rule's name within its pack (the finding names `pack.id`).
    pub id: Spanned<String>,
    /// Risk class, `R0`..`R4`.
    pub class: String,
    /// `block`, `escalate` or `allow` (default: R3 and up escalate, the rest allow).
    #[serde(default)]
    pub verdict: Option<String>,
    /// What the operation does, with `{path}`, `{program}`, `{action}` or `{url}` filled in.
    pub reason: String,
    /// Programs the rule judges (empty: every command).
    #[serde(default)]
    pub programs: Vec<String>,
    /// Programs the rule never applies to.
    #[serde(default)]
    pub programs_not: Vec<String>,
    /// Leading operands, in order; `a|b` offers alternatives.
    #[serde(default)]
    pub sub: Vec<String>,
    /// Flags, any of which must be given.
    #[serde(default)]
    pub flags_any: Vec<String>,
    /// Flags that must all be given.
    #[serde(default)]
    pub flags_all: Vec<String>,
    /// Flags that must not be given.
    #[serde(default)]
    pub flags_none: Vec<String>,
    /// Regex matched against each argument (flags and operands).
    #[serde(default)]
    pub arg_regex: Option<String>,
    /// Regex matched against all arguments joined by spaces.
    #[serde(default)]
    pub args_regex: Option<String>,
    /// Regex matched against the operands (no flags, no option values)
    /// joined by spaces: the way to match CLI subcommands past global options.
    #[serde(default)]
    pub operands_regex: Option<String>,
    /// Regex that, when it matches the joined operands, excludes the rule.
    #[serde(default)]
    pub operands_not_regex: Option<String>,
    /// Regex that, when it matches the joined arguments, excludes the rule.
    #[serde(default)]
    pub args_not_regex: Option<String>,
    /// Operands resolved as paths; any matching.
    #[serde(default)]
    pub paths_any: Vec<String>,
    /// Which operands `paths_any` looks at: `all` (default), `last` (a
    /// destination) or `but_last` (the sources of `mv`). For `cp`, `mv`,
    /// `ln` and `install` given `-t`/`--target-directory`, both `last` and
    /// `but_last` look at every path word (the destination is then an
    /// option's value and every operand a source).
    #[serde(default)]
    pub operand_scope: Option<String>,
    /// Operands with unknown values count as matching `paths_any`.
    #[serde(default)]
    pub dynamic_paths: bool,
    /// Write / append redirections into these paths.
    #[serde(default)]
    pub redirect_to: Vec<String>,
    /// `redirect_to` counts only a redirection that replaces the file
    /// (`>`, `<>`), not one that appends (`>>`).
    #[serde(default)]
    pub redirect_overwrites: bool,
    /// The directory the command runs in is one of these (a server
    /// started after `cd ~` serves the home).
    #[serde(default)]
    pub cwd_in: Vec<String>,
    /// Some operand names another machine: a URL or host that is not the
    /// loopback (an operand known only at run time counts). HTTP method
    /// words and `name=value` items are not hosts.
    #[serde(default)]
    pub remote_operand: bool,
    /// A git branch of the policy's protected list (`[git]
    /// protected_branches`) is used this way: `named` (any operand past
    /// `sub`), `pushed` (a refspec's destination, past the repository),
    /// `forced` (pushed with a force flag or a `+` refspec; the current
    /// branch, `HEAD`, and an operand known only at run time count) or
    /// `deleted` (`--delete`/`-d`, or a `:branch` refspec; run-time operands
    /// count).
    #[serde(default)]
    pub protected_branch: Option<String>,
    /// The shell or interpreter takes the program it runs from stdin: no
    /// code on its command line (`-c`, `-e`, `-m module`), and no script
    /// operand (or `-`, or a shell's `-s`).
    #[serde(default)]
    pub program_from_stdin: bool,
    /// Read redirections from these paths.
    #[serde(default)]
    pub redirect_from: Vec<String>,
    /// Programs upstream in the pipeline (or `<<`, `<<<`).
    #[serde(default)]
    pub stdin_from: Vec<String>,
    /// Whether the command must run privileged (`sudo` …) or must not.
    #[serde(default)]
    pub privileged: Option<bool>,
    /// Interpreter code matching this regex.
    #[serde(default)]
    pub code_regex: Option<String>,
    /// Wrappers or constructs the command must have been found inside, all
    /// of them (`["loop", "&"]`: started in the background inside a loop).
    #[serde(default)]
    pub via_all: Vec<String>,
    /// A function calling itself (fork bombs).
    #[serde(default)]
    pub recursive_function: bool,
    /// Only when the command has no operands at all.
    #[serde(default)]
    pub no_operands: bool,
    /// Calls the rule must match (checked by the tests).
    #[serde(default)]
    pub examples: Vec<String>,
    /// Calls the rule must not match (checked by the tests).
    #[serde(default)]
    pub counter_examples: Vec<String>,
}

/// A file-tool rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathRuleSpec {
    /// The rule's name within its pack (the finding names `pack.id`).
    pub id: Spanned<String>,
    /// Risk class, `R0`..`R4`.
    pub class: String,
    /// `block`, `escalate` or `allow` (default: R3 and up escalate, the rest allow).
    #[serde(default)]
    pub verdict: Option<String>,
    /// What the operation does, with `{path}`, `{program}`, `{action}` or `{url}` filled in.
    pub reason: String,
    /// `read`, `write`, `delete`.
    pub access: Vec<String>,
    /// Path patterns or `@sets` the path must be in.
    pub paths: Vec<String>,
    /// Calls the rule must match (checked by the tests).
    #[serde(default)]
    pub examples: Vec<String>,
    /// Calls the rule must not match (checked by the tests).
    #[serde(default)]
    pub counter_examples: Vec<String>,
}

/// An action-tool rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionRuleSpec {
    /// The rule's name within its pack (the finding names `pack.id`).
    pub id: Spanned<String>,
    /// Risk class, `R0`..`R4`.
    pub class: String,
    /// `block`, `escalate` or `allow` (default: R3 and up escalate, the rest allow).
    #[serde(default)]
    pub verdict: Option<String>,
    /// What the operation does, with `{path}`, `{program}`, `{action}` or `{url}` filled in.
    pub reason: String,
    /// Canonical tool kinds (`message`, `gateway`, `automations`, `nodes`, …).
    pub tools: Vec<String>,
    /// Action globs; `*` is any action, `-` is a call without an action.
    pub actions: Vec<String>,
    /// Calls the rule must match (checked by the tests).
    #[serde(default)]
    pub examples: Vec<String>,
    /// Calls the rule must not match (checked by the tests).
    #[serde(default)]
    pub counter_examples: Vec<String>,
}

/// A URL rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlRuleSpec {
    /// The rule's name within its pack (the finding names `pack.id`).
    pub id: Spanned<String>,
    /// Risk class, `R0`..`R4`.
    pub class: String,
    /// `block`, `escalate` or `allow` (default: R3 and up escalate, the rest allow).
    #[serde(default)]
    pub verdict: Option<String>,
    /// What the operation does, with `{path}`, `{program}`, `{action}` or `{url}` filled in.
    pub reason: String,
    /// Host globs (`169.254.169.254`, `*.internal`) or schemes (`file:`).
    pub hosts: Vec<String>,
    /// Calls the rule must match (checked by the tests).
    #[serde(default)]
    pub examples: Vec<String>,
    /// Calls the rule must not match (checked by the tests).
    #[serde(default)]
    pub counter_examples: Vec<String>,
}

/// The fields every rule kind shares: its id, class, verdict, reason and
/// the examples checked as tests.
pub trait RuleHeader {
    /// `id` as written (without the pack prefix).
    fn id(&self) -> &str;
    /// Where `id` is written in the pack file (byte offsets).
    fn id_span(&self) -> Range<usize>;
    /// `class`, `R0`..`R4`.
    fn class(&self) -> &str;
    /// `verdict`, if given.
    fn verdict(&self) -> Option<&str>;
    /// `reason`, with `{placeholders}`.
    fn reason(&self) -> &str;
    /// `examples` and `counter_examples`.
    fn examples(&self) -> (&[String], &[String]);
}

macro_rules! rule_header {
    ($($spec:ty),*) => {$(
        impl RuleHeader for $spec {
            fn id(&self) -> &str { self.id.get_ref() }
            fn id_span(&self) -> Range<usize> { self.id.span() }
            fn class(&self) -> &str { &self.class }
            fn verdict(&self) -> Option<&str> { self.verdict.as_deref() }
            fn reason(&self) -> &str { &self.reason }
            fn examples(&self) -> (&[String], &[String]) { (&self.examples, &self.counter_examples) }
        }
    )*};
}

rule_header!(ExecRuleSpec, PathRuleSpec, ActionRuleSpec, UrlRuleSpec);
