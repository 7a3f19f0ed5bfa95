//! `toolgate check`: ToolCall JSON in, Decision JSON out; or, for a person,
//! `toolgate check -- CMD ARGS…` with a readable answer on a terminal.

use anyhow::{Context, Result, anyhow};
use clap::Args;
use serde_json::Value;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;
use toolgate_bundle::{LoadEnv, PolicyGuard};
use toolgate_core::paths::Env;
use toolgate_core::{Decision, Layer, ToolCall, Verdict};
use toolgate_core::{Engine, Policy, Protected};
use toolgate_gate::{Gate, SystemClock};

use crate::state::DataDirArgs;
use toolgate_core::visible;

/// Arguments of `toolgate check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Policy file (TOML); the built-in default policy when absent.
    #[arg(long, env = "TOOLGATE_POLICY")]
    policy: Option<PathBuf>,
    /// One ToolCall per input line, one Decision per output line (with the
    /// input's `id` echoed).
    #[arg(long)]
    jsonl: bool,
    /// Decide without touching state: no approvals are consumed or created
    /// (escalations carry no approval id) and nothing is audited.
    #[arg(long)]
    stateless: bool,
    /// What the call would get now, with every layer (approvals, knowledge
    /// holds, bypasses) and the data directory's state, but nothing kept:
    /// no approval created or used, nothing recorded.
    #[arg(long, conflicts_with_all = ["stateless", "jsonl"])]
    dry_run: bool,
    /// Print the Decision as JSON even on a terminal (it is JSON whenever
    /// stdout is not a terminal).
    #[arg(long)]
    json: bool,
    /// Exit with the decision: 0 allow, 1 block, 3 escalate (2 stays bad
    /// input). Without it every decision exits 0.
    #[arg(long)]
    exit_code: bool,
    /// A running daemon to ask instead of deciding here
    /// (`http://127.0.0.1:7878`): its policy and state decide, and it
    /// records the call as any agent's. The token is `--token`, else
    /// TOOLGATE_AGENT_TOKEN, else the data directory's agent.token.
    #[arg(long, value_name = "URL", conflicts_with_all = ["stateless", "dry_run", "jsonl"])]
    url: Option<String>,
    /// With --url: the token to ask with (the daemon's agent token, or an
    /// operator's).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// With a command after `--`: the tool it is a call of.
    #[arg(long, default_value = "exec", requires = "command")]
    tool: String,
    /// With a command after `--`: the directory it runs in (default: here).
    #[arg(long, requires = "command")]
    cwd: Option<PathBuf>,
    /// The command to judge, instead of a ToolCall on stdin: `toolgate check
    /// -- rm -rf build`. Several words are quoted as the shell would hand
    /// them over; one word is read as a whole command line (`toolgate check
    /// -- 'make && rm -rf ~'`).
    #[arg(last = true, value_name = "CMD")]
    command: Vec<String>,
}

impl CheckArgs {
    /// The call the words after `--` make, if any.
    fn command_call(&self) -> Result<Option<ToolCall>> {
        if self.command.is_empty() {
            return Ok(None);
        }
        let text = match self.command.as_slice() {
            [one] => one.clone(),
            words => words
                .iter()
                .map(|w| toolgate_core::shell::quote(w))
                .collect::<Vec<_>>()
                .join(" "),
        };
        let cwd = match &self.cwd {
            Some(c) => std::path::absolute(c)
                .with_context(|| format!("--cwd {}: not a usable path", c.display()))?,
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let mut params = serde_json::Map::new();
        params.insert("command".into(), Value::String(text));
        Ok(Some(ToolCall {
            tool: self.tool.clone(),
            params,
            cwd: Some(cwd.to_string_lossy().into_owned()),
            ..ToolCall::default()
        }))
    }
}

/// `$HOME`, or `/root` when it is unset or not absolute.
fn own_home() -> String {
    std::env::var("HOME")
        .ok()
        .filter(|h| h.starts_with('/'))
        .unwrap_or_else(|| "/root".to_string())
}

/// The environment a daemon judges calls in: its own directory is not the
/// agent's, so a call without `cwd` is judged as running somewhere unknown.
pub(crate) fn daemon_env() -> Env {
    Env::cwd_unknown(own_home())
}

/// The environment calls are judged in: `$HOME` and the current directory.
pub(crate) fn base_env() -> Env {
    load_env().judging_env()
}

/// What a policy is loaded against: `$HOME`, the current directory, and the
/// sandbox posture this process runs in.
pub(crate) fn load_env() -> LoadEnv<'static> {
    LoadEnv {
        home: own_home(),
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        posture: &toolgate_gate::posture::current,
    }
}

