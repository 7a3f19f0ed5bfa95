//! `toolgate policy check | test | init | show`.

use crate::check::load_env;
use clap::Subcommand;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::process::ExitCode;
use toolgate_bundle::DEFAULT_POLICY_TEXT;
use toolgate_core::{Engine, Policy, Rule, RuleList};

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
    /// its comments and tests, to your config directory (never over an
    /// existing file, never into the working directory).
    Init {
        /// Where to write it. Default: $XDG_CONFIG_HOME/toolgate/policy.toml
        /// (~/.config/toolgate/policy.toml). Not inside the working
        /// directory: an agent working there could rewrite it.
        file: Option<PathBuf>,
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
        PolicyCommand::Init { file } => return init(file.as_deref()),
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
    let mut warnings = unknown_tools(engine.policy());
    warnings.extend(engine.policy().warnings());
    warnings.extend(allows_that_stop_nothing(&engine, &load.judging_env()));
    warnings.extend(allows_of_dangerous_samples(&engine, &load.judging_env()));
    for w in &warnings {
        eprintln!("{}: warning: {w}", file.display());
    }
    // A note, not a warning: stdout, beside the summary.
    if !engine.policy().organization().configured {
        println!(
            "{}: note: no [organization] section, so no recipient counts as inside: every message, \
             invitation or share to anyone waits for approval. Name your email domains, \
             code-hosting owners and private channels (docs/tool-effects.md).",
            file.display()
        );
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
            let warned = match warnings.len() {
                0 => String::new(),
                1 => "; 1 warning".to_string(),
                n => format!("; {n} warnings"),
            };
            println!(
                "{}: ok ({} deny, {} ask, {} allow, {} always_ask rules; {total} tests \
                 pass{warned})",
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

/// The user's own policy file: `$XDG_CONFIG_HOME/toolgate/policy.toml`,
/// else `~/.config/toolgate/policy.toml`.
fn config_policy() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(config.join("toolgate").join("policy.toml"))
}

/// Writes the built-in policy to `file` (default: [`config_policy`]),
/// refusing to replace one or to write into the working directory, then
/// says how to use it.
fn init(file: Option<&std::path::Path>) -> ExitCode {
    use std::io::Write;
    let default = config_policy();
    let Some(file) = file.map(std::path::Path::to_path_buf).or(default.clone()) else {
        eprintln!(
            "toolgate policy init: neither XDG_CONFIG_HOME nor HOME is set; name the file to write"
        );
        return ExitCode::from(1);
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let target = std::path::absolute(&file).unwrap_or_else(|_| cwd.join(&file));
    let in_config = default
        .as_deref()
        .and_then(std::path::Path::parent)
        .is_some_and(|d| target.starts_with(d));
    let in_cwd = cwd != std::path::Path::new("/")
        && (target.starts_with(&cwd) || cwd.canonicalize().is_ok_and(|c| target.starts_with(c)));
    if in_cwd && !in_config {
        eprintln!(
            "toolgate policy init: {} is inside the working directory {}, where an agent working \
             here could rewrite it; nothing written. Run `toolgate policy init` without a file to \
             write your config directory's policy, or name a file outside the project",
            target.display(),
            cwd.display()
        );
        return ExitCode::from(1);
    }
    if let Some(dir) = target.parent()
        && let Err(e) = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    {
        eprintln!("toolgate policy init: cannot create {}: {e}", dir.display());
        return ExitCode::from(1);
    }
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&target)
        .and_then(|mut f| f.write_all(DEFAULT_POLICY_TEXT.as_bytes()));
    match created {
        Ok(()) => {
            let shown = target.display();
            println!("wrote {shown}: the built-in default policy, to edit");
            println!("next:");
            println!("  toolgate policy test {shown}        # its [[test]] cases, one line each");
            println!("  toolgate check --policy {shown} -- rm -rf build");
            println!(
                "  toolgate serve --policy {shown} --allow-writable-policy   # same-user mode"
            );
            println!(
                "The file is yours, so an agent running as you could rewrite it: `serve` and \
                 `hook` refuse it unless given --allow-writable-policy (same-user mode: protected \
                 by judgement only)."
            );
            println!(
                "For a hard guarantee run `sudo toolgate setup separated`: the policy root-owned \
                 in /etc/toolgate, the daemon as a user of its own."
            );
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!(
                "toolgate policy init: {} already exists; nothing written (edit it, remove it, or \
                 name another file)",
                target.display()
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!(
                "toolgate policy init: cannot write {}: {e}",
                target.display()
            );
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

/// Dangerous calls no allow rule should let through: each deletes, empties
/// or overwrites the user's files, history or shared state, and each is an
/// escalation (R2 or R3) an allow rule can lift. Judged as a shell call in
/// a project under the home directory.
const DANGEROUS_SAMPLES: [(&str, &str); 10] = [
    ("rm -rf ~/Documents", "deletes the user's documents"),
    ("rm -r ~/Documents/*", "deletes the user's documents"),
    ("find ~/Documents -delete", "deletes the user's documents"),
    (
        "rsync -a --delete /tmp/empty/ ~/Documents/",
        "empties the user's documents",
    ),
    (
        "truncate -s 0 ~/Documents/notes.md",
        "empties a user's file",
    ),
    (
        "dd if=/dev/zero of=~/Documents/thesis.pdf",
        "overwrites a user's file",
    ),
    ("git reset --hard HEAD~5", "throws away commits and work"),
    ("git clean -fdx", "deletes every untracked file"),
    ("crontab -r", "deletes the user's scheduled jobs"),
    (
        "curl -X DELETE https://api.example.com/v1/projects/1",
        "deletes a resource through an API",
    ),
];

/// A shell call of `command`, run in `cwd`.
fn shell_call(command: &str, cwd: &str) -> toolgate_core::ToolCall {
    let mut params = serde_json::Map::new();
    params.insert("command".into(), command.into());
    toolgate_core::ToolCall {
        tool: "exec".into(),
        params,
        cwd: Some(cwd.to_string()),
        ..toolgate_core::ToolCall::default()
    }
}

/// Where the samples are judged: a project directory in the home.
fn sample_cwd(env: &toolgate_core::paths::Env) -> String {
    format!("{}/project", env.home.trim_end_matches('/'))
}

/// The allow rule (of `policy`) an assessment's allowing verdict names.
fn allowing_rule<'p>(
    policy: &'p Policy,
    a: &toolgate_core::Assessment,
) -> Option<&'p toolgate_core::Rule> {
    if a.decision.decision != toolgate_core::Verdict::Allow {
        return None;
    }
    a.verdicts
        .iter()
        .filter(|v| v.verdict == toolgate_core::Verdict::Allow)
        .filter_map(|v| v.rule.as_deref())
        .find_map(|text| {
            policy
                .rules(RuleList::Allow)
                .iter()
                .find(|r| r.text() == text)
        })
}

/// One warning per allow rule (or never_block entry) that lets one of
/// [`DANGEROUS_SAMPLES`] through, naming the samples it allows.
fn allows_of_dangerous_samples(engine: &Engine, env: &toolgate_core::paths::Env) -> Vec<String> {
    let policy = engine.policy();
    let cwd = sample_cwd(env);
    let mut by_rule: Vec<(String, Vec<String>)> = Vec::new();
    for (command, what) in DANGEROUS_SAMPLES {
        let a = engine.decide(&shell_call(command, &cwd), env);
        if a.decision.decision != toolgate_core::Verdict::Allow {
            continue;
        }
        let culprit = match allowing_rule(policy, &a) {
            Some(rule) => {
                let at = rule
                    .location()
                    .map(|(l, c)| format!(" (line {l}, column {c})"))
                    .unwrap_or_default();
                format!("[rules] allow rule `{}`{at}", rule.text())
            }
            None if a.decision.reason.contains("never_block") => {
                "[rules] never_block (it names the shell tool)".to_string()
            }
            // Allowed without any rule of the policy's: not a rule's doing.
            None => continue,
        };
        let sample = format!("`{command}` ({what})");
        match by_rule.iter_mut().find(|(c, _)| *c == culprit) {
            Some((_, samples)) => samples.push(sample),
            None => by_rule.push((culprit, vec![sample])),
        }
    }
    by_rule
        .into_iter()
        .map(|(culprit, samples)| {
            format!(
                "{culprit} lets dangerous calls through without approval: {}; narrow it to the \
                 commands you mean (allow rules lift R2 and R3 escalations)",
                samples.join(", ")
            )
        })
        .collect()
}

/// One warning per shell allow rule whose own command (its words, without
/// `:*`) is still stopped: held at R4 or blocked, which no allow rule
/// lifts, so the rule never lets that command through.
fn allows_that_stop_nothing(engine: &Engine, env: &toolgate_core::paths::Env) -> Vec<String> {
    let policy = engine.policy();
    let cwd = sample_cwd(env);
    let mut out = Vec::new();
    for rule in policy.rules(RuleList::Allow) {
        if rule.tool_kind() != Some(toolgate_core::ToolKind::Exec) {
            continue;
        }
        // Covered by a deny or ask rule: already said.
        let stronger = [RuleList::Deny, RuleList::Ask, RuleList::AlwaysAsk]
            .into_iter()
            .any(|l| policy.rules(l).iter().any(|r| r.covers(rule)));
        if stronger {
            continue;
        }
        let text = rule.text();
        let Some(spec) = text
            .find('(')
            .and_then(|i| text.get(i + 1..text.len().saturating_sub(1)))
            .map(str::trim)
        else {
            continue;
        };
        let command = spec
            .strip_suffix(":*")
            .or_else(|| spec.strip_suffix(" *"))
            .unwrap_or(spec)
            .trim();
        if command.is_empty() || command == "*" {
            continue;
        }
        let a = engine.decide(&shell_call(command, &cwd), env);
        let d = &a.decision;
        let stopped = d.decision == toolgate_core::Verdict::Block
            || (d.decision == toolgate_core::Verdict::Escalate
                && d.risk == toolgate_core::RiskClass::R4);
        if stopped {
            let at = rule
                .location()
                .map(|(l, c)| format!(" (line {l}, column {c})"))
                .unwrap_or_default();
            out.push(format!(
                "[rules] allow rule `{text}`{at} never lets `{command}` through: it is {} at {} \
                 ({}), and allow rules lift only R2 and R3 escalations; remove the rule, or \
                 approve such calls one by one",
                if d.decision == toolgate_core::Verdict::Block {
                    "blocked"
                } else {
                    "held for approval"
                },
                d.risk,
                d.reason
            ));
        }
    }
    out
}
