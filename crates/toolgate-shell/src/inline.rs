//! Shell commands hidden in interpreter one-liners: `os.system("…")`,
//! `subprocess.run(["rm", …])`, `execSync('…')`, Perl and Ruby backticks,
//! Vim's `:!`. Each is handed back to the shell analyzer; a call whose
//! command is built at run time is reported so the caller escalates it.

use regex::Regex;
use std::sync::OnceLock;

/// A shell command found in program text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Snippet {
    /// Text a shell would parse (`os.system("rm -rf /")`).
    Script(String),
    /// An argv run without a shell; `true` marks a value known only at run
    /// time (`system("rm", "-rf", Dir.home)`).
    Argv(Vec<(String, bool)>),
    /// A command built at run time (`os.system("r" + "m -rf " + home)`).
    Dynamic(String),
}

/// Functions that run a shell command or a program. Dotted names match as
/// written; bare names only when not a method of some other object.
const EXEC_CALL: &str = r"(?:(?:os\.(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|commands\.getoutput|pty\.spawn|child_process\.\w+|IO\.popen|Open3\.\w+|Kernel\.(?:system|exec|spawn)|Deno\.run|Bun\.spawn(?:Sync)?|os\.execute|io\.popen|Runtime\.getRuntime\(\)\.exec|\.(?:system|popen)|\.(?:execSync|execFileSync|spawnSync|spawn|execFile)|(?:child_process|cp|proc)\.exec)|(?:^|[^.\w$])(?:system|exec|execSync|execFileSync|spawnSync|spawn|execFile|shell_exec|passthru|proc_open|popen|do shell script))";

fn exec_call() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(EXEC_CALL).expect("valid regex"))
}

fn backticks() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"`([^`]+)`|\bqx\s*[\{\(\[/]([^\}\)\]/]+)|%x\s*[\{\(\[]([^\}\)\]]+)")
            .expect("valid regex")
    })
}

/// Finds the shell commands that `code` would run.
pub(crate) fn shell_snippets(code: &str) -> Vec<Snippet> {
    let mut out = Vec::new();
    for m in exec_call().find_iter(code) {
        let rest = &code[m.end()..];
        if let Some(s) = call_snippet(rest) {
            out.push(s);
        }
    }
    for caps in backticks().captures_iter(code) {
        if let Some(m) = caps.get(1).or_else(|| caps.get(2)).or_else(|| caps.get(3)) {
            // JavaScript template literals are strings, not commands; they are
            // caught as arguments of exec calls above.
            if !code[..caps.get(0).map(|c| c.start()).unwrap_or(0)]
                .trim_end()
                .ends_with('(')
            {
                out.push(Snippet::Script(m.as_str().to_string()));
            }
        }
    }
    // Vim's `:!cmd` and IPython's `!cmd`
    for line in code.split(['\n', '|']) {
        let t = line.trim_start().trim_start_matches(':');
        if let Some(cmd) = t
            .strip_prefix('!')
            .or_else(|| t.strip_prefix("r !"))
            .or_else(|| t.strip_prefix("w !"))
            && !cmd.trim().is_empty()
            && !cmd.starts_with('=')
        {
            out.push(Snippet::Script(cmd.to_string()));
        }
    }
    out.truncate(32);
    out
}

/// Where a sed command may start, with its optional address: the start of
/// a line or after `;`, `{` or `}`, a line number, `$` or `/regex/`, a
/// second address after a comma, and `!` negating them. One pattern for
/// every command toolgate reads, so `1!e CMD` and `1, 3w FILE` are found
/// alike.
const SED_ADDRESS: &str =
    r"(?m)(?:^|[;{}])\s*(?:\d+|\$|/[^/\n]*/)?(?:\s*,\s*(?:\d+|\$|/[^/\n]*/))?\s*!?\s*";

/// Commands a sed script runs: GNU sed's `e command` runs `command`; the
/// `e` flag of `s///e` runs the edited line, which is not known statically.
pub(crate) fn sed_commands(script: &str) -> Vec<Snippet> {
    static E_CMD: OnceLock<Regex> = OnceLock::new();
    let e_cmd = E_CMD.get_or_init(|| {
        Regex::new(&format!(r"{SED_ADDRESS}e\s+([^;\n}}]+)")).expect("valid regex")
    });
    let mut out: Vec<Snippet> = e_cmd
        .captures_iter(script)
        .filter_map(|c| c.get(1))
        .map(|m| Snippet::Script(m.as_str().trim().to_string()))
        .collect();
    if substitutions_execute(script) {
        out.push(Snippet::Dynamic(script.to_string()));
    }
    out
}

