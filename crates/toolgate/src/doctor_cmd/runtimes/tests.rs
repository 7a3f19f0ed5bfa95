//! Switches, trust and environment, per runtime, against real files.

use super::*;
use crate::doctor_cmd::hooks::Scope;
use crate::doctor_cmd::hooks::tests::{Fixture, edit, first_entry, has, run, write_json};
use serde_json::json;

#[test]
fn codex_runs_only_hooks_whose_trust_matches() {
    let fx = Fixture::new("codex-trust");
    let ctx = fx.ctx(&[]);
    // Fixture::install trusts through codex_trust_cmd::wanted, and fails
    // loudly when that computes no trust entry for an installed hook.
    let hooks = fx.install(Runtime::Codex, Scope::User, "", 10);
    let v = run(Runtime::Codex, &ctx);
    assert_eq!(v[0].level, Level::Ok, "{v:#?}");
    let config = fx.home.join(".codex/config.toml");
    assert!(
        v[0].message
            .contains(&format!("trusted in {}", config.display()))
    );

    // Edited after it was trusted: Codex drops the trust.
    edit(&hooks, |s| {
        first_entry(s, "PreToolUse")["timeout"] = json!(30);
    });
    let v = run(Runtime::Codex, &ctx);
    assert!(
        has(&v, Level::Error, "was edited after Codex trusted it")
            && has(&v, Level::Error, "toolgate install codex"),
        "{v:#?}"
    );
    // Trusted again: fine.
    fx.trust(&hooks);
    assert_eq!(run(Runtime::Codex, &ctx)[0].level, Level::Ok);
    // No trust entry at all.
    std::fs::write(&config, "model = \"x\"\n").unwrap();
    let v = run(Runtime::Codex, &ctx);
    assert!(
        has(&v, Level::Error, "Codex has no trust entry for the hook"),
        "{v:#?}"
    );
    assert!(
        has(&v, Level::Error, "skips the hook without a word"),
        "{v:#?}"
    );
    // A config.toml Codex cannot read.
    std::fs::write(&config, "[hooks\n").unwrap();
    let v = run(Runtime::Codex, &ctx);
    assert!(has(&v, Level::Error, "not valid TOML"), "{v:#?}");
}

#[test]
fn a_codex_project_hook_needs_a_trusted_project() {
    let fx = Fixture::new("codex-project");
    let ctx = fx.ctx(&[]);
    let hooks = fx.install(Runtime::Codex, Scope::Project, "", 10);
    let v = run(Runtime::Codex, &ctx);
    assert!(
        has(&v, Level::Error, "is not a project Codex trusts"),
        "{v:#?}"
    );
    let config = fx.home.join(".codex/config.toml");
    let trusted = std::fs::read_to_string(&config).unwrap();
    let parent = fx.project.parent().unwrap().display().to_string();
    std::fs::write(
        &config,
        format!("{trusted}\n[projects.\"{parent}\"]\ntrust_level = \"trusted\"\n"),
    )
    .unwrap();
    let v = run(Runtime::Codex, &ctx);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0].level, Level::Ok, "{v:#?}");
    assert!(v[0].message.contains("Codex trusts the project"), "{v:#?}");
    // The most specific entry wins.
    std::fs::write(
        &config,
        format!(
            "{trusted}\n[projects.\"{parent}\"]\ntrust_level = \"trusted\"\n\
             [projects.\"{}\"]\ntrust_level = \"untrusted\"\n",
            fx.project.display()
        ),
    )
    .unwrap();
    let v = run(Runtime::Codex, &ctx);
    assert!(has(&v, Level::Error, "as \"untrusted\""), "{v:#?}");
    assert!(
        v.iter()
            .all(|f| f.file.as_deref() == Some(&*hooks.to_string_lossy())),
        "{v:#?}"
    );
}

#[test]
fn gemini_trust_follows_the_environment_then_the_most_specific_rule() {
    let fx = Fixture::new("gemini-trust");
    let tf = fx.home.join(".gemini/trustedFolders.json");
    let project = fx.project.display().to_string();
    let parent = fx.project.parent().unwrap().display().to_string();
    let trust = |extra: &[(&str, &str)]| gemini_trust(&fx.ctx(extra));
    assert!(matches!(trust(&[]), Trust::Undecided(_)));
    write_json(&tf, &json!({ (parent.clone()): "TRUST_FOLDER" }));
    assert!(matches!(trust(&[]), Trust::Trusted(_)));
    write_json(
        &tf,
        &json!({ (parent.clone()): "TRUST_FOLDER", (project.clone()): "DO_NOT_TRUST" }),
    );
    assert!(matches!(trust(&[]), Trust::Untrusted(_)));
    assert!(matches!(
        trust(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]),
        Trust::Trusted(_)
    ));
    // TRUST_PARENT on a sibling trusts the parent's tree.
    write_json(
        &tf,
        &json!({ (format!("{parent}/sibling")): "TRUST_PARENT" }),
    );
    assert!(matches!(trust(&[]), Trust::Trusted(_)));
    assert!(matches!(
        trust(&[("GEMINI_CLI_TRUST_WORKSPACE", "false")]),
        Trust::Untrusted(_)
    ));
    assert!(matches!(
        trust(&[("GEMINI_RESTRICTED_MODE", "true")]),
        Trust::Untrusted(_)
    ));
    std::fs::write(&tf, "{oops").unwrap();
    assert!(matches!(trust(&[]), Trust::Broken(_)));
    // Folder trust switched off in the user's settings trusts everything.
    write_json(
        &fx.home.join(".gemini/settings.json"),
        &json!({"security": {"folderTrust": {"enabled": false}}}),
    );
    assert!(matches!(trust(&[]), Trust::Trusted(_)));
}

