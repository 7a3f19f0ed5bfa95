//! `toolgate hook <runtime>`: an agent runtime's pre-tool hook. Reads the
//! runtime's payload on stdin, decides (through the daemon `--url` names,
//! pinned by `--daemon-key` or `--daemon-uid`, else in this process), and
//! answers the way that runtime obeys (`toolgate_core::hooks`). What
//! `toolgate install` writes names the binary by its absolute path and
//! every setting on the command line (`--policy`, `--url`, the pins, the
//! data dir or `--store none`), so no environment variable the agent can
//! set for the runtime (`TOOLGATE_URL`, `TOOLGATE_POLICY`,
//! `TOOLGATE_DATA_DIR`, `TOOLGATE_STORE`, `HOME`) redirects it.
//!
//! Whatever goes wrong is answered with the runtime's fail-closed denial,
//! never a silent allow: a bad payload, a daemon that does not answer, a
//! panic, and time running out. Some runtimes (Codex, Gemini CLI) run the
//! call when a hook times out or crashes, and have no switch to stop that,
//! so this process answers by itself before the runtime's timeout: its
//! deadline (`crate::deadline`) prints the denial once `--timeout` minus a
//! margin has passed, whatever the decision is still waiting for.

use crate::deadline;
use crate::decider::{Decider, DeciderArgs};
use crate::state::DataDirArgs;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use toolgate_core::hooks::{HookAnswer, ReplyContext, Runtime};
use toolgate_core::{HookSettings, Verdict};

/// Largest payload read from stdin.
const MAX_INPUT: u64 = 1 << 20;
/// The hook answers this long before the runtime's timeout at the latest.
const MARGIN: Duration = Duration::from_millis(1500);
/// The runtime's timeout when `--timeout` is not given: what `toolgate
/// install` writes without a hold.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Arguments of `toolgate hook`.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// The runtime whose protocol to speak: claude-code, codex, gemini or cursor.
    runtime: String,
    #[command(flatten)]
    decide: DeciderArgs,
    /// The runtime's timeout for this hook, in seconds (as installed): the
    /// hook answers with a denial before it runs out, whatever is pending.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT.as_secs())]
    timeout: u64,
    /// Decide with a policy this user (the agent's) can change (same-user
    /// mode); without it such a policy is refused and every call denied.
    #[arg(long)]
    allow_writable_policy: bool,
}

/// Exactly one answer leaves the process: the decision's, the deadline's
/// or the panic guard's, whichever comes first ([`deadline::claim`]).
struct Answerer {
    runtime: Runtime,
}

impl Answerer {
    /// Prints `answer` and returns its exit code, unless an answer was
    /// given already (then `None`: the caller must not print or exit with
    /// another one).
    fn give(&self, answer: &HookAnswer) -> Option<u8> {
        if !deadline::claim() {
            return None;
        }
        if let Some(text) = answer.stderr.as_deref() {
            eprintln!("{text}");
        }
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{}", answer.stdout)
            .and_then(|()| out.flush())
            .is_err()
        {
            return Some(2);
        }
        Some(answer.exit)
    }

    fn fail(&self, message: &str) -> Option<u8> {
        eprintln!("toolgate hook: {message}");
        self.give(&self.runtime.reply_error(message))
    }
}

pub(crate) fn run(args: HookArgs, data: &DataDirArgs) -> ExitCode {
    let Some(runtime) = Runtime::parse(&args.runtime) else {
        eprintln!(
            "toolgate hook: unknown runtime {:?}: use {}",
            args.runtime,
            Runtime::names()
        );
        return ExitCode::from(2);
    };
    let answerer = Arc::new(Answerer { runtime });
    guard_panics(&answerer);
    crate::check::guard_policies(if args.allow_writable_policy {
        toolgate_bundle::PolicyGuard::Allowed
    } else {
        toolgate_bundle::PolicyGuard::Refuse(toolgate_bundle::Writers::ThisUser)
    });
    let budget = Duration::from_secs(args.timeout.max(1))
        .saturating_sub(MARGIN)
        .max(Duration::from_millis(500));
    arm_deadline(runtime, budget);

    // The decider outlives the answer: readying its store for the exit may
    // fold the WAL into the database, which the answer (already durable)
    // need not wait for.
    let mut decider = None;
    let cancel = AtomicBool::new(false);
    let answer = match answer(runtime, &args, data, &mut decider, budget, &cancel) {
        Ok(a) => a,
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("toolgate hook: {msg}");
            runtime.reply_error(&msg)
        }
    };
    let code = answerer.give(&answer);
    if let Some(d) = &decider {
        d.prepare_exit();
    }
    // Closing the store cleanly (finalizing statements, freeing the parsed
    // schema: ~0.13 M instructions) is work the exit does for free; what
    // closing does that matters was just done.
    std::mem::forget(decider);
    match code {
        Some(c) => ExitCode::from(c),
        // The deadline answered already and is exiting the process.
        None => loop {
            std::thread::park();
        },
    }
}

