//! `toolgate doctor` as a person runs it: the real binary in a temporary
//! HOME (and CODEX_HOME) with a project as the working directory. Nothing
//! installed is no error; every runtime installed by `toolgate install` is
//! fail-closed; each way an entry stops being fail-closed, introduced by
//! editing the file, is an error (exit 1) whose fix, when it is a `toolgate
//! install` command, makes doctor happy again.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Env {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    /// Removes `root` (the home and the project in it) when the test ends.
    _tmp: tempfile::TempDir,
}

impl Env {
    fn new(tag: &str) -> Env {
        let tmp = tempfile::Builder::new()
            .prefix(&format!("tg-doctor-{tag}-"))
            .tempdir()
            .unwrap();
        let root = tmp.path().to_path_buf();
        let home = root.join("home");
        let project = root.join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        let project = project.canonicalize().unwrap();
        Env {
            root,
            home,
            project,
            _tmp: tmp,
        }
    }

    /// The binary with only HOME, CODEX_HOME, PATH and `vars` set, in the
    /// project.
    fn run(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .env_clear()
            // toolgate on PATH, as installed: a project's hook names it so.
            .env("PATH", path_with_toolgate())
            .env("HOME", &self.home)
            .env("CODEX_HOME", self.home.join(".codex"))
            .envs(vars.iter().copied())
            .current_dir(&self.project)
            .output()
            .unwrap()
    }

    fn install(&self, args: &[&str]) {
        let mut all = vec!["install"];
        all.extend_from_slice(args);
        let out = self.run(&all, &[]);
        assert!(
            out.status.success(),
            "toolgate {all:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `toolgate doctor --json ARGS`, reading the system's files below an
    /// empty directory of the test's: exit code and findings.
    fn doctor(&self, args: &[&str], vars: &[(&str, &str)]) -> (i32, Vec<Value>) {
        let sys = self.root.join("sys");
        let mut all = vec!["doctor", "--json", "--system-root", sys.to_str().unwrap()];
        all.extend_from_slice(args);
        let out = self.run(&all, vars);
        let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "doctor --json prints one array ({e}): {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        for f in &v {
            let mut keys: Vec<&String> = f.as_object().unwrap().keys().collect();
            keys.sort_unstable();
            assert_eq!(keys, ["file", "fix", "level", "message", "runtime"], "{f}");
        }
        (out.status.code().unwrap_or(-1), v)
    }

    fn trust_project_for_gemini(&self) {
        write(
            &self.home.join(".gemini/trustedFolders.json"),
            &json!({ (self.project.display().to_string()): "TRUST_FOLDER" }),
        );
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn write(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

fn edit(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v = read(path);
    f(&mut v);
    write(path, &v);
}

/// The grouped entry of `event` (or Cursor's flat one).
fn entry<'a>(v: &'a mut Value, event: &str) -> &'a mut Value {
    let first = &mut v["hooks"][event][0];
    if first.get("hooks").is_some() {
        &mut first["hooks"][0]
    } else {
        first
    }
}

fn of<'a>(v: &'a [Value], runtime: &str, level: &str) -> Vec<&'a Value> {
    v.iter()
        .filter(|f| f["runtime"] == runtime && f["level"] == level)
        .collect()
}

