use super::*;
use std::cell::Cell;
use toolgate_core::{ToolCall, Verdict};

const PROFILE: &str =
    "---\nversion: 1\nprovider: {name: A}\nscope:\n  permitted_actions: [read]\n---\n# Scoped\n";

/// A scratch directory, and a `LoadEnv` whose working directory it is and
/// whose posture reads are counted.
struct Scene {
    dir: tempfile::TempDir,
    posture_reads: Cell<usize>,
}

impl Scene {
    fn new() -> Scene {
        Scene {
            dir: tempfile::tempdir().unwrap(),
            posture_reads: Cell::new(0),
        }
    }

    fn write(&self, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn load<T>(&self, f: impl FnOnce(&LoadEnv) -> T) -> T {
        let posture = || {
            self.posture_reads.set(self.posture_reads.get() + 1);
            toolgate_core::detect(&Default::default())
        };
        f(&LoadEnv {
            home: "/home/dev".into(),
            cwd: self.dir.path().to_path_buf(),
            posture: &posture,
        })
    }
}

fn call(command: &str) -> ToolCall {
    let mut params = serde_json::Map::new();
    params.insert("command".into(), command.into());
    ToolCall {
        tool: "exec".into(),
        params,
        cwd: Some("/home/dev/proj".into()),
        ..ToolCall::default()
    }
}

#[test]
fn the_builtin_default_names_no_file_and_decides() {
    let bundle = builtin().unwrap();
    assert_eq!(bundle.origin(), DEFAULT_POLICY_ORIGIN);
    assert!(bundle.sources().is_empty());
    assert!(bundle.profile().is_none() && bundle.protected_files().is_empty());
    let env = Env::new("/home/dev", "/home/dev/proj");
    let decided = bundle.engine().decide(&call("rm -rf /"), &env).decision;
    assert_eq!(decided.decision, Verdict::Block);
}

#[test]
fn no_path_loads_the_builtin_default() {
    let scene = Scene::new();
    let bundle = scene.load(|env| load(None, env)).unwrap();
    assert_eq!(bundle.origin(), DEFAULT_POLICY_ORIGIN);
    assert_eq!(scene.posture_reads.get(), 0);
}

/// The embedded default policy skips its [[test]] cases at start-up;
/// this is where they run, against the engine a deciding process builds.
#[test]
fn the_embedded_default_policy_passes_its_own_tests() {
    let engine = builtin().unwrap().into_engine();
    assert!(
        engine.policy().tests().is_empty(),
        "the deciding form has no tests"
    );
    let whole = Policy::from_toml_str(DEFAULT_POLICY_TEXT, DEFAULT_POLICY_ORIGIN).unwrap();
    assert!(whole.tests().len() >= 5, "{} tests", whole.tests().len());
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let cwd = std::env::current_dir().unwrap();
    let env = Env::new(home, cwd.to_string_lossy().into_owned());
    for t in whole.tests() {
        let decision = engine.decide(&t.call, &env).decision;
        assert!(
            t.expect.accepts(decision.decision),
            "{:?}: expected {}, got {} ({})",
            t.name,
            t.expect.as_str(),
            decision.decision,
            decision.reason
        );
    }
}

/// The deciding form is the shipped file, line for line: what is left
/// of each line is unchanged, so a location it reports is the file's.
#[test]
fn the_deciding_form_keeps_every_line_of_the_default_policy() {
    let whole: Vec<&str> = DEFAULT_POLICY_TEXT.lines().collect();
    let kept: Vec<&str> = DEFAULT_POLICY_FOR_DECIDING.lines().collect();
    assert_eq!(whole.len(), kept.len());
    let mut blanked = 0;
    for (w, k) in whole.iter().zip(&kept) {
        if k.is_empty() {
            blanked += usize::from(!w.is_empty());
        } else {
            assert_eq!(w, k);
        }
    }
    assert!(blanked * 2 > whole.len(), "only {blanked} lines blanked");
    assert!(!DEFAULT_POLICY_FOR_DECIDING.contains("[[test]]"));
}

#[test]
fn a_policy_without_a_profile_names_only_itself_and_reads_no_posture() {
    let scene = Scene::new();
    scene.write("p.toml", "[rules]\n");
    let bundle = scene
        .load(|env| load(Some(Path::new("p.toml")), env))
        .unwrap();
    assert_eq!(bundle.sources(), [scene.dir.path().join("p.toml")]);
    assert!(bundle.profile().is_none() && bundle.protected_files().is_empty());
    assert_eq!(scene.posture_reads.get(), 0);
}

#[test]
fn a_profile_is_read_beside_the_policy_protected_and_named_as_a_source() {
    let scene = Scene::new();
    std::fs::create_dir(scene.dir.path().join("conf")).unwrap();
    scene.write("conf/p.toml", "profile = \"scope.profile.md\"\n");
    scene.write("conf/scope.profile.md", PROFILE);
    let bundle = scene
        .load(|env| load(Some(Path::new("conf/p.toml")), env))
        .unwrap();
    let conf = scene.dir.path().join("conf");
    assert_eq!(
        bundle.sources(),
        [conf.join("p.toml"), conf.join("scope.profile.md")]
    );
    assert!(bundle.profile().is_some());
    let protected = bundle.protected_files();
    for file in ["p.toml", "scope.profile.md"] {
        let real = std::fs::canonicalize(conf.join(file)).unwrap();
        assert!(
            protected.contains(&real.display().to_string()),
            "{file} not in {protected:?}"
        );
    }
    assert_eq!(scene.posture_reads.get(), 1, "the posture is read once");
}

#[test]
fn a_failing_test_case_refuses_the_policy_but_not_an_untested_load() {
    let scene = Scene::new();
    let policy = scene.write(
        "p.toml",
        "[[test]]\nname = \"wrong on purpose\"\ncall = { tool = \"exec\", params = { command = \"rm -rf /\" } }\nexpect = \"allow\"\n",
    );
    let err = scene.load(|env| load(Some(&policy), env)).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, BundleError::TestFailed { failing: 1, .. }),
        "{text}"
    );
    assert!(
        text.contains("wrong on purpose") && text.contains("toolgate policy test"),
        "{text}"
    );
    let untested = scene.load(|env| load_untested(&policy, env)).unwrap();
    assert_eq!(untested.policy().tests().len(), 1);
}

