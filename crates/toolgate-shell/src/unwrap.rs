//! Wrappers and interpreters: `sudo`, `env`, `xargs`, `find -exec`,
//! `bash -c`, `ssh`, `docker exec`, `python -c`, … Each wrapper is reported
//! itself (marked [`SimpleCommand::wrapper`]) and the command it runs is
//! analyzed in its place, so no wrapper hides what runs inside it.
//!
//! This module is the dispatcher (`emit_full`) and the nested-script
//! helpers built on the analyzer. The wrappers themselves are in
//! `wrappers`, `privilege`, `repeaters`, `remote`, `embedded` and
//! `interpreters`, the argv helpers they share in `argv`; what a script
//! downloads, clones and writes is followed in `tracking`.

use super::analyzer::Analyzer;
use super::argv::{display, skip_options};
use super::interpreters::{DB_CLIENTS, SHELLS, interpreter_of};
use super::scope::Scope;
use super::tracking::{clone_target, download_target, literal_output, record_written};
use super::types::*;
use super::wrappers::ARGV_WRAPPERS;

/// Deepest chain of wrappers followed (`sudo env nice bash -c …`).
const MAX_WRAPPERS: usize = 32;

/// The program name bash would run for `argv[0]`: its basename.
pub(crate) fn program_name(argv0: &str) -> String {
    let base = argv0.rsplit('/').next().unwrap_or(argv0);
    if base.is_empty() {
        argv0.to_string()
    } else {
        base.to_string()
    }
}

