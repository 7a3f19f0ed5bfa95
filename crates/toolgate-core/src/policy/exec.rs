//! Exec rule specifiers: a shell-words prefix such as `git push:*`, matched
//! against one [`SimpleCommand`] at a time.
//!
//! Two matchers, on purpose asymmetric:
//!
//! * **strict** (allow rules, hard to abuse): the command's words must equal
//!   the rule's words one for one, none of them dynamic; without `:*` the
//!   command has no further words. An allow rule never vouches for a command
//!   run privileged (sudo …), remotely (ssh, docker exec …), with environment
//!   assignments (`LD_PRELOAD=… cargo test`) or with a redirection that writes
//!   a file: those fall through to the other layers.
//! * **broad** (deny and ask rules, hard to dodge): the command must contain
//!   the rule's program (case-insensitively, as macOS file systems resolve
//!   it), every flag of the rule (flags compared as sets: `-rf` = `-fr` =
//!   `-r -f`; a long flag may be abbreviated to ≥ 3 characters), and the
//!   rule's positional words in order, whatever else it contains. Positional
//!   paths compare after lexical resolution (`/`, `//`, `/tmp/..` are all `/`;
//!   `~` and `$HOME` are home), a shell glob in the command (`/*`) matches the
//!   paths it could expand to (and its own directory), and a dynamic word
//!   (`$x`) matches any positional, a dynamic flag word (`-$x`) any flag.

use crate::paths::{Env, normalize_abs};
use crate::shell::{RedirectKind, SimpleCommand, Word};
use crate::wildcard::{is_glob, path_match};
use std::borrow::Cow;
use std::cell::OnceCell;

/// A parsed exec specifier (everything but `*`, which the rule handles).
#[derive(Debug, Clone)]
pub(crate) struct ExecPattern {
    /// The rule's words after quote removal; `words[0]` is the program as written.
    words: Vec<String>,
    /// The basename of `words[0]` (`/bin/rm` → `rm`).
    program: String,
    /// True for a trailing `:*` (or a trailing bare `*` word): more words may follow.
    open: bool,
    /// Single-letter flags of the rule (`-rf` → `r`, `f`).
    short_flags: Vec<char>,
    /// Long flag names of the rule (`--force` → `force`).
    long_flags: Vec<String>,
    /// Positional words of the rule, in order.
    positionals: Vec<Positional>,
}

#[derive(Debug, Clone)]
struct Positional {
    text: String,
    /// For absolute paths: the normalized path, computed once.
    abs: Option<String>,
    /// True when the word looks like a path and so compares after resolution.
    pathlike: bool,
}

/// One word of a specifier after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellToken {
    pub(crate) text: String,
    /// True when any part of the word was quoted or escaped.
    pub(crate) quoted: bool,
}

const UNCLOSED_SINGLE: &str =
    "has an unclosed single quote in its command — close it, e.g. exec(echo 'a b')";
const UNCLOSED_DOUBLE: &str =
    "has an unclosed double quote in its command — close it, e.g. exec(echo \"a b\")";

const NO_COMMAND: &str = "has no command before ':*' — write exec(*) for any command, \
     or name the program, e.g. exec(git push:*)";
const STAR_INSIDE: &str = "uses '*' in the middle of a command — '*' is only supported as \
     exec(*) or at the end (exec(git push:*)); quote it ('*') to match a literal star";

/// Splits `s` into words with simple POSIX shell rules: blanks separate,
/// `'…'` is literal, `"…"` honours `\\`, `\"`, `\$` and `` \` ``, a backslash
/// outside quotes escapes the next character. Shell operators are refused:
/// a rule describes one simple command.
pub(crate) fn shell_words(s: &str) -> Result<Vec<ShellToken>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    out.push(ShellToken {
                        text: std::mem::take(&mut cur),
                        quoted,
                    });
                    quoted = false;
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                quoted = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err(UNCLOSED_SINGLE.into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                quoted = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('\\' | '"' | '$' | '`')) => cur.push(ch),
                            Some('\n') => {}
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return Err(UNCLOSED_DOUBLE.into()),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err(UNCLOSED_DOUBLE.into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                quoted = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(ch) => cur.push(ch),
                    None => {
                        return Err("ends its command with a lone backslash — remove it or \
                                    quote it ('\\')"
                            .into());
                    }
                }
            }
            ';' | '|' | '&' | '<' | '>' | '`' | '(' | ')' => {
                return Err(format!(
                    "contains the shell operator '{c}' — a rule matches one simple command; \
                     write one rule per command (quote the character if it is meant literally)"
                ));
            }
            ch => {
                in_word = true;
                cur.push(ch);
            }
        }
    }
    if in_word {
        out.push(ShellToken { text: cur, quoted });
    }
    Ok(out)
}

