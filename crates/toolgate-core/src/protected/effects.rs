//! What one simple command does to the paths it names, by what the program
//! does with each argument: redirections, the write, delete, move, link and
//! permission forms of the file utilities, archivers, `git`'s working-tree
//! commands, editors, interpreters' operands and inline code. A program
//! this module does not know is judged as naming its paths with an unknown
//! effect (escalated for a member, blocked for a secret); one known only to
//! read is judged as reading them.

use super::gate::Context;
use super::members::{HOOK_DIRS, PROBES};
use super::{Access, Certainty, Hit, Protected, stricter, verdict};
use crate::paths::Env;
use crate::shell::{RedirectKind, SimpleCommand, Word};
use crate::wildcard::{is_glob, path_match};

/// Programs whose arguments are not files (text, numbers, names).
pub(super) const TEXT: &[&str] = &[
    "echo",
    "printf",
    "true",
    "false",
    ":",
    "sleep",
    "seq",
    "yes",
    "expr",
    "test",
    "[",
    "[[",
    "cd",
    "pushd",
    "popd",
    "export",
    "set",
    "unset",
    "alias",
    "unalias",
    "type",
    "which",
    "whereis",
    "command",
    "hash",
    "date",
    "pwd",
    "whoami",
    "id",
    "uname",
    "hostname",
    "basename",
    "dirname",
    "printenv",
    "read",
    "local",
    "declare",
    "typeset",
    "let",
    "return",
    "exit",
    "shift",
    "trap",
    "wait",
    "jobs",
    "fg",
    "bg",
    "disown",
    "umask",
    "ulimit",
    "times",
    "getopts",
    "break",
    "continue",
    "cal",
    "bc",
    "dc",
    "factor",
    "numfmt",
    "clear",
    "tput",
    "stty",
    "nproc",
    "tty",
    "uptime",
    "free",
    "ps",
    "top",
    "htop",
    "pgrep",
    "pidof",
    "ss",
    "netstat",
    "ping",
    "dig",
    "host",
    "nslookup",
    "envsubst",
    "tr",
    "logger",
    "notify-send",
];

/// Programs that only read the files they name.
pub(super) const READ_ONLY: &[&str] = &[
    "cat",
    "tac",
    "head",
    "tail",
    "less",
    "more",
    "most",
    "bat",
    "batcat",
    "nl",
    "od",
    "hexdump",
    "hd",
    "strings",
    "file",
    "stat",
    "ls",
    "dir",
    "vdir",
    "exa",
    "eza",
    "lsd",
    "tree",
    "du",
    "df",
    "wc",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "diff",
    "diff3",
    "cmp",
    "comm",
    "colordiff",
    "delta",
    "difft",
    "jq",
    "gron",
    "tomlq",
    "xq",
    "cut",
    "paste",
    "join",
    "fold",
    "fmt",
    "pr",
    "expand",
    "unexpand",
    "column",
    "rev",
    "look",
    "realpath",
    "readlink",
    "getfacl",
    "lsattr",
    "namei",
    "zcat",
    "zless",
    "zmore",
    "bzcat",
    "xzcat",
    "zstdcat",
    "lz4cat",
    "base64",
    "base32",
    "basenc",
    "source",
    ".",
    "lsof",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "rg",
    "ag",
    "ack",
    "find",
    "fd",
    "fdfind",
    "locate",
];

/// Programs that send requests and never listen.
pub(super) const CLIENTS: &[&str] = &[
    "curl", "wget", "http", "https", "xh", "xhs", "httpie", "aria2c", "lynx", "w3m", "links",
    "elinks", "ab", "hey", "wrk", "grpcurl", "wget2",
];

/// Programs that can send a request to the daemon.
pub(super) const NETWORK: &[&str] = &[
    "curl",
    "wget",
    "wget2",
    "http",
    "https",
    "xh",
    "xhs",
    "httpie",
    "aria2c",
    "lynx",
    "w3m",
    "links",
    "elinks",
    "ab",
    "hey",
    "wrk",
    "grpcurl",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "openssl",
    "websocat",
    "ftp",
    "busybox",
    "powershell",
    "pwsh",
];

/// Editors: what they open they may write.
const EDITORS: &[&str] = &[
    "vi",
    "vim",
    "nvim",
    "view",
    "ex",
    "gvim",
    "nano",
    "pico",
    "emacs",
    "emacsclient",
    "ed",
    "micro",
    "kak",
    "hx",
    "helix",
    "joe",
    "jed",
    "mcedit",
    "code",
    "code-insiders",
    "codium",
    "subl",
    "gedit",
    "kate",
    "mousepad",
    "cursor",
    "zed",
];

/// How a program uses its arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Not files: nothing to judge.
    Text,
    /// Reads every operand.
    Read,
    /// The first operand is a pattern (unless `-e`/`-f` gives it); the rest
    /// are read.
    Grep,
    /// Does `Access` to every operand; a tree with `-r`/`-R`.
    Each(Access),
    /// The first operand is the mode (owner, attributes) unless
    /// `--reference` names a file.
    Mode,
    /// The last operand (or `-t DIR`) is written, the others read.
    Copy,
    /// The last operand (or `-t DIR`) is written, the others moved away.
    Move,
    /// Every operand is linked.
    Link,
    Truncate,
    Touch,
    Dd,
    Sed,
    Git,
    Find,
    Tar,
    Unzip,
    Zip,
    Compress,
    /// The first operand is read, the second written (`uniq IN OUT`, `xxd IN OUT`).
    InOut,
    /// Reads operands; `-o FILE` writes.
    OutputOpt,
    Patch,
    Curl,
    Wget,
    Mount,
    /// toolgate itself reads its own files: not judged here (its operator
    /// commands are the catalogue's).
    Toolgate,
}

