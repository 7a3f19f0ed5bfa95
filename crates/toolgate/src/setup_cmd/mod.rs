//! `toolgate setup separated`: sets toolgate up as a service of its own
//! user, the hard-guarantee mode (docs/deploy.md, "Separated mode"). Step
//! by step, each printed, each checked before it is done, so running it
//! again changes only what differs:
//!
//! 1. the daemon's system user (`toolgate`, no login shell);
//! 2. the binary, root's, in `/usr/local/bin` (every hook names it);
//! 3. the policy, root's, in `/etc/toolgate/policy.toml`;
//! 4. the data directory `/var/lib/toolgate`, the daemon's, 0700;
//! 5. its tokens and signing key, made there as the daemon's user;
//! 6. the public key, `/etc/toolgate/daemon.pub`;
//! 7. the socket's directory `/run/toolgate`, the daemon's, 0755;
//! 8. the service: a systemd unit (or a launchd plist with `--launchd`);
//! 9. each runtime's hook in its system-level file, pinned to the socket
//!    and the daemon's uid (existing content kept, a backup made);
//! 10. the record doctor reads (`/etc/toolgate/setup.json`);
//! 11. starting the daemon (systemd when it runs, else as the daemon's user
//!     directly), unless `--no-start`.
//!
//! `--root DIR` puts every file below DIR instead of `/` (packaging, tests):
//! no user is created and nothing is started there. `--dry-run` prints what
//! would be done and changes nothing; neither needs root.

mod managed;
pub(crate) mod record;
mod units;

pub(crate) use managed::{system_file, toml_json};

use crate::decider::Endpoint;
use crate::install_cmd::{DaemonPin, HookPins, hook_command};
use crate::peer;
use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand};
use record::{Record, under};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use toolgate_core::hooks::Runtime;

/// `toolgate setup …`.
#[derive(Debug, Subcommand)]
pub(crate) enum SetupCommand {
    /// Run the daemon as a user of its own, with hooks the agent's user
    /// cannot change or switch off (run with sudo).
    Separated(Box<SeparatedArgs>),
    /// Make the daemon's tokens and signing key in DIR as the user running
    /// this, and print the public key (run by `setup separated` as the
    /// daemon's user).
    #[command(hide = true)]
    InitState {
        /// The data directory.
        dir: PathBuf,
    },
}

/// Arguments of `toolgate setup separated`.
#[derive(Debug, Args)]
pub(crate) struct SeparatedArgs {
    /// The user the agents run as: checked to be neither root nor the
    /// daemon's user, and the mode is verified as that user at the end.
    #[arg(long, value_name = "NAME")]
    agent_user: Option<String>,
    /// The daemon's system user (created when missing).
    #[arg(long, default_value = "toolgate", value_name = "NAME")]
    daemon_user: String,
    /// The policy to install as /etc/toolgate/policy.toml. Default: keep
    /// the one there, or write out the built-in default.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The daemon's TCP address, for the control UI and operators' tools
    /// (`none`: the socket only).
    #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR|none")]
    listen: String,
    /// The daemon's socket, in a directory made for the daemon's user.
    #[arg(
        long,
        default_value = "/run/toolgate/toolgate.sock",
        value_name = "PATH"
    )]
    socket: PathBuf,
    /// The daemon's data directory.
    #[arg(long, default_value = "/var/lib/toolgate", value_name = "DIR")]
    state_dir: PathBuf,
    /// Where the binary goes.
    #[arg(long, default_value = "/usr/local/bin", value_name = "DIR")]
    bin_dir: PathBuf,
    /// Where the policy, the public key and the set-up's record go.
    #[arg(long, default_value = "/etc/toolgate", value_name = "DIR")]
    etc_dir: PathBuf,
    /// The service's name (its unit, log directory and launchd label).
    #[arg(long, default_value = "toolgate", value_name = "NAME")]
    service_name: String,
    /// The runtimes whose system-level hook files get toolgate's hook.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "claude-code,codex,gemini,cursor",
        value_name = "LIST"
    )]
    runtimes: Vec<String>,
    /// Also make Claude Code and Codex run managed hooks only
    /// (allowManagedHooksOnly, allow_managed_hooks_only): users' and
    /// projects' own hooks stop running.
    #[arg(long)]
    managed_hooks_only: bool,
    /// Write a launchd plist (macOS) instead of a systemd unit.
    #[arg(long)]
    launchd: bool,
    /// The hooks' timeout in seconds (default: 10, or the policy's hold + 15).
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Put every file below DIR instead of / (packaging, tests): no user is
    /// created, nothing is started.
    #[arg(long, default_value = "/", value_name = "DIR")]
    root: PathBuf,
    /// Print what would be done; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Set everything up but do not start the daemon (prints how).
    #[arg(long)]
    no_start: bool,
}

