//! `toolgate operators add | list | rotate | remove`: the people who may
//! vote, each with a token of their own, and who the CLI votes as.

use crate::state::{DataDirArgs, os_user};
use anyhow::{Result, bail};
use clap::Subcommand;
use std::process::ExitCode;
use toolgate_core::rfc3339_ms;
use toolgate_gate::{ADMIN, SystemClock, TOKEN_PREFIX};
use toolgate_store::{Operator, Store, StoreError};

/// What to do with operators.
#[derive(Debug, Subcommand)]
pub(crate) enum OperatorsCommand {
    /// Add a person who may vote, and print their token (shown only now).
    Add {
        /// Their name (what votes are recorded under), e.g. alice.
        name: String,
        /// A chat account of theirs whose button presses count as their
        /// votes: slack:USERID, telegram:USERID, discord:USERID or
        /// email:ADDRESS. Repeat for several.
        #[arg(long = "identity", value_name = "KIND:ID")]
        identities: Vec<String>,
        /// Print JSON (`{"operator": …, "token": …}`).
        #[arg(long)]
        json: bool,
    },
    /// List operators, removed ones with --all.
    List {
        /// Include removed operators.
        #[arg(long)]
        all: bool,
        /// One JSON object per line (the default when stdout is not a
        /// terminal).
        #[arg(long)]
        json: bool,
        /// A table even when stdout is not a terminal (`| less`).
        #[arg(long, conflicts_with = "json")]
        table: bool,
    },
    /// Give an operator a new token; the old one stops working at once.
    Rotate {
        /// The operator's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Link chat accounts to an operator, or unlink them (the token stays).
    Identity {
        /// The operator's name.
        name: String,
        /// A chat account to link (KIND:ID); repeat for several.
        #[arg(long = "add", value_name = "KIND:ID")]
        add: Vec<String>,
        /// A chat account to unlink; repeat for several.
        #[arg(long = "remove", value_name = "KIND:ID")]
        remove: Vec<String>,
    },
    /// Remove an operator: their token and chat accounts stop working at once.
    Remove {
        /// The operator's name.
        name: String,
    },
}

/// Runs an operators subcommand: exit 0 on success, 1 when refused, 2 on
/// an unusable store.
pub(crate) fn run(cmd: OperatorsCommand, data: &DataDirArgs) -> ExitCode {
    match run_inner(cmd, data) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "toolgate operators: {}",
                format!("{e:#}").replace('\n', " ")
            );
            let refused = e
                .downcast_ref::<StoreError>()
                .is_some_and(|s| matches!(s, StoreError::Operators(_)));
            ExitCode::from(if refused { 1 } else { 2 })
        }
    }
}

/// Who changed the operators, for the audit log: the local administrator,
/// and the OS account they ran as.
fn by() -> String {
    format!("{ADMIN} (cli user={})", os_user())
}