fn form(program: &str) -> Option<(Form, &'static [&'static str])> {
    let f = match program {
        p if TEXT.contains(&p) => (Form::Text, &[][..]),
        "grep" | "egrep" | "fgrep" | "zgrep" | "rg" | "ag" | "ack" => (
            Form::Grep,
            &[
                "-e",
                "--regexp",
                "-f",
                "--file",
                "-m",
                "--max-count",
                "-A",
                "-B",
                "-C",
                "--context",
                "--after-context",
                "--before-context",
                "-g",
                "--glob",
                "-t",
                "--type",
                "-T",
                "--type-not",
                "--include",
                "--exclude",
                "--exclude-dir",
                "-d",
                "--directories",
                "-D",
                "--devices",
                "--label",
                "--color",
                "--colors",
                "-M",
                "--max-columns",
                "-j",
                "--threads",
                "--max-depth",
                "--maxdepth",
                "--ignore-file",
                "-E",
                "--encoding",
                "--sort",
                "--sortr",
                "-r",
                "--replace",
                "--pre",
                "--engine",
            ][..],
        ),
        "find" | "fd" | "fdfind" => (Form::Find, &[][..]),
        p if READ_ONLY.contains(&p) => (
            Form::Read,
            &[
                "-n",
                "-c",
                "--lines",
                "--bytes",
                "-s",
                "--sleep-interval",
                "-L",
                "-I",
                "-P",
                "--max-depth",
                "-d",
                "-t",
                "-f",
                "--from-file",
                "--indent",
                "--arg",
                "--argjson",
                "--slurpfile",
                "--rawfile",
                "-w",
                "-i",
                "-o",
                "-N",
                "-j",
                "-A",
                "-B",
                "-C",
            ][..],
        ),
        "rm" | "unlink" | "rmdir" | "shred" | "srm" | "wipe" | "scrub" => (
            Form::Each(Access::Delete),
            &[
                "-n",
                "--iterations",
                "-s",
                "--size",
                "--random-source",
                "--interactive",
            ][..],
        ),
        "tee" | "mkdir" | "mkfifo" | "mknod" | "sponge" => (
            Form::Each(Access::Write),
            &["-m", "--mode", "-Z", "--context"][..],
        ),
        p if EDITORS.contains(&p) => (
            Form::Each(Access::Write),
            &[
                "-c",
                "--cmd",
                "-u",
                "-U",
                "-i",
                "-T",
                "-S",
                "-w",
                "-W",
                "-s",
                "--eval",
                "-l",
                "--load",
                "-f",
                "--funcall",
                "-g",
                "--goto",
                "--user-data-dir",
                "--profile",
            ][..],
        ),
        "chmod" | "chown" | "chgrp" | "chattr" => (Form::Mode, &["--from", "-v", "-p"][..]),
        "setfacl" | "setfattr" | "chcon" => (
            Form::Mode,
            &[
                "-m",
                "--modify",
                "-x",
                "--remove",
                "-M",
                "--modify-file",
                "-X",
                "--remove-file",
                "--set",
                "--set-file",
                "-n",
                "--name",
                "-v",
                "--value",
                "-u",
                "-r",
                "-t",
                "-l",
                "--user",
                "--role",
                "--type",
                "--range",
            ][..],
        ),
        "cp" | "install" | "ginstall" | "rsync" | "scp" | "rclone" => (
            Form::Copy,
            &[
                "-t",
                "--target-directory",
                "-S",
                "--suffix",
                "-m",
                "--mode",
                "-o",
                "--owner",
                "-g",
                "--group",
                "-e",
                "--rsh",
                "--exclude",
                "--include",
                "--filter",
                "-f",
                "--exclude-from",
                "--include-from",
                "--files-from",
                "--rsync-path",
                "--backup-dir",
                "--chmod",
                "--chown",
                "--log-file",
                "--password-file",
                "-T",
                "--temp-dir",
                "--partial-dir",
                "-F",
                "-i",
                "-l",
                "-P",
                "-J",
                "-c",
                "-D",
                "-B",
                "--block-size",
                "--compare-dest",
                "--copy-dest",
                "--link-dest",
                "--reflink",
            ][..],
        ),
        "mv" => (
            Form::Move,
            &["-t", "--target-directory", "-S", "--suffix"][..],
        ),
        "ln" | "link" => (
            Form::Link,
            &["-t", "--target-directory", "-S", "--suffix"][..],
        ),
        "truncate" => (Form::Truncate, &["-s", "--size", "-r", "--reference"][..]),
        "touch" => (
            Form::Touch,
            &["-d", "--date", "-t", "-r", "--reference"][..],
        ),
        "dd" => (Form::Dd, &[][..]),
        "sed" | "gsed" => (
            Form::Sed,
            &["-e", "--expression", "-f", "--file", "-l", "--line-length"][..],
        ),
        "git" => (Form::Git, &[][..]),
        "tar" | "gtar" | "bsdtar" => (Form::Tar, &[][..]),
        "unzip" => (Form::Unzip, &["-d", "-x", "-P"][..]),
        "zip" => (
            Form::Zip,
            &["-b", "-n", "-t", "-tt", "-x", "-i", "-P", "-O", "--out"][..],
        ),
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "lzma" | "unlzma" | "zstd"
        | "unzstd" | "lz4" | "unlz4" | "pigz" | "unpigz" | "compress" | "uncompress" | "brotli" => {
            (
                Form::Compress,
                &["-S", "--suffix", "-T", "--threads", "-o", "--output"][..],
            )
        }
        "uniq" | "xxd" | "json.tool" => (
            Form::InOut,
            &["-f", "-s", "-w", "-c", "-g", "-l", "-o", "-s", "--indent"][..],
        ),
        "sort" | "iconv" | "sdiff" | "csplit" | "split" | "yq" | "shuf" => (
            Form::OutputOpt,
            &[
                "-o",
                "--output",
                "-k",
                "--key",
                "-t",
                "--field-separator",
                "-S",
                "--buffer-size",
                "-T",
                "--temporary-directory",
                "-f",
                "--from-code",
                "-t",
                "--to-code",
                "-l",
                "-b",
                "-n",
                "-a",
                "-d",
                "-e",
                "--front-matter",
                "-p",
                "--output-format",
                "--input-format",
                "-I",
                "--indent",
            ][..],
        ),
        "patch" => (
            Form::Patch,
            &[
                "-i",
                "--input",
                "-o",
                "--output",
                "-p",
                "--strip",
                "-d",
                "--directory",
                "-r",
                "--reject-file",
                "-B",
                "--prefix",
                "-F",
                "--fuzz",
                "-z",
                "--suffix",
                "-D",
                "--ifdef",
            ][..],
        ),
        "curl" => (Form::Curl, &[][..]),
        "wget" | "wget2" => (Form::Wget, &[][..]),
        "mount" => (
            Form::Mount,
            &[
                "-t",
                "--types",
                "-o",
                "--options",
                "-L",
                "--label",
                "-U",
                "--uuid",
            ][..],
        ),
        "toolgate" => (Form::Toolgate, &[][..]),
        _ => return None,
    };
    Some(f)
}