/// Runs `toolgate setup …`.
pub(crate) fn run(command: SetupCommand) -> ExitCode {
    let result = match command {
        SetupCommand::Separated(args) => separated(&args),
        SetupCommand::InitState { dir } => init_state(&dir).map(|key| println!("{key}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolgate setup: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(2)
        }
    }
}

/// Makes (or checks) the tokens, link key and signing key in `dir`, as
/// this process's user; the public key.
fn init_state(dir: &Path) -> Result<String> {
    crate::state::refuse_loose_dir(dir)?;
    toolgate_server::Tokens::load(dir, None, None).context("the API tokens")?;
    toolgate_server::auth::load_link_key(dir, None).map_err(|e| anyhow!("the link key: {e}"))?;
    let key = toolgate_gate::DaemonKey::load_or_create(dir)
        .map_err(|e| anyhow!("the signing key: {e}"))?;
    Ok(key.public().to_string())
}

/// Where everything goes, as the system will see it; [`Layout::disk`]
/// gives where each is written (below `--root`).
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// `--root`.
    pub root: PathBuf,
    /// The binary hooks and the service run.
    pub binary: PathBuf,
    /// `/etc/toolgate`.
    pub etc: PathBuf,
    /// The policy.
    pub policy: PathBuf,
    /// The public key's copy.
    pub public_key: PathBuf,
    /// The record.
    pub record: PathBuf,
    /// The data directory.
    pub data_dir: PathBuf,
    /// The socket.
    pub socket: PathBuf,
    /// The daemon's log when it is started without systemd.
    pub log: PathBuf,
    /// The TCP address, or `none`.
    pub listen: String,
    /// The daemon's user.
    pub daemon_user: String,
    /// The systemd unit.
    pub unit: PathBuf,
    /// The launchd plist.
    pub plist: PathBuf,
    /// The service's name.
    pub service: String,
}

impl Layout {
    fn new(args: &SeparatedArgs) -> Result<Layout> {
        for (what, p) in [
            ("--socket", &args.socket),
            ("--state-dir", &args.state_dir),
            ("--bin-dir", &args.bin_dir),
            ("--etc-dir", &args.etc_dir),
        ] {
            if !p.is_absolute() {
                bail!("{what} {}: give an absolute path", p.display());
            }
            // They go into a unit file and hook commands unquoted.
            if !p
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b))
            {
                bail!(
                    "{what} {}: use letters, digits and / . _ - only",
                    p.display()
                );
            }
        }
        if args.socket.parent().is_none_or(|p| p == Path::new("/")) {
            bail!(
                "--socket {}: put it in a directory of its own, such as /run/toolgate",
                args.socket.display()
            );
        }
        let listen = args.listen.trim().to_string();
        if !listen.eq_ignore_ascii_case("none") {
            listen
                .parse::<std::net::SocketAddr>()
                .map_err(|e| anyhow!("--listen {listen:?}: {e}"))?;
        }
        let plain = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        };
        if !plain(&args.daemon_user) {
            bail!("--daemon-user {:?}: not a user name", args.daemon_user);
        }
        if !plain(&args.service_name) {
            bail!(
                "--service-name {:?}: use letters, digits and . _ - only",
                args.service_name
            );
        }
        let name = &args.service_name;
        let etc = args.etc_dir.clone();
        Ok(Layout {
            root: args.root.clone(),
            binary: args.bin_dir.join("toolgate"),
            policy: etc.join("policy.toml"),
            public_key: etc.join("daemon.pub"),
            record: etc.join(record::RECORD_NAME),
            etc,
            data_dir: args.state_dir.clone(),
            socket: args.socket.clone(),
            log: PathBuf::from(format!("/var/log/{name}/{name}.log")),
            listen,
            daemon_user: args.daemon_user.clone(),
            unit: PathBuf::from(format!("/etc/systemd/system/{name}.service")),
            plist: PathBuf::from(format!(
                "/Library/LaunchDaemons/{}.plist",
                units::launchd_label(name)
            )),
            service: name.clone(),
        })
    }

    /// Where `path` is written.
    fn disk(&self, path: &Path) -> PathBuf {
        under(&self.root, path)
    }

    /// Whether this is the real system (`--root /`).
    fn real(&self) -> bool {
        self.root == Path::new("/")
    }
}

/// Prints the steps as they go.
struct Steps {
    n: usize,
    dry: bool,
}