/// The basename of a program path (`/bin/rm` → `rm`, `rm` → `rm`).
pub(crate) fn basename(s: &str) -> &str {
    let trimmed = s.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(i) => &trimmed[i + 1..],
        None => trimmed,
    }
}

/// True for words that name a path and so compare after resolution.
fn is_pathlike(s: &str) -> bool {
    s.starts_with(['/', '~', '.'])
        || s.starts_with("$HOME")
        || s.starts_with("${HOME}")
        || s.starts_with("$PWD")
        || s.starts_with("${PWD}")
        || s.contains('/')
}

/// One argument of a command, classified.
enum Arg<'a> {
    /// `-rf`: the letters after the dash.
    Short(&'a str, bool),
    /// `--force` or `--output=x`: the name.
    Long(&'a str, bool),
    /// Anything else (and everything after `--`).
    Positional(&'a Word),
}

/// Classifies a command's arguments; `--` ends the options.
fn classify(args: &[Word]) -> impl Iterator<Item = Arg<'_>> {
    let mut options_done = false;
    args.iter().filter_map(move |w| {
        let t = w.text.as_str();
        if options_done {
            return Some(Arg::Positional(w));
        }
        if t == "--" && !w.dynamic {
            options_done = true;
            return None;
        }
        if let Some(long) = t.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            return Some(Arg::Long(name, w.dynamic));
        }
        if t.len() > 1 && t.starts_with('-') {
            return Some(Arg::Short(&t[1..], w.dynamic));
        }
        Some(Arg::Positional(w))
    })
}

impl ExecPattern {
    /// Whether every command `other` allows, this pattern matches too: its
    /// words are `other`'s, or (with `:*`) the start of them. Decided on
    /// the words as written; `false` when that does not settle it.
    pub(crate) fn covers(&self, other: &ExecPattern) -> bool {
        if self.words.len() > other.words.len() || other.words[..self.words.len()] != self.words[..]
        {
            return false;
        }
        self.open || (self.words.len() == other.words.len() && !other.open)
    }

    /// Parses an exec specifier (not `*`). Errors are sentence tails for
    /// [`RuleError`](super::RuleError).
    pub(crate) fn parse(spec: &str) -> Result<ExecPattern, String> {
        let (body, mut open) = match spec.strip_suffix(":*") {
            Some(b) => (b, true),
            None => (spec, false),
        };
        let mut tokens = shell_words(body)?;
        if !open && tokens.len() > 1 && tokens.last().is_some_and(|t| t.text == "*" && !t.quoted) {
            // Claude Code's newer `Bash(npm run test *)` spelling of `:*`.
            tokens.pop();
            open = true;
        }
        let Some(first) = tokens.first() else {
            return Err(NO_COMMAND.into());
        };
        if first.text.starts_with("domain:") {
            return Err(format!(
                "uses a domain: specifier on a shell tool — domain: only applies to \
                 web_fetch rules, e.g. web_fetch({})",
                first.text
            ));
        }
        if tokens.iter().any(|t| t.text == "*" && !t.quoted) {
            return Err(STAR_INSIDE.into());
        }
        if first.text.is_empty() || basename(&first.text).is_empty() {
            return Err(
                "has an empty program name — name the program, e.g. exec(git status)".into(),
            );
        }
        let words: Vec<String> = tokens.into_iter().map(|t| t.text).collect();
        let program = basename(&words[0]).to_string();
        let mut short_flags = Vec::new();
        let mut long_flags = Vec::new();
        let mut positionals = Vec::new();
        let mut options_done = false;
        for w in &words[1..] {
            if !options_done && w == "--" {
                options_done = true;
            } else if !options_done && w.starts_with("--") {
                let name = w[2..].split('=').next().unwrap_or_default();
                long_flags.push(name.to_string());
            } else if !options_done && w.len() > 1 && w.starts_with('-') {
                short_flags.extend(w[1..].chars());
            } else {
                positionals.push(Positional {
                    abs: w.starts_with('/').then(|| normalize_abs(w)),
                    pathlike: is_pathlike(w),
                    text: w.clone(),
                });
            }
        }
        short_flags.sort_unstable();
        short_flags.dedup();
        long_flags.sort();
        long_flags.dedup();
        Ok(ExecPattern {
            words,
            program,
            open,
            short_flags,
            long_flags,
            positionals,
        })
    }

