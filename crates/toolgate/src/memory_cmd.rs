//! `toolgate memory add | import | export | search | list | remove`: the
//! lessons the knowledge gate shows agents before risky calls.

use crate::state::{DataDirArgs, os_user};
use anyhow::{Context, Result};
use clap::Subcommand;
use std::fmt;
use std::io::{BufRead, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use toolgate_core::knowledge::memory::{Category, Memory, MemoryInput};
use toolgate_gate::{Clock, SystemClock};

/// What to do with memories.
#[derive(Debug, Subcommand)]
pub(crate) enum MemoryCommand {
    /// Record one memory; prints its id.
    Add {
        /// The lesson, e.g. "pg_dump on billing locks it for minutes".
        text: String,
        /// What it is about: process, technical, security, gotchas,
        /// credentials or general (repeat, or separate with commas;
        /// default general).
        #[arg(long = "category", value_name = "C", value_delimiter = ',')]
        categories: Vec<String>,
        /// How sure you are, from 0 to 1.
        #[arg(long, value_name = "F")]
        confidence: f64,
        /// Where it comes from (an incident, a person, a document).
        #[arg(long, value_name = "S")]
        source: Option<String>,
        /// Print the stored memory as JSON instead of its id.
        #[arg(long)]
        json: bool,
    },
    /// Add memories from JSON lines (one {"text", "categories",
    /// "confidence", "source"} object a line; blank lines and lines
    /// starting with # are skipped). Every line is checked first: one bad
    /// line and nothing is imported.
    Import {
        /// The file, or - for standard input.
        file: PathBuf,
    },
    /// Write every memory as JSON lines, oldest first (what `import` reads).
    Export {
        /// Write here (created private to you) instead of standard output.
        file: Option<PathBuf>,
    },
    /// Find memories containing all these words (each word literal).
    Search {
        /// The words.
        #[arg(required = true, num_args = 1..)]
        words: Vec<String>,
        /// At most this many, best match first.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// One JSON object per line instead of a table (also whenever
        /// stdout is not a terminal).
        #[arg(long)]
        json: bool,
        /// The table even when stdout is not a terminal.
        #[arg(long, conflicts_with = "json")]
        table: bool,
    },
    /// List memories, newest first.
    List {
        /// Only memories in this category.
        #[arg(long, value_name = "C")]
        category: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// One JSON object per line instead of a table (also whenever
        /// stdout is not a terminal).
        #[arg(long)]
        json: bool,
        /// The table even when stdout is not a terminal.
        #[arg(long, conflicts_with = "json")]
        table: bool,
    },
    /// Delete a memory by id.
    Remove {
        /// The memory's id (from `list` or `search`).
        id: u64,
    },
}

/// Input the user must fix: exit status 2.
#[derive(Debug)]
struct BadInput(String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// A memory that is not there: exit status 1.
#[derive(Debug)]
struct NotFound(u64);

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no memory {}: check the id with `toolgate memory list` or `toolgate memory search`",
            self.0
        )
    }
}

impl std::error::Error for NotFound {}

/// Runs a memory subcommand: exit 0 on success, 2 on bad input (nothing
/// changed), 1 on any other failure.
pub(crate) fn run(cmd: MemoryCommand, data: &DataDirArgs) -> ExitCode {
    match run_inner(cmd, data) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.downcast_ref::<BadLines>().is_none() {
                eprintln!("toolgate memory: {}", format!("{e:#}").replace('\n', " "));
            } else {
                eprint!("{e}");
            }
            let bad =
                e.downcast_ref::<BadInput>().is_some() || e.downcast_ref::<BadLines>().is_some();
            ExitCode::from(if bad { 2 } else { 1 })
        }
    }
}

fn run_inner(cmd: MemoryCommand, data: &DataDirArgs) -> Result<()> {
    let clock = SystemClock;
    match cmd {
        MemoryCommand::Add {
            text,
            categories,
            confidence,
            source,
            json,
        } => {
            let input = MemoryInput {
                text: Some(text),
                categories,
                confidence: Some(confidence),
                source,
                ..MemoryInput::default()
            };
            let m = input.validate(clock.now_ms()).map_err(BadInput)?;
            let store = data.open()?;
            let m = toolgate_gate::add_memory(&*store, &clock, m, &os_user())?;
            if json {
                println!("{}", serde_json::to_string(&m)?);
            } else {
                println!("{}", m.id);
            }
        }
        MemoryCommand::Import { file } => import(data, &file)?,
        MemoryCommand::Export { file } => export(data, file)?,
        MemoryCommand::Search {
            words,
            limit,
            json,
            table,
        } => {
            let json = crate::output::json_lines(json, table);
            let store = data.open_existing()?;
            let text = words.join(" ");
            let found = store.search_memories_text(&text, limit)?;
            if !json && found.is_empty() {
                println!("no memory contains all of: {text}");
            } else {
                print_memories(&found, json)?;
            }
        }
        MemoryCommand::List {
            category,
            limit,
            json,
            table,
        } => {
            let json = crate::output::json_lines(json, table);
            let category = category
                .map(|c| {
                    Category::parse(&c).ok_or_else(|| {
                        BadInput(format!(
                            "--category {c:?}: use process, technical, security, gotchas, \
                             credentials or general"
                        ))
                    })
                })
                .transpose()?;
            let store = data.open_existing()?;
            let found = store.list_memories(category, limit)?;
            if !json && found.is_empty() {
                match category {
                    Some(c) => println!("no {c} memories in {}", store.location()),
                    None => println!(
                        "no memories in {} (add one with `toolgate memory add`)",
                        store.location()
                    ),
                }
            } else {
                print_memories(&found, json)?;
            }
        }
        MemoryCommand::Remove { id } => {
            let store = data.open_existing()?;
            if !toolgate_gate::remove_memory(&*store, &clock, id, &os_user())? {
                return Err(NotFound(id).into());
            }
            println!("removed memory {id}");
        }
    }
    Ok(())
}