/// One command's judge: the environment and the best finding so far.
struct Judge<'a> {
    p: &'a Protected,
    env: &'a Env,
    ctx: &'a Context,
    /// The directory relative paths resolve against (`None`: unknown).
    base: Option<String>,
    best: Option<Hit>,
}

impl Judge<'_> {
    fn raise(&mut self, h: Option<Hit>) {
        if h.is_some() {
            self.best = stricter(self.best.take(), h);
        }
    }

    /// The absolute path a literal word names (`None`: relative in an
    /// unknown directory).
    fn resolve(&self, text: &str) -> Option<String> {
        let absolute = text.starts_with('/')
            || text.starts_with('~')
            || text.starts_with("$HOME")
            || text.starts_with("${HOME}");
        match (&self.base, absolute) {
            (_, true) => Some(self.env.resolve(text)),
            (Some(base), false) => Some(self.env.resolve_from(base, text)),
            (None, false) => None,
        }
    }

    /// Judges `access` to the path a word names.
    fn word(&mut self, access: Access, w: &Word, tree: bool) {
        self.text(access, &w.text, w.dynamic, tree);
    }

    fn text(&mut self, access: Access, text: &str, dynamic: bool, tree: bool) {
        if text.is_empty() || text == "-" {
            return;
        }
        let h = if dynamic {
            self.dynamic(access, text)
        } else if access.changes() && text.eq_ignore_ascii_case("toolgate") && self.ctx.gate_located
        {
            // `rm "$(which toolgate)"`: the substitution reads as the name.
            verdict(
                access,
                super::members::Member {
                    what: super::members::What::Binary,
                    secret: false,
                },
                Certainty::Certain,
                "the path `which toolgate` names",
            )
        } else {
            match self.resolve(text) {
                Some(abs) => self.p.judge_path(access, &abs, tree, self.env),
                None => self
                    .p
                    .member_by_tail(text)
                    .and_then(|m| verdict(access, m, Certainty::Certain, text)),
            }
        };
        self.raise(h);
    }

    /// A word known only in part: its literal end names a member wherever
    /// it lies, or its known start makes it a glob over paths, or its text
    /// names one (`$(find ~ -name toolgate.toml)`).
    fn dynamic(&self, access: Access, text: &str) -> Option<Hit> {
        let glob = as_glob(text);
        if (glob.starts_with('/') || glob.starts_with("~/"))
            && let Some(m) = self.p.member_by_glob(&self.env.resolve(&glob), self.env)
        {
            return verdict(access, m, Certainty::Maybe, text);
        }
        let tail = glob.rsplit('*').next().unwrap_or("");
        if let Some(m) = self.p.member_by_tail(tail) {
            return verdict(access, m, Certainty::Certain, text);
        }
        let named = super::code::named_in_text(self.p, text, self.base.as_deref(), self.env);
        if let Some((m, _)) = named {
            return verdict(access, m, Certainty::Maybe, text);
        }
        if access.changes() && text.to_ascii_lowercase().contains("toolgate") {
            return Some(Hit::escalate(
                "protected.write",
                format!(
                    "{} a path computed at run time from toolgate's name ({text})",
                    access_verb(access)
                ),
            ));
        }
        None
    }
}

fn access_verb(a: Access) -> &'static str {
    match a {
        Access::Delete => "deletes",
        Access::Move => "moves",
        Access::Link => "links",
        Access::Chmod => "changes the permissions of",
        _ => "writes",
    }
}