/// The `toolgate install …` command in a fix, as words.
fn install_words(fix: &str) -> Option<Vec<String>> {
    let at = fix.find("toolgate install ")?;
    Some(
        fix[at + "toolgate ".len()..]
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn nothing_installed_is_no_error_unless_asked_for() {
    let env = Env::new("none");
    let (code, v) = env.doctor(&[], &[]);
    assert_eq!(code, 0, "{v:#?}");
    assert_eq!(v.len(), 6, "{v:#?}");
    // First the mode: nothing set up separated here.
    assert_eq!(v[0]["runtime"], "mode");
    assert_eq!(v[0]["level"], "warn");
    assert!(
        v[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("same-user mode"),
        "{v:#?}"
    );
    assert!(
        v[0]["fix"]
            .as_str()
            .unwrap()
            .contains("sudo toolgate setup separated"),
        "{v:#?}"
    );
    let v = &v[1..];
    for (f, rt) in v
        .iter()
        .zip(["claude-code", "codex", "gemini", "cursor", "openclaw"])
    {
        assert_eq!(f["runtime"], rt);
        assert_eq!(f["level"], "warn", "{f}");
        assert!(
            f["message"].as_str().unwrap().starts_with("not installed"),
            "{f}"
        );
    }
    assert_eq!(v[1]["fix"], "toolgate install codex");
    assert!(v[4]["fix"].as_str().unwrap().contains("plugins.load.paths"));

    let (code, v) = env.doctor(&["--runtime", "codex"], &[]);
    assert_eq!((code, v.len()), (1, 1), "{v:#?}");
    assert_eq!(v[0]["level"], "error");

    let sys = env.root.join("sys");
    let text = env.run(&["doctor", "--system-root", sys.to_str().unwrap()], &[]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.status.code(), Some(0));
    assert!(
        stdout.contains("fix: toolgate install claude-code"),
        "{stdout}"
    );
    assert!(stdout.contains("no errors, 6 warnings"), "{stdout}");
    assert!(stdout.starts_with("warn  mode"), "{stdout}");

    let bad = env.run(&["doctor", "--runtime", "claude"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("openclaw"));
    let bad = env.run(&["doctor", "--project", "/nonexistent/dir"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no such directory"));
}

#[test]
fn installed_runtimes_are_ok_and_each_breakage_is_an_error_whose_fix_works() {
    let env = Env::new("breakage");
    env.trust_project_for_gemini();
    for r in ["claude-code", "codex", "gemini", "cursor"] {
        env.install(&[r]);
    }
    let (code, v) = env.doctor(&[], &[]);
    assert_eq!(code, 0, "{v:#?}");
    for r in ["claude-code", "codex", "gemini", "cursor"] {
        let ok = of(&v, r, "ok");
        assert_eq!(ok.len(), 1, "{r}: {v:#?}");
        assert!(of(&v, r, "warn").is_empty(), "{r}: {v:#?}");
    }

    let claude = env.home.join(".claude/settings.json");
    let codex = env.home.join(".codex/hooks.json");
    let gemini = env.home.join(".gemini/settings.json");
    let cursor = env.home.join(".cursor/hooks.json");
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, &Path, Edit, &[&str])> = vec![
        (
            "claude-code",
            &claude,
            Box::new(|s| {
                entry(s, "PreToolUse")
                    .as_object_mut()
                    .unwrap()
                    .remove("onFailure");
            }),
            &["lacks \"onFailure\": \"block\""],
        ),
        (
            "claude-code",
            &claude,
            Box::new(|s| s["hooks"]["PreToolUse"][0]["matcher"] = json!("Bash")),
            &["matcher \"Bash\" selects only some tools"],
        ),
        (
            "claude-code",
            &claude,
            Box::new(|s| {
                entry(s, "PreToolUse")["command"] =
                    json!("/nonexistent/toolgate hook claude-code --timeout 10");
            }),
            &[
                "/nonexistent/toolgate does not exist",
                "every call is blocked",
            ],
        ),
        (
            "codex",
            &codex,
            Box::new(|s| entry(s, "PreToolUse")["timeout"] = json!(60)),
            &["was edited after Codex trusted it"],
        ),
        (
            "codex",
            &codex,
            Box::new(|s| {
                let e = entry(s, "PreToolUse");
                let cmd = e["command"]
                    .as_str()
                    .unwrap()
                    .replace("--timeout 10", "--timeout 30");
                e["command"] = json!(cmd);
            }),
            &[
                "timeout (10 s) is shorter than the hook's own deadline (--timeout 30 s)",
                "then runs the call",
                "was edited after Codex trusted it",
            ],
        ),
        (
            "gemini",
            &gemini,
            Box::new(|s| s["hooks"]["BeforeTool"][0]["matcher"] = json!("run_shell_command")),
            &["matcher \"run_shell_command\" selects only some tools"],
        ),
        (
            "gemini",
            &gemini,
            Box::new(|s| {
                entry(s, "BeforeTool")
                    .as_object_mut()
                    .unwrap()
                    .remove("type");
            }),
            &["has no \"type\""],
        ),
        (
            "cursor",
            &cursor,
            Box::new(|s| {
                s["hooks"].as_object_mut().unwrap().remove("preToolUse");
            }),
            &["no toolgate entry for preToolUse", "file writes"],
        ),
        (
            "cursor",
            &cursor,
            Box::new(|s| {
                entry(s, "beforeShellExecution")
                    .as_object_mut()
                    .unwrap()
                    .remove("failClosed");
            }),
            &["lacks \"failClosed\": true"],
        ),
    ];
    for (runtime, file, change, wants) in &cases {
        edit(file, change);
        let (code, v) = env.doctor(&[], &[]);
        assert_eq!(code, 1, "{runtime} {wants:?}: {v:#?}");
        let errors = of(&v, runtime, "error");
        for want in *wants {
            assert!(
                errors
                    .iter()
                    .any(|f| f["message"].as_str().unwrap().contains(want)
                        && f["file"] == file.to_str().unwrap()),
                "{runtime}: no error saying {want:?}: {v:#?}"
            );
        }
        assert!(of(&v, runtime, "ok").is_empty(), "{v:#?}");
        // Every error says how to fix it, and running that fix fixes it.
        assert!(
            v.iter()
                .filter(|f| f["level"] == "error")
                .all(|f| f["fix"].is_string())
        );
        let fix = errors[0]["fix"].as_str().unwrap();
        let words = install_words(fix).unwrap_or_else(|| panic!("{fix}"));
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let out = env.run(&words, &[]);
        assert!(
            out.status.success(),
            "{fix}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (code, v) = env.doctor(&[], &[]);
        assert_eq!(code, 0, "after {fix}: {v:#?}");
        assert_eq!(of(&v, runtime, "ok").len(), 1, "{v:#?}");
    }

    // Codex's trust entry removed altogether.
    let config = env.home.join(".codex/config.toml");
    std::fs::write(&config, "").unwrap();
    let (code, v) = env.doctor(&["--runtime", "codex"], &[]);
    assert_eq!(code, 1);
    assert!(
        v[0]["message"]
            .as_str()
            .unwrap()
            .contains("Codex has no trust entry"),
        "{v:#?}"
    );
    env.install(&["codex"]);

    // A file the runtime cannot read.
    let good = std::fs::read_to_string(&claude).unwrap();
    std::fs::write(&claude, "{\"hooks\": ").unwrap();
    let (code, v) = env.doctor(&["--runtime", "claude-code"], &[]);
    assert_eq!(code, 1);
    assert!(
        v[0]["message"].as_str().unwrap().contains("not valid JSON"),
        "{v:#?}"
    );
    std::fs::write(&claude, good).unwrap();

    // The project's local settings switch every hook off.
    let local = env.project.join(".claude/settings.local.json");
    write(&local, &json!({"disableAllHooks": true}));
    let (code, v) = env.doctor(&["--runtime", "claude-code"], &[]);
    assert_eq!(code, 1);
    assert!(
        of(&v, "claude-code", "error")
            .iter()
            .any(|f| f["file"] == local.to_str().unwrap()),
        "{v:#?}"
    );
    std::fs::remove_file(&local).unwrap();

    // Gemini under GitHub Actions strips TOOLGATE_URL from the hook: a
    // pinned hook (`--url none`, as installed) does not care…
    let actions = [
        ("TOOLGATE_URL", "http://127.0.0.1:9"),
        ("GITHUB_SHA", "abc"),
    ];
    let (code, v) = env.doctor(&["--runtime", "gemini"], &actions);
    assert_eq!(code, 0, "{v:#?}");
    // …one that takes the daemon from the environment does.
    edit(&gemini, |s| {
        let e = entry(s, "BeforeTool");
        let cmd = e["command"].as_str().unwrap().replace(" --url none", "");
        e["command"] = json!(cmd);
    });
    let (code, v) = env.doctor(&["--runtime", "gemini"], &actions);
    assert_eq!(code, 1, "{v:#?}");
    assert!(
        of(&v, "gemini", "error")[0]["message"]
            .as_str()
            .unwrap()
            .contains("TOOLGATE_URL is set here")
    );
    // Installing pins that daemon, with its key (from its daemon.pub).
    let data = env.home.join(".local/state/toolgate");
    std::fs::create_dir_all(&data).unwrap();
    let key = toolgate_gate::DaemonKey::from_seed([9; 32])
        .public()
        .to_string();
    std::fs::write(data.join("daemon.pub"), format!("{key}\n")).unwrap();
    let out = env.run(&["install", "gemini"], &actions);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = read(&gemini).to_string();
    assert!(
        installed.contains("--url http://127.0.0.1:9"),
        "{installed}"
    );
    assert!(
        installed.contains(&format!("--daemon-key {key}")),
        "{installed}"
    );
    let (code, v) = env.doctor(&["--runtime", "gemini"], &actions);
    assert_eq!(code, 0, "{v:#?}");
}

#[test]
fn a_hold_needs_a_longer_timeout() {
    let env = Env::new("hold");
    let policy = env.root.join("hold.toml");
    std::fs::write(&policy, "[hooks]\nhold = \"2m\"\n").unwrap();
    env.install(&["claude-code", "--policy", policy.to_str().unwrap()]);
    let settings = env.home.join(".claude/settings.json");
    assert_eq!(entry(&mut read(&settings), "PreToolUse")["timeout"], 135);
    let (code, v) = env.doctor(&["--runtime", "claude-code"], &[]);
    assert_eq!(code, 0, "{v:#?}");
    assert!(
        v[0]["message"]
            .as_str()
            .unwrap()
            .contains("with the policy")
    );
    edit(&settings, |s| {
        let e = entry(s, "PreToolUse");
        e["timeout"] = json!(10);
        let cmd = e["command"]
            .as_str()
            .unwrap()
            .replace("--timeout 135", "--timeout 10");
        e["command"] = json!(cmd);
    });
    let (code, v) = env.doctor(&["--runtime", "claude-code"], &[]);
    assert_eq!(code, 0, "fail-closed all the same: {v:#?}");
    let warn = of(&v, "claude-code", "warn");
    assert!(
        warn[0]["message"]
            .as_str()
            .unwrap()
            .contains("holds an escalated call up to 120 s"),
        "{v:#?}"
    );
    assert!(
        warn[0]["fix"].as_str().unwrap().contains("--policy"),
        "{v:#?}"
    );
}

#[test]
fn project_installs_need_what_the_runtime_needs_to_read_them() {
    let env = Env::new("project");
    env.install(&["gemini", "--project"]);
    env.install(&["codex", "--project"]);
    let (code, v) = env.doctor(&[], &[]);
    assert_eq!(code, 1, "{v:#?}");
    let gemini = env.project.join(".gemini/settings.json");
    let codex = env.project.join(".codex/hooks.json");
    let says = |rt: &str, file: &Path, text: &str| {
        of(&v, rt, "error").iter().any(|f| {
            f["file"] == file.to_str().unwrap() && f["message"].as_str().unwrap().contains(text)
        })
    };
    assert!(
        says("gemini", &gemini, "is not a trusted folder for Gemini"),
        "{v:#?}"
    );
    assert!(
        says("codex", &codex, "is not a project Codex trusts"),
        "{v:#?}"
    );

    env.trust_project_for_gemini();
    let config = env.home.join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains(&*codex.to_string_lossy()),
        "install trusts the project hook: {text}"
    );
    text.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        env.project.display()
    ));
    std::fs::write(&config, text).unwrap();
    let (code, v) = env.doctor(&["--project", env.project.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{v:#?}");
    assert_eq!(of(&v, "gemini", "ok").len(), 1, "{v:#?}");
    assert_eq!(of(&v, "codex", "ok").len(), 1, "{v:#?}");
}

#[test]
fn openclaw_loads_the_plugin_from_this_checkout() {
    let env = Env::new("openclaw");
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../integrations/openclaw");
    let plugin = plugin.canonicalize().unwrap();
    let token = env.root.join("agent.token");
    std::fs::write(&token, "t\n").unwrap();
    let config = env.root.join("openclaw.json");
    let body = format!(
        "{{\n  // toolgate\n  plugins: {{\n    load: {{ paths: ['{}'] }},\n    entries: {{\n      \
         toolgate: {{ enabled: true, hooks: {{ allowConversationAccess: true }},\n        \
         config: {{ url: 'http://127.0.0.1:7878', tokenFile: '{}' }} }},\n    }},\n  }},\n}}\n",
        plugin.display(),
        token.display()
    );
    std::fs::write(&config, &body).unwrap();
    let vars = [("OPENCLAW_CONFIG_PATH", config.to_str().unwrap())];
    let (code, v) = env.doctor(&["--runtime", "openclaw"], &vars);
    assert_eq!(code, 0, "{v:#?}");
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0]["level"], "ok", "{v:#?}");
    std::fs::write(&config, body.replace("enabled: true", "enabled: false")).unwrap();
    let (code, v) = env.doctor(&["--runtime", "openclaw"], &vars);
    assert_eq!(code, 1, "{v:#?}");
    assert!(
        v[0]["message"]
            .as_str()
            .unwrap()
            .contains("enabled is not true")
    );
}

/// `$PATH` with the directory of the toolgate binary under test first.
fn path_with_toolgate() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_toolgate"));
    let mut dirs = vec![bin.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// `toolgate uninstall codex` removes the trust entry `install` wrote in
/// Codex's config.toml, and nothing else of it: the user's own settings
/// and the trust of another hook stay.
#[test]
fn uninstalling_codex_removes_toolgates_trust_entry_only() {
    let env = Env::new("untrust");
    let config = env.home.join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let theirs =
        "model = \"o3\"\n\n[hooks.state.\"other:PreToolUse:0:0\"]\ntrusted_hash = \"abc\"\n";
    std::fs::write(&config, theirs).unwrap();
    env.install(&["codex"]);
    let installed = std::fs::read_to_string(&config).unwrap();
    let ours = installed.matches("trusted_hash").count();
    assert!(ours >= 2, "install adds its trust entry: {installed}");
    let out = env.run(&["uninstall", "codex"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("trust entr"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let after = std::fs::read_to_string(&config).unwrap();
    assert_eq!(after, theirs, "only toolgate's entry is gone");
    // Uninstalling again finds nothing of toolgate's and changes nothing.
    let again = env.run(&["uninstall", "codex"], &[]);
    assert!(again.status.success());
    assert_eq!(std::fs::read_to_string(&config).unwrap(), theirs);
}