impl Steps {
    fn step(&mut self, title: &str) {
        self.n += 1;
        println!("[{}] {title}", self.n);
    }
    /// A line under the step: what was found or done.
    fn say(&self, text: &str) {
        println!("    {text}");
    }
    /// Does `act` (or, in a dry run, only says it would), saying `what`.
    fn act(&self, what: &str, act: impl FnOnce() -> Result<()>) -> Result<()> {
        if self.dry {
            self.say(&format!("would {what}"));
            Ok(())
        } else {
            act()?;
            self.say(&format!("done: {what}"));
            Ok(())
        }
    }
}

/// What the user named `name` is, if it exists.
struct User {
    uid: u32,
    gid: u32,
}

fn user(name: &str) -> Option<User> {
    peer::passwd_entry(name).map(|e| User {
        uid: e.uid,
        gid: e.gid,
    })
}

fn separated(args: &SeparatedArgs) -> Result<()> {
    let l = Layout::new(args)?;
    let is_root = peer::effective_uid() == 0;
    if l.real() && !is_root && !args.dry_run {
        bail!(
            "setting up separated mode creates a system user and writes to /etc, /usr/local/bin \
             and /var/lib: run it with sudo (sudo {} setup separated …), or see what it would do \
             with --dry-run",
            std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "toolgate".into())
        );
    }
    // The daemon will parse agent-written text with C code as a user more
    // privileged than the agent's: never from a binary at a fixed address.
    let exe = std::env::current_exe().context("cannot find this toolgate binary")?;
    if let Some(h) = crate::hardening::of_file(&exe)
        && !h.hardened()
    {
        bail!(
            "{} is built {}: the separated daemon must run with address-space randomization \
             and full RELRO (docs/decisions/0021-aslr-for-every-process.md). Build it with the \
             repository's own settings (`cargo install --locked --path crates/toolgate`, no \
             RUSTFLAGS that set relocation-model=static), then run this again",
            exe.display(),
            match (h.pie, h.full_relro) {
                (false, false) => "at a fixed address, without full RELRO",
                (false, true) => "at a fixed address (not position independent)",
                _ => "without full RELRO",
            }
        );
    }
    let runtimes: Vec<Runtime> = args
        .runtimes
        .iter()
        .filter(|r| !r.trim().is_empty())
        .map(|r| crate::install_cmd::runtime(r))
        .collect::<Result<_>>()?;
    let mut s = Steps {
        n: 0,
        dry: args.dry_run,
    };
    println!(
        "toolgate setup separated{}: the daemon runs as {}, the agent's user cannot read its \
         data or change its policy or hooks",
        if args.dry_run {
            " (dry run: nothing is changed)"
        } else {
            ""
        },
        l.daemon_user
    );
    if !l.real() {
        println!(
            "    files go below {} (no user is created, nothing is started)",
            l.root.display()
        );
    }
    let mut changed = false;

    // 1. The daemon's user.
    s.step(&format!("the daemon's system user {}", l.daemon_user));
    let daemon = ensure_user(&s, &l)?;
    if daemon.is_none() && !args.dry_run {
        bail!(
            "the daemon's user {} does not exist, and below --root none is created: name an \
             existing user with --daemon-user (hooks pin its uid)",
            l.daemon_user
        );
    }
    let agent = check_agent(&s, args.agent_user.as_deref(), daemon.as_ref(), &l)?;
    let owner = match (&daemon, is_root) {
        (Some(u), true) => Some((u.uid, u.gid)),
        _ => None,
    };

    // 2. The binary.
    s.step(&format!(
        "the toolgate binary, root's, at {}",
        l.binary.display()
    ));
    changed |= install_binary(&s, &l, is_root)?;

    // 3. The policy.
    s.step(&format!("the policy, root's, at {}", l.policy.display()));
    ensure_dir(&s, &l.disk(&l.etc), 0o755, is_root.then_some((0, 0)))?;
    changed |= install_policy(&s, &l, args.policy.as_deref(), is_root)?;

    // 4. The data directory.
    s.step(&format!(
        "the data directory {}, the daemon's, 0700 (the agent's user cannot read its tokens, \
         key or audit log)",
        l.data_dir.display()
    ));
    ensure_dir(&s, &l.disk(&l.data_dir), 0o700, owner)?;

    // 5. Tokens and key, as the daemon's user.
    s.step("the daemon's tokens and signing key, made as the daemon's user");
    let public = make_state(&s, &l, daemon.as_ref(), is_root)?;

    // 6. The public key.
    s.step(&format!(
        "the daemon's public key, readable by all, at {}",
        l.public_key.display()
    ));
    if let Some(k) = &public {
        changed |= write_file(
            &s,
            &l.disk(&l.public_key),
            &format!("{k}\n"),
            0o644,
            is_root,
        )?;
    } else {
        s.say("would copy the key made in step 5");
    }

    // 7. The socket's directory.
    let socket_dir = l.socket.parent().unwrap_or(Path::new("/run")).to_path_buf();
    s.step(&format!(
        "the socket's directory {}, the daemon's, 0755 (agents connect; only the daemon can \
         create the socket)",
        socket_dir.display()
    ));
    ensure_dir(&s, &l.disk(&socket_dir), 0o755, owner)?;
    if let Some(log_dir) = l.log.parent() {
        ensure_dir(&s, &l.disk(log_dir), 0o750, owner)?;
    }

    // 8. The service.
    if args.launchd {
        s.step(&format!("the launchd job {}", l.plist.display()));
        changed |= write_file(
            &s,
            &l.disk(&l.plist),
            &units::launchd_plist(&l),
            0o644,
            is_root,
        )?;
    } else {
        s.step(&format!("the systemd unit {}", l.unit.display()));
        changed |= write_file(
            &s,
            &l.disk(&l.unit),
            &units::systemd_unit(&l),
            0o644,
            is_root,
        )?;
    }

    // 9. The hooks.
    s.step(
        "each runtime's hook, in its system-level file, pinned to the socket and the daemon's uid",
    );
    let timeout = crate::install_cmd::hook_timeout(
        Some(&l.disk(&l.policy))
            .filter(|p| p.is_file())
            .map(PathBuf::as_path),
        args.timeout,
    )?;
    let mut hooks = BTreeMap::new();
    for rt in &runtimes {
        let file = install_hook(
            &s,
            &l,
            *rt,
            daemon.as_ref(),
            timeout,
            args.managed_hooks_only,
            is_root,
        )?;
        hooks.insert(rt.as_str().to_string(), file);
    }
    s.say(
        "OpenClaw: no system-level place is known. Its plugin config (~/.openclaw/openclaw.json) \
         is the agent user's own, so an agent that edits it can drop the plugin: run OpenClaw's \
         gateway as another user than the agent's tools, or count OpenClaw as judgement-only \
         (same-user) protection",
    );

    // 10. The record.
    s.step(&format!(
        "the record toolgate doctor reads, {}",
        l.record.display()
    ));
    let rec = Record {
        mode: "separated".into(),
        daemon_user: l.daemon_user.clone(),
        daemon_uid: daemon.as_ref().map(|u| u.uid),
        agent_user: args.agent_user.clone(),
        binary: l.binary.clone(),
        policy: l.policy.clone(),
        data_dir: l.data_dir.clone(),
        socket: l.socket.clone(),
        listen: l.listen.clone(),
        public_key: public.clone(),
        service: if args.launchd {
            l.plist.clone()
        } else {
            l.unit.clone()
        },
        hooks,
        command: Some(rerun_command(&l)),
    };
    write_file(
        &s,
        &l.disk(&l.record),
        &(serde_json::to_string_pretty(&rec)? + "\n"),
        0o644,
        is_root,
    )?;

    // 11. Start.
    s.step("starting the daemon");
    start(&s, &l, args, daemon.as_ref(), changed)?;

    // The mode, as the agent's user sees it.
    if let Some(a) = &agent
        && l.real()
        && !args.dry_run
        && !args.no_start
    {
        s.step(&format!(
            "the mode as {} sees it (toolgate doctor --mode)",
            a.0
        ));
        verify_as_agent(&s, &l, a)?;
    }
    summary(&l, args);
    Ok(())
}

