//! Passwords given on the command lines of common clients (`mysql -pPASS`,
//! `curl -u user:pass`, `sshpass -p PASS`, `htpasswd -b FILE USER PASS`, …),
//! whose flags have no secret-sounding name for [`super::scan`] to see.
//!
//! Text is read as shell words, lexically and without evaluating anything:
//! quotes are removed (and remembered, so a replacement keeps the quoting
//! balanced), and a command line is cut at `;`, `|`, `&`, newlines,
//! parentheses and backticks. Any word naming a known client (`mysql`,
//! `/usr/bin/mysql`, `mysql.exe`) starts its arguments, wherever it stands,
//! so wrapped forms count too (`sudo -u db mysql -p…`, `docker exec c
//! mysql -p…`, `xargs curl -u …`); the text inside a quoted word that holds
//! spaces is read again as a command line of its own (`bash -c "mysql
//! -p…"`, `ssh host 'redis-cli -a …'`). Every spelling a client accepts is
//! covered: attached (`-pPASS`, `-uuser:pass`, in a cluster like `-xwPASS`),
//! `--flag=PASS`, a separate word, quoted. A value that is a `$VARIABLE` or
//! a command substitution names the secret rather than being it and stays.
//!
//! What each client takes is in [`CLIENTS`]; a client is matched by its
//! program name, a family by its prefix ([`FAMILIES`]).

use super::{contains_marker, marker};
use std::borrow::Cow;

/// How deep quoted command lines are read inside one another.
const MAX_NESTING: usize = 4;

/// Redacts the password arguments of known clients in `text`; borrowed when
/// there are none. Idempotent.
///
/// Only the lines that name a client are read as shell words (with the
/// lines a trailing backslash or an open quote carries on to), so a long
/// text that mentions `curl` once costs one line's reading.
pub(super) fn redact(text: &str) -> Cow<'_, str> {
    let mut hits = Vec::new();
    let mut covered = 0;
    for at in client_mentions(text) {
        if at < covered {
            continue;
        }
        let (from, to) = command_window(text, at);
        scan_range(text, from, to, 0, &mut hits);
        covered = to;
    }
    if hits.is_empty() {
        return Cow::Borrowed(text);
    }
    hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for h in hits {
        if h.start < copied {
            // Inside a span already replaced.
            continue;
        }
        out.push_str(&text[copied..h.start]);
        out.push_str(&marker(h.kind));
        if let Some(q) = h.close {
            out.push(q);
        }
        copied = h.end;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Whether `text` names a known client anywhere (tests use it to tell text
/// this pass may change).
#[cfg(test)]
pub(super) fn mentions_client(text: &str) -> bool {
    client_mentions(text).next().is_some()
}

/// Bytes that can be part of a program name as this pass matches it.
fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+')
}

/// Where each run of name bytes that names a known client starts.
fn client_mentions(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            if !name_byte(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && name_byte(bytes[i]) {
                i += 1;
            }
            let run = &bytes[start..i];
            // Cheap refusals before the lookup: names are short and start
            // with a letter or digit.
            if run.len() >= 2 && run.len() <= 24 && run[0].is_ascii_alphanumeric() {
                // Runs are ASCII, so this cannot fail.
                if let Ok(word) = std::str::from_utf8(run)
                    && client(word).is_some()
                {
                    return Some(start);
                }
            }
        }
        None
    })
}

/// Longest stretch read around one mention.
const MAX_WINDOW: usize = 64 * 1024;

/// The command line around byte `at`: from the start of its line to the
/// end of the line, carried on over lines that end in a backslash or
/// leave a quote open (bounded).
fn command_window(text: &str, at: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let from = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let limit = from.saturating_add(MAX_WINDOW).min(bytes.len());
    let mut quote: u8 = 0;
    let mut i = from;
    while i < limit {
        let b = bytes[i];
        match (quote, b) {
            (0, b'\\') | (b'"', b'\\') => {
                i += 2;
                continue;
            }
            (0, b'\'' | b'"') => quote = b,
            (q, _) if q != 0 && b == q => quote = 0,
            (0, b'\n') if i >= at => return (from, i),
            _ => {}
        }
        i += 1;
    }
    (from, limit)
}

/// One stretch of text to replace.
struct Span {
    start: usize,
    end: usize,
    kind: &'static str,
    /// The quote to close after the marker: the replaced text began inside
    /// quotes that it also closed.
    close: Option<char>,
}

/// One shell word, quotes removed: views into one [`Lexed`].
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    /// The word's last byte + 1 in the text.
    end: usize,
    /// The word as the shell would pass it on.
    text: &'a str,
    /// For each byte of `text`, where it came from in the original.
    at: &'a [usize],
    /// For each byte of `text`, the quote it stood in (`'`, `"`) or 0.
    quote: &'a [u8],
}