#[test]
fn gemini_project_hooks_need_a_trusted_folder_and_user_hooks_warn() {
    let fx = Fixture::new("gemini-folder");
    let ctx = fx.ctx(&[]);
    fx.install(Runtime::Gemini, Scope::Project, "", 10);
    let v = run(Runtime::Gemini, &ctx);
    assert!(
        has(&v, Level::Error, "is not a trusted folder for Gemini"),
        "{v:#?}"
    );
    assert!(has(&v, Level::Error, "TRUST_FOLDER"), "{v:#?}");
    let v = run(
        Runtime::Gemini,
        &fx.ctx(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]),
    );
    assert_eq!(v[0].level, Level::Ok, "{v:#?}");
    assert!(v[0].message.contains("Gemini trusts"), "{v:#?}");

    let fx = Fixture::new("gemini-folder-user");
    fx.install(Runtime::Gemini, Scope::User, "", 10);
    let v = run(Runtime::Gemini, &fx.ctx(&[]));
    assert!(has(&v, Level::Warn, "not even the user's"), "{v:#?}");
    assert!(!v.iter().any(|f| f.level == Level::Error), "{v:#?}");
}

#[test]
fn gemini_settings_only_in_the_environment_are_reported() {
    let fx = Fixture::new("gemini-env");
    fx.install_as(Runtime::Gemini, Scope::User, " --data-dir /d", 10, false);
    let trusted = ("GEMINI_CLI_TRUST_WORKSPACE", "true");
    let policy = fx.root.join("p.toml");
    std::fs::write(&policy, "").unwrap();
    let p = policy.to_str().unwrap();
    let v = run(
        Runtime::Gemini,
        &fx.ctx(&[trusted, ("TOOLGATE_POLICY", p), ("TOOLGATE_DATA_DIR", "/d")]),
    );
    assert!(
        has(&v, Level::Warn, "TOOLGATE_POLICY is set here"),
        "{v:#?}"
    );
    assert!(!has(&v, Level::Warn, "TOOLGATE_DATA_DIR"), "{v:#?}");
    assert!(!v.iter().any(|f| f.level == Level::Error), "{v:#?}");
    let v = run(
        Runtime::Gemini,
        &fx.ctx(&[
            trusted,
            ("TOOLGATE_URL", "http://h:1"),
            ("GITHUB_SHA", "abc"),
        ]),
    );
    assert!(has(&v, Level::Error, "GITHUB_SHA is set"), "{v:#?}");
    assert!(
        has(&v, Level::Error, "instead of asking the daemon"),
        "{v:#?}"
    );
}

