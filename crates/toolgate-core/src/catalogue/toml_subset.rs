//! A reader for the small part of TOML the shipped packs are written in,
//! several times faster than the full parser: parsing the packs is on the
//! path of every short-lived hook process, and with the `toml` crate it was
//! the largest part of building the catalogue.
//!
//! It reads comments, `[table]` and `[[array]]` headers (dotted), `key =`
//! lines with bare keys, strings (basic, literal, multi-line literal),
//! booleans and arrays of those. Anything else — and anything the full
//! parser would refuse, such as a key or table defined twice — makes it
//! answer `None`, and the caller uses the `toml` crate instead. A unit test
//! checks that it reads every shipped pack, to exactly the value the `toml`
//! crate reads.

use toml::{Table, Value};

/// The document, or `None` when it uses anything this reader does not
/// handle (or is not valid TOML).
pub(super) fn parse(text: &str) -> Option<Table> {
    let mut r = Reader {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    let mut root = Table::new();
    // The path of the table that `key = value` lines go into, and whether
    // its last part is an array of tables (the line goes into its last
    // element).
    let mut current: Vec<String> = Vec::new();
    let mut current_is_array = false;
    // Tables made by a `[header]`, which may not be made again.
    let mut defined: Vec<Vec<String>> = Vec::new();
    loop {
        r.skip_blank_lines()?;
        let Some(c) = r.peek() else {
            return Some(root);
        };
        if c == b'[' {
            let array = r.s.get(r.i + 1) == Some(&b'[');
            r.i += if array { 2 } else { 1 };
            let mut path = Vec::new();
            loop {
                r.skip_spaces();
                path.push(r.bare_key()?.to_string());
                r.skip_spaces();
                match r.next()? {
                    b'.' => continue,
                    b']' => break,
                    _ => return None,
                }
            }
            if array && r.next()? != b']' {
                return None;
            }
            r.end_of_line()?;
            let (parent, last) = path.split_last().map(|(l, p)| (p, l))?;
            let table = descend(&mut root, parent)?;
            if array {
                match table
                    .entry(last.clone())
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    Value::Array(items) => items.push(Value::Table(Table::new())),
                    _ => return None,
                }
            } else {
                if defined.contains(&path) {
                    return None;
                }
                match table
                    .entry(last.clone())
                    .or_insert_with(|| Value::Table(Table::new()))
                {
                    Value::Table(_) => {}
                    _ => return None,
                }
                defined.push(path.clone());
            }
            current = path;
            current_is_array = array;
            continue;
        }
        let key = r.bare_key()?.to_string();
        r.skip_spaces();
        if r.next()? != b'=' {
            return None;
        }
        r.skip_spaces();
        let value = r.value()?;
        r.end_of_line()?;
        let table = if current_is_array {
            let (parent, last) = current.split_last().map(|(l, p)| (p, l))?;
            match descend(&mut root, parent)?.get_mut(last)? {
                Value::Array(items) => match items.last_mut()? {
                    Value::Table(t) => t,
                    _ => return None,
                },
                _ => return None,
            }
        } else {
            descend(&mut root, &current)?
        };
        if table.insert(key, value).is_some() {
            return None;
        }
    }
}

/// The table at `path` below `root`, made (empty) where missing. `None`
/// when the path runs into a value that is not a table (including an array
/// of tables: this reader does not go into those).
fn descend<'t>(root: &'t mut Table, path: &[String]) -> Option<&'t mut Table> {
    let mut table = root;
    for part in path {
        table = match table
            .entry(part.clone())
            .or_insert_with(|| Value::Table(Table::new()))
        {
            Value::Table(t) => t,
            _ => return None,
        };
    }
    Some(table)
}