/// A word with its unknown parts (`$VAR`, `${…}`, `$(…)`, `` `…` ``) as `*`.
fn as_glob(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'$' if b.get(i + 1) == Some(&b'(') => {
                let mut depth = 0usize;
                let mut j = i + 1;
                while j < b.len() {
                    match b[j] {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                out.push('*');
                i = j + 1;
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                let end = text[i..].find('}').map_or(b.len(), |k| i + k);
                out.push('*');
                i = end + 1;
            }
            b'$' => {
                let mut j = i + 1;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                if j == i + 1 && j < b.len() {
                    j += 1;
                }
                out.push('*');
                i = j;
            }
            b'`' => {
                let end = text[i + 1..].find('`').map_or(b.len(), |k| i + 1 + k);
                out.push('*');
                i = end + 1;
            }
            b'{' if text[i..].starts_with("{xargs") => {
                let end = text[i..].find('}').map_or(b.len(), |k| i + k);
                out.push('*');
                i = end + 1;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// Classified arguments: (flags, operands, option values by option).
struct Argv<'a> {
    flags: Vec<&'a str>,
    operands: Vec<&'a Word>,
    values: Vec<(&'a str, &'a Word)>,
}

fn split_argv<'a>(args: &'a [Word], value_opts: &[&str]) -> Argv<'a> {
    let mut a = Argv {
        flags: Vec::new(),
        operands: Vec::new(),
        values: Vec::new(),
    };
    let mut pending: Option<&str> = None;
    let mut only = false;
    for w in args {
        let t = w.text.as_str();
        if let Some(opt) = pending.take() {
            a.values.push((opt, w));
        } else if only || !t.starts_with('-') || t == "-" || w.dynamic {
            a.operands.push(w);
        } else if t == "--" {
            only = true;
        } else {
            a.flags.push(t);
            if !t.contains('=') && value_opts.contains(&t) {
                pending = Some(t);
            }
        }
    }
    a
}

impl Argv<'_> {
    /// Whether `-x` (also in a short cluster) or `--long` (or `--long=…`) is given.
    fn has(&self, short: Option<char>, long: &[&str]) -> bool {
        self.flags.iter().any(|f| {
            long.iter()
                .any(|l| f == l || f.starts_with(&format!("{l}=")))
                || short.is_some_and(|s| !f.starts_with("--") && f.len() > 1 && f[1..].contains(s))
        })
    }

    /// The value of an option given as `-o V`, `--opt V`, `--opt=V` or `-oV`.
    fn value_of(&self, names: &[&str]) -> Vec<(String, bool)> {
        let mut out: Vec<(String, bool)> = self
            .values
            .iter()
            .filter(|(o, _)| names.contains(o))
            .map(|(_, w)| (w.text.clone(), w.dynamic))
            .collect();
        for f in &self.flags {
            for n in names {
                if n.starts_with("--") {
                    if let Some(v) = f.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                        out.push((v.to_string(), false));
                    }
                } else if f.len() > n.len() && f.starts_with(n) && !f.starts_with("--") {
                    out.push((f[n.len()..].to_string(), false));
                }
            }
        }
        out
    }
}

fn recursive(a: &Argv) -> bool {
    a.has(Some('r'), &["--recursive"]) || a.has(Some('R'), &[])
}

fn basename(p: &str) -> &str {
    p.trim_end_matches('/').rsplit('/').next().unwrap_or(p)
}

impl Judge<'_> {
    /// Destination `dst` receiving `sources`: `dst` itself, and
    /// `dst/<name>` for each source (a directory destination).
    fn into_dir(&mut self, dst: &Word, sources: &[&Word], access: Access) {
        self.word(access, dst, false);
        // `dst/<name>` only where `dst` reads as a directory: a trailing
        // `/`, `.`/`..`, or a name without an extension (`~/.claude`, `bin`);
        // `cp toolgate.toml /tmp/toolgate.toml.bak` writes a file.
        let last = basename(&dst.text);
        let dir_like = dst.text.ends_with('/')
            || matches!(last, "." | ".." | "~")
            || !last.trim_start_matches('.').contains('.');
        if dst.dynamic || !dir_like {
            return;
        }
        for s in sources {
            let name = basename(&s.text);
            if name.is_empty() || name == "." || name == ".." || s.dynamic {
                continue;
            }
            let joined = format!("{}/{name}", dst.text.trim_end_matches('/'));
            self.text(access, &joined, false, false);
        }
    }

    /// A directory that receives files whose names are not known here (an
    /// archive extracted into it): a member, or a directory of hook settings.
    fn receives(&mut self, dir: &str, dynamic: bool) {
        if dynamic {
            self.text(Access::Write, dir, true, false);
            return;
        }
        let Some(abs) = self.resolve(dir) else { return };
        if let Some(h) = self.p.judge_path(Access::Write, &abs, false, self.env) {
            self.raise(Some(h));
            return;
        }
        let name = basename(&abs).to_ascii_lowercase();
        if HOOK_DIRS.contains(&name.as_str()) {
            self.raise(Some(Hit::block(
                "protected.write",
                format!(
                    "writes files of unknown names into {abs}, where an agent runtime reads its \
                     hook settings"
                ),
            )));
        }
    }

    fn each(&mut self, access: Access, ws: &[&Word], tree: bool) {
        for w in ws {
            self.word(access, w, tree);
        }
    }

    /// Every word of a command toolgate does not know, and the parts of
    /// words (`-v ~/.claude:/x`, `--config=…`, `of=…`), as named with an
    /// unknown effect.
    fn unknown(&mut self, args: &[Word]) {
        for w in args {
            if !w.dynamic && w.text.starts_with('-') && !w.text.contains(['=', '/']) {
                continue;
            }
            if w.dynamic {
                self.word(Access::Unknown, w, false);
                continue;
            }
            let t = w.text.as_str();
            let value = t
                .split_once('=')
                .map_or(t, |(k, v)| if k.contains('/') { t } else { v });
            let mut pieces = 0;
            for piece in value.split([':', ',']) {
                pieces += 1;
                if pieces > 16 {
                    break;
                }
                if piece.contains(['/', '.', '~']) && piece.len() < 4096 {
                    self.text(Access::Unknown, piece, false, false);
                }
            }
        }
    }
}