fn run_inner(cmd: OperatorsCommand, data: &DataDirArgs) -> Result<()> {
    // Adding the first operator may set a data directory up; the rest act
    // on operators already there.
    let store = match cmd {
        OperatorsCommand::Add { .. } => data.open()?,
        _ => data.open_existing()?,
    };
    match cmd {
        OperatorsCommand::Add {
            name,
            identities,
            json,
        } => {
            let (op, token) =
                toolgate_gate::add_operator(&*store, &SystemClock, &name, &identities, &by())?;
            print_token(&op, &token, json, "added")?;
        }
        OperatorsCommand::Rotate { name, json } => {
            let (op, token) = toolgate_gate::rotate_token(&*store, &SystemClock, &name, &by())?;
            print_token(&op, &token, json, "issued a new token for")?;
        }
        OperatorsCommand::Identity { name, add, remove } => {
            if add.is_empty() && remove.is_empty() {
                bail!("say what to change: --add KIND:ID and/or --remove KIND:ID");
            }
            let op = toolgate_gate::change_identities(
                &*store,
                &SystemClock,
                &name,
                &add,
                &remove,
                &by(),
            )?;
            println!(
                "{}'s chat accounts: {}",
                op.name,
                if op.identities.is_empty() {
                    "none".to_string()
                } else {
                    op.identities.join(", ")
                }
            );
        }
        OperatorsCommand::Remove { name } => {
            let op = toolgate_gate::remove_operator(&*store, &SystemClock, &name, &by())?;
            println!(
                "removed {}: their token and chat accounts no longer work",
                op.name
            );
        }
        OperatorsCommand::List { all, json, table } => {
            let ops: Vec<Operator> = store
                .read_operators()?
                .into_iter()
                .filter(|o| all || o.active())
                .collect();
            if crate::output::json_lines(json, table) {
                for o in &ops {
                    println!("{}", serde_json::to_string(o)?);
                }
            } else if ops.is_empty() {
                println!(
                    "no operators yet: `toolgate operators add NAME` gives a person a token of their own (until then, the shared operator token and this CLI vote as {ADMIN:?})"
                );
            } else {
                println!(
                    "{:<20} {:<8} {:<25} CHAT ACCOUNTS",
                    "NAME", "STATE", "TOKEN ISSUED"
                );
                for o in &ops {
                    let state = if o.active() { "active" } else { "removed" };
                    println!(
                        "{:<20} {:<8} {:<25} {}",
                        o.name,
                        state,
                        rfc3339_ms(o.token_issued_ms),
                        if o.identities.is_empty() {
                            "-".to_string()
                        } else {
                            o.identities.join(", ")
                        }
                    );
                }
            }
        }
    }
    Ok(())
}

fn print_token(op: &Operator, token: &str, json: bool, what: &str) -> Result<()> {
    if json {
        println!("{}", serde_json::json!({"operator": op, "token": token}));
    } else {
        println!(
            "{what} {}. Their token (shown only now; it is stored hashed):",
            op.name
        );
        println!();
        println!("  {token}");
        println!();
        println!(
            "They sign in to the control UI with it, or vote with `toolgate approvals approve ID --token TOKEN` (or TOOLGATE_APPROVER_TOKEN=TOKEN)."
        );
    }
    Ok(())
}

/// Who a CLI vote counts as: the operator whose token `token` is; the
/// administrator for the daemon's shared operator token or for no token
/// (whoever can write the data directory is the administrator); an error
/// for any other token, or an `as_` that names someone else.
pub(crate) fn voter(
    store: &dyn Store,
    data: &DataDirArgs,
    token: Option<&str>,
    as_: Option<&str>,
) -> Result<String> {
    let token = token.map(str::trim).filter(|t| !t.is_empty());
    let identity = match token {
        None => ADMIN.to_string(),
        Some(t) if t.starts_with(TOKEN_PREFIX) => {
            match toolgate_gate::operator_for_token(store, t)? {
                Some(op) => op.name,
                None => bail!(
                    "this operator token is not (or no longer) valid: it was rotated or its operator removed; ask for a new one (`toolgate operators rotate NAME`)"
                ),
            }
        }
        Some(t) if is_shared_operator_token(data, t) => ADMIN.to_string(),
        Some(_) => bail!(
            "unknown token: pass your own operator token (from `toolgate operators add NAME`), or none to vote as the administrator ({ADMIN:?})"
        ),
    };
    if let Some(name) = as_.map(str::trim).filter(|n| !n.is_empty())
        && !name.eq_ignore_ascii_case(&identity)
    {
        bail!(
            "votes count as the person whose token cast them, here {identity:?}, not {name:?}: vote with {name}'s own token (--token, or TOOLGATE_APPROVER_TOKEN) and drop --as"
        );
    }
    Ok(identity)
}

/// Whether `token` is the daemon's shared operator token for this data
/// directory (its `operator.token` file).
fn is_shared_operator_token(data: &DataDirArgs, token: &str) -> bool {
    let (dir, _) = data.resolve();
    std::fs::read_to_string(dir.join("operator.token"))
        .map(|t| t.trim() == token && !token.is_empty())
        .unwrap_or(false)
}
