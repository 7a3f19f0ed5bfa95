//! A JSON5 reader for the configuration files doctor inspects (OpenClaw's
//! `openclaw.json`, Gemini's settings and trusted folders, which allow
//! comments). No JSON5 crate is in the build, and doctor only reads, so this
//! is a small recursive-descent parser into `serde_json::Value`.
//!
//! JSON5 over JSON: `//` and `/* */` comments, trailing commas, unquoted
//! (identifier) keys, single-quoted strings, escaped line breaks in strings,
//! `\x` and `\0` escapes, hexadecimal numbers, a leading `+`, leading or
//! trailing decimal points, `Infinity` and `NaN` (which JSON cannot hold:
//! they read as `null`).

use serde_json::{Map, Number, Value};

/// Deepest nesting read; deeper input is refused rather than overflowing
/// the stack.
const MAX_DEPTH: usize = 128;

/// Why a text is not JSON5, and where (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Json5Error {
    /// The line the problem is on.
    pub line: usize,
    /// The column (in characters) on that line.
    pub column: usize,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for Json5Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

/// Parses one JSON5 value (the whole text).
pub(super) fn parse(text: &str) -> Result<Value, Json5Error> {
    let mut p = Parser { src: text, i: 0 };
    p.skip_blank()?;
    let v = p.value(0)?;
    p.skip_blank()?;
    if p.i < p.src.len() {
        return Err(p.error("unexpected text after the value"));
    }
    Ok(v)
}

