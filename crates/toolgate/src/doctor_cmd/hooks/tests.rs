//! The hook runtimes' checks against real files in a temporary home and
//! project, with entries written the way `toolgate install` writes them
//! (`Target::entry` and `Target::add`) and Codex trust recorded from
//! `codex_trust_cmd::wanted`.

use super::*;
use crate::doctor_cmd::report::Level;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use toolgate_core::hooks::Runtime;

pub(crate) struct Fixture {
    pub root: PathBuf,
    pub home: PathBuf,
    pub project: PathBuf,
    pub exe: PathBuf,
}

impl Fixture {
    pub(crate) fn new(tag: &str) -> Fixture {
        let root =
            std::env::temp_dir().join(format!("tg-doctor-unit-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (home, project, bin) = (root.join("home"), root.join("project"), root.join("bin"));
        for d in [&home, &project, &bin] {
            std::fs::create_dir_all(d).unwrap();
        }
        let exe = bin.join("toolgate");
        std::fs::write(&exe, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let project = project.canonicalize().unwrap();
        Fixture {
            root,
            home,
            project,
            exe,
        }
    }

    pub(crate) fn ctx(&self, extra: &[(&str, &str)]) -> Ctx {
        let mut vars = vec![
            ("HOME", self.home.to_str().unwrap()),
            ("PATH", "/nonexistent"),
        ];
        vars.extend_from_slice(extra);
        Ctx::for_test(&self.project, &vars)
    }

    /// The settings file for `scope`.
    pub(crate) fn path(&self, r: Runtime, scope: Scope) -> PathBuf {
        let t = r.spec().install;
        match scope {
            Scope::User => self.home.join(t.dir).join(t.file),
            Scope::Project => self.project.join(t.dir).join(t.file),
            Scope::System => crate::setup_cmd::system_file(r, &self.project.join("no-system-root")),
        }
    }

    /// Installs as `toolgate install` does, with `extra` after the
    /// runtime's name on the command line and a timeout of `secs`; for
    /// Codex, trusts the entries too.
    pub(crate) fn install(&self, r: Runtime, scope: Scope, extra: &str, secs: u64) -> PathBuf {
        self.install_as(r, scope, extra, secs, true)
    }

    /// As [`Fixture::install`], pinned or not (as an older toolgate
    /// install wrote it: the runtime's environment then decides).
    pub(crate) fn install_as(
        &self,
        r: Runtime,
        scope: Scope,
        extra: &str,
        secs: u64,
        pinned: bool,
    ) -> PathBuf {
        let spec = r.spec();
        let t = spec.install;
        let path = self.path(r, scope);
        // Pinned as `toolgate install` pins it, except where `extra` says
        // otherwise.
        let mut pins = String::new();
        for (flag, value) in [
            ("--policy", "builtin".to_string()),
            ("--url", "none".to_string()),
            ("--data-dir", self.root.join("data").display().to_string()),
        ] {
            if pinned
                && !extra.contains(flag)
                && !(flag == "--data-dir" && extra.contains("--store"))
            {
                pins.push_str(&format!(" {flag} {value}"));
            }
        }
        let cmd = format!(
            "{} hook {} --timeout {secs}{pins}{extra}",
            self.exe.display(),
            spec.name
        );
        let mut settings = read_json(&path).unwrap_or_else(|| json!({}));
        t.add(
            spec.name,
            &mut settings,
            t.entry(&cmd, Duration::from_secs(secs)),
        )
        .unwrap();
        write_json(&path, &settings);
        if r == Runtime::Codex {
            self.trust(&path);
        }
        path
    }

    /// Records Codex trust for every toolgate hook in `hooks`, from the same
    /// function doctor checks with. Fails loudly if it computes nothing.
    pub(crate) fn trust(&self, hooks: &Path) {
        let spec = Runtime::Codex.spec();
        let settings = read_json(hooks).unwrap();
        let wanted = crate::codex_trust_cmd::wanted(hooks, &settings, spec);
        let found = spec.install.find(spec.name, &settings);
        assert!(
            !found.is_empty() && wanted.len() == found.len(),
            "codex_trust_cmd::wanted computed {} trust entries for {} installed hooks: the \
             Codex trust check cannot be tested (or trusted) until it computes one per hook",
            wanted.len(),
            found.len()
        );
        for (key, hash) in &wanted {
            assert!(key.starts_with(&*hooks.to_string_lossy()), "{key}");
            assert!(hash.starts_with("sha256:"), "{hash}");
        }
        let config = self.home.join(".codex/config.toml");
        let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(&config)
            .unwrap_or_default()
            .parse()
            .unwrap();
        for (key, hash) in wanted {
            doc["hooks"]["state"][&key]["trusted_hash"] = toml_edit::value(hash);
        }
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, doc.to_string()).unwrap();
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub(crate) fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

pub(crate) fn write_json(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

pub(crate) fn edit(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v = read_json(path).unwrap();
    f(&mut v);
    write_json(path, &v);
}

/// The first grouped entry of `event` (or the flat entry).
pub(crate) fn first_entry<'a>(v: &'a mut Value, event: &str) -> &'a mut Value {
    let first = &mut v["hooks"][event][0];
    if first.get("hooks").is_some() {
        &mut first["hooks"][0]
    } else {
        first
    }
}

pub(crate) fn run(r: Runtime, ctx: &Ctx) -> Vec<Finding> {
    check(r.spec(), ctx, false)
}

/// The findings at `level`, as "message | fix" lines.
pub(crate) fn at(findings: &[Finding], level: Level) -> Vec<String> {
    findings
        .iter()
        .filter(|f| f.level == level)
        .map(|f| format!("{} | {}", f.message, f.fix.as_deref().unwrap_or("")))
        .collect()
}

pub(crate) fn has(findings: &[Finding], level: Level, text: &str) -> bool {
    at(findings, level).iter().any(|m| m.contains(text))
}

#[test]
fn nothing_installed_is_a_warning_unless_asked_for() {
    let fx = Fixture::new("none");
    let ctx = fx.ctx(&[]);
    for r in Runtime::ALL {
        let v = run(r, &ctx);
        assert_eq!(v.len(), 1, "{v:#?}");
        assert_eq!(v[0].level, Level::Warn);
        assert!(v[0].message.starts_with("not installed"), "{v:#?}");
        assert_eq!(v[0].fix.as_deref(), Some(&*format!("toolgate install {r}")));
        assert_eq!(check(r.spec(), &ctx, true)[0].level, Level::Error);
    }
}

#[test]
fn installed_entries_are_ok_and_say_what_they_are() {
    let fx = Fixture::new("ok");
    let ctx = fx.ctx(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    for r in Runtime::ALL {
        fx.install(r, Scope::User, "", 10);
        let v = run(r, &ctx);
        assert_eq!(v.len(), 1, "{r}: {v:#?}");
        assert_eq!(v[0].level, Level::Ok, "{r}: {v:#?}");
        assert_eq!(
            v[0].file.as_deref(),
            Some(&*fx.path(r, Scope::User).to_string_lossy())
        );
        let m = &v[0].message;
        assert!(m.contains(&*fx.exe.to_string_lossy()), "{m}");
        for event in r.spec().install.events {
            assert!(m.contains(event), "{m}");
        }
    }
    let msg = |r| run(r, &ctx)[0].message.clone();
    assert!(msg(Runtime::ClaudeCode).contains("\"onFailure\": \"block\""));
    assert!(msg(Runtime::Cursor).contains("\"failClosed\": true"));
    assert!(msg(Runtime::Gemini).contains("timeout 10000 ms"));
    let codex = msg(Runtime::Codex);
    assert!(codex.contains("no fail-closed switch in Codex"), "{codex}");
    assert!(codex.contains("trusted in"), "{codex}");
}

#[test]
fn a_missing_switch_matcher_type_or_event_is_an_error_with_its_edit() {
    let fx = Fixture::new("entry");
    let ctx = fx.ctx(&[]);
    let claude = fx.install(Runtime::ClaudeCode, Scope::User, "", 10);
    edit(&claude, |s| {
        first_entry(s, "PreToolUse")
            .as_object_mut()
            .unwrap()
            .remove("onFailure");
        s["hooks"]["PreToolUse"][0]["matcher"] = json!("Bash");
    });
    let v = run(Runtime::ClaudeCode, &ctx);
    assert!(
        has(&v, Level::Error, "lacks \"onFailure\": \"block\"")
            && has(
                &v,
                Level::Error,
                "add \"onFailure\": \"block\" to the entry"
            ),
        "{v:#?}"
    );
    assert!(
        has(&v, Level::Error, "matcher \"Bash\" selects only some tools"),
        "{v:#?}"
    );
    assert!(!v.iter().any(|f| f.level == Level::Ok), "{v:#?}");

    let cursor = fx.install(Runtime::Cursor, Scope::User, "", 10);
    edit(&cursor, |s| {
        s["hooks"].as_object_mut().unwrap().remove("preToolUse");
        s.as_object_mut().unwrap().remove("version");
    });
    let v = run(Runtime::Cursor, &ctx);
    assert!(
        has(&v, Level::Error, "no toolgate entry for preToolUse"),
        "{v:#?}"
    );
    assert!(has(&v, Level::Error, "file writes"), "{v:#?}");
    assert!(has(&v, Level::Warn, "\"version\": 1"), "{v:#?}");

    // Editing a Codex entry by hand drops its trust: the fix is install.
    let codex = fx.install(Runtime::Codex, Scope::User, "", 10);
    edit(&codex, |s| {
        s["hooks"]["PreToolUse"][0]["matcher"] = json!("Bash")
    });
    let v = run(Runtime::Codex, &ctx);
    let narrow = v
        .iter()
        .find(|f| f.message.contains("selects only some"))
        .unwrap();
    assert_eq!(
        narrow.fix.as_deref(),
        Some(&*format!(
            "toolgate install codex --policy builtin --url none --data-dir {}",
            fx.root.join("data").display()
        ))
    );

    let gemini = fx.install(Runtime::Gemini, Scope::User, "", 10);
    edit(&gemini, |s| {
        first_entry(s, "BeforeTool")
            .as_object_mut()
            .unwrap()
            .remove("type");
    });
    let v = run(Runtime::Gemini, &ctx);
    assert!(has(&v, Level::Error, "has no \"type\""), "{v:#?}");
}

#[test]
fn a_binary_that_moved_blocks_or_lets_every_call_through() {
    let fx = Fixture::new("binary");
    let ctx = fx.ctx(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    for r in [Runtime::ClaudeCode, Runtime::Gemini] {
        fx.install(r, Scope::User, "", 10);
    }
    std::fs::remove_file(&fx.exe).unwrap();
    let claude = run(Runtime::ClaudeCode, &ctx);
    assert!(has(&claude, Level::Error, "does not exist"), "{claude:#?}");
    assert!(
        has(&claude, Level::Error, "every call is blocked"),
        "{claude:#?}"
    );
    let gemini = run(Runtime::Gemini, &ctx);
    assert!(
        has(
            &gemini,
            Level::Error,
            "Gemini CLI runs every call unchecked"
        ),
        "{gemini:#?}"
    );
}

#[test]
fn timeouts_are_checked_against_the_hook_and_the_policys_hold() {
    let fx = Fixture::new("timeout");
    let ctx = fx.ctx(&[]);
    // The runtime gives up before the hook's own deadline: Codex runs the
    // call (error), Claude Code blocks it (warning).
    for r in [Runtime::Codex, Runtime::ClaudeCode] {
        let path = fx.install(r, Scope::User, "", 10);
        edit(&path, |s| {
            let e = first_entry(s, "PreToolUse");
            e["command"] = json!(format!("{} hook {r} --timeout 30", fx.exe.display()));
        });
        if r == Runtime::Codex {
            fx.trust(&path);
        }
    }
    let codex = run(Runtime::Codex, &ctx);
    assert!(
        has(
            &codex,
            Level::Error,
            "timeout (10 s) is shorter than the hook's own deadline"
        ) && has(&codex, Level::Error, "then runs the call"),
        "{codex:#?}"
    );
    let claude = run(Runtime::ClaudeCode, &ctx);
    assert!(
        has(&claude, Level::Warn, "blocks the call without"),
        "{claude:#?}"
    );
    assert!(
        !claude.iter().any(|f| f.level == Level::Error),
        "{claude:#?}"
    );

    // A policy holding for 2 minutes needs more than 10 s.
    let policy = fx.root.join("hold.toml");
    std::fs::write(&policy, "[hooks]\nhold = \"2m\"\n").unwrap();
    let arg = format!(" --policy {}", policy.display());
    fx.install(Runtime::Cursor, Scope::User, &arg, 10);
    let v = run(Runtime::Cursor, &ctx);
    assert!(
        has(&v, Level::Warn, "holds an escalated call up to 120 s"),
        "{v:#?}"
    );
    assert!(
        has(&v, Level::Warn, &format!("--policy {}", policy.display())),
        "{v:#?}"
    );
    fx.install(Runtime::Cursor, Scope::User, &arg, 135);
    let v = run(Runtime::Cursor, &ctx);
    assert_eq!(v[0].level, Level::Ok, "{v:#?}");
    assert!(v[0].message.contains("with the policy"), "{v:#?}");
    // A policy that cannot be read fails every call; said once for the four
    // entries that share it.
    fx.install(
        Runtime::Cursor,
        Scope::User,
        " --policy /nonexistent/p.toml",
        10,
    );
    let v = run(Runtime::Cursor, &ctx);
    let errors = at(&v, Level::Error);
    assert_eq!(errors.len(), 1, "{v:#?}");
    assert!(
        errors[0].contains(
            "the preToolUse/beforeShellExecution/beforeMCPExecution/beforeReadFile entry \
             decides with the policy /nonexistent/p.toml, which cannot be used"
        ),
        "{v:#?}"
    );
}

#[test]
fn unreadable_files_are_errors_not_missing_installs() {
    let fx = Fixture::new("json");
    let ctx = fx.ctx(&[]);
    let path = fx.path(Runtime::ClaudeCode, Scope::User);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{\"hooks\": {,}").unwrap();
    let v = run(Runtime::ClaudeCode, &ctx);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(has(&v, Level::Error, "not valid JSON"), "{v:#?}");
    std::fs::write(&path, "{\"hooks\": []}").unwrap();
    assert!(has(
        &run(Runtime::ClaudeCode, &ctx),
        Level::Error,
        "\"hooks\" is not an object"
    ));
    // Gemini reads comments; toolgate install cannot rewrite them.
    let gemini = fx.install(Runtime::Gemini, Scope::User, "", 10);
    let text = std::fs::read_to_string(&gemini).unwrap();
    std::fs::write(&gemini, format!("// mine\n{text}")).unwrap();
    let v = run(
        Runtime::Gemini,
        &fx.ctx(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]),
    );
    assert!(has(&v, Level::Warn, "holds comments"), "{v:#?}");
    assert!(!v.iter().any(|f| f.level == Level::Error), "{v:#?}");
}

#[test]
fn fixes_keep_the_hooks_settings_and_scope() {
    let fx = Fixture::new("fix");
    let ctx = fx.ctx(&[]);
    let spec = Runtime::Codex.spec();
    let entry = json!({"command": "/x/toolgate --data-dir '/d d' hook codex --policy /p.toml \
                                   --url http://127.0.0.1:7878"});
    let user = fx.path(Runtime::Codex, Scope::User);
    assert_eq!(
        install_command(spec, &ctx, &user, Scope::User, Some(&entry)),
        "toolgate install codex --policy /p.toml --url http://127.0.0.1:7878 --data-dir '/d d'"
    );
    let project = fx.path(Runtime::Codex, Scope::Project);
    assert_eq!(
        install_command(spec, &ctx, &project, Scope::Project, None),
        "toolgate install codex --project"
    );
    let mut elsewhere = fx.ctx(&[]);
    elsewhere.in_project = false;
    assert_eq!(
        install_command(spec, &elsewhere, &project, Scope::Project, None),
        format!("toolgate install codex --settings {}", project.display())
    );
    let http = json!({"type": "http", "url": "http://127.0.0.1:7878/v1/hooks/claude-code"});
    assert_eq!(
        install_command(
            Runtime::ClaudeCode.spec(),
            &ctx,
            &fx.path(Runtime::ClaudeCode, Scope::User),
            Scope::User,
            Some(&http)
        ),
        "toolgate install claude-code --http http://127.0.0.1:7878"
    );
    // Gemini's home may be elsewhere than install's default.
    let g = fx.ctx(&[("GEMINI_CLI_HOME", "/g")]);
    let gpath = g
        .user_dir(Runtime::Gemini.spec())
        .unwrap()
        .join("settings.json");
    assert_eq!(
        install_command(Runtime::Gemini.spec(), &g, &gpath, Scope::User, None),
        "toolgate install gemini --settings /g/.gemini/settings.json"
    );
}

#[test]
fn project_files_are_checked_and_fixed_with_project() {
    let fx = Fixture::new("project");
    let ctx = fx.ctx(&[]);
    let path = fx.install(Runtime::Cursor, Scope::Project, "", 10);
    let v = run(Runtime::Cursor, &ctx);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0].level, Level::Ok);
    assert_eq!(v[0].file.as_deref(), Some(&*path.to_string_lossy()));
    edit(&path, |s| {
        first_entry(s, "beforeShellExecution")["failClosed"] = json!(false);
    });
    let v = run(Runtime::Cursor, &ctx);
    assert!(
        has(
            &v,
            Level::Error,
            "or run: toolgate install cursor --project"
        ),
        "{v:#?}"
    );
}

#[test]
fn hooks_the_environment_can_redirect_are_reported_with_the_install_that_pins_them() {
    let fx = Fixture::new("pins");
    let ctx = fx.ctx(&[]);
    let r = Runtime::ClaudeCode;
    fx.install(r, Scope::User, "", 10);
    let v = run(r, &ctx);
    assert!(!has(&v, Level::Warn, "redirected"), "pinned: {v:#?}");
    // As an older install wrote it: every setting from the environment.
    fx.install_as(r, Scope::User, "", 10, false);
    let v = run(r, &ctx);
    let w = at(&v, Level::Warn).join("\n");
    for why in [
        "no --url: TOOLGATE_URL",
        "no --policy: TOOLGATE_POLICY",
        "TOOLGATE_DATA_DIR",
    ] {
        assert!(w.contains(why), "{why}: {w}");
    }
    assert!(w.contains("| toolgate install claude-code"), "{w}");
    // A `toolgate` found through PATH.
    let path = fx.path(r, Scope::User);
    edit(&path, |s| {
        first_entry(s, "PreToolUse")["command"] =
            json!("toolgate hook claude-code --policy builtin --url none --data-dir /d");
    });
    let bin = fx.exe.parent().unwrap().to_str().unwrap().to_string();
    let v = run(r, &fx.ctx(&[("PATH", &bin)]));
    assert!(has(&v, Level::Warn, "found through $PATH"), "{v:#?}");
    // A daemon named without its pin: the hook denies every call.
    for url in ["http://127.0.0.1:7878", "unix:/run/toolgate/toolgate.sock"] {
        fx.install_as(
            r,
            Scope::User,
            &format!(" --url {url} --policy builtin --store none"),
            10,
            false,
        );
        let v = run(r, &ctx);
        assert!(has(&v, Level::Error, "without pinning it"), "{url}: {v:#?}");
    }
    let key = toolgate_gate::DaemonKey::from_seed([2; 32]).public();
    fx.install_as(
        r,
        Scope::User,
        &format!(" --url http://127.0.0.1:7878 --daemon-key {key} --policy builtin --data-dir /d"),
        10,
        false,
    );
    let v = run(r, &ctx);
    assert!(!has(&v, Level::Error, "pinning"), "{v:#?}");
    assert!(!has(&v, Level::Warn, "redirected"), "{v:#?}");
    // Claude's own http hook cannot check the daemon.
    write_json(
        &path,
        &json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "http",
            "url": "http://127.0.0.1:7878/v1/hooks/claude-code", "timeout": 10,
            "onFailure": "block"}]}]}}),
    );
    let v = run(r, &ctx);
    assert!(
        has(
            &v,
            Level::Warn,
            "http hook: Claude believes whatever answers"
        ),
        "{v:#?}"
    );
}
