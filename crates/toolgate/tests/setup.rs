//! `toolgate setup separated` as a process, without touching the system:
//! a dry run changes nothing; below a temporary `--root` every file lands
//! where it belongs with what it must say (the binary, the policy, the data
//! directory and its keys, the unit, each runtime's system-level hook
//! pinned to the socket and the daemon's uid, the record), existing system
//! files are merged with a backup, and a second run changes nothing. The
//! daemon's user is `nobody` (tests create no users); when the tests run
//! as root, files are really given to it.

use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

fn toolgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .env_remove("TOOLGATE_DATA_DIR")
        .env_remove("TOOLGATE_POLICY")
        .env_remove("TOOLGATE_URL")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn uid_of(name: &str) -> Option<u32> {
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&name)).then(|| f.get(2)?.parse().ok())?
        })
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| m.uid()).ok() == Some(0)
}

#[test]
fn a_dry_run_prints_every_step_and_changes_nothing() {
    let record = Path::new("/etc/toolgate/setup.json");
    let before = std::fs::read(record).ok();
    let out = toolgate(&["setup", "separated", "--dry-run"]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    for step in [
        "the daemon's system user toolgate",
        "/usr/local/bin/toolgate",
        "/etc/toolgate/policy.toml",
        "/var/lib/toolgate, the daemon's, 0700",
        "/run/toolgate",
        "/etc/systemd/system/toolgate.service",
        "/etc/claude-code/managed-settings.json",
        "/etc/codex/requirements.toml",
        "/etc/gemini-cli/settings.json",
        "OpenClaw: no system-level place is known",
        "sudo -u toolgate /usr/local/bin/toolgate --data-dir /var/lib/toolgate approvals list",
    ] {
        assert!(t.contains(step), "{step:?} missing:\n{t}");
    }
    assert!(t.contains("would "), "{t}");
    assert!(!t.contains("done: "), "a dry run did something:\n{t}");
    assert_eq!(std::fs::read(record).ok(), before);
}

#[test]
fn without_root_the_real_system_is_refused_with_what_to_run() {
    if !is_root() {
        let out = toolgate(&["setup", "separated"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out).contains("run it with sudo"), "{}", text(&out));
        return;
    }
    // As root: the same, run as nobody.
    let Some(nobody) = uid_of("nobody") else {
        eprintln!("skipped: no user nobody to run as");
        return;
    };
    use std::os::unix::process::CommandExt;
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["setup", "separated"])
        .uid(nobody)
        .gid(nobody)
        .current_dir("/")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("run it with sudo"), "{}", text(&out));
}