    /// The allow-side match: exact word prefix, no dynamic word compared.
    pub(crate) fn matches_strict(&self, cmd: &SimpleCommand) -> bool {
        if !strict_preconditions(cmd) {
            return false;
        }
        let Some(argv0) = cmd.argv.first() else {
            return false;
        };
        // The program: exactly as the rule wrote it, or invoked by bare name
        // with the same basename. `./git` or `/tmp/x/git` run some other
        // file, so an allow for `git` does not vouch for them.
        let program_ok = argv0.text == self.words[0]
            || (!argv0.text.contains('/') && cmd.program == self.program);
        if !program_ok {
            return false;
        }
        let args = cmd.args();
        let rest = &self.words[1..];
        let len_ok = if self.open {
            args.len() >= rest.len()
        } else {
            args.len() == rest.len()
        };
        len_ok
            && args
                .iter()
                .zip(rest)
                .all(|(w, r)| !w.dynamic && w.text == *r)
    }

    /// The deny/ask-side match: program, flags as a set, positionals in order.
    pub(crate) fn matches_broad(&self, cmd: &SimpleCommand, env: &Env) -> bool {
        let program_ok = match cmd.argv.first() {
            Some(w) if w.dynamic => true,
            _ => cmd.program.eq_ignore_ascii_case(&self.program),
        };
        if !program_ok {
            return false;
        }
        let args = cmd.args();
        let dynamic_flag = classify(args).any(|a| match a {
            Arg::Short(_, d) | Arg::Long(_, d) => d,
            Arg::Positional(_) => false,
        });
        if !dynamic_flag {
            let has_short =
                |c: char| classify(args).any(|a| matches!(a, Arg::Short(s, _) if s.contains(c)));
            if !self.short_flags.iter().all(|&c| has_short(c)) {
                return false;
            }
            let has_long = |rule: &str| {
                classify(args).any(|a| {
                    matches!(a, Arg::Long(n, _)
                        if n == rule || (n.len() >= 3 && rule.starts_with(n)))
                })
            };
            if !self.long_flags.iter().all(|l| has_long(l)) {
                return false;
            }
        }
        // Positionals: an in-order subsequence. Greedy earliest matching is
        // complete for subsequence search whatever the pairwise predicate.
        let res = Resolver {
            env,
            cwd: cmd.cwd.as_deref(),
            local: OnceCell::new(),
        };
        let mut want = self.positionals.iter().peekable();
        // The current rule positional's resolved path, computed at most once.
        let mut resolved: Option<Option<Cow<'_, str>>> = None;
        for arg in classify(args) {
            let Some(rule) = want.peek() else { break };
            if let Arg::Positional(w) = arg
                && positional_eq(rule, &mut resolved, w, &res)
            {
                want.next();
                resolved = None;
            }
        }
        want.peek().is_none()
    }
}

/// What an allow rule insists on before it vouches for any command.
pub(crate) fn strict_preconditions(cmd: &SimpleCommand) -> bool {
    let Some(argv0) = cmd.argv.first() else {
        return false;
    };
    !argv0.dynamic
        && !cmd.privileged
        && cmd.remote.is_none()
        && cmd.assignments.is_empty()
        && cmd.redirects.iter().all(|r| match r.kind {
            RedirectKind::Read | RedirectKind::Dup => true,
            RedirectKind::Write | RedirectKind::Append | RedirectKind::ReadWrite => {
                !r.target.dynamic && r.target.text == "/dev/null"
            }
        })
}