/// Findings for one simple command (module docs).
pub(crate) fn command_hits(
    p: &Protected,
    cmd: &SimpleCommand,
    env: &Env,
    ctx: &Context,
) -> Option<Hit> {
    let mut j = Judge {
        p,
        env,
        ctx,
        base: cmd.cwd.clone(),
        best: None,
    };
    for r in &cmd.redirects {
        let access = match r.kind {
            RedirectKind::Write => Access::Overwrite,
            RedirectKind::Append | RedirectKind::ReadWrite => Access::Write,
            RedirectKind::Read => Access::Read,
            RedirectKind::Dup => continue,
        };
        j.word(access, &r.target, false);
    }
    if cmd.wrapper {
        // The wrapped command is judged on its own.
        return j.best;
    }
    let prog = cmd.program.as_str();
    let args = cmd.args();
    if let Some(code) = &cmd.inline_code {
        j.raise(p.judge_code(&code.code, cmd.cwd.as_deref(), env));
        let lang = code.language.as_str();
        let awk = lang.ends_with("awk");
        let vim = matches!(lang, "vim" | "nvim" | "vi" | "ex" | "view" | "gvim");
        // The operands besides the code: the code's arguments.
        let a = split_argv(
            args,
            &[
                "-F", "-v", "-e", "-E", "-c", "--cmd", "-r", "-M", "-I", "-x", "-W", "-X",
            ],
        );
        let in_place = a.flags.iter().any(|f| {
            (f.starts_with("-i") && !f.starts_with("--"))
                || f.starts_with("-pi")
                || f.starts_with("-ni")
                || *f == "--in-place"
        }) || a
            .values
            .iter()
            .any(|(o, w)| *o == "-i" && w.text == "inplace");
        let access = if vim || in_place {
            Access::Write
        } else if awk && !awk_writes(&code.code) {
            Access::Read
        } else {
            Access::Code
        };
        for w in a.operands.iter().filter(|w| w.text != code.code) {
            j.word(access, w, false);
        }
        return j.best;
    }
    let Some((f, value_opts)) = form(prog) else {
        // A program toolgate does not know (a script and its arguments
        // included): what it does with a member it names is not known.
        j.unknown(args);
        return j.best;
    };
    let a = split_argv(args, value_opts);
    match f {
        Form::Text | Form::Toolgate => {}
        Form::Read => {
            j.each(Access::Read, &a.operands, false);
            for (_, w) in &a.values {
                if w.text.contains('/') {
                    j.word(Access::Read, w, false);
                }
            }
        }
        Form::Grep => {
            let given = a.has(None, &["-e", "--regexp", "-f", "--file"])
                || a.values
                    .iter()
                    .any(|(o, _)| matches!(*o, "-e" | "--regexp" | "-f" | "--file"));
            let files = if given {
                &a.operands[..]
            } else {
                a.operands.get(1..).unwrap_or(&[])
            };
            j.each(Access::Read, files, false);
            for (v, d) in a.value_of(&["-f", "--file"]) {
                j.text(Access::Read, &v, d, false);
            }
        }
        Form::Each(access) => {
            let tree = access == Access::Delete && recursive(&a);
            j.each(access, &a.operands, tree);
        }
        Form::Mode => {
            // The first operand is the mode, owner or context, unless
            // `--reference` names a file or the mode was written like a
            // flag (`chmod -w f`); chattr's and setfacl's specs are flags
            // or option values.
            let symbolic_flag = prog == "chmod"
                && a.flags.iter().any(|f| {
                    !f.starts_with("--")
                        && f.len() > 1
                        && f[1..].chars().all(|c| "rwxXst".contains(c))
                });
            let all = matches!(prog, "chattr" | "setfacl" | "setfattr")
                || symbolic_flag
                || !a.value_of(&["--reference"]).is_empty();
            let targets = if all {
                &a.operands[..]
            } else {
                a.operands.get(1..).unwrap_or(&[])
            };
            j.each(Access::Chmod, targets, recursive(&a));
        }
        Form::Copy | Form::Move | Form::Link => {
            let target_dir = a.value_of(&["-t", "--target-directory"]);
            let ops: Vec<&Word> = a
                .operands
                .iter()
                .copied()
                .filter(|w| !(matches!(prog, "scp" | "rsync" | "rclone") && is_remote(&w.text)))
                .collect();
            let (sources, dst): (&[&Word], Option<&Word>) = if !target_dir.is_empty() {
                (&ops[..], None)
            } else if prog == "install" && a.has(Some('d'), &["--directory"]) {
                j.each(Access::Write, &ops, false);
                (&[], None)
            } else {
                match ops.split_last() {
                    Some((last, rest)) if !rest.is_empty() => (rest, Some(*last)),
                    _ => (&ops[..], None),
                }
            };
            let (src_access, dst_access) = match f {
                Form::Move => (Access::Move, Access::Write),
                Form::Link => (Access::Link, Access::Link),
                _ if a.has(Some('l'), &["--link"]) && prog == "cp" => (Access::Link, Access::Write),
                _ if a.has(Some('s'), &["--symbolic-link"]) && prog == "cp" => {
                    (Access::Link, Access::Write)
                }
                _ if a.has(None, &["--remove-source-files"]) => (Access::Move, Access::Write),
                _ if prog == "install" => (Access::Read, Access::ExecReplace),
                _ => (Access::Read, Access::Overwrite),
            };
            j.each(src_access, sources, f == Form::Move);
            let deletes = a.flags.iter().any(|f| f.starts_with("--del"));
            for (dir, d) in target_dir {
                let w = Word {
                    text: dir,
                    dynamic: d,
                };
                j.into_dir(&w, sources, dst_access);
            }
            if let Some(dst) = dst {
                j.into_dir(dst, sources, dst_access);
                if deletes {
                    j.word(Access::Delete, dst, true);
                }
                if recursive(&a) || a.has(Some('a'), &["--archive"]) {
                    // A tree copied into a settings directory, names unknown.
                    if sources
                        .iter()
                        .any(|s| s.text.ends_with('/') || s.text.ends_with("/."))
                    {
                        j.receives(&dst.text, dst.dynamic);
                    }
                }
            }
        }
        Form::Truncate => {
            j.each(Access::Overwrite, &a.operands, false);
            for (v, d) in a.value_of(&["-r", "--reference"]) {
                j.text(Access::Read, &v, d, false);
            }
        }
        Form::Touch => {
            j.each(Access::Write, &a.operands, false);
            for (v, d) in a.value_of(&["-r", "--reference"]) {
                j.text(Access::Read, &v, d, false);
            }
        }
        Form::Dd => {
            for w in args {
                if let Some(v) = w.text.strip_prefix("of=") {
                    j.text(Access::Overwrite, v, w.dynamic, false);
                } else if let Some(v) = w.text.strip_prefix("if=") {
                    j.text(Access::Read, v, w.dynamic, false);
                }
            }
        }
        Form::Sed => {
            let in_place = a.flags.iter().any(|f| {
                f.starts_with("--in-place") || (!f.starts_with("--") && f[1..].contains('i'))
            });
            let script_given =
                a.has(None, &["-e", "--expression", "-f", "--file"]) || !a.values.is_empty();
            let files = if script_given {
                &a.operands[..]
            } else {
                a.operands.get(1..).unwrap_or(&[])
            };
            j.each(
                if in_place {
                    Access::Write
                } else {
                    Access::Read
                },
                files,
                false,
            );
        }
        Form::Git => git(&mut j, args),
        Form::Find => find(&mut j, args),
        Form::Tar => tar(&mut j, args),
        Form::Unzip => {
            let dir = a.value_of(&["-d"]);
            let mut ops = a.operands.iter();
            if let Some(archive) = ops.next() {
                j.word(Access::Read, archive, false);
            }
            for (d, dynamic) in &dir {
                j.receives(d, *dynamic);
                for w in ops.clone() {
                    if !w.dynamic {
                        let joined = format!("{}/{}", d.trim_end_matches('/'), w.text);
                        j.text(Access::Write, &joined, false, false);
                    }
                }
            }
            if dir.is_empty() {
                for w in ops {
                    j.word(Access::Write, w, false);
                }
            }
        }
        Form::Zip => {
            let moves = a.has(Some('m'), &["--move"]);
            let mut ops = a.operands.iter();
            if let Some(archive) = ops.next() {
                j.word(Access::Overwrite, archive, false);
            }
            let rest: Vec<&Word> = ops.copied().collect();
            j.each(
                if moves { Access::Move } else { Access::Read },
                &rest,
                moves,
            );
        }
        Form::Compress => {
            let keeps = a.has(Some('c'), &["--stdout", "--to-stdout"])
                || a.has(Some('k'), &["--keep"])
                || a.has(Some('t'), &["--test"])
                || a.has(Some('l'), &["--list"]);
            j.each(
                if keeps { Access::Read } else { Access::Delete },
                &a.operands,
                false,
            );
            for (v, d) in a.value_of(&["-o", "--output"]) {
                j.text(Access::Overwrite, &v, d, false);
            }
        }
        Form::InOut => {
            if let Some(first) = a.operands.first() {
                j.word(Access::Read, first, false);
            }
            if let Some(second) = a.operands.get(1) {
                j.word(Access::Overwrite, second, false);
            }
        }
        Form::OutputOpt => {
            j.each(Access::Read, &a.operands, false);
            for (v, d) in a.value_of(&["-o", "--output"]) {
                j.text(Access::Overwrite, &v, d, false);
            }
            if prog == "yq" && a.has(Some('i'), &["--inplace"]) {
                j.each(Access::Write, &a.operands, false);
            }
        }
        Form::Patch => {
            if let Some(first) = a.operands.first() {
                j.word(Access::Write, first, false);
            }
            for (v, d) in a.value_of(&["-o", "--output"]) {
                j.text(Access::Overwrite, &v, d, false);
            }
            for (v, d) in a.value_of(&["-i", "--input"]) {
                j.text(Access::Read, &v, d, false);
            }
        }
        Form::Curl => curl(&mut j, args),
        Form::Wget => wget(&mut j, args),
        Form::Mount => {
            if let Some(last) = a.operands.last() {
                j.word(Access::Overwrite, last, false);
            }
        }
    }
    j.best
}

