//! Memories and knowledge-shown records in SQLite: rows to values and back,
//! and turning words into FTS5 queries that cannot be misread as query
//! syntax.
//!
//! The full-text index (`memories_fts`, FTS5 with the `unicode61`
//! tokenizer, diacritics removed) splits text into runs of letters and
//! digits, so `10.0.0.163` is the four tokens `10 0 0 163`. Every word or
//! term is searched as a quoted FTS5 string, which FTS5 reads as a phrase
//! of its tokens in order: `10.0.0.163` matches "host 10.0.0.163 is flaky"
//! and not "10.0.0.16"; `pg_dump` matches "pg_dump" (and "pg dump").

use crate::memory::Shown;
use rusqlite::{Connection, Row, params};
use toolgate_core::knowledge::memory::{Category, Memory, MemoryQuery};

/// The columns every memory query selects, in the order [`memory_from_row`]
/// reads them.
pub(super) const MEMORY_COLUMNS: &str =
    "m.id, m.text, m.categories, m.confidence, m.source, m.created_ms";

/// Why a stored row could not be read back as a value.
#[derive(Debug)]
pub(super) enum RowError {
    /// SQLite failed.
    Sql(rusqlite::Error),
    /// The row holds something this version cannot read.
    Corrupt(String),
}

impl From<rusqlite::Error> for RowError {
    fn from(e: rusqlite::Error) -> RowError {
        RowError::Sql(e)
    }
}

/// One `memories` row (selected as [`MEMORY_COLUMNS`]) as a [`Memory`].
pub(super) fn memory_from_row(r: &Row<'_>) -> Result<Memory, RowError> {
    let id: i64 = r.get(0)?;
    let text: String = r.get(1)?;
    let cats: String = r.get(2)?;
    let mut categories = Vec::new();
    for name in cats.split_ascii_whitespace() {
        match Category::parse(name) {
            Some(c) => categories.push(c),
            None => {
                return Err(RowError::Corrupt(format!(
                    "memory {id}: unknown category {name:?}"
                )));
            }
        }
    }
    Ok(Memory {
        id: id as u64,
        text,
        categories,
        confidence: r.get(3)?,
        source: r.get(4)?,
        created_ms: r.get(5)?,
    })
}

/// Categories as stored: lowercase names, sorted, without repeats, one space
/// between them; `general` when there are none.
pub(super) fn categories_column(categories: &[Category]) -> String {
    let mut c = categories.to_vec();
    c.sort();
    c.dedup();
    if c.is_empty() {
        c.push(Category::General);
    }
    c.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(" ")
}

/// `term` as one FTS5 string (a phrase of its tokens), or `None` when it
/// holds no letter or digit and so could never match anything.
///
/// Inside an FTS5 string every character is literal except `"`, written
/// twice; so `OR`, `NEAR(`, `*`, `-`, `^` and column filters in a term are
/// just text. NUL and other control characters (which end or upset the
/// query parser) become spaces, which separate tokens anyway.
pub(super) fn fts_string(term: &str) -> Option<String> {
    if !term.chars().any(char::is_alphanumeric) {
        return None;
    }
    let mut s = String::with_capacity(term.len() + 2);
    s.push('"');
    for c in term.chars() {
        match c {
            '"' => s.push_str("\"\""),
            c if c.is_control() => s.push(' '),
            c => s.push(c),
        }
    }
    s.push('"');
    Some(s)
}

/// An FTS5 query matching text that holds any of `terms` (each a phrase);
/// `None` when no term can match anything.
pub(super) fn any_of(terms: &[String]) -> Option<String> {
    let parts: Vec<String> = terms.iter().filter_map(|t| fts_string(t)).collect();
    (!parts.is_empty()).then(|| parts.join(" OR "))
}

/// An FTS5 query matching text that holds every whitespace-separated word
/// of `text` (each a phrase of its tokens); `None` when no word can match.
pub(super) fn all_words(text: &str) -> Option<String> {
    let parts: Vec<String> = text.split_whitespace().filter_map(fts_string).collect();
    (!parts.is_empty()).then(|| parts.join(" AND "))
}

/// The number of rows to ask SQLite for: a negative LIMIT is no limit.
pub(super) fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(-1)
}