/// Resolves command words against the command's own working directory,
/// building the environment for it only when a relative word needs it.
struct Resolver<'a> {
    env: &'a Env,
    cwd: Option<&'a str>,
    local: OnceCell<Env>,
}

impl Resolver<'_> {
    /// The absolute path a word names, or `None` when it is relative and the
    /// command's working directory is unknown. Allocates only when the word
    /// is not already an absolute, normalized path.
    fn resolve<'t>(&self, text: &'t str) -> Option<Cow<'t, str>> {
        if is_normal_abs(text) {
            return Some(Cow::Borrowed(text));
        }
        if !needs_cwd(text) {
            return Some(Cow::Owned(self.env.resolve(text)));
        }
        let cwd = self.cwd?;
        if cwd.starts_with('/') && !text.starts_with(['~', '$']) {
            return Some(Cow::Owned(normalize_abs(&format!("{cwd}/{text}"))));
        }
        Some(Cow::Owned(
            self.local
                .get_or_init(|| self.env.with_cwd(cwd))
                .resolve(text),
        ))
    }
}

/// Whether `cwd/rel`, lexically normalized, is the normalized absolute path
/// `target`, without allocating; `None` for paths too deep to check this way.
fn join_eq(cwd: &str, rel: &str, target: &str) -> Option<bool> {
    const DEPTH: usize = 48;
    let mut stack: [&str; DEPTH] = [""; DEPTH];
    let mut n: usize = 0;
    for part in cwd.split('/').chain(rel.split('/')) {
        match part {
            "" | "." => {}
            ".." => n = n.saturating_sub(1),
            p => {
                if n == DEPTH {
                    return None;
                }
                stack[n] = p;
                n += 1;
            }
        }
    }
    let mut want = target.split('/').filter(|p| !p.is_empty());
    for part in &stack[..n] {
        if want.next() != Some(*part) {
            return Some(false);
        }
    }
    Some(want.next().is_none())
}

/// True for an absolute path that lexical resolution leaves unchanged.
fn is_normal_abs(s: &str) -> bool {
    s == "/"
        || (s.starts_with('/')
            && !s.ends_with('/')
            && !s.ends_with("/.")
            && !s.ends_with("/..")
            && !s.contains("//")
            && !s.contains("/./")
            && !s.contains("/../"))
}

/// True when resolving `text` depends on the working directory.
fn needs_cwd(text: &str) -> bool {
    let home_var = |v: &str| {
        text.strip_prefix(v)
            .is_some_and(|r| r.is_empty() || r.starts_with('/'))
    };
    !(text.starts_with('/')
        || (text.starts_with('~') && !text.starts_with("~+"))
        || home_var("$HOME")
        || home_var("${HOME}"))
}

