//! OpenClaw's config (JSON5) and the plugin folder, against real files.

use super::*;
use crate::doctor_cmd::hooks::tests::{Fixture, at, has};

/// A plugin folder shaped like integrations/openclaw (manifest, package.json,
/// the built entry point), and a token file.
fn plugin(fx: &Fixture) -> (PathBuf, PathBuf) {
    let dir = fx.root.join("plugin");
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    std::fs::write(
        dir.join("openclaw.plugin.json"),
        r#"{"id": "toolgate", "configSchema": {"type": "object", "properties":
            {"url": {}, "token": {}, "tokenFile": {}, "timeoutMs": {}, "wait": {},
             "approveTool": {}, "ackTool": {}, "protocol": {}, "nativeApproval": {}}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("package.json"),
        r#"{"type": "module", "openclaw": {"extensions": ["./dist/index.js"]}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("dist/index.js"), "export default {};\n").unwrap();
    let token = fx.root.join("agent.token");
    std::fs::write(&token, "tok\n").unwrap();
    (dir, token)
}

/// The README's config with `plugins` replaced by `extra` edits.
fn config(fx: &Fixture, body: &str) -> PathBuf {
    let path = fx.home.join(".openclaw/openclaw.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, body).unwrap();
    path
}

fn good(dir: &Path, token: &Path) -> String {
    format!(
        "// OpenClaw\n{{\n  plugins: {{\n    load: {{ paths: ['{}'] }},\n    entries: {{\n      \
         toolgate: {{\n        enabled: true,\n        hooks: {{ allowConversationAccess: true \
         }},\n        config: {{ url: 'http://127.0.0.1:7878', tokenFile: '{}', }},\n      \
         }},\n    }},\n  }},\n}}\n",
        dir.display(),
        token.display()
    )
}

#[test]
fn not_installed_unless_configured_and_asked() {
    let fx = Fixture::new("openclaw-none");
    let ctx = fx.ctx(&[]);
    let v = check(&ctx, false);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].level, Level::Warn);
    assert!(v[0].message.contains("not installed"), "{v:#?}");
    assert!(v[0].fix.as_deref().unwrap().contains("plugins.load.paths"));
    assert_eq!(check(&ctx, true)[0].level, Level::Error);
    config(&fx, "{ agents: {} }");
    assert!(check(&ctx, false)[0].message.contains("not installed"));
}

#[test]
fn a_loaded_and_enabled_plugin_is_ok() {
    let fx = Fixture::new("openclaw-ok");
    let (dir, token) = plugin(&fx);
    let path = config(&fx, &good(&dir, &token));
    let v = check(&fx.ctx(&[]), false);
    assert_eq!(v.len(), 1, "{v:#?}");
    assert_eq!(v[0].level, Level::Ok, "{v:#?}");
    assert_eq!(v[0].file.as_deref(), Some(&*path.to_string_lossy()));
    assert!(v[0].message.contains(&*dir.to_string_lossy()), "{v:#?}");
    // OPENCLAW_CONFIG_PATH moves the config.
    let moved = fx.root.join("elsewhere.json5");
    std::fs::rename(&path, &moved).unwrap();
    assert!(
        check(&fx.ctx(&[]), false)[0]
            .message
            .contains("not installed")
    );
    let v = check(
        &fx.ctx(&[("OPENCLAW_CONFIG_PATH", moved.to_str().unwrap())]),
        false,
    );
    assert_eq!(v[0].level, Level::Ok, "{v:#?}");
}

#[test]
fn every_way_the_plugin_is_not_loaded_or_cannot_work_is_an_error() {
    let fx = Fixture::new("openclaw-bad");
    let (dir, token) = plugin(&fx);
    let ctx = fx.ctx(&[]);
    let base = good(&dir, &token);
    let cases: Vec<(String, &str)> = vec![
        (
            base.replace("plugins: {", "plugins: { enabled: false,"),
            "OpenClaw loads no plugins",
        ),
        (
            base.replace("plugins: {", "plugins: { deny: ['toolgate'],"),
            "plugins.deny lists toolgate",
        ),
        (
            base.replace("plugins: {", "plugins: { allow: ['other'],"),
            "plugins.allow does not list toolgate",
        ),
        (
            base.replace("enabled: true", "enabled: false"),
            "enabled is not true",
        ),
        (
            base.replace(&*dir.to_string_lossy(), "/nonexistent/plugin"),
            "/nonexistent/plugin does not exist",
        ),
        (
            base.replace("http://127.0.0.1:7878", "ftp://x"),
            "is not http:// or https://",
        ),
        (
            base.replace("url:", "timeoutMs: 20000, url:"),
            "timeoutMs must be an integer from 100 to 14000",
        ),
        (
            base.replace("url:", "colour: 'red', url:"),
            "colour is not a setting",
        ),
        (
            base.replace(&*token.to_string_lossy(), "/nonexistent/token"),
            "tokenFile /nonexistent/token cannot be read",
        ),
        (
            base.replace("entries: {", "entries: {,"),
            "cannot be read as JSON5",
        ),
    ];
    for (body, want) in cases {
        config(&fx, &body);
        let v = check(&ctx, false);
        assert!(
            has(&v, Level::Error, want),
            "{want}: {:#?}",
            at(&v, Level::Error)
        );
        assert!(!v.iter().any(|f| f.level == Level::Ok), "{want}: {v:#?}");
    }
    // Not built.
    config(&fx, &base);
    std::fs::remove_file(dir.join("dist/index.js")).unwrap();
    let v = check(&ctx, false);
    assert!(has(&v, Level::Error, "is not built"), "{v:#?}");
    assert!(has(&v, Level::Error, "npm run build"), "{v:#?}");
}

#[test]
fn weaker_set_ups_are_warnings() {
    let fx = Fixture::new("openclaw-warn");
    let (dir, token) = plugin(&fx);
    let base = good(&dir, &token);
    config(
        &fx,
        &base.replace(
            "allowConversationAccess: true",
            "allowConversationAccess: false",
        ),
    );
    let v = check(&fx.ctx(&[]), false);
    assert!(has(&v, Level::Warn, "allowConversationAccess"), "{v:#?}");
    assert!(!v.iter().any(|f| f.level == Level::Error), "{v:#?}");
    // No token anywhere yet: the daemon has not written agent.token.
    let no_token = base.replace(&format!("tokenFile: '{}', ", token.display()), "");
    assert_ne!(no_token, base);
    config(&fx, &no_token);
    let v = check(&fx.ctx(&[]), false);
    assert!(has(&v, Level::Warn, "no agent token yet"), "{v:#?}");
    let v = check(&fx.ctx(&[("TOOLGATE_AGENT_TOKEN", "t")]), false);
    assert_eq!(v[0].level, Level::Ok, "{v:#?}");
}