/// Runs a memory search on `conn`: `fts` is the FTS5 query. Categories are
/// filtered in SQL, one `instr` test per wanted category, so there are at
/// most seven statement shapes for the statement cache.
pub(super) fn search(
    conn: &Connection,
    fts: &str,
    q: &MemoryQuery,
) -> Result<Vec<Memory>, RowError> {
    let mut wanted = q.categories.clone();
    wanted.sort();
    wanted.dedup();
    let mut sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid \
         WHERE memories_fts MATCH ?1 AND m.confidence >= ?2"
    );
    if !wanted.is_empty() {
        let tests: Vec<String> = (0..wanted.len())
            .map(|i| format!("instr(' ' || m.categories || ' ', ?{}) > 0", i + 4))
            .collect();
        sql.push_str(&format!(" AND ({})", tests.join(" OR ")));
    }
    sql.push_str(" ORDER BY bm25(memories_fts), m.id DESC LIMIT ?3");
    // NaN would bind as NULL and match nothing; below 0 is everything.
    let min = if q.min_confidence.is_nan() {
        0.0
    } else {
        q.min_confidence
    };
    let padded: Vec<String> = wanted.iter().map(|c| format!(" {c} ")).collect();
    let mut args: Vec<&dyn rusqlite::ToSql> = Vec::with_capacity(3 + padded.len());
    let limit = sql_limit(q.limit);
    args.push(&fts);
    args.push(&min);
    args.push(&limit);
    for p in &padded {
        args.push(p);
    }
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(&args[..])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(memory_from_row(r)?);
    }
    Ok(out)
}

/// Memories newest first (by id: insertion order, whatever the clock said),
/// only those with `category` when given, at most `limit`.
pub(super) fn list(
    conn: &Connection,
    category: Option<Category>,
    limit: usize,
) -> Result<Vec<Memory>, RowError> {
    let limit = sql_limit(limit);
    let mut out = Vec::new();
    match category {
        None => {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories m ORDER BY m.id DESC LIMIT ?1"
            ))?;
            let mut rows = stmt.query(params![limit])?;
            while let Some(r) = rows.next()? {
                out.push(memory_from_row(r)?);
            }
        }
        Some(c) => {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories m \
                 WHERE instr(' ' || m.categories || ' ', ?1) > 0 ORDER BY m.id DESC LIMIT ?2"
            ))?;
            let mut rows = stmt.query(params![format!(" {c} "), limit])?;
            while let Some(r) = rows.next()? {
                out.push(memory_from_row(r)?);
            }
        }
    }
    Ok(out)
}

/// The memories revision counter.
pub(super) fn rev(conn: &Connection) -> rusqlite::Result<u64> {
    conn.prepare_cached("SELECT rev FROM memory_rev WHERE id = 1")?
        .query_row([], |r| r.get::<_, i64>(0))
        .map(|n| n.max(0) as u64)
}

/// The columns of `knowledge_shown`, in the order [`shown_from_row`] reads.
pub(super) const SHOWN_COLUMNS: &str = "id, binding, scope, shown_ms, expires_ms, keys";

/// One `knowledge_shown` row as a [`Shown`].
pub(super) fn shown_from_row(r: &Row<'_>) -> Result<Shown, RowError> {
    let id: String = r.get(0)?;
    let keys: String = r.get(5)?;
    let keys: Vec<String> = serde_json::from_str(&keys)
        .map_err(|e| RowError::Corrupt(format!("knowledge shown {id}: keys: {e}")))?;
    Ok(Shown {
        id,
        binding: r.get(1)?,
        scope: r.get(2)?,
        shown_ms: r.get(3)?,
        expires_ms: r.get(4)?,
        keys,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_become_literal_phrases() {
        assert_eq!(fts_string("pg_dump").as_deref(), Some("\"pg_dump\""));
        assert_eq!(fts_string("a\"b").as_deref(), Some("\"a\"\"b\""));
        assert_eq!(fts_string("a\0b").as_deref(), Some("\"a b\""));
        assert_eq!(fts_string("--"), None);
        assert_eq!(fts_string(""), None);
        assert_eq!(fts_string("\"*\""), None);
        assert_eq!(
            any_of(&["x".into(), "-".into(), "NEAR(".into()]).as_deref(),
            Some("\"x\" OR \"NEAR(\"")
        );
        assert_eq!(all_words("  \"a\" OR x* ").as_deref(), Some("\"\"\"a\"\"\" AND \"OR\" AND \"x*\""));
        assert_eq!(all_words(" -- * "), None);
    }

    #[test]
    fn categories_are_stored_sorted_and_unique() {
        use Category::*;
        assert_eq!(categories_column(&[Gotchas, Process, Gotchas]), "process gotchas");
        assert_eq!(categories_column(&[]), "general");
    }
}
