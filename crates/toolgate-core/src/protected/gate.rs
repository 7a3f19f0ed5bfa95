//! The gate as a running thing: its operator endpoints, its process and
//! service, its port. Judged over a whole shell analysis, since the parts
//! of one act are often separate commands (`kill -STOP $(pidof toolgate)`,
//! `printf 'POST /v1/bypass …' | nc 127.0.0.1 7878`).

use super::code::names_port;
use super::effects::{Net, program};
use super::{Hit, Protected};
use crate::shell::{RedirectKind, ShellAnalysis, SimpleCommand, Word};
use crate::wildcard::{is_glob, path_match};

/// What the whole analysis says, computed once for every command's checks.
pub(crate) struct Context {
    /// `$(which toolgate)` (or `command -v`, `type`, `whereis`) ran: a bare
    /// `toolgate` word stands for the program's path.
    pub gate_located: bool,
}

impl Context {
    pub(super) fn of(_p: &Protected, analysis: &ShellAnalysis, _text: &str) -> Context {
        let gate_located = analysis.commands.iter().any(|c| {
            matches!(c.program.as_str(), "which" | "type" | "whereis" | "command")
                && c.via.iter().any(|v| v.wrapper.starts_with("$("))
                && c.args()
                    .iter()
                    .any(|w| w.text.eq_ignore_ascii_case("toolgate"))
        });
        Context { gate_located }
    }
}

/// The daemon's operator-only routes (crates/toolgate-server: approve,
/// deny and vote on approvals, bypasses, operators, browser sessions and
/// sign-in links, one-time approval links, chat callbacks), and the names
/// such routes would take. Read-only routes an agent may call (`check`,
/// `hooks`, `protocol`, `whoami`, `knowledge/ack`, `state`) are not here:
/// they approve nothing, and the operator ones answer 401 without the
/// operator token, which is itself protected.
fn route_after_v1(rest: &str) -> Option<&'static str> {
    const PREFIXES: &[(&str, &str)] = &[
        ("bypass", "/v1/bypass"),
        ("operators", "/v1/operators"),
        ("operator", "/v1/operators"),
        ("session", "/v1/session"),
        ("links", "/v1/links"),
        ("link/", "/v1/links"),
        ("sign-in", "/v1/sign-in"),
        ("signin", "/v1/sign-in"),
        ("login", "/v1/login"),
        ("votes", "/v1/votes"),
        ("vote", "/v1/votes"),
    ];
    if let Some((_, route)) = PREFIXES.iter().find(|(p, _)| rest.starts_with(p)) {
        return Some(route);
    }
    if let Some(after) = rest.strip_prefix("channels/")
        && after.contains("/callback")
    {
        return Some("/v1/channels/…/callback");
    }
    None
}

/// `approvals/<id>/approve|deny|vote…` in `text` (with or without `/v1/`).
fn approval_vote(text: &str) -> Option<&'static str> {
    let mut from = 0;
    while let Some(i) = text[from..].find("approvals/") {
        let after = &text[from + i + "approvals/".len()..];
        // The id: up to the next `/` (it may be a `$ID` or `{id}`).
        if let Some(j) = after.find('/') {
            let verb = &after[j + 1..];
            for (v, route) in [
                ("approve", "/v1/approvals/…/approve"),
                ("deny", "/v1/approvals/…/deny"),
                ("vote", "/v1/approvals/…/vote"),
            ] {
                if verb.starts_with(v) {
                    return Some(route);
                }
            }
        }
        from += i + 1;
    }
    None
}

/// Whether a text may name a route at all, in one pass: `v1`, an escape,
/// or `approvals`.
fn route_hint(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, &c)| match c {
        b'%' => true,
        b'v' | b'V' => b.get(i + 1) == Some(&b'1'),
        b'p' => b[i..].starts_with(b"provals"),
        _ => false,
    })
}

