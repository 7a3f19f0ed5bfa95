//! Commands that run a command somewhere else: `ssh` on a host,
//! `docker`/`podman exec`/`run` in a container, `kubectl exec` in a pod, and
//! `tmux` in a new session, window or pane.

use super::analyzer::Analyzer;
use super::argv::{join_script, skip_options};
use super::scope::Scope;
use super::types::*;

impl Analyzer<'_> {
    pub(super) fn unwrap_ssh(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        let start = skip_options(
            &args,
            &[
                "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o",
                "-p", "-Q", "-R", "-S", "-W", "-w", "-B", "-P",
            ],
        );
        // `-o ProxyCommand=…` and `-o LocalCommand=…` run locally
        for (i, w) in args.iter().enumerate() {
            let opt = if w.text == "-o" {
                args.get(i + 1).map(|v| v.text.as_str())
            } else {
                w.text.strip_prefix("-o").filter(|v| !v.is_empty())
            };
            if let Some((key, value)) = opt.and_then(|o| o.split_once(['=', ' ']))
                && matches!(
                    key.trim().to_ascii_lowercase().as_str(),
                    "proxycommand" | "localcommand" | "knownhostscommand"
                )
            {
                let dynamic = args.get(i + 1).is_some_and(|v| v.dynamic) || w.dynamic;
                self.script_word(
                    &Word {
                        text: value.trim().to_string(),
                        dynamic,
                    },
                    scope,
                    "ssh -o",
                );
            }
        }
        if start + 1 >= args.len() {
            // No remote command: a login shell on the host (unless a
            // forward-only `-N` or stdin is given), typed into later.
            let forward_only = args.iter().any(|w| {
                w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('N')
            });
            // `ssh -T git@github.com`: git hosting services answer a greeting
            // and never open a shell.
            let git_host = args.get(start).is_some_and(|h| {
                let host = h.text.rsplit('@').next().unwrap_or("");
                h.text.starts_with("git@")
                    && matches!(
                        host,
                        "github.com"
                            | "gitlab.com"
                            | "bitbucket.org"
                            | "ssh.dev.azure.com"
                            | "codeberg.org"
                    )
            });
            if start < args.len()
                && !forward_only
                && !git_host
                && !super::interpreters::stdin_fed(&cmd, scope)
            {
                self.interactive("ssh", &cmd);
            }
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

    pub(super) fn unwrap_container(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        let mut sub_at = 0;
        // `docker container exec`, `docker compose exec`
        while sub_at < args.len() && matches!(args[sub_at].text.as_str(), "container" | "compose") {
            sub_at += 1;
        }
        // global options before the subcommand (`docker -H x exec …`)
        while sub_at < args.len() && args[sub_at].text.starts_with('-') {
            let t = args[sub_at].text.as_str();
            sub_at += if matches!(
                t,
                "-H" | "--host"
                    | "--context"
                    | "-c"
                    | "--config"
                    | "-f"
                    | "--file"
                    | "-p"
                    | "--project-name"
                    | "--log-level"
            ) {
                2
            } else {
                1
            };
        }
        let Some(sub) = args.get(sub_at).map(|w| w.text.clone()) else {
            self.push(cmd);
            return;
        };
        let rest = &args[sub_at + 1..];
        const EXEC_OPTS: &[&str] = &[
            "-e",
            "--env",
            "--env-file",
            "-u",
            "--user",
            "-w",
            "--workdir",
            "--detach-keys",
            "--index",
        ];
        const RUN_OPTS: &[&str] = &[
            "-a",
            "--attach",
            "--add-host",
            "--blkio-weight",
            "--cap-add",
            "--cap-drop",
            "--cgroup-parent",
            "--cidfile",
            "--cpu-period",
            "--cpu-quota",
            "--cpu-shares",
            "-c",
            "--cpus",
            "--cpuset-cpus",
            "--device",
            "--dns",
            "--dns-search",
            "--entrypoint",
            "-e",
            "--env",
            "--env-file",
            "--expose",
            "--gpus",
            "--group-add",
            "-h",
            "--hostname",
            "--health-cmd",
            "--health-interval",
            "--ip",
            "--ipc",
            "--isolation",
            "-l",
            "--label",
            "--label-file",
            "--link",
            "--log-driver",
            "--log-opt",
            "--mac-address",
            "-m",
            "--memory",
            "--memory-swap",
            "--mount",
            "--name",
            "--network",
            "--net",
            "--network-alias",
            "--pid",
            "--platform",
            "-p",
            "--publish",
            "--pull",
            "--restart",
            "--runtime",
            "--security-opt",
            "--shm-size",
            "--stop-signal",
            "--stop-timeout",
            "--storage-opt",
            "--sysctl",
            "--tmpfs",
            "--ulimit",
            "-u",
            "--user",
            "--userns",
            "--uts",
            "-v",
            "--volume",
            "--volume-driver",
            "--volumes-from",
            "-w",
            "--workdir",
            "--init-path",
            "--service-ports",
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
        if let Some(i) = rest[..start].iter().position(|w| w.text == "--entrypoint")
            && let Some(ep) = rest.get(i + 1)
        {
            inner.insert(0, ep.clone());
        }
        cmd.wrapper = !inner.is_empty();
        let program = cmd.program.clone();
        self.push(cmd);
        self.inner_argv(
            inner,
            scope,
            &format!("{program} {label}"),
            false,
            Some(target),
        );
    }

    pub(super) fn unwrap_kubectl(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        let sub = args
            .iter()
            .find(|w| !w.text.starts_with('-'))
            .map(|w| w.text.clone())
            .unwrap_or_default();
        if !matches!(sub.as_str(), "exec" | "run" | "debug" | "attach") {
            self.push(cmd);
            return;
        }
        let Some(dd) = args.iter().position(|w| w.text == "--") else {
            self.push(cmd);
            return;
        };
        let pod = args[..dd]
            .iter()
            .skip_while(|w| w.text != sub)
            .nth(1)
            .map(|w| w.text.clone())
            .unwrap_or_else(|| "pod".into());
        cmd.wrapper = true;
        let program = cmd.program.clone();
        self.push(cmd);
        self.inner_argv(
            args[dd + 1..].to_vec(),
            scope,
            &format!("{program} {sub}"),
            false,
            Some(pod),
        );
    }

    pub(super) fn unwrap_tmux(
        &mut self,
        mut cmd: SimpleCommand,
        args: Vec<Word>,
        scope: &mut Scope,
    ) {
        let sub = args.first().map(|w| w.text.clone()).unwrap_or_default();
        let runs = matches!(
            sub.as_str(),
            "new"
                | "new-session"
                | "new-window"
                | "neww"
                | "split-window"
                | "splitw"
                | "respawn-pane"
                | "respawnp"
                | "run-shell"
                | "run"
        );
        let keys = matches!(sub.as_str(), "send-keys" | "send");
        if !runs && !keys {
            self.push(cmd);
            return;
        }
        let mut i = 1;
        let mut operands = Vec::new();
        while i < args.len() {
            let t = args[i].text.as_str();
            if matches!(
                t,
                "-t" | "-s" | "-n" | "-c" | "-x" | "-y" | "-F" | "-e" | "-l" | "-p" | "-N"
            ) {
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
        if operands.is_empty() && runs && sub != "run-shell" && sub != "run" {
            // A new session, window or pane with no command runs a shell
            // that later keys (`send-keys`, a person, an agent) type into.
            self.interactive("tmux", &cmd);
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
