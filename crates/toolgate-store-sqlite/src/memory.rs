//! Memories and knowledge-shown records in SQLite: rows to values and back,
//! turning words into FTS5 queries that cannot be misread as query syntax,
//! and ranking.
//!
//! The full-text index (`memories_fts`, FTS5 with the `unicode61`
//! tokenizer, diacritics removed) splits text into runs of letters and
//! digits, so `10.0.0.163` is the four tokens `10 0 0 163`. Every word or
//! term is searched as a quoted FTS5 string, which FTS5 reads as a phrase
//! of its tokens in order: `10.0.0.163` matches "host 10.0.0.163 is flaky"
//! and not "10.0.0.16"; `pg_dump` matches "pg_dump" (and "pg dump").
//!
//! Ranking is bm25 (k1 = 1.2, b = 0.75, FTS5's formula). For the decision
//! path ([`search_any`]) it is computed here rather than by FTS5's `bm25()`,
//! which costs a second pass over every phrase and about half a microsecond
//! for every matching row; see [`search_any`].

use rusqlite::{Connection, OptionalExtension, Row, params};
use toolgate_core::knowledge::memory::{Category, Memory, MemoryQuery};
use toolgate_store::Shown;

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

/// One search term: its FTS5 string and its tokens (lowercased, for
/// counting how often it occurs in a memory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Phrase {
    /// The quoted FTS5 string.
    pub(super) fts: String,
    /// Its letter-and-digit runs, lowercased.
    pub(super) tokens: Vec<String>,
}

/// The phrases of `terms`, without repeats, dropping terms that can match
/// nothing.
pub(super) fn phrases(terms: &[String]) -> Vec<Phrase> {
    let mut out: Vec<Phrase> = Vec::with_capacity(terms.len());
    for t in terms {
        let Some(fts) = fts_string(t) else { continue };
        if out.iter().any(|p| p.fts == fts) {
            continue;
        }
        let lower = t.to_lowercase();
        let tokens = words(&lower).map(str::to_string).collect();
        out.push(Phrase { fts, tokens });
    }
    out
}

/// The runs of letters and digits in `text`: close to what the `unicode61`
/// tokenizer sees (it also folds diacritics, which only makes a count here
/// low, never a match missed: matching is FTS5's).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
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

/// A search ranks at least this many memories by bm25 (more when its limit
/// is higher): all of them when no more match (the usual case), else the
/// ones matching the rarest terms (see [`search_any`]).
pub(super) const RANKED: usize = 64;

/// bm25's term-frequency saturation (FTS5's value).
const K1: f64 = 1.2;
/// bm25's length normalization (FTS5's value).
const B: f64 = 0.75;

/// The confidence floor and categories of a query, ready to bind.
struct Filter {
    min: f64,
    /// ` name ` for each wanted category (sorted, unique); empty for any.
    padded: Vec<String>,
}

impl Filter {
    fn new(q: &MemoryQuery) -> Filter {
        let mut wanted = q.categories.clone();
        wanted.sort();
        wanted.dedup();
        Filter {
            // NaN would bind as NULL and match nothing; below 0 is everything.
            min: if q.min_confidence.is_nan() {
                0.0
            } else {
                q.min_confidence
            },
            padded: wanted.iter().map(|c| format!(" {c} ")).collect(),
        }
    }

    /// SQL testing `m.confidence` against parameter `?{first}` and the
    /// categories against the parameters after it: one `instr` test per
    /// wanted category, so there are at most seven shapes of statement.
    fn sql(&self, first: usize) -> String {
        let mut sql = format!("m.confidence >= ?{first}");
        if !self.padded.is_empty() {
            let tests: Vec<String> = (0..self.padded.len())
                .map(|i| format!("instr(' ' || m.categories || ' ', ?{}) > 0", first + 1 + i))
                .collect();
            sql.push_str(&format!(" AND ({})", tests.join(" OR ")));
        }
        sql
    }

    fn args<'a>(&'a self, args: &mut Vec<&'a dyn rusqlite::ToSql>) {
        args.push(&self.min);
        for p in &self.padded {
            args.push(p);
        }
    }
}

/// Memories matching the FTS5 query `fts` and `q`'s filters, ranked by
/// FTS5's bm25 (best first, newest first among equals), at most `q.limit`.
/// `q.terms` is not read. Costs a pass over every match.
pub(super) fn search_ranked(
    conn: &Connection,
    fts: &str,
    q: &MemoryQuery,
) -> Result<Vec<Memory>, RowError> {
    let filter = Filter::new(q);
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid \
         WHERE memories_fts MATCH ?1 AND {} \
         ORDER BY bm25(memories_fts), m.id DESC LIMIT ?2",
        filter.sql(3)
    );
    let limit = sql_limit(q.limit);
    let mut args: Vec<&dyn rusqlite::ToSql> = vec![&fts, &limit];
    filter.args(&mut args);
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(&args[..])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(memory_from_row(r)?);
    }
    Ok(out)
}

