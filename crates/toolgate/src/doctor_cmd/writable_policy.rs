//! Whether the policy a hook decides with could be rewritten by the agent
//! it guards (`toolgate_bundle::agent_writable`, as a hook checks it: the
//! hook's own user is the agent's).

use super::report::Level;
use std::path::Path;

/// A finding about `policy` (the file a hook entry names), for a hook
/// working in `project`; `allowed`: its command line carries
/// `--allow-writable-policy`. `None` when the agent cannot change it.
pub(super) fn check(
    policy: &Path,
    allowed: bool,
    project: &Path,
) -> Option<(Level, String, String)> {
    // A policy that is not there is reported as unusable, once.
    if !policy.exists() {
        return None;
    }
    let w = toolgate_bundle::agent_writable(
        &[policy.to_path_buf()],
        toolgate_bundle::Writers::ThisUser,
        project,
    )?;
    let what = format!(
        "the policy {} can be rewritten by the agent: {} {}",
        policy.display(),
        w.path.display(),
        w.why
    );
    let fix = "sudo toolgate setup separated (the policy root-owned in /etc/toolgate); or \
               chown the policy and its directories to root and remove group/other write"
        .to_string();
    Some(if allowed {
        (
            Level::Warn,
            format!("{what}; the hook accepts that (--allow-writable-policy: same-user mode)"),
            fix,
        )
    } else {
        (
            Level::Error,
            format!("{what}, so the hook refuses it and denies every call"),
            format!("{fix}; or add --allow-writable-policy to the hook's command (same-user mode)"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_in_the_project_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let policy = dir.path().join("toolgate.toml");
        std::fs::write(&policy, "[rules]\n").unwrap();
        let (level, message, fix) = check(&policy, false, dir.path()).unwrap();
        assert_eq!(level, Level::Error);
        assert!(message.contains("working directory"), "{message}");
        assert!(fix.contains("--allow-writable-policy"), "{fix}");
        let (level, _, _) = check(&policy, true, dir.path()).unwrap();
        assert_eq!(level, Level::Warn);
    }
}
