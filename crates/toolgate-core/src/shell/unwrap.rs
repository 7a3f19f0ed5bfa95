//! Wrappers and interpreters: `sudo`, `env`, `xargs`, `find -exec`,
//! `bash -c`, `ssh`, `docker exec`, `python -c`, … Each wrapper is reported
//! itself (marked [`SimpleCommand::wrapper`]) and the command it runs is
//! analyzed in its place, so no wrapper hides what runs inside it.

use super::inline;
use super::types::*;
use super::walk::{Analyzer, Scope};
use super::words;

/// Deepest chain of wrappers followed (`sudo env nice bash -c …`).
const MAX_WRAPPERS: usize = 32;

/// Shells that run a `-c` string, a script file, or stdin.
pub const SHELLS: &[&str] =
    &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh", "rbash", "ksh93", "posh"];

/// Wrappers whose command is the rest of argv after their options and a
/// fixed number of positionals. (name, options taking a value, positionals to skip, privileged)
const ARGV_WRAPPERS: &[(&str, &[&str], usize, bool)] = &[
    ("nohup", &[], 0, false),
    ("nice", &["-n", "--adjustment"], 0, false),
    ("ionice", &["-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"], 0, false),
    ("timeout", &["-s", "--signal", "-k", "--kill-after"], 1, false),
    ("gtimeout", &["-s", "--signal", "-k", "--kill-after"], 1, false),
    ("time", &["-f", "--format", "-o", "--output"], 0, false),
    ("stdbuf", &["-i", "-o", "-e", "--input", "--output", "--error"], 0, false),
    ("setsid", &[], 0, false),
    ("chroot", &["--userspec", "--groups"], 1, true),
    ("busybox", &[], 0, false),
    ("toybox", &[], 0, false),
    ("builtin", &[], 0, false),
    ("exec", &["-a"], 0, false),
    ("doas", &["-u", "-C"], 0, true),
    ("pkexec", &["--user"], 0, true),
    ("run0", &["--user", "-u", "--group", "-g", "--setenv", "--unit", "--property", "--description", "--slice", "--nice", "--chdir", "-D"], 0, true),
    ("strace", &["-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X"], 0, false),
    ("ltrace", &["-e", "-o", "-p", "-s", "-u", "-n", "-a"], 0, false),
    ("taskset", &[], 1, false),
    ("unshare", &["--map-user", "--map-group", "--propagation", "--setgroups", "-S", "-G", "--wd", "-R", "--root"], 0, false),
    ("nsenter", &["-t", "--target", "-S", "-G", "--wd", "-w", "-R", "--root", "--setuid", "--setgid"], 0, true),
    ("firejail", &[], 0, false),
    ("torsocks", &[], 0, false),
    ("proxychains", &["-f"], 0, false),
    ("proxychains4", &["-f"], 0, false),
    ("catchsegv", &[], 0, false),
    ("unbuffer", &[], 0, false),
    ("chronic", &[], 0, false),
    ("caffeinate", &["-t", "-w"], 0, false),
    ("xvfb-run", &["-n", "--server-num", "-s", "--server-args", "-f", "--auth-file", "-e", "--error-file", "-p"], 0, false),
    ("dbus-launch", &[], 0, false),
    ("systemd-run", &["--unit", "-u", "--property", "-p", "--description", "--slice", "--uid", "--gid", "--nice", "--working-directory", "-E", "--setenv", "--on-calendar", "--on-active", "--on-boot", "--timer-property", "-M", "--machine", "-H", "--host"], 0, false),
    ("flatpak-spawn", &[], 0, false),
    ("prlimit", &["-p", "--pid"], 0, false),
    ("numactl", &["-C", "-N", "-m", "-i", "-p", "--cpunodebind", "--membind", "--interleave", "--preferred", "--physcpubind"], 0, false),
    ("cgexec", &["-g"], 0, false),
    ("valgrind", &[], 0, false),
    ("sg", &[], 1, true),
    ("screen", &["-S", "-c", "-t", "-h", "-e", "-p", "-T", "-L", "-Logfile"], 0, false),
    ("parallel", &["-j", "--jobs", "-S", "--sshlogin", "--joblog", "--results", "--delay", "--timeout", "-N", "-n"], 0, false),
    ("entr", &[], 0, false),
    ("faketime", &["-f"], 1, false),
    ("script", &["-E", "--echo", "-I", "-O", "-T", "--log-timing", "-t"], 0, false),
    // package runners: the package's program is what runs
    ("npx", &["-p", "--package", "-c", "--call", "--node-options"], 0, false),
    ("bunx", &["-p", "--package"], 0, false),
    ("pnpx", &[], 0, false),
    ("uvx", &["--from", "--with", "-p", "--python"], 0, false),
    ("pipx", &["--spec", "--python"], 0, false),
];

/// Options of `sudo` that take a value.
const SUDO_VALUE_OPTS: &[&str] = &[
    "-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "--close-from", "-D", "--chdir", "-r",
    "--role", "-t", "--type", "-U", "--other-user", "-T", "--command-timeout", "-R", "--chroot",
];

/// Interpreters and the options that introduce inline code.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("pypy", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
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
const DB_CLIENTS: &[&str] = &[
    "psql", "mysql", "mariadb", "sqlite3", "mongo", "mongosh", "redis-cli", "valkey-cli", "cqlsh", "sqlcmd", "duckdb",
    "clickhouse-client", "sqlplus", "cockroach", "influx",
];

fn lang_is_vim(lang: &str) -> bool {
    matches!(lang, "vim" | "nvim" | "vi" | "ex" | "view" | "gvim")
}

/// Records text written by redirections (`> f` replaces, `>> f` appends).
fn record_written(scope: &mut Scope, redirects: &[Redirect], text: &str) {
    for r in redirects {
        if r.target.dynamic || r.target.text.starts_with("/dev/") {
            continue;
        }
        let content = match r.kind {
            RedirectKind::Write => text.to_string(),
            RedirectKind::Append => format!("{}{text}", scope.written_content(&r.target.text).unwrap_or("")),
            _ => continue,
        };
        if scope.state.written.len() < 32 {
            scope.state_mut().written.push((r.target.text.clone(), content));
        }
    }
}