/// Reads `text[from..to]` as command lines and collects what to replace;
/// quoted stretches holding blanks are read again, one level deeper.
fn scan_range(text: &str, from: usize, to: usize, depth: usize, hits: &mut Vec<Span>) {
    let lexed = lex(text, from, to);
    let mut words = Vec::new();
    for segment in &lexed.segments {
        words.clear();
        words.extend(segment.iter().map(|w| lexed.word(w)));
        for (i, w) in words.iter().enumerate() {
            if let Some(c) = client(w.text) {
                let args = Args {
                    words: &words[i + 1..],
                    base: 0,
                };
                let mut found = Vec::new();
                (c.take)(&args, &mut found);
                for f in found {
                    if let Some(span) = span_of(text, &args.words[f.word], f.from, f.to, f.kind) {
                        hits.push(span);
                    }
                }
            }
        }
    }
    if depth < MAX_NESTING {
        for &(a, b) in &lexed.nested {
            scan_range(text, a, b, depth + 1, hits);
        }
    }
}

/// Where `word.text[from..to]` lies in `text`, if it is a secret rather
/// than empty, already redacted, or a reference to one.
fn span_of(text: &str, word: &Word, from: usize, to: usize, kind: &'static str) -> Option<Span> {
    let value = word.text.get(from..to)?;
    if value.is_empty() || contains_marker(word.text) {
        return None;
    }
    let literal = word.quote.get(from) == Some(&b'\'');
    if (value.starts_with('$') && !literal) || value.starts_with('`') {
        return None;
    }
    let start = *word.at.get(from)?;
    if to < word.text.len() {
        let end = *word.at.get(to)?;
        // The value ends inside the word (`user:pass@host`): replace just
        // it, unless quotes or escapes lie within, whose balance the marker
        // would upset; then it runs on to the word's end.
        if !text.get(start..end)?.contains(['\'', '"', '\\']) {
            return Some(Span {
                start,
                end,
                kind,
                close: None,
            });
        }
    }
    Some(Span {
        start,
        end: word.end,
        kind,
        close: match word.quote.get(from) {
            Some(b'\'') => Some('\''),
            Some(b'"') => Some('"'),
            _ => None,
        },
    })
}

/// A stretch of text read as words: every word's bytes in one buffer.
struct Lexed {
    /// The words' bytes, one after another.
    text: String,
    /// For each byte of `text`, where it came from in the original.
    at: Vec<usize>,
    /// For each byte of `text`, the quote it stood in (`'`, `"`) or 0.
    quote: Vec<u8>,
    /// Command lines: for each word, its range in `text` and its end in the
    /// original.
    segments: Vec<Vec<(usize, usize, usize)>>,
    /// Quoted stretches (without their quotes) that hold a blank: a command
    /// line given to `sh -c`, `ssh`, `su -c`, ….
    nested: Vec<(usize, usize)>,
}

impl Lexed {
    fn word(&self, &(a, b, end): &(usize, usize, usize)) -> Word<'_> {
        Word {
            end,
            text: self.text.get(a..b).unwrap_or(""),
            at: self.at.get(a..b).unwrap_or(&[]),
            quote: self.quote.get(a..b).unwrap_or(&[]),
        }
    }
}