/// A relative path with `.` and `..` folded; `None` when it climbs above
/// its start (and so could be anything).
fn fold_relative(text: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in text.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// Whether a command word can stand for the rule's positional.
/// `resolved` caches the rule positional's resolved path across the words
/// it is compared with.
fn positional_eq<'r>(
    rule: &'r Positional,
    resolved: &mut Option<Option<Cow<'r, str>>>,
    w: &Word,
    res: &Resolver<'_>,
) -> bool {
    if w.dynamic || w.text == rule.text {
        return true;
    }
    if !(rule.pathlike || is_pathlike(&w.text)) {
        return false;
    }
    let rule_path = resolved
        .get_or_insert_with(|| match &rule.abs {
            Some(p) => Some(Cow::Borrowed(p.as_str())),
            None => res.resolve(&rule.text),
        })
        .as_deref();
    let glob = is_glob(&w.text);
    // The common case — a plain relative word in a known directory against a
    // resolved rule path — compares without building the joined path.
    if let (Some(target), Some(cwd)) = (rule_path, res.cwd)
        && !glob
        && cwd.starts_with('/')
        && needs_cwd(&w.text)
        && !w.text.starts_with(['~', '$'])
        && let Some(eq) = join_eq(cwd, &w.text, target)
    {
        return eq;
    }
    let word_path = res.resolve(&w.text);
    match (rule_path, word_path) {
        (Some(rule_path), Some(word_path)) => {
            if word_path == rule_path {
                return true;
            }
            if glob {
                // `rm -rf /etc/*` removes what the glob expands to: any rule
                // path the glob can match, and, for a trailing `/*`, the
                // directory it empties.
                if rule_path != "/" && path_match(&word_path, rule_path) {
                    return true;
                }
                if let Some(dir) = word_path.strip_suffix("/*") {
                    let dir = if dir.is_empty() { "/" } else { dir };
                    return !is_glob(dir) && dir == rule_path;
                }
            }
            false
        }
        // The command's directory is unknown (after `cd $X`): a relative
        // word is `<somewhere>/word`.
        (Some(rule_path), None) => match fold_relative(&w.text) {
            None => true,
            Some(rel) if rel.is_empty() || glob => true,
            Some(rel) => is_suffix_path(rule_path, &rel),
        },
        (None, Some(word_path)) => match fold_relative(&rule.text) {
            None => true,
            Some(rel) if rel.is_empty() || glob => true,
            Some(rel) => is_suffix_path(&word_path, &rel),
        },
        (None, None) => match (fold_relative(&rule.text), fold_relative(&w.text)) {
            (Some(r), Some(x)) => r == x || (glob && path_match(&x, &r)),
            _ => true,
        },
    }
}