/// The operator route a text names (a URL, a command's words, a request
/// typed into `nc`), lowercased and with `%NN` escapes decoded first.
pub(crate) fn operator_route(text: &str) -> Option<&'static str> {
    if !route_hint(text) {
        return None;
    }
    // Clients fold dot segments before sending (`/v1/x/../bypass`).
    let lower = fold_dot_segments(&super::code::decoded_lower(text));
    let mut from = 0;
    while let Some(i) = lower[from..].find("v1/") {
        let rest = &lower[from + i + 3..];
        if let Some(route) = route_after_v1(rest) {
            return Some(route);
        }
        from += i + 3;
    }
    approval_vote(&lower)
}

/// `/./` and `/x/../` folded, as curl and browsers do to a URL's path.
fn fold_dot_segments(text: &str) -> String {
    if !text.contains("/.") {
        return text.to_string();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in text.split('/') {
        match part {
            "." => {}
            ".." if parts.len() > 1 => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

fn is_signal_program(program: &str) -> bool {
    matches!(
        program,
        "kill"
            | "pkill"
            | "killall"
            | "killall5"
            | "fuser"
            | "gdb"
            | "strace"
            | "ltrace"
            | "lldb"
            | "cpulimit"
    )
}

/// Whether a pattern (a regular expression, as `pkill`, `pgrep`, `grep`
/// and `killall -r` read it) matches the gate's process name or command
/// line. A pattern that does not compile is judged by its words.
fn pattern_matches_gate(pattern: &str, full: bool) -> bool {
    if pattern.to_ascii_lowercase().contains("toolgate") {
        return true;
    }
    let built = regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .nest_limit(64)
        .build();
    let Ok(re) = built else {
        let l = pattern.to_ascii_lowercase();
        return l.contains("tool") || l.contains("gate");
    };
    let mut haystacks = vec!["toolgate"];
    if full {
        haystacks.extend([
            "/usr/local/bin/toolgate serve --policy /etc/toolgate/toolgate.toml",
            "toolgate hook claude-code",
        ]);
    }
    haystacks.iter().any(|h| re.is_match(h))
}

/// Whether a word names the gate: `toolgate` in it (`toolgate`,
/// `toolgate.service`, `/usr/local/bin/toolgate`), or one of its ports.
fn word_names_gate(p: &Protected, w: &str) -> bool {
    w.to_ascii_lowercase().contains("toolgate") || p.ports().any(|port| names_port(w, port))
}

/// Whether anything in the analysis finds or names the gate's process:
/// `pidof toolgate`, `pgrep -f 'toolgat[e]'`, `lsof -ti :7878`, an awk
/// pattern, a pid file under a toolgate directory.
fn analysis_names_gate(p: &Protected, analysis: &ShellAnalysis) -> bool {
    analysis.commands.iter().any(|c| {
        if c.args().iter().any(|w| word_names_gate(p, &w.text)) {
            return true;
        }
        if let Some(code) = &c.inline_code {
            let l = code.code.to_ascii_lowercase();
            if l.contains("toolgate") {
                return true;
            }
            // awk's `/re/` patterns.
            if code.language.ends_with("awk") {
                return code
                    .code
                    .split('/')
                    .skip(1)
                    .step_by(2)
                    .any(|re| !re.is_empty() && pattern_matches_gate(re, true));
            }
        }
        match c.program.as_str() {
            "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" | "pgrep" | "pidof" => c
                .args()
                .iter()
                .filter(|w| !w.text.starts_with('-') && !w.dynamic)
                .take(1)
                .any(|w| pattern_matches_gate(&w.text, true)),
            _ => false,
        }
    })
}

/// The operands of `args` after options, `value_opts` taking the next word.
fn operands<'a>(args: &'a [Word], value_opts: &[&str]) -> Vec<&'a Word> {
    let mut out = Vec::new();
    let mut skip = false;
    let mut only = false;
    for w in args {
        if skip {
            skip = false;
            continue;
        }
        let t = w.text.as_str();
        if only || !t.starts_with('-') || t == "-" || w.dynamic {
            out.push(w);
        } else if t == "--" {
            only = true;
        } else if value_opts.contains(&t) {
            skip = true;
        }
    }
    out
}

fn has_flag(args: &[Word], short: char, long: &[&str]) -> bool {
    args.iter().any(|w| {
        let t = w.text.as_str();
        long.iter().any(|l| {
            t.strip_prefix(l)
                .is_some_and(|r| r.is_empty() || r.starts_with('='))
        }) || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(short))
    })
}

fn stops_gate(why: &str) -> Hit {
    Hit::block(
        "protected.process",
        format!("{why}; stopping, pausing or disabling the gate is not the agent's to do"),
    )
}

/// Whether a unit name (or glob) is toolgate's.
fn unit_is_gate(unit: &str) -> bool {
    let l = unit.to_ascii_lowercase();
    l.contains("toolgate")
        || (is_glob(&l)
            && ["toolgate.service", "toolgate", "toolgate.socket"]
                .iter()
                .any(|u| path_match(&l, u)))
}

/// The gate's process or service stopped, paused, disabled or traced.
fn process_hit(p: &Protected, cmd: &SimpleCommand, analysis: &ShellAnalysis) -> Option<Hit> {
    let args = cmd.args();
    let prog = cmd.program.as_str();
    let unknown_target = |ws: &[&Word]| {
        ws.iter().any(|w| w.dynamic || w.text.starts_with("{xargs"))
            || (ws.is_empty() && !cmd.stdin_from.is_empty())
    };
    match prog {
        "kill" => {
            let mut targets: Vec<&Word> = Vec::new();
            let mut i = 0;
            let mut only = false;
            while i < args.len() {
                let t = args[i].text.as_str();
                if only || args[i].dynamic {
                    targets.push(&args[i]);
                } else if t == "--" {
                    only = true;
                } else if matches!(t, "-s" | "-n" | "--signal") {
                    i += 1;
                } else if t == "-l" || t == "-L" || t == "--list" {
                    return None;
                } else if t.starts_with('-') && i == 0 && t != "-1" {
                    // the signal (`-9`, `-STOP`, `-SIGSTOP`)
                } else {
                    targets.push(&args[i]);
                }
                i += 1;
            }
            if targets.iter().any(|w| w.text == "-1") {
                return Some(stops_gate(
                    "signals every process of the user, toolgate's among them",
                ));
            }
            if targets.iter().any(|w| word_names_gate(p, &w.text))
                || (unknown_target(&targets) && analysis_names_gate(p, analysis))
            {
                return Some(stops_gate("signals toolgate's process"));
            }
            // By number: the daemon's pid, or its process group (`-PID`).
            if let Some(pid) = targets.iter().find_map(|w| {
                let t = w.text.trim();
                let n: u32 = t.strip_prefix('-').unwrap_or(t).parse().ok()?;
                p.pids().contains(&n).then_some(n)
            }) {
                return Some(stops_gate(&format!(
                    "signals toolgate's process (pid {pid})"
                )));
            }
            None
        }
        "killall5" => Some(stops_gate("signals every process, toolgate's among them")),
        "pkill" => {
            let value_opts = [
                "-u",
                "-U",
                "-g",
                "-G",
                "-P",
                "-s",
                "-t",
                "--signal",
                "-F",
                "--pidfile",
                "--euid",
                "--uid",
                "--pgroup",
                "--group",
                "--parent",
                "--session",
                "--terminal",
                "--ns",
                "--nslist",
            ];
            let ops = operands(args, &value_opts);
            let selects = args.iter().any(|w| {
                let t = w.text.as_str();
                matches!(t, "-u" | "-U" | "-g" | "-G" | "-s" | "-t")
                    || t.starts_with("--euid")
                    || t.starts_with("--uid")
                    || t.starts_with("--group")
                    || t.starts_with("--pgroup")
                    || t.starts_with("--session")
                    || t.starts_with("--terminal")
            });
            if args
                .iter()
                .any(|w| w.text.to_ascii_lowercase().contains("toolgate"))
            {
                return Some(stops_gate("signals toolgate's process by name"));
            }
            match ops.first() {
                None if selects => Some(stops_gate(
                    "signals every process of a user, toolgate's among them",
                )),
                None => None,
                Some(w) if w.dynamic => analysis_names_gate(p, analysis)
                    .then(|| stops_gate("signals toolgate's process by a name found at run time")),
                Some(w) => {
                    let full = has_flag(args, 'f', &["--full"]);
                    pattern_matches_gate(&w.text, full)
                        .then(|| stops_gate("signals processes whose name matches toolgate's"))
                }
            }
        }
        "killall" => {
            let value_opts = [
                "-u",
                "--user",
                "-s",
                "--signal",
                "-o",
                "--older-than",
                "-y",
                "--younger-than",
                "-n",
                "--ns",
                "-Z",
                "--context",
            ];
            let ops = operands(args, &value_opts);
            let regex = has_flag(args, 'r', &["--regexp"]);
            let user = args
                .iter()
                .any(|w| w.text == "-u" || w.text.starts_with("--user"));
            if ops.is_empty() && user {
                return Some(stops_gate(
                    "signals every process of a user, toolgate's among them",
                ));
            }
            for w in &ops {
                let name = w.text.rsplit('/').next().unwrap_or(&w.text);
                let hit = if w.dynamic {
                    analysis_names_gate(p, analysis)
                } else if regex {
                    pattern_matches_gate(name, false)
                } else if is_glob(name) {
                    path_match(&name.to_ascii_lowercase(), "toolgate")
                } else {
                    name.eq_ignore_ascii_case("toolgate")
                };
                if hit {
                    return Some(stops_gate("signals toolgate's process by name"));
                }
            }
            None
        }
        "fuser" => {
            let kills = has_flag(args, 'k', &["--kill"]);
            (kills && args.iter().any(|w| word_names_gate(p, &w.text)))
                .then(|| stops_gate("kills the processes using toolgate's program or port"))
        }
        "gdb" | "strace" | "ltrace" | "lldb" | "cpulimit" => {
            let attaches = args.iter().any(|w| {
                let t = w.text.as_str();
                t == "-p" || t.starts_with("--pid") || t == "attach" || t.starts_with("-p")
            });
            let names = args.iter().any(|w| word_names_gate(p, &w.text))
                || (args.iter().any(|w| w.dynamic) && analysis_names_gate(p, analysis));
            (attaches && names).then(|| {
                stops_gate("attaches to toolgate's process (a debugger or a CPU limiter pauses it)")
            })
        }
        "systemctl" => {
            let value_opts = [
                "-H",
                "--host",
                "-M",
                "--machine",
                "-t",
                "--type",
                "--state",
                "-p",
                "--property",
                "-n",
                "--lines",
                "-o",
                "--output",
                "-s",
                "--signal",
                "--root",
                "--kill-whom",
                "--kill-value",
                "--what",
                "--job-mode",
                "--timestamp",
                "--image",
            ];
            let ops = operands(args, &value_opts);
            let (verb, units) = ops.split_first()?;
            let verb = verb.text.to_ascii_lowercase();
            const STOP: &[&str] = &[
                "stop",
                "kill",
                "disable",
                "mask",
                "restart",
                "try-restart",
                "reload-or-restart",
                "try-reload-or-restart",
                "condrestart",
                "force-reload",
                "reload",
                "edit",
                "revert",
                "freeze",
                "set-property",
                "link",
                "reenable",
                "preset",
                "clean",
                "set-environment",
                "import-environment",
                "bind",
                "mount-image",
            ];
            if verb == "exit" && args.iter().any(|w| w.text == "--user") {
                return Some(stops_gate(
                    "stops the user's service manager and every service it runs, toolgate's among them",
                ));
            }
            let gate =
                |u: &Word| unit_is_gate(&u.text) || (u.dynamic && analysis_names_gate(p, analysis));
            if STOP.contains(&verb.as_str()) && units.iter().any(|u| gate(u)) {
                return Some(stops_gate(&format!(
                    "runs `systemctl {verb}` on toolgate's service"
                )));
            }
            None
        }
        "service" => {
            let ops = operands(args, &[]);
            let named = ops.first().is_some_and(|w| unit_is_gate(&w.text));
            let verb = ops.get(1).map(|w| w.text.to_ascii_lowercase());
            let read = verb
                .as_deref()
                .is_some_and(|v| matches!(v, "status" | "start"));
            (named && !read).then(|| stops_gate("stops or reconfigures toolgate's service"))
        }
        "launchctl" | "rc-service" | "rc-update" | "sv" | "supervisorctl" | "initctl"
        | "s6-svc" | "s6-rc" | "update-rc.d" | "chkconfig" | "runsvctrl" => {
            let named = args.iter().any(|w| unit_is_gate(&w.text));
            let read = args.iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "status"
                        | "list"
                        | "print"
                        | "show"
                        | "check"
                        | "avail"
                        | "info"
                        | "start"
                        | "blame"
                        | "help"
                )
            });
            (named && !read).then(|| stops_gate("stops, unloads or disables toolgate's service"))
        }
        "docker" | "podman" | "nerdctl" => {
            let ops = operands(args, &["-H", "--host", "--context", "-c", "--config"]);
            let verb = ops.first().map(|w| w.text.as_str());
            let stopping = matches!(
                verb,
                Some("stop" | "kill" | "pause" | "rm" | "restart" | "update" | "container")
            );
            (stopping && ops.iter().skip(1).any(|w| unit_is_gate(&w.text)))
                .then(|| stops_gate("stops or removes toolgate's container"))
        }
        "loginctl" => {
            let ops = operands(args, &["-H", "--host", "-M", "--machine", "-s", "--signal"]);
            matches!(
                ops.first().map(|w| w.text.as_str()),
                Some("kill-user" | "terminate-user" | "kill-session" | "terminate-session")
            )
            .then(|| stops_gate("ends the user's processes, toolgate's among them"))
        }
        _ => None,
    }
}