/// This command as typed, with the installed binary and without the
/// words that only change this run (`--dry-run`, `--no-start`): what
/// doctor tells a person to run again.
fn rerun_command(l: &Layout) -> String {
    let mut words = vec![l.binary.display().to_string()];
    words.extend(
        std::env::args()
            .skip(1)
            .filter(|a| a != "--dry-run" && a != "--no-start")
            .map(|a| toolgate_core::hooks::install::shell_word(&a)),
    );
    words.join(" ")
}

fn ensure_user(s: &Steps, l: &Layout) -> Result<Option<User>> {
    if let Some(u) = user(&l.daemon_user) {
        s.say(&format!("exists (uid {})", u.uid));
        if let Some(e) = peer::passwd_entry(&l.daemon_user)
            && u.uid == 0
        {
            bail!(
                "{} is uid 0 (root): the daemon must run as an unprivileged user of its own; pick another --daemon-user",
                e.name
            );
        }
        return Ok(Some(u));
    }
    if !l.real() {
        s.say("missing; a set-up below --root does not create users (name an existing one with --daemon-user)");
        return Ok(None);
    }
    if cfg!(target_os = "macos") {
        bail!(
            "{} does not exist: create it first (docs/deploy.md shows the dscl commands), then run \
             this again",
            l.daemon_user
        );
    }
    let home = l.data_dir.display().to_string();
    let argv = [
        "--system",
        "--user-group",
        "--home-dir",
        &home,
        "--no-create-home",
        "--shell",
        "/usr/sbin/nologin",
        "--comment",
        "toolgate daemon",
        &l.daemon_user,
    ];
    s.act(&format!("create it: useradd {}", argv.join(" ")), || {
        let st = std::process::Command::new("useradd")
            .args(argv)
            .status()
            .context("cannot run useradd")?;
        if !st.success() {
            bail!(
                "useradd failed ({st}): create the user {} yourself, then run this again",
                l.daemon_user
            );
        }
        Ok(())
    })?;
    Ok(user(&l.daemon_user))
}