/// A panic anywhere answers with the runtime's denial (a crashed hook runs
/// the call in some runtimes) and exits with that answer's code.
fn guard_panics(answerer: &Arc<Answerer>) {
    let a = Arc::clone(answerer);
    std::panic::set_hook(Box::new(move |info| {
        let code = a.fail(&format!("toolgate crashed: {info}")).unwrap_or(2);
        std::process::exit(i32::from(code));
    }));
}

/// After `budget`, answers with the runtime's denial and exits, whatever
/// the decision is still waiting for.
fn arm_deadline(runtime: Runtime, budget: Duration) {
    let message = format!(
        "no decision within {} s, before the runtime's hook timeout",
        budget.as_secs_f32()
    );
    let answer = runtime.reply_error(&message);
    let mut stderr = format!("toolgate hook: {message}\n");
    if let Some(text) = answer.stderr.as_deref() {
        stderr.push_str(text);
        stderr.push('\n');
    }
    deadline::arm(
        budget,
        deadline::Rendered {
            stderr: stderr.into_bytes(),
            stdout: format!("{}\n", answer.stdout).into_bytes(),
            exit: answer.exit,
        },
    );
}

fn answer(
    runtime: Runtime,
    args: &HookArgs,
    data: &DataDirArgs,
    keep: &mut Option<Decider>,
    budget: Duration,
    cancel: &AtomicBool,
) -> Result<HookAnswer> {
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut input)
        .context("cannot read the hook payload on stdin")?;
    if input.len() as u64 > MAX_INPUT {
        bail!("the hook payload is over {} KiB", MAX_INPUT / 1024);
    }
    let payload = toolgate_core::parse_json(&input).map_err(|e| anyhow!("{e}"))?;
    let Some(hook_call) = runtime.to_call(&payload).map_err(|e| anyhow!("{e}"))? else {
        return Ok(runtime.no_opinion());
    };
    let decider = keep.insert(args.decide.decider(data)?);
    let settings = hook_settings(decider, &args.decide)?;
    let call = &hook_call.call;
    let mut decision = decider.check(call)?;
    if decision.decision == Verdict::Escalate && !settings.hold.is_zero() {
        // Leave time to answer after the wait: the watchdog answers at `budget`.
        let wait = settings
            .hold
            .min(budget.saturating_sub(Duration::from_secs(1)));
        decision = decider.wait(call, decision, wait, cancel)?;
    }
    let ctx = ReplyContext {
        mode: hook_call.mode.as_deref(),
        host_prompt: settings.host_prompt,
        allow_is_final: settings.allow_is_final,
    };
    Ok(runtime.reply(&decision, &ctx))
}

/// The `[hooks]` settings: the policy this process decides with, or, when
/// the daemon decides, the policy file named for the hook (defaults, which
/// hold nothing and never hand a call to the runtime's prompt, otherwise).
fn hook_settings(decider: &Decider, args: &DeciderArgs) -> Result<HookSettings> {
    match (decider, args.policy_file()) {
        (Decider::Local(gate), _) => Ok(gate.engine().policy().hooks().clone()),
        (Decider::Daemon(_), Some(path)) => {
            Ok(crate::check::load_policy_file(path)?.hooks().clone())
        }
        (Decider::Daemon(_), None) => Ok(HookSettings::default()),
    }
}
