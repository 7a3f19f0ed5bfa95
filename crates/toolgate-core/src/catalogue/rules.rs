//! The catalogue's rules as the binary carries them: `'static` data the
//! build generated (`tables.rs`), with indexes into the pattern and set
//! tables instead of compiled objects.

use crate::model::{RiskClass, Verdict};
use crate::normalize::Access;

/// What every rule has.
#[derive(Debug)]
pub(super) struct Common {
    pub id: &'static str,
    pub class: RiskClass,
    pub verdict: Verdict,
    pub reason: &'static str,
    /// Calls the rule must match, and calls it must not (checked as tests).
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read only by the catalogue's self-test")
    )]
    pub examples: &'static [&'static str],
    #[cfg_attr(
        not(test),
        expect(dead_code, reason = "read only by the catalogue's self-test")
    )]
    pub counter_examples: &'static [&'static str],
}

impl Common {
    /// The finding this rule reports, with `{placeholder}` in its reason
    /// filled in.
    pub(super) fn finding(&self, placeholder: &str, value: &str) -> super::Finding {
        super::Finding {
            rule: self.id.to_string(),
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

/// How a rule's protected git branch must be used (the pack's
/// `protected_branch`; see `super::branch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BranchUse {
    /// Named by any operand past the rule's `sub` words.
    Named,
    /// The destination of a pushed refspec.
    Pushed,
    /// Pushed with force: a force flag or a `+` refspec.
    Forced,
    /// Deleted on the remote: `--delete` or a `:branch` refspec.
    Deleted,
}

/// A reference to a path set or a special set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SetRef {
    /// An index into the set table (a named set, or a rule's inline pattern).
    Set(u16),
    /// The workspace root itself.
    WorkspaceRoot,
    /// Anywhere outside the workspace and the temp dirs.
    OutsideWorkspace,
    /// Inside a home that is not the agent's (`/root/…`, `/home/alice/…`),
    /// outside the workspace.
    OtherUsers,
    /// An operand whose value is known only at run time.
    Unknown,
}

type Strs = &'static [&'static str];

/// A shell-command rule (the fields are those of the pack format,
/// `toolgate_packs::model::ExecRuleSpec`; regexes are indexes into the
/// pattern table; its `programs` are the keys it is indexed under).
#[derive(Debug)]
pub(super) struct ExecRule {
    pub common: Common,
    /// Sorted by the build (searched by bisection).
    pub programs_not: Strs,
    pub sub: &'static [Strs],
    pub operands_regex: Option<u16>,
    pub operands_not_regex: Option<u16>,
    pub flags_any: Strs,
    pub flags_all: Strs,
    pub flags_none: Strs,
    pub arg_regex: Option<u16>,
    pub args_regex: Option<u16>,
    pub args_not_regex: Option<u16>,
    pub paths_any: &'static [SetRef],
    pub operand_scope: OperandScope,
    pub dynamic_paths: bool,
    pub redirect_to: &'static [SetRef],
    pub redirect_overwrites: bool,
    pub cwd_in: &'static [SetRef],
    pub remote_operand: bool,
    pub protected_branch: Option<BranchUse>,
    pub program_from_stdin: bool,
    pub redirect_from: &'static [SetRef],
    pub stdin_from: Strs,
    pub privileged: Option<bool>,
    pub code_regex: Option<u16>,
    pub via_all: Strs,
    pub recursive_function: bool,
    pub no_operands: bool,
}

impl ExecRule {
    /// The rule's regexes (indexes into the pattern table).
    #[cfg(test)]
    pub(super) fn patterns(&self) -> impl Iterator<Item = u16> {
        [
            self.operands_regex,
            self.operands_not_regex,
            self.arg_regex,
            self.args_regex,
            self.args_not_regex,
            self.code_regex,
        ]
        .into_iter()
        .flatten()
    }
}

/// A file-tool rule.
#[derive(Debug)]
pub(super) struct PathRule {
    pub common: Common,
    pub access: &'static [Access],
    pub paths: &'static [SetRef],
}

/// An action-tool rule.
#[derive(Debug)]
pub(super) struct ActionRule {
    pub common: Common,
    pub tools: Strs,
    pub actions: Strs,
}

/// A URL rule (hosts lower-cased by the build).
#[derive(Debug)]
pub(super) struct UrlRule {
    pub common: Common,
    pub hosts: Strs,
}
