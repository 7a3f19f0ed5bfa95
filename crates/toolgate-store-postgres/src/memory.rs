//! Memories in PostgreSQL: the words indexed, search queries that can never
//! be read as query syntax, and rows back to values.
//!
//! Text is split into words here, not by PostgreSQL's parser alone, so the
//! words match the SQLite store's (its `unicode61` tokenizer): runs of
//! letters and digits, lowercased, diacritics removed (`Café` is `cafe`),
//! so `10.0.0.163` is the four words `10 0 0 163` and `pg_dump` is `pg
//! dump`. Those words, one space between them, are what `to_tsvector` with
//! the `simple` configuration (no stemming, no stop words) indexes, in the
//! `words` column (GIN index).
//!
//! A search term is a phrase of its words (`'10' <-> '0' <-> '0' <-> '163'`),
//! each word a quoted lexeme in the text given to `to_tsquery('simple', …)`:
//! a word holds only letters and digits, and is quoted besides, so nothing
//! in a term is ever query syntax (`OR`, `!`, `:*`, `<->` are just text).
//! Terms are joined with `|` (any) or `&` (all).
//!
//! Relevance is `ts_rank` with length normalization 1 (rank / (1 + log of
//! the length)): more matched words and more occurrences rank higher, long
//! texts lower; newest first among equals. Unlike the SQLite store's bm25,
//! it does not weigh rare words above common ones.

use crate::RowError;
use tokio_postgres::Row;
use toolgate_core::knowledge::memory::{Category, Memory};
use toolgate_store::Shown;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The columns every memory query selects, in the order [`memory_from_row`]
/// reads them.
pub(crate) const MEMORY_COLUMNS: &str = "id, text, categories, confidence, source, created_ms";

/// The words of `text` as indexed and searched: runs of letters and digits,
/// lowercased, without diacritics.
pub(crate) fn words(text: &str) -> Vec<String> {
    let folded: String = text
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .nfc()
        .collect::<String>()
        .to_lowercase();
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// What the `words` column is made from: the words of `text`, one space
/// between them.
pub(crate) fn indexed_text(text: &str) -> String {
    words(text).join(" ")
}

/// One word as a quoted `to_tsquery` operand (quotes and backslashes
/// doubled, though a word has neither).
fn lexeme(word: &str) -> String {
    let mut s = String::with_capacity(word.len() + 2);
    s.push('\'');
    for c in word.chars() {
        match c {
            '\'' => s.push_str("''"),
            '\\' => s.push_str("\\\\"),
            c => s.push(c),
        }
    }
    s.push('\'');
    s
}

/// `term` as a phrase (its words in order, adjacent), or `None` when it has
/// no word and so could never match anything.
pub(crate) fn phrase(term: &str) -> Option<String> {
    let w = words(term);
    if w.is_empty() {
        return None;
    }
    let parts: Vec<String> = w.iter().map(|w| lexeme(w)).collect();
    Some(format!("({})", parts.join(" <-> ")))
}

/// A query matching text that holds any of `terms` (each a phrase);
/// `None` when no term has a word.
pub(crate) fn any_term(terms: &[String]) -> Option<String> {
    let mut phrases: Vec<String> = Vec::new();
    for p in terms.iter().filter_map(|t| phrase(t)) {
        if !phrases.contains(&p) {
            phrases.push(p);
        }
    }
    (!phrases.is_empty()).then(|| phrases.join(" | "))
}

/// A query matching text that holds every whitespace-separated word of
/// `text` (each a phrase of its letter-and-digit runs); `None` when no word
/// has any.
pub(crate) fn all_words(text: &str) -> Option<String> {
    let parts: Vec<String> = text.split_whitespace().filter_map(phrase).collect();
    (!parts.is_empty()).then(|| parts.join(" & "))
}

/// Categories as stored: sorted, without repeats, `general` when none.
pub(crate) fn categories_column(categories: &[Category]) -> Vec<String> {
    let mut c = categories.to_vec();
    c.sort();
    c.dedup();
    if c.is_empty() {
        c.push(Category::General);
    }
    c.iter().map(|c| c.as_str().to_string()).collect()
}

/// The names of `categories`, sorted, without repeats (for a filter).
pub(crate) fn category_names(categories: &[Category]) -> Vec<String> {
    let mut c = categories.to_vec();
    c.sort();
    c.dedup();
    c.iter().map(|c| c.as_str().to_string()).collect()
}

/// One `memories` row (selected as [`MEMORY_COLUMNS`]) as a [`Memory`].
pub(crate) fn memory_from_row(r: &Row) -> Result<Memory, RowError> {
    let id: i64 = get(r, 0, "memory id")?;
    let text: String = get(r, 1, "memory text")?;
    let names: Vec<String> = get(r, 2, "memory categories")?;
    let mut categories = Vec::with_capacity(names.len());
    for name in &names {
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
        confidence: get(r, 3, "memory confidence")?,
        source: get(r, 4, "memory source")?,
        created_ms: get(r, 5, "memory created_ms")?,
    })
}

