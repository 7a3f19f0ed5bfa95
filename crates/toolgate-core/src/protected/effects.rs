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
    // Programs with a form of their own, each judged by its arm (or
    // function) in `command_hits`.
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
    /// Known for its network use only: its arguments are judged as a
    /// program's toolgate does not know.
    Unknown,
    /// toolgate itself reads its own files: not judged here (its operator
    /// commands are the catalogue's).
    Toolgate,
}

/// Whether a program can send a request to the daemon.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Net {
    /// It cannot (as far as its arguments go).
    No,
    /// A client: it sends requests and never listens.
    Client,
    /// It can send (and may listen): `nc`, `socat`, `openssl`.
    Sender,
}

/// A program this module knows.
pub(super) struct Program {
    name: &'static str,
    form: Form,
    opts: &'static [&'static str],
    /// Whether it can send a request.
    pub net: Net,
}

const fn p(name: &'static str, form: Form, opts: &'static [&'static str], net: Net) -> Program {
    Program {
        name,
        form,
        opts,
        net,
    }
}

impl Program {
    /// Whether its arguments are text or files it only reads.
    pub(super) fn only_reads(&self) -> bool {
        matches!(self.form, Form::Text | Form::Read | Form::Grep | Form::Find)
    }
}

/// The program `name`, if this module knows it.
pub(super) fn program(name: &str) -> Option<&'static Program> {
    PROGRAMS
        .binary_search_by(|p| p.name.cmp(name))
        .ok()
        .map(|i| &PROGRAMS[i])
}

/// Options that take the next word as their value, per group of programs.
const NONE: &[&str] = &[];
const OPTS_GREP: &[&str] = &[
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
    "--encoding",
    "--sort",
    "--sortr",
    "--replace",
    "--pre",
    "--engine",
];
const OPTS_READ: &[&str] = &[
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
];
const OPTS_DELETE: &[&str] = &[
    "-n",
    "--iterations",
    "-s",
    "--size",
    "--random-source",
    "--interactive",
];
const OPTS_WRITE: &[&str] = &["-m", "--mode", "-Z", "--context"];
const OPTS_EDITOR: &[&str] = &[
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
];
const OPTS_ED: &[&str] = &["-p", "--prompt"];
const OPTS_MODE: &[&str] = &["--from", "-v", "-p"];
const OPTS_ACL: &[&str] = &[
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
];
const OPTS_CP: &[&str] = &[
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
];
const OPTS_RSYNC: &[&str] = &[
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
    "-B",
    "--block-size",
    "--compare-dest",
    "--copy-dest",
    "--link-dest",
    "-M",
    "--remote-option",
    "--suffix",
];
const OPTS_SCP: &[&str] = &["-F", "-i", "-l", "-o", "-P", "-S", "-c", "-J", "-D", "-X"];
const OPTS_MOVE: &[&str] = &["-t", "--target-directory", "-S", "--suffix"];
const OPTS_TRUNCATE: &[&str] = &["-s", "--size", "-r", "--reference"];
const OPTS_TOUCH: &[&str] = &["-d", "--date", "-t", "-r", "--reference"];
const OPTS_SED: &[&str] = &["-e", "--expression", "-f", "--file", "-l", "--line-length"];
const OPTS_UNZIP: &[&str] = &["-d", "-x", "-P"];
const OPTS_ZIP: &[&str] = &["-b", "-n", "-t", "-tt", "-x", "-i", "-P", "-O", "--out"];
const OPTS_COMPRESS: &[&str] = &["-S", "--suffix", "-T", "--threads", "-o", "--output"];
const OPTS_IN_OUT: &[&str] = &["-f", "-s", "-w", "-c", "-g", "-l", "-o", "-s", "--indent"];
const OPTS_OUTPUT: &[&str] = &[
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
];
const OPTS_PATCH: &[&str] = &[
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
];
const OPTS_MOUNT: &[&str] = &[
    "-t",
    "--types",
    "-o",
    "--options",
    "-L",
    "--label",
    "-U",
    "--uuid",
];