struct Reader<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    /// Skips a comment (to the end of the line, not the newline).
    fn skip_comment(&mut self) -> Option<()> {
        if self.peek() == Some(b'#') {
            while let Some(c) = self.peek() {
                if c == b'\n' || c == b'\r' {
                    break;
                }
                // Control characters other than tab are not allowed in comments.
                if c < 0x20 && c != b'\t' || c == 0x7f {
                    return None;
                }
                self.i += 1;
            }
        }
        Some(())
    }

    /// Consumes one newline (`\n` or `\r\n`), if there is one.
    fn newline(&mut self) -> Option<bool> {
        match self.peek() {
            Some(b'\n') => {
                self.i += 1;
                Some(true)
            }
            Some(b'\r') => {
                if self.s.get(self.i + 1) != Some(&b'\n') {
                    return None;
                }
                self.i += 2;
                Some(true)
            }
            _ => Some(false),
        }
    }

    /// Skips empty lines and comment lines.
    fn skip_blank_lines(&mut self) -> Option<()> {
        loop {
            self.skip_spaces();
            self.skip_comment()?;
            if !self.newline()? {
                return Some(());
            }
        }
    }

    /// The rest of a line after a header or a value: spaces, maybe a
    /// comment, then a newline or the end.
    fn end_of_line(&mut self) -> Option<()> {
        self.skip_spaces();
        self.skip_comment()?;
        if self.newline()? || self.peek().is_none() {
            Some(())
        } else {
            None
        }
    }

    /// Skips whitespace, newlines and comments inside an array.
    fn skip_in_array(&mut self) -> Option<()> {
        loop {
            self.skip_spaces();
            self.skip_comment()?;
            if !self.newline()? {
                return Some(());
            }
        }
    }

    fn bare_key(&mut self) -> Option<&str> {
        let start = self.i;
        while matches!(
            self.peek(),
            Some(b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-')
        ) {
            self.i += 1;
        }
        (self.i > start).then(|| &self.text[start..self.i])
    }

    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'"' => {
                if self.s[self.i..].starts_with(b"\"\"\"") {
                    return None;
                }
                self.basic_string().map(Value::String)
            }
            b'\'' => self.literal_string().map(Value::String),
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_in_array()?;
                    if self.peek()? == b']' {
                        self.i += 1;
                        return Some(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.skip_in_array()?;
                    match self.next()? {
                        b',' => {}
                        b']' => return Some(Value::Array(items)),
                        _ => return None,
                    }
                }
            }
            b't' if self.s[self.i..].starts_with(b"true") => {
                self.i += 4;
                self.after_word().then_some(Value::Boolean(true))
            }
            b'f' if self.s[self.i..].starts_with(b"false") => {
                self.i += 5;
                self.after_word().then_some(Value::Boolean(false))
            }
            _ => None,
        }
    }

    /// Whether a keyword ended where a value may end.
    fn after_word(&self) -> bool {
        matches!(
            self.peek(),
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b']' | b'#')
        )
    }

    /// `"…"` with the escapes TOML defines; `None` for anything unusual
    /// (a control character, an escape it does not know).
    fn basic_string(&mut self) -> Option<String> {
        self.i += 1;
        let mut out = String::new();
        let mut run = self.i;
        loop {
            let c = self.peek()?;
            match c {
                b'"' => {
                    out.push_str(&self.text[run..self.i]);
                    self.i += 1;
                    return Some(out);
                }
                b'\\' => {
                    out.push_str(&self.text[run..self.i]);
                    self.i += 1;
                    let e = self.next()?;
                    out.push(match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' | b'U' => {
                            let n = if e == b'u' { 4 } else { 8 };
                            let hex = self.text.get(self.i..self.i + n)?;
                            if !hex.bytes().all(|h| h.is_ascii_hexdigit()) {
                                return None;
                            }
                            self.i += n;
                            char::from_u32(u32::from_str_radix(hex, 16).ok()?)?
                        }
                        _ => return None,
                    });
                    run = self.i;
                }
                _ if c < 0x20 && c != b'\t' || c == 0x7f => return None,
                _ => self.i += 1,
            }
        }
    }

    /// `'…'` or `'''…'''` (no escapes; a newline right after the opening
    /// `'''` is not part of the string).
    fn literal_string(&mut self) -> Option<String> {
        if self.s[self.i..].starts_with(b"'''") {
            self.i += 3;
            self.newline()?;
            let start = self.i;
            loop {
                let c = self.peek()?;
                if self.s[self.i..].starts_with(b"'''") {
                    // Quotes right before the closing ones belong to the
                    // string: leave those to the full parser.
                    if self.s.get(self.i + 3) == Some(&b'\'') {
                        return None;
                    }
                    let text = self.text[start..self.i].to_string();
                    self.i += 3;
                    return Some(text);
                }
                // A `\r` (CRLF line ends) is left to the full parser.
                if c < 0x20 && !matches!(c, b'\t' | b'\n') || c == 0x7f {
                    return None;
                }
                self.i += 1;
            }
        }
        self.i += 1;
        let start = self.i;
        loop {
            match self.peek()? {
                b'\'' => {
                    let text = self.text[start..self.i].to_string();
                    self.i += 1;
                    return Some(text);
                }
                c if c < 0x20 && c != b'\t' || c == 0x7f => return None,
                _ => self.i += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    /// Every shipped pack is read, to exactly what the `toml` crate reads.
    #[test]
    fn reads_every_shipped_pack_as_the_toml_crate_does() {
        for (name, text) in super::super::BUILTIN_PACKS {
            let full: toml::Table = toml::from_str(text).expect("shipped packs parse");
            let fast = parse(text).unwrap_or_else(|| {
                panic!(
                    "{name}: the fast reader gave up; extend it (catalogue/toml_subset.rs) or \
                     write the pack with the syntax it reads"
                )
            });
            assert_eq!(fast, full, "{name}");
            // And it deserializes, so the catalogue is built from it.
            toml::Value::Table(fast)
                .try_into::<super::super::model::PackFile>()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    /// On anything else it either reads what the `toml` crate reads or
    /// gives up; it never reads a document the `toml` crate refuses.
    #[test]
    fn agrees_with_the_toml_crate_or_gives_up() {
        let cases = [
            "a = 'x'\nb = \"y\\n\\u00e9\\\"\" # c\n",
            "[t]\nk = ['a', \"b\",\n  # note\n  'c', ]\n",
            "[[r]]\nid = 'a'\n[[r]]\nid = 'b'\nx = true\n",
            "[s]\nk = ['a']\n[s.t]\np = []\n",
            "k = '''\nline\n'''\n",
            "k = '''a''''\n",
            "k = \"\"\"a\"\"\"\n",
            "k = 1\n",
            "k = {a = 'b'}\n",
            "a.b = 'c'\n",
            "'q' = 'x'\n",
            "k = 'a'\nk = 'b'\n",
            "[t]\n[t]\n",
            "[t]\na = 'x'\n[t.a]\n",
            "[[r]]\n[r.s]\n",
            "k = 'a' 'b'\n",
            "k = truex\n",
            "k = \"\\q\"\n",
            "k = 'a\tb'\n",
            "k = \"a\u{1}\"\n",
            "[a]\r\nb = 'c'\r\n",
            "[a]\rb = 'c'\n",
            "k = [\n'a'\n'b']\n",
            "k = ['a',,]\n",
            "[ a . b ]\nc = true\n",
            "",
            "# only a comment",
            "k = 'x' # trailing\n[t] # header comment\n",
        ];
        let mut read = 0;
        for case in cases {
            let full = toml::from_str::<toml::Table>(case).ok();
            if let Some(fast) = parse(case) {
                assert_eq!(Some(fast), full, "{case:?}");
                read += 1;
            }
        }
        assert!(read >= 10, "only {read} cases read");
    }
}
