//! Wrappers that run the rest of their argv: the plain ones listed in
//! `ARGV_WRAPPERS` (`nice`, `timeout`, `doas`, `parallel`, `npx`, …) and
//! `env`, with its assignments, `-C` and `-S`.

use super::analyzer::Analyzer;
use super::argv::skip_options;
use super::scope::Scope;
use super::types::*;

/// Wrappers whose command is the rest of argv after their options and a
/// fixed number of positionals. (name, options taking a value, positionals to skip, privileged)
pub(super) const ARGV_WRAPPERS: &[(&str, &[&str], usize, bool)] = &[
    ("nohup", &[], 0, false),
    ("nice", &["-n", "--adjustment"], 0, false),
    (
        "ionice",
        &[
            "-c",
            "--class",
            "-n",
            "--classdata",
            "-p",
            "--pid",
            "-P",
            "--pgid",
            "-u",
            "--uid",
        ],
        0,
        false,
    ),
    (
        "timeout",
        &["-s", "--signal", "-k", "--kill-after"],
        1,
        false,
    ),
    (
        "gtimeout",
        &["-s", "--signal", "-k", "--kill-after"],
        1,
        false,
    ),
    ("time", &["-f", "--format", "-o", "--output"], 0, false),
    (
        "stdbuf",
        &["-i", "-o", "-e", "--input", "--output", "--error"],
        0,
        false,
    ),
    ("setsid", &[], 0, false),
    ("chroot", &["--userspec", "--groups"], 1, true),
    ("busybox", &[], 0, false),
    ("toybox", &[], 0, false),
    ("builtin", &[], 0, false),
    ("exec", &["-a"], 0, false),
    ("doas", &["-u", "-C"], 0, true),
    ("pkexec", &["--user"], 0, true),
    (
        "run0",
        &[
            "--user",
            "-u",
            "--group",
            "-g",
            "--setenv",
            "--unit",
            "--property",
            "--description",
            "--slice",
            "--nice",
            "--chdir",
            "-D",
        ],
        0,
        true,
    ),
    (
        "strace",
        &[
            "-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X",
        ],
        0,
        false,
    ),
    (
        "ltrace",
        &["-e", "-o", "-p", "-s", "-u", "-n", "-a"],
        0,
        false,
    ),
    ("taskset", &[], 1, false),
    (
        "unshare",
        &[
            "--map-user",
            "--map-group",
            "--propagation",
            "--setgroups",
            "-S",
            "-G",
            "--wd",
            "-R",
            "--root",
        ],
        0,
        false,
    ),
    (
        "nsenter",
        &[
            "-t", "--target", "-S", "-G", "--wd", "-w", "-R", "--root", "--setuid", "--setgid",
        ],
        0,
        true,
    ),
    ("firejail", &[], 0, false),
    ("torsocks", &[], 0, false),
    ("proxychains", &["-f"], 0, false),
    ("proxychains4", &["-f"], 0, false),
    ("catchsegv", &[], 0, false),
    ("unbuffer", &[], 0, false),
    ("chronic", &[], 0, false),
    ("caffeinate", &["-t", "-w"], 0, false),
    (
        "xvfb-run",
        &[
            "-n",
            "--server-num",
            "-s",
            "--server-args",
            "-f",
            "--auth-file",
            "-e",
            "--error-file",
            "-p",
        ],
        0,
        false,
    ),
    ("dbus-launch", &[], 0, false),
    (
        "systemd-run",
        &[
            "--unit",
            "-u",
            "--property",
            "-p",
            "--description",
            "--slice",
            "--uid",
            "--gid",
            "--nice",
            "--working-directory",
            "-E",
            "--setenv",
            "--on-calendar",
            "--on-active",
            "--on-boot",
            "--timer-property",
            "-M",
            "--machine",
            "-H",
            "--host",
        ],
        0,
        false,
    ),
    ("flatpak-spawn", &[], 0, false),
    ("prlimit", &["-p", "--pid"], 0, false),
    (
        "numactl",
        &[
            "-C",
            "-N",
            "-m",
            "-i",
            "-p",
            "--cpunodebind",
            "--membind",
            "--interleave",
            "--preferred",
            "--physcpubind",
        ],
        0,
        false,
    ),
    ("cgexec", &["-g"], 0, false),
    ("valgrind", &[], 0, false),
    ("sg", &[], 1, true),
    (
        "screen",
        &["-S", "-c", "-t", "-h", "-e", "-p", "-T", "-L", "-Logfile"],
        0,
        false,
    ),
    (
        "parallel",
        &[
            "-j",
            "--jobs",
            "-S",
            "--sshlogin",
            "--joblog",
            "--results",
            "--delay",
            "--timeout",
            "-N",
            "-n",
        ],
        0,
        false,
    ),
    ("entr", &[], 0, false),
    ("faketime", &["-f"], 1, false),
    (
        "script",
        &["-E", "--echo", "-I", "-O", "-T", "--log-timing", "-t"],
        0,
        false,
    ),
    // package runners: the package's program is what runs
    (
        "npx",
        &["-p", "--package", "-c", "--call", "--node-options"],
        0,
        false,
    ),
    ("bunx", &["-p", "--package"], 0, false),
    ("pnpx", &[], 0, false),
    ("uvx", &["--from", "--with", "-p", "--python"], 0, false),
    ("pipx", &["--spec", "--python"], 0, false),
];