/// What a sed script does to files, as the shell commands that would do the
/// same, so every rule about writing or reading a file judges it: `w FILE`,
/// `W FILE` and the `w FILE` flag of `s///` write FILE (`tee -a FILE`);
/// `r FILE` and `R FILE` read it into the output (`cat FILE`). A file name
/// runs to the end of its line, as sed reads it.
pub(crate) fn sed_file_effects(script: &str) -> Vec<String> {
    static FILE_CMD: OnceLock<Regex> = OnceLock::new();
    let file_cmd = FILE_CMD.get_or_init(|| {
        Regex::new(&format!(r"{SED_ADDRESS}([wWrR])[ \t]*([^\n]+)")).expect("valid regex")
    });
    let mut out = Vec::new();
    for c in file_cmd.captures_iter(script) {
        let (Some(cmd), Some(file)) = (c.get(1), c.get(2)) else {
            continue;
        };
        let file = file.as_str().trim();
        if file.is_empty() {
            continue;
        }
        let quoted = crate::quote(file);
        out.push(match cmd.as_str() {
            "w" | "W" => format!("tee -a {quoted}"),
            _ => format!("cat {quoted}"),
        });
    }
    for file in substitutions(script).into_iter().filter_map(|s| s.writes) {
        out.push(format!("tee -a {}", crate::quote(&file)));
    }
    out.truncate(32);
    out
}

/// True when a sed script has an `s` command with the `e` flag.
fn substitutions_execute(script: &str) -> bool {
    substitutions(script).iter().any(|s| s.flags.contains('e'))
}

/// One `s` command of a sed script: its flags, and the file its `w` flag
/// writes (the rest of the line after the `w`).
struct Substitution {
    flags: String,
    writes: Option<String>,
}