/// The directory `git clone URL [DIR]` creates.
fn clone_target(args: &[Word]) -> Option<Word> {
    let at = args.iter().position(|w| w.text == "clone")?;
    let mut operands = Vec::new();
    let mut i = at + 1;
    while i < args.len() {
        let t = args[i].text.as_str();
        if matches!(t, "-b" | "--branch" | "-o" | "--origin" | "--depth" | "-c" | "--config" | "--reference" | "--separate-git-dir" | "-u" | "--upload-pack" | "-j" | "--jobs" | "--filter" | "--template") {
            i += 2;
            continue;
        }
        if !t.starts_with('-') {
            operands.push(args[i].clone());
        }
        i += 1;
    }
    match operands.as_slice() {
        [_, dir, ..] => Some(dir.clone()),
        [url] => {
            let name = url.text.trim_end_matches('/').rsplit(['/', ':']).next()?.trim_end_matches(".git").to_string();
            (!name.is_empty()).then(|| url.clone().with_text(&name))
        }
        [] => None,
    }
}

/// The file a download command writes, when it names one.
fn download_target(program: &str, args: &[Word]) -> Option<Word> {
    let mut url: Option<&Word> = None;
    let mut i = 0;
    let mut remote_name = false;
    while i < args.len() {
        let a = args[i].text.as_str();
        let value_of = |flag: &str| a.strip_prefix(flag).filter(|v| !v.is_empty());
        match (program, a) {
            ("curl", "-o" | "--output") | ("wget", "-O" | "--output-document") | ("aria2c", "-o" | "--out") | ("http" | "xh", "-o" | "--output") => {
                return args.get(i + 1).cloned();
            }
            ("curl", "-O" | "--remote-name") => remote_name = true,
            _ => {}
        }
        if let Some(v) = value_of("--output=").or_else(|| value_of("--output-document=")) {
            return Some(args[i].clone().with_text(v));
        }
        if program == "curl" && a.starts_with("-o") && a.len() > 2 && !a.starts_with("--") {
            return Some(args[i].clone().with_text(&a[2..]));
        }
        if a.contains("://") {
            url = Some(&args[i]);
        }
        i += 1;
    }
    // `wget URL` and `curl -O URL` save under the URL's last path segment
    let url = url?;
    if program == "wget" || remote_name {
        let name = url.text.split(['?', '#']).next()?.rsplit('/').next()?;
        if !name.is_empty() {
            return Some(url.clone().with_text(name));
        }
    }
    None
}

/// The program name bash would run for `argv[0]`: its basename.
pub fn program_name(argv0: &str) -> String {
    let base = argv0.rsplit('/').next().unwrap_or(argv0);
    if base.is_empty() { argv0.to_string() } else { base.to_string() }
}

/// The interpreter family of a program name (`python3.12` → `python`).
pub fn interpreter_of(program: &str) -> Option<(&'static str, &'static [&'static str])> {
    let lower = program.to_ascii_lowercase();
    let stem = lower.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let stem = stem.strip_suffix(".exe").unwrap_or(stem);
    INTERPRETERS.iter().find(|(name, _)| *name == stem).map(|(n, o)| (*n, *o))
}

/// Index of the first operand in `args`: options (and the values of those in
/// `value_opts`) come before it; `--` ends the options.
fn skip_options(args: &[Word], value_opts: &[&str]) -> usize {
    let takes_value = |letter: &str| value_opts.iter().any(|o| o.len() == 2 && &o[1..] == letter);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a == "-" || args[i].dynamic {
            return i;
        }
        if a.starts_with("--") {
            if !a.contains('=') && value_opts.contains(&a) {
                i += 1;
            }
        } else if a.len() == 2 {
            if takes_value(&a[1..]) {
                i += 1;
            }
        } else if a.get(1..2).is_some_and(|l| !takes_value(l)) && a.get(a.len() - 1..).is_some_and(takes_value) {
            // a cluster such as `-Eu` that ends in an option taking a value;
            // `-n19` (value attached to its option) consumes nothing more
            i += 1;
        }
        i += 1;
    }
    i
}

