//! `toolgate hook <runtime>`: an agent runtime's pre-tool hook. Reads the
//! runtime's payload on stdin, decides (through the daemon when
//! `TOOLGATE_URL` is set, else in this process), and prints the runtime's
//! answer. It always exits 0 with a JSON answer, because every runtime reads
//! the JSON only then; whatever goes wrong is answered with a denial that
//! says what happened — never a silent allow.

use crate::decider::{Decider, DeciderArgs};
use crate::state::DataDirArgs;
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::Value;
use std::io::{Read, Write};
use std::process::ExitCode;
use toolgate_core::hooks::Runtime;

/// Largest payload read from stdin.
const MAX_INPUT: u64 = 1 << 20;

/// Arguments of `toolgate hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The runtime whose protocol to speak: claude-code, codex, gemini or cursor.
    runtime: String,
    #[command(flatten)]
    decide: DeciderArgs,
}

pub fn run(args: HookArgs, data: &DataDirArgs) -> ExitCode {
    let Some(runtime) = Runtime::parse(&args.runtime) else {
        eprintln!(
            "toolgate hook: unknown runtime {:?}: use claude-code, codex, gemini or cursor",
            args.runtime
        );
        return ExitCode::from(2);
    };
    // The decider outlives the answer: closing its store may fold the WAL
    // into the database, which the answer (already durable) need not wait for.
    let mut decider = None;
    let answer = match answer(runtime, &args, data, &mut decider) {
        Ok(v) => v,
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("toolgate hook: {msg}");
            runtime.reply_error(&msg)
        }
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{answer}")
        .and_then(|()| out.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    drop(out);
    drop(decider);
    ExitCode::SUCCESS
}

fn answer(
    runtime: Runtime,
    args: &HookArgs,
    data: &DataDirArgs,
    keep: &mut Option<Decider>,
) -> Result<Value> {
    let mut input = Vec::new();
    std::io::stdin()
        .take(MAX_INPUT + 1)
        .read_to_end(&mut input)
        .context("cannot read the hook payload on stdin")?;
    if input.len() as u64 > MAX_INPUT {
        bail!("the hook payload is over {} KiB", MAX_INPUT / 1024);
    }
    let payload = toolgate_core::input::parse_json(&input).map_err(|e| anyhow!("{e}"))?;
    let Some(call) = runtime.to_call(&payload).map_err(|e| anyhow!("{e}"))? else {
        return Ok(runtime.no_opinion());
    };
    let decider = keep.insert(args.decide.decider(data)?);
    Ok(runtime.reply(&decider.check(&call)?))
}