#[test]
fn each_way_of_failing_says_which_file_and_what_to_do() {
    let scene = Scene::new();
    let missing = scene.dir.path().join("absent.toml");
    let err = scene.load(|env| load(Some(&missing), env)).unwrap_err();
    assert!(matches!(err, BundleError::Read { .. }));
    assert!(err.to_string().contains("absent.toml") && err.to_string().contains("check the path"));

    let bad = scene.write("bad.toml", "[[rule]]\nwhen = 3\n");
    let err = scene.load(|env| load(Some(&bad), env)).unwrap_err();
    assert!(matches!(err, BundleError::Policy(_)), "{err}");
    assert!(err.to_string().contains("bad.toml:"), "{err}");

    let orphan = scene.write("orphan.toml", "profile = \"gone.md\"\n");
    let err = scene.load(|env| load(Some(&orphan), env)).unwrap_err();
    assert!(matches!(err, BundleError::ProfileRead { .. }), "{err}");
    assert!(err.to_string().contains("gone.md"), "{err}");

    scene.write("binary.md", [0xffu8, 0xfe, 0x00]);
    let odd = scene.write("odd.toml", "profile = \"binary.md\"\n");
    let err = scene.load(|env| load(Some(&odd), env)).unwrap_err();
    assert!(matches!(err, BundleError::ProfileNotUtf8 { .. }), "{err}");

    scene.write("empty.md", "no front matter\n");
    let unparsed = scene.write("unparsed.toml", "profile = \"empty.md\"\n");
    let err = scene.load(|env| load(Some(&unparsed), env)).unwrap_err();
    assert!(matches!(err, BundleError::Profile(_)), "{err}");

    let model = scene.write(
        "model.toml",
        "[approvals.model]\nbase_url = \"not a url\"\nmodel = \"m\"\n",
    );
    let err = scene.load(|env| load(Some(&model), env)).unwrap_err();
    assert!(matches!(err, BundleError::ModelStage { .. }), "{err}");
    assert!(
        err.to_string().contains("[approvals.model] (line 1)"),
        "{err}"
    );
}

#[test]
fn read_policy_gives_the_settings_with_the_profile_attached() {
    let scene = Scene::new();
    scene.write("scope.profile.md", PROFILE);
    let path = scene.write(
        "p.toml",
        "profile = \"scope.profile.md\"\n[hooks]\nhold = \"7s\"\n",
    );
    let policy = scene.load(|env| read_policy(&path, env)).unwrap();
    assert!(policy.profile().is_some());
    assert_eq!(policy.hooks().hold, std::time::Duration::from_secs(7));
    assert_eq!(scene.posture_reads.get(), 0, "no engine, no posture");
}