/// Memories whose text holds any of `phrases` (at least one), filtered
/// and ranked as `q` says, at most `q.limit`.
///
/// One pass reads each phrase's matching rows from the index (cost: the
/// matches, not the table), which gives each phrase's document frequency
/// and so its bm25 weight (inverse document frequency). Memories are then
/// read in order of the summed weight of the phrases they match (rarer
/// phrases, or more of them, first; newest first among equals), filters
/// applied in SQL, until [`RANKED`] (or `q.limit`, if more) pass; those
/// are ranked by bm25 (phrase counts and lengths taken from their text) and
/// the best `q.limit` returned, newest first among equals. When no more
/// than that many memories match, that is every match ranked by bm25.
pub(super) fn search_any(
    conn: &Connection,
    phrases: &[Phrase],
    q: &MemoryQuery,
) -> Result<Vec<Memory>, RowError> {
    let mut hits: Vec<Vec<i64>> = Vec::with_capacity(phrases.len());
    {
        let mut stmt =
            conn.prepare_cached("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?1")?;
        for p in phrases {
            let mut ids = Vec::new();
            let mut rows = stmt.query(params![p.fts])?;
            while let Some(r) = rows.next()? {
                ids.push(r.get::<_, i64>(0)?);
            }
            // Rowid order already; sorted for the binary searches below
            // whatever FTS5 does.
            ids.sort_unstable();
            hits.push(ids);
        }
    }
    if hits.iter().all(Vec::is_empty) {
        return Ok(Vec::new());
    }
    let totals = totals(conn)?;
    let rows = totals.map_or(0.0, |t| t.0 as f64);
    // FTS5's weight of a phrase found in `n` of `rows` rows.
    let idf: Vec<f64> = hits
        .iter()
        .map(|ids| {
            let n = ids.len() as f64;
            let w = ((rows - n + 0.5) / (n + 0.5)).ln();
            if w > 0.0 { w } else { 1e-6 }
        })
        .collect();
    let order = by_weight(&hits, &idf);
    let found = fetch_in_order(conn, &order, q, RANKED.max(q.limit))?;
    let mut lengths = Vec::with_capacity(found.len());
    let mut scores = Vec::with_capacity(found.len());
    for m in &found {
        let lower = m.text.to_lowercase();
        let tokens: Vec<&str> = words(&lower).collect();
        lengths.push(tokens.len());
        let id = m.id as i64;
        let mut tf = Vec::with_capacity(phrases.len());
        for (p, ids) in phrases.iter().zip(&hits) {
            tf.push(if ids.binary_search(&id).is_ok() {
                // FTS5 says it is there: at least once, whatever the count
                // here makes of folded diacritics.
                occurrences(&tokens, &p.tokens).max(1)
            } else {
                0
            });
        }
        scores.push(tf);
    }
    let avg = match totals {
        Some((rows, tokens)) if rows > 0 && tokens > 0 => tokens as f64 / rows as f64,
        // No totals: the mean of what is being ranked.
        _ => (lengths.iter().sum::<usize>().max(1) as f64) / (lengths.len().max(1) as f64),
    };
    let mut scored: Vec<(f64, Memory)> = found
        .into_iter()
        .zip(lengths.iter().zip(&scores))
        .map(|(m, (len, tf))| {
            let norm = K1 * (1.0 - B + B * (*len as f64) / avg);
            let score = tf
                .iter()
                .zip(&idf)
                .filter(|(tf, _)| **tf > 0)
                .map(|(tf, w)| {
                    let tf = *tf as f64;
                    w * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum::<f64>();
            (score, m)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.id.cmp(&a.1.id)));
    Ok(scored.into_iter().take(q.limit).map(|(_, m)| m).collect())
}

/// Every id in `hits` (one ascending list per phrase), ordered by the sum
/// of the weights of the phrases it is in, heaviest first, then newest
/// (highest id) first.
fn by_weight(hits: &[Vec<i64>], idf: &[f64]) -> Vec<i64> {
    let mut pairs: Vec<(i64, usize)> = Vec::with_capacity(hits.iter().map(Vec::len).sum());
    for (i, ids) in hits.iter().enumerate() {
        pairs.extend(ids.iter().map(|id| (*id, i)));
    }
    // Sorted runs, one per phrase: the stable sort merges them.
    pairs.sort();
    // Few distinct weights (sums over subsets of the phrases), each added
    // up in phrase order, so equal subsets give equal bits.
    let mut groups: std::collections::HashMap<u64, (f64, Vec<i64>)> =
        std::collections::HashMap::new();
    let mut i = 0;
    while i < pairs.len() {
        let id = pairs[i].0;
        let mut w = 0.0;
        while i < pairs.len() && pairs[i].0 == id {
            w += idf[pairs[i].1];
            i += 1;
        }
        groups
            .entry(w.to_bits())
            .or_insert_with(|| (w, Vec::new()))
            .1
            .push(id);
    }
    let mut groups: Vec<(f64, Vec<i64>)> = groups.into_values().collect();
    groups.sort_by(|a, b| b.0.total_cmp(&a.0));
    groups
        .into_iter()
        .flat_map(|(_, ids)| ids.into_iter().rev())
        .collect()
}

/// How often the token sequence `phrase` occurs in `tokens`.
fn occurrences(tokens: &[&str], phrase: &[String]) -> usize {
    let Some(first) = phrase.first() else {
        return 0;
    };
    (0..tokens.len())
        .filter(|&i| {
            tokens[i] == first
                && tokens.len() - i >= phrase.len()
                && tokens[i..i + phrase.len()]
                    .iter()
                    .zip(phrase)
                    .all(|(a, b)| *a == b)
        })
        .count()
}

/// The index's row count and total token count, from FTS5's averages
/// record (the ones its bm25 uses); `None` when it cannot be read.
fn totals(conn: &Connection) -> rusqlite::Result<Option<(u64, u64)>> {
    let block: Option<Vec<u8>> = conn
        .prepare_cached("SELECT block FROM memories_fts_data WHERE id = 1")?
        .query_row([], |r| r.get(0))
        .optional()?;
    Ok(block.and_then(|b| {
        let (rows, used) = varint(&b)?;
        let (tokens, _) = varint(&b[used..])?;
        Some((rows, tokens))
    }))
}

/// An SQLite varint (big-endian, seven bits a byte, the ninth byte whole)
/// and its length.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, &byte) in b.iter().enumerate().take(9) {
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// How many ids one statement of [`fetch_in_order`] looks up.
const FETCH_CHUNK: usize = 32;

/// The memories with the ids in `order` that pass `q`'s filters, in that
/// order, at most `want`.
fn fetch_in_order(
    conn: &Connection,
    order: &[i64],
    q: &MemoryQuery,
    want: usize,
) -> Result<Vec<Memory>, RowError> {
    let filter = Filter::new(q);
    let marks: Vec<String> = (1..=FETCH_CHUNK).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({}) AND {}",
        marks.join(", "),
        filter.sql(FETCH_CHUNK + 1)
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut out = Vec::new();
    let mut found = std::collections::HashMap::new();
    for chunk in order.chunks(FETCH_CHUNK) {
        // Unused places hold -1, which no memory has.
        let mut ids = [-1i64; FETCH_CHUNK];
        for (slot, id) in ids.iter_mut().zip(chunk) {
            *slot = *id;
        }
        let mut args: Vec<&dyn rusqlite::ToSql> = ids.iter().map(|i| i as _).collect();
        filter.args(&mut args);
        let mut rows = stmt.query(&args[..])?;
        while let Some(r) = rows.next()? {
            let m = memory_from_row(r)?;
            found.insert(m.id as i64, m);
        }
        for id in chunk {
            if let Some(m) = found.remove(id) {
                out.push(m);
                if out.len() >= want {
                    return Ok(out);
                }
            }
        }
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
        let p = phrases(&[
            "x".into(),
            "-".into(),
            "NEAR(".into(),
            "x".into(),
            "10.0.0.1".into(),
        ]);
        let fts: Vec<&str> = p.iter().map(|p| p.fts.as_str()).collect();
        assert_eq!(fts, ["\"x\"", "\"NEAR(\"", "\"10.0.0.1\""]);
        assert_eq!(p[2].tokens, ["10", "0", "0", "1"]);
        assert_eq!(
            all_words("  \"a\" OR x* ").as_deref(),
            Some("\"\"\"a\"\"\" AND \"OR\" AND \"x*\"")
        );
        assert_eq!(all_words(" -- * "), None);
    }

    #[test]
    fn categories_are_stored_sorted_and_unique() {
        use Category::*;
        assert_eq!(
            categories_column(&[Gotchas, Process, Gotchas]),
            "process gotchas"
        );
        assert_eq!(categories_column(&[]), "general");
    }
}