/// The `s` commands of a sed script, read delimiter by delimiter (any
/// delimiter, backslash escapes skipped).
fn substitutions(script: &str) -> Vec<Substitution> {
    let chars: Vec<char> = script.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < chars.len() {
        let at_command = i == 0
            || matches!(chars[i - 1], ';' | '{' | '}' | '\n' | ' ' | '\t')
            || chars[i - 1].is_ascii_digit()
            || chars[i - 1] == '$';
        if chars[i] == 's'
            && at_command
            && !chars[i + 1].is_alphanumeric()
            && !chars[i + 1].is_whitespace()
            && chars[i + 1] != '\\'
        {
            let delim = chars[i + 1];
            let mut j = i + 2;
            let mut seen = 0;
            while j < chars.len() && seen < 2 {
                if chars[j] == '\\' {
                    j += 2;
                    continue;
                }
                if chars[j] == delim {
                    seen += 1;
                }
                j += 1;
            }
            if seen == 2 {
                let mut flags = String::new();
                let mut writes = None;
                let mut k = j;
                while k < chars.len() && chars[k].is_ascii_alphanumeric() {
                    flags.push(chars[k]);
                    if chars[k] == 'w' {
                        // The file name runs to the end of the line.
                        let rest: String =
                            chars[k + 1..].iter().take_while(|&&c| c != '\n').collect();
                        writes = Some(rest.trim().to_string()).filter(|f| !f.is_empty());
                        k += 1 + rest.chars().count();
                        break;
                    }
                    k += 1;
                }
                out.push(Substitution { flags, writes });
                i = k;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// One argument of a call: a literal string, or text whose value is unknown.
enum Item {
    Lit(String),
    List(Vec<Item>),
    Other(String),
}

/// Reads the arguments after an exec function's name and classifies them.
fn call_snippet(rest: &str) -> Option<Snippet> {
    let mut p = Parser {
        s: rest.as_bytes(),
        i: 0,
        text: rest,
    };
    p.skip_ws();
    let paren = p.eat(b'(');
    let items = p.items(if paren { b')' } else { b'\n' }, 0);
    let first = items.first()?;
    match (first, items.len()) {
        (Item::Lit(s), 1) => Some(Snippet::Script(s.clone())),
        (Item::List(list), _) => Some(argv_of(list)),
        // `execSync("rm -rf /usr", {stdio: "inherit"})`: a command line, then options
        (Item::Lit(s), _)
            if s.contains(' ') && items[1..].iter().all(|i| !matches!(i, Item::Lit(_))) =>
        {
            Some(Snippet::Script(s.clone()))
        }
        (Item::Lit(_), _) => Some(argv_of(&items)),
        (Item::Other(t), 1) => Some(match crate::static_code::value(t) {
            Some(text) => Snippet::Script(text),
            None => Snippet::Dynamic(t.clone()),
        }),
        (Item::Other(t), _) => Some(Snippet::Dynamic(t.clone())),
    }
}

fn argv_of(items: &[Item]) -> Snippet {
    let argv: Vec<(String, bool)> = items
        .iter()
        .map(|it| match it {
            Item::Lit(s) => (s.clone(), false),
            Item::List(_) => ("[…]".to_string(), true),
            Item::Other(t) => match crate::static_code::value(t) {
                Some(v) => (v, false),
                None => (t.clone(), true),
            },
        })
        .collect();
    if argv.is_empty() {
        Snippet::Dynamic("[]".into())
    } else {
        Snippet::Argv(argv)
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] == b' ' || self.s[self.i] == b'\t') {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Comma-separated items up to `close` (or `;` / end of statement).
    fn items(&mut self, close: u8, depth: usize) -> Vec<Item> {
        let mut out = Vec::new();
        while self.i < self.s.len() && out.len() < 64 && depth < 8 {
            self.skip_ws();
            match self.s.get(self.i) {
                None => break,
                Some(&c)
                    if c == close
                        || c == b';'
                        || c == b')'
                        || c == b']'
                        || c == b'}'
                        || c == b'\n' =>
                {
                    break;
                }
                _ => {}
            }
            out.push(self.item(depth));
            self.skip_ws();
            if !self.eat(b',') {
                break;
            }
        }
        out
    }

    fn item(&mut self, depth: usize) -> Item {
        let start = self.i;
        // optional string prefix: r"", b'', f"", u""
        while self.i < self.s.len()
            && self.i - start < 2
            && matches!(
                self.s[self.i],
                b'r' | b'b' | b'u' | b'f' | b'R' | b'B' | b'U' | b'F'
            )
        {
            self.i += 1;
        }
        match self.s.get(self.i) {
            Some(&q @ (b'"' | b'\'' | b'`')) => {
                let formatted = self.s[start..self.i]
                    .iter()
                    .any(|c| *c == b'f' || *c == b'F');
                if let Some(lit) = self.string(q) {
                    // a lone literal, not part of an expression (`"a" + x`)
                    self.skip_ws();
                    let ends = matches!(
                        self.s.get(self.i),
                        None | Some(b',' | b')' | b']' | b';' | b'\n' | b'}')
                    );
                    let interpolated = formatted
                        || (q == b'`' && lit.contains("${"))
                        || (q == b'"' && (lit.contains("#{") || lit.contains("$ENV{")));
                    if ends && !interpolated {
                        return Item::Lit(lit);
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let inner = self.items(b']', depth + 1);
                self.skip_ws();
                self.eat(b']');
                return Item::List(inner);
            }
            _ => self.i = start,
        }
        // anything else: an expression; skip to the next top-level comma
        let mut level = 0i32;
        let expr_start = start;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'(' | b'[' | b'{' => level += 1,
                b')' | b']' | b'}' if level == 0 => break,
                b')' | b']' | b'}' => level -= 1,
                b',' | b';' | b'\n' if level == 0 => break,
                q @ (b'"' | b'\'' | b'`') => {
                    let _ = self.string(q);
                    continue;
                }
                _ => {}
            }
            self.i += 1;
        }
        let end = self.i.max(expr_start);
        Item::Other(
            self.text
                .get(expr_start..end)
                .unwrap_or("")
                .trim()
                .to_string(),
        )
    }

    /// A quoted string starting at `self.i`; returns its unescaped value.
    fn string(&mut self, q: u8) -> Option<String> {
        let start = self.i + 1;
        let mut j = start;
        while j < self.s.len() {
            match self.s[j] {
                b'\\' => j += 2,
                c if c == q => {
                    let raw = self.text.get(start..j)?;
                    self.i = j + 1;
                    return Some(if raw.contains('\\') {
                        super::words::decode_ansi_c(raw)
                    } else {
                        raw.to_string()
                    });
                }
                _ => j += 1,
            }
        }
        self.i = self.s.len();
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_writes_and_reads_are_the_files_they_name() {
        assert_eq!(
            sed_file_effects("w /etc/cron.d/x"),
            vec!["tee -a /etc/cron.d/x"]
        );
        assert_eq!(
            sed_file_effects("1,/x/w out;x.log"),
            vec!["tee -a 'out;x.log'"]
        );
        assert_eq!(
            sed_file_effects("$r /root/.ssh/id_rsa"),
            vec!["cat /root/.ssh/id_rsa"]
        );
        assert_eq!(
            sed_file_effects("s|a|b|gw /root/.bashrc"),
            vec!["tee -a /root/.bashrc"]
        );
        assert_eq!(
            sed_file_effects("s/a/b/\n/x/W  two words"),
            vec!["tee -a 'two words'"]
        );
        // Substitutions and printing touch no file.
        assert!(sed_file_effects("s/foo/bar/g").is_empty());
        assert!(sed_file_effects("1,5p").is_empty());
        assert!(sed_file_effects("s/w/r/").is_empty());
    }
    use crate::decoders::decode_base64;

    fn argv(items: &[(&str, bool)]) -> Snippet {
        Snippet::Argv(items.iter().map(|(s, d)| (s.to_string(), *d)).collect())
    }

    #[test]
    fn finds_system_calls() {
        assert_eq!(
            shell_snippets(r#"import os; os.system("rm -rf ~")"#),
            vec![Snippet::Script("rm -rf ~".into())]
        );
        assert_eq!(
            shell_snippets("require('child_process').execSync('rm -rf /')"),
            vec![Snippet::Script("rm -rf /".into())]
        );
        assert_eq!(
            shell_snippets("import subprocess; subprocess.run(['rm', '-rf', '/'])"),
            vec![argv(&[("rm", false), ("-rf", false), ("/", false)])]
        );
        assert_eq!(
            shell_snippets("print `rm -rf /`"),
            vec![Snippet::Script("rm -rf /".into())]
        );
        assert!(shell_snippets("print(1+1)").is_empty());
        assert!(shell_snippets("const m = /a/.exec(s)").is_empty());
    }

    #[test]
    fn commands_built_at_run_time_are_reported() {
        assert_eq!(
            shell_snippets("import os; os.system('rm -rf ' + target)"),
            vec![Snippet::Dynamic("'rm -rf ' + target".into())]
        );
        assert_eq!(
            shell_snippets(r#"system("rm", "-rf", dirs[0])"#),
            vec![argv(&[("rm", false), ("-rf", false), ("dirs[0]", true)])]
        );
    }

    #[test]
    fn commands_built_from_constants_are_computed() {
        assert_eq!(
            shell_snippets("import os; os.system('r' + 'm -rf ' + os.environ['HOME'])"),
            vec![Snippet::Script("rm -rf ~".into())]
        );
        assert_eq!(
            shell_snippets(r#"system("rm", "-rf", Dir.home)"#),
            vec![argv(&[("rm", false), ("-rf", false), ("~", false)])]
        );
        assert_eq!(
            shell_snippets(r#"system "rm", "-rf", $ENV{HOME}"#),
            vec![argv(&[("rm", false), ("-rf", false), ("~", false)])]
        );
    }

    #[test]
    fn sed_execution() {
        assert_eq!(
            sed_commands("1e rm -rf ~"),
            vec![Snippet::Script("rm -rf ~".into())]
        );
        // A negated or spaced address runs the command all the same.
        for script in ["1!e rm -rf ~", "1, 3e rm -rf ~", "/x/!e rm -rf ~"] {
            assert_eq!(
                sed_commands(script),
                vec![Snippet::Script("rm -rf ~".into())],
                "{script}"
            );
        }
        assert_eq!(sed_commands("s/x/y/e").len(), 1);
        assert!(sed_commands("s/e/f/g").is_empty());
        assert!(sed_commands("1,20p").is_empty());
    }

    #[test]
    fn vim_bang_commands() {
        assert_eq!(
            shell_snippets(":!rm -rf ~"),
            vec![Snippet::Script("rm -rf ~".into())]
        );
    }

    #[test]
    fn decodes_base64() {
        assert_eq!(decode_base64("cm0gLXJmIC8K").as_deref(), Some("rm -rf /\n"));
        assert_eq!(decode_base64("not base64!!"), None);
    }
}