/// An agent runtime's own command changing its settings (`claude config
/// set …`, `openclaw config set plugins.entries.toolgate.enabled false`,
/// `gemini extensions disable …`): blocked when it touches hooks or
/// toolgate, else held for a person.
fn runtime_cli_hit(cmd: &SimpleCommand) -> Option<Hit> {
    if !matches!(
        cmd.program.as_str(),
        "claude" | "codex" | "gemini" | "cursor-agent" | "openclaw" | "opencode"
    ) {
        return None;
    }
    let words: Vec<String> = cmd
        .args()
        .iter()
        .map(|w| w.text.to_ascii_lowercase())
        .collect();
    let area = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "config"
                | "hooks"
                | "hook"
                | "features"
                | "settings"
                | "plugins"
                | "plugin"
                | "extensions"
                | "extension"
        )
    });
    let changes = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "set"
                | "unset"
                | "add"
                | "remove"
                | "rm"
                | "disable"
                | "enable"
                | "edit"
                | "reset"
                | "delete"
                | "uninstall"
                | "install"
                | "patch"
                | "apply"
        )
    });
    if !(area && changes) {
        return None;
    }
    let touches = words
        .iter()
        .any(|w| w.contains("hook") || w.contains("toolgate"));
    let why = format!(
        "changes {}'s own settings through its command line",
        cmd.program
    );
    Some(if touches {
        Hit::block(
            "protected.write",
            format!(
                "{why}, its hooks or toolgate's entry; the agent may not change what guards it"
            ),
        )
    } else {
        Hit::escalate(
            "protected.write",
            format!("{why}, where its hooks are configured"),
        )
    })
}