/// Whether awk code can write: output redirection, pipes, `system`.
fn awk_writes(code: &str) -> bool {
    code.contains('>') || code.contains('|') || code.contains("system") || code.contains("inplace")
}

/// `[user@]host:path` to scp and rsync: a file on another machine.
fn is_remote(t: &str) -> bool {
    match (t.find(':'), t.find('/')) {
        (Some(c), Some(s)) => c < s && c > 0,
        (Some(c), None) => c > 0,
        _ => false,
    }
}

/// git's working-tree commands: what they write, remove or move.
fn git(j: &mut Judge, args: &[Word]) {
    let mut i = 0;
    // Global options; `-C DIR` moves where paths resolve.
    while i < args.len() {
        let t = args[i].text.as_str();
        if matches!(
            t,
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path"
        ) {
            if t == "-C" || t == "--work-tree" {
                if let Some(dir) = args.get(i + 1) {
                    if dir.dynamic {
                        j.base = None;
                    } else {
                        j.base = j.resolve(&dir.text);
                    }
                }
            }
            i += 2;
        } else if t.starts_with('-') {
            if let Some(dir) = t.strip_prefix("--work-tree=") {
                j.base = j.resolve(dir);
            }
            i += 1;
        } else {
            break;
        }
    }
    let Some(sub) = args.get(i) else { return };
    let rest = &args[i + 1..];
    let a = split_argv(
        rest,
        &[
            "-m",
            "-b",
            "-B",
            "-s",
            "--source",
            "-o",
            "--output",
            "-f",
            "--file",
            "-c",
            "-C",
            "-F",
            "--pathspec-from-file",
            "--conflict",
            "--orphan",
        ],
    );
    let access = match sub.text.as_str() {
        "checkout" | "restore" | "checkout-index" => Access::Overwrite,
        "reset" if a.has(None, &["--hard", "--merge", "--keep"]) => Access::Overwrite,
        "stash" => Access::Overwrite,
        "rm" => Access::Delete,
        "clean" => Access::Delete,
        "mv" => Access::Move,
        "config" => {
            for (v, d) in a.value_of(&["-f", "--file"]) {
                j.text(Access::Write, &v, d, false);
            }
            return;
        }
        "archive" | "format-patch" | "bundle" | "diff" | "log" | "show" => {
            for (v, d) in a.value_of(&["-o", "--output"]) {
                j.text(Access::Overwrite, &v, d, false);
            }
            return;
        }
        _ => return,
    };
    let tree = matches!(access, Access::Delete | Access::Move) && recursive(&a);
    j.each(access, &a.operands, tree || sub.text == "mv");
}

