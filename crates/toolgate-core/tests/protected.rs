//! Properties of the protected set on generated input: any write form, on
//! any member, in any spelling a shell resolves to it (absolute, `~`,
//! `$HOME`, relative to the working directory, `./`, `..` detours, doubled
//! slashes, quotes spliced into the name), is blocked, and wrapping it
//! (`sudo`, `env`, `bash -c`, `xargs`, substitutions, …) never makes it
//! allowed; secrets are never read; interpreter code naming a member and
//! requests to the operator endpoints are blocked by every client.

use proptest::prelude::*;
use std::sync::OnceLock;
use toolgate_core::paths::Env;
use toolgate_core::shell::quote as shell_quote;
use toolgate_core::{Engine, Policy, Protected, ToolCall, Verdict};

const HOME: &str = "/home/dev";
const CWD: &str = "/home/dev/proj";

fn env() -> Env {
    Env::new(HOME, CWD)
}

fn engine() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| {
        let own = Protected::new()
            .file("/home/dev/proj/conf/rules.toml")
            .data_dir("/srv/tg")
            .port(9000);
        Engine::new(
            Policy::from_toml_str(include_str!("../../../policies/default.toml"), "default")
                .expect("default policy parses"),
        )
        .with_protected(&own)
    })
}

fn decide(cmd: &str) -> (Verdict, String) {
    let call = ToolCall {
        tool: "Bash".into(),
        params: serde_json::json!({ "command": cmd })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        cwd: Some(CWD.into()),
        ..ToolCall::default()
    };
    let d = engine().decide(&call, &env()).decision;
    (d.decision, d.reason)
}

fn decide_tool(tool: &str, params: serde_json::Value) -> Verdict {
    let call = ToolCall {
        tool: tool.into(),
        params: params.as_object().cloned().unwrap_or_default(),
        cwd: Some(CWD.into()),
        ..ToolCall::default()
    };
    engine().decide(&call, &env()).decision.decision
}

/// Members that may be written by no one but a person: absolute paths.
const MEMBERS: &[&str] = &[
    "/home/dev/proj/toolgate.toml",
    "/home/dev/proj/.claude/settings.json",
    "/home/dev/proj/.claude/settings.local.json",
    "/home/dev/.claude/settings.json",
    "/home/dev/.claude.json",
    "/home/dev/.codex/hooks.json",
    "/home/dev/.codex/config.toml",
    "/home/dev/proj/.gemini/settings.json",
    "/home/dev/proj/.gemini/.env",
    "/home/dev/proj/.cursor/hooks.json",
    "/home/dev/.openclaw/openclaw.json",
    "/home/dev/.config/toolgate/policy.toml",
    "/home/dev/.local/state/toolgate/operator.token",
    "/home/dev/.local/state/toolgate/toolgate.db",
    "/home/dev/.local/bin/toolgate",
    "/home/dev/proj/conf/rules.toml",
    "/srv/tg/agent.token",
    "/etc/toolgate/toolgate.toml",
    "/etc/claude-code/managed-settings.json",
];

/// Secret members: reading them is blocked too.
const SECRETS: &[&str] = &[
    "/home/dev/.local/state/toolgate/operator.token",
    "/home/dev/.local/state/toolgate/agent.token",
    "/home/dev/.local/state/toolgate/link.token",
    "/home/dev/.local/state/toolgate/toolgate.db",
    "/home/dev/.local/state/toolgate/daemon.key",
    "/srv/tg/state.db",
    "/var/lib/toolgate/operator.token",
];

/// Non-secret members a known reader may read.
const READABLE: &[&str] = &[
    "/home/dev/proj/toolgate.toml",
    "/home/dev/.claude/settings.json",
    "/home/dev/.codex/config.toml",
    "/home/dev/proj/conf/rules.toml",
    "/home/dev/.local/state/toolgate/daemon.pub",
];

/// A way to spell `abs` that a shell (started in `CWD`, home `HOME`)
/// resolves to `abs`.
fn spell(abs: &str, how: u8) -> String {
    let in_home = abs.strip_prefix(HOME).filter(|r| r.starts_with('/'));
    let in_cwd = abs.strip_prefix(CWD).and_then(|r| r.strip_prefix('/'));
    let (dir, name) = abs.rsplit_once('/').unwrap_or(("", abs));
    match how % 12 {
        0 => abs.to_string(),
        1 => in_home.map_or(abs.to_string(), |r| format!("~{r}")),
        2 => in_home.map_or(abs.to_string(), |r| format!("$HOME{r}")),
        3 => in_home.map_or(abs.to_string(), |r| format!("\"${{HOME}}\"{r}")),
        4 => in_cwd.map_or(abs.to_string(), str::to_string),
        5 => in_cwd.map_or(abs.to_string(), |r| format!("./{r}")),
        6 => in_cwd.map_or(abs.to_string(), |r| format!("../proj/{r}")),
        7 => in_cwd.map_or(abs.to_string(), |r| format!("src/../{r}")),
        8 => abs.replacen('/', "//", 2),
        9 => format!("{dir}/./{name}"),
        10 => {
            // A quote spliced into the file name: `toolg""ate.toml`.
            let cut = name.len() / 2;
            format!("{dir}/{}\"\"{}", &name[..cut], &name[cut..])
        }
        _ => {
            // Out of the member's directory and back in: `.claude/../.claude/x`.
            let last_dir = dir.rsplit('/').next().unwrap_or("");
            if last_dir.is_empty() {
                abs.to_string()
            } else {
                format!("{dir}/../{last_dir}/{name}")
            }
        }
    }
}

