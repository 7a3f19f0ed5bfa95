//! `toolgate doctor` as a process: nothing installed is no error; every
//! runtime installed by `toolgate install` is fail-closed; each way an entry
//! can stop being fail-closed is reported with its fix and exit 1.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn toolgate(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("TOOLGATE_POLICY")
        .env_remove("TOOLGATE_DATA_DIR")
        .env_remove("TOOLGATE_URL")
        .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
        .output()
        .unwrap()
}

fn temp(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tg-doctor-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn doctor(home: &Path, project: &Path) -> (i32, Vec<Value>) {
    let out = toolgate(
        home,
        &["doctor", "--json", "--project", project.to_str().unwrap()],
    );
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).expect("doctor --json prints an array");
    (out.status.code().unwrap_or(-1), v)
}

fn edit(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, v.to_string()).unwrap();
}

#[test]
fn installed_hooks_are_fail_closed_and_every_breakage_is_reported() {
    let home = temp("home");
    let project = temp("project");
    let (code, v) = doctor(&home, &project);
    assert_eq!(code, 0, "nothing installed is not an error: {v:?}");
    assert!(v.iter().all(|f| f["level"] == "info"), "{v:?}");
    for r in ["claude-code", "codex", "gemini", "cursor"] {
        let out = toolgate(&home, &["install", r]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (code, v) = doctor(&home, &project);
    assert_eq!(code, 0, "{v:#?}");
    assert_eq!(v.iter().filter(|f| f["level"] == "ok").count(), 4, "{v:#?}");

    edit(&home.join(".claude/settings.json"), |s| {
        s["hooks"]["PreToolUse"][0]["hooks"][0]
            .as_object_mut()
            .unwrap()
            .remove("onFailure");
    });
    edit(&home.join(".codex/hooks.json"), |s| {
        s["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 30.into();
    });
    edit(&home.join(".gemini/settings.json"), |s| {
        s["hooks"]["BeforeTool"][0]["matcher"] = "run_shell_command".into();
    });
    edit(&home.join(".cursor/hooks.json"), |s| {
        s["hooks"].as_object_mut().unwrap().remove("preToolUse");
    });
    let (code, v) = doctor(&home, &project);
    assert_eq!(code, 1, "{v:#?}");
    let errors: Vec<(String, String)> = v
        .iter()
        .filter(|f| f["level"] == "error")
        .map(|f| {
            (
                f["runtime"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let has = |rt: &str, text: &str| errors.iter().any(|(r, m)| r == rt && m.contains(text));
    assert!(has("claude-code", "onFailure"), "{errors:#?}");
    assert!(has("codex", "changed since it was trusted"), "{errors:#?}");
    assert!(has("gemini", "selects only some tools"), "{errors:#?}");
    assert!(
        has("cursor", "no toolgate entry for preToolUse"),
        "{errors:#?}"
    );
    assert!(
        v.iter()
            .filter(|f| f["level"] == "error")
            .all(|f| f["fix"].is_string())
    );

    // An untrusted Codex hook (the trust entry gone) is an error too.
    std::fs::write(home.join(".codex/config.toml"), "").unwrap();
    let (_, v) = doctor(&home, &project);
    assert!(
        v.iter().any(|f| f["runtime"] == "codex"
            && f["message"].as_str().unwrap().contains("does not trust")),
        "{v:#?}"
    );
    // Reinstalling fixes everything.
    for r in ["claude-code", "codex", "gemini", "cursor"] {
        assert!(toolgate(&home, &["install", r]).status.success());
    }
    let (code, v) = doctor(&home, &project);
    assert_eq!(code, 0, "{v:#?}");
}

#[test]
fn an_untrusted_gemini_project_and_a_moved_binary_are_errors() {
    let home = temp("home2");
    let project = temp("project2");
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["install", "gemini", "--project"])
        .current_dir(&project)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, v) = doctor(&home, &project);
    assert_eq!(code, 1);
    assert!(
        v.iter().any(|f| f["message"]
            .as_str()
            .unwrap()
            .contains("not a trusted folder")),
        "{v:#?}"
    );
    edit(&project.join(".gemini/settings.json"), |s| {
        s["hooks"]["BeforeTool"][0]["hooks"][0]["command"] =
            "/nonexistent/toolgate hook gemini --timeout 10".into();
    });
    let (_, v) = doctor(&home, &project);
    assert!(
        v.iter().any(|f| f["message"]
            .as_str()
            .unwrap()
            .contains("not an executable file")),
        "{v:#?}"
    );
}