/// Splits `text[from..to]` into command lines of words.
fn lex(text: &str, from: usize, to: usize) -> Lexed {
    let bytes = text.as_bytes();
    let mut buf: Vec<u8> = Vec::with_capacity(to - from);
    let mut at: Vec<usize> = Vec::with_capacity(to - from);
    let mut quote: Vec<u8> = Vec::with_capacity(to - from);
    let mut segments: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new()];
    let mut nested = Vec::new();
    // The current word: where it starts in `buf`, and its end in the text.
    let mut cur: Option<(usize, usize)> = None;
    let mut push = |cur: &mut Option<(usize, usize)>, b: u8, pos: usize, q: u8| {
        let start = cur.map_or(buf.len(), |(s, _)| s);
        buf.push(b);
        at.push(pos);
        quote.push(q);
        *cur = Some((start, pos + 1));
        buf.len()
    };
    let mut words_end = 0;
    let finish = |cur: &mut Option<(usize, usize)>, segments: &mut Vec<Vec<_>>, len: usize| {
        if let Some((start, end)) = cur.take()
            && let Some(seg) = segments.last_mut()
        {
            seg.push((start, len, end));
        }
    };
    let mut i = from;
    while i < to {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\r' | b'<' | b'>' => {
                finish(&mut cur, &mut segments, words_end);
                i += 1;
            }
            b'\n' | b';' | b'|' | b'&' | b'(' | b')' | b'`' => {
                finish(&mut cur, &mut segments, words_end);
                segments.push(Vec::new());
                i += 1;
            }
            b'\\' => {
                match bytes.get(i + 1) {
                    Some(b'\n') => {}
                    Some(&next) if i + 1 < to => words_end = push(&mut cur, next, i + 1, 0),
                    _ => {}
                }
                i += 2;
            }
            b'\'' | b'"' => {
                let open = i;
                if cur.is_none() {
                    cur = Some((words_end, open));
                }
                let mut j = i + 1;
                let mut blank = false;
                while j < to && bytes[j] != b {
                    if b == b'"'
                        && bytes[j] == b'\\'
                        && j + 1 < to
                        && matches!(bytes[j + 1], b'"' | b'\\' | b'$' | b'`')
                    {
                        words_end = push(&mut cur, bytes[j + 1], j + 1, b);
                        j += 2;
                        continue;
                    }
                    blank |= bytes[j].is_ascii_whitespace();
                    words_end = push(&mut cur, bytes[j], j, b);
                    j += 1;
                }
                if blank {
                    nested.push((open + 1, j.min(to)));
                }
                // The closing quote belongs to the word.
                if let Some((_, end)) = cur.as_mut() {
                    *end = (j + 1).min(to).max(*end);
                }
                i = j + 1;
            }
            _ => {
                words_end = push(&mut cur, b, i, 0);
                i += 1;
            }
        }
    }
    finish(&mut cur, &mut segments, words_end);
    // Bytes of a character are copied in order and only ASCII bytes are
    // left out, so the buffer is UTF-8; should it somehow not be, nothing
    // is read.
    let text = String::from_utf8(buf).unwrap_or_default();
    if text.len() != at.len() {
        segments.clear();
    }
    Lexed {
        text,
        at,
        quote,
        segments,
        nested,
    }
}

/// A found value: `words[word].text[from..to]` is the secret.
struct Found {
    word: usize,
    from: usize,
    to: usize,
    kind: &'static str,
}

/// The arguments after a client's name, to the end of its command line
/// (or a later part of them: `base` is where they start in the whole).
struct Args<'a> {
    words: &'a [Word<'a>],
    base: usize,
}

/// How to read a flag's value.
#[derive(Clone, Copy)]
enum Val {
    /// All of it.
    Whole,
    /// What follows the first `sep` (`user:pass`, `user%pass`, `user,pass`);
    /// nothing without one.
    After(char),
    /// OpenSSL's pass phrase argument: `pass:SECRET` (others, `env:`,
    /// `file:`, `fd:`, `stdin`, name where it is).
    OpenSsl,
    /// Oracle's `user/pass[@db]`.
    SlashPass,
    /// `[domain/]user:pass@host` (impacket).
    ColonAt,
    /// `KEY=VALUE`: the value.
    Assignment,
}

impl Val {
    /// The byte range of the secret in `v`, if it has one.
    fn range(self, v: &str) -> Option<(usize, usize)> {
        let r = match self {
            Val::Whole => (0, v.len()),
            Val::After(sep) => (v.find(sep)? + sep.len_utf8(), v.len()),
            Val::OpenSsl => (v.strip_prefix("pass:").map(|_| 5)?, v.len()),
            Val::SlashPass => {
                if v.starts_with(['/', '@', '-']) {
                    return None;
                }
                let slash = v.find('/')?;
                let rest = &v[slash + 1..];
                let end = rest.find(['@', ' ', '\t']).unwrap_or(rest.len());
                (slash + 1, slash + 1 + end)
            }
            Val::ColonAt => {
                let at = v.rfind('@')?;
                let colon = v[..at].find(':')?;
                (colon + 1, at)
            }
            Val::Assignment => (v.find('=')? + 1, v.len()),
        };
        (r.0 < r.1).then_some(r)
    }
}