/// A new listener on a protected port (a fake daemon answering the hooks),
/// or a toolgate daemon started by the agent.
fn listener_hit(p: &Protected, cmd: &SimpleCommand) -> Option<Hit> {
    let prog = cmd.program.as_str();
    if cmd.wrapper
        || program(prog).is_some_and(|p| p.only_reads() || p.net == Net::Client)
        || matches!(prog, "git" | "kill")
    {
        return None;
    }
    if prog == "toolgate" {
        let serves = operands(cmd.args(), &["--data-dir", "--policy", "--store"])
            .first()
            .is_some_and(|w| w.text == "serve");
        return serves.then(|| {
            Hit::escalate(
                "protected.listener",
                "starts a toolgate daemon from inside the agent; the hooks would obey whatever \
                 policy it was given"
                    .to_string(),
            )
        });
    }
    let names = cmd
        .args()
        .iter()
        .any(|w| p.ports().any(|port| names_port(&w.text, port)));
    names.then(|| {
        Hit::escalate(
            "protected.listener",
            "may open a listener on the toolgate daemon's port, where a fake daemon would answer \
             the hooks"
                .to_string(),
        )
    })
}

/// Whether something in the analysis can send a request: a network client,
/// a `/dev/tcp` redirection, interpreter code, or anything opaque.
fn can_send(analysis: &ShellAnalysis) -> bool {
    !analysis.opaque.is_empty()
        || analysis.commands.iter().any(|c| {
            program(&c.program).is_some_and(|p| p.net != Net::No)
                || c.inline_code.is_some()
                || c.redirects.iter().any(|r| {
                    r.kind != RedirectKind::Dup
                        && (r.target.text.starts_with("/dev/tcp/")
                            || r.target.text.starts_with("/dev/udp/"))
                })
        })
}