impl Analyzer<'_> {
    /// The content of a script written earlier in the same command.
    fn written_script(&self, w: &Word, scope: &Scope) -> Option<String> {
        if w.dynamic || scope.state.written.is_empty() {
            return None;
        }
        let abs = self.resolve_word(w.clone(), scope);
        scope.written_content(&abs.text).map(str::to_string)
    }

    /// True when `w` names a file an earlier download in the script wrote.
    fn is_downloaded(&self, w: &Word, scope: &Scope) -> bool {
        if w.dynamic || scope.state.downloaded.is_empty() {
            return false;
        }
        let abs = self.resolve_word(w.clone(), scope);
        scope.state.downloaded.iter().any(|d| d == &abs.text)
    }

    /// True when a build or run tool works on a repository cloned earlier in
    /// the same command (`git clone URL x && make -C x`).
    fn touches_clone(&self, program: &str, first: &Word, args: &[Word], scope: &Scope) -> bool {
        const BUILDERS: &[&str] = &[
            "make", "gmake", "cmake", "ninja", "meson", "npm", "npx", "yarn", "pnpm", "bun", "pip", "pip3", "python", "python3",
            "node", "cargo", "go", "bash", "sh", "zsh", "ruby", "perl", "php", "gradle", "mvn", "bundle", "rake", "just", "docker",
            "podman", "composer", "poetry", "uv", "deno", "swift", "dotnet", "sbt", "mix", "stack", "cabal", "source", ".",
        ];
        let within = |w: &Word| {
            let abs = self.resolve_word(w.clone(), scope);
            !abs.dynamic && scope.state.cloned.iter().any(|c| crate::paths::is_within(&abs.text, c))
        };
        if first.text.contains('/') && within(first) {
            return true;
        }
        if !BUILDERS.contains(&program) {
            return false;
        }
        scope.cwd.as_deref().is_some_and(|cwd| scope.state.cloned.iter().any(|c| crate::paths::is_within(cwd, c)))
            || args.iter().any(|a| {
                let t = a.text.split_once('=').map(|(_, v)| v).unwrap_or(&a.text);
                (t.contains('/') || scope.state.cloned.iter().any(|c| c.ends_with(&format!("/{t}")))) && within(&Word { text: t.to_string(), dynamic: a.dynamic })
            })
    }

    /// Emits one simple command and everything it runs.
    pub(crate) fn emit_full(&mut self, argv: Vec<Word>, assignments: Vec<(String, Word)>, scope: &mut Scope, script_from_procsub: bool) {
        let Some(first) = argv.first().cloned() else { return };
        if scope.via.len() > MAX_WRAPPERS {
            // `env env env … ls`: no real command nests this deep
            self.opaque("the command is wrapped too deeply to analyze", &display(&argv));
            return;
        }
        if !first.dynamic {
            if let Some(alias) = scope.state.aliases.get(&first.text).cloned() {
                let rest: Vec<String> = argv[1..].iter().map(|w| crate::normalize::shell_quote(&w.text)).collect();
                let text = format!("{alias} {}", rest.join(" "));
                let mut inner = scope.clone();
                inner.state_mut().aliases.remove(&first.text);
                inner.via.push(Via { wrapper: "alias".into() });
                self.analyze_text(&text, &mut inner);
                return;
            }
        }
        let program = program_name(&first.text);
        if first.dynamic {
            self.opaque("the command name is only known at run time", &display(&argv));
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
        if first.dynamic {
            self.push(cmd);
            return;
        }
        let args: Vec<Word> = cmd.argv[1..].to_vec();
        self.last_output = None;
        if !scope.state.cloned.is_empty() && self.touches_clone(&program, &first, &args, scope) {
            cmd.stdin_from.push("<clone>".into());
        }
        if program == "git" {
            if let Some(dir) = clone_target(&args) {
                let abs = self.resolve_word(dir, scope);
                if !abs.dynamic {
                    scope.state_mut().cloned.push(abs.text);
                }
            }
        }
        match program.as_str() {
            "cd" | "pushd" | "chdir" => {
                let target = args.iter().find(|w| !w.text.starts_with('-') || w.text == "-");
                scope.cwd = match target {
                    None => Some(self.env.home.clone()),
                    Some(w) if w.text == "-" || w.dynamic => None,
                    Some(w) => scope.cwd.as_ref().map(|c| self.env.resolve_from(c, &w.text)).or_else(|| {
                        (w.text.starts_with('/') || w.text.starts_with('~')).then(|| self.env.resolve(&w.text))
                    }),
                };
                self.push(cmd);
            }
            "alias" => {
                for a in &args {
                    if let Some((name, value)) = a.text.split_once('=') {
                        if a.dynamic {
                            self.opaque("an alias is defined from a value known only at run time", &a.text);
                        }
                        scope.state_mut().aliases.insert(name.to_string(), value.to_string());
                    }
                }
                self.push(cmd);
            }
            "eval" => {
                cmd.wrapper = true;
                self.push(cmd);
                if args.iter().any(|w| w.dynamic) {
                    self.opaque("eval runs text that is only known at run time", &display(&args));
                }
                let text = args.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
                self.nested(&text, scope, "eval");
            }
            "source" | "." => {
                if let Some(content) = args.first().and_then(|f| self.written_script(f, scope)) {
                    self.push(cmd);
                    self.nested(&content, scope, "source");
                    return;
                }
                if script_from_procsub || args.first().is_some_and(|a| a.text == "/dev/stdin" || a.text == "-") {
                    if let Some(text) = scope.stdin_text.clone() {
                        self.nested(&text, scope, "source");
                    }
                }
                self.push(cmd);
            }
            "echo" | "printf" | "cat" | "base64" | "ls" => {
                let output = literal_output(&program, &args, scope);
                if let Some(text) = &output {
                    record_written(scope, &cmd.redirects, text);
                }
                self.push(cmd);
                self.last_output_dynamic = output.is_none() && matches!(program.as_str(), "echo" | "printf") && args.iter().any(|w| w.dynamic);
                self.last_output = output;
            }
            "env" => self.unwrap_env(cmd, args, scope),
            "sudo" => self.unwrap_sudo(cmd, args, scope),
            "su" | "runuser" => self.unwrap_su(cmd, args, scope),
            "command" => {
                // `command -v x` only looks x up.
                let lookup = args.iter().take_while(|w| w.text.starts_with('-')).any(|w| w.text.contains('v') || w.text.contains('V'));
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
            "docker" | "podman" | "nerdctl" | "docker-compose" => self.unwrap_container(cmd, args, scope),
            "kubectl" | "oc" => self.unwrap_kubectl(cmd, args, scope),
            "flock" => {
                let c_at = args.iter().position(|w| w.text == "-c" || w.text == "--command");
                cmd.wrapper = true;
                self.push(cmd);
                if let Some(i) = c_at {
                    if let Some(script) = args.get(i + 1) {
                        self.script_word(script, scope, "flock -c");
                    }
                } else {
                    let start = skip_options(&args, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
                    if start + 1 < args.len() {
                        self.inner_argv(args[start + 1..].to_vec(), scope, "flock", false, None);
                    }
                }
            }
            "pipx" | "uv" | "poetry" | "pdm" | "hatch" | "pipenv" | "rye" | "bundle" | "pnpm" | "yarn" | "npm" | "conda" | "mamba"
                if args.first().is_some_and(|w| matches!(w.text.as_str(), "run" | "exec" | "dlx" | "x"))
                    && !(matches!(program.as_str(), "npm" | "pnpm" | "yarn" | "bundle") && args[0].text == "run") =>
            {
                // `uv run pytest`, `pnpm dlx x`, `bundle exec rake`: runs the named program
                let start = 1 + skip_options(&args[1..], &["--with", "--from", "-p", "--python", "--package", "-n", "--name", "-c", "--call"]);
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
            "rsync" | "scp" | "sftp" | "tar" | "gtar" | "sed" | "gsed" | "make" | "gmake" | "ansible" | "git" => {
                self.embedded_commands(cmd, args, scope)
            }
            "at" | "batch" => {
                self.push(cmd);
                if let Some(text) = scope.stdin_text.clone() {
                    self.nested(&text, scope, "at");
                }
            }
            p if SHELLS.contains(&p) => self.unwrap_shell(cmd, args, scope),
            "curl" | "wget" | "aria2c" | "http" | "xh" => {
                if let Some(file) = download_target(&program, &args) {
                    let abs = self.resolve_word(file, scope);
                    if !abs.dynamic {
                        scope.state_mut().downloaded.push(abs.text);
                    }
                }
                self.push(cmd);
            }
            p if DB_CLIENTS.contains(&p) => {
                if let Some(text) = scope.stdin_text.clone() {
                    cmd.inline_code = Some(InlineCode { language: p.to_string(), code: text });
                }
                self.push(cmd);
            }
            "tee" => {
                if let Some(text) = scope.stdin_text.clone() {
                    let targets: Vec<Redirect> = args
                        .iter()
                        .filter(|w| !w.text.starts_with('-'))
                        .map(|w| Redirect { kind: if args.iter().any(|a| a.text == "-a" || a.text == "--append") { RedirectKind::Append } else { RedirectKind::Write }, target: self.resolve_word(w.clone(), scope) })
                        .collect();
                    record_written(scope, &targets, &text);
                }
                self.push(cmd);
            }
            p => {
                if first.text.contains('/') && self.is_downloaded(&first, scope) {
                    cmd.stdin_from.push("<download>".into());
                }
                if first.text.contains('/') {
                    if let Some(content) = self.written_script(&first, scope) {
                        cmd.wrapper = true;
                        self.push(cmd);
                        self.nested(&content, scope, "script");
                        return;
                    }
                }
                if let Some((lang, code_opts)) = interpreter_of(p) {
                    self.interpreter(cmd, args, scope, lang, code_opts);
                    return;
                }
                if let Some((name, value_opts, skip, privileged)) = ARGV_WRAPPERS.iter().find(|w| w.0 == p) {
                    self.argv_wrapper(cmd, args, scope, name, value_opts, *skip, *privileged);
                    return;
                }
                self.push(cmd);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn argv_wrapper(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope, name: &str, value_opts: &[&str], skip: usize, privileged: bool) {
        let start = skip_options(&args, value_opts) + skip;
        if name == "script" {
            // `script -qc CMD [logfile]` runs CMD through a shell.
            if let Some(i) = args.iter().position(|w| w.text == "--command" || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.ends_with('c'))) {
                cmd.wrapper = true;
                self.push(cmd);
                if let Some(script) = args.get(i + 1) {
                    self.script_word(script, scope, "script -c");
                }
                return;
            }
        }
        if start >= args.len() {
            let shell_flag = args.iter().any(|w| w.text == "-s" || w.text == "-i");
            if name == "chroot" || (matches!(name, "doas" | "run0" | "pkexec") && (shell_flag || args.is_empty())) {
                // chroot with no command starts a shell in the new root
                cmd.wrapper = true;
                self.push(cmd);
                self.inner_argv(vec![Word::lit("sh"), Word::lit("-i")], scope, name, privileged, None);
                return;
            }
            self.push(cmd);
            return;
        }
        cmd.wrapper = true;
        self.push(cmd);
        let mut inner: Vec<Word> = args[start..].to_vec();
        if name == "parallel" {
            if let Some(i) = inner.iter().position(|w| w.text == ":::" || w.text == "::::") {
                let values: Vec<Word> = inner[i + 1..].to_vec();
                inner.truncate(i);
                inner.extend(values);
            }
        }
        if name == "sg" && inner.first().is_some_and(|w| w.text == "-c") {
            if let Some(script) = inner.get(1).cloned() {
                self.script_word(&script, scope, "sg -c");
            }
            return;
        }
        self.inner_argv(inner, scope, name, privileged, None);
    }

    /// Analyzes an inner argv in a scope derived from `scope`.
    pub(crate) fn inner_argv(&mut self, argv: Vec<Word>, scope: &Scope, via: &str, privileged: bool, remote: Option<String>) {
        if argv.is_empty() {
            return;
        }
        let mut inner = scope.clone();
        inner.via.push(Via { wrapper: via.to_string() });
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
        inner.via.push(Via { wrapper: via.to_string() });
        inner.redirects.clear();
        self.analyze_text(text, &mut inner);
    }

    /// A word holding a script: analyzed when known, opaque otherwise.
    fn script_word(&mut self, script: &Word, scope: &Scope, via: &str) {
        if script.dynamic {
            self.opaque(format!("{via} runs a script that is only known at run time"), &script.text);
        }
        self.nested(&script.text, scope, via);
    }

    fn unwrap_env(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let mut i = 0;
        let mut inner_scope = scope.clone();
        let mut split: Option<Word> = None;
        while i < args.len() {
            let a = &args[i].text;
            if a == "--" {
                i += 1;
                break;
            }
            if a.starts_with("-S") || a.starts_with("--split-string") {
                let v = if let Some(v) = a.strip_prefix("--split-string=") {
                    Some(Word { text: v.to_string(), dynamic: args[i].dynamic })
                } else if a.len() > 2 && !a.starts_with("--") {
                    Some(Word { text: a[2..].to_string(), dynamic: args[i].dynamic })
                } else {
                    i += 1;
                    args.get(i).cloned()
                };
                split = v;
                i += 1;
                break;
            }
            if a == "-C" || a == "--chdir" || a.starts_with("--chdir=") || (a.starts_with("-C") && a.len() > 2) {
                let dir = if let Some(v) = a.strip_prefix("--chdir=") {
                    Some(args[i].clone().with_text(v))
                } else if a.len() > 2 && !a.starts_with("--") {
                    Some(args[i].clone().with_text(&a[2..]))
                } else {
                    i += 1;
                    args.get(i).cloned()
                };
                inner_scope.cwd = match dir {
                    Some(d) if !d.dynamic => inner_scope.cwd.as_ref().map(|c| self.env.resolve_from(c, &d.text)),
                    _ => None,
                };
                i += 1;
                continue;
            }
            if a == "-u" || a == "--unset" || a == "-P" {
                i += 2;
                continue;
            }
            if a.starts_with('-') && a != "-" {
                i += 1;
                continue;
            }
            if a == "-" {
                i += 1;
                continue;
            }
            break;
        }
        let mut assignments = Vec::new();
        while i < args.len() && !args[i].dynamic && is_assignment(&args[i].text) {
            let (n, v) = args[i].text.split_once('=').unwrap_or_default();
            assignments.push((n.to_string(), Word::lit(v)));
            i += 1;
        }
        let mut inner: Vec<Word> = Vec::new();
        if let Some(s) = split {
            if s.dynamic {
                self.opaque("env -S splits a string known only at run time", &s.text);
            }
            inner.extend(split_words(&s.text));
        }
        inner.extend(args[i.min(args.len())..].iter().cloned());
        if inner.is_empty() {
            self.push(cmd);
            return;
        }
        cmd.wrapper = true;
        self.push(cmd);
        inner_scope.via.push(Via { wrapper: "env".into() });
        self.emit(inner, assignments, Vec::new(), &mut inner_scope);
    }

    fn unwrap_sudo(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let start = skip_options(&args, SUDO_VALUE_OPTS);
        let opts = &args[..start.min(args.len())];
        let has = |short: char, long: &str| {
            opts.iter().any(|w| w.text == long || (w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains(short)))
        };
        let edit = has('e', "--edit");
        let shell = has('s', "--shell") || has('i', "--login");
        let list_only = has('l', "--list") || has('v', "--validate") || has('k', "--reset-timestamp") || has('K', "--remove-timestamp") || has('V', "--version");
        cmd.wrapper = true;
        self.push(cmd);
        let rest: Vec<Word> = args[start.min(args.len())..].to_vec();
        if edit {
            let mut inner = vec![Word::lit("sudoedit")];
            inner.extend(rest);
            self.inner_argv(inner, scope, "sudo", true, None);
        } else if rest.is_empty() {
            if shell {
                self.inner_argv(vec![Word::lit("sh"), Word::lit("-i")], scope, "sudo", true, None);
            } else if !list_only && scope.stdin_text.is_some() {
                // nothing runs
            }
        } else {
            self.inner_argv(rest, scope, "sudo", true, None);
        }
    }

    fn unwrap_su(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        cmd.wrapper = true;
        let program = cmd.program.clone();
        self.push(cmd);
        let mut i = 0;
        let mut script: Option<Word> = None;
        let mut user: Option<String> = None;
        while i < args.len() {
            let a = args[i].text.as_str();
            match a {
                "-c" | "--command" | "--session-command" => {
                    script = args.get(i + 1).cloned();
                    i += 2;
                }
                _ if a.starts_with("--command=") => {
                    script = Some(args[i].clone().with_text(&a["--command=".len()..]));
                    i += 1;
                }
                "-s" | "--shell" | "-g" | "--group" | "-G" | "--supp-group" | "-w" | "--whitelist-environment" | "-u" | "--user" => {
                    if a == "-u" || a == "--user" {
                        user = args.get(i + 1).map(|w| w.text.clone());
                    }
                    i += 2;
                }
                "--" => {
                    // runuser -u USER -- CMD ARGS
                    if program == "runuser" && i + 1 < args.len() {
                        let privileged = user.as_deref().is_none_or(|u| u == "root");
                        self.inner_argv(args[i + 1..].to_vec(), scope, &program, privileged, None);
                        return;
                    }
                    i += 1;
                }
                _ if a.starts_with('-') => i += 1,
                _ => {
                    if user.is_none() {
                        user = Some(a.to_string());
                    }
                    i += 1;
                }
            }
        }
        let privileged = user.as_deref().is_none_or(|u| u == "root" || u == "0");
        let mut inner = scope.clone();
        inner.privileged |= privileged;
        match script {
            Some(s) => self.script_word(&s, &inner, &program),
            None => self.inner_argv(vec![Word::lit("sh"), Word::lit("-i")], scope, &program, privileged, None),
        }
    }

    fn unwrap_shell(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let mut i = 0;
        let mut c_mode = false;
        let mut stdin_mode = false;
        while i < args.len() {
            let a = args[i].text.as_str();
            if a == "--" {
                i += 1;
                break;
            }
            if a == "-o" || a == "+o" || a == "--rcfile" || a == "--init-file" || a == "-O" || a == "+O" {
                i += 2;
                continue;
            }
            if let Some(flags) = a.strip_prefix('-').filter(|f| !f.starts_with('-') && !f.is_empty()) {
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
                inner.state_mut().vars.insert(n.to_string(), (!w.dynamic).then(|| w.text.clone()));
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
                if file.text.starts_with("/dev/fd/") || file.text.starts_with("/proc/self/fd/") {
                    if let Some(text) = scope.stdin_text.clone() {
                        self.push(cmd);
                        self.nested(&text, scope, &program);
                        return;
                    }
                }
                self.push(cmd);
            }
            _ => {
                // Reads its script from stdin.
                let text = scope.stdin_text.clone();
                if text.is_none() && scope.stdin_from.iter().any(|s| s == "$") {
                    self.opaque(format!("{program} runs a script built at run time from its input"), &display(&cmd.argv));
                }
                cmd.wrapper = text.is_some();
                self.push(cmd);
                if let Some(text) = text {
                    self.nested(&text, scope, &format!("{program} stdin"));
                }
            }
        }
    }

    fn interpreter(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope, lang: &str, code_opts: &[&str]) {
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
            if let Some(v) = code_opts.iter().find_map(|o| a.strip_prefix(&format!("{o}="))) {
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
            if matches!(a, "-W" | "-X" | "-I" | "-r" | "--require" | "-M" | "--import" | "--input-type" | "-x") {
                i += 2;
                continue;
            }
            // short clusters: `-uc CODE`, `-le CODE`, `-pe CODE`, `-eCODE`
            let short: Vec<char> = code_opts.iter().filter(|o| o.len() == 2 && !o.starts_with("--")).filter_map(|o| o.chars().nth(1)).collect();
            if !a.starts_with("--") {
                if let Some(pos) = a[1..].find(|c| short.contains(&c)) {
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
            }
            i += 1;
        }
        if awk && code.is_empty() && !has_program_file {
            if let Some(p) = args.get(i) {
                code.push(p.clone());
            }
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
            if from_stdin {
                if let Some(text) = scope.stdin_text.clone() {
                    code.push(Word::lit(text));
                } else if scope.stdin_from.iter().any(|s| s == "$") {
                    self.opaque(format!("{lang} runs code built at run time from its input"), &display(&cmd.argv));
                }
            }
        }
        if code.iter().any(|c| c.dynamic) {
            self.opaque(format!("{lang} runs code that is only known at run time"), &display(&code));
        }
        if !code.is_empty() {
            let text = code.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join("\n");
            cmd.inline_code = Some(InlineCode { language: lang.to_string(), code: text.clone() });
            let via = format!("{} -c", lang);
            self.push(cmd);
            for snippet in inline::shell_snippets(&text) {
                match snippet {
                    inline::Snippet::Script(s) => self.nested(&s, scope, &via),
                    inline::Snippet::Argv(argv) => {
                        let argv: Vec<Word> = argv.into_iter().map(|(text, dynamic)| Word { text, dynamic }).collect();
                        if argv.first().is_some_and(|w| w.dynamic) {
                            self.opaque(format!("{lang} code runs a command built at run time"), &display(&argv));
                        }
                        self.inner_argv(argv, scope, &via, false, None)
                    }
                    inline::Snippet::Dynamic(text) => {
                        self.opaque(format!("{lang} code runs a shell command built at run time"), &text);
                    }
                }
            }
            return;
        }
        self.push(cmd);
    }

    fn unwrap_xargs(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        const VALUE: &[&str] = &["-I", "-n", "-L", "-P", "-s", "-d", "-E", "-a", "--max-args", "--max-procs", "--delimiter", "--arg-file", "--max-lines", "--process-slot-var", "--max-chars", "--eof"];
        let mut replace: Option<String> = None;
        let mut from_file = false;
        let mut i = 0;
        while i < args.len() {
            let a = args[i].text.as_str();
            if a == "--" {
                i += 1;
                break;
            }
            if !a.starts_with('-') {
                break;
            }
            if a == "-I" {
                replace = args.get(i + 1).map(|w| w.text.clone());
            } else if let Some(r) = a.strip_prefix("-I") {
                replace = Some(r.to_string());
            } else if a == "-i" || a == "--replace" {
                replace = Some("{}".into());
            } else if let Some(r) = a.strip_prefix("--replace=") {
                replace = Some(r.to_string());
            } else if let Some(r) = a.strip_prefix("-i") {
                replace = Some(r.to_string());
            }
            if a == "-a" || a.starts_with("--arg-file") {
                from_file = true;
            }
            if VALUE.contains(&a) {
                i += 1;
            }
            i += 1;
        }
        cmd.wrapper = true;
        self.push(cmd);
        let mut inner: Vec<Word> = if i < args.len() { args[i..].to_vec() } else { vec![Word::lit("echo")] };
        let mut items: Vec<Word> = match (&scope.stdin_text, from_file) {
            (Some(t), false) => t.split_whitespace().map(Word::lit).collect(),
            _ => Vec::new(),
        };
        if items.is_empty() {
            // No known input: the command is still judged, on unknown items.
            items.push(Word { text: "{xargs input}".into(), dynamic: true });
        }
        match replace {
            Some(r) if !r.is_empty() => {
                for item in items.iter().take(16) {
                    let argv: Vec<Word> = inner
                        .iter()
                        .map(|w| if w.text.contains(&r) { Word { text: w.text.replace(&r, &item.text), dynamic: w.dynamic || item.dynamic } } else { w.clone() })
                        .collect();
                    self.inner_argv(argv, scope, "xargs", false, None);
                }
            }
            _ => {
                inner.extend(items);
                self.inner_argv(inner, scope, "xargs", false, None);
            }
        }
    }

    fn unwrap_find(&mut self, cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let mut i = 0;
        while i < args.len() && matches!(args[i].text.as_str(), "-H" | "-L" | "-P" | "-D" | "-O0" | "-O1" | "-O2" | "-O3") {
            i += if args[i].text == "-D" { 2 } else { 1 };
        }
        let mut roots: Vec<Word> = Vec::new();
        while i < args.len() {
            let t = args[i].text.as_str();
            if t.starts_with('-') || t == "(" || t == "!" || t == "\\(" {
                break;
            }
            roots.push(args[i].clone());
            i += 1;
        }
        if roots.is_empty() {
            roots.push(Word::lit("."));
        }
        let mut execs: Vec<(String, Vec<Word>)> = Vec::new();
        while i < args.len() {
            let t = args[i].text.as_str();
            if matches!(t, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let kind = t.to_string();
                let mut j = i + 1;
                let mut inner = Vec::new();
                while j < args.len() && args[j].text != ";" && args[j].text != "+" {
                    inner.push(args[j].clone());
                    j += 1;
                }
                execs.push((kind, inner));
                i = j + 1;
                continue;
            }
            i += 1;
        }
        let mut cmd = cmd;
        cmd.wrapper = !execs.is_empty();
        self.push(cmd);
        // find prints paths at or under its roots (see `ls` in literal_output);
        // with a name test, the matching names anywhere under them
        let name_test = args.windows(2).find(|w| matches!(w[0].text.as_str(), "-name" | "-iname")).map(|w| w[1].text.clone());
        let listed = if roots.iter().any(|r| r.dynamic) {
            None
        } else {
            let shown: Vec<String> = roots
                .iter()
                .map(|r| match &name_test {
                    Some(p) => format!("{}/**/{p}", r.text.trim_end_matches('/')),
                    None => r.text.clone(),
                })
                .collect();
            Some(shown.join("\n"))
        };
        // What `{}` stands for: the root itself (find yields it first), unless
        // a name test filters the results and the root is inside the
        // workspace, where the filtered entries are what runs.
        let name_filter = args.windows(2).find(|w| matches!(w[0].text.as_str(), "-name" | "-iname") && !matches!(w[1].text.as_str(), "*" | ".*" | "*.*")).map(|w| w[1].text.clone());
        for (kind, inner) in execs {
            for root in roots.iter().take(8) {
                let stand_in = match (&name_filter, root.dynamic) {
                    (Some(pattern), false) => {
                        let abs = self.resolve_word(root.clone(), scope);
                        if !abs.dynamic && self.env.in_workspace(&abs.text) {
                            Word::lit(format!("{}/{}", abs.text.trim_end_matches('/'), pattern))
                        } else {
                            root.clone()
                        }
                    }
                    _ => root.clone(),
                };
                let argv: Vec<Word> = inner
                    .iter()
                    .map(|w| if w.text.contains("{}") { Word { text: w.text.replace("{}", &stand_in.text), dynamic: w.dynamic || stand_in.dynamic } } else { w.clone() })
                    .collect();
                self.inner_argv(argv, scope, &format!("find {kind}"), false, None);
            }
        }
        self.last_output = listed;
    }

    fn unwrap_fd(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let Some(i) = args.iter().position(|w| matches!(w.text.as_str(), "-x" | "--exec" | "-X" | "--exec-batch")) else {
            self.push(cmd);
            return;
        };
        cmd.wrapper = true;
        self.push(cmd);
        let mut inner: Vec<Word> = args[i + 1..].iter().take_while(|w| w.text != ";").cloned().collect();
        for w in &mut inner {
            if w.text.contains('{') {
                w.dynamic = true;
            }
        }
        if !inner.iter().any(|w| w.dynamic) {
            inner.push(Word { text: "{fd results}".into(), dynamic: true });
        }
        self.inner_argv(inner, scope, "fd --exec", false, None);
    }

    fn unwrap_watch(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let exec_mode = args.iter().any(|w| w.text == "-x" || w.text == "--exec");
        let start = skip_options(&args, &["-n", "--interval", "-q", "--equexit", "--differences"]);
        cmd.wrapper = start < args.len();
        self.push(cmd);
        if start >= args.len() {
            return;
        }
        if exec_mode {
            self.inner_argv(args[start..].to_vec(), scope, "watch", false, None);
        } else {
            let joined = join_script(&args[start..]);
            self.script_word(&joined, scope, "watch");
        }
    }

    fn unwrap_ssh(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let start = skip_options(
            &args,
            &["-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B", "-P"],
        );
        // `-o ProxyCommand=…` and `-o LocalCommand=…` run locally
        for (i, w) in args.iter().enumerate() {
            let opt = if w.text == "-o" { args.get(i + 1).map(|v| v.text.as_str()) } else { w.text.strip_prefix("-o").filter(|v| !v.is_empty()) };
            if let Some((key, value)) = opt.and_then(|o| o.split_once(['=', ' '])) {
                if matches!(key.trim().to_ascii_lowercase().as_str(), "proxycommand" | "localcommand" | "knownhostscommand") {
                    let dynamic = args.get(i + 1).is_some_and(|v| v.dynamic) || w.dynamic;
                    self.script_word(&Word { text: value.trim().to_string(), dynamic }, scope, "ssh -o");
                }
            }
        }
        if start + 1 >= args.len() {
            self.push(cmd);
            return;
        }
        let host = args[start].text.clone();
        cmd.wrapper = true;
        self.push(cmd);
        let script = join_script(&args[start + 1..]);
        let mut inner = scope.clone();
        inner.remote = Some(host);
        inner.cwd = None;
        self.script_word(&script, &inner, "ssh");
    }

    fn unwrap_container(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let mut sub_at = 0;
        // `docker container exec`, `docker compose exec`
        while sub_at < args.len() && matches!(args[sub_at].text.as_str(), "container" | "compose") {
            sub_at += 1;
        }
        // global options before the subcommand (`docker -H x exec …`)
        while sub_at < args.len() && args[sub_at].text.starts_with('-') {
            let t = args[sub_at].text.as_str();
            sub_at += if matches!(t, "-H" | "--host" | "--context" | "-c" | "--config" | "-f" | "--file" | "-p" | "--project-name" | "--log-level") { 2 } else { 1 };
        }
        let Some(sub) = args.get(sub_at).map(|w| w.text.clone()) else {
            self.push(cmd);
            return;
        };
        let rest = &args[sub_at + 1..];
        const EXEC_OPTS: &[&str] = &["-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys", "--index"];
        const RUN_OPTS: &[&str] = &[
            "-a", "--attach", "--add-host", "--blkio-weight", "--cap-add", "--cap-drop", "--cgroup-parent", "--cidfile", "--cpu-period",
            "--cpu-quota", "--cpu-shares", "-c", "--cpus", "--cpuset-cpus", "--device", "--dns", "--dns-search", "--entrypoint", "-e", "--env",
            "--env-file", "--expose", "--gpus", "--group-add", "-h", "--hostname", "--health-cmd", "--health-interval", "--ip", "--ipc",
            "--isolation", "-l", "--label", "--label-file", "--link", "--log-driver", "--log-opt", "--mac-address", "-m", "--memory",
            "--memory-swap", "--mount", "--name", "--network", "--net", "--network-alias", "--pid", "--platform", "-p", "--publish",
            "--pull", "--restart", "--runtime", "--security-opt", "--shm-size", "--stop-signal", "--stop-timeout", "--storage-opt",
            "--sysctl", "--tmpfs", "--ulimit", "-u", "--user", "--userns", "--uts", "-v", "--volume", "--volume-driver", "--volumes-from",
            "-w", "--workdir", "--init-path", "--service-ports",
        ];
        let (opts, label): (&[&str], &str) = match sub.as_str() {
            "exec" => (EXEC_OPTS, "exec"),
            "run" | "create" => (RUN_OPTS, "run"),
            _ => {
                self.push(cmd);
                return;
            }
        };
        let start = skip_options(rest, opts);
        if start >= rest.len() {
            self.push(cmd);
            return;
        }
        let target = rest[start].text.clone();
        let mut inner: Vec<Word> = rest[start + 1..].to_vec();
        if let Some(i) = rest[..start].iter().position(|w| w.text == "--entrypoint") {
            if let Some(ep) = rest.get(i + 1) {
                inner.insert(0, ep.clone());
            }
        }
        cmd.wrapper = !inner.is_empty();
        let program = cmd.program.clone();
        self.push(cmd);
        self.inner_argv(inner, scope, &format!("{program} {label}"), false, Some(target));
    }

    fn unwrap_kubectl(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let sub = args.iter().find(|w| !w.text.starts_with('-')).map(|w| w.text.clone()).unwrap_or_default();
        if !matches!(sub.as_str(), "exec" | "run" | "debug" | "attach") {
            self.push(cmd);
            return;
        }
        let Some(dd) = args.iter().position(|w| w.text == "--") else {
            self.push(cmd);
            return;
        };
        let pod = args[..dd].iter().skip_while(|w| w.text != sub).nth(1).map(|w| w.text.clone()).unwrap_or_else(|| "pod".into());
        cmd.wrapper = true;
        let program = cmd.program.clone();
        self.push(cmd);
        self.inner_argv(args[dd + 1..].to_vec(), scope, &format!("{program} {sub}"), false, Some(pod));
    }

    /// Programs that run commands given in their options: `rsync -e`,
    /// `tar --checkpoint-action=exec=`, sed's `e`, make recipes read from
    /// stdin, `ansible -a`, `git -c core.sshCommand=`.
    fn embedded_commands(&mut self, cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let program = cmd.program.clone();
        self.push(cmd);
        let mut scripts: Vec<(Word, &str)> = Vec::new();
        let value_after = |i: usize, flag: &str, attached_prefix: &str| -> Option<Word> {
            let w = &args[i];
            if w.text == flag {
                return args.get(i + 1).cloned();
            }
            w.text.strip_prefix(attached_prefix).filter(|v| !v.is_empty() && !attached_prefix.is_empty()).map(|v| Word { text: v.to_string(), dynamic: w.dynamic })
        };
        for i in 0..args.len() {
            match program.as_str() {
                "rsync" | "scp" | "sftp" => {
                    if let Some(v) = value_after(i, "-e", "--rsh=").or_else(|| value_after(i, "--rsh", "--rsync-path=")) {
                        scripts.push((v, "rsync -e"));
                    }
                    if program == "scp" || program == "sftp" {
                        if let Some(v) = value_after(i, "-S", "") {
                            scripts.push((v, "scp -S"));
                        }
                    }
                }
                "tar" | "gtar" => {
                    let t = args[i].text.as_str();
                    for prefix in ["--checkpoint-action=exec=", "--to-command=", "--use-compress-program=", "--rsh-command=", "--info-script=", "--new-volume-script="] {
                        if let Some(v) = t.strip_prefix(prefix) {
                            scripts.push((Word { text: v.to_string(), dynamic: args[i].dynamic }, "tar"));
                        }
                    }
                    if matches!(t, "-I" | "-F" | "--to-command" | "--use-compress-program" | "--info-script") {
                        if let Some(v) = args.get(i + 1) {
                            scripts.push((v.clone(), "tar"));
                        }
                    }
                }
                "sed" | "gsed" => {
                    let script = if args[i].text == "-e" || args[i].text == "--expression" {
                        args.get(i + 1).cloned()
                    } else if i == args.iter().position(|w| !w.text.starts_with('-')).unwrap_or(usize::MAX) && !args.iter().any(|w| w.text == "-e" || w.text == "-f") {
                        Some(args[i].clone())
                    } else {
                        None
                    };
                    if let Some(s) = script {
                        for snippet in inline::sed_commands(&s.text) {
                            match snippet {
                                inline::Snippet::Script(c) => scripts.push((Word { text: c, dynamic: s.dynamic }, "sed e")),
                                other => {
                                    if let inline::Snippet::Dynamic(t) = other {
                                        self.opaque("sed runs the edited text as a command (s///e)", &t);
                                    }
                                }
                            }
                        }
                    }
                }
                "ansible" => {
                    if let Some(v) = value_after(i, "-a", "--args=").or_else(|| value_after(i, "--args", "")) {
                        let module = args.windows(2).find(|w| w[0].text == "-m" || w[0].text == "--module-name").map(|w| w[1].text.clone());
                        if module.as_deref().is_none_or(|m| matches!(m, "shell" | "command" | "raw" | "ansible.builtin.shell" | "ansible.builtin.command" | "ansible.builtin.raw")) {
                            scripts.push((v, "ansible"));
                        }
                    }
                }
                "git" => {
                    if let Some(v) = value_after(i, "-c", "") {
                        if let Some((key, value)) = v.text.split_once('=') {
                            let key = key.to_ascii_lowercase();
                            if key == "core.sshcommand" || key == "core.pager" || key == "core.editor" || key == "core.fsmonitor" || key == "sequence.editor" {
                                scripts.push((Word { text: value.to_string(), dynamic: v.dynamic }, "git -c"));
                            } else if key.starts_with("alias.") {
                                if let Some(body) = value.strip_prefix('!') {
                                    scripts.push((Word { text: body.to_string(), dynamic: v.dynamic }, "git alias"));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if matches!(program.as_str(), "make" | "gmake") {
            let from_stdin = args.windows(2).any(|w| matches!(w[0].text.as_str(), "-f" | "--file" | "--makefile") && matches!(w[1].text.as_str(), "-" | "/dev/stdin"));
            if from_stdin {
                if let Some(text) = scope.stdin_text.clone() {
                    for recipe in text.lines().filter_map(|l| l.strip_prefix('\t')) {
                        let line = recipe.trim_start_matches(['@', '-', '+']);
                        scripts.push((Word::lit(line), "make recipe"));
                    }
                } else {
                    self.opaque("make reads a makefile built at run time", &display(&args));
                }
            }
        }
        for (script, via) in scripts.into_iter().take(16) {
            let mut inner = scope.clone();
            if via == "ansible" {
                inner.remote = args.iter().find(|w| !w.text.starts_with('-')).map(|w| w.text.clone());
                inner.cwd = None;
            }
            self.script_word(&script, &inner, via);
        }
    }

    fn unwrap_tmux(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let sub = args.first().map(|w| w.text.clone()).unwrap_or_default();
        let runs = matches!(sub.as_str(), "new" | "new-session" | "new-window" | "neww" | "split-window" | "splitw" | "respawn-pane" | "respawnp" | "run-shell" | "run");
        let keys = matches!(sub.as_str(), "send-keys" | "send");
        if !runs && !keys {
            self.push(cmd);
            return;
        }
        let mut i = 1;
        let mut operands = Vec::new();
        while i < args.len() {
            let t = args[i].text.as_str();
            if matches!(t, "-t" | "-s" | "-n" | "-c" | "-x" | "-y" | "-F" | "-e" | "-l" | "-p" | "-N") {
                i += 2;
                continue;
            }
            if t.starts_with('-') && t.len() > 1 {
                i += 1;
                continue;
            }
            operands.push(args[i].clone());
            i += 1;
        }
        if keys {
            operands.retain(|w| !matches!(w.text.as_str(), "Enter" | "C-m" | "KPEnter" | "C-j"));
        }
        if operands.is_empty() {
            self.push(cmd);
            return;
        }
        cmd.wrapper = true;
        self.push(cmd);
        let script = join_script(&operands);
        self.script_word(&script, scope, "tmux");
    }
}

impl Word {
    fn with_text(self, text: &str) -> Word {
        Word { text: text.to_string(), dynamic: self.dynamic }
    }
}

fn is_assignment(text: &str) -> bool {
    match text.split_once('=') {
        Some((name, _)) => !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !name.starts_with(|c: char| c.is_ascii_digit()),
        None => false,
    }
}

fn display(argv: &[Word]) -> String {
    argv.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
}

/// Words joined with spaces, as `ssh` and `watch` hand them to a shell.
fn join_script(args: &[Word]) -> Word {
    Word { text: display(args), dynamic: args.iter().any(|w| w.dynamic) }
}

/// Splits `env -S` text into words (quotes respected, as env does).
fn split_words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(Word::lit(std::mem::take(&mut cur)));
                    any = false;
                }
            }
            (q, '\\') if q != Some('\'') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    any = true;
                }
            }
            (_, c) => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(Word::lit(cur));
    }
    out
}

/// What `echo`, `printf`, `cat` (of stdin) and `base64 -d` print, when known.
fn literal_output(program: &str, args: &[Word], scope: &Scope) -> Option<String> {
    if args.iter().any(|w| w.dynamic) {
        return None;
    }
    match program {
        "echo" => {
            let mut rest = args;
            let mut escapes = false;
            while let Some(first) = rest.first() {
                match first.text.as_str() {
                    "-n" | "-E" => rest = &rest[1..],
                    "-e" | "-ne" | "-en" => {
                        escapes = true;
                        rest = &rest[1..];
                    }
                    _ => break,
                }
            }
            let joined = display(rest);
            Some(if escapes { words::decode_ansi_c(&joined) } else { joined })
        }
        "printf" => {
            let (fmt, rest) = args.split_first()?;
            if fmt.text == "%s" || fmt.text == "%s\\n" || fmt.text == "%b" {
                Some(rest.iter().map(|w| w.text.as_str()).collect::<String>())
            } else if rest.is_empty() {
                Some(words::decode_ansi_c(&fmt.text))
            } else {
                None
            }
        }
        "cat" if args.is_empty() || args.iter().all(|w| w.text == "-") => scope.stdin_text.clone(),
        // Not its exact output, but the paths it lists are at or under these:
        // enough for `ls /var/log/* | xargs truncate -s 0` to be seen.
        "ls" => {
            let operands: Vec<&str> = args.iter().map(|w| w.text.as_str()).filter(|t| !t.starts_with('-')).collect();
            Some(if operands.is_empty() { ".".to_string() } else { operands.join("\n") })
        }
        "base64" if args.iter().any(|w| matches!(w.text.as_str(), "-d" | "--decode" | "-D")) => {
            let input = scope.stdin_text.as_deref()?;
            inline::decode_base64(input)
        }
        _ => None,
    }
}