/// `find` acting on what it finds: `-delete`, `-fprint FILE`; `-exec` runs
/// are reported by the analyzer as commands of their own.
fn find(j: &mut Judge, args: &[Word]) {
    let roots: Vec<&Word> = args
        .iter()
        .take_while(|w| w.dynamic || !(w.text.starts_with('-') || w.text == "(" || w.text == "!"))
        .collect();
    let deletes = args.iter().any(|w| w.text == "-delete");
    for (i, w) in args.iter().enumerate() {
        if matches!(
            w.text.as_str(),
            "-fprint" | "-fprint0" | "-fls" | "-fprintf"
        ) && let Some(f) = args.get(i + 1)
        {
            j.word(Access::Overwrite, f, false);
        }
    }
    if !deletes {
        j.each(Access::Read, &roots, false);
        return;
    }
    let names: Vec<&Word> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            *i > 0
                && matches!(
                    args[i - 1].text.as_str(),
                    "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-regex"
                )
        })
        .map(|(_, w)| w)
        .collect();
    let roots: Vec<&Word> = if roots.is_empty() { Vec::new() } else { roots };
    if names.is_empty() {
        j.each(Access::Delete, &roots, true);
        return;
    }
    // Narrowed to names: each member name the test matches, under each root.
    for root in roots.iter().filter(|r| !r.dynamic) {
        let Some(abs) = j.resolve(&root.text) else {
            continue;
        };
        for name in &names {
            let pattern = name.text.rsplit('/').next().unwrap_or(&name.text);
            for probe in PROBES {
                if !path_match(pattern, probe) {
                    continue;
                }
                let certain = !is_glob(pattern);
                for dir in ["", "/.claude", "/.codex", "/.gemini", "/.cursor"] {
                    let cand = format!("{}{dir}/{probe}", abs.trim_end_matches('/'));
                    if let Some(m) = j.p.member(&cand, j.env) {
                        let certainty = if certain {
                            Certainty::Certain
                        } else {
                            Certainty::Maybe
                        };
                        let shown = format!("{} under {abs}", name.text);
                        j.raise(verdict(Access::Delete, m, certainty, &shown));
                    }
                }
            }
        }
    }
}