impl Args<'_> {
    fn text(&self, i: usize) -> &str {
        self.words.get(i).map_or("", |w| w.text)
    }

    fn push(&self, out: &mut Vec<Found>, word: usize, offset: usize, val: Val, kind: &'static str) {
        let Some(w) = self.words.get(word) else {
            return;
        };
        let Some(v) = w.text.get(offset..) else {
            return;
        };
        if let Some((a, b)) = val.range(v) {
            out.push(Found {
                word: self.base + word,
                from: offset + a,
                to: offset + b,
                kind,
            });
        }
    }

    /// The arguments after the first word equal to one of `words` (a
    /// subcommand such as `login`), or `None`.
    fn after(&self, words: &[&str]) -> Option<Args<'_>> {
        let i = self.words.iter().position(|w| words.contains(&w.text))?;
        Some(Args {
            words: &self.words[i + 1..],
            base: self.base + i + 1,
        })
    }

    /// The short option `flag`: attached (`-pX`, `-p=X`, or after other
    /// options in a cluster, `-xpX`) when `glued`, in the next word when
    /// `next`. In a cluster, options listed in `with_arg` take the rest of
    /// the word as their own value; `None` means clusters are not read
    /// (only a word starting `-p` counts).
    fn short(
        &self,
        flag: char,
        glued: bool,
        next: bool,
        with_arg: Option<&str>,
        val: Val,
        out: &mut Vec<Found>,
    ) {
        self.short_kind(flag, glued, next, with_arg, val, "password", out);
    }

    #[allow(clippy::too_many_arguments)]
    fn short_kind(
        &self,
        flag: char,
        glued: bool,
        next: bool,
        with_arg: Option<&str>,
        val: Val,
        kind: &'static str,
        out: &mut Vec<Found>,
    ) {
        let mut i = 0;
        while i < self.words.len() {
            let t = self.text(i);
            i += 1;
            if t == "--" {
                break;
            }
            let Some(cluster) = t.strip_prefix('-') else {
                continue;
            };
            if cluster.starts_with('-') {
                continue;
            }
            for (k, c) in cluster.char_indices() {
                if c == flag {
                    let rest = 1 + k + c.len_utf8();
                    if rest < t.len() {
                        if glued {
                            let skip = usize::from(t[rest..].starts_with('='));
                            self.push(out, i - 1, rest + skip, val, kind);
                        }
                    } else if next && i < self.words.len() {
                        self.push(out, i, 0, val, kind);
                        i += 1;
                    }
                    break;
                }
                match with_arg {
                    Some(takes) if !takes.contains(c) && c.is_ascii_alphanumeric() => {}
                    _ => break,
                }
            }
        }
    }

    /// Long options (`--password`, `-passin`): `--name=X` or `--name X`.
    fn long(&self, names: &[&str], val: Val, kind: &'static str, out: &mut Vec<Found>) {
        let mut i = 0;
        while i < self.words.len() {
            let t = self.text(i);
            i += 1;
            if t == "--" {
                break;
            }
            for n in names {
                if t == *n {
                    if i < self.words.len() {
                        self.push(out, i, 0, val, kind);
                        i += 1;
                    }
                } else if t.len() > n.len() && t.starts_with(n) && t.as_bytes()[n.len()] == b'=' {
                    self.push(out, i - 1, n.len() + 1, val, kind);
                }
            }
        }
    }

    /// Words starting with one of `prefixes` (`/p:`, `userid=`): the rest.
    fn prefixed(&self, prefixes: &[&str], val: Val, out: &mut Vec<Found>) {
        for i in 0..self.words.len() {
            let t = self.text(i);
            if let Some(p) = prefixes.iter().find(|p| {
                t.len() > p.len() && t.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p))
            }) {
                self.push(out, i, p.len(), val, "password");
            }
        }
    }

    /// The `n`th word (from 1) after a word equal to one of `keywords`.
    fn after_word(&self, keywords: &[&str], n: usize, val: Val, out: &mut Vec<Found>) {
        for i in 0..self.words.len() {
            if keywords.contains(&self.text(i)) && i + n < self.words.len() {
                self.push(out, i + n, 0, val, "password");
            }
        }
    }

    /// Operands (words not starting with `-`), skipping the value of each
    /// short option in `with_arg` given as a separate word; their indices.
    fn operands(&self, with_arg: &str) -> Vec<usize> {
        let mut ops = Vec::new();
        let mut i = 0;
        let mut options_done = false;
        while i < self.words.len() {
            let t = self.text(i);
            if !options_done && t == "--" {
                options_done = true;
            } else if !options_done && t.len() > 1 && t.starts_with('-') {
                let last = t.chars().last().unwrap_or('-');
                if !t.starts_with("--") && t.len() == 2 && with_arg.contains(last) {
                    i += 1;
                }
            } else {
                ops.push(i);
            }
            i += 1;
        }
        ops
    }

    /// Whether a short option cluster among the arguments holds `flag`.
    fn has_short(&self, flag: char) -> bool {
        self.words.iter().any(|w| {
            let t = w.text;
            t.len() > 1 && t.starts_with('-') && !t.starts_with("--") && t[1..].contains(flag)
        })
    }
}

/// A client: what its arguments may hold.
struct Client {
    take: fn(&Args, &mut Vec<Found>),
}

/// The client a word names (`/usr/bin/mysql`, `mysql.exe` → mysql).
fn client(word: &str) -> Option<&'static Client> {
    let name = match word.rfind(['/', '\\']) {
        Some(i) => &word[i + 1..],
        None => word,
    };
    let name = name
        .strip_suffix(".exe")
        .or_else(|| name.strip_suffix(".EXE"))
        .unwrap_or(name);
    let first = *name.as_bytes().first()?;
    if name.len() < 2 || name.len() > 24 {
        return None;
    }
    // Most words are refused here, on their first byte: the lookup runs
    // on every word of every text redacted.
    let candidates = BY_FIRST_BYTE.get(usize::from(first))?;
    candidates.iter().find_map(|&(n, prefix, c)| {
        let hit = if prefix {
            name.starts_with(n)
        } else {
            name == n
        };
        hit.then_some(c)
    })
}