/// How this process's policy loads treat a policy the agent could change
/// (`toolgate_bundle::agent_writable`): set once at start by a gate (the
/// hook), off for everything else.
static POLICY_GUARD: std::sync::OnceLock<PolicyGuard> = std::sync::OnceLock::new();

/// Makes every later policy load of this process refuse (or knowingly
/// allow) a policy the agent could change.
pub(crate) fn guard_policies(guard: PolicyGuard) {
    let _ = POLICY_GUARD.set(guard);
}

fn policy_guard() -> PolicyGuard {
    POLICY_GUARD.get().copied().unwrap_or(PolicyGuard::Off)
}

/// Reads and checks a policy file and the scope profile it names, without
/// running its `[[test]]` cases.
pub(crate) fn load_policy_file(path: &Path) -> Result<Policy> {
    toolgate_bundle::read_policy_guarded(path, &load_env(), policy_guard())
        .map_err(|e| anyhow!("{e}"))
}

/// The engine for the policy at `path` (the built-in default when `None`),
/// with its `[[test]]` cases passed.
pub(crate) fn load_engine(path: Option<&Path>) -> Result<Engine> {
    // The built-in default needs nothing of the surroundings: a hook
    // process deciding on it does not read them.
    let bundle = match path {
        None => toolgate_bundle::builtin(),
        Some(path) => toolgate_bundle::load_guarded(Some(path), &load_env(), policy_guard()),
    };
    bundle
        .map(|b| b.protecting(&own_places(None)).into_engine())
        .map_err(|e| anyhow!("{e}"))
}

/// The file in the data directory where a daemon writes its process id.
pub(crate) const PID_FILE: &str = "daemon.pid";