/// The agent's user, checked: it exists, is not root and not the daemon's.
fn check_agent(
    s: &Steps,
    name: Option<&str>,
    daemon: Option<&User>,
    l: &Layout,
) -> Result<Option<(String, User)>> {
    let Some(name) = name else {
        s.say("no --agent-user given: the set-up is not checked as the agent's user at the end");
        return Ok(None);
    };
    let Some(a) = user(name) else {
        bail!("--agent-user {name}: no such user");
    };
    if a.uid == 0 {
        bail!(
            "--agent-user {name} is root: an agent running as root can undo every part of this; run agents as an ordinary user"
        );
    }
    if daemon.is_some_and(|d| d.uid == a.uid) {
        bail!("--agent-user {name} is the daemon's user: pick two different users");
    }
    if let Some(d) = daemon
        && in_group(name, d.gid)
    {
        s.say(&format!(
            "warning: {name} is in {}'s group: take it out (gpasswd -d {name} {}), the data \
             directory is 0700 but group membership is a step toward it",
            l.daemon_user, l.daemon_user
        ));
    }
    s.say(&format!("the agent's user: {name} (uid {})", a.uid));
    Ok(Some((name.to_string(), a)))
}

fn in_group(user: &str, gid: u32) -> bool {
    std::fs::read_to_string("/etc/group").is_ok_and(|t| {
        t.lines().any(|l| {
            let f: Vec<&str> = l.split(':').collect();
            f.len() >= 4 && f[2].parse::<u32>() == Ok(gid) && f[3].split(',').any(|m| m == user)
        })
    })
}

/// Creates `dir` (parents root's, 0755) with `mode` and `owner`, or fixes
/// an existing one; whether anything changed.
fn ensure_dir(s: &Steps, dir: &Path, mode: u32, owner: Option<(u32, u32)>) -> Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let shown = dir.display();
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            bail!(
                "{shown} is a symbolic link: remove it (or point the option elsewhere) and run this again"
            )
        }
        Ok(m) if !m.is_dir() => bail!("{shown} exists and is not a directory"),
        Ok(m) => {
            let mut fix = Vec::new();
            if m.mode() & 0o7777 != mode {
                fix.push(format!("mode {:o} → {mode:o}", m.mode() & 0o7777));
            }
            if let Some((uid, gid)) = owner
                && (m.uid() != uid || m.gid() != gid)
            {
                fix.push(format!("owner {}:{} → {uid}:{gid}", m.uid(), m.gid()));
            }
            if fix.is_empty() {
                s.say(&format!("{shown}: as it should be"));
                return Ok(false);
            }
            s.act(&format!("fix {shown}: {}", fix.join(", ")), || {
                set_owner_mode(dir, owner, mode)
            })?;
            Ok(true)
        }
        Err(_) => {
            s.act(&format!("create {shown} (mode {mode:o})"), || {
                if let Some(parent) = dir.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                std::fs::create_dir(dir).with_context(|| format!("cannot create {shown}"))?;
                set_owner_mode(dir, owner, mode)
            })?;
            Ok(true)
        }
    }
}

fn set_owner_mode(path: &Path, owner: Option<(u32, u32)>, mode: u32) -> Result<()> {
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::lchown(path, Some(uid), Some(gid))
            .with_context(|| format!("cannot change the owner of {}", path.display()))?;
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot change the mode of {}", path.display()))
}