/// A name to match, whether it is a family's prefix, and its client.
type Entry = (&'static str, bool, &'static Client);

/// [`CLIENTS`] and [`FAMILIES`] by the first byte of their name (whole
/// names first, so `ldappasswd` is not read as the `ldap` family).
static BY_FIRST_BYTE: std::sync::LazyLock<Vec<Vec<Entry>>> = std::sync::LazyLock::new(|| {
    let mut table: Vec<Vec<Entry>> = vec![Vec::new(); 128];
    let all = CLIENTS
        .iter()
        .map(|(n, c)| (*n, false, c))
        .chain(FAMILIES.iter().map(|(n, c)| (*n, true, c)));
    for (name, prefix, c) in all {
        if let Some(slot) = name
            .as_bytes()
            .first()
            .and_then(|&b| table.get_mut(usize::from(b)))
        {
            slot.push((name, prefix, c));
        }
    }
    table
});

/// Clients matched by the start of their name.
static FAMILIES: &[(&str, Client)] = &[
    // mysql, mysqldump, mysqladmin, mysqlsh, …; mariadb, mariadb-dump, …
    ("mysql", MYSQL),
    ("mariadb", MYSQL),
    // ldapsearch, ldapmodify, ldapadd, ldapdelete, ldappasswd, …
    ("ldap", LDAP),
    // mongosh, mongo, mongodump, mongorestore, mongoexport, …
    ("mongo", DASH_P),
    // snmpwalk, snmpget, snmpset, snmpbulkwalk, …
    ("snmp", SNMP),
    // impacket-psexec, impacket-secretsdump, …
    ("impacket-", IMPACKET),
];

/// Clients matched by their whole name, sorted by name (a test checks, so
/// that each appears once).
static CLIENTS: &[(&str, Client)] = &[
    ("7z", SEVEN_ZIP),
    ("7za", SEVEN_ZIP),
    ("7zr", SEVEN_ZIP),
    ("7zz", SEVEN_ZIP),
    ("atexec.py", IMPACKET),
    ("az", LOGIN_P),
    ("bcp", SQLCMD),
    ("buildah", LOGIN_P),
    ("cf", LOGIN_P),
    ("cqlsh", DASH_P),
    ("crackmapexec", DASH_P),
    ("crane", LOGIN_P),
    ("curl", CURL),
    ("dcomexec.py", IMPACKET),
    ("dgmgrl", ORACLE),
    ("docker", LOGIN_P),
    ("doctl", DOCTL),
    ("enum4linux", DASH_P),
    ("evil-winrm", DASH_P),
    ("expdp", ORACLE),
    ("gh", GH),
    ("helm", LOGIN_P),
    ("htpasswd", HTPASSWD),
    ("http", HTTPIE),
    ("https", HTTPIE),
    ("hydra", DASH_P),
    ("impdp", ORACLE),
    ("ipmitool", IPMITOOL),
    ("isql", ISQL),
    ("jarsigner", KEYTOOL),
    ("keydb-cli", REDIS),
    ("keytool", KEYTOOL),
    ("kubectl", KUBECTL),
    ("ldappasswd", LDAPPASSWD),
    ("lftp", LFTP),
    ("mc", MINIO),
    ("medusa", DASH_P),
    ("mosquitto_pub", MOSQUITTO),
    ("mosquitto_rr", MOSQUITTO),
    ("mosquitto_sub", MOSQUITTO),
    ("mssqlclient.py", IMPACKET),
    ("mycli", DASH_P),
    ("ncftp", DASH_P),
    ("ncftpget", DASH_P),
    ("ncftpput", DASH_P),
    ("nerdctl", LOGIN_P),
    ("net", SAMBA),
    ("netexec", DASH_P),
    ("nmcli", NMCLI),
    ("nxc", DASH_P),
    ("oc", OPENSHIFT),
    ("openssl", OPENSSL),
    ("oras", LOGIN_P),
    ("osql", SQLCMD),
    ("paexec", DASH_P),
    ("plink", PUTTY),
    ("podman", LOGIN_P),
    ("pscp", PUTTY),
    ("psexec", DASH_P),
    ("psexec.py", IMPACKET),
    ("psftp", PUTTY),
    ("rabbitmqctl", RABBITMQ),
    ("rar", RAR),
    ("rclone", RCLONE),
    ("rdesktop", DASH_P),
    ("redis-cli", REDIS),
    ("regctl", LOGIN_P),
    ("rman", ORACLE),
    ("rpcclient", SAMBA),
    ("sdl-freerdp", FREERDP),
    ("secretsdump.py", IMPACKET),
    ("skopeo", LOGIN_P),
    ("smbcacls", SAMBA),
    ("smbclient", SMBCLIENT),
    ("smbexec.py", IMPACKET),
    ("smbget", SAMBA),
    ("smbmap", DASH_P),
    ("smbtree", SAMBA),
    ("sqlcmd", SQLCMD),
    ("sqlldr", ORACLE),
    ("sqlplus", ORACLE),
    ("sqsh", SQLCMD),
    ("ssh-keygen", SSH_KEYGEN),
    ("sshpass", SSHPASS),
    ("tsql", SQLCMD),
    ("unrar", RAR),
    ("unzip", ZIP),
    ("useradd", USERMOD),
    ("usermod", USERMOD),
    ("valkey-cli", REDIS),
    ("vault", VAULT),
    ("wget", WGET),
    ("winexe", SAMBA),
    ("wlfreerdp", FREERDP),
    ("wmiexec.py", IMPACKET),
    ("wpa_passphrase", WPA_PASSPHRASE),
    ("xfreerdp", FREERDP),
    ("xh", HTTPIE),
    ("xhs", HTTPIE),
    ("zip", ZIP),
    ("zipcloak", ZIP),
];

