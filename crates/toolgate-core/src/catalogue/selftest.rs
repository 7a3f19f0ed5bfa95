//! Every rule's examples and counter-examples, checked by the unit tests.

use super::{Catalogue, Finding, action_specificity};
use crate::paths::Env;

impl Catalogue {
    /// Checks every rule's examples and counter-examples; returns one line per
    /// failure (empty when all hold). `env` is the context examples assume.
    pub(crate) fn self_test(&self, env: &Env) -> Vec<String> {
        let mut failures = Vec::new();
        let branches: Vec<String> = crate::branches::DEFAULT_PROTECTED_BRANCHES
            .iter()
            .map(|b| b.to_string())
            .collect();
        let findings = |text: &str| -> Vec<Finding> {
            let a = crate::shell::analyze(text, env);
            a.commands
                .iter()
                .flat_map(|c| self.match_command(c, env, &branches))
                .collect()
        };
        for rule in self.exec {
            let id = &rule.common.id;
            for ex in rule.common.examples {
                match findings(ex).iter().find(|f| &f.rule == id) {
                    None => failures.push(format!("{id}: example {ex:?} does not match")),
                    Some(f) if f.verdict != rule.common.verdict => failures.push(format!(
                        "{id}: example {ex:?} gives {} instead of {}",
                        f.verdict, rule.common.verdict
                    )),
                    Some(_) => {}
                }
            }
            for ex in rule.common.counter_examples {
                if findings(ex).iter().any(|f| &f.rule == id) {
                    failures.push(format!("{id}: counter-example {ex:?} matches"));
                }
            }
        }
        for rule in self.paths {
            for (list, want) in [
                (rule.common.examples, true),
                (rule.common.counter_examples, false),
            ] {
                for ex in list {
                    let abs = env.resolve(ex);
                    if rule.paths.iter().any(|s| self.set_matches(s, &abs, env)) != want {
                        failures.push(format!(
                            "{}: path {ex:?} {}",
                            rule.common.id,
                            if want { "does not match" } else { "matches" }
                        ));
                    }
                }
            }
        }
        for rule in self.actions {
            for (list, want) in [
                (rule.common.examples, true),
                (rule.common.counter_examples, false),
            ] {
                for ex in list {
                    let action = (*ex != "-").then_some(*ex);
                    if rule
                        .actions
                        .iter()
                        .any(|a| action_specificity(a, action).is_some())
                        != want
                    {
                        failures.push(format!(
                            "{}: action {ex:?} {}",
                            rule.common.id,
                            if want { "does not match" } else { "matches" }
                        ));
                    }
                }
            }
        }
        for rule in self.urls {
            for (list, want) in [
                (rule.common.examples, true),
                (rule.common.counter_examples, false),
            ] {
                for ex in list {
                    if self.match_url(ex).is_some_and(|f| f.rule == rule.common.id) != want {
                        failures.push(format!(
                            "{}: url {ex:?} {}",
                            rule.common.id,
                            if want { "does not match" } else { "matches" }
                        ));
                    }
                }
            }
        }
        failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_regex_compiles() {
        assert_eq!(Catalogue::builtin().compile_all(), Ok(()));
    }

    #[test]
    fn builtin_packs_pass_their_own_examples() {
        let env = Env::new("/home/dev", "/home/dev/proj");
        let cat = Catalogue::builtin();
        // the test means something only if the examples reached the rules
        let examples: usize = cat
            .exec
            .iter()
            .map(|r| r.common.examples.len() + r.common.counter_examples.len())
            .sum();
        assert!(examples > 300, "only {examples} exec examples loaded");
        assert!(cat.paths.iter().all(|r| !r.common.examples.is_empty()));
        let failures = cat.self_test(&env);
        assert!(
            failures.is_empty(),
            "{} failing examples:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}
