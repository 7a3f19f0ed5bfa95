//! `toolgate audit verify | tail | export`.

use crate::state::DataDirArgs;
use anyhow::Result;
use clap::Subcommand;
use serde_json::Value;
use std::io::{BufWriter, Write};
use std::process::ExitCode;
use toolgate_gate::ExportedEntry;
use toolgate_store::StoreError;

/// What to do with the audit log.
#[derive(Debug, Subcommand)]
pub(crate) enum AuditCommand {
    /// Check the hash chain: exit 0 if intact, 1 naming the first bad
    /// sequence number.
    Verify {
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
        /// The head hash recorded elsewhere earlier (from a previous
        /// `verify`): the chain must still contain that entry unchanged.
        /// Catches a chain cut and re-headed, or rewritten wholesale.
        #[arg(long, value_name = "SEQ:HASH")]
        expect_head: Option<String>,
        /// The daemon's public key (`ed25519:…`, from its `daemon.pub`)
        /// whose signed checkpoints must vouch for the log; may be given
        /// more than once (several daemons on one store). Default: the
        /// data directory's `daemon.pub`, if there is one.
        #[arg(long, value_name = "ed25519:HEX")]
        key: Vec<String>,
        /// Check no signatures, even with a `daemon.pub` in the data
        /// directory (a log no daemon ever signed).
        #[arg(long, conflicts_with = "key")]
        no_key: bool,
        /// Most entries that may follow the last signed checkpoint (the
        /// daemon signs at start, every 1,000 entries or 10 s, and at
        /// shutdown; 0 right after a shutdown is the strictest check).
        #[arg(long, value_name = "N", default_value_t = toolgate_gate::DEFAULT_MAX_UNSIGNED)]
        max_unsigned: u64,
    },
    /// Show the last entries.
    Tail {
        /// How many.
        #[arg(short = 'n', long, default_value_t = 20)]
        lines: u64,
        /// One JSON entry per line (as `export` writes them); the default
        /// when stdout is not a terminal.
        #[arg(long)]
        json: bool,
        /// One readable line per entry even when stdout is not a terminal
        /// (`| less`).
        #[arg(long, conflicts_with = "json")]
        table: bool,
        /// Keep printing entries as they are appended, by any process on
        /// this data dir (Ctrl-C stops).
        #[arg(short = 'f', long)]
        follow: bool,
    },
    /// Write entries as JSON lines (each with its hash and the previous
    /// hash, so the chain can be checked elsewhere).
    Export {
        /// First sequence number to write.
        #[arg(long, default_value_t = 1)]
        from: u64,
    },
}

