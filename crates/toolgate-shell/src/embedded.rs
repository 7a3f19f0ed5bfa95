//! Commands given in another program's options or input: `rsync -e`,
//! `scp -S`, `tar --to-command`, sed's `e`, make recipes read from stdin,
//! `ansible -a` and `git -c core.sshCommand=`.

use super::analyzer::Analyzer;
use super::argv::display;
use super::inline;
use super::scope::Scope;
use super::types::*;

impl Analyzer<'_> {
    /// Programs that run commands given in their options: `rsync -e`,
    /// `tar --checkpoint-action=exec=`, sed's `e`, make recipes read from
    /// stdin, `ansible -a`, `git -c core.sshCommand=`.
    pub(super) fn embedded_commands(
        &mut self,
        cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        let program = cmd.program.clone();
        self.push(cmd);
        let mut scripts: Vec<(Word, &str)> = Vec::new();
        let value_after = |i: usize, flag: &str, attached_prefix: &str| -> Option<Word> {
            let w = &args[i];
            if w.text == flag {
                return args.get(i + 1).cloned();
            }
            w.text
                .strip_prefix(attached_prefix)
                .filter(|v| !v.is_empty() && !attached_prefix.is_empty())
                .map(|v| Word {
                    text: v.to_string(),
                    dynamic: w.dynamic,
                })
        };
        for i in 0..args.len() {
            match program.as_str() {
                "rsync" | "scp" | "sftp" => {
                    if let Some(v) = value_after(i, "-e", "--rsh=")
                        .or_else(|| value_after(i, "--rsh", "--rsync-path="))
                    {
                        scripts.push((v, "rsync -e"));
                    }
                    if (program == "scp" || program == "sftp")
                        && let Some(v) = value_after(i, "-S", "")
                    {
                        scripts.push((v, "scp -S"));
                    }
                }
                "tar" | "gtar" => {
                    let t = args[i].text.as_str();
                    for prefix in [
                        "--checkpoint-action=exec=",
                        "--to-command=",
                        "--use-compress-program=",
                        "--rsh-command=",
                        "--info-script=",
                        "--new-volume-script=",
                    ] {
                        if let Some(v) = t.strip_prefix(prefix) {
                            scripts.push((
                                Word {
                                    text: v.to_string(),
                                    dynamic: args[i].dynamic,
                                },
                                "tar",
                            ));
                        }
                    }
                    if matches!(
                        t,
                        "-I" | "-F" | "--to-command" | "--use-compress-program" | "--info-script"
                    ) && let Some(v) = args.get(i + 1)
                    {
                        scripts.push((v.clone(), "tar"));
                    }
                }
                "sed" | "gsed" => {
                    let script = if args[i].text == "-e" || args[i].text == "--expression" {
                        args.get(i + 1).cloned()
                    } else if let Some(v) = args[i].text.strip_prefix("--expression=") {
                        Some(Word {
                            text: v.to_string(),
                            dynamic: args[i].dynamic,
                        })
                    } else if i
                        == args
                            .iter()
                            .position(|w| !w.text.starts_with('-'))
                            .unwrap_or(usize::MAX)
                        && !args.iter().any(|w| w.text == "-e" || w.text == "-f")
                    {
                        Some(args[i].clone())
                    } else {
                        None
                    };
                    if let Some(s) = script {
                        for effect in inline::sed_file_effects(&s.text) {
                            scripts.push((
                                Word {
                                    text: effect,
                                    dynamic: s.dynamic,
                                },
                                "sed w/r",
                            ));
                        }
                        for snippet in inline::sed_commands(&s.text) {
                            match snippet {
                                inline::Snippet::Script(c) => scripts.push((
                                    Word {
                                        text: c,
                                        dynamic: s.dynamic,
                                    },
                                    "sed e",
                                )),
                                other => {
                                    if let inline::Snippet::Dynamic(t) = other {
                                        self.opaque(
                                            "sed runs the edited text as a command (s///e)",
                                            &t,
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
                "ansible" => {
                    if let Some(v) =
                        value_after(i, "-a", "--args=").or_else(|| value_after(i, "--args", ""))
                    {
                        let module = args
                            .windows(2)
                            .find(|w| w[0].text == "-m" || w[0].text == "--module-name")
                            .map(|w| w[1].text.clone());
                        if module.as_deref().is_none_or(|m| {
                            matches!(
                                m,
                                "shell"
                                    | "command"
                                    | "raw"
                                    | "ansible.builtin.shell"
                                    | "ansible.builtin.command"
                                    | "ansible.builtin.raw"
                            )
                        }) {
                            scripts.push((v, "ansible"));
                        }
                    }
                }
                "git" => {
                    if let Some(v) = value_after(i, "-c", "")
                        && let Some((key, value)) = v.text.split_once('=')
                    {
                        let key = key.to_ascii_lowercase();
                        if key == "core.sshcommand"
                            || key == "core.pager"
                            || key == "core.editor"
                            || key == "core.fsmonitor"
                            || key == "sequence.editor"
                        {
                            scripts.push((
                                Word {
                                    text: value.to_string(),
                                    dynamic: v.dynamic,
                                },
                                "git -c",
                            ));
                        } else if key.starts_with("alias.")
                            && let Some(body) = value.strip_prefix('!')
                        {
                            scripts.push((
                                Word {
                                    text: body.to_string(),
                                    dynamic: v.dynamic,
                                },
                                "git alias",
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        if matches!(program.as_str(), "make" | "gmake") {
            let from_stdin = args.windows(2).any(|w| {
                matches!(w[0].text.as_str(), "-f" | "--file" | "--makefile")
                    && matches!(w[1].text.as_str(), "-" | "/dev/stdin")
            });
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
                inner.remote = args
                    .iter()
                    .find(|w| !w.text.starts_with('-'))
                    .map(|w| w.text.clone());
                inner.cwd = None;
            }
            self.script_word(&script, &inner, via);
        }
    }
}
