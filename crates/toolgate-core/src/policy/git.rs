//! `[git]`: which branches are shared, so that pushing to them, forcing
//! over them and deleting them needs a person, while the same commands on a
//! topic branch run.
//!
//! ```toml
//! [git]
//! # Replaces the default list; `*` matches any run of characters.
//! protected_branches = ["main", "master", "trunk", "develop", "release*", "prod*", "staging"]
//! ```

use super::error::{ErrorKind, PolicyError};
use super::schema::RawGit;
use crate::branches::DEFAULT_PROTECTED_BRANCHES;

/// The `[git]` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSettings {
    /// Branch names (with `*` wildcards, matched ignoring ASCII case) whose
    /// history the catalogue's git rules guard: a push to one escalates, a
    /// force push over one or its deletion on a remote is R4.
    pub protected_branches: Vec<String>,
}

impl Default for GitSettings {
    /// [`DEFAULT_PROTECTED_BRANCHES`].
    fn default() -> Self {
        GitSettings {
            protected_branches: DEFAULT_PROTECTED_BRANCHES
                .iter()
                .map(|b| b.to_string())
                .collect(),
        }
    }
}

pub(super) fn parse_git(
    raw: Option<RawGit>,
    src: &str,
    origin: &str,
) -> Result<GitSettings, PolicyError> {
    let mut out = GitSettings::default();
    let Some(list) = raw.and_then(|g| g.protected_branches) else {
        return Ok(out);
    };
    out.protected_branches.clear();
    for b in list {
        let name = b.get_ref().trim();
        let bad = if name.is_empty() {
            Some("is empty")
        } else if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            Some("has a space or a control character, which no branch name has")
        } else if name.contains(':') || name.starts_with('+') || name.starts_with("refs/") {
            Some("is a refspec — write the branch name alone (`main`, `release*`)")
        } else {
            None
        };
        if let Some(why) = bad {
            return Err(PolicyError::at(
                origin,
                src,
                b.span().start,
                ErrorKind::Value,
                format!("protected_branches entry {:?} {why}", b.get_ref()),
            ));
        }
        out.protected_branches.push(name.to_string());
    }
    Ok(out)
}