#[test]
fn below_a_root_every_part_lands_pinned_merged_and_a_second_run_changes_nothing() {
    let Some(daemon_uid) = uid_of("nobody") else {
        eprintln!("skipped: no user nobody to stand for the daemon's user");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // The daemon's user runs this binary to make its keys: it must reach it.
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = tmp.path();
    // An administrator's own managed settings, to be kept.
    std::fs::create_dir_all(root.join("etc/claude-code")).unwrap();
    std::fs::write(
        root.join("etc/claude-code/managed-settings.json"),
        r#"{"permissions": {"deny": ["Bash(curl:*)"]}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("etc/codex")).unwrap();
    std::fs::write(
        root.join("etc/codex/requirements.toml"),
        "# site policy\napproval_policy = \"on-request\"\n\n[features]\nhooks = false\n",
    )
    .unwrap();
    let r = root.to_str().unwrap();
    let args = [
        "setup",
        "separated",
        "--root",
        r,
        "--daemon-user",
        "nobody",
        "--no-start",
    ];
    let out = toolgate(&args);
    let t = text(&out);
    assert!(out.status.success(), "{t}");

    // The binary: these very bytes.
    let bin = root.join("usr/local/bin/toolgate");
    assert_eq!(
        std::fs::read(&bin).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_toolgate")).unwrap()
    );
    assert_eq!(std::fs::metadata(&bin).unwrap().mode() & 0o777, 0o755);
    // The policy: the built-in default written out, 0644.
    let policy = root.join("etc/toolgate/policy.toml");
    assert_eq!(
        std::fs::read_to_string(&policy).unwrap(),
        toolgate_bundle::DEFAULT_POLICY_TEXT
    );
    assert_eq!(std::fs::metadata(&policy).unwrap().mode() & 0o777, 0o644);
    // The data directory and its keys: the daemon's, private.
    let data = root.join("var/lib/toolgate");
    let m = std::fs::metadata(&data).unwrap();
    assert_eq!(m.mode() & 0o777, 0o700);
    for f in ["agent.token", "operator.token", "link.token", "daemon.key"] {
        let fm = std::fs::metadata(data.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(fm.mode() & 0o077, 0, "{f} is private");
        if is_root() {
            assert_eq!(fm.uid(), daemon_uid, "{f} is the daemon's");
        }
    }
    if is_root() {
        assert_eq!(m.uid(), daemon_uid);
    }
    let public = std::fs::read_to_string(data.join("daemon.pub")).unwrap();
    assert!(public.starts_with("ed25519:"), "{public}");
    assert_eq!(
        std::fs::read_to_string(root.join("etc/toolgate/daemon.pub")).unwrap(),
        public
    );
    // The unit.
    let unit = std::fs::read_to_string(root.join("etc/systemd/system/toolgate.service")).unwrap();
    assert!(unit.contains("User=nobody\n"), "{unit}");
    assert!(
        unit.contains(
            "ExecStart=/usr/local/bin/toolgate --data-dir /var/lib/toolgate serve --policy \
             /etc/toolgate/policy.toml --listen 127.0.0.1:7878 --socket \
             /run/toolgate/toolgate.sock\n"
        ),
        "{unit}"
    );
    assert_eq!(
        std::fs::metadata(root.join("run/toolgate")).unwrap().mode() & 0o777,
        0o755
    );
    // Each runtime's hook, pinned; the administrator's content kept.
    let pinned = |rt: &str| {
        format!(
            "/usr/local/bin/toolgate hook {rt} --timeout 10 --policy /etc/toolgate/policy.toml \
             --url unix:/run/toolgate/toolgate.sock --daemon-uid {daemon_uid} --store none"
        )
    };
    let claude: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("etc/claude-code/managed-settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(claude["permissions"]["deny"][0], "Bash(curl:*)");
    let h = &claude["hooks"]["PreToolUse"][0]["hooks"][0];
    assert_eq!(h["command"], pinned("claude-code").as_str());
    assert_eq!(h["onFailure"], "block");
    assert!(
        root.join("etc/claude-code/managed-settings.json.bak")
            .exists()
    );
    let codex = std::fs::read_to_string(root.join("etc/codex/requirements.toml")).unwrap();
    assert!(codex.starts_with("# site policy\n"), "{codex}");
    assert!(
        codex.contains("approval_policy = \"on-request\""),
        "{codex}"
    );
    assert!(codex.contains("hooks = true"), "{codex}");
    assert!(!codex.contains("hooks = false"), "{codex}");
    assert!(codex.contains("[[hooks.PreToolUse]]"), "{codex}");
    assert!(
        codex.contains(&format!("command = \"{}\"", pinned("codex"))),
        "{codex}"
    );
    let gemini: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("etc/gemini-cli/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(gemini["hooksConfig"]["enabled"], true);
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        pinned("gemini").as_str()
    );
    let cursor: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("etc/cursor/hooks.json")).unwrap())
            .unwrap();
    assert_eq!(cursor["version"], 1);
    assert_eq!(
        cursor["hooks"]["preToolUse"][0]["command"],
        pinned("cursor").as_str()
    );
    assert_eq!(cursor["hooks"]["preToolUse"][0]["failClosed"], true);
    // The record.
    let rec: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("etc/toolgate/setup.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rec["mode"], "separated");
    assert_eq!(rec["daemon_uid"], daemon_uid);
    assert_eq!(rec["socket"], "/run/toolgate/toolgate.sock");
    assert_eq!(rec["public_key"], public.trim());
    assert_eq!(rec["hooks"]["codex"], "/etc/codex/requirements.toml");
    assert!(t.contains("not started (--no-start)"), "{t}");

    // Again: nothing changes, no new backup.
    let snapshot = |p: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v = Vec::new();
        for e in walk(p) {
            v.push((
                e.display().to_string(),
                std::fs::read(&e).unwrap_or_default(),
            ));
        }
        v.sort();
        v
    };
    let before = snapshot(root);
    let out = toolgate(&args);
    let t2 = text(&out);
    assert!(out.status.success(), "{t2}");
    assert!(
        !t2.contains("done: "),
        "the second run changed something:\n{t2}"
    );
    assert_eq!(snapshot(root), before);

    // doctor reads the record below the same root.
    let out = toolgate(&["doctor", "--mode", "--system-root", r]);
    let d = text(&out);
    assert!(
        d.contains("set up separated") || d.contains("separated set-up found"),
        "{d}"
    );
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => out.extend(walk(&p)),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out
}

/// Same-user install: a policy the installing user (so an agent running as
/// them) can change is refused, saying what to do; accepted with
/// `--allow-writable-policy`, which the hook command then carries (the
/// hook would refuse that policy without it, denying every call).
#[test]
fn install_refuses_a_policy_its_user_can_change_unless_told_and_then_pins_the_flag() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    // As root, the installing user is `nobody` (root's own files never
    // count as an agent's): the directory and policy are given to it.
    let as_user = if is_root() {
        let Some(nobody) = uid_of("nobody") else {
            eprintln!("skipped: no user nobody to install as");
            return;
        };
        Some(nobody)
    } else {
        None
    };
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    let policy = home.join("policy.toml");
    std::fs::write(&policy, "[risk]\nescalation_threshold = 36\n").unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if let Some(uid) = as_user {
        for p in [home.clone(), home.join(".claude"), policy.clone()] {
            std::os::unix::fs::chown(&p, Some(uid), Some(uid)).unwrap();
        }
    }
    let settings = home.join(".claude/settings.json");
    let install = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        c.args(["--data-dir", home.join("state").to_str().unwrap()])
            .args(["install", "claude-code", "--settings"])
            .arg(&settings)
            .arg("--policy")
            .arg(&policy)
            .args(extra)
            .env("HOME", &home)
            .env_remove("TOOLGATE_DATA_DIR")
            .env_remove("TOOLGATE_POLICY")
            .env_remove("TOOLGATE_URL")
            .current_dir(&home);
        if let Some(uid) = as_user {
            c.uid(uid).gid(uid);
        }
        c.output().unwrap()
    };
    let out = install(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    for said in ["--allow-writable-policy", "setup separated", "judgement"] {
        assert!(text(&out).contains(said), "{said:?}: {}", text(&out));
    }
    assert!(!settings.exists(), "nothing is installed when refused");
    let out = install(&["--allow-writable-policy"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let command = written["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(command.contains(" hook claude-code "), "{written}");
    assert!(command.ends_with(" --allow-writable-policy"), "{command}");
}