/// Every program this module knows, sorted by name (a unit test keeps
/// it sorted): how it uses its arguments, which of its options take a
/// value, and whether it can send a request.
static PROGRAMS: &[Program] = &[
    p(".", Form::Read, OPTS_READ, Net::No),
    p(":", Form::Text, NONE, Net::No),
    p("[", Form::Text, NONE, Net::No),
    p("[[", Form::Text, NONE, Net::No),
    p("ab", Form::Unknown, NONE, Net::Client),
    p("ack", Form::Grep, OPTS_GREP, Net::No),
    p("ag", Form::Grep, OPTS_GREP, Net::No),
    p("alias", Form::Text, NONE, Net::No),
    p("aria2c", Form::Unknown, NONE, Net::Client),
    p("b2sum", Form::Read, OPTS_READ, Net::No),
    p("base32", Form::Read, OPTS_READ, Net::No),
    p("base64", Form::Read, OPTS_READ, Net::No),
    p("basename", Form::Text, NONE, Net::No),
    p("basenc", Form::Read, OPTS_READ, Net::No),
    p("bat", Form::Read, OPTS_READ, Net::No),
    p("batcat", Form::Read, OPTS_READ, Net::No),
    p("bc", Form::Text, NONE, Net::No),
    p("bg", Form::Text, NONE, Net::No),
    p("break", Form::Text, NONE, Net::No),
    p("brotli", Form::Compress, OPTS_COMPRESS, Net::No),
    p("bsdtar", Form::Tar, NONE, Net::No),
    p("bunzip2", Form::Compress, OPTS_COMPRESS, Net::No),
    p("busybox", Form::Unknown, NONE, Net::Sender),
    p("bzcat", Form::Read, OPTS_READ, Net::No),
    p("bzip2", Form::Compress, OPTS_COMPRESS, Net::No),
    p("cal", Form::Text, NONE, Net::No),
    p("cat", Form::Read, OPTS_READ, Net::No),
    p("cd", Form::Text, NONE, Net::No),
    p("chattr", Form::Mode, OPTS_MODE, Net::No),
    p("chcon", Form::Mode, OPTS_ACL, Net::No),
    p("chgrp", Form::Mode, OPTS_MODE, Net::No),
    p("chmod", Form::Mode, OPTS_MODE, Net::No),
    p("chown", Form::Mode, OPTS_MODE, Net::No),
    p("cksum", Form::Read, OPTS_READ, Net::No),
    p("clear", Form::Text, NONE, Net::No),
    p("cmp", Form::Read, OPTS_READ, Net::No),
    p("code", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p(
        "code-insiders",
        Form::Each(Access::Write),
        OPTS_EDITOR,
        Net::No,
    ),
    p("codium", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("colordiff", Form::Read, OPTS_READ, Net::No),
    p("column", Form::Read, OPTS_READ, Net::No),
    p("comm", Form::Read, OPTS_READ, Net::No),
    p("command", Form::Text, NONE, Net::No),
    p("compress", Form::Compress, OPTS_COMPRESS, Net::No),
    p("continue", Form::Text, NONE, Net::No),
    p("cp", Form::Copy, OPTS_CP, Net::No),
    p("csplit", Form::OutputOpt, OPTS_OUTPUT, Net::No),
    p("curl", Form::Curl, NONE, Net::Client),
    p("cursor", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("cut", Form::Read, OPTS_READ, Net::No),
    p("date", Form::Text, NONE, Net::No),
    p("dc", Form::Text, NONE, Net::No),
    p("dd", Form::Dd, NONE, Net::No),
    p("declare", Form::Text, NONE, Net::No),
    p("delta", Form::Read, OPTS_READ, Net::No),
    p("df", Form::Read, OPTS_READ, Net::No),
    p("diff", Form::Read, OPTS_READ, Net::No),
    p("diff3", Form::Read, OPTS_READ, Net::No),
    p("difft", Form::Read, OPTS_READ, Net::No),
    p("dig", Form::Text, NONE, Net::No),
    p("dir", Form::Read, OPTS_READ, Net::No),
    p("dirname", Form::Text, NONE, Net::No),
    p("disown", Form::Text, NONE, Net::No),
    p("du", Form::Read, OPTS_READ, Net::No),
    p("echo", Form::Text, NONE, Net::No),
    p("ed", Form::Each(Access::Write), OPTS_ED, Net::No),
    p("egrep", Form::Grep, OPTS_GREP, Net::No),
    p("elinks", Form::Unknown, NONE, Net::Client),
    p("emacs", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p(
        "emacsclient",
        Form::Each(Access::Write),
        OPTS_EDITOR,
        Net::No,
    ),
    p("envsubst", Form::Text, NONE, Net::No),
    p("ex", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("exa", Form::Read, OPTS_READ, Net::No),
    p("exit", Form::Text, NONE, Net::No),
    p("expand", Form::Read, OPTS_READ, Net::No),
    p("export", Form::Text, NONE, Net::No),
    p("expr", Form::Text, NONE, Net::No),
    p("eza", Form::Read, OPTS_READ, Net::No),
    p("factor", Form::Text, NONE, Net::No),
    p("false", Form::Text, NONE, Net::No),
    p("fd", Form::Find, NONE, Net::No),
    p("fdfind", Form::Find, NONE, Net::No),
    p("fg", Form::Text, NONE, Net::No),
    p("fgrep", Form::Grep, OPTS_GREP, Net::No),
    p("file", Form::Read, OPTS_READ, Net::No),
    p("find", Form::Find, NONE, Net::No),
    p("fmt", Form::Read, OPTS_READ, Net::No),
    p("fold", Form::Read, OPTS_READ, Net::No),
    p("free", Form::Text, NONE, Net::No),
    p("ftp", Form::Unknown, NONE, Net::Sender),
    p("gedit", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("getfacl", Form::Read, OPTS_READ, Net::No),
    p("getopts", Form::Text, NONE, Net::No),
    p("ginstall", Form::Copy, OPTS_CP, Net::No),
    p("git", Form::Git, NONE, Net::No),
    p("grep", Form::Grep, OPTS_GREP, Net::No),
    p("gron", Form::Read, OPTS_READ, Net::No),
    p("grpcurl", Form::Unknown, NONE, Net::Client),
    p("gsed", Form::Sed, OPTS_SED, Net::No),
    p("gtar", Form::Tar, NONE, Net::No),
    p("gunzip", Form::Compress, OPTS_COMPRESS, Net::No),
    p("gvim", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("gzip", Form::Compress, OPTS_COMPRESS, Net::No),
    p("hash", Form::Text, NONE, Net::No),
    p("hd", Form::Read, OPTS_READ, Net::No),
    p("head", Form::Read, OPTS_READ, Net::No),
    p("helix", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("hexdump", Form::Read, OPTS_READ, Net::No),
    p("hey", Form::Unknown, NONE, Net::Client),
    p("host", Form::Text, NONE, Net::No),
    p("hostname", Form::Text, NONE, Net::No),
    p("htop", Form::Text, NONE, Net::No),
    p("http", Form::Unknown, NONE, Net::Client),
    p("httpie", Form::Unknown, NONE, Net::Client),
    p("https", Form::Unknown, NONE, Net::Client),
    p("hx", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("iconv", Form::OutputOpt, OPTS_OUTPUT, Net::No),
    p("id", Form::Text, NONE, Net::No),
    p("install", Form::Copy, OPTS_CP, Net::No),
    p("jed", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("jobs", Form::Text, NONE, Net::No),
    p("joe", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("join", Form::Read, OPTS_READ, Net::No),
    p("jq", Form::Read, OPTS_READ, Net::No),
    p("json.tool", Form::InOut, OPTS_IN_OUT, Net::No),
    p("kak", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("kate", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("less", Form::Read, OPTS_READ, Net::No),
    p("let", Form::Text, NONE, Net::No),
    p("link", Form::Link, OPTS_MOVE, Net::No),
    p("links", Form::Unknown, NONE, Net::Client),
    p("ln", Form::Link, OPTS_MOVE, Net::No),
    p("local", Form::Text, NONE, Net::No),
    p("locate", Form::Read, OPTS_READ, Net::No),
    p("logger", Form::Text, NONE, Net::No),
    p("look", Form::Read, OPTS_READ, Net::No),
    p("ls", Form::Read, OPTS_READ, Net::No),
    p("lsattr", Form::Read, OPTS_READ, Net::No),
    p("lsd", Form::Read, OPTS_READ, Net::No),
    p("lsof", Form::Read, OPTS_READ, Net::No),
    p("lynx", Form::Unknown, NONE, Net::Client),
    p("lz4", Form::Compress, OPTS_COMPRESS, Net::No),
    p("lz4cat", Form::Read, OPTS_READ, Net::No),
    p("lzma", Form::Compress, OPTS_COMPRESS, Net::No),
    p("mcedit", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("md5sum", Form::Read, OPTS_READ, Net::No),
    p("micro", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("mkdir", Form::Each(Access::Write), OPTS_WRITE, Net::No),
    p("mkfifo", Form::Each(Access::Write), OPTS_WRITE, Net::No),
    p("mknod", Form::Each(Access::Write), OPTS_WRITE, Net::No),
    p("more", Form::Read, OPTS_READ, Net::No),
    p("most", Form::Read, OPTS_READ, Net::No),
    p("mount", Form::Mount, OPTS_MOUNT, Net::No),
    p("mousepad", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("mv", Form::Move, OPTS_MOVE, Net::No),
    p("namei", Form::Read, OPTS_READ, Net::No),
    p("nano", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("nc", Form::Unknown, NONE, Net::Sender),
    p("ncat", Form::Unknown, NONE, Net::Sender),
    p("netcat", Form::Unknown, NONE, Net::Sender),
    p("netstat", Form::Text, NONE, Net::No),
    p("nl", Form::Read, OPTS_READ, Net::No),
    p("notify-send", Form::Text, NONE, Net::No),
    p("nproc", Form::Text, NONE, Net::No),
    p("nslookup", Form::Text, NONE, Net::No),
    p("numfmt", Form::Text, NONE, Net::No),
    p("nvim", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("od", Form::Read, OPTS_READ, Net::No),
    p("openssl", Form::Unknown, NONE, Net::Sender),
    p("paste", Form::Read, OPTS_READ, Net::No),
    p("patch", Form::Patch, OPTS_PATCH, Net::No),
    p("pgrep", Form::Text, NONE, Net::No),
    p("pico", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("pidof", Form::Text, NONE, Net::No),
    p("pigz", Form::Compress, OPTS_COMPRESS, Net::No),
    p("ping", Form::Text, NONE, Net::No),
    p("popd", Form::Text, NONE, Net::No),
    p("powershell", Form::Unknown, NONE, Net::Sender),
    p("pr", Form::Read, OPTS_READ, Net::No),
    p("printenv", Form::Text, NONE, Net::No),
    p("printf", Form::Text, NONE, Net::No),
    p("ps", Form::Text, NONE, Net::No),
    p("pushd", Form::Text, NONE, Net::No),
    p("pwd", Form::Text, NONE, Net::No),
    p("pwsh", Form::Unknown, NONE, Net::Sender),
    p("rclone", Form::Copy, OPTS_RSYNC, Net::No),
    p("read", Form::Text, NONE, Net::No),
    p("readlink", Form::Read, OPTS_READ, Net::No),
    p("realpath", Form::Read, OPTS_READ, Net::No),
    p("return", Form::Text, NONE, Net::No),
    p("rev", Form::Read, OPTS_READ, Net::No),
    p("rg", Form::Grep, OPTS_GREP, Net::No),
    p("rm", Form::Each(Access::Delete), OPTS_DELETE, Net::No),
    p("rmdir", Form::Each(Access::Delete), OPTS_DELETE, Net::No),
    p("rsync", Form::Copy, OPTS_RSYNC, Net::No),
    p("scp", Form::Copy, OPTS_SCP, Net::No),
    p("scrub", Form::Each(Access::Delete), OPTS_DELETE, Net::No),
    p("sdiff", Form::OutputOpt, OPTS_OUTPUT, Net::No),
    p("sed", Form::Sed, OPTS_SED, Net::No),
    p("seq", Form::Text, NONE, Net::No),
    p("set", Form::Text, NONE, Net::No),
    p("setfacl", Form::Mode, OPTS_ACL, Net::No),
    p("setfattr", Form::Mode, OPTS_ACL, Net::No),
    p("sha1sum", Form::Read, OPTS_READ, Net::No),
    p("sha224sum", Form::Read, OPTS_READ, Net::No),
    p("sha256sum", Form::Read, OPTS_READ, Net::No),
    p("sha384sum", Form::Read, OPTS_READ, Net::No),
    p("sha512sum", Form::Read, OPTS_READ, Net::No),
    p("shift", Form::Text, NONE, Net::No),
    p("shred", Form::Each(Access::Delete), OPTS_DELETE, Net::No),
    p("shuf", Form::OutputOpt, OPTS_OUTPUT, Net::No),
    p("sleep", Form::Text, NONE, Net::No),
    p("socat", Form::Unknown, NONE, Net::Sender),
    p("sort", Form::OutputOpt, OPTS_OUTPUT, Net::No),
    p("source", Form::Read, OPTS_READ, Net::No),
    p("split", Form::OutputOpt, OPTS_OUTPUT, Net::No),
    p("sponge", Form::Each(Access::Write), OPTS_WRITE, Net::No),
    p("srm", Form::Each(Access::Delete), OPTS_DELETE, Net::No),
    p("ss", Form::Text, NONE, Net::No),
    p("stat", Form::Read, OPTS_READ, Net::No),
    p("strings", Form::Read, OPTS_READ, Net::No),
    p("stty", Form::Text, NONE, Net::No),
    p("subl", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("sum", Form::Read, OPTS_READ, Net::No),
    p("tac", Form::Read, OPTS_READ, Net::No),
    p("tail", Form::Read, OPTS_READ, Net::No),
    p("tar", Form::Tar, NONE, Net::No),
    p("tee", Form::Each(Access::Write), OPTS_WRITE, Net::No),
    p("telnet", Form::Unknown, NONE, Net::Sender),
    p("test", Form::Text, NONE, Net::No),
    p("times", Form::Text, NONE, Net::No),
    p("tomlq", Form::Read, OPTS_READ, Net::No),
    p("toolgate", Form::Toolgate, NONE, Net::No),
    p("top", Form::Text, NONE, Net::No),
    p("touch", Form::Touch, OPTS_TOUCH, Net::No),
    p("tput", Form::Text, NONE, Net::No),
    p("tr", Form::Text, NONE, Net::No),
    p("trap", Form::Text, NONE, Net::No),
    p("tree", Form::Read, OPTS_READ, Net::No),
    p("true", Form::Text, NONE, Net::No),
    p("truncate", Form::Truncate, OPTS_TRUNCATE, Net::No),
    p("tty", Form::Text, NONE, Net::No),
    p("type", Form::Text, NONE, Net::No),
    p("typeset", Form::Text, NONE, Net::No),
    p("ulimit", Form::Text, NONE, Net::No),
    p("umask", Form::Text, NONE, Net::No),
    p("unalias", Form::Text, NONE, Net::No),
    p("uname", Form::Text, NONE, Net::No),
    p("uncompress", Form::Compress, OPTS_COMPRESS, Net::No),
    p("unexpand", Form::Read, OPTS_READ, Net::No),
    p("uniq", Form::InOut, OPTS_IN_OUT, Net::No),
    p("unlink", Form::Each(Access::Delete), OPTS_DELETE, Net::No),
    p("unlz4", Form::Compress, OPTS_COMPRESS, Net::No),
    p("unlzma", Form::Compress, OPTS_COMPRESS, Net::No),
    p("unpigz", Form::Compress, OPTS_COMPRESS, Net::No),
    p("unset", Form::Text, NONE, Net::No),
    p("unxz", Form::Compress, OPTS_COMPRESS, Net::No),
    p("unzip", Form::Unzip, OPTS_UNZIP, Net::No),
    p("unzstd", Form::Compress, OPTS_COMPRESS, Net::No),
    p("uptime", Form::Text, NONE, Net::No),
    p("vdir", Form::Read, OPTS_READ, Net::No),
    p("vi", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("view", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("vim", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("w3m", Form::Unknown, NONE, Net::Client),
    p("wait", Form::Text, NONE, Net::No),
    p("wc", Form::Read, OPTS_READ, Net::No),
    p("websocat", Form::Unknown, NONE, Net::Sender),
    p("wget", Form::Wget, NONE, Net::Client),
    p("wget2", Form::Wget, NONE, Net::Client),
    p("whereis", Form::Text, NONE, Net::No),
    p("which", Form::Text, NONE, Net::No),
    p("whoami", Form::Text, NONE, Net::No),
    p("wipe", Form::Each(Access::Delete), OPTS_DELETE, Net::No),
    p("wrk", Form::Unknown, NONE, Net::Client),
    p("xh", Form::Unknown, NONE, Net::Client),
    p("xhs", Form::Unknown, NONE, Net::Client),
    p("xq", Form::Read, OPTS_READ, Net::No),
    p("xxd", Form::InOut, OPTS_IN_OUT, Net::No),
    p("xz", Form::Compress, OPTS_COMPRESS, Net::No),
    p("xzcat", Form::Read, OPTS_READ, Net::No),
    p("yes", Form::Text, NONE, Net::No),
    p("yq", Form::OutputOpt, OPTS_OUTPUT, Net::No),
    p("zcat", Form::Read, OPTS_READ, Net::No),
    p("zed", Form::Each(Access::Write), OPTS_EDITOR, Net::No),
    p("zgrep", Form::Grep, OPTS_GREP, Net::No),
    p("zip", Form::Zip, OPTS_ZIP, Net::No),
    p("zless", Form::Read, OPTS_READ, Net::No),
    p("zmore", Form::Read, OPTS_READ, Net::No),
    p("zstd", Form::Compress, OPTS_COMPRESS, Net::No),
    p("zstdcat", Form::Read, OPTS_READ, Net::No),
];

/// One command's judge: the environment and the best finding so far.
struct Judge<'a> {
    p: &'a Protected,
    env: &'a Env,
    ctx: &'a Context,
    /// The directory relative paths resolve against (`None`: unknown).
    base: Option<std::borrow::Cow<'a, str>>,
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
    // Flags and values are few; operands at most every word.
    let mut a = Argv {
        flags: Vec::new(),
        operands: Vec::with_capacity(args.len()),
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
            long.iter().any(|l| {
                f.strip_prefix(l)
                    .is_some_and(|r| r.is_empty() || r.starts_with('='))
            }) || short.is_some_and(|s| !f.starts_with("--") && f.len() > 1 && f[1..].contains(s))
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
    fn onto(&mut self, dst: &Word, sources: &[&Word], access: Access) {
        self.word(access, dst, false);
        // `dst/<name>` where `dst` is surely a directory (a trailing `/`,
        // `.`, `..`, `~`), or is one of the protected directories (a
        // runtime's settings directory, a toolgate directory, the policy's
        // own): `cp toolgate.toml /tmp/copy` may write a file of that name.
        let last = basename(&dst.text);
        let surely_dir = dst.text.ends_with('/') || matches!(last, "." | ".." | "~");
        if dst.dynamic {
            return;
        }
        let protected_dir = || {
            self.resolve(&dst.text).is_some_and(|abs| {
                self.p.member_inside_static(&abs, self.env).is_some()
                    || self.p.member(&abs, self.env).is_some()
                    || self
                        .p
                        .files()
                        .iter()
                        .any(|f| f.rsplit_once('/').is_some_and(|(d, _)| d == abs))
            })
        };
        if !surely_dir && !protected_dir() {
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
        base: cmd.cwd.as_deref().map(std::borrow::Cow::Borrowed),
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
    let Some((f, value_opts)) = program(prog)
        .filter(|p| p.form != Form::Unknown)
        .map(|p| (p.form, p.opts))
    else {
        // A program toolgate does not know (a script and its arguments
        // included): what it does with a member it names is not known.
        j.unknown(args);
        return j.best;
    };
    let a = split_argv(args, value_opts);
    if !matches!(
        f,
        Form::Text | Form::Read | Form::Grep | Form::Find | Form::Toolgate
    ) {
        // A program that writes: an option's value naming a member is at
        // least held for a person, whatever the option (so a value option
        // misread here never lets a target through).
        for (_, w) in &a.values {
            j.word(Access::Unknown, w, false);
        }
    }
    match f {
        Form::Text | Form::Toolgate | Form::Unknown => {}
        Form::Read => {
            // Option values too: `tail -f FILE` reads what `-f` precedes in
            // another program of this group.
            j.each(Access::Read, &a.operands, false);
            for (_, w) in &a.values {
                j.word(Access::Read, w, false);
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
            // `rg` searches trees by default, `grep -r` on request; a
            // directory named to either is read whole.
            j.each(Access::Read, files, true);
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
            // Moving, linking or copying a tree onto a runtime's settings
            // directory (or one of toolgate's) replaces what it holds.
            // Only for sources that may be directories (no extension, or
            // a trailing `/`): `mv notes.md ~/.claude/` is judged by name.
            let tree_source = a.operands.len() > 1
                && a.operands[..a.operands.len() - 1].iter().any(|w| {
                    w.dynamic
                        || w.text.ends_with('/')
                        || !basename(&w.text).trim_start_matches('.').contains('.')
                });
            let onto_dir = tree_source
                && (f != Form::Copy || recursive(&a) || a.has(Some('a'), &["--archive"]));
            if onto_dir
                && let Some(last) = a.operands.last()
                && let Some(abs) = j.resolve(&last.text)
                && !last.dynamic
                && j.p.member_inside_static(&abs, env).is_some()
            {
                j.receives(&last.text, false);
            }
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
            let whole = f == Form::Move || recursive(&a) || a.has(Some('a'), &["--archive"]);
            j.each(src_access, sources, whole);
            let deletes = a.flags.iter().any(|f| f.starts_with("--del"));
            for (dir, d) in target_dir {
                let w = Word {
                    text: dir,
                    dynamic: d,
                };
                j.onto(&w, sources, dst_access);
            }
            if let Some(dst) = dst {
                j.onto(dst, sources, dst_access);
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
                moves || recursive(&a),
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
            // Mounting over a settings directory hides what it holds.
            if let Some(last) = a.operands.last() {
                j.word(Access::Overwrite, last, false);
                j.receives(&last.text, last.dynamic);
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
            if (t == "-C" || t == "--work-tree")
                && let Some(dir) = args.get(i + 1)
            {
                j.base = if dir.dynamic {
                    None
                } else {
                    j.resolve(&dir.text).map(std::borrow::Cow::Owned)
                };
            }
            i += 2;
        } else if t.starts_with('-') {
            if let Some(dir) = t.strip_prefix("--work-tree=") {
                j.base = j.resolve(dir).map(std::borrow::Cow::Owned);
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
            true,
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

/// Whether [`PROGRAMS`] is sorted by name, strictly (checked by a test).
#[cfg(test)]
pub(super) fn programs_sorted() -> bool {
    PROGRAMS.windows(2).all(|w| w[0].name < w[1].name)
}
