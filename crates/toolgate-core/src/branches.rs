//! The git branches a policy protects by default, and how a branch name is
//! matched against the list (`[git] protected_branches`). A leaf: the
//! catalogue's git rules, the MCP readings and the policy share it.

use crate::wildcard::star_match;

/// The branches protected when the policy names none: `*` matches any run
/// of characters, `/` included; matching ignores ASCII case.
pub(crate) const DEFAULT_PROTECTED_BRANCHES: &[&str] = &[
    "main", "master", "trunk", "develop", "release*", "prod*", "staging",
];

/// Whether `name` (a branch name, `refs/heads/` already removed) is on the
/// protected list.
pub(crate) fn is_protected(name: &str, protected: &[String]) -> bool {
    let name = name.to_ascii_lowercase();
    protected
        .iter()
        .any(|p| star_match(&p.to_ascii_lowercase(), &name))
}