impl Analyzer<'_> {
    /// Emits one simple command and everything it runs.
    pub(crate) fn emit_full(
        &mut self,
        argv: Vec<Word>,
        assignments: Vec<(String, Word)>,
        scope: &mut Scope,
        script_from_procsub: bool,
    ) {
        let Some(first) = argv.first().cloned() else {
            return;
        };
        if scope.via.len() > MAX_WRAPPERS {
            // `env env env … ls`: no real command nests this deep
            self.opaque(
                "the command is wrapped too deeply to analyze",
                &display(&argv),
            );
            return;
        }
        if !first.dynamic
            && let Some(alias) = scope.state.aliases.get(&first.text).cloned()
        {
            let rest: Vec<String> = argv[1..].iter().map(|w| crate::quote(&w.text)).collect();
            let text = format!("{alias} {}", rest.join(" "));
            let mut inner = scope.clone();
            inner.state_mut().aliases.remove(&first.text);
            inner.via.push(Via {
                wrapper: "alias".into(),
            });
            self.analyze_text(&text, &mut inner);
            return;
        }
        if self.call_function(&argv, scope) {
            return;
        }
        let program = program_name(&first.text);
        if first.dynamic {
            self.opaque(
                "the command name is only known at run time",
                &display(&argv),
            );
        }
        let mut cmd = SimpleCommand {
            program: program.clone(),
            argv,
            assignments,
            redirects: scope.redirects.clone(),
            stdin_from: scope.stdin_from.clone(),
            via: scope.via.clone(),
            privileged: scope.privileged,
            remote: scope.remote.clone(),
            inline_code: None,
            cwd: scope.cwd.clone(),
            wrapper: false,
        };
        if let Some(dir) = archive_directory(&program, &cmd.argv[1..]) {
            // `tar czf - -C ~ .ssh`: the operands are read from (or
            // extracted into) that directory.
            cmd.cwd = match (&cmd.cwd, dir.dynamic) {
                (_, true) => None,
                (Some(cwd), false) => Some(self.env.resolve_from(cwd, &dir.text)),
                (None, false) => (dir.text.starts_with('/') || dir.text.starts_with('~'))
                    .then(|| self.env.resolve(&dir.text)),
            };
        }
        if first.dynamic {
            self.push(cmd);
            return;
        }
        // A loop reading a tree enumeration (`find ~ | while read f; do rm
        // "$f"; done`): a per-item operation on the read value acts on the
        // whole tree, so it is judged on the tree's roots, recursively.
        let in_loop_over_tree = scope.via.iter().any(|v| v.wrapper == "loop")
            && super::repeaters::feeds_tree(&scope.stdin_from)
            && cmd.argv[1..].iter().any(|w| w.dynamic);
        // Inside a per-entry command (`find -exec sh -c …`, a `for` loop
        // over `$(find …)`): an operand that is an entry, or known only at
        // run time, stands for the whole tree.
        let entry_of_tree = scope.tree.as_ref().filter(|roots| {
            cmd.argv[1..]
                .iter()
                .any(|w| w.dynamic || roots.iter().any(|r| r.text == w.text))
        });
        // The entry's stand-in: the tree's first known root, or the first
        // word a loop over the tree reads.
        let stand_in = match entry_of_tree {
            Some(roots) => Some(roots.iter().find(|r| !r.dynamic).cloned()),
            None if in_loop_over_tree => Some(
                scope
                    .stdin_text
                    .as_deref()
                    .and_then(|t| t.split_whitespace().next())
                    .map(Word::lit),
            ),
            None => None,
        };
        if let Some(root) = stand_in {
            let items: Vec<Word> = cmd
                .argv
                .iter()
                .enumerate()
                .map(|(i, w)| match (&root, i > 0 && w.dynamic) {
                    (Some(r), true) => r.clone(),
                    _ => w.clone(),
                })
                .collect();
            let tree = super::repeaters::over_tree(items.clone());
            if tree != items {
                cmd.program = program_name(&tree[0].text);
                cmd.argv = tree;
            }
        }
        // The per-entry rewrite above may have changed the program.
        let program = cmd.program.clone();
        let args: Vec<Word> = cmd.argv[1..].to_vec();
        self.last_output = None;
        if !scope.state.cloned.is_empty() && self.touches_clone(&program, &first, &args, scope) {
            cmd.stdin_from.push("<clone>".into());
        }
        if program == "git"
            && let Some(dir) = clone_target(&args)
        {
            let abs = self.resolve_word(dir, scope);
            if !abs.dynamic {
                scope.state_mut().cloned.push(abs.text);
            }
        }
        match program.as_str() {
            "cd" | "pushd" | "chdir" => {
                let target = args
                    .iter()
                    .find(|w| !w.text.starts_with('-') || w.text == "-");
                scope.cwd = match target {
                    None => Some(self.env.home.clone()),
                    Some(w) if w.text == "-" || w.dynamic => None,
                    Some(w) => scope
                        .cwd
                        .as_ref()
                        .map(|c| self.env.resolve_from(c, &w.text))
                        .or_else(|| {
                            (w.text.starts_with('/') || w.text.starts_with('~'))
                                .then(|| self.env.resolve(&w.text))
                        }),
                };
                self.push(cmd);
            }
            "alias" => {
                for a in &args {
                    if let Some((name, value)) = a.text.split_once('=') {
                        if a.dynamic {
                            self.opaque(
                                "an alias is defined from a value known only at run time",
                                &a.text,
                            );
                        }
                        scope
                            .state_mut()
                            .aliases
                            .insert(name.to_string(), value.to_string());
                    }
                }
                self.push(cmd);
            }
            "eval" => {
                cmd.wrapper = true;
                // A setup idiom counts only while its program is the one
                // installed: no function or alias of that name, no PATH of
                // this command's own.
                let path_changed = cmd.assignments.iter().any(|(n, _)| n == "PATH")
                    || scope.state.vars.contains_key("PATH");
                let setup: Vec<bool> = args
                    .iter()
                    .map(|w| {
                        w.dynamic
                            && !path_changed
                            && crate::setup_idiom::prints_shell_setup(&w.text)
                            && crate::setup_idiom::program_name(&w.text).is_some_and(|p| {
                                !scope.state.aliases.contains_key(p)
                                    && !scope.state.functions.iter().any(|(f, _)| f == p)
                            })
                    })
                    .collect();
                self.push(cmd);
                if args.iter().zip(&setup).any(|(w, s)| w.dynamic && !s) {
                    self.opaque(
                        "eval runs text that is only known at run time",
                        &display(&args),
                    );
                }
                // `eval "$(rbenv init -)"`: what runs is the setup program's
                // output; the program itself is what can be judged.
                let setup_only = !args.is_empty() && setup.iter().all(|s| *s);
                let text = if setup_only {
                    let inner: Vec<&str> = args
                        .iter()
                        .map(|w| crate::setup_idiom::inner_command(&w.text))
                        .collect();
                    inner.join("; ")
                } else {
                    let words: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
                    words.join(" ")
                };
                self.nested(&text, scope, "eval");
            }
            "source" | "." => {
                if let Some(content) = args.first().and_then(|f| self.written_script(f, scope)) {
                    self.push(cmd);
                    self.nested(&content, scope, "source");
                    return;
                }
                if (script_from_procsub
                    || args
                        .first()
                        .is_some_and(|a| a.text == "/dev/stdin" || a.text == "-"))
                    && let Some(text) = scope.stdin_text.clone()
                {
                    self.nested(&text, scope, "source");
                }
                // Sourcing a file downloaded earlier runs network code.
                if args.first().is_some_and(|f| self.is_downloaded(f, scope)) {
                    cmd.stdin_from.push("<download>".into());
                }
                self.push(cmd);
            }
            "echo" | "printf" | "cat" | "base64" | "ls" | "xxd" | "basenc" | "rev" | "tr"
            | "base32" | "openssl" => {
                let output = literal_output(&program, &args, scope);
                if let Some(text) = &output {
                    record_written(scope, &cmd.redirects, text);
                }
                self.push(cmd);
                self.last_output_dynamic = output.is_none()
                    && matches!(program.as_str(), "echo" | "printf")
                    && args.iter().any(|w| w.dynamic);
                self.last_output = output;
            }
            "env" => self.unwrap_env(cmd, args, scope),
            "sudo" => self.unwrap_sudo(cmd, args, scope),
            "su" | "runuser" => self.unwrap_su(cmd, args, scope),
            "command" => {
                // `command -v x` only looks x up.
                let lookup = args
                    .iter()
                    .take_while(|w| w.text.starts_with('-'))
                    .any(|w| w.text.contains('v') || w.text.contains('V'));
                let start = skip_options(&args, &[]);
                cmd.wrapper = true;
                self.push(cmd);
                if !lookup && start < args.len() {
                    self.inner_argv(args[start..].to_vec(), scope, "command", false, None);
                }
            }
            "xargs" => self.unwrap_xargs(cmd, args, scope),
            "find" => self.unwrap_find(cmd, args, scope),
            "fd" | "fdfind" => self.unwrap_fd(cmd, args, scope),
            "watch" => self.unwrap_watch(cmd, args, scope),
            "ssh" => self.unwrap_ssh(cmd, args, scope),
            "docker" | "podman" | "nerdctl" | "docker-compose" => {
                self.unwrap_container(cmd, args, scope)
            }
            "kubectl" | "oc" => self.unwrap_kubectl(cmd, args, scope),
            "flock" => {
                let c_at = args
                    .iter()
                    .position(|w| w.text == "-c" || w.text == "--command");
                cmd.wrapper = true;
                self.push(cmd);
                if let Some(i) = c_at {
                    if let Some(script) = args.get(i + 1) {
                        self.script_word(script, scope, "flock -c");
                    }
                } else {
                    let start =
                        skip_options(&args, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
                    if start + 1 < args.len() {
                        self.inner_argv(args[start + 1..].to_vec(), scope, "flock", false, None);
                    }
                }
            }
            "pipx" | "uv" | "poetry" | "pdm" | "hatch" | "pipenv" | "rye" | "bundle" | "pnpm"
            | "yarn" | "npm" | "conda" | "mamba"
                if args
                    .first()
                    .is_some_and(|w| matches!(w.text.as_str(), "run" | "exec" | "dlx" | "x"))
                    && !(matches!(program.as_str(), "npm" | "pnpm" | "yarn" | "bundle")
                        && args[0].text == "run") =>
            {
                // `uv run pytest`, `pnpm dlx x`, `bundle exec rake`: runs the named program
                let start = 1 + skip_options(
                    &args[1..],
                    &[
                        "--with",
                        "--from",
                        "-p",
                        "--python",
                        "--package",
                        "-n",
                        "--name",
                        "-c",
                        "--call",
                    ],
                );
                cmd.wrapper = start < args.len();
                self.push(cmd);
                if start < args.len() {
                    self.inner_argv(args[start..].to_vec(), scope, &program, false, None);
                }
            }
            "ip" if args.len() > 3 && args[0].text == "netns" && args[1].text == "exec" => {
                cmd.wrapper = true;
                self.push(cmd);
                self.inner_argv(args[3..].to_vec(), scope, "ip netns exec", true, None);
            }
            "tmux" => self.unwrap_tmux(cmd, args, scope),
            "rsync" | "scp" | "sftp" | "tar" | "gtar" | "sed" | "gsed" | "make" | "gmake"
            | "ansible" | "git" => self.embedded_commands(cmd, args, scope),
            "at" | "batch" => {
                self.push(cmd);
                if let Some(text) = scope.stdin_text.clone() {
                    self.nested(&text, scope, "at");
                }
            }
            p if SHELLS.contains(&p) => self.unwrap_shell(cmd, args, scope),
            "curl" | "wget" | "aria2c" | "http" | "xh" => {
                // The file it saves, or (`curl URL > a.sh`, `wget -O- URL
                // > a.sh`) the file its output is redirected into.
                let mut saved: Vec<Word> = download_target(&program, &args)
                    .filter(|w| w.text != "-")
                    .into_iter()
                    .collect();
                if saved.is_empty() {
                    saved.extend(
                        cmd.redirects
                            .iter()
                            .filter(|r| {
                                matches!(r.kind, RedirectKind::Write | RedirectKind::Append)
                            })
                            .map(|r| r.target.clone()),
                    );
                }
                for file in saved {
                    let abs = self.resolve_word(file, scope);
                    if !abs.dynamic && scope.state.downloaded.len() < 32 {
                        scope.state_mut().downloaded.push(abs.text);
                    }
                }
                self.push(cmd);
            }
            p if DB_CLIENTS.contains(&p) => {
                // A client given no statement, file or stdin opens a prompt.
                const RUNS: &[&str] = &[
                    "-c",
                    "--command",
                    "-e",
                    "--execute",
                    "-f",
                    "--file",
                    "-x",
                    "--eval",
                    "-cmd",
                    "-i",
                    "-Q",
                    "-q",
                    "--query",
                    "-s",
                    "-S",
                ];
                let runs_something = args.iter().any(|w| {
                    RUNS.contains(&w.text.as_str())
                        || RUNS
                            .iter()
                            .any(|o| o.starts_with("--") && w.text.starts_with(&format!("{o}=")))
                }) || (p == "sqlite3"
                    && args.iter().filter(|w| !w.text.starts_with('-')).count() >= 2)
                    || (p == "redis-cli" && args.iter().any(|w| !w.text.starts_with('-')));
                if !runs_something && !super::interpreters::stdin_fed(&cmd, scope) {
                    self.interactive(p, &cmd);
                }
                if let Some(text) = scope.stdin_text.clone() {
                    cmd.inline_code = Some(InlineCode {
                        language: p.to_string(),
                        code: text,
                    });
                }
                self.push(cmd);
            }
            "apply_patch" | "applypatch" => self.apply_patch(cmd, &args, scope),
            "tee" => {
                if let Some(text) = scope.stdin_text.clone() {
                    let targets: Vec<Redirect> = args
                        .iter()
                        .filter(|w| !w.text.starts_with('-'))
                        .map(|w| Redirect {
                            kind: if args.iter().any(|a| a.text == "-a" || a.text == "--append") {
                                RedirectKind::Append
                            } else {
                                RedirectKind::Write
                            },
                            target: self.resolve_word(w.clone(), scope),
                        })
                        .collect();
                    record_written(scope, &targets, &text);
                }
                self.push(cmd);
            }
            p => {
                if first.text.contains('/') && self.is_downloaded(&first, scope) {
                    cmd.stdin_from.push("<download>".into());
                }
                if first.text.contains('/')
                    && let Some(content) = self.written_script(&first, scope)
                {
                    cmd.wrapper = true;
                    self.push(cmd);
                    self.nested(&content, scope, "script");
                    return;
                }
                if let Some((lang, code_opts)) = interpreter_of(p) {
                    self.interpreter(cmd, args, scope, lang, code_opts);
                    return;
                }
                if let Some((name, value_opts, skip, privileged)) =
                    ARGV_WRAPPERS.iter().find(|w| w.0 == p)
                {
                    self.argv_wrapper(cmd, args, scope, name, value_opts, *skip, *privileged);
                    return;
                }
                self.push(cmd);
            }
        }
    }

    /// Analyzes an inner argv in a scope derived from `scope`.
    pub(crate) fn inner_argv(
        &mut self,
        argv: Vec<Word>,
        scope: &Scope,
        via: &str,
        privileged: bool,
        remote: Option<String>,
    ) {
        if argv.is_empty() {
            return;
        }
        let mut inner = scope.clone();
        inner.via.push(Via {
            wrapper: via.to_string(),
        });
        inner.privileged |= privileged;
        if remote.is_some() {
            inner.remote = remote;
            inner.cwd = None;
        }
        self.emit(argv, Vec::new(), Vec::new(), &mut inner);
    }

    /// Analyzes shell text run by a wrapper.
    pub(crate) fn nested(&mut self, text: &str, scope: &Scope, via: &str) {
        let mut inner = scope.clone();
        inner.via.push(Via {
            wrapper: via.to_string(),
        });
        inner.redirects.clear();
        self.analyze_text(text, &mut inner);
    }

    /// A word holding a script: analyzed when known, opaque otherwise.
    pub(super) fn script_word(&mut self, script: &Word, scope: &Scope, via: &str) {
        if script.dynamic {
            self.opaque(
                format!("{via} runs a script that is only known at run time"),
                &script.text,
            );
        }
        self.nested(&script.text, scope, via);
    }
}

/// The directory an archiver works in (`tar -C dir`, `--directory=dir`),
/// when the command names one.
fn archive_directory(program: &str, args: &[Word]) -> Option<Word> {
    if !matches!(program, "tar" | "gtar" | "bsdtar") {
        return None;
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let t = a.text.as_str();
        if t == "--" {
            return None;
        }
        if t == "-C" || t == "--directory" || t == "--cd" {
            return it.next().cloned();
        }
        if let Some(v) = t.strip_prefix("--directory=") {
            return Some(a.clone().with_text(v));
        }
        if let Some(v) = t.strip_prefix("-C").filter(|v| !v.is_empty()) {
            return Some(a.clone().with_text(v));
        }
    }
    None
}
