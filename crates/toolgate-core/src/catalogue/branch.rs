//! Git branches a policy protects (`[git] protected_branches`), and how a
//! git command uses one: names it, pushes to it, force-pushes over it or
//! deletes it on the remote. Rules say which use they judge
//! (`protected_branch` in a pack); the list is the policy's, so a team
//! whose shared branch is `stable` says so once.

use super::rules::BranchUse;
use crate::branches::is_protected;
use crate::shell::Word;

/// Whether the operands past a rule's `sub` words use a protected branch
/// the way `how` says. `force` and `delete` are the command's force and
/// delete flags.
pub(super) fn uses_protected(
    how: BranchUse,
    operands: &[&Word],
    force: bool,
    delete: bool,
    protected: &[String],
) -> bool {
    if how == BranchUse::Named {
        return operands
            .iter()
            .any(|w| !w.dynamic && named(&w.text, protected));
    }
    // `git push [<repository> [<refspec>…]]`: the first operand is where
    // to, the rest say what; with no refspec git pushes per its config,
    // which rules judge by their flags alone.
    operands.iter().skip(1).any(|w| {
        if w.dynamic {
            // A refspec known only at run time may name any branch.
            return match how {
                BranchUse::Forced => force || w.text.starts_with('+'),
                BranchUse::Deleted => true,
                _ => false,
            };
        }
        let spec = Refspec::parse(&w.text);
        let Some(dst) = spec.branch else {
            return false;
        };
        let listed = is_protected(dst, protected);
        match how {
            BranchUse::Pushed => listed && !spec.deletes,
            BranchUse::Forced => (force || spec.plus) && !spec.deletes && (listed || spec.current),
            BranchUse::Deleted => (spec.deletes || delete) && listed,
            BranchUse::Named => unreachable!("handled above"),
        }
    })
}

/// One `git push` refspec: `[+]<src>[:<dst>]`.
struct Refspec<'a> {
    /// Forced by a leading `+`.
    plus: bool,
    /// `:<dst>`, deleting `<dst>`.
    deletes: bool,
    /// The destination branch, `refs/heads/` removed; `None` for a ref
    /// that is not a branch (a tag).
    branch: Option<&'a str>,
    /// The destination is the current branch (`HEAD`, `@`), whichever
    /// that is.
    current: bool,
}

impl<'a> Refspec<'a> {
    fn parse(text: &'a str) -> Refspec<'a> {
        let plus = text.starts_with('+');
        let body = text.trim_start_matches('+');
        let (src, dst) = body.split_once(':').unwrap_or((body, body));
        let deletes = src.is_empty() && body.contains(':');
        let dst = dst.trim_start_matches('+');
        let current = matches!(dst, "HEAD" | "@");
        let branch = match dst.strip_prefix("refs/heads/") {
            Some(b) => Some(b),
            None if dst.starts_with("refs/") => None,
            None => Some(dst),
        };
        Refspec {
            plus,
            deletes,
            branch,
            current,
        }
    }
}

/// A branch named on the command line: local (`main`, `refs/heads/main`)
/// or remote-tracking (`origin/main`, `refs/remotes/origin/main`).
fn named(text: &str, protected: &[String]) -> bool {
    let text = text.trim_start_matches('+');
    if let Some(b) = text.strip_prefix("refs/heads/") {
        return is_protected(b, protected);
    }
    if let Some(r) = text.strip_prefix("refs/remotes/") {
        return r
            .split_once('/')
            .is_some_and(|(_, b)| is_protected(b, protected));
    }
    is_protected(text, protected)
        || text
            .split_once('/')
            .is_some_and(|(_, b)| is_protected(b, protected))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Vec<String> {
        crate::branches::DEFAULT_PROTECTED_BRANCHES
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace()
            .map(|t| Word {
                text: t.to_string(),
                dynamic: t.contains('$'),
            })
            .collect()
    }

    fn check(how: BranchUse, line: &str, force: bool, delete: bool) -> bool {
        let w = words(line);
        let refs: Vec<&Word> = w.iter().collect();
        uses_protected(how, &refs, force, delete, &defaults())
    }

    #[test]
    fn refspec_destinations() {
        use BranchUse::*;
        assert!(check(Pushed, "origin main", false, false));
        assert!(check(Pushed, "origin HEAD:refs/heads/master", false, false));
        assert!(check(Pushed, "origin feature:release/2.1", false, false));
        assert!(
            !check(Pushed, "main", false, false),
            "a repository, not a refspec"
        );
        assert!(!check(Pushed, "origin feature/main-menu", false, false));
        assert!(!check(Pushed, "origin main:feature", false, false));
        assert!(check(Forced, "origin +main", false, false));
        assert!(check(Forced, "origin +HEAD:Main", false, false));
        assert!(
            check(Forced, "origin HEAD", true, false),
            "the current branch may be main"
        );
        assert!(check(Forced, "origin $BRANCH", true, false));
        assert!(!check(Forced, "origin feature/x", true, false));
        assert!(!check(Forced, "origin main", false, false));
        assert!(check(Deleted, "origin :main", false, false));
        assert!(check(Deleted, "origin main", false, true));
        assert!(check(Deleted, "origin $B", false, true));
        assert!(!check(Deleted, "origin :feature/old", false, false));
        assert!(!check(Deleted, "origin :refs/tags/v1", false, false));
    }

    #[test]
    fn named_branches() {
        use BranchUse::*;
        assert!(check(Named, "main", false, false));
        assert!(check(Named, "origin/master", false, false));
        assert!(check(Named, "refs/remotes/origin/production", false, false));
        assert!(!check(Named, "feature/login", false, false));
        assert!(!check(Named, "$b", false, false));
    }

    #[test]
    fn a_policy_list_replaces_the_defaults() {
        let mine = vec!["stable".to_string(), "v*".to_string()];
        assert!(is_protected("stable", &mine));
        assert!(is_protected("v2", &mine));
        assert!(!is_protected("main", &mine));
    }
}