/// toolgate's own places this process knows, for the protected set: the
/// data directory (`dir`, else `$TOOLGATE_DATA_DIR`, else the default) and
/// the daemon's port named by `$TOOLGATE_URL`. Environment reads only.
pub(crate) fn own_places(dir: Option<&Path>) -> Protected {
    let dir = dir
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("TOOLGATE_DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(crate::state::default_data_dir);
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    let mut own = Protected::new().data_dir(&dir.to_string_lossy());
    // The daemon serving this directory, by its process id.
    if let Some(pid) = std::fs::read_to_string(dir.join(PID_FILE))
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
    {
        own = own.pid(pid);
    }
    let port = std::env::var("TOOLGATE_URL").ok().and_then(|u| {
        let rest = u.split_once("://")?.1;
        let host = rest.split('/').next()?;
        host.rsplit_once(':')?.1.parse::<u16>().ok()
    });
    match port {
        Some(p) => own.port(p),
        None => own,
    }
}

/// Parses one ToolCall from JSON text, with errors a person can act on.
fn parse_call(text: &str) -> Result<(ToolCall, Option<Value>)> {
    let value = toolgate_core::parse_json(text.as_bytes()).map_err(|e| anyhow!("{e}"))?;
    let id = value.get("id").cloned();
    let call = toolgate_core::tool_call(value, &["id"]).map_err(|e| anyhow!("{e}"))?;
    Ok((call, id))
}

/// Decides with state (a [`Gate`]), without (the engine alone), or as a
/// dry run of the gate (every layer, nothing kept).
enum Decider {
    Stateless(Box<Engine>, Env),
    Gate(Box<Gate>),
    DryRun(Box<Gate>),
}

impl Decider {
    fn decide(&self, calls: &[ToolCall]) -> Result<Vec<Decision>> {
        match self {
            Decider::Stateless(engine, env) => Ok(calls
                .iter()
                .map(|c| {
                    let start = Instant::now();
                    let mut d = engine.decide(c, env).decision;
                    d.elapsed_us = start.elapsed().as_micros() as u64;
                    d
                })
                .collect()),
            Decider::Gate(g) => Ok(g.check_batch(calls)?),
            Decider::DryRun(g) => calls
                .iter()
                .map(|c| g.dry_run(c).map_err(Into::into))
                .collect(),
        }
    }
}

/// One layer's say on a call, for `--dry-run`: what it found (or that it
/// found nothing), and whether its verdict is the one that decided.
#[derive(Debug, Clone, serde::Serialize)]
struct LayerRow {
    layer: Layer,
    verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    risk: Option<toolgate_core::RiskClass>,
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    decided: bool,
}

impl Decider {
    /// Every layer's verdict on `call` for a dry run (`None` otherwise):
    /// the engine's findings (with an active bypass lifting what it lifts,
    /// as the gate does), a line for each layer that found nothing, and the
    /// data directory's layers (knowledge, approval) as `decision` shows
    /// them; the one whose verdict decided is marked.
    fn layers(&self, call: &ToolCall, decision: &Decision) -> Option<Vec<LayerRow>> {
        let Decider::DryRun(gate) = self else {
            return None;
        };
        let base = base_env();
        let mut a = gate.engine().decide(call, &base);
        if a.decision.decision != Verdict::Allow
            && let Some((lifted, note)) = gate.active_bypass()
        {
            a = toolgate_core::lift(gate.engine(), call, &base, a, &lifted, &note);
        }
        Some(layer_rows(&a.verdicts, decision))
    }
}

/// Every layer, in the order the engine and then the gate consult them
/// (a test fails to compile when a layer is added and not listed here).
const EVERY_LAYER: [Layer; 7] = [
    Layer::Scope,
    Layer::Policy,
    Layer::Exec,
    Layer::Risk,
    Layer::Posture,
    Layer::Knowledge,
    Layer::Approval,
];

/// The rows [`Decider::layers`] shows: every layer in evaluation order,
/// each with its findings or a line saying it found nothing.
fn layer_rows(verdicts: &[toolgate_core::LayerVerdict], decision: &Decision) -> Vec<LayerRow> {
    let mut rows = Vec::new();
    for layer in EVERY_LAYER {
        let found: Vec<_> = verdicts.iter().filter(|v| v.layer == layer).collect();
        if !found.is_empty() {
            rows.extend(found.into_iter().map(|v| LayerRow {
                layer,
                verdict: v.verdict,
                risk: Some(v.class),
                reason: v.reason.clone(),
                rule: v.rule.clone(),
                command: v.command.clone(),
                decided: false,
            }));
            continue;
        }
        let (verdict, reason) = if layer == decision.layer {
            (decision.decision, decision.reason.clone())
        } else {
            let quiet = match layer {
                Layer::Knowledge if decision.context.is_some() => {
                    "knowledge shown to the agent, nothing held"
                }
                Layer::Knowledge => "no knowledge applies, nothing held",
                Layer::Approval => "no approval granted for this call",
                Layer::Scope => "no scope profile finding",
                Layer::Risk => &format!("score {}, below the escalation threshold", decision.score),
                _ => "nothing found",
            };
            (Verdict::Allow, quiet.to_string())
        };
        rows.push(LayerRow {
            layer,
            verdict,
            risk: None,
            reason,
            rule: None,
            command: None,
            decided: false,
        });
    }
    // The deciding row: the decision's layer with its verdict and reason,
    // else the first of its layer with its verdict, else the first of its
    // layer.
    let of_layer = |r: &LayerRow| r.layer == decision.layer;
    let pick = rows
        .iter()
        .position(|r| {
            of_layer(r) && r.verdict == decision.decision && decision.reason.ends_with(&r.reason)
        })
        .or_else(|| {
            rows.iter()
                .position(|r| of_layer(r) && r.verdict == decision.decision)
        })
        .or_else(|| rows.iter().position(of_layer));
    if let Some(i) = pick {
        rows[i].decided = true;
    }
    rows
}

/// The rows as a person reads them, one a line, the deciding one marked.
fn human_layers(rows: &[LayerRow]) -> String {
    let mut out = String::from("  every layer (dry run):\n");
    for r in rows {
        let risk = r.risk.map(|c| c.as_str()).unwrap_or("");
        let what = match r
            .command
            .as_ref()
            .filter(|c| !r.reason.contains(c.as_str()))
        {
            Some(c) => format!("`{}`: {}", visible(c), visible(&r.reason)),
            None => visible(&r.reason).into_owned(),
        };
        out.push_str(&format!(
            "  {} {:<9} {:<8} {:<2} {what}{}\n",
            if r.decided { '>' } else { ' ' },
            r.layer.as_str(),
            r.verdict.as_str(),
            risk,
            if r.decided { "  <- decided" } else { "" }
        ));
    }
    out
}

fn to_line(decision: &Decision, id: Option<Value>) -> Result<String> {
    let mut v = serde_json::to_value(decision)?;
    if let (Some(id), Some(obj)) = (id, v.as_object_mut()) {
        obj.insert("id".to_string(), id);
    }
    Ok(serde_json::to_string(&v)?)
}

fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

fn decider(args: &CheckArgs, data: &DataDirArgs) -> Result<Decider> {
    let engine =
        load_engine(args.policy.as_deref())?.with_protected(&own_places(Some(&data.resolve().0)));
    if args.stateless {
        return Ok(Decider::Stateless(Box::new(engine), base_env()));
    }
    // A store the user named is never silently replaced by no store.
    let chosen = data.resolve().1 || data.store.is_some();
    match data.open() {
        Ok(store) => {
            let gate = Box::new(Gate::new(
                Arc::new(engine),
                store,
                Arc::new(SystemClock),
                base_env(),
            ));
            Ok(if args.dry_run {
                Decider::DryRun(gate)
            } else {
                Decider::Gate(gate)
            })
        }
        // The default location may be impossible to create (read-only home,
        // sandbox): still decide, but say that nothing is recorded. A
        // database that exists but cannot be used is an error: silently
        // deciding without the audit log would hide it.
        Err(e)
            if !chosen
                && matches!(
                    e.downcast_ref::<toolgate_store::StoreError>(),
                    Some(toolgate_store::StoreError::DataDir { .. })
                ) =>
        {
            eprintln!(
                "toolgate check: warning: {}; deciding without state (pass --data-dir DIR to \
                 record decisions and create approvals)",
                one_line(&e)
            );
            Ok(Decider::Stateless(Box::new(engine), base_env()))
        }
        Err(e) => Err(e),
    }
}

pub(crate) fn run(args: CheckArgs, data: &DataDirArgs) -> ExitCode {
    if let Some(url) = &args.url {
        return run_remote(&args, url, data);
    }
    let decider = match decider(&args, data) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("toolgate check: {}", one_line(&e));
            return ExitCode::from(2);
        }
    };
    if args.jsonl {
        return run_jsonl(&decider);
    }
    let given = match args.command_call() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("toolgate check: {}", one_line(&e));
            return ExitCode::from(2);
        }
    };
    if let Some(call) = given {
        return answer(&args, &decider, &call);
    }
    match call_from_stdin() {
        Ok(call) => answer(&args, &decider, &call),
        Err(e) => {
            eprintln!("toolgate check: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// On a terminal, says what `toolgate check` is waiting for before it
/// reads stdin (a person who typed `toolgate check` alone would otherwise
/// see nothing happen).
fn hint_at_a_terminal(what: &str) {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        eprintln!(
            "toolgate check: reading {what} from stdin (end with Ctrl-D), such as \
             {{\"tool\":\"exec\",\"params\":{{\"command\":\"ls\"}}}}; to judge a command, give it \
             after `--`: toolgate check -- git push origin main"
        );
    }
}

/// The one ToolCall JSON on stdin.
fn call_from_stdin() -> Result<ToolCall> {
    hint_at_a_terminal("one ToolCall JSON");
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read stdin")?;
    if input.trim().is_empty() {
        return Err(anyhow!(
            "no input: pipe one ToolCall JSON object on stdin, or give a command after `--`"
        ));
    }
    Ok(parse_call(&input)?.0)
}

/// `toolgate check --url URL`: the call (after `--`, or on stdin) judged
/// by the daemon at `url`, its Decision printed as a local one is.
fn run_remote(args: &CheckArgs, url: &str, data: &DataDirArgs) -> ExitCode {
    let decided = (|| -> Result<(ToolCall, Decision)> {
        let base = crate::daemon_post::base_url(url.trim())?;
        let token = crate::daemon_token::token(
            args.token.as_deref(),
            crate::daemon_token::Shared::Agent,
            data,
            "pass --token (the daemon's agent token, or an operator's)",
        )?;
        let call = match args.command_call()? {
            Some(call) => call,
            None => call_from_stdin()?,
        };
        let body = serde_json::to_value(&call).context("cannot send the call")?;
        let answer = crate::daemon_post::post_json(
            base,
            "/v1/check",
            &token,
            Some(&body),
            std::time::Duration::from_secs(30),
        )
        .map_err(|e| match e.downcast_ref::<crate::daemon_post::Refused>() {
            Some(r) if r.status == 401 => {
                anyhow!("{} (pass --token with the daemon's agent token)", r.message)
            }
            _ => e,
        })?;
        let decision = serde_json::from_value::<Decision>(answer).context(
            "the daemon's answer is not a Decision: is it a toolgate daemon of this version?",
        )?;
        Ok((call, decision))
    })();
    match decided {
        Ok((call, decision)) => show(args, &call, &decision, None),
        Err(e) => {
            eprintln!("toolgate check: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// Decides one call and prints the answer: JSON, or for a person at a
/// terminal (without `--json`) a few readable lines.
fn answer(args: &CheckArgs, decider: &Decider, call: &ToolCall) -> ExitCode {
    let decision = match decider.decide(std::slice::from_ref(call)) {
        Ok(mut d) => d.remove(0),
        Err(e) => {
            eprintln!("toolgate check: {}", one_line(&e));
            return ExitCode::from(2);
        }
    };
    let layers = decider.layers(call, &decision);
    show(args, call, &decision, layers.as_deref())
}

/// Prints a decision (JSON, or readable lines for a person at a terminal,
/// with the dry run's `layers` when given) and exits as `--exit-code` says.
fn show(
    args: &CheckArgs,
    call: &ToolCall,
    decision: &Decision,
    layers: Option<&[LayerRow]>,
) -> ExitCode {
    use std::io::IsTerminal;
    if args.json || !std::io::stdout().is_terminal() {
        let line = serde_json::to_value(decision).and_then(|mut v| {
            if let (Some(rows), Some(obj)) = (layers, v.as_object_mut()) {
                obj.insert("layers".into(), serde_json::to_value(rows)?);
            }
            serde_json::to_string(&v)
        });
        match line {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("toolgate check: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", human(call, decision));
        if let Some(rows) = layers {
            print!("{}", human_layers(rows));
        }
    }
    if !args.exit_code {
        return ExitCode::SUCCESS;
    }
    ExitCode::from(exit_code_for(decision.decision))
}

/// `--exit-code`: 0 allow, 1 block, 3 escalate.
fn exit_code_for(v: toolgate_core::Verdict) -> u8 {
    use toolgate_core::Verdict;
    match v {
        Verdict::Allow => 0,
        Verdict::Block => 1,
        Verdict::Escalate => 3,
    }
}

/// The decision as a person reads it: the verdict and risk, what was
/// judged, why, and what to do next.
fn human(call: &ToolCall, d: &Decision) -> String {
    use toolgate_core::Verdict;
    let what = call
        .params
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("{} {}", call.tool, Value::Object(call.params.clone())));
    let verdict = match d.decision {
        Verdict::Allow => "ALLOW",
        Verdict::Block => "BLOCK",
        Verdict::Escalate => "ESCALATE",
    };
    let mut out = format!(
        "{verdict}  {}  {}\n  {}\n  decided by the {} layer, score {}, in {} µs\n",
        d.risk,
        visible(&what),
        visible(&d.reason),
        d.layer.as_str(),
        d.score,
        d.elapsed_us
    );
    if let Some(a) = &d.approval {
        out.push_str(&format!(
            "  approval {} is pending: `toolgate approvals approve {}`{}\n",
            a.id,
            a.id,
            a.approve_url
                .as_deref()
                .map(|u| format!(" or {u}"))
                .unwrap_or_default()
        ));
    }
    if let Some(c) = &d.context {
        out.push_str(&format!("  context for the agent: {}\n", visible(c)));
    }
    out
}

/// Most lines decided in one transaction: enough to amortize the commit,
/// few enough that answers are not held back long.
const MAX_BATCH: usize = 256;

/// One input line: its number, and the parsed call (or why it is bad).
type Line = (usize, String, Result<(ToolCall, Option<Value>)>);

/// Decides each line; a bad line gets an `error` object in its place (so the
/// caller can match outputs to inputs) and the exit status becomes 2. Lines
/// already waiting in the input are decided and committed together; an
/// interactive caller writing one line at a time gets each answer at once.
fn run_jsonl(decider: &Decider) -> ExitCode {
    hint_at_a_terminal("ToolCall JSON, one per line,");
    let stdin = std::io::stdin();
    let mut reader = BufReader::new(stdin.lock());
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut bad = 0usize;
    let mut first_error: Option<String> = None;
    let mut n = 0usize;
    let mut eof = false;
    while !eof {
        let mut batch: Vec<Line> = Vec::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(_) => {
                    n += 1;
                    if !line.trim().is_empty() {
                        let parsed = parse_call(&line);
                        batch.push((n, line, parsed));
                    }
                }
                Err(e) => {
                    eprintln!("toolgate check: cannot read line {}: {e}", n + 1);
                    return ExitCode::from(2);
                }
            }
            if batch.len() >= MAX_BATCH || reader.buffer().is_empty() {
                break;
            }
        }
        let calls: Vec<ToolCall> = batch
            .iter()
            .filter_map(|(_, _, p)| p.as_ref().ok().map(|(c, _)| c.clone()))
            .collect();
        let mut decisions = match decider.decide(&calls) {
            Ok(d) => d.into_iter(),
            Err(e) => {
                eprintln!("toolgate check: {}", one_line(&e));
                return ExitCode::from(2);
            }
        };
        for (line_no, text, parsed) in batch {
            let result = parsed.and_then(|(_, id)| {
                let d = decisions.next().ok_or_else(|| anyhow!("no decision"))?;
                to_line(&d, id)
            });
            let text = match result {
                Ok(t) => t,
                Err(e) => {
                    bad += 1;
                    let msg = format!("line {line_no}: {}", one_line(&e));
                    first_error.get_or_insert_with(|| msg.clone());
                    let id = serde_json::from_str::<Value>(&text)
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
    }
    match first_error {
        Some(e) => {
            eprintln!("toolgate check: {bad} bad input line(s); first: {e}");
            ExitCode::from(2)
        }
        None => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The readable answer names the verdict, the risk, the command, the
    /// reason, and for an escalation the approval and how to grant it.
    #[test]
    fn a_person_reads_the_verdict_the_reason_and_what_to_do() {
        let engine = load_engine(None).unwrap();
        let call = |cmd: &str| {
            parse_call(&format!(
                r#"{{"tool":"exec","params":{{"command":{}}},"cwd":"/home/dev/proj"}}"#,
                serde_json::to_string(cmd).unwrap()
            ))
            .unwrap()
            .0
        };
        let env = Env::new("/home/dev", "/home/dev/proj");
        let c = call("rm -rf /");
        let text = human(&c, &engine.decide(&c, &env).decision);
        assert!(text.starts_with("BLOCK  R4  rm -rf /\n"), "{text}");
        assert!(text.contains("blocked: "), "{text}");
        let c = call("git push --force origin main");
        let mut d = engine.decide(&c, &env).decision;
        d.approval = Some(toolgate_core::ApprovalRef {
            id: "ap_0123456789abcdef".into(),
            expires_at: "2026-11-25T12:00:00Z".into(),
            min_approvals: 1,
            approve_url: Some("http://127.0.0.1:7878/approve/ap_0123456789abcdef".into()),
        });
        let text = human(&c, &d);
        assert!(text.starts_with("ESCALATE  "), "{text}");
        assert!(
            text.contains("toolgate approvals approve ap_0123456789abcdef")
                && text.contains("http://127.0.0.1:7878/approve/"),
            "{text}"
        );
        assert!(!text.contains('\x1b'), "no colour codes: {text:?}");
    }

    /// A dry run lists every layer, each once at least, and marks exactly
    /// the one that decided; `EVERY_LAYER` names each layer there is.
    #[test]
    fn a_dry_run_shows_every_layer_and_marks_the_decider() {
        // Fails to compile when a layer is added and not handled here (and
        // so, presumably, not listed in EVERY_LAYER either).
        for l in EVERY_LAYER {
            match l {
                Layer::Scope
                | Layer::Policy
                | Layer::Exec
                | Layer::Risk
                | Layer::Posture
                | Layer::Knowledge
                | Layer::Approval => {}
            }
        }
        let engine = load_engine(None).unwrap();
        let env = Env::new("/home/dev", "/home/dev/proj");
        let (c, _) =
            parse_call(r#"{"tool":"exec","params":{"command":"git push --force origin main"}}"#)
                .unwrap();
        let a = engine.decide(&c, &env);
        let rows = layer_rows(&a.verdicts, &a.decision);
        for l in EVERY_LAYER {
            assert!(rows.iter().any(|r| r.layer == l), "{l:?} missing: {rows:?}");
        }
        let decided: Vec<_> = rows.iter().filter(|r| r.decided).collect();
        assert_eq!(decided.len(), 1, "{rows:?}");
        assert_eq!(decided[0].layer, a.decision.layer);
        assert_eq!(decided[0].verdict, Verdict::Escalate);
        let text = human_layers(&rows);
        assert_eq!(
            text.lines().filter(|l| l.contains("<- decided")).count(),
            1,
            "{text}"
        );
    }
}
