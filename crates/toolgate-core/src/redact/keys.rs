//! Which names (JSON keys, variables, flags) name a secret; the rule is
//! documented on [`secret_key_kind`].

/// Whether an object key (or the name in `NAME=value`, `--flag value`)
/// names a secret: the kind label it is redacted with, or `None`.
///
/// The key is split into words on every non-alphanumeric character (`_`,
/// `-`, `.`, space, …), on lower→Upper and Acronym→Word camelCase
/// boundaries (`APIKey` → `api key`) and between letters and digits; words
/// are lowercased. It is a secret when:
/// * a word ends with password, passwd, passphrase, secret, token, apikey,
///   authorization, cookie or credential (or their plurals, except
///   `tokens`, which counts tokens): `PGPASSWORD`, `client_secret`,
///   `authToken`, `Set-Cookie`;
/// * or two adjacent words are api+key, access+key, private+key,
///   secret+key, client+secret, session+key, auth+token or refresh+token,
///   or a word is `pwd`;
/// * or the whole key (leading dashes dropped) is `pwd`, `pass`, `auth`,
///   `x-api-key` or `set-cookie`, any case.
///
/// Except when:
/// * the last word is file, path, url, uri, dir or endpoint: the value
///   locates the secret rather than being it (`--token-file`,
///   `passwordFile`);
/// * the secret word is `token` used as a count: preceded by max, min, num
///   or total, or followed by count, limit, usage, type, budget (and
///   plurals): `token_count`, `tokenLimit`, `max_token`;
/// * the key is exactly `PWD`, the shell's working-directory variable.
///
/// So `max_tokens`, `tokens_used`, `token_type`, `author`, `keyboard`,
/// `key`, `passage`, `tokenizer`, `primary_key` are not secrets.
pub(super) fn secret_key_kind(key: &str) -> Option<&'static str> {
    let key = key.trim_start_matches('-');
    if key == "PWD" {
        return None;
    }
    let whole = [
        ("pwd", "password"),
        ("pass", "password"),
        ("auth", "auth"),
        ("x-api-key", "api-key"),
        ("set-cookie", "cookie"),
    ];
    if let Some((_, kind)) = whole.iter().find(|(k, _)| key.eq_ignore_ascii_case(k)) {
        return Some(kind);
    }
    let words = split_words(key);
    let last = words.last()?;
    if ["file", "path", "url", "uri", "dir", "endpoint"].contains(&last.as_str()) {
        return None;
    }
    let word = |i: usize| words.get(i).map_or("", String::as_str);
    for i in 0..words.len() {
        let pair = PAIRS
            .iter()
            .find(|(a, b, _)| word(i) == *a && singular(word(i + 1), b) == *b);
        if let Some((_, b, kind)) = pair
            && !(*b == "token" && token_is_count(&words, i + 1))
        {
            return Some(kind);
        }
        if word(i) == "pwd" {
            return Some("password");
        }
        let single = WORD_SUFFIXES
            .iter()
            .find(|(s, _)| singular(word(i), s).ends_with(s));
        if let Some((suffix, kind)) = single
            && !(*suffix == "token" && token_is_count(&words, i))
        {
            return Some(kind);
        }
    }
    None
}

/// Whether a flag with a secret-sounding name takes no value: it says how
/// to get the secret (`--password-stdin`, `--ask-password`,
/// `--no-password`, `--prompt-password`), so the word after it is not one.
pub(super) fn is_switch(flag: &str) -> bool {
    let words = split_words(flag.trim_start_matches('-'));
    let first = words.first().map_or("", String::as_str);
    let last = words.last().map_or("", String::as_str);
    ["ask", "no", "prompt"].contains(&first) || ["stdin", "prompt"].contains(&last)
}

/// `word` without a plural `s`, to be compared with `secret_word`; except
/// for `tokens`, which counts tokens (`max_tokens`) rather than holding them.
fn singular<'a>(word: &'a str, secret_word: &str) -> &'a str {
    match word.strip_suffix('s') {
        Some(one) if secret_word != "token" => one,
        _ => word,
    }
}

/// Adjacent word pairs that name a secret, with their kind; the second word
/// may be plural (`api_keys`).
const PAIRS: &[(&str, &str, &str)] = &[
    ("api", "key", "api-key"),
    ("access", "key", "access-key"),
    ("private", "key", "private-key"),
    ("secret", "key", "secret-key"),
    ("client", "secret", "client-secret"),
    ("session", "key", "session-key"),
    ("auth", "token", "auth-token"),
    ("refresh", "token", "refresh-token"),
];

/// Word endings that name a secret, with their kind. Endings rather than
/// whole words so that run-together names (`PGPASSWORD`, `GITHUBTOKEN`,
/// `clientsecret`) count. A plural counts too (`secrets`, `cookies`),
/// except `tokens`.
const WORD_SUFFIXES: &[(&str, &str)] = &[
    ("password", "password"),
    ("passwd", "password"),
    ("passphrase", "passphrase"),
    ("secret", "secret"),
    ("token", "token"),
    ("apikey", "api-key"),
    ("privatekey", "private-key"),
    ("secretkey", "secret-key"),
    ("accesskey", "access-key"),
    ("sessionkey", "session-key"),
    ("authorization", "authorization"),
    ("cookie", "cookie"),
    ("credential", "credential"),
];

/// Whether the `token` word at `i` counts tokens (`max_token`,
/// `token_count`) rather than holding one.
fn token_is_count(words: &[String], i: usize) -> bool {
    let before = i.checked_sub(1).and_then(|j| words.get(j));
    let after = words.get(i + 1);
    before.is_some_and(|w| ["max", "min", "num", "total"].contains(&w.as_str()))
        || after.is_some_and(|w| {
            let w = w.strip_suffix('s').unwrap_or(w);
            ["count", "limit", "usage", "type", "budget"].contains(&w)
        })
}

/// Splits a key into lowercase words (see [`secret_key_kind`]).
fn split_words(key: &str) -> Vec<String> {
    let chars: Vec<char> = key.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|j| chars.get(j))
            && prev.is_alphanumeric()
        {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase() && c.is_uppercase() && next_lower)
                || (prev.is_numeric() != c.is_numeric());
            if boundary && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        }
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}