/// `-pPASS` only: a separate `-p` asks at a prompt (the next word is the
/// database). `mysqladmin … password NEW` sets one.
const MYSQL: Client = Client {
    take: |a, out| {
        a.short('p', true, false, Some("DehPSuTrwWOx#"), Val::Whole, out);
        a.after_word(&["password"], 1, Val::Whole, out);
    },
};

/// `-p PASS` or `-pPASS`.
const DASH_P: Client = Client {
    take: |a, out| a.short('p', true, true, None, Val::Whole, out),
};

const SSHPASS: Client = DASH_P;

/// `-p PASS` after `login` (`docker login -p`; elsewhere `-p` is a port).
const LOGIN_P: Client = Client {
    take: |a, out| {
        if let Some(login) = a.after(&["login"]) {
            login.short('p', true, true, None, Val::Whole, out);
        }
    },
};

const OPENSHIFT: Client = Client {
    take: |a, out| {
        LOGIN_P.take_into(a, out);
        KUBECTL.take_into(a, out);
    },
};

/// `kubectl create secret … --from-literal=KEY=VALUE`: every value.
const KUBECTL: Client = Client {
    take: |a, out| {
        if a.after(&["secret"]).is_some() {
            a.long(&["--from-literal"], Val::Assignment, "secret", out);
        }
    },
};

/// `gh secret set NAME --body VALUE` / `-b VALUE`.
const GH: Client = Client {
    take: |a, out| {
        if let Some(s) = a.after(&["secret"]) {
            s.short_kind('b', true, true, None, Val::Whole, "secret", out);
            s.long(&["--body"], Val::Whole, "secret", out);
        }
    },
};

/// `vault login TOKEN` (not `vault login -method=… username=…`).
const VAULT: Client = Client {
    take: |a, out| {
        if let Some(login) = a.after(&["login"])
            && !login.words.iter().any(|w| w.text.starts_with("-method"))
        {
            for i in login.operands("") {
                if !login.text(i).contains('=') {
                    login.push(out, i, 0, Val::Whole, "token");
                }
            }
        }
    },
};

/// `doctl auth init -t TOKEN`.
const DOCTL: Client = Client {
    take: |a, out| {
        if let Some(auth) = a.after(&["auth"]) {
            auth.short_kind('t', true, true, None, Val::Whole, "token", out);
        }
    },
};

/// `-a PASS`, `-aPASS`.
const REDIS: Client = Client {
    take: |a, out| a.short('a', true, true, None, Val::Whole, out),
};

/// The short options of the OpenLDAP clients that take a value.
const LDAP_WITH_ARG: Option<&str> = Some("abDdeEfHhlOoPpRsSTUwXyYz");

/// `-w PASS`, also in a cluster (`-xwPASS`).
const LDAP: Client = Client {
    take: |a, out| a.short('w', true, true, LDAP_WITH_ARG, Val::Whole, out),
};

/// `ldappasswd` also takes the old (`-a`) and new (`-s`) passwords.
const LDAPPASSWD: Client = Client {
    take: |a, out| {
        for flag in ['w', 'a', 's'] {
            a.short(flag, true, true, LDAP_WITH_ARG, Val::Whole, out);
        }
    },
};

/// `-P PASS`.
const SQLCMD: Client = Client {
    take: |a, out| a.short('P', true, true, None, Val::Whole, out),
};

/// `isql DSN USER PASS`.
const ISQL: Client = Client {
    take: |a, out| {
        if let Some(&i) = a.operands("").get(2) {
            a.push(out, i, 0, Val::Whole, "password");
        }
    },
};