impl Analyzer<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn argv_wrapper(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
        name: &str,
        value_opts: &[&str],
        skip: usize,
        privileged: bool,
    ) {
        let start = skip_options(&args, value_opts) + skip;
        if name == "script" {
            // `script -qc CMD [logfile]` runs CMD through a shell.
            if let Some(i) = args.iter().position(|w| {
                w.text == "--command"
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.ends_with('c'))
            }) {
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
            if name == "chroot"
                || (matches!(name, "doas" | "run0" | "pkexec") && (shell_flag || args.is_empty()))
            {
                // chroot with no command starts a shell in the new root
                cmd.wrapper = true;
                self.push(cmd);
                self.inner_argv(
                    vec![Word::lit("sh"), Word::lit("-i")],
                    scope,
                    name,
                    privileged,
                    None,
                );
                return;
            }
            self.push(cmd);
            return;
        }
        cmd.wrapper = true;
        self.push(cmd);
        let mut inner: Vec<Word> = args[start..].to_vec();
        if name == "parallel"
            && let Some(i) = inner
                .iter()
                .position(|w| w.text == ":::" || w.text == "::::")
        {
            let values: Vec<Word> = inner[i + 1..].to_vec();
            inner.truncate(i);
            inner.extend(values);
        } else if name == "parallel" && super::repeaters::feeds_tree(&scope.stdin_from) {
            // Items from a tree enumeration on stdin: the command runs on
            // everything under the tree's roots.
            let items: Vec<Word> = match &scope.stdin_text {
                Some(t) => t.split_whitespace().map(Word::lit).collect(),
                None => vec![Word {
                    text: "{parallel input}".into(),
                    dynamic: true,
                }],
            };
            let placeholder = inner.iter().any(|w| w.text.contains("{}"));
            if placeholder {
                let item = items[0].clone();
                for w in &mut inner {
                    if w.text.contains("{}") {
                        w.text = w.text.replace("{}", &item.text);
                        w.dynamic |= item.dynamic;
                    }
                }
            } else {
                inner.extend(items);
            }
            inner = super::repeaters::over_tree(inner);
        }
        if name == "sg" && inner.first().is_some_and(|w| w.text == "-c") {
            if let Some(script) = inner.get(1).cloned() {
                self.script_word(&script, scope, "sg -c");
            }
            return;
        }
        self.inner_argv(inner, scope, name, privileged, None);
    }

    pub(super) fn unwrap_env(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
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
                    Some(Word {
                        text: v.to_string(),
                        dynamic: args[i].dynamic,
                    })
                } else if a.len() > 2 && !a.starts_with("--") {
                    Some(Word {
                        text: a[2..].to_string(),
                        dynamic: args[i].dynamic,
                    })
                } else {
                    i += 1;
                    args.get(i).cloned()
                };
                split = v;
                i += 1;
                break;
            }
            if a == "-C"
                || a == "--chdir"
                || a.starts_with("--chdir=")
                || (a.starts_with("-C") && a.len() > 2)
            {
                let dir = if let Some(v) = a.strip_prefix("--chdir=") {
                    Some(args[i].clone().with_text(v))
                } else if a.len() > 2 && !a.starts_with("--") {
                    Some(args[i].clone().with_text(&a[2..]))
                } else {
                    i += 1;
                    args.get(i).cloned()
                };
                inner_scope.cwd = match dir {
                    Some(d) if !d.dynamic => inner_scope
                        .cwd
                        .as_ref()
                        .map(|c| self.env.resolve_from(c, &d.text)),
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
        inner_scope.via.push(Via {
            wrapper: "env".into(),
        });
        self.emit(inner, assignments, Vec::new(), &mut inner_scope);
    }
}

fn is_assignment(text: &str) -> bool {
    match text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Splits `env -S` text into words (quotes respected, as env does).
fn split_words(text: &str) -> Vec<Word> {
    super::fallback::segment_words(text)
        .into_iter()
        .map(Word::lit)
        .collect()
}
