//! toolgate's own settings set in a command's environment
//! (`TOOLGATE_URL=none codex …`, `TOOLGATE_POLICY=/tmp/p.toml claude`): the
//! agent started that way, or its hooks, would ask another gate, read
//! another policy or keep no record. Tampering with the gate, blocked.

use super::Finding;
use crate::model::{RiskClass, Verdict};
use crate::shell::SimpleCommand;

/// The rule id, shared with the pack rule for `export TOOLGATE_…`.
pub(super) const RULE: &str = "system.toolgate-environment";

/// The finding for a command run with a `TOOLGATE_*` variable of its own.
pub(super) fn check(cmd: &SimpleCommand) -> Option<Finding> {
    let (var, _) = cmd
        .assignments
        .iter()
        .find(|(v, _)| v.to_ascii_uppercase().starts_with("TOOLGATE_"))?;
    Some(Finding {
        rule: RULE.to_string(),
        class: RiskClass::R4,
        verdict: Verdict::Block,
        reason: format!(
            "runs {} with {var} set: toolgate's own settings are not the agent's to change",
            cmd.program
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::Env;

    #[test]
    fn the_gates_settings_in_a_commands_environment_are_blocked() {
        let env = Env::new("/home/dev", "/home/dev/proj");
        let found = |c: &str| {
            crate::shell::analyze(c, &env)
                .commands
                .iter()
                .find_map(check)
                .is_some()
        };
        assert!(found("TOOLGATE_URL=none TOOLGATE_DATA_DIR=/tmp/x codex"));
        assert!(found("env TOOLGATE_POLICY=/tmp/allow.toml claude -p hi"));
        assert!(!found("RUST_LOG=debug cargo test"));
    }
}