/// Runs an audit subcommand.
pub(crate) fn run(cmd: AuditCommand, data: &DataDirArgs) -> ExitCode {
    match run_inner(cmd, data) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("toolgate audit: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}

fn run_inner(cmd: AuditCommand, data: &DataDirArgs) -> Result<ExitCode> {
    let store = data.open_existing()?;
    match cmd {
        AuditCommand::Verify {
            json,
            expect_head,
            key,
            no_key,
            max_unsigned,
        } => {
            let anchor = match expect_head.as_deref().map(parse_anchor).transpose() {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("toolgate audit verify: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            let keys = match signing_keys(&key, no_key, data) {
                Ok(k) => k,
                Err(e) => {
                    eprintln!("toolgate audit verify: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            let rule = toolgate_gate::SigningRule { keys, max_unsigned };
            let result = toolgate_gate::verify_signed(&*store, &rule).and_then(|v| {
                if let Some((seq, hash)) = &anchor {
                    toolgate_gate::check_anchor(&*store, *seq, hash)?;
                }
                Ok(v)
            });
            match result {
                Ok((v, sigs)) => {
                    let head = toolgate_core::hex(&v.head_hash);
                    if json {
                        println!(
                            "{}",
                            serde_json::json!({"ok": true, "entries": v.entries, "head_seq": v.head_seq, "head_hash": head, "signatures": sigs})
                        );
                    } else {
                        println!(
                            "audit chain intact: {} entries; head {}:{head} (keep it elsewhere and pass \
                             it to --expect-head later)",
                            v.entries, v.head_seq
                        );
                        if sigs.checked {
                            println!(
                                "signed by the daemon's key: {} checkpoints, through entry {}; {} \
                                 entries after the last (at most {max_unsigned} allowed)",
                                sigs.valid, sigs.signed_through, sigs.unsigned_tail
                            );
                        } else {
                            println!(
                                "no daemon key given: checkpoint signatures not checked (pass --key \
                                 ed25519:… from the daemon's daemon.pub)"
                            );
                        }
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(StoreError::Chain(b)) => {
                    if json {
                        println!(
                            "{}",
                            serde_json::json!({"ok": false, "seq": b.seq, "why": b.why})
                        );
                    }
                    eprintln!("toolgate audit verify: {b} ({})", store.location());
                    Ok(ExitCode::from(1))
                }
                Err(e) => Err(e.into()),
            }
        }
        AuditCommand::Tail {
            lines: 0,
            follow: false,
            ..
        } => Ok(ExitCode::SUCCESS),
        AuditCommand::Tail {
            lines,
            json,
            table,
            follow,
        } => {
            let json = crate::output::json_lines(json, table);
            let head = store.audit_head()?.map_or(0, |(seq, _)| seq);
            let mut from = if lines == 0 {
                head + 1
            } else {
                head.saturating_sub(lines - 1).max(1)
            };
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            loop {
                let mut open = true;
                toolgate_gate::export(&*store, from, &mut |e| {
                    if let Some(seq) = e.entry.get("seq").and_then(Value::as_u64) {
                        from = seq + 1;
                    }
                    let line = if json {
                        serde_json::to_string(&e).unwrap_or_default()
                    } else {
                        human(&e)
                    };
                    open = writeln!(out, "{line}").is_ok();
                    open
                })?;
                match out.flush() {
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => open = false,
                    other => other?,
                }
                if !follow || !open {
                    return Ok(ExitCode::SUCCESS);
                }
                // Entries from other processes arrive through the database:
                // a short poll, the same pace as the daemon's event tail.
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
        }
        AuditCommand::Export { from } => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            toolgate_gate::export(&*store, from.max(1), &mut |e| {
                writeln!(out, "{}", serde_json::to_string(&e).unwrap_or_default()).is_ok()
            })?;
            flush_ignoring_closed_pipe(&mut out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Flushes stdout; a reader that went away (`| head`) is not an error.
fn flush_ignoring_closed_pipe(out: &mut impl Write) -> std::io::Result<()> {
    match out.flush() {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Parses `SEQ:HASH` as printed by `verify`.
fn parse_anchor(text: &str) -> Result<(u64, [u8; 32]), String> {
    let bad = || {
        format!("--expect-head {text:?}: expected SEQ:HASH as printed by `toolgate audit verify`")
    };
    let (seq, hash_text) = text.trim().split_once(':').ok_or_else(bad)?;
    let seq: u64 = seq.parse().map_err(|_| bad())?;
    let mut hash = [0u8; 32];
    toolgate_core::unhex(hash_text, &mut hash).ok_or_else(bad)?;
    Ok((seq, hash))
}

/// One line a person can scan: seq, time, kind, and what happened.
fn human(e: &ExportedEntry) -> String {
    let get = |k: &str| e.entry.get(k).cloned().unwrap_or(Value::Null);
    let s = |v: &Value| {
        v.as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string())
    };
    let data = get("data");
    let d = |k: &str| data.get(k).map(s).unwrap_or_default();
    let what = match s(&get("kind")).as_str() {
        "decision" => {
            let call = data.get("call").cloned().unwrap_or(Value::Null);
            let tool = call.get("tool").map(s).unwrap_or_default();
            let params = call
                .get("params")
                .map(|p| p.to_string())
                .unwrap_or_default();
            let params: String = params.chars().take(100).collect();
            format!(
                "{} {} {tool} {params} — {}",
                d("decision"),
                d("risk"),
                d("reason")
            )
        }
        "verdict" => format!(
            "{} {} {} — {}",
            d("layer"),
            d("verdict"),
            d("risk"),
            d("reason")
        ),
        "approval.vote" => format!(
            "{} {} by {} on {}{}",
            if data.get("approve") == Some(&Value::Bool(true)) {
                "approve"
            } else {
                "deny"
            },
            d("approver"),
            d("identity"),
            d("approval"),
            data.get("refused")
                .map(|r| format!(" REFUSED: {}", s(r)))
                .unwrap_or_default()
        ),
        k if k.starts_with("approval.") => format!(
            "{} {} {} {}",
            d("approval"),
            d("state"),
            d("risk"),
            d("summary")
        ),
        _ => data.to_string(),
    };
    let line = format!(
        "{:>6} {} {:<18} {}",
        s(&get("seq")),
        s(&get("ts")),
        s(&get("kind")),
        what
    );
    toolgate_core::visible_line(&line).into_owned()
}

/// The keys checkpoints are checked with: those given, else the data
/// directory's `daemon.pub` when there is one, none with `--no-key`.
fn signing_keys(
    given: &[String],
    no_key: bool,
    data: &DataDirArgs,
) -> Result<Vec<toolgate_gate::PublicKey>> {
    if no_key {
        return Ok(Vec::new());
    }
    if !given.is_empty() {
        return given
            .iter()
            .map(|k| toolgate_gate::PublicKey::parse(k).map_err(|e| anyhow::anyhow!("--key: {e}")))
            .collect();
    }
    let path = data.resolve().0.join(toolgate_gate::PUBLIC_FILE);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let key = toolgate_gate::PublicKey::read(&path)
        .map_err(|e| anyhow::anyhow!("{e}: pass --key ed25519:… or --no-key"))?;
    Ok(vec![key])
}
