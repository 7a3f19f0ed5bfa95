//! Commands that run a command once per input item or over and over:
//! `xargs`, `find -exec`, `fd --exec` and `watch`.

use super::analyzer::Analyzer;
use super::argv::{join_script, skip_options};
use super::scope::Scope;
use super::types::*;

impl Analyzer<'_> {
    pub(super) fn unwrap_xargs(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        const VALUE: &[&str] = &[
            "-I",
            "-n",
            "-L",
            "-P",
            "-s",
            "-d",
            "-E",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--max-lines",
            "--process-slot-var",
            "--max-chars",
            "--eof",
        ];
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
        let mut inner: Vec<Word> = if i < args.len() {
            args[i..].to_vec()
        } else {
            vec![Word::lit("echo")]
        };
        let tree = !from_file && feeds_tree(&scope.stdin_from);
        let mut items: Vec<Word> = match (&scope.stdin_text, from_file) {
            (Some(t), false) => t.split_whitespace().map(Word::lit).collect(),
            _ => Vec::new(),
        };
        if items.is_empty() {
            // No known input: the command is still judged, on unknown items.
            items.push(Word {
                text: "{xargs input}".into(),
                dynamic: true,
            });
        }
        match replace {
            Some(r) if !r.is_empty() => {
                for item in items.iter().take(16) {
                    let argv: Vec<Word> = inner
                        .iter()
                        .map(|w| {
                            if w.text.contains(&r) {
                                Word {
                                    text: w.text.replace(&r, &item.text),
                                    dynamic: w.dynamic || item.dynamic,
                                }
                            } else {
                                w.clone()
                            }
                        })
                        .collect();
                    let argv = if tree { over_tree(argv) } else { argv };
                    let mut each = scope.clone();
                    if tree {
                        each.tree = Some(vec![item.clone()]);
                    }
                    self.inner_argv(argv, &each, "xargs", false, None);
                }
            }
            _ => {
                let mut each = scope.clone();
                if tree {
                    each.tree = Some(items.clone());
                }
                inner.extend(items);
                let inner = if tree { over_tree(inner) } else { inner };
                self.inner_argv(inner, &each, "xargs", false, None);
            }
        }
    }

    pub(super) fn unwrap_find(&mut self, cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let mut i = 0;
        while i < args.len()
            && matches!(
                args[i].text.as_str(),
                "-H" | "-L" | "-P" | "-D" | "-O0" | "-O1" | "-O2" | "-O3"
            )
        {
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
        let name_test = args
            .windows(2)
            .find(|w| matches!(w[0].text.as_str(), "-name" | "-iname"))
            .map(|w| w[1].text.clone());
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
        // What `{}` stands for: every entry under the root, so the command
        // is judged on the whole tree (`rm -f {}` over `/` is `rm -r -f /`).
        // A name test narrows it to the matching names under the root; any
        // other narrowing test (time, size, owner) leaves which entries
        // unknown statically, so a match on the root is only an escalation.
        let name_filter = args
            .windows(2)
            .find(|w| {
                matches!(w[0].text.as_str(), "-name" | "-iname")
                    && !w[1].text.chars().all(|c| c == '*' || c == '.')
            })
            .map(|w| w[1].text.clone());
        let narrowed = narrowing_test(&args);
        for (kind, inner) in execs {
            for root in roots.iter().take(8) {
                let stand_in = match (&name_filter, root.dynamic) {
                    (Some(pattern), false) => {
                        let abs = self.resolve_word(root.clone(), scope);
                        if abs.dynamic {
                            root.clone()
                        } else {
                            Word::lit(format!("{}/**/{}", abs.text.trim_end_matches('/'), pattern))
                        }
                    }
                    _ if narrowed => Word {
                        text: root.text.clone(),
                        dynamic: true,
                    },
                    _ => root.clone(),
                };
                let argv: Vec<Word> = inner
                    .iter()
                    .map(|w| {
                        if w.text.contains("{}") {
                            Word {
                                text: w.text.replace("{}", &stand_in.text),
                                dynamic: w.dynamic || stand_in.dynamic,
                            }
                        } else {
                            w.clone()
                        }
                    })
                    .collect();
                let argv = if inner.iter().any(|w| w.text.contains("{}")) {
                    over_tree(argv)
                } else {
                    argv
                };
                // Nested shells (`-exec sh -c 'rm "$1"' _ {}`) see the entry too.
                let mut each = scope.clone();
                each.tree = Some(vec![stand_in.clone()]);
                self.inner_argv(argv, &each, &format!("find {kind}"), false, None);
            }
        }
        self.last_output = listed;
    }

    pub(super) fn unwrap_fd(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
        let Some(i) = args
            .iter()
            .position(|w| matches!(w.text.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
        else {
            self.push(cmd);
            return;
        };
        cmd.wrapper = true;
        self.push(cmd);
        let mut inner: Vec<Word> = args[i + 1..]
            .iter()
            .take_while(|w| w.text != ";")
            .cloned()
            .collect();
        for w in &mut inner {
            if w.text.contains('{') {
                w.dynamic = true;
            }
        }
        if !inner.iter().any(|w| w.dynamic) {
            inner.push(Word {
                text: "{fd results}".into(),
                dynamic: true,
            });
        }
        // fd's results are entries of the tree it searches: a deleter over
        // them, with a search path named, deletes that tree (with none, fd
        // searches the working directory, judged as before).
        let positional = args[..i]
            .iter()
            .filter(|w| !w.text.starts_with('-'))
            .count();
        let inner = if positional >= 2 {
            over_tree(inner)
        } else {
            inner
        };
        self.inner_argv(inner, scope, "fd --exec", false, None);
    }

    pub(super) fn unwrap_watch(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        let exec_mode = args.iter().any(|w| w.text == "-x" || w.text == "--exec");
        let start = skip_options(
            &args,
            &["-n", "--interval", "-q", "--equexit", "--differences"],
        );
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
}

/// Programs that enumerate a tree: what they print stands for everything
/// under their roots, so a command applied to each printed item acts on the
/// whole tree. (`ls` only with `-R`, see [`feeds_tree`].)
const TREE_LISTERS: &[&str] = &[
    "find", "fd", "fdfind", "locate", "plocate", "mlocate", "tree",
];

/// Whether stdin comes from a tree enumeration (`find … |`, `fd … |`).
pub(super) fn feeds_tree(stdin_from: &[String]) -> bool {
    stdin_from
        .iter()
        .any(|p| TREE_LISTERS.contains(&p.rsplit('/').next().unwrap_or(p)))
}

/// Wrappers that may stand before the per-item program (`sudo rm`, `env rm`).
const PREFIXES: &[&str] = &[
    "sudo", "doas", "env", "nice", "ionice", "nohup", "command", "busybox",
];

/// A per-item command (`rm -f ITEM`), whose items are everything under a
/// tree, as the same operation on the tree itself: file deleters become
/// `rm -r -f` of the items (deleting every file of a tree is deleting the
/// tree), `rm` gains `-r`, ownership and mode changes gain `-R`. Any other
/// command is returned as it was: what it does to each file is what it
/// does to the tree, and the catalogue judges it on the items as given.
pub(super) fn over_tree(argv: Vec<Word>) -> Vec<Word> {
    let name = |w: &Word| w.text.rsplit('/').next().unwrap_or("").to_string();
    let Some(at) = argv.iter().take(6).position(|w| {
        !PREFIXES.contains(&name(w).as_str()) && !w.text.starts_with('-') && !w.text.contains('=')
    }) else {
        return argv;
    };
    let program = name(&argv[at]);
    let head: Vec<Word> = argv[..at].to_vec();
    let rest: Vec<Word> = argv[at + 1..].to_vec();
    let recursive = |flag: &str, rest: Vec<Word>| {
        let mut out = head.clone();
        out.push(argv[at].clone());
        out.push(Word::lit(flag));
        out.extend(rest);
        out
    };
    match program.as_str() {
        "rm" => recursive("-r", rest),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => recursive("-R", rest),
        "unlink" | "shred" | "srm" | "wipe" | "scrub" | "truncate" | "rmdir" => {
            // The operands are what it destroys; option values (`-s 0`,
            // `-n 3`) are not paths, so only operands that carry an item
            // (or look like paths) are kept.
            let mut out = head.clone();
            out.push(Word::lit("rm"));
            out.push(Word::lit("-r"));
            out.push(Word::lit("-f"));
            let mut skip = false;
            for w in rest {
                if skip {
                    skip = false;
                    continue;
                }
                if w.text.starts_with('-') {
                    skip = matches!(
                        w.text.as_str(),
                        "-s" | "--size" | "-n" | "--iterations" | "-r" | "--reference"
                    );
                    continue;
                }
                out.push(w);
            }
            out
        }
        _ => argv,
    }
}

/// Whether a find expression narrows what it finds: a name, path, time,
/// size, owner or permission test (a name test of wildcards only, `*`,
/// does not). `-type`, `-mindepth`, `-maxdepth`, `-xdev` do not: every
/// file of a tree is still the tree.
fn narrowing_test(args: &[Word]) -> bool {
    const TESTS: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-newer",
        "-anewer",
        "-cnewer",
        "-newermt",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-size",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-perm",
        "-inum",
        "-links",
        "-samefile",
        "-empty",
        "-nouser",
        "-nogroup",
        "-lname",
        "-ilname",
    ];
    args.iter().enumerate().any(|(i, w)| {
        if !TESTS.contains(&w.text.as_str()) {
            return false;
        }
        match w.text.as_str() {
            "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename" => args
                .get(i + 1)
                .is_some_and(|p| !p.text.chars().all(|c| c == '*' || c == '.' || c == '/')),
            _ => true,
        }
    })
}