#[test]
fn switches_that_turn_every_hook_off_are_errors() {
    let fx = Fixture::new("switches");
    let ctx = fx.ctx(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    // Claude Code: the project's local settings turn hooks off.
    fx.install(Runtime::ClaudeCode, Scope::User, "", 10);
    let local = fx.project.join(".claude/settings.local.json");
    write_json(&local, &json!({"disableAllHooks": true}));
    let v = run(Runtime::ClaudeCode, &ctx);
    let off = v
        .iter()
        .find(|f| f.message.contains("disableAllHooks"))
        .unwrap();
    assert_eq!(off.level, Level::Error);
    assert_eq!(off.file.as_deref(), Some(&*local.to_string_lossy()));
    // …unless a higher-precedence file turns them back on.
    let mut managed_ctx = fx.ctx(&[]);
    managed_ctx.claude_managed = fx.root.join("managed-settings.json");
    write_json(
        &managed_ctx.claude_managed,
        &json!({"disableAllHooks": false, "allowManagedHooksOnly": true}),
    );
    let v = run(Runtime::ClaudeCode, &managed_ctx);
    assert!(!has(&v, Level::Error, "disableAllHooks"), "{v:#?}");
    assert!(has(&v, Level::Error, "allowManagedHooksOnly"), "{v:#?}");

    // Gemini: hooks off in the (trusted) project; toolgate's hook disabled by name.
    let user = fx.install(Runtime::Gemini, Scope::User, "", 10);
    let command = crate::doctor_cmd::hooks::tests::read_json(&user).unwrap()["hooks"]["BeforeTool"]
        [0]["hooks"][0]["command"]
        .clone();
    write_json(
        &fx.project.join(".gemini/settings.json"),
        &json!({"hooksConfig": {"enabled": false, "disabled": [command]}}),
    );
    let v = run(Runtime::Gemini, &ctx);
    assert!(
        has(&v, Level::Error, "Gemini CLI runs no hooks at all"),
        "{v:#?}"
    );
    assert!(has(&v, Level::Error, "lists toolgate's hook"), "{v:#?}");
    // An untrusted project's settings are not read, so they switch nothing off.
    let v = run(Runtime::Gemini, &fx.ctx(&[]));
    assert!(!has(&v, Level::Error, "runs no hooks at all"), "{v:#?}");
}

#[test]
fn system_level_hooks_outlast_project_switches_except_gemini_disabled() {
    use crate::setup_cmd::system_file;
    let fx = Fixture::new("system");
    let sys = fx.root.join("sys");
    let mut ctx = fx.ctx(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]);
    ctx.system_root = sys.clone();
    ctx.claude_managed = system_file(Runtime::ClaudeCode, &sys);
    let pinned = |r: Runtime| {
        format!(
            "{} hook {r} --timeout 10 --policy builtin --url unix:/run/toolgate/toolgate.sock \
             --daemon-uid 998 --store none",
            fx.exe.display()
        )
    };
    let put = |r: Runtime| {
        let spec = r.spec();
        let file = system_file(r, &sys);
        let mut v = json!({});
        spec.install
            .add(
                spec.name,
                &mut v,
                spec.install
                    .entry(&pinned(r), std::time::Duration::from_secs(10)),
            )
            .unwrap();
        write_json(&file, &v);
        file
    };
    // Claude Code: the project's disableAllHooks leaves the managed hook on.
    let managed = put(Runtime::ClaudeCode);
    write_json(
        &fx.project.join(".claude/settings.local.json"),
        &json!({"disableAllHooks": true}),
    );
    let v = run(Runtime::ClaudeCode, &ctx);
    assert!(!has(&v, Level::Error, "disableAllHooks"), "{v:#?}");
    assert!(
        has(
            &v,
            Level::Warn,
            "toolgate's hook in the managed settings still runs"
        ),
        "{v:#?}"
    );
    assert!(
        v.iter().any(|f| f.level == Level::Ok
            && f.file.as_deref() == Some(&*managed.to_string_lossy())),
        "{v:#?}"
    );
    // Codex: inline in the system requirements, no trust entry needed.
    let req = system_file(Runtime::Codex, &sys);
    std::fs::create_dir_all(req.parent().unwrap()).unwrap();
    std::fs::write(
        &req,
        format!(
            "[features]\nhooks = true\n\n[[hooks.PreToolUse]]\nmatcher = \"*\"\n\
             [[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"{}\"\ntimeout = 10\n",
            pinned(Runtime::Codex)
        ),
    )
    .unwrap();
    let v = run(Runtime::Codex, &ctx);
    assert!(
        v.iter()
            .any(|f| f.level == Level::Ok && f.message.contains("no trust entry")),
        "{v:#?}"
    );
    // Gemini: a `disabled` entry naming toolgate anywhere switches the
    // system hook off: an error where it is read, a warning in a folder
    // Gemini does not trust yet, an error in the system defaults.
    put(Runtime::Gemini);
    write_json(
        &fx.project.join(".gemini/settings.json"),
        &json!({"hooksConfig": {"disabled": [pinned(Runtime::Gemini)]}}),
    );
    let v = run(Runtime::Gemini, &ctx);
    assert!(has(&v, Level::Error, "lists toolgate's hook"), "{v:#?}");
    let untrusted = {
        let mut c = fx.ctx(&[("GEMINI_CLI_TRUST_WORKSPACE", "false")]);
        c.system_root = sys.clone();
        c
    };
    let v = run(Runtime::Gemini, &untrusted);
    assert!(
        has(&v, Level::Warn, "as soon as this folder is trusted"),
        "{v:#?}"
    );
    std::fs::remove_file(fx.project.join(".gemini/settings.json")).unwrap();
    write_json(
        &sys.join("etc/gemini-cli/system-defaults.json"),
        &json!({"hooksConfig": {"disabled": ["/usr/local/bin/toolgate hook gemini"]}}),
    );
    let v = run(Runtime::Gemini, &ctx);
    assert!(has(&v, Level::Error, "system-defaults.json"), "{v:#?}");
}
