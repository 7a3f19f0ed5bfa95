//! Commands that run a command as another user: `sudo` (and `sudo -e`,
//! `sudo -s`), `su` and `runuser`.

use super::analyzer::Analyzer;
use super::argv::skip_options;
use super::scope::Scope;
use super::types::*;

/// Options of `sudo` that take a value.
const SUDO_VALUE_OPTS: &[&str] = &[
    "-u",
    "--user",
    "-g",
    "--group",
    "-h",
    "--host",
    "-p",
    "--prompt",
    "-C",
    "--close-from",
    "-D",
    "--chdir",
    "-r",
    "--role",
    "-t",
    "--type",
    "-U",
    "--other-user",
    "-T",
    "--command-timeout",
    "-R",
    "--chroot",
];

impl Analyzer<'_> {
    pub(super) fn unwrap_sudo(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        let start = skip_options(&args, SUDO_VALUE_OPTS);
        let opts = &args[..start.min(args.len())];
        let has = |short: char, long: &str| {
            opts.iter().any(|w| {
                w.text == long
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.contains(short))
            })
        };
        let edit = has('e', "--edit");
        let shell = has('s', "--shell") || has('i', "--login");
        cmd.wrapper = true;
        self.push(cmd);
        let rest: Vec<Word> = args[start.min(args.len())..].to_vec();
        if edit {
            let mut inner = vec![Word::lit("sudoedit")];
            inner.extend(rest);
            self.inner_argv(inner, scope, "sudo", true, None);
        } else if rest.is_empty() {
            // `sudo -i`, `sudo -s`: an interactive root shell
            if shell {
                self.inner_argv(
                    vec![Word::lit("sh"), Word::lit("-i")],
                    scope,
                    "sudo",
                    true,
                    None,
                );
            }
        } else {
            self.inner_argv(rest, scope, "sudo", true, None);
        }
    }

    pub(super) fn unwrap_su(&mut self, mut cmd: SimpleCommand, args: Vec<Word>, scope: &mut Scope) {
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
                "-s"
                | "--shell"
                | "-g"
                | "--group"
                | "-G"
                | "--supp-group"
                | "-w"
                | "--whitelist-environment"
                | "-u"
                | "--user" => {
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
            None => self.inner_argv(
                vec![Word::lit("sh"), Word::lit("-i")],
                scope,
                &program,
                privileged,
                None,
            ),
        }
    }
}