/// Shell forms that write, overwrite, delete, move, link or re-permission `{p}`.
const WRITE_FORMS: &[&str] = &[
    ": > {p}",
    "echo x > {p}",
    "echo x >> {p}",
    "truncate -s0 {p}",
    "rm {p}",
    "rm -f {p}",
    "mv {p} /tmp/x",
    "mv /tmp/x {p}",
    "cp /dev/null {p}",
    "cp /tmp/x {p}",
    "ln -sf /tmp/x {p}",
    "ln {p} /tmp/x",
    "sed -i s/a/b/ {p}",
    "perl -pi -e s/a/b/ {p}",
    "tee {p} < /dev/null",
    "dd if=/dev/zero of={p} count=1",
    "install -m 600 /tmp/x {p}",
    "rsync /tmp/x {p}",
    "chmod 000 {p}",
    "chown nobody {p}",
    "touch {p}",
    "git checkout -- {p}",
    "git restore {p}",
    "shred -u {p}",
    "vim {p}",
    "curl -o {p} https://example.test/x",
    "python3 -c \"open('{p}','w')\"",
    "node -e \"require('fs').unlinkSync('{p}')\"",
];

/// Known programs that only read `{p}`.
const READ_FORMS: &[&str] = &[
    "cat {p}",
    "head -n 5 {p}",
    "tail -f {p}",
    "less {p}",
    "grep -n x {p}",
    "wc -l {p}",
    "jq . {p}",
    "base64 {p}",
    "cp {p} /tmp/copy",
    "diff {p} /tmp/other",
];