/// A file of nothing but blanks and comments would mean the built-in
/// default without saying so: refused, naming the way to that on purpose.
#[test]
fn an_empty_policy_file_is_refused() {
    let scene = Scene::new();
    for text in [
        "",
        "\n  \n",
        "# all gone\n\n   # really\n",
        "\u{feff}# bom\n",
    ] {
        scene.write("p.toml", text);
        let e = scene
            .load(|env| load(Some(Path::new("p.toml")), env))
            .unwrap_err();
        let m = e.to_string();
        assert!(
            matches!(e, BundleError::Empty { .. }) && m.contains("remove --policy"),
            "{text:?}: {m}"
        );
    }
    // One real line is a policy.
    scene.write("p.toml", "# mine\n[rules]\ndeny = [\"exec(rm -rf /)\"]\n");
    assert!(
        scene
            .load(|env| load(Some(Path::new("p.toml")), env))
            .is_ok()
    );
}

/// The guard: a policy in the working directory is refused for a hook and
/// a daemon alike; off or allowed, the same file loads.
#[test]
fn a_guarded_load_refuses_a_policy_in_the_workspace() {
    let scene = Scene::new();
    scene.write("p.toml", "[rules]\n");
    for writers in [Writers::ThisUser, Writers::AnyButRoot] {
        let e = scene
            .load(|env| load_guarded(Some(Path::new("p.toml")), env, PolicyGuard::Refuse(writers)))
            .unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, BundleError::AgentWritable { .. }), "{m}");
        assert!(
            m.contains("working directory") && m.contains("--allow-writable-policy"),
            "{m}"
        );
        let e = scene
            .load(|env| read_policy_guarded(Path::new("p.toml"), env, PolicyGuard::Refuse(writers)))
            .unwrap_err();
        assert!(matches!(e, BundleError::AgentWritable { .. }));
    }
    for guard in [PolicyGuard::Off, PolicyGuard::Allowed] {
        assert!(
            scene
                .load(|env| load_guarded(Some(Path::new("p.toml")), env, guard))
                .is_ok()
        );
    }
    // The built-in default has no file to guard.
    assert!(
        scene
            .load(|env| load_guarded(None, env, PolicyGuard::Refuse(Writers::ThisUser)))
            .is_ok()
    );
}

/// The scope profile a policy loads is guarded like the policy: a root-
/// owned, write-protected policy naming a profile others may write is
/// refused.
#[test]
fn the_profile_a_policy_names_is_guarded_too() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let root = std::fs::metadata("/proc/self").map(|m| m.uid()).ok() == Some(0);
    let scene = Scene::new();
    let etc = scene.dir.path().join("etc");
    std::fs::create_dir(&etc).unwrap();
    std::fs::write(etc.join("p.toml"), "profile = \"prof.md\"\n").unwrap();
    std::fs::write(etc.join("prof.md"), PROFILE).unwrap();
    let set =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    set(scene.dir.path(), 0o755);
    set(&etc, 0o755);
    set(&etc.join("p.toml"), 0o644);
    set(&etc.join("prof.md"), 0o666);
    let policy = etc.join("p.toml");
    let guard = PolicyGuard::Refuse(Writers::AnyButRoot);
    let env = |f: &dyn Fn(&LoadEnv) -> Result<Bundle, BundleError>| {
        let posture = || toolgate_core::detect(&Default::default());
        f(&LoadEnv {
            home: "/home/dev".into(),
            cwd: "/".into(),
            posture: &posture,
        })
    };
    let e = env(&|e| load_guarded(Some(&policy), e, guard)).unwrap_err();
    if root {
        assert!(e.to_string().contains("prof.md"), "{e}");
    }
    set(&etc.join("prof.md"), 0o644);
    let owned_by_root = std::fs::metadata(&etc).unwrap().uid() == 0;
    assert_eq!(
        env(&|e| load_guarded(Some(&policy), e, guard)).is_ok(),
        root && owned_by_root
    );
}

/// Every file a policy was read from joins the protected set, whatever its
/// name or place: writing it is blocked, reading it is not.
#[test]
fn the_files_a_policy_was_read_from_are_protected() {
    let scene = Scene::new();
    let policy = scene.write("my-rules.toml", "[risk]\nescalation_threshold = 36\n");
    let bundle = scene
        .load(|env| load(Some(Path::new("my-rules.toml")), env))
        .unwrap();
    let p = policy.to_string_lossy().into_owned();
    assert!(bundle.engine().protected().files().contains(&p), "{p}");
    let env = Env::new("/home/dev", "/home/dev/proj");
    let engine = bundle.engine();
    let write = engine
        .decide(&call(&format!("echo x > {p}")), &env)
        .decision;
    assert_eq!(write.decision, Verdict::Block, "{}", write.reason);
    let read = engine.decide(&call(&format!("cat {p}")), &env).decision;
    assert_eq!(read.decision, Verdict::Allow, "{}", read.reason);
}