/// Writes `text` to `path` (atomically, the old text kept as a backup)
/// when it differs, root's (when root) with `mode`; whether it changed.
fn write_file(s: &Steps, path: &Path, text: &str, mode: u32, is_root: bool) -> Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let before = std::fs::read_to_string(path).ok();
    let shown = path.display();
    if before.as_deref() == Some(text) {
        // The content is right; the owner and mode must be too.
        let m = std::fs::symlink_metadata(path)?;
        let wrong_owner = is_root && (m.uid() != 0 || m.gid() != 0);
        if m.mode() & 0o7777 != mode || wrong_owner {
            s.act(&format!("fix {shown}: root's, mode {mode:o}"), || {
                set_owner_mode(path, is_root.then_some((0, 0)), mode)
            })?;
            return Ok(true);
        }
        s.say(&format!("{shown}: already as it should be"));
        return Ok(false);
    }
    let what = match &before {
        Some(_) => format!("update {shown} (the old file kept beside it as a backup)"),
        None => format!("write {shown}"),
    };
    s.act(&what, || {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let kept = crate::settings_file::write_text(path, text, before.as_deref())?;
        if let Some(b) = kept {
            set_owner_mode(&b, is_root.then_some((0, 0)), 0o600)?;
        }
        set_owner_mode(path, is_root.then_some((0, 0)), mode)
    })?;
    Ok(true)
}

/// Copies this binary to the binary's place, root's, 0755, unless the
/// same bytes are there; whether it changed.
fn install_binary(s: &Steps, l: &Layout, is_root: bool) -> Result<bool> {
    let src = std::env::current_exe().context("cannot find this toolgate binary")?;
    let dst = l.disk(&l.binary);
    let same = match (std::fs::canonicalize(&src), std::fs::canonicalize(&dst)) {
        (Ok(a), Ok(b)) if a == b => true,
        _ => same_bytes(&src, &dst),
    };
    if same {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&dst)?;
        if m.mode() & 0o7777 == 0o755 && (!is_root || m.uid() == 0) {
            s.say(&format!("{}: already this binary", dst.display()));
            return Ok(false);
        }
    }
    s.act(
        &format!("copy {} to {} (root's, 0755)", src.display(), dst.display()),
        || {
            let dir = dst.parent().unwrap_or(Path::new("/"));
            std::fs::create_dir_all(dir)?;
            let tmp = dir.join(".toolgate.setup-tmp");
            let _ = std::fs::remove_file(&tmp);
            std::fs::copy(&src, &tmp)
                .with_context(|| format!("cannot copy the binary to {}", tmp.display()))?;
            set_owner_mode(&tmp, is_root.then_some((0, 0)), 0o755)?;
            std::fs::rename(&tmp, &dst)
                .with_context(|| format!("cannot put the binary at {}", dst.display()))?;
            Ok(())
        },
    )?;
    Ok(true)
}

fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    if ma.len() != mb.len() {
        return false;
    }
    let (Ok(mut fa), Ok(mut fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    let (mut ba, mut bb) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let Ok(n) = fa.read(&mut ba) else {
            return false;
        };
        if n == 0 {
            return true;
        }
        if fb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

fn install_policy(s: &Steps, l: &Layout, from: Option<&Path>, is_root: bool) -> Result<bool> {
    let dst = l.disk(&l.policy);
    let text = match from {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("--policy {}: cannot read it", p.display()))?;
            toolgate_bundle::load(Some(p), &crate::check::load_env())
                .map_err(|e| anyhow!("--policy {}: {e}", p.display()))?;
            text
        }
        None => match std::fs::read_to_string(&dst) {
            Ok(t) => {
                s.say("keeping the policy there (pass --policy FILE to replace it)");
                t
            }
            Err(_) => {
                s.say("no policy there yet: writing out the built-in default (edit it as root; the daemon reloads it)");
                toolgate_bundle::DEFAULT_POLICY_TEXT.to_string()
            }
        },
    };
    let changed = write_file(s, &dst, &text, 0o644, is_root)?;
    if !s.dry {
        // Where it now is: a scope profile it names must be beside it.
        toolgate_bundle::load(Some(&dst), &crate::check::load_env()).map_err(|e| {
            anyhow!(
                "the policy at {} does not load there ({e}); copy what it names (its scope \
                 profile) beside it, then run this again",
                dst.display()
            )
        })?;
    }
    Ok(changed)
}