/// `text` with its `//` and `/* */` comments (outside strings) blanked
/// out, line breaks kept: what Gemini CLI does before `JSON.parse`.
pub(super) fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                quote = Some(c);
                out.push(c);
            }
            ('/', Some('/')) => {
                while let Some(&n) = chars.peek() {
                    if n == '\n' {
                        break;
                    }
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                    }
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

struct Parser<'a> {
    src: &'a str,
    /// Byte offset of the next character.
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.src[self.i..].chars().next()
    }

    fn peek2(&self) -> Option<char> {
        self.src[self.i..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.i += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn error(&self, message: impl Into<String>) -> Json5Error {
        let before = &self.src[..self.i];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        Json5Error {
            line,
            column,
            message: message.into(),
        }
    }

    /// Skips white space and comments.
    fn skip_blank(&mut self) -> Result<(), Json5Error> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() || c == '\u{FEFF}' => {
                    self.bump();
                }
                Some('/') if self.peek2() == Some('/') => {
                    while let Some(c) = self.bump() {
                        if matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}') {
                            break;
                        }
                    }
                }
                Some('/') if self.peek2() == Some('*') => {
                    let start = self.i;
                    self.i += 2;
                    match self.src[self.i..].find("*/") {
                        Some(end) => self.i += end + 2,
                        None => {
                            self.i = start;
                            return Err(self.error("a /* comment is never closed"));
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, Json5Error> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        match self.peek() {
            None => Err(self.error("the text ends where a value should be")),
            Some('{') => self.object(depth),
            Some('[') => self.array(depth),
            Some(q @ ('"' | '\'')) => {
                self.bump();
                self.string(q).map(Value::String)
            }
            Some(c) if c.is_ascii_digit() || matches!(c, '+' | '-' | '.') => self.number(),
            Some(c) if is_id_start(c) => {
                let start = self.i;
                let word = self.identifier()?;
                match word.as_str() {
                    "true" => Ok(Value::Bool(true)),
                    "false" => Ok(Value::Bool(false)),
                    "null" | "Infinity" | "NaN" => Ok(Value::Null),
                    _ => {
                        self.i = start;
                        Err(self.error(format!("unexpected word `{word}` where a value should be")))
                    }
                }
            }
            Some(c) => Err(self.error(format!("unexpected `{c}` where a value should be"))),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, Json5Error> {
        self.bump(); // {
        let mut map = Map::new();
        loop {
            self.skip_blank()?;
            if self.eat('}') {
                return Ok(Value::Object(map));
            }
            let key = match self.peek() {
                Some(q @ ('"' | '\'')) => {
                    self.bump();
                    self.string(q)?
                }
                Some(c) if is_id_start(c) || c == '\\' => self.identifier()?,
                Some(c) => {
                    return Err(self.error(format!("unexpected `{c}` where a key should be")));
                }
                None => return Err(self.error("the text ends inside an object")),
            };
            self.skip_blank()?;
            if !self.eat(':') {
                return Err(self.error(format!("expected `:` after the key `{key}`")));
            }
            self.skip_blank()?;
            let v = self.value(depth + 1)?;
            map.insert(key, v);
            self.skip_blank()?;
            if self.eat(',') {
                continue;
            }
            if self.eat('}') {
                return Ok(Value::Object(map));
            }
            return Err(self.error("expected `,` or `}` in an object"));
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, Json5Error> {
        self.bump(); // [
        let mut items = Vec::new();
        loop {
            self.skip_blank()?;
            if self.eat(']') {
                return Ok(Value::Array(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip_blank()?;
            if self.eat(',') {
                continue;
            }
            if self.eat(']') {
                return Ok(Value::Array(items));
            }
            return Err(self.error("expected `,` or `]` in an array"));
        }
    }

    /// An identifier key or word; `\uXXXX` escapes allowed, as in JSON5.
    fn identifier(&mut self) -> Result<String, Json5Error> {
        let mut out = String::new();
        loop {
            match self.peek() {
                Some('\\') => {
                    self.bump();
                    if !self.eat('u') {
                        return Err(self.error("only \\u escapes are allowed in a key"));
                    }
                    out.push(self.unicode_escape()?);
                }
                Some(c)
                    if (out.is_empty() && is_id_start(c)) || (!out.is_empty() && is_id_part(c)) =>
                {
                    out.push(c);
                    self.bump();
                }
                _ => break,
            }
        }
        if out.is_empty() {
            return Err(self.error("expected a key"));
        }
        Ok(out)
    }

    /// The rest of a string opened with `quote`.
    fn string(&mut self, quote: char) -> Result<String, Json5Error> {
        let mut out = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(self.error("a string is never closed"));
            };
            match c {
                c if c == quote => return Ok(out),
                '\n' | '\r' => return Err(self.error("a line break inside a string")),
                '\\' => {
                    let Some(e) = self.bump() else {
                        return Err(self.error("a string is never closed"));
                    };
                    match e {
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{C}'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'v' => out.push('\u{B}'),
                        '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => out.push('\0'),
                        'x' => {
                            let hex = self.hex_digits(2)?;
                            out.push(char::from(hex as u8));
                        }
                        'u' => out.push(self.unicode_escape()?),
                        // A line continuation: the escaped break is dropped.
                        '\n' | '\u{2028}' | '\u{2029}' => {}
                        '\r' => {
                            self.eat('\n');
                        }
                        d if d.is_ascii_digit() => {
                            return Err(self.error("a digit cannot be escaped in a string"));
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn hex_digits(&mut self, n: usize) -> Result<u32, Json5Error> {
        let mut v = 0u32;
        for _ in 0..n {
            let d = self
                .peek()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| self.error(format!("expected {n} hexadecimal digits")))?;
            self.bump();
            v = v * 16 + d;
        }
        Ok(v)
    }

    /// After `\u`: four hex digits, joined with a following low surrogate.
    fn unicode_escape(&mut self) -> Result<char, Json5Error> {
        let hi = self.hex_digits(4)?;
        if (0xD800..0xDC00).contains(&hi) && self.src[self.i..].starts_with("\\u") {
            let save = self.i;
            self.i += 2;
            let lo = self.hex_digits(4)?;
            if (0xDC00..0xE000).contains(&lo) {
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
            }
            self.i = save;
        }
        Ok(char::from_u32(hi).unwrap_or('\u{FFFD}'))
    }

    fn number(&mut self) -> Result<Value, Json5Error> {
        let start = self.i;
        let negative = self.peek() == Some('-');
        if matches!(self.peek(), Some('+' | '-')) {
            self.bump();
        }
        if self.peek().is_some_and(is_id_start) {
            let word = self.identifier()?;
            if word == "Infinity" || word == "NaN" {
                return Ok(Value::Null);
            }
            self.i = start;
            return Err(self.error(format!("`{word}` is not a number")));
        }
        if self.peek() == Some('0') && matches!(self.peek2(), Some('x' | 'X')) {
            self.i += 2;
            let digits_start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.bump();
            }
            let digits = &self.src[digits_start..self.i];
            let v = u64::from_str_radix(digits, 16)
                .map_err(|_| self.error("a hexadecimal number that is empty or too large"))?;
            return Ok(match (negative, i64::try_from(v)) {
                (false, _) => Value::from(v),
                (true, Ok(v)) => Value::from(-v),
                (true, Err(_)) => Value::from(-(v as f64)),
            });
        }
        let mut integral = true;
        let mut digits = 0;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.bump();
            digits += 1;
        }
        if self.eat('.') {
            integral = false;
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
                digits += 1;
            }
        }
        if digits == 0 {
            self.i = start;
            return Err(self.error("a number without digits"));
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            integral = false;
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.error("an exponent without digits"));
            }
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
        }
        let text = self.src[start..self.i].trim_start_matches('+');
        if integral {
            if let Ok(v) = text.parse::<i64>() {
                return Ok(Value::from(v));
            }
            if let Ok(v) = text.parse::<u64>() {
                return Ok(Value::from(v));
            }
        }
        let v: f64 = text
            .parse()
            .map_err(|_| self.error(format!("`{text}` is not a number")))?;
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
}

fn is_id_start(c: char) -> bool {
    c.is_alphabetic() || c == '$' || c == '_'
}

fn is_id_part(c: char) -> bool {
    c.is_alphanumeric() || c == '$' || c == '_' || c == '\u{200C}' || c == '\u{200D}'
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_json5_adds_to_json() {
        let text = r#"
        // OpenClaw's config, as its README shows it
        {
          plugins: {
            load: { paths: ['/opt/toolgate/integrations/openclaw', ], },
            entries: {
              toolgate: {
                enabled: true, /* on */
                config: { url: "http://127.0.0.1:7878", timeoutMs: 8_000e0, },
              },
            },
          },
          hex: 0x1F, neg: -0x10, plus: +3, lead: .5, trail: 5., inf: -Infinity,
          "quoted key": 'it\'s "here"', esc: '\x41\u00e9\uD83D\uDE00\
continued',
          $id_2: null,
        }"#;
        // `8_000e0` is not JSON5: a digit separator is refused.
        assert!(parse(text).is_err());
        let v = parse(&text.replace("8_000e0", "8000")).unwrap();
        assert_eq!(
            v["plugins"]["load"]["paths"],
            json!(["/opt/toolgate/integrations/openclaw"])
        );
        assert_eq!(v["plugins"]["entries"]["toolgate"]["enabled"], true);
        assert_eq!(
            v["plugins"]["entries"]["toolgate"]["config"]["timeoutMs"],
            8000
        );
        assert_eq!(v["hex"], 31);
        assert_eq!(v["neg"], -16);
        assert_eq!(v["plus"], 3);
        assert_eq!(v["lead"], 0.5);
        assert_eq!(v["trail"], 5.0);
        assert_eq!(v["inf"], Value::Null);
        assert_eq!(v["quoted key"], "it's \"here\"");
        assert_eq!(v["esc"], "Aé😀continued");
        assert_eq!(v["$id_2"], Value::Null);
    }

    #[test]
    fn plain_json_reads_as_serde_json_reads_it() {
        let text = r#"{"a": [1, -2.5, 1e3, "x\n\"y\"", true, false, null, {}], "b": {"c": []}}"#;
        assert_eq!(
            parse(text).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn comments_are_stripped_outside_strings_only() {
        let text = "{\"a\": \"http://x\", // note\n /* b\n */ \"b\": \"/*k*/\"}";
        assert_eq!(
            strip_comments(text),
            "{\"a\": \"http://x\", \n \n \"b\": \"/*k*/\"}"
        );
        let v: Value =
            serde_json::from_str(&strip_comments("{\"hooks\": {} // toolgate\n}")).unwrap();
        assert_eq!(v, json!({"hooks": {}}));
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = parse("{\n  a: 1\n  b: 2\n}").unwrap_err();
        assert_eq!((e.line, e.column), (3, 3), "{e}");
        assert!(e.message.contains("`,` or `}`"), "{e}");
        let e = parse("{a: 'open").unwrap_err();
        assert!(e.message.contains("never closed"), "{e}");
        let e = parse("/* x").unwrap_err();
        assert!(e.message.contains("comment"), "{e}");
        assert!(parse("{a: yes}").unwrap_err().message.contains("yes"));
        assert!(parse("[1,,2]").is_err());
        assert!(parse("{} {}").is_err());
        assert!(parse("").is_err());
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&deep).unwrap_err().message.contains("deeper"));
    }
}
