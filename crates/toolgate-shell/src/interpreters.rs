//! Shells and interpreters: `bash -c` and shell scripts (given, written
//! earlier or read from stdin), and inline code for `python -c`, `perl -e`,
//! `node -e`, awk, vim and the like, including the shell commands that code
//! runs.

use super::analyzer::Analyzer;
use super::argv::display;
use super::inline;
use super::scope::Scope;
use super::types::*;

/// Shells that run a `-c` string, a script file, or stdin.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash",
    "ksh93", "posh",
];

/// Interpreters and the options that introduce inline code.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("pypy", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("irb", &[]),
    ("ipython", &["-c"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("bun", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("rscript", &["-e"]),
    ("osascript", &["-e"]),
    ("pwsh", &["-c", "-command", "-Command", "--command"]),
    ("powershell", &["-c", "-command", "-Command", "--command"]),
    ("tclsh", &[]),
    ("expect", &["-c"]),
    ("vim", &["-c", "--cmd"]),
    ("nvim", &["-c", "--cmd"]),
    ("vi", &["-c", "--cmd"]),
    ("ex", &["-c", "--cmd"]),
    ("view", &["-c", "--cmd"]),
    ("gvim", &["-c", "--cmd"]),
    ("awk", &[]),
    ("gawk", &[]),
    ("mawk", &[]),
    ("nawk", &[]),
];

/// Database clients that read statements from stdin.
pub(super) const DB_CLIENTS: &[&str] = &[
    "psql",
    "mysql",
    "mariadb",
    "sqlite3",
    "mongo",
    "mongosh",
    "redis-cli",
    "valkey-cli",
    "cqlsh",
    "sqlcmd",
    "duckdb",
    "clickhouse-client",
    "sqlplus",
    "cockroach",
    "influx",
];

fn lang_is_vim(lang: &str) -> bool {
    matches!(lang, "vim" | "nvim" | "vi" | "ex" | "view" | "gvim")
}

/// The interpreter family of a program name (`python3.12` → `python`).
pub(crate) fn interpreter_of(program: &str) -> Option<(&'static str, &'static [&'static str])> {
    let lower = program.to_ascii_lowercase();
    let stem = lower.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let stem = stem.strip_suffix(".exe").unwrap_or(stem);
    INTERPRETERS
        .iter()
        .find(|(name, _)| *name == stem)
        .map(|(n, o)| (*n, *o))
}

/// Whether anything feeds the command's stdin: a pipe, a here-doc or
/// here-string, or a redirection (of the command or around it).
pub(super) fn stdin_fed(cmd: &SimpleCommand, scope: &Scope) -> bool {
    let reads = |r: &Redirect| {
        matches!(
            r.kind,
            RedirectKind::Read | RedirectKind::ReadWrite | RedirectKind::Dup
        )
    };
    scope.stdin_text.is_some()
        || !scope.stdin_from.is_empty()
        || !cmd.stdin_from.is_empty()
        || cmd.redirects.iter().any(reads)
        || scope.redirects.iter().any(reads)
}

impl Analyzer<'_> {
    /// A shell, REPL or database client started with nothing to run and
    /// nothing on its stdin: an interactive session. Whatever is typed into
    /// it later (Codex's `write_stdin`, a terminal multiplexer's keys)
    /// reaches no hook, so it is never allowed silently.
    pub(super) fn interactive(&mut self, program: &str, cmd: &SimpleCommand) {
        // `node --version`, `python3 -V`, `psql --help`: print and exit.
        let prints_and_exits = cmd.argv.iter().skip(1).any(|w| {
            matches!(
                w.text.as_str(),
                "--version" | "--help" | "-V" | "-h" | "-help" | "-version" | "-?"
            ) || (w.text == "-v" && matches!(program, "node" | "nodejs" | "bun" | "deno"))
        });
        if prints_and_exits {
            return;
        }
        self.opaque(
            format!(
                "{program} starts an interactive session: what is typed into it later reaches no \
                 hook"
            ),
            &display(&cmd.argv),
        );
    }

    pub(super) fn unwrap_shell(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        let mut i = 0;
        let mut c_mode = false;
        let mut stdin_mode = false;
        while i < args.len() {
            let a = args[i].text.as_str();
            if a == "--" {
                i += 1;
                break;
            }
            if a == "-o"
                || a == "+o"
                || a == "--rcfile"
                || a == "--init-file"
                || a == "-O"
                || a == "+O"
            {
                i += 2;
                continue;
            }
            if let Some(flags) = a
                .strip_prefix('-')
                .filter(|f| !f.starts_with('-') && !f.is_empty())
            {
                c_mode |= flags.contains('c');
                stdin_mode |= flags.contains('s');
                i += 1;
                continue;
            }
            if a.starts_with("--") || (a.starts_with('+') && a.len() > 1) {
                i += 1;
                continue;
            }
            break;
        }
        let program = cmd.program.clone();
        if c_mode {
            cmd.wrapper = true;
            self.push(cmd);
            let Some(script) = args.get(i) else { return };
            let mut inner = scope.clone();
            // `bash -c 'rm -rf "$1"' _ /`: the words after the script are $0, $1 …
            for (n, w) in args[i + 1..].iter().enumerate() {
                inner
                    .state_mut()
                    .vars
                    .insert(n.to_string(), (!w.dynamic).then(|| w.text.clone()));
            }
            self.script_word(script, &inner, &format!("{program} -c"));
            return;
        }
        let script_arg = if stdin_mode { None } else { args.get(i) };
        if script_arg.is_some_and(|f| self.is_downloaded(f, scope)) {
            cmd.stdin_from.push("<download>".into());
        }
        match script_arg {
            Some(file) if file.text != "-" && file.text != "/dev/stdin" => {
                if let Some(content) = self.written_script(file, scope) {
                    cmd.wrapper = true;
                    self.push(cmd);
                    self.nested(&content, scope, &format!("{program} script"));
                    return;
                }
                // Runs a script file: its content is not known here.
                if (file.text.starts_with("/dev/fd/") || file.text.starts_with("/proc/self/fd/"))
                    && let Some(text) = scope.stdin_text.clone()
                {
                    self.push(cmd);
                    self.nested(&text, scope, &program);
                    return;
                }
                self.push(cmd);
            }
            _ => {
                // Reads its script from stdin.
                let text = scope.stdin_text.clone();
                if !stdin_fed(&cmd, scope) {
                    self.interactive(&program, &cmd);
                }
                if text.is_none() && scope.stdin_from.iter().any(|s| s == "$") {
                    self.opaque(
                        format!("{program} runs a script built at run time from its input"),
                        &display(&cmd.argv),
                    );
                }
                cmd.wrapper = text.is_some();
                self.push(cmd);
                if let Some(text) = text {
                    self.nested(&text, scope, &format!("{program} stdin"));
                }
            }
        }
    }

    pub(super) fn interpreter(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
        lang: &str,
        code_opts: &[&str],
    ) {
        let mut code: Vec<Word> = Vec::new();
        let mut i = 0;
        let module = false;
        let awk = matches!(lang, "awk" | "gawk" | "mawk" | "nawk");
        let mut has_program_file = false;
        while i < args.len() {
            let a = args[i].text.as_str();
            if a == "--" {
                i += 1;
                break;
            }
            if code_opts.contains(&a) {
                if let Some(c) = args.get(i + 1) {
                    code.push(c.clone());
                }
                i += 2;
                continue;
            }
            if let Some(v) = code_opts
                .iter()
                .find_map(|o| a.strip_prefix(&format!("{o}=")))
            {
                code.push(args[i].clone().with_text(v));
                i += 1;
                continue;
            }
            if lang_is_vim(lang) && a.starts_with('+') {
                code.push(args[i].clone().with_text(&a[1..]));
                i += 1;
                continue;
            }
            if !a.starts_with('-') || a == "-" {
                if lang_is_vim(lang) {
                    i += 1;
                    continue;
                }
                break;
            }
            if awk && matches!(a, "-F" | "-v" | "--assign" | "--field-separator") {
                i += 2;
                continue;
            }
            if awk && matches!(a, "-f" | "--file") {
                has_program_file = true;
                i += 2;
                continue;
            }
            if lang == "python" && (a == "-m" || a.starts_with("-m")) {
                // `python -m twine upload`: the module is the program that runs
                let mut inner: Vec<Word> = Vec::new();
                if a.len() > 2 {
                    inner.push(args[i].clone().with_text(&a[2..]));
                }
                inner.extend(args[i + 1..].iter().cloned());
                cmd.wrapper = true;
                self.push(cmd);
                self.inner_argv(inner, scope, "python -m", false, None);
                return;
            }
            if matches!(
                a,
                "-W" | "-X" | "-I" | "-r" | "--require" | "-M" | "--import" | "--input-type" | "-x"
            ) {
                i += 2;
                continue;
            }
            // short clusters: `-uc CODE`, `-le CODE`, `-pe CODE`, `-eCODE`
            let short: Vec<char> = code_opts
                .iter()
                .filter(|o| o.len() == 2 && !o.starts_with("--"))
                .filter_map(|o| o.chars().nth(1))
                .collect();
            if !a.starts_with("--")
                && let Some(pos) = a[1..].find(|c| short.contains(&c))
            {
                let attached = &a[pos + 2..];
                if attached.is_empty() {
                    if let Some(c) = args.get(i + 1) {
                        code.push(c.clone());
                    }
                    i += 2;
                } else if lang == "perl" || lang == "ruby" || lang == "python" {
                    code.push(args[i].clone().with_text(attached));
                    i += 1;
                } else {
                    i += 1;
                }
                continue;
            }
            i += 1;
        }
        if awk
            && code.is_empty()
            && !has_program_file
            && let Some(p) = args.get(i)
        {
            code.push(p.clone());
        }
        if lang == "deno" && args.first().is_some_and(|w| w.text == "eval") {
            code.extend(args.get(1).cloned());
        }
        if code.is_empty() && !module && !awk {
            let script = args.get(i);
            if script.is_some_and(|f| self.is_downloaded(f, scope)) {
                cmd.stdin_from.push("<download>".into());
            }
            if let Some(content) = script.and_then(|f| self.written_script(f, scope)) {
                code.push(Word::lit(content));
            }
            let from_stdin = script.is_none_or(|w| w.text == "-" || w.text == "/dev/stdin");
            // A REPL with nothing on stdin (deno's and the vim family's own
            // commands aside: `deno run`, an editor on a file).
            if script.is_none() && !lang_is_vim(lang) && lang != "deno" && !stdin_fed(&cmd, scope) {
                self.interactive(lang, &cmd);
            }
            if from_stdin {
                if let Some(text) = scope.stdin_text.clone() {
                    code.push(Word::lit(text));
                } else if scope.stdin_from.iter().any(|s| s == "$") {
                    self.opaque(
                        format!("{lang} runs code built at run time from its input"),
                        &display(&cmd.argv),
                    );
                }
            }
        }
        if code.iter().any(|c| c.dynamic) {
            self.opaque(
                format!("{lang} runs code that is only known at run time"),
                &display(&code),
            );
        }
        if !code.is_empty() {
            let text = code
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join("\n");
            // Encoded literals decoded in place: the code rules see the
            // paths and commands the code acts on.
            let readable = crate::code_literals::decoded_in_place(&text);
            cmd.inline_code = Some(InlineCode {
                language: lang.to_string(),
                code: readable.unwrap_or_else(|| text.clone()),
            });
            let via = format!("{} -c", lang);
            self.push(cmd);
            for snippet in inline::shell_snippets(&text) {
                match snippet {
                    inline::Snippet::Script(s) => self.nested(&s, scope, &via),
                    inline::Snippet::Argv(argv) => {
                        let argv: Vec<Word> = argv
                            .into_iter()
                            .map(|(text, dynamic)| Word { text, dynamic })
                            .collect();
                        if argv.first().is_some_and(|w| w.dynamic) {
                            self.opaque(
                                format!("{lang} code runs a command built at run time"),
                                &display(&argv),
                            );
                        }
                        self.inner_argv(argv, scope, &via, false, None)
                    }
                    inline::Snippet::Dynamic(text) => {
                        self.opaque(
                            format!("{lang} code runs a shell command built at run time"),
                            &text,
                        );
                    }
                }
            }
            return;
        }
        self.push(cmd);
    }
}