/// `-U user%pass`, `--user=user%pass`.
const SAMBA: Client = Client {
    take: |a, out| {
        a.short('U', true, true, None, Val::After('%'), out);
        a.long(&["--user"], Val::After('%'), "password", out);
    },
};

/// smbclient also takes the password as the word after the service.
const SMBCLIENT: Client = Client {
    take: |a, out| {
        SAMBA.take_into(a, out);
        let ops = a.operands("OsRlTDcUWnIpmtAdLMbi");
        if let [service, password, ..] = ops[..]
            && (a.text(service).starts_with("//") || a.text(service).starts_with("\\\\"))
        {
            a.push(out, password, 0, Val::Whole, "password");
        }
    },
};

/// `-u user:pass`, `--user`, `-U`/`--proxy-user`, `-E cert:pass`,
/// `--oauth2-bearer TOKEN`.
const CURL: Client = Client {
    take: |a, out| {
        let with_arg = Some("AbcCdDeEFHKmoPQrtTuUwxXYyz");
        for flag in ['u', 'U', 'E'] {
            a.short(flag, true, true, with_arg, Val::After(':'), out);
        }
        a.long(
            &["--user", "--proxy-user", "--cert", "--proxy-cert"],
            Val::After(':'),
            "password",
            out,
        );
        a.long(&["--oauth2-bearer"], Val::Whole, "token", out);
    },
};

/// `-a user:pass`, `--auth user:pass`.
const HTTPIE: Client = Client {
    take: |a, out| {
        a.short('a', true, true, None, Val::After(':'), out);
        a.long(&["--auth"], Val::After(':'), "password", out);
    },
};

/// wget's `--password`, `--http-password`, … (named like secrets, so
/// redacted anyway) and `--user=u:p`-free: its odd spellings.
const WGET: Client = Client {
    take: |a, out| {
        a.long(
            &[
                "--password",
                "--http-password",
                "--http-passwd",
                "--ftp-password",
                "--ftp-passwd",
                "--proxy-password",
                "--proxy-passwd",
            ],
            Val::Whole,
            "password",
            out,
        );
    },
};

/// `-u user,pass`.
const LFTP: Client = Client {
    take: |a, out| {
        a.short('u', true, true, None, Val::After(','), out);
        a.long(&["--user"], Val::After(','), "password", out);
    },
};

/// `htpasswd -b FILE USER PASS`, `htpasswd -nb USER PASS`.
const HTPASSWD: Client = Client {
    take: |a, out| {
        // Options come first; htpasswd reads no option after an operand.
        let ops = a.operands("Cr");
        let leading = Args {
            words: &a.words[..ops.first().copied().unwrap_or(a.words.len())],
            base: a.base,
        };
        if !leading.has_short('b') {
            return;
        }
        let nth = if leading.has_short('n') { 1 } else { 2 };
        if let Some(&i) = ops.get(nth) {
            a.push(out, i, 0, Val::Whole, "password");
        }
    },
};

/// `-k PASS`, `-K HEXKEY`, `-pass pass:X`, `-passin pass:X`, …
const OPENSSL: Client = Client {
    take: |a, out| {
        a.long(&["-k"], Val::Whole, "password", out);
        a.long(&["-K"], Val::Whole, "key", out);
        a.long(
            &[
                "-pass",
                "-passin",
                "-passout",
                "-password",
                "-kpass",
                "-macpass",
                "--pass",
                "--passin",
                "--passout",
            ],
            Val::OpenSsl,
            "password",
            out,
        );
    },
};

/// `-A AUTHPASS`, `-X PRIVPASS`, `-c COMMUNITY`.
const SNMP: Client = Client {
    take: |a, out| {
        for flag in ['A', 'X', 'c'] {
            a.short(flag, true, true, None, Val::Whole, out);
        }
    },
};

/// `[domain/]user:pass@target`, or `-hashes LM:NT`.
const IMPACKET: Client = Client {
    take: |a, out| {
        for i in a.operands("") {
            a.push(out, i, 0, Val::ColonAt, "password");
        }
        a.long(&["-hashes"], Val::Whole, "password", out);
    },
};

/// `user/pass@db`, `userid=user/pass`.
const ORACLE: Client = Client {
    take: |a, out| {
        for i in a.operands("") {
            a.push(out, i, 0, Val::SlashPass, "password");
        }
        a.prefixed(&["userid="], Val::SlashPass, out);
        a.long(&["-L"], Val::SlashPass, "password", out);
    },
};

/// `/p:PASS`, `/password:PASS`, `/gp:PASS`, `/pth:HASH`.
const FREERDP: Client = Client {
    take: |a, out| {
        a.prefixed(
            &["/p:", "/password:", "/gp:", "/pth:", "-p:"],
            Val::Whole,
            out,
        )
    },
};