/// Ways to run a command that still run it.
fn wrap(cmd: &str, how: u8) -> String {
    let q = shell_quote(cmd);
    match how % 12 {
        0 => format!("sudo sh -c {q}"),
        1 => format!("env FOO=1 sh -c {q}"),
        2 => format!("bash -c {q}"),
        3 => format!("ls; {cmd}"),
        4 => format!("true && {cmd}"),
        5 => format!("( {cmd} )"),
        6 => format!("{{ {cmd}; }}"),
        7 => format!("echo \"$( {cmd} )\""),
        8 => format!("f() {{ {cmd}; }}; f"),
        9 => format!("echo | xargs -I{{}} sh -c {q}"),
        10 => format!("eval {q}"),
        _ => format!("timeout 10 sh -c {q}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn any_write_form_on_any_member_in_any_spelling_is_blocked(
        form in 0usize..WRITE_FORMS.len(),
        member in 0usize..MEMBERS.len(),
        how in any::<u8>(),
    ) {
        let p = spell(MEMBERS[member], how);
        let cmd = WRITE_FORMS[form].replace("{p}", &p);
        let (v, why) = decide(&cmd);
        prop_assert_eq!(v, Verdict::Block, "{} → {}", cmd, why);
    }

    #[test]
    fn wrapping_never_unlocks_a_write_to_a_member(
        form in 0usize..WRITE_FORMS.len(),
        member in 0usize..MEMBERS.len(),
        how in any::<u8>(),
        wraps in proptest::collection::vec(any::<u8>(), 1..3),
    ) {
        let p = spell(MEMBERS[member], how);
        let mut cmd = WRITE_FORMS[form].replace("{p}", &p);
        for w in wraps {
            cmd = wrap(&cmd, w);
        }
        let (v, why) = decide(&cmd);
        prop_assert_ne!(v, Verdict::Allow, "{} → {}", cmd, why);
    }

    #[test]
    fn secrets_are_never_read(
        form in 0usize..READ_FORMS.len(),
        secret in 0usize..SECRETS.len(),
        how in any::<u8>(),
    ) {
        let p = spell(SECRETS[secret], how);
        let cmd = READ_FORMS[form].replace("{p}", &p);
        let (v, why) = decide(&cmd);
        prop_assert_eq!(v, Verdict::Block, "{} → {}", cmd, why);
    }

    #[test]
    fn known_readers_read_other_members(
        form in 0usize..READ_FORMS.len(),
        member in 0usize..READABLE.len(),
        how in any::<u8>(),
    ) {
        let p = spell(READABLE[member], how);
        let cmd = READ_FORMS[form].replace("{p}", &p);
        let (v, why) = decide(&cmd);
        prop_assert_ne!(v, Verdict::Block, "{} → {}", cmd, why);
    }

    #[test]
    fn file_tools_never_write_a_member(
        member in 0usize..MEMBERS.len(),
        tool in 0usize..8,
    ) {
        let p = MEMBERS[member];
        let (name, params) = match tool {
            0 => ("Write", serde_json::json!({"file_path": p, "content": "x"})),
            1 => ("Edit", serde_json::json!({"file_path": p, "old_string": "a", "new_string": "b"})),
            2 => ("write_file", serde_json::json!({"file_path": p, "content": "x"})),
            3 => ("write", serde_json::json!({"path": p, "content": "x"})),
            4 => ("mcp__filesystem__write_file", serde_json::json!({"path": p, "content": "x"})),
            5 => ("mcp__filesystem__move_file", serde_json::json!({"source": p, "destination": "/tmp/x"})),
            6 => ("apply_patch", serde_json::json!({"input": format!("*** Begin Patch\n*** Delete File: {p}\n*** End Patch")})),
            _ => ("apply_patch", serde_json::json!({"input": format!("*** Begin Patch\n*** Update File: /tmp/a\n*** Move to: {p}\n*** End Patch")})),
        };
        prop_assert_eq!(decide_tool(name, params), Verdict::Block, "{} {}", name, p);
    }

    #[test]
    fn code_naming_a_member_is_blocked(
        member in 0usize..MEMBERS.len(),
        lang in 0usize..6,
        split in 1usize..6,
    ) {
        let p = MEMBERS[member];
        // The path as two literal parts joined at run time.
        let cut = p.len().saturating_sub(split);
        let (a, b) = p.split_at(cut);
        let cmd = match lang {
            0 => format!("python3 -c \"open('{a}' + '{b}', 'w')\""),
            1 => format!("python3 -c \"import os; os.remove('{a}' '{b}')\""),
            2 => format!("node -e \"require('fs').writeFileSync('{a}' + '{b}', '')\""),
            3 => format!("perl -e 'unlink \"{a}\" . \"{b}\"'"),
            4 => format!("ruby -e 'File.delete(\"{a}\" + \"{b}\")'"),
            _ => format!("php -r \"unlink('{a}' . '{b}');\""),
        };
        let (v, why) = decide(&cmd);
        prop_assert_eq!(v, Verdict::Block, "{} → {}", cmd, why);
    }

    #[test]
    fn operator_endpoints_are_blocked_for_every_client(
        route in 0usize..7,
        client in 0usize..8,
        host in 0usize..4,
    ) {
        let path = ["/v1/bypass", "/v1/approvals/abc/approve", "/v1/approvals/$ID/deny",
            "/v1/approvals/x/vote", "/v1/operators", "/v1/session/links", "/v1/links/tok"][route];
        let host = ["127.0.0.1:7878", "localhost:7878", "[::1]:7878", "127.0.0.1:9000"][host];
        let url = format!("http://{host}{path}");
        let cmd = match client {
            0 => format!("curl -X POST {url}"),
            1 => format!("wget --post-data=x {url}"),
            2 => format!("http POST {url}"),
            3 => format!("python3 -c \"import urllib.request as u; u.urlopen('{url}', data=b'')\""),
            4 => format!("node -e \"fetch('{url}', {{method: 'POST'}})\""),
            5 => format!("printf 'POST {path} HTTP/1.1\\r\\n\\r\\n' | nc 127.0.0.1 7878"),
            6 => format!("ruby -e 'require \"net/http\"; Net::HTTP.post(URI(\"{url}\"), \"\")'"),
            _ => format!("U={url}; curl -X POST \"$U\""),
        };
        let (v, why) = decide(&cmd);
        prop_assert_eq!(v, Verdict::Block, "{} → {}", cmd, why);
        prop_assert_eq!(decide_tool("WebFetch", serde_json::json!({"url": url, "prompt": "x"})), Verdict::Block);
    }

    /// Text that only mentions a member, in an ordinary command, runs.
    #[test]
    fn mentioning_a_member_as_data_is_allowed(member in 0usize..MEMBERS.len(), form in 0usize..4) {
        let name = MEMBERS[member].rsplit('/').next().unwrap_or("x");
        // The catalogue holds any command naming a credential-named file
        // (`echo operator.token`, `grep -rn .env src/`) for a person; that is
        // not this set's.
        prop_assume!(!name.contains("token") && name != ".env");
        let cmd = match form {
            0 => format!("grep -rn {} src/", shell_quote(name)),
            1 => format!("echo {} is protected", shell_quote(name)),
            2 => format!("git commit -m {}", shell_quote(&format!("protect {name}"))),
            _ => format!("rg -n {} docs", shell_quote(name)),
        };
        let (v, why) = decide(&cmd);
        prop_assert_eq!(v, Verdict::Allow, "{} → {}", cmd, why);
    }
}

#[test]
fn every_spelling_resolves_to_its_member() {
    // The spellings themselves are right: each resolves to the member.
    let e = env();
    for m in MEMBERS {
        for how in 0..12u8 {
            let s = spell(m, how).replace('"', "");
            let s = s.replace("${HOME}", "$HOME");
            assert_eq!(e.resolve(&s), *m, "{s}");
        }
    }
}