/// The columns of `knowledge_shown`, in the order [`shown_from_row`] reads.
pub(crate) const SHOWN_COLUMNS: &str = "id, binding, scope, shown_ms, expires_ms, keys";

/// One `knowledge_shown` row as a [`Shown`].
pub(crate) fn shown_from_row(r: &Row) -> Result<Shown, RowError> {
    let id: String = get(r, 0, "knowledge shown id")?;
    let keys: String = get(r, 5, "knowledge shown keys")?;
    let keys: Vec<String> = serde_json::from_str(&keys)
        .map_err(|e| RowError::Corrupt(format!("knowledge shown {id}: keys: {e}")))?;
    Ok(Shown {
        binding: get(r, 1, "knowledge shown binding")?,
        scope: get(r, 2, "knowledge shown scope")?,
        shown_ms: get(r, 3, "knowledge shown shown_ms")?,
        expires_ms: get(r, 4, "knowledge shown expires_ms")?,
        id,
        keys,
    })
}

/// Column `i` of `r`, or why it cannot be read as a `T`.
pub(crate) fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
    r: &'a Row,
    i: usize,
    what: &str,
) -> Result<T, RowError> {
    r.try_get(i)
        .map_err(|e| RowError::Corrupt(format!("{what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_folded_letter_and_digit_runs() {
        assert_eq!(words("host 10.0.0.163"), ["host", "10", "0", "0", "163"]);
        assert_eq!(words("BÍLLING Café Zürich"), ["billing", "cafe", "zurich"]);
        assert_eq!(words("pg_dump"), ["pg", "dump"]);
        assert_eq!(words("東京 СЕРВЕР"), ["東京", "сервер"]);
        assert!(words("-- * \u{301} \"").is_empty());
        assert_eq!(indexed_text("a\0b  c"), "a b c");
    }

    #[test]
    fn terms_become_quoted_phrases() {
        assert_eq!(phrase("pg_dump").as_deref(), Some("('pg' <-> 'dump')"));
        assert_eq!(phrase("x*").as_deref(), Some("('x')"));
        assert_eq!(phrase("!a & b:*").as_deref(), Some("('a' <-> 'b')"));
        assert_eq!(phrase("'"), None);
        assert_eq!(phrase(""), None);
        assert_eq!(lexeme("a'b\\"), "'a''b\\\\'");
        assert_eq!(
            any_term(&["x".into(), "-".into(), "X".into(), "NEAR(".into()]).as_deref(),
            Some("('x') | ('near')")
        );
        assert_eq!(
            all_words("  \"a\" OR x* ").as_deref(),
            Some("('a') & ('or') & ('x')")
        );
        assert_eq!(all_words(" -- * "), None);
    }

    #[test]
    fn categories_are_stored_sorted_and_unique() {
        use Category::*;
        assert_eq!(
            categories_column(&[Gotchas, Process, Gotchas]),
            ["process", "gotchas"]
        );
        assert_eq!(categories_column(&[]), ["general"]);
        assert!(category_names(&[]).is_empty());
    }
}
