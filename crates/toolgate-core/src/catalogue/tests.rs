use super::{Finding, program_verb};
use crate::paths::Env;
use crate::shell::SimpleCommand;

/// The first finding a per-command reading (`gomod::check`,
/// `index_env::check`, …) makes of any command of `command`, analysed in
/// `/home/dev/proj`.
pub(super) fn first_finding(
    check: fn(&SimpleCommand) -> Option<Finding>,
    command: &str,
) -> Option<Finding> {
    let env = Env::new("/home/dev", "/home/dev/proj");
    crate::shell::analyze(command, &env)
        .commands
        .iter()
        .find_map(check)
}

#[test]
fn a_program_named_for_destruction_is_read_by_its_name() {
    for p in [
        "kafka-delete-records.sh",
        "drop_all_tables",
        "purge-cdn",
        "reset-db.sh",
    ] {
        assert!(program_verb(p).is_some(), "{p}");
    }
    for p in ["reset", "deploy.sh", "remove", "build-assets", "dropbox"] {
        assert!(program_verb(p).is_none(), "{p}");
    }
}

#[test]
fn excluded_programs_are_sorted_for_bisection() {
    let cat = super::Catalogue::builtin();
    for rule in cat.exec {
        assert!(
            rule.programs_not.windows(2).all(|w| w[0] < w[1]),
            "{}: programs_not is not sorted",
            rule.common.id
        );
    }
    let verbs = cat
        .exec
        .iter()
        .find(|r| r.common.id == "verbs.destructive-subcommand")
        .expect("the verb rule");
    let env = crate::paths::Env::new("/home/dev", "/home/dev/proj");
    let branches: Vec<String> = Vec::new();
    for (line, excluded) in [("echo delete x", true), ("zz-cli delete x", false)] {
        let a = crate::shell::analyze(line, &env);
        let hit = cat
            .match_command(&a.commands[0], &env, &branches)
            .iter()
            .any(|f| f.rule == verbs.common.id);
        assert_eq!(hit, !excluded, "{line}");
    }
}