fn command_route(cmd: &SimpleCommand) -> Option<&'static str> {
    cmd.args()
        .iter()
        .chain(cmd.assignments.iter().map(|(_, w)| w))
        .find_map(|w| operator_route(&w.text))
}

/// Findings over the whole analysis: operator endpoints, the gate's
/// process and service, listeners on its port.
pub(crate) fn analysis_hits(
    p: &Protected,
    analysis: &ShellAnalysis,
    text: &str,
    _ctx: &Context,
) -> Vec<(Hit, Option<String>)> {
    let mut out = Vec::new();
    let route = operator_route(text).or_else(|| analysis.commands.iter().find_map(command_route));
    if let Some(route) = route {
        let reason = |how: &str| {
            format!(
                "{how} {route}, an operator endpoint of toolgate's daemon; approvals, bypasses \
                 and operators are for people, never the agent"
            )
        };
        if can_send(analysis) {
            out.push((
                Hit::block("protected.operator-endpoint", reason("requests")),
                None,
            ));
        } else if let Some(c) = analysis.commands.iter().find(|c| {
            !c.wrapper
                && command_route(c).is_some()
                && !program(&c.program).is_some_and(|p| p.only_reads())
                && !matches!(c.program.as_str(), "git" | "hg" | "svn" | "jj")
        }) {
            out.push((
                Hit::escalate("protected.operator-endpoint", reason("names")),
                Some(c.display()),
            ));
        }
    }
    for cmd in &analysis.commands {
        if (is_signal_program(&cmd.program)
            || matches!(
                cmd.program.as_str(),
                "systemctl"
                    | "service"
                    | "launchctl"
                    | "rc-service"
                    | "rc-update"
                    | "sv"
                    | "supervisorctl"
                    | "initctl"
                    | "s6-svc"
                    | "s6-rc"
                    | "update-rc.d"
                    | "chkconfig"
                    | "runsvctrl"
                    | "docker"
                    | "podman"
                    | "nerdctl"
                    | "loginctl"
            ))
            && let Some(h) = process_hit(p, cmd, analysis)
        {
            out.push((h, Some(cmd.display())));
        }
        if let Some(h) = listener_hit(p, cmd) {
            out.push((h, Some(cmd.display())));
        }
        if let Some(h) = runtime_cli_hit(cmd) {
            out.push((h, Some(cmd.display())));
        }
    }
    out
}
