//! `toolgate check`: ToolCall JSON in, Decision JSON out.

use anyhow::{Context, Result, anyhow};
use clap::Args;
use serde_json::Value;
use std::io::{BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use toolgate_core::engine::Engine;
use toolgate_core::model::ToolCall;
use toolgate_core::paths::Env;
use toolgate_core::policy::Policy;

/// The policy used when none is given.
pub const DEFAULT_POLICY: &str = include_str!("../../../policies/default.toml");

/// Arguments of `toolgate check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Policy file (TOML); the built-in default policy when absent.
    #[arg(long, env = "TOOLGATE_POLICY")]
    policy: Option<PathBuf>,
    /// One ToolCall per input line, one Decision per output line (with the
    /// input's `id` echoed).
    #[arg(long)]
    jsonl: bool,
}

/// The environment calls are judged in: `$HOME` and the current directory.
pub fn base_env() -> Env {
    let home = std::env::var("HOME")
        .ok()
        .filter(|h| h.starts_with('/'))
        .unwrap_or_else(|| "/root".to_string());
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".to_string());
    Env::new(home, cwd)
}

/// Reads and parses a policy file, running its `[[test]]` cases.
pub fn load_policy_file(path: &Path) -> Result<Policy> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read policy file {}: check the path and permissions",
            path.display()
        )
    })?;
    let policy =
        Policy::from_toml_str(&text, &path.display().to_string()).map_err(|e| anyhow!("{e}"))?;
    Ok(policy)
}

fn load_engine(path: Option<&Path>) -> Result<Engine> {
    let policy = match path {
        Some(p) => load_policy_file(p)?,
        None => Policy::from_toml_str(DEFAULT_POLICY, "policies/default.toml")
            .map_err(|e| anyhow!("{e}"))?,
    };
    let engine = Engine::new(policy);
    let failures = engine.run_policy_tests(&base_env());
    if let Some(f) = failures.first() {
        return Err(anyhow!(
            "policy {}: [[test]] {} expected {}, got {} ({} failing; run `toolgate policy test` for all)",
            engine.policy().origin(),
            f.case,
            f.expected,
            f.got,
            failures.len()
        ));
    }
    Ok(engine)
}

/// Parses one ToolCall from JSON text, with errors a person can act on.
fn parse_call(text: &str) -> Result<(ToolCall, Option<Value>)> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| anyhow!("input is not valid JSON ({e})"))?;
    let Value::Object(obj) = &value else {
        return Err(anyhow!(
            "input must be a JSON object like {{\"tool\":\"exec\",\"params\":{{\"command\":\"ls\"}}}}"
        ));
    };
    let id = obj.get("id").cloned();
    match obj.get("tool") {
        Some(Value::String(t)) if !t.trim().is_empty() => {}
        Some(Value::String(_)) => {
            return Err(anyhow!("\"tool\" is empty: name the tool being called"));
        }
        Some(_) => {
            return Err(anyhow!(
                "\"tool\" must be a string naming the tool being called"
            ));
        }
        None => {
            return Err(anyhow!(
                "missing \"tool\": a ToolCall needs {{\"tool\": NAME, \"params\": {{…}}}}"
            ));
        }
    }
    if let Some(p) = obj.get("params")
        && !p.is_object()
        && !p.is_null()
    {
        return Err(anyhow!("\"params\" must be a JSON object"));
    }
    let mut value = value;
    if let Some(obj) = value.as_object_mut()
        && obj.get("params").is_some_and(Value::is_null)
    {
        obj.remove("params");
    }
    let call: ToolCall =
        serde_json::from_value(value).map_err(|e| anyhow!("input is not a ToolCall: {e}"))?;
    Ok((call, id))
}

fn decide_json(engine: &Engine, env: &Env, call: &ToolCall, id: Option<Value>) -> Result<String> {
    let start = Instant::now();
    let assessment = engine.decide(call, env);
    let mut decision = assessment.decision;
    decision.elapsed_us = start.elapsed().as_micros() as u64;
    let mut v = serde_json::to_value(&decision)?;
    if let (Some(id), Some(obj)) = (id, v.as_object_mut()) {
        obj.insert("id".to_string(), id);
    }
    Ok(serde_json::to_string(&v)?)
}

fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

pub fn run(args: CheckArgs) -> ExitCode {
    let engine = match load_engine(args.policy.as_deref()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("toolgate check: {}", one_line(&e));
            return ExitCode::from(2);
        }
    };
    let env = base_env();
    if args.jsonl {
        return run_jsonl(&engine, &env);
    }
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("toolgate check: cannot read stdin: {e}");
        return ExitCode::from(2);
    }
    if input.trim().is_empty() {
        eprintln!("toolgate check: no input: pipe one ToolCall JSON object on stdin");
        return ExitCode::from(2);
    }
    match parse_call(&input).and_then(|(call, _)| decide_json(&engine, &env, &call, None)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolgate check: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// Decides each line; a bad line gets an `error` object in its place (so the
/// caller can match outputs to inputs) and the exit status becomes 2.
fn run_jsonl(engine: &Engine, env: &Env) -> ExitCode {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut bad = 0usize;
    let mut first_error: Option<String> = None;
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("toolgate check: cannot read line {}: {e}", n + 1);
                return ExitCode::from(2);
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let result = parse_call(&line).and_then(|(call, id)| decide_json(engine, env, &call, id));
        let text = match result {
            Ok(t) => t,
            Err(e) => {
                bad += 1;
                let msg = format!("line {}: {}", n + 1, one_line(&e));
                first_error.get_or_insert_with(|| msg.clone());
                let id = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("id").cloned());
                let mut obj = serde_json::Map::new();
                if let Some(id) = id {
                    obj.insert("id".into(), id);
                }
                obj.insert("error".into(), Value::String(msg));
                Value::Object(obj).to_string()
            }
        };
        if writeln!(out, "{text}").is_err() {
            return ExitCode::from(2);
        }
    }
    if out.flush().is_err() {
        return ExitCode::from(2);
    }
    match first_error {
        Some(e) => {
            eprintln!("toolgate check: {bad} bad input line(s); first: {e}");
            ExitCode::from(2)
        }
        None => ExitCode::SUCCESS,
    }
}
