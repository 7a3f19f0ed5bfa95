//! `toolgate policy check | test`.

use crate::check::{base_env, engine_for, load_policy_file};
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;
use toolgate_core::policy::RuleList;

/// Policy subcommands.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Check that a policy file parses and its [[test]] cases pass.
    Check {
        /// The policy file (TOML).
        file: PathBuf,
    },
    /// Run a policy's [[test]] cases and report each one.
    Test {
        /// The policy file (TOML).
        file: PathBuf,
    },
}

pub fn run(cmd: PolicyCommand) -> ExitCode {
    let (file, verbose) = match &cmd {
        PolicyCommand::Check { file } => (file, false),
        PolicyCommand::Test { file } => (file, true),
    };
    let policy = match load_policy_file(file) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    let engine = engine_for(policy);
    let env = base_env();
    let failures = engine.run_policy_tests(&env);
    let total = engine.policy().tests().len();
    if verbose {
        for t in engine.policy().tests() {
            let d = engine.decide(&t.call, &env);
            let ok = t.expect.accepts(d.decision.decision);
            let label = t
                .name
                .clone()
                .unwrap_or_else(|| format!("line {}", t.location.0));
            println!(
                "{} {label}: expected {}, got {} — {}",
                if ok { "PASS" } else { "FAIL" },
                t.expect.as_str(),
                d.decision.decision,
                d.decision.reason
            );
        }
    }
    let p = engine.policy();
    let rules = [
        RuleList::Deny,
        RuleList::Ask,
        RuleList::Allow,
        RuleList::AlwaysAsk,
    ]
    .map(|l| p.rules(l).len());
    if failures.is_empty() {
        if verbose {
            println!("{total} passed, 0 failed");
        } else {
            println!(
                "{}: ok ({} deny, {} ask, {} allow, {} always_ask rules; {total} tests pass)",
                file.display(),
                rules[0],
                rules[1],
                rules[2],
                rules[3]
            );
        }
        ExitCode::SUCCESS
    } else {
        for f in &failures {
            eprintln!(
                "{}: test {} expected {}, got {}",
                file.display(),
                f.case,
                f.expected,
                f.got
            );
        }
        if verbose {
            println!(
                "{} passed, {} failed",
                total - failures.len(),
                failures.len()
            );
        }
        ExitCode::from(1)
    }
}