/// True when absolute `path` ends with the relative path `rel` at a
/// component boundary (`/a/b/c` ends with `b/c`).
fn is_suffix_path(path: &str, rel: &str) -> bool {
    path.len() > rel.len()
        && path.ends_with(rel)
        && path.as_bytes()[path.len() - rel.len() - 1] == b'/'
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::{Redirect, Via};

    fn env() -> Env {
        Env::new("/home/dev", "/home/dev/proj")
    }

    fn word(t: &str) -> Word {
        if t.contains('$') {
            Word {
                text: t.to_string(),
                dynamic: true,
            }
        } else {
            Word::lit(t)
        }
    }

    /// A simple command from whitespace-separated words; words with `$` are dynamic.
    fn cmd(line: &str) -> SimpleCommand {
        let argv: Vec<Word> = line.split_whitespace().map(word).collect();
        let program = argv
            .first()
            .map(|w| basename(&w.text).to_string())
            .unwrap_or_default();
        SimpleCommand {
            program,
            argv,
            cwd: Some("/home/dev/proj".into()),
            ..Default::default()
        }
    }

    fn pat(s: &str) -> ExecPattern {
        ExecPattern::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn shell_words_respects_quotes() {
        let w: Vec<String> = shell_words(r#"git commit -m "a b" 'c d' e\ f "x\"y""#)
            .unwrap()
            .into_iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(w, ["git", "commit", "-m", "a b", "c d", "e f", "x\"y"]);
        assert!(shell_words("echo 'open").is_err());
        assert!(shell_words("echo \"open").is_err());
        assert!(shell_words("ls && rm").is_err());
        assert!(shell_words("ls '&&'").is_ok());
        assert_eq!(shell_words("  ").unwrap(), vec![]);
        assert_eq!(shell_words("''").unwrap()[0].text, "");
    }

    #[test]
    fn parse_errors() {
        for bad in [
            ":*",
            "",
            "git * push",
            "domain:docs.rs",
            "ls; rm",
            "echo 'x",
            "/",
        ] {
            assert!(ExecPattern::parse(bad).is_err(), "{bad:?} should not parse");
        }
        assert!(pat("npm run test *").open);
        assert!(!pat("echo '*'").open);
    }

    #[test]
    fn strict_table() {
        let cases: &[(&str, &str, bool)] = &[
            ("git push:*", "git push", true),
            ("git push:*", "git push origin main", true),
            ("git push:*", "git pull", false),
            ("git push:*", "git", false),
            ("npm run test", "npm run test", true),
            ("npm run test", "npm run test --watch", false),
            ("npm run test", "npm run", false),
            ("npm run test *", "npm run test x", true),
            // Dynamic words are never vouched for.
            ("cargo test:*", "cargo $SUB", false),
            ("cargo test:*", "$CARGO test", false),
            // Extra dynamic words after an open prefix are data, not compared.
            ("cargo test:*", "cargo test $NAME", true),
            // Program by bare name or the exact path the rule wrote.
            ("/bin/ls", "ls", true),
            ("/bin/ls", "/bin/ls", true),
            ("ls", "/tmp/evil/ls", false),
            ("ls", "./ls", false),
            // Strict: no set semantics for flags.
            ("rm -rf build", "rm -fr build", false),
            ("rm -rf build", "rm -rf build", true),
        ];
        for (rule, line, want) in cases {
            assert_eq!(
                pat(rule).matches_strict(&cmd(line)),
                *want,
                "strict {rule:?} vs {line:?}"
            );
        }
    }

    #[test]
    fn strict_refuses_privileged_remote_assignments_and_writes() {
        let p = pat("cargo test:*");
        let mut c = cmd("cargo test");
        assert!(p.matches_strict(&c));
        c.privileged = true;
        assert!(!p.matches_strict(&c));
        let mut c = cmd("cargo test");
        c.remote = Some("prod".into());
        assert!(!p.matches_strict(&c));
        let mut c = cmd("cargo test");
        c.assignments = vec![("LD_PRELOAD".into(), Word::lit("/tmp/x.so"))];
        assert!(!p.matches_strict(&c));
        let mut c = cmd("cargo test");
        c.redirects = vec![Redirect {
            kind: RedirectKind::Write,
            target: Word::lit("/etc/passwd"),
        }];
        assert!(!p.matches_strict(&c));
        c.redirects = vec![
            Redirect {
                kind: RedirectKind::Write,
                target: Word::lit("/dev/null"),
            },
            Redirect {
                kind: RedirectKind::Dup,
                target: Word::lit("1"),
            },
        ];
        assert!(p.matches_strict(&c));
        // Where the command was found does not matter to the rule itself.
        c.via = vec![Via {
            wrapper: "xargs".into(),
        }];
        assert!(p.matches_strict(&c));
    }

    #[test]
    fn broad_table() {
        let cases: &[(&str, &str, bool)] = &[
            // Flags as sets.
            ("rm -rf /", "rm -rf /", true),
            ("rm -rf /", "rm -fr /", true),
            ("rm -rf /", "rm -r -f /", true),
            ("rm -rf /", "rm -f -r -v /", true),
            ("rm -rf /", "rm -r /", false),
            ("rm -rf /", "rm -Rf /", false),
            ("rm -rf /", "rm -rf -- /", true),
            // After `--` a dash word is a positional, not a flag.
            ("rm -rf /", "rm -- -rf /", false),
            // Path equivalence.
            ("rm -rf /", "rm -rf //", true),
            ("rm -rf /", "rm -rf /./", true),
            ("rm -rf /", "rm -rf /tmp/..", true),
            ("rm -rf /", "rm -rf /tmp", false),
            ("rm -rf ~", "rm -rf /home/dev", true),
            ("rm -rf ~", "rm -rf ~/", true),
            ("rm -rf $HOME", "rm -rf ~", true),
            ("rm -rf ~", "rm -rf /home/dev/proj", false),
            ("rm -rf build", "rm -rf ./build", true),
            ("rm -rf build", "rm -rf /home/dev/proj/build", true),
            // Globs in the command cover what they can expand to.
            ("rm -rf /", "rm -rf /*", true),
            ("rm -rf /etc", "rm -rf /e*", true),
            ("rm -rf ~", "rm -rf ~/*", true),
            ("rm -rf /etc", "rm -rf /tmp/*", false),
            ("rm -rf /", "rm -rf /e*", false),
            ("rm -rf /etc/ssh", "rm -rf /etc/*/", true),
            // Extra positionals do not dodge a deny.
            ("rm -rf /", "rm -rf /tmp /", true),
            ("rm -rf /", "rm -rf / /tmp", true),
            ("git reset --hard", "git reset --hard HEAD~3", true),
            // Dynamic words.
            ("rm -rf /", "rm -rf $TARGET", true),
            ("rm -rf /", "rm -$FLAGS /", true),
            ("rm -rf /", "$RM -rf /", true),
            // Program: basename, case-insensitive.
            ("rm -rf /", "/bin/rm -rf /", true),
            ("/bin/rm -rf /", "rm -rf /", true),
            ("rm -rf /", "RM -rf /", true),
            ("rm -rf /", "rmdir -rf /", false),
            // Long flags and abbreviations.
            ("git push --force:*", "git push --force origin", true),
            ("git push --force:*", "git push --forc origin", true),
            ("git push --force:*", "git push --for origin", true),
            ("git push --force:*", "git push --fo origin", false),
            ("git push --force:*", "git push origin", false),
            ("git push --force", "git push --force=yes", true),
            ("git push --force-with-lease", "git push --force", true),
            // Order of positionals matters; gaps (option values) do not.
            ("git push:*", "git -C /repo push", true),
            ("git push origin main", "git push main origin", false),
            ("git push:*", "git pull", false),
            ("exec:*", "exec", true),
        ];
        let e = env();
        for (rule, line, want) in cases {
            assert_eq!(
                pat(rule).matches_broad(&cmd(line), &e),
                *want,
                "broad {rule:?} vs {line:?}"
            );
        }
    }

    #[test]
    fn relative_words_use_the_commands_own_directory() {
        let e = env();
        let p = pat("rm -rf /etc");
        let mut c = cmd("rm -rf etc");
        assert!(!p.matches_broad(&c, &e));
        c.cwd = Some("/".into());
        assert!(p.matches_broad(&c, &e));
        c.cwd = Some("/var".into());
        let c2 = SimpleCommand {
            argv: vec![Word::lit("rm"), Word::lit("-rf"), Word::lit("../etc")],
            ..c.clone()
        };
        assert!(p.matches_broad(&c2, &e));
    }

    #[test]
    fn unknown_directory_makes_relative_words_suffixes() {
        let e = env();
        let unknown = |line: &str| SimpleCommand {
            cwd: None,
            ..cmd(line)
        };
        let cases: &[(&str, &str, bool)] = &[
            ("rm -rf /", "rm -rf .", true),
            ("rm -rf /", "rm -rf ..", true),
            ("rm -rf /", "rm -rf *", true),
            ("rm -rf /", "rm -rf build", false),
            ("rm -rf /etc", "rm -rf etc", true),
            ("rm -rf /etc", "rm -rf a/../etc", true),
            ("rm -rf /etc", "rm -rf tc", false),
            ("rm -rf ~", "rm -rf dev", true),
            ("rm -rf build", "rm -rf ./build", true),
            ("rm -rf build", "rm -rf /x/build", true),
            ("rm -rf build", "rm -rf /x/other", false),
            ("rm -rf build", "rm -rf other", false),
        ];
        for (rule, line, want) in cases {
            assert_eq!(
                pat(rule).matches_broad(&unknown(line), &e),
                *want,
                "broad {rule:?} vs {line:?} in an unknown directory"
            );
        }
    }

    #[test]
    fn join_eq_folds_dots() {
        assert_eq!(join_eq("/a/b", "c", "/a/b/c"), Some(true));
        assert_eq!(join_eq("/a/b", "./c/", "/a/b/c"), Some(true));
        assert_eq!(join_eq("/a/b", "../../..", "/"), Some(true));
        assert_eq!(join_eq("/a/b", "..", "/a"), Some(true));
        assert_eq!(join_eq("/a/b", "c", "/a/b"), Some(false));
        assert_eq!(join_eq("/a/b", ".", "/a/b/c"), Some(false));
        assert_eq!(join_eq("/", "x", "/x"), Some(true));
        let deep = "d/".repeat(60);
        assert_eq!(join_eq("/", &deep, "/"), None);
    }
}