/// tar: extracting writes into `-C DIR` (or here), creating writes the
/// archive; `--remove-files` deletes what it archived.
fn tar(j: &mut Judge, args: &[Word]) {
    let mut extract = false;
    let mut create = false;
    let mut archive: Option<&Word> = None;
    let mut dir: Option<&Word> = None;
    let mut removes = false;
    let mut operands: Vec<&Word> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        let cluster = if i == 0
            && !t.starts_with('-')
            && !w.dynamic
            && t.chars().all(|c| c.is_ascii_alphabetic())
        {
            Some(t)
        } else if t.starts_with('-') && !t.starts_with("--") {
            Some(&t[1..])
        } else {
            None
        };
        if let Some(c) = cluster {
            extract |= c.contains('x');
            create |= c.contains('c') || c.contains('r') || c.contains('u');
            // Options taking values in the cluster, in order: the next words.
            let mut next = i + 1;
            for ch in c.chars() {
                match ch {
                    'f' => {
                        archive = args.get(next);
                        next += 1;
                    }
                    'C' => {
                        dir = args.get(next);
                        next += 1;
                    }
                    'T' | 'X' | 'b' | 'H' | 'I' | 'K' | 'N' | 'L' | 'V' | 'g' => next += 1,
                    _ => {}
                }
            }
            i = next;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            match name {
                "extract" | "get" => extract = true,
                "create" | "append" | "update" => create = true,
                "remove-files" => removes = true,
                "file" | "directory" => {
                    let v = match value {
                        Some(_) => None,
                        None => {
                            i += 1;
                            args.get(i)
                        }
                    };
                    if let Some(v) = value {
                        let owned = Word {
                            text: v.to_string(),
                            dynamic: w.dynamic,
                        };
                        if name == "directory" {
                            j.receives(&owned.text, owned.dynamic);
                        } else if create {
                            j.word(Access::Overwrite, &owned, false);
                        }
                    } else if name == "directory" {
                        dir = v;
                    } else {
                        archive = v;
                    }
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        operands.push(w);
        i += 1;
    }
    if extract {
        if let Some(d) = dir {
            j.receives(&d.text, d.dynamic);
            for w in operands.iter().filter(|w| !w.dynamic) {
                let joined = format!("{}/{}", d.text.trim_end_matches('/'), w.text);
                j.text(Access::Write, &joined, false, false);
            }
        } else {
            j.each(Access::Write, &operands, false);
        }
    }
    if create {
        if let Some(a) = archive {
            j.word(Access::Overwrite, a, false);
        }
        j.each(
            if removes {
                Access::Delete
            } else {
                Access::Read
            },
            &operands,
            removes,
        );
    }
}

/// curl's files: what it writes (`-o`, `-c`, `-D`, `--trace`) and reads
/// (`-T`, `-K`, `@file` data).
fn curl(j: &mut Judge, args: &[Word]) {
    let writes = [
        "-o",
        "--output",
        "-c",
        "--cookie-jar",
        "-D",
        "--dump-header",
        "--trace",
        "--trace-ascii",
        "--stderr",
        "--etag-save",
        "--hsts",
        "--alt-svc",
    ];
    let reads = [
        "-T",
        "--upload-file",
        "-K",
        "--config",
        "-b",
        "--cookie",
        "--cacert",
        "--cert",
        "--key",
        "-E",
        "--netrc-file",
        "--etag-compare",
        "--json",
    ];
    let data = [
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-urlencode",
        "-F",
        "--form",
        "--data-ascii",
        "--json",
    ];
    for (i, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        let next = args.get(i + 1);
        if let Some(v) = next {
            if writes.contains(&t) {
                j.word(Access::Overwrite, v, false);
            } else if reads.contains(&t) {
                j.text(
                    Access::Read,
                    v.text.strip_prefix('@').unwrap_or(&v.text),
                    v.dynamic,
                    false,
                );
            } else if data.contains(&t) {
                let body = v.text.as_str();
                let file = body
                    .strip_prefix('@')
                    .or_else(|| body.split_once("=@").map(|(_, f)| f))
                    .or_else(|| body.split_once('<').map(|(_, f)| f));
                if let Some(f) = file {
                    j.text(
                        Access::Read,
                        f.split(';').next().unwrap_or(f),
                        v.dynamic,
                        false,
                    );
                }
            }
        }
        if let Some(f) = t.strip_prefix("--output=") {
            j.text(Access::Overwrite, f, w.dynamic, false);
        }
    }
}

/// wget's files.
fn wget(j: &mut Judge, args: &[Word]) {
    let writes = [
        "-O",
        "--output-document",
        "-o",
        "--output-file",
        "-a",
        "--append-output",
        "--save-cookies",
    ];
    let reads = [
        "-i",
        "--input-file",
        "--post-file",
        "--body-file",
        "--load-cookies",
        "--certificate",
        "--private-key",
        "--ca-certificate",
    ];
    for (i, w) in args.iter().enumerate() {
        let t = w.text.as_str();
        if let Some(v) = args.get(i + 1) {
            if writes.contains(&t) {
                j.word(Access::Overwrite, v, false);
            } else if reads.contains(&t) {
                j.word(Access::Read, v, false);
            } else if matches!(t, "-P" | "--directory-prefix") {
                j.receives(&v.text, v.dynamic);
            }
        }
        for (opt, access) in [
            ("--output-document=", Access::Overwrite),
            ("--post-file=", Access::Read),
            ("--body-file=", Access::Read),
        ] {
            if let Some(f) = t.strip_prefix(opt) {
                j.text(access, f, w.dynamic, false);
            }
        }
        if let Some(f) = t
            .strip_prefix("-O")
            .filter(|f| !f.is_empty() && !t.starts_with("--"))
        {
            j.text(Access::Overwrite, f, w.dynamic, false);
        }
    }
}