/// `-pw PASS`.
const PUTTY: Client = Client {
    take: |a, out| a.long(&["-pw"], Val::Whole, "password", out),
};

/// `-storepass X`, `-keypass X`, ….
const KEYTOOL: Client = Client {
    take: |a, out| {
        a.long(
            &[
                "-storepass",
                "-keypass",
                "-srcstorepass",
                "-deststorepass",
                "-srckeypass",
                "-destkeypass",
                "-new",
            ],
            Val::Whole,
            "password",
            out,
        );
    },
};

/// `-N NEWPASS`, `-P OLDPASS`.
const SSH_KEYGEN: Client = Client {
    take: |a, out| {
        a.short('N', true, true, None, Val::Whole, out);
        a.short('P', true, true, None, Val::Whole, out);
    },
};

/// `zip -P PASS`, `unzip -PPASS`.
const ZIP: Client = Client {
    take: |a, out| a.short('P', true, true, None, Val::Whole, out),
};

/// `7z x -pPASS` (attached only).
const SEVEN_ZIP: Client = Client {
    take: |a, out| a.short('p', true, false, None, Val::Whole, out),
};

/// `rar a -pPASS`, `-hpPASS`.
const RAR: Client = Client {
    take: |a, out| {
        a.short('p', true, false, None, Val::Whole, out);
        a.prefixed(&["-hp"], Val::Whole, out);
    },
};

/// `-P PASS`.
const MOSQUITTO: Client = Client {
    take: |a, out| a.short('P', true, true, None, Val::Whole, out),
};

/// `-P PASS`.
const IPMITOOL: Client = Client {
    take: |a, out| a.short('P', true, true, None, Val::Whole, out),
};

/// `rabbitmqctl add_user USER PASS`, `change_password USER PASS`.
const RABBITMQ: Client = Client {
    take: |a, out| {
        a.after_word(
            &["add_user", "change_password", "authenticate_user"],
            2,
            Val::Whole,
            out,
        );
    },
};

/// `nmcli … password PASS`, `wifi-sec.psk PASS`.
const NMCLI: Client = Client {
    take: |a, out| {
        a.after_word(
            &[
                "password",
                "wifi-sec.psk",
                "802-11-wireless-security.psk",
                "802-1x.password",
                "wifi-sec.wep-key0",
            ],
            1,
            Val::Whole,
            out,
        );
    },
};

/// `wpa_passphrase SSID PASS`.
const WPA_PASSPHRASE: Client = Client {
    take: |a, out| {
        if let Some(&i) = a.operands("").get(1) {
            a.push(out, i, 0, Val::Whole, "password");
        }
    },
};

/// `mc alias set NAME URL ACCESS SECRET` (and the older `config host add`).
const MINIO: Client = Client {
    take: |a, out| {
        for sub in [&["set"][..], &["add"][..]] {
            if let Some(rest) = a.after(sub)
                && let Some(&i) = rest.operands("").get(3)
            {
                rest.push(out, i, 0, Val::Whole, "secret-key");
            }
        }
    },
};

/// rclone's `--<backend>-pass X` and `--<backend>-password X`.
const RCLONE: Client = Client {
    take: |a, out| {
        let mut i = 0;
        while i < a.words.len() {
            let t = a.text(i);
            i += 1;
            let (name, glued) = match t.split_once('=') {
                Some((n, _)) => (n, true),
                None => (t, false),
            };
            if name.starts_with("--") && (name.ends_with("-pass") || name.ends_with("-password")) {
                if glued {
                    a.push(out, i - 1, name.len() + 1, Val::Whole, "password");
                } else if i < a.words.len() {
                    a.push(out, i, 0, Val::Whole, "password");
                    i += 1;
                }
            }
        }
    },
};

/// `useradd -p HASH`, `usermod -p HASH`.
const USERMOD: Client = Client {
    take: |a, out| a.short('p', true, true, None, Val::Whole, out),
};

impl Client {
    fn take_into(&self, a: &Args, out: &mut Vec<Found>) {
        (self.take)(a, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_sorted_for_binary_search() {
        for pair in CLIENTS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
    }

    #[test]
    fn words_lose_their_quotes_and_keep_their_places() {
        let text = r#"mysql -p"a b" 'c'd e\ f"#;
        let lexed = lex(text, 0, text.len());
        let words: Vec<&str> = lexed.segments[0]
            .iter()
            .map(|w| lexed.word(w).text)
            .collect();
        assert_eq!(words, ["mysql", "-pa b", "cd", "e f"]);
        let w = lexed.word(&lexed.segments[0][1]);
        let nested = lexed.nested.clone();
        assert_eq!(&text[w.at[2]..w.end], "a b\"");
        assert_eq!(nested, [(9, 12)]);
    }
}