/// Tokens, link key and signing key in the data directory, made as the
/// daemon's user (on the real system, by running this binary as that
/// user); the public key.
fn make_state(
    s: &Steps,
    l: &Layout,
    daemon: Option<&User>,
    is_root: bool,
) -> Result<Option<String>> {
    let dir = l.disk(&l.data_dir);
    if s.dry {
        s.say(&format!(
            "would run, as {}: {} setup init-state {}",
            l.daemon_user,
            l.binary.display(),
            l.data_dir.display()
        ));
        return Ok(None);
    }
    let key = match daemon {
        // As root: made by this binary running as the daemon's user, so
        // every file is the daemon's from the start.
        Some(u) if is_root => {
            use std::os::unix::process::CommandExt;
            let out = std::process::Command::new(l.disk(&l.binary))
                .args(["setup", "init-state"])
                .arg(&dir)
                .uid(u.uid)
                .gid(u.gid)
                .env_clear()
                .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
                .current_dir("/")
                .output()
                .context("cannot run toolgate as the daemon's user")?;
            if !out.status.success() {
                bail!(
                    "making the daemon's state as {} failed: {}",
                    l.daemon_user,
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        }
        // Not root (below --root): this user's own files, made here.
        _ => init_state(&dir)?,
    };
    s.say(&format!(
        "agent.token, operator.token, link.token and daemon.key in {} (0600, {}'s); public key {key}",
        l.data_dir.display(),
        l.daemon_user
    ));
    Ok(Some(key))
}

#[allow(clippy::too_many_arguments)]
fn install_hook(
    s: &Steps,
    l: &Layout,
    rt: Runtime,
    daemon: Option<&User>,
    timeout: Duration,
    managed_only: bool,
    is_root: bool,
) -> Result<PathBuf> {
    let file = system_file(rt, Path::new("/"));
    let disk = l.disk(&file);
    let spec = rt.spec();
    let pins = HookPins {
        exe: l.binary.display().to_string(),
        policy: Some(l.policy.clone()),
        daemon: Some((
            Endpoint::Unix(l.socket.clone()),
            // A dry run before the user exists shows the uid it will get.
            DaemonPin::Uid(daemon.map_or(u32::MAX, |u| u.uid)),
        )),
        data_dir: None,
        store: Some(crate::decider::NONE.to_string()),
        // The policy is root's, in /etc: never the agent's to change.
        allow_writable_policy: false,
    };
    let command = hook_command(spec, timeout, &pins);
    let before = std::fs::read_to_string(&disk).ok();
    let merged = managed::merge(
        rt,
        before.as_deref(),
        managed::entry(spec, &command, timeout),
        managed_only,
    )
    .map_err(|e| anyhow!("{}: {e}", disk.display()))?;
    s.say(&format!("{}: {}", spec.title, managed::guarantee(rt)));
    if let Some(dir) = disk.parent() {
        ensure_dir(s, dir, 0o755, is_root.then_some((0, 0)))?;
    }
    match merged {
        Some(text) => {
            write_file(s, &disk, &text, 0o644, is_root)?;
        }
        None => {
            // The entry is there; the file must still be root's, 0644.
            let text = before.unwrap_or_default();
            write_file(s, &disk, &text, 0o644, is_root)?;
        }
    }
    Ok(file)
}

/// Whether systemd is the init system (its run-time directory exists).
fn systemd_runs(l: &Layout) -> bool {
    l.disk(Path::new("/run/systemd/system")).is_dir()
}

fn start(
    s: &Steps,
    l: &Layout,
    args: &SeparatedArgs,
    daemon: Option<&User>,
    changed: bool,
) -> Result<()> {
    let by_hand = format!("sudo -u {} {} &", l.daemon_user, units::exec_line(l));
    if args.launchd {
        s.say(&format!(
            "start it with: sudo launchctl bootstrap system {} (launchd runs it at every boot)",
            l.plist.display()
        ));
        return Ok(());
    }
    if !l.real() || args.no_start || args.dry_run {
        s.say(&format!(
            "not started{}; with systemd: sudo systemctl daemon-reload && sudo systemctl enable \
             --now {}; without it: {by_hand}",
            if args.no_start { " (--no-start)" } else { "" },
            l.service
        ));
        return Ok(());
    }
    if systemd_runs(l) {
        let verb = if changed { "restart" } else { "start" };
        let unit = format!("{}.service", l.service);
        for argv in [
            vec!["daemon-reload"],
            vec!["enable", unit.as_str()],
            vec![verb, unit.as_str()],
        ] {
            let st = std::process::Command::new("systemctl")
                .args(&argv)
                .status()
                .context("cannot run systemctl")?;
            if !st.success() {
                bail!(
                    "systemctl {} failed ({st}): see journalctl -u {}",
                    argv.join(" "),
                    l.service
                );
            }
        }
        s.say(&format!("systemctl enable + {verb} {unit}"));
    } else {
        let Some(u) = daemon else {
            bail!("the daemon's user {} does not exist", l.daemon_user);
        };
        s.say("systemd is not running here (no /run/systemd/system): starting the daemon as its user directly; it will not come back after a reboot by itself");
        let pid_file = l
            .socket
            .parent()
            .unwrap_or(Path::new("/run"))
            .join(format!("{}.pid", l.service));
        let alive = std::os::unix::net::UnixStream::connect(&l.socket).is_ok();
        if alive && !changed {
            s.say(&format!("already running on {}", l.socket.display()));
            return Ok(());
        }
        if alive {
            stop_started(s, &pid_file)?;
        }
        let pid = spawn_daemon(l, u)?;
        std::fs::write(&pid_file, format!("{pid}\n"))?;
        wait_for_socket(l, u)?;
        s.say(&format!(
            "started (pid {pid}, log {}); stop it with: sudo kill $(cat {}); start it again with: {by_hand}",
            l.log.display(),
            pid_file.display()
        ));
    }
    Ok(())
}

/// Stops a daemon this command started earlier (its pid file).
fn stop_started(s: &Steps, pid_file: &Path) -> Result<()> {
    let pid: i32 = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| {
            anyhow!(
                "a daemon already listens on the socket and was not started by this command \
                 (no {}): stop it, then run this again",
                pid_file.display()
            )
        })?;
    let st = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    if !st.success() {
        bail!("cannot stop the running daemon (pid {pid}): stop it yourself, then run this again");
    }
    for _ in 0..100 {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            s.say(&format!(
                "stopped the running daemon (pid {pid}) to start the new one"
            ));
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bail!("the running daemon (pid {pid}) did not stop within 10 s")
}

fn spawn_daemon(l: &Layout, u: &User) -> Result<u32> {
    use std::os::unix::process::CommandExt;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&l.log)
        .with_context(|| format!("cannot open {}", l.log.display()))?;
    std::os::unix::fs::fchown(&log, Some(u.uid), Some(u.gid))?;
    let words = units::exec_words(l);
    let child = std::process::Command::new(&words[0])
        .args(&words[1..])
        .uid(u.uid)
        .gid(u.gid)
        .process_group(0)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("HOME", &l.data_dir)
        .env("TOOLGATE_LOG", "info")
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .context("cannot start the daemon")?;
    Ok(child.id())
}

/// Waits for the socket to answer, served by the daemon's user.
fn wait_for_socket(l: &Layout, u: &User) -> Result<()> {
    for _ in 0..100 {
        if let Ok(c) = std::os::unix::net::UnixStream::connect(&l.socket)
            && peer::peer_uid(&c).is_ok_and(|uid| uid == u.uid)
        {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    bail!(
        "the daemon did not open {} within 10 s: see {}",
        l.socket.display(),
        l.log.display()
    )
}

fn verify_as_agent(s: &Steps, l: &Layout, agent: &(String, User)) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let home = peer::passwd_entry(&agent.0).map_or_else(|| "/".to_string(), |e| e.home);
    let mut doctor = vec!["doctor".to_string(), "--mode".to_string()];
    if l.record != Path::new("/").join(record::RECORD) {
        doctor.extend(["--setup-record".into(), l.record.display().to_string()]);
    }
    let out = std::process::Command::new(l.disk(&l.binary))
        .args(&doctor)
        .uid(agent.1.uid)
        .gid(agent.1.gid)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home)
        .env("USER", &agent.0)
        .current_dir("/")
        .output()
        .context("cannot run toolgate doctor as the agent's user")?;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        s.say(line);
    }
    Ok(())
}

fn summary(l: &Layout, args: &SeparatedArgs) {
    let as_daemon = format!(
        "sudo -u {} {} --data-dir {}",
        l.daemon_user,
        l.binary.display(),
        l.data_dir.display()
    );
    println!();
    println!("Operators approve as the daemon's user, or with tokens of their own:");
    println!("  {as_daemon} approvals list");
    println!("  {as_daemon} approvals approve ID --as NAME");
    println!("  {as_daemon} operators add NAME      (a token of their own for the UI and --url)");
    if !l.listen.eq_ignore_ascii_case("none") {
        println!(
            "  {as_daemon} ui --url http://{}   (a one-time sign-in link for the control UI)",
            l.listen
        );
    }
    println!(
        "Check it as the agent's user: sudo -u {} {} doctor",
        args.agent_user.as_deref().unwrap_or("AGENT"),
        l.binary.display()
    );
}
