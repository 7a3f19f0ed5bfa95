//! How commands that list things print: a table for a person at a
//! terminal, JSON (one object per line) when stdout is piped or with
//! `--json`, as docs/cli.md promises.

use std::io::IsTerminal;

/// Whether to print JSON lines rather than a table: `--json` says so,
/// `--table` says not, and otherwise a stdout that is not a terminal (a
/// pipe, a file) gets JSON.
pub(crate) fn json_lines(json: bool, table: bool) -> bool {
    json || (!table && !std::io::stdout().is_terminal())
}