/// The most bad lines an import reports before giving only the count.
const MAX_REPORTED: usize = 20;

/// Bad lines in an import file, one `FILE:LINE: message` a line.
#[derive(Debug)]
struct BadLines {
    report: String,
}

impl fmt::Display for BadLines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

impl std::error::Error for BadLines {}

fn import(data: &DataDirArgs, file: &std::path::Path) -> Result<()> {
    let stdin = file.as_os_str() == "-";
    let name = if stdin {
        "<stdin>".to_string()
    } else {
        file.display().to_string()
    };
    let input: Box<dyn Read> = if stdin {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| {
            BadInput(format!(
                "cannot read {name}: {e} (give a JSON lines file, or - for standard input)"
            ))
        })?)
    };
    let mut reader = BufReader::new(input);
    let now = SystemClock.now_ms();
    let progress = std::io::stderr().is_terminal();
    let mut items: Vec<Memory> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut bad = 0usize;
    let mut line_no = 0usize;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| BadInput(format!("cannot read {name}: {e}")))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if progress && line_no.is_multiple_of(10_000) {
            eprint!("\rtoolgate memory import: checked {line_no} lines");
        }
        let checked = match std::str::from_utf8(&buf) {
            Err(e) => Err(format!("not UTF-8 text ({e})")),
            Ok(line) => {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                serde_json::from_str::<MemoryInput>(line)
                    .map_err(|e| {
                        if e.is_data() {
                            format!("not a memory: {e}")
                        } else {
                            format!("not JSON: {e} (one JSON object a line)")
                        }
                    })
                    .and_then(|input| input.validate(now))
            }
        };
        match checked {
            Ok(m) => items.push(m),
            Err(message) => {
                bad += 1;
                if errors.len() < MAX_REPORTED {
                    errors.push(format!("{name}:{line_no}: {message}"));
                }
            }
        }
    }
    if progress && line_no >= 10_000 {
        eprintln!("\rtoolgate memory import: checked {line_no} lines");
    }
    if bad > 0 {
        let mut report = String::new();
        for e in &errors {
            report.push_str(e);
            report.push('\n');
        }
        if bad > errors.len() {
            report.push_str(&format!("… and {} more bad lines\n", bad - errors.len()));
        }
        report.push_str(&format!(
            "toolgate memory import: {bad} bad line{} in {name}; nothing was imported (fix them and run the import again)\n",
            if bad == 1 { "" } else { "s" }
        ));
        return Err(BadLines { report }.into());
    }
    if items.is_empty() {
        println!("no memories in {name}; nothing imported");
        return Ok(());
    }
    let store = data.open()?;
    let count = items.len();
    let ids = toolgate_gate::import_memories(&*store, &SystemClock, items, &os_user())
        .with_context(|| format!("importing {name}: nothing was imported"))?;
    let first = ids.first().copied().unwrap_or_default();
    let last = ids.last().copied().unwrap_or_default();
    if count == 1 {
        println!("imported 1 memory (id {first})");
    } else {
        println!("imported {count} memories (ids {first}–{last})");
    }
    Ok(())
}

fn export(data: &DataDirArgs, file: Option<PathBuf>) -> Result<()> {
    let store = data.open_existing()?;
    let mut all = store.list_memories(None, usize::MAX)?;
    // Oldest first: importing the file again keeps their order.
    all.reverse();
    match file {
        None => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            for m in &all {
                if writeln!(out, "{}", serde_json::to_string(m)?).is_err() {
                    // A reader that went away (`| head`) is not an error.
                    return Ok(());
                }
            }
            match out.flush() {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
                _ => Ok(()),
            }
        }
        Some(path) => {
            use std::os::unix::fs::OpenOptionsExt;
            // Memories may hold credentials: the file is the user's alone.
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            let mut out = BufWriter::new(f);
            for m in &all {
                writeln!(out, "{}", serde_json::to_string(m)?)?;
            }
            out.into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!(
                "exported {} memor{} to {}",
                all.len(),
                if all.len() == 1 { "y" } else { "ies" },
                path.display()
            );
            Ok(())
        }
    }
}

/// The longest text shown in a table row, in characters.
const TEXT_WIDTH: usize = 100;

fn print_memories(found: &[Memory], json: bool) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = (|| -> std::io::Result<()> {
        if json {
            for m in found {
                writeln!(out, "{}", serde_json::to_string(m)?)?;
            }
        } else {
            writeln!(
                out,
                "{:>6}  {:<4}  {:<22}  {:<16}  TEXT",
                "ID", "CONF", "CATEGORIES", "SOURCE"
            )?;
            for m in found {
                let cats: Vec<&str> = m.categories.iter().map(|c| c.as_str()).collect();
                writeln!(
                    out,
                    "{:>6}  {:<4.2}  {:<22}  {:<16}  {}",
                    m.id,
                    m.confidence,
                    cats.join(","),
                    cut(m.source.as_deref().unwrap_or("-"), 16),
                    cut(&m.text, TEXT_WIDTH)
                )?;
            }
        }
        out.flush()
    })();
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `text` on one line, at most `max` characters (the last one `…` when cut).
fn cut(text: &str, max: usize) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if flat.chars().count() <= max {
        return flat;
    }
    let mut s: String = flat.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}
