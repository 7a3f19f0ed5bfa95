//! `toolgate store migrate`: move a deployment's whole state from one store
//! to another (SQLite into PostgreSQL when one daemon becomes several).

use crate::state::StoreSpec;
use anyhow::{Result, bail};
use clap::Subcommand;
use std::io::IsTerminal;
use std::process::ExitCode;
use toolgate_core::hex;
use toolgate_gate::{Copied, SystemClock, copy_store, verify};

/// What to do with whole stores.
#[derive(Debug, Subcommand)]
pub(crate) enum StoreCommand {
    /// Copy everything one store keeps (approvals and votes,
    /// acknowledgements, memories, operators, bypasses, the audit chain
    /// verbatim) into another, empty one, then verify the chain there; the
    /// approvals still open on the source are closed there ("moved"). Stop
    /// the daemons on the source first: the copy holds its write lock, so
    /// they would wait until it is done, and would keep writing to the old
    /// store afterwards.
    Migrate {
        /// The store to copy from: `sqlite:DIR` (a data directory holding
        /// toolgate.db) or `postgres://user@host:5432/db`.
        #[arg(long, value_name = "STORE")]
        from: String,
        /// The store to copy into, empty: `sqlite:DIR` (created if
        /// missing) or `postgres://…` (its tables are created).
        #[arg(long, value_name = "STORE")]
        to: String,
    },
}

/// Runs a store subcommand: exit 0 when copied and verified, 1 when the
/// copy did not verify, 2 when it could not be made (nothing written).
pub(crate) fn run(cmd: StoreCommand) -> ExitCode {
    match run_inner(cmd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "toolgate store migrate: {}",
                format!("{e:#}").replace('\n', " ")
            );
            ExitCode::from(2)
        }
    }
}

fn run_inner(cmd: StoreCommand) -> Result<ExitCode> {
    let StoreCommand::Migrate { from, to } = cmd;
    let from = StoreSpec::parse(&from)?;
    let to = StoreSpec::parse(&to)?;
    if same_place(&from, &to) {
        bail!(
            "--from and --to name the same store ({}): give an empty one to copy into",
            to.shown()
        );
    }
    if let StoreSpec::Sqlite(dir) = &from
        && !dir.join(toolgate_store_sqlite::DB_FILE).is_file()
    {
        bail!(
            "no toolgate store in {} (no {}): check --from, the data directory the daemon used",
            dir.display(),
            toolgate_store_sqlite::DB_FILE
        );
    }
    let source = from.open()?;
    if source.audit_head()?.is_none() {
        bail!(
            "{} holds nothing to copy (its audit log is empty): check --from",
            from.shown()
        );
    }
    let target = to.open()?;
    eprintln!("copying {} into {} …", from.shown(), to.shown());
    let show_progress = std::io::stderr().is_terminal();
    let copied = copy_store(&*source, &*target, &SystemClock, &mut |n| {
        if show_progress {
            eprint!("\r  {n} audit entries copied");
        }
    })?;
    if show_progress && copied.audit_entries >= toolgate_gate::PROGRESS_EVERY {
        eprintln!();
    }
    print_summary(&from, &to, &copied);
    if let Some(why) = &copied.retire_failed {
        eprintln!(
            "toolgate store migrate: copied, but the approvals still open on {} could not be \
             closed there ({why}): they could be granted and used on both stores; stop every \
             daemon on {} and deny them there (`toolgate --store {} approvals deny ID`)",
            from.shown(),
            from.shown(),
            from.shown()
        );
        return Ok(ExitCode::from(1));
    }
    match verify(&*target) {
        Ok(v) if Some((v.head_seq, v.head_hash)) == copied.head => {
            println!(
                "audit chain verified on {}: {} entries, head {}:{}",
                to.shown(),
                v.entries,
                v.head_seq,
                hex(&v.head_hash)
            );
            println!(
                "next: point every daemon and hook at --store {} (or TOOLGATE_STORE), \
                 and keep the old store as it is until you no longer need it",
                to.shown()
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(v) => {
            eprintln!(
                "toolgate store migrate: the copy's head {}:{} is not the source's: another \
                 process wrote to {} during the copy; empty it and copy again with its daemons stopped",
                v.head_seq,
                hex(&v.head_hash),
                to.shown()
            );
            Ok(ExitCode::from(1))
        }
        Err(e) => {
            eprintln!(
                "toolgate store migrate: the copy does not verify on {}: {e}",
                to.shown()
            );
            Ok(ExitCode::from(1))
        }
    }
}

/// Whether two specs surely name one store (the copy would wait on its own
/// lock). Different spellings of one PostgreSQL database are not caught
/// here; the copy then fails on the lock timeout, writing nothing.
fn same_place(a: &StoreSpec, b: &StoreSpec) -> bool {
    match (a, b) {
        (StoreSpec::Sqlite(x), StoreSpec::Sqlite(y)) => {
            x == y
                || matches!(
                    (std::fs::canonicalize(x), std::fs::canonicalize(y)),
                    (Ok(x), Ok(y)) if x == y
                )
        }
        (StoreSpec::Postgres(x), StoreSpec::Postgres(y)) => x == y,
        _ => false,
    }
}

fn print_summary(from: &StoreSpec, to: &StoreSpec, c: &Copied) {
    println!("copied {} → {}", from.shown(), to.shown());
    println!(
        "  approvals {} (votes {}), acknowledgements {}, knowledge shown {}, memories {}, \
         operators {}, bypasses {}, single-use keys {}, audit entries {}",
        c.approvals,
        c.votes,
        c.acks,
        c.shown,
        c.memories,
        c.operators,
        c.bypasses,
        c.keys,
        c.audit_entries
    );
    if c.retired > 0 {
        println!(
            "  {} open approvals closed on {} (moved: they are decided and used on {} now)",
            c.retired,
            from.shown(),
            to.shown()
        );
    }
}
