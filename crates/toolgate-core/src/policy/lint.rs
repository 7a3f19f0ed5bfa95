//! What `toolgate policy check` warns about in a policy that parses: allow
//! rules that can never apply, and quorums that can never be met. Each
//! warning is one sentence saying what is wrong and what to change.

use super::{Policy, RuleList};
use crate::model::RiskClass;

/// Where a rule was written, as ` (line L, column C)`, or nothing.
fn at(rule: &super::Rule) -> String {
    rule.location()
        .map(|(l, c)| format!(" (line {l}, column {c})"))
        .unwrap_or_default()
}

impl Policy {
    /// The warnings about this policy's rules and quorums, in file order:
    ///
    /// * an allow rule that a deny, ask or always_ask rule covers (deny wins
    ///   over ask, ask over allow: it never lets anything through), or that
    ///   an earlier allow rule covers (it adds nothing);
    /// * a quorum no set of the approvers the policy allows can reach
    ///   (more approvals than `[approvals] operators` names, a person
    ///   required with `user_request` off, …): every escalation of that
    ///   class would wait until it expires.
    ///
    /// Only what can be decided from the policy alone; `toolgate policy
    /// check` adds the warnings that need the engine.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let allow = self.rules(RuleList::Allow);
        for (i, rule) in allow.iter().enumerate() {
            let stronger = [
                (RuleList::Deny, "deny", "blocks"),
                (RuleList::Ask, "ask", "holds for approval"),
                (RuleList::AlwaysAsk, "always_ask", "holds for approval"),
            ]
            .into_iter()
            .find_map(|(list, name, does)| {
                self.rules(list)
                    .iter()
                    .find(|r| r.covers(rule))
                    .map(|r| (r, name, does))
            });
            if let Some((by, name, does)) = stronger {
                out.push(format!(
                    "[rules] allow rule `{}`{} never applies: the {name} rule `{}`{} {does} \
                     every call it would allow ({name} wins over allow); remove one of them",
                    rule.text(),
                    at(rule),
                    by.text(),
                    at(by)
                ));
            } else if let Some(earlier) = allow[..i].iter().find(|r| r.covers(rule)) {
                out.push(format!(
                    "[rules] allow rule `{}`{} adds nothing: the earlier allow rule `{}`{} \
                     already covers every call it matches; remove it",
                    rule.text(),
                    at(rule),
                    earlier.text(),
                    at(earlier)
                ));
            }
        }
        let a = self.approvals();
        for class in [RiskClass::R1, RiskClass::R2, RiskClass::R3, RiskClass::R4] {
            if let Err(e) = a.requirement(class, a.model.is_some(), &|_| false) {
                out.push(format!(
                    "[approvals] quorum {class} can never be met: {}; until then every {class} \
                     escalation waits until it expires",
                    e.detail
                ));
            } else if let Some((who, e)) = a.operators.iter().find_map(|o| {
                a.requirement(class, a.model.is_some(), &|x| x == o)
                    .err()
                    .map(|e| (o, e))
            }) {
                // The requester cannot approve their own call: with one of
                // the named operators asking, fewer can vote.
                out.push(format!(
                    "[approvals] quorum {class} can never be met for a call {who} asks for \
                     (the requester cannot approve it): {}",
                    e.detail
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::Rule;
    use super::*;

    /// Coverage is claimed only where it is plain.
    #[test]
    fn a_rule_covers_the_same_or_narrower_calls_only() {
        let r = |t: &str| Rule::parse(t).unwrap();
        assert!(r("exec(rm:*)").covers(&r("exec(rm -rf build:*)")));
        assert!(r("Bash(rm:*)").covers(&r("exec(rm -rf build)")));
        assert!(r("exec(rm -rf build)").covers(&r("exec(rm -rf build)")));
        assert!(r("*").covers(&r("read(./**)")));
        assert!(r("exec").covers(&r("exec(ls:*)")));
        assert!(r("read(~/.ssh/**)").covers(&r("read(~/.ssh/**)")));
        assert!(!r("exec(rm -rf build)").covers(&r("exec(rm -rf build:*)")));
        assert!(!r("exec(rm -rf build:*)").covers(&r("exec(rm:*)")));
        assert!(!r("exec(rm:*)").covers(&r("exec")));
        assert!(!r("read(./src/**)").covers(&r("read(./**)")));
        assert!(!r("read(./**)").covers(&r("write(./**)")));
    }

    /// Warnings name the rule that never applies and the one that wins,
    /// and each quorum no approvers can reach.
    #[test]
    fn warnings_name_the_rules_and_quorums() {
        let p = Policy::from_toml_str(
            "[rules]\nask = [\"exec(git push:*)\"]\nallow = [\"exec(git push origin dev)\", \
             \"exec(ls:*)\", \"exec(ls -la)\"]\n[approvals]\nquorum = { R2 = 1, R3 = 2, R4 = 2 }\n\
             operators = [\"alice\"]\n",
            "t.toml",
        )
        .unwrap();
        let w = p.warnings();
        assert!(
            w.iter().any(|w| w.contains("`exec(git push origin dev)`")
                && w.contains("the ask rule `exec(git push:*)`")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|w| w.contains("`exec(ls -la)`") && w.contains("`exec(ls:*)`")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|w| w.contains("quorum R3 can never be met")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|w| w.contains("quorum R4 can never be met")),
            "{w:?}"
        );
        // Alice alone cannot approve what she asked for, at any class.
        assert!(
            w.iter()
                .any(|w| w.contains("quorum R2 can never be met for a call alice asks for")),
            "{w:?}"
        );
        assert_eq!(w.len(), 6, "{w:?}");
        let ok = Policy::from_toml_str("[rules]\nallow = [\"exec(ls:*)\"]\n", "t.toml").unwrap();
        assert!(ok.warnings().is_empty(), "{:?}", ok.warnings());
    }
}
