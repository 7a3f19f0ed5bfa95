//! `toolgate policy check | test | init | show`.

use crate::check::load_env;
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;
use toolgate_bundle::DEFAULT_POLICY_TEXT;
use toolgate_core::{Policy, Rule, RuleList};

/// Policy subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
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
    /// Start a policy of your own: write the built-in default policy, with
    /// its comments and tests, to FILE (never over an existing file).
    Init {
        /// Where to write it.
        #[arg(default_value = "toolgate.toml")]
        file: PathBuf,
    },
    /// Print a policy: `--builtin` prints the built-in default policy.
    Show {
        /// The built-in default policy (what toolgate uses without --policy).
        #[arg(long, required = true)]
        builtin: bool,
    },
}

pub(crate) fn run(cmd: PolicyCommand) -> ExitCode {
    let (file, verbose) = match &cmd {
        PolicyCommand::Check { file } => (file, false),
        PolicyCommand::Test { file } => (file, true),
        PolicyCommand::Init { file } => return init(file),
        PolicyCommand::Show { .. } => {
            print!("{DEFAULT_POLICY_TEXT}");
            return ExitCode::SUCCESS;
        }
    };
    let load = load_env();
    let engine = match toolgate_bundle::load_untested(file, &load) {
        Ok(bundle) => bundle.into_engine(),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    for w in unknown_tools(engine.policy()) {
        eprintln!("{}: warning: {w}", file.display());
    }
    let env = load.judging_env();
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

/// Writes the built-in policy to `file` (refusing to replace one), then says
/// how to use it.
fn init(file: &std::path::Path) -> ExitCode {
    use std::io::Write;
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(file)
        .and_then(|mut f| f.write_all(DEFAULT_POLICY_TEXT.as_bytes()));
    match created {
        Ok(()) => {
            let shown = file.display();
            println!("wrote {shown}: the built-in default policy, to edit");
            println!("next:");
            println!("  toolgate policy test {shown}        # its [[test]] cases, one line each");
            println!("  toolgate check --policy {shown} -- rm -rf build");
            println!("  toolgate serve --policy {shown}     # or TOOLGATE_POLICY={shown}");
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!(
                "toolgate policy init: {} already exists; nothing written (remove it or name \
                 another file)",
                file.display()
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("toolgate policy init: cannot write {}: {e}", file.display());
            ExitCode::from(1)
        }
    }
}

/// One warning per rule whose tool no runtime and no kind has: it matches
/// only a tool of exactly that name, usually a typo, so it likely never
/// applies.
fn unknown_tools(policy: &Policy) -> Vec<String> {
    let known = Rule::known_tool_names();
    let lists = [
        (RuleList::Deny, "deny"),
        (RuleList::Ask, "ask"),
        (RuleList::Allow, "allow"),
        (RuleList::AlwaysAsk, "always_ask"),
    ];
    let mut out = Vec::new();
    for (list, name) in lists {
        for rule in policy.rules(list) {
            let Some(tool) = rule.unknown_tool() else {
                continue;
            };
            let at = rule
                .location()
                .map(|(l, c)| format!(" (line {l}, column {c})"))
                .unwrap_or_default();
            let closest = known
                .iter()
                .map(|k| {
                    (
                        strsim::damerau_levenshtein(
                            &tool.to_ascii_lowercase(),
                            &k.to_ascii_lowercase(),
                        ),
                        *k,
                    )
                })
                .min();
            let hint = match closest {
                Some((d, k)) if d <= 2 => format!("; did you mean `{k}`?"),
                _ => String::new(),
            };
            out.push(format!(
                "[rules] {name} rule `{}`{at} names the tool `{tool}`, which no runtime has: it \
                 applies only to a tool of exactly that name{hint}",
                rule.text()
            ));
        }
    }
    out
}
