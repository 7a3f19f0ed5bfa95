//! The mode report against a separated set-up laid out below a temporary
//! root, judged for a user (uid 4242) that owns none of it: separated when
//! every part holds, and each part broken in turn makes it same-user with
//! the reason named.

use super::*;
use crate::setup_cmd::record::RECORD;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

struct Laid {
    root: tempfile::TempDir,
    ctx: Ctx,
    _listener: std::os::unix::net::UnixListener,
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A separated set-up below a temporary root: the record, a data dir
/// (0700), the policy and binary (0644/0755 in 0755 directories), a socket
/// this process serves (so the daemon's uid is this process's), and Claude
/// Code's managed settings with a pinned entry.
fn laid() -> Laid {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    chmod(r, 0o755);
    let me = crate::peer::effective_uid();
    for (dir, mode) in [
        ("etc/toolgate", 0o755),
        ("etc/claude-code", 0o755),
        ("var/lib/toolgate", 0o700),
        ("run/toolgate", 0o755),
        ("usr/local/bin", 0o755),
    ] {
        std::fs::create_dir_all(r.join(dir)).unwrap();
        chmod(&r.join(dir), mode);
    }
    std::fs::write(r.join("etc/toolgate/policy.toml"), "").unwrap();
    chmod(&r.join("etc/toolgate/policy.toml"), 0o644);
    std::fs::write(r.join("usr/local/bin/toolgate"), "").unwrap();
    chmod(&r.join("usr/local/bin/toolgate"), 0o755);
    let listener =
        std::os::unix::net::UnixListener::bind(r.join("run/toolgate/toolgate.sock")).unwrap();
    let cmd = format!(
        "/usr/local/bin/toolgate hook claude-code --timeout 10 --policy /etc/toolgate/policy.toml \
         --url unix:/run/toolgate/toolgate.sock --daemon-uid {me} --store none"
    );
    write_managed(r, &cmd);
    let mut hooks = BTreeMap::new();
    hooks.insert(
        "claude-code".to_string(),
        PathBuf::from("/etc/claude-code/managed-settings.json"),
    );
    let rec = Record {
        mode: "separated".into(),
        daemon_user: "toolgate".into(),
        daemon_uid: Some(me),
        agent_user: Some("agent".into()),
        binary: "/usr/local/bin/toolgate".into(),
        policy: "/etc/toolgate/policy.toml".into(),
        data_dir: "/var/lib/toolgate".into(),
        socket: "/run/toolgate/toolgate.sock".into(),
        listen: "127.0.0.1:7878".into(),
        public_key: None,
        service: "/etc/systemd/system/toolgate.service".into(),
        hooks,
        command: None,
    };
    std::fs::write(r.join(RECORD), serde_json::to_string(&rec).unwrap()).unwrap();
    let mut ctx = Ctx::for_test(r, &[]);
    ctx.system_root = r.to_path_buf();
    Laid {
        root,
        ctx,
        _listener: listener,
    }
}

fn write_managed(root: &Path, cmd: &str) {
    let spec = Runtime::ClaudeCode.spec();
    let mut v = serde_json::json!({});
    spec.install
        .add(
            spec.name,
            &mut v,
            spec.install.entry(cmd, std::time::Duration::from_secs(10)),
        )
        .unwrap();
    let p = root.join("etc/claude-code/managed-settings.json");
    std::fs::write(&p, v.to_string()).unwrap();
    chmod(&p, 0o644);
}

fn one(ctx: &Ctx) -> Finding {
    let mut f = check(ctx);
    assert_eq!(f.len(), 1, "{f:#?}");
    f.remove(0)
}

#[test]
fn without_a_set_up_it_is_same_user_and_says_how_to_separate() {
    let dir = tempfile::tempdir().unwrap();
    let f = one(&Ctx::for_test(dir.path(), &[]));
    assert_eq!(f.level, Level::Warn);
    assert!(
        f.message.starts_with("same-user mode (best effort)"),
        "{}",
        f.message
    );
    assert!(f.fix.unwrap().contains("sudo toolgate setup separated"));
}

#[test]
fn a_whole_set_up_is_separated() {
    let l = laid();
    let f = one(&l.ctx);
    assert_eq!(f.level, Level::Ok, "{}", f.message);
    assert!(f.message.starts_with("separated mode"), "{}", f.message);
    for part in [
        "answers on /run/toolgate/toolgate.sock",
        "/var/lib/toolgate is out of your reach",
        "neither the policy, nor the binary",
        "in files you cannot change: claude-code",
    ] {
        assert!(f.message.contains(part), "{part}: {}", f.message);
    }
}

#[test]
fn each_broken_part_makes_it_same_user_and_is_named() {
    type Break = fn(&Path);
    let cases: [(&str, Break); 6] = [
        ("data directory is reachable", |r| {
            chmod(&r.join("var/lib/toolgate"), 0o755)
        }),
        ("change the policy", |r| {
            chmod(&r.join("etc/toolgate/policy.toml"), 0o666)
        }),
        ("change the policy", |r| {
            chmod(&r.join("etc/toolgate"), 0o777)
        }),
        ("change the binary", |r| {
            chmod(&r.join("usr/local/bin/toolgate"), 0o777)
        }),
        ("does not answer", |r| {
            std::fs::remove_file(r.join("run/toolgate/toolgate.sock")).unwrap()
        }),
        ("not pinned", |r| {
            write_managed(r, "/usr/local/bin/toolgate hook claude-code --url none")
        }),
    ];
    for (want, spoil) in cases {
        let l = laid();
        spoil(l.root.path());
        let f = one(&l.ctx);
        assert_eq!(f.level, Level::Error, "{want}: {}", f.message);
        assert!(f.message.starts_with("same-user mode"), "{}", f.message);
        assert!(f.message.contains(want), "{want}: {}", f.message);
        assert!(f.fix.unwrap().contains("setup separated"));
    }
}

#[test]
fn the_daemons_own_user_or_root_is_not_the_agent() {
    let mut l = laid();
    l.ctx.uid = crate::peer::effective_uid();
    if l.ctx.uid != 0 {
        let f = one(&l.ctx);
        assert!(f.message.contains("is you"), "{}", f.message);
    }
    l.ctx.uid = 0;
    let f = one(&l.ctx);
    assert_eq!(f.level, Level::Warn);
    assert!(f.fix.unwrap().contains("sudo -u agent"), "run as the agent");
}

/// A runtime whose program the agent's user can change is no guarantee:
/// `claude` found in `$PATH` (a link to a script run by `node`), each of
/// the link's directory, the script and the interpreter made writable in
/// turn, makes it same-user, naming the file; all of them out of reach
/// keeps it separated.
#[test]
fn a_runtime_program_the_agent_can_change_breaks_the_guarantee() {
    let layout = |l: &Laid| {
        let r = l.root.path();
        for dir in ["home/bin", "opt/claude", "opt/node/bin"] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
            chmod(&r.join(dir), 0o755);
        }
        std::fs::write(r.join("opt/node/bin/node"), "\x7fELF").unwrap();
        chmod(&r.join("opt/node/bin/node"), 0o755);
        std::fs::write(r.join("opt/claude/cli.js"), "#!/usr/bin/env node\n").unwrap();
        chmod(&r.join("opt/claude/cli.js"), 0o755);
        std::os::unix::fs::symlink(r.join("opt/claude/cli.js"), r.join("home/bin/claude")).unwrap();
        let path = format!(
            "{}:{}",
            r.join("home/bin").display(),
            r.join("opt/node/bin").display()
        );
        let mut ctx = Ctx::for_test(r, &[("PATH", &path)]);
        ctx.system_root = r.to_path_buf();
        ctx
    };
    let l = laid();
    let ctx = layout(&l);
    let f = one(&ctx);
    assert_eq!(f.level, Level::Ok, "{}", f.message);
    for (spoil, named) in [
        ("home/bin", "home/bin/claude"),
        ("opt/claude/cli.js", "opt/claude/cli.js"),
        ("opt/node/bin", "opt/node/bin/node"),
    ] {
        let l = laid();
        let ctx = layout(&l);
        chmod(&l.root.path().join(spoil), 0o777);
        let f = one(&ctx);
        assert_eq!(f.level, Level::Error, "{spoil}: {}", f.message);
        assert!(f.message.contains(named), "{named}: {}", f.message);
        assert!(f.message.contains("runs no hook"), "{}", f.message);
    }
}
