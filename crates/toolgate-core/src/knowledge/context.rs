//! Context extraction: from one call, the facts knowledge is matched
//! against — the tool, the programs and commands that would run, hosts and
//! IP addresses, paths and working directory, URL hosts, the projects those
//! paths belong to, and the services the commands touch.

use crate::normalize::NormalizedCall;
use crate::paths::Env;
use crate::shell::ShellAnalysis;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// What to recognise beyond the call's own words.
#[derive(Debug, Clone)]
pub struct ContextConfig {
    /// Directories whose direct children are projects (`/Projects/{name}`);
    /// `~` is the user's home.
    pub project_roots: Vec<String>,
    /// Services, each with the words (programs, arguments, host names) that
    /// mean a command touches it.
    pub services: Vec<(String, Vec<String>)>,
}

impl Default for ContextConfig {
    fn default() -> Self {
        let svc = |name: &str, words: &[&str]| {
            (
                name.to_string(),
                words.iter().map(|w| w.to_string()).collect(),
            )
        };
        ContextConfig {
            project_roots: vec!["/Projects".into(), "~/Projects".into()],
            services: vec![
                svc(
                    "postgres",
                    &["psql", "pg_dump", "pg_restore", "pg_ctl", "postgres"],
                ),
                svc("mysql", &["mysql", "mysqldump", "mariadb"]),
                svc("redis", &["redis-cli", "redis-server"]),
                svc("docker", &["docker", "docker-compose", "podman"]),
                svc("kubernetes", &["kubectl", "helm", "k9s"]),
                svc("systemd", &["systemctl", "journalctl"]),
                svc("terraform", &["terraform", "tofu"]),
                svc("nginx", &["nginx"]),
            ],
        }
    }
}

/// The facts of one call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CallContext {
    /// The tool as called.
    pub tool: String,
    /// Its kind (`exec`, `write`, …).
    pub kind: String,
    /// Program names that would run (basename, lowercased).
    pub programs: BTreeSet<String>,
    /// Each simple command as shown (`git push origin main`).
    pub commands: Vec<String>,
    /// The command texts as the call gave them (assignments, quoting and
    /// all), for rule patterns.
    pub command_texts: Vec<String>,
    /// Host names (ssh targets, `user@host`, URL hosts), lowercased.
    pub hosts: BTreeSet<String>,
    /// IP addresses named anywhere in the call.
    pub ips: BTreeSet<String>,
    /// Absolute paths touched or named.
    pub paths: BTreeSet<String>,
    /// The working directory.
    pub cwd: String,
    /// Projects the paths and the working directory belong to.
    pub projects: BTreeSet<String>,
    /// Each project's directory, by project name (the first root it was
    /// found under).
    pub project_dirs: BTreeMap<String, String>,
    /// Services the call touches.
    pub services: BTreeSet<String>,
}

/// Extracts the facts of a normalized call; shell commands are analysed
/// here (every command text the call carries).
pub fn extract(n: &NormalizedCall, env: &Env, cfg: &ContextConfig) -> CallContext {
    let mut ctx = CallContext {
        tool: n.tool.clone(),
        kind: n.kind.as_str().to_string(),
        cwd: n.cwd.clone(),
        ..Default::default()
    };
    for p in &n.paths {
        ctx.paths.insert(p.path.clone());
    }
    for u in &n.urls {
        add_url(&mut ctx, u);
    }
    let local = env.with_cwd(&n.cwd);
    let commands = n.command.iter().chain(n.alt_commands.iter());
    for text in commands {
        ctx.command_texts.push(text.clone());
        add_analysis(&mut ctx, &n.analyses.get(text, &local), &local);
    }
    // Hosts and addresses mentioned in any string param (a `host` field of
    // an MCP database tool, a `target` of a deploy tool).
    for v in n.params.values() {
        if let Some(s) = v.as_str() {
            add_word(&mut ctx, s, &local, false);
        }
    }
    let all_words: Vec<String> = ctx
        .programs
        .iter()
        .chain(ctx.hosts.iter())
        .cloned()
        .chain(ctx.commands.iter().flat_map(|c| {
            c.split_whitespace()
                .map(str::to_ascii_lowercase)
                .collect::<Vec<_>>()
        }))
        .collect();
    for (name, words) in &cfg.services {
        let hit = words.iter().any(|w| {
            let w = w.to_ascii_lowercase();
            all_words
                .iter()
                .any(|x| *x == w || x.starts_with(&format!("{w}.")))
        });
        if hit {
            ctx.services.insert(name.clone());
        }
    }
    let roots: Vec<String> = cfg.project_roots.iter().map(|r| env.resolve(r)).collect();
    for p in ctx.paths.iter().chain(std::iter::once(&ctx.cwd)) {
        if let Some((name, dir)) = project_of(p, &roots) {
            ctx.projects.insert(name.clone());
            ctx.project_dirs.entry(name).or_insert(dir);
        }
    }
    ctx
}

fn add_analysis(ctx: &mut CallContext, a: &ShellAnalysis, env: &Env) {
    for cmd in &a.commands {
        let program = cmd
            .program
            .rsplit('/')
            .next()
            .unwrap_or(&cmd.program)
            .to_ascii_lowercase();
        if !program.is_empty() {
            ctx.programs.insert(program.clone());
        }
        ctx.commands.push(cmd.display());
        if let Some(remote) = &cmd.remote {
            add_host(ctx, remote);
        }
        let cwd = cmd.cwd.clone().unwrap_or_else(|| env.cwd.clone());
        let here = env.with_cwd(&cwd);
        let net = NET_PROGRAMS.contains(&program.as_str());
        let mut host_flag = false;
        for w in cmd.args() {
            if w.dynamic {
                host_flag = false;
                continue;
            }
            add_word(ctx, &w.text, &here, true);
            let t = w.text.as_str();
            if host_flag || (net && !t.starts_with('-')) {
                // `ping web1`, `psql -h db1`, `scp f web1:/srv`.
                let host = t.split_once(':').map_or(t, |(h, _)| h);
                if looks_like_host(host) {
                    add_host(ctx, host);
                }
            } else if let Some(v) = t.strip_prefix("--host=") {
                add_host(ctx, v);
            }
            host_flag = matches!(t, "-h" | "--host" | "-H") && program != "curl";
        }
        for r in &cmd.redirects {
            if !r.target.dynamic && !r.target.text.is_empty() {
                ctx.paths.insert(here.resolve(&r.target.text));
            }
        }
    }
}

/// Programs whose operands are (mostly) host names.
const NET_PROGRAMS: &[&str] = &[
    "ping",
    "ping6",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "mosh",
    "telnet",
    "nc",
    "ncat",
    "netcat",
    "dig",
    "nslookup",
    "host",
    "traceroute",
    "tracepath",
    "mtr",
    "ssh-copy-id",
    "ssh-keyscan",
];

/// A bare word that could be a host: letters, digits, dots and dashes,
/// with a letter, not starting with a dot or dash, not a file name
/// (`notes.txt`).
fn looks_like_host(w: &str) -> bool {
    const FILE_ENDINGS: &[&str] = &[
        ".txt", ".md", ".json", ".yaml", ".yml", ".toml", ".sh", ".py", ".rs", ".js", ".ts",
        ".log", ".conf", ".cfg", ".ini", ".sql", ".csv", ".tar", ".gz", ".zip", ".pem", ".key",
    ];
    !w.is_empty()
        && w.len() <= 253
        && !w.starts_with(['.', '-'])
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && w.chars().any(|c| c.is_ascii_alphabetic())
        && !FILE_ENDINGS
            .iter()
            .any(|e| w.to_ascii_lowercase().ends_with(e))
}

/// One word: a URL, `user@host[:path]`, an IP address, or a path.
fn add_word(ctx: &mut CallContext, word: &str, env: &Env, paths: bool) {
    let word = word.trim();
    if word.is_empty() || word.len() > 2048 || word.contains(char::is_whitespace) {
        return;
    }
    if word.contains("://") {
        add_url(ctx, word);
        return;
    }
    if let Some((user, rest)) = word.split_once('@')
        && !user.is_empty()
        && !user.contains('/')
    {
        let host = rest.split(':').next().unwrap_or("");
        add_host(ctx, host);
        return;
    }
    if let Ok(ip) = word.parse::<IpAddr>() {
        ctx.ips.insert(ip.to_string());
        return;
    }
    if paths && (word.starts_with('/') || word.starts_with("~/") || word.starts_with("./")) {
        ctx.paths.insert(env.resolve(word));
    }
}

fn add_url(ctx: &mut CallContext, url: &str) {
    let Some((_, rest)) = url.split_once("://") else {
        return;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    add_host(ctx, host);
}

fn add_host(ctx: &mut CallContext, host: &str) {
    let host = host
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    if host.is_empty() || host.len() > 253 {
        return;
    }
    match host.parse::<IpAddr>() {
        Ok(ip) => {
            ctx.ips.insert(ip.to_string());
        }
        Err(_)
            if host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-') =>
        {
            ctx.hosts.insert(host);
        }
        Err(_) => {}
    }
}

/// The project `path` lies in: the first component under one of `roots`,
/// and that project's directory.
fn project_of(path: &str, roots: &[String]) -> Option<(String, String)> {
    roots.iter().find_map(|root| {
        let root = root.trim_end_matches('/');
        let rest = path.strip_prefix(root)?;
        let rest = rest.strip_prefix('/')?;
        let name = rest.split('/').next()?;
        (!name.is_empty() && name != "." && name != "..")
            .then(|| (name.to_string(), format!("{root}/{name}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;
    use crate::normalize::normalize;
    use serde_json::json;

    fn ctx(v: serde_json::Value) -> CallContext {
        let call: ToolCall = serde_json::from_value(v).unwrap();
        let env = Env::new("/home/dev", "/home/dev/Projects/shop");
        let n = normalize(&call, &env);
        extract(&n, &env, &ContextConfig::default())
    }

    #[test]
    fn shell_commands_give_programs_hosts_ips_paths_projects_services() {
        let c = ctx(json!({"tool": "exec", "params": {"command":
            "ssh deploy@Prod-DB.example.com 'pg_dump shop' > /backups/shop.sql && curl -s https://api.example.org/v1/x && ping 10.0.0.7"},
            "cwd": "/home/dev/Projects/shop/src"}));
        assert!(c.programs.contains("ssh"), "{c:?}");
        assert!(c.programs.contains("curl"));
        assert!(c.hosts.contains("prod-db.example.com"), "{c:?}");
        assert!(c.hosts.contains("api.example.org"));
        assert!(c.ips.contains("10.0.0.7"));
        assert!(c.paths.contains("/backups/shop.sql"), "{c:?}");
        assert!(c.projects.contains("shop"));
        assert!(c.services.contains("postgres"), "{c:?}");
        assert_eq!(c.kind, "exec");
        let c = ctx(json!({"tool": "exec", "params": {"command":
            "ping -c1 web1 && scp notes.txt backup01:/srv/ && psql -h db1.lan -c 'select 1' && ssh -i k.pem gw"}}));
        for h in ["web1", "backup01", "db1.lan", "gw"] {
            assert!(c.hosts.contains(h), "{h}: {c:?}");
        }
        assert!(
            !c.hosts.contains("notes.txt") && !c.hosts.contains("k.pem"),
            "{c:?}"
        );
    }

    #[test]
    fn non_shell_tools_give_paths_urls_and_hosts_from_params() {
        let c = ctx(
            json!({"tool": "mcp__db__query", "params": {"host": "10.1.2.3", "sql": "select 1"}}),
        );
        assert!(c.ips.contains("10.1.2.3"), "{c:?}");
        let c = ctx(
            json!({"tool": "Write", "params": {"file_path": "/Projects/billing/README.md", "content": "x"}}),
        );
        assert!(c.projects.contains("billing"), "{c:?}");
        assert!(c.projects.contains("shop"), "the cwd's project too: {c:?}");
        let c =
            ctx(json!({"tool": "web_fetch", "params": {"url": "https://[2001:db8::1]:8443/x"}}));
        assert!(c.ips.contains("2001:db8::1"), "{c:?}");
    }

    #[test]
    fn services_match_whole_words_and_odd_input_is_ignored() {
        let c = ctx(json!({"tool": "exec", "params": {"command": "kubectl -n prod get pods"}}));
        assert!(c.services.contains("kubernetes"));
        let c = ctx(json!({"tool": "exec", "params": {"command": "echo dockerfile"}}));
        assert!(!c.services.contains("docker"), "{c:?}");
        let c = ctx(json!({"tool": "exec", "params": {"command": "echo a@ b@/x @c"}}));
        assert!(c.hosts.is_empty(), "{c:?}");
        assert_eq!(project_of("/Projects", &["/Projects".into()]), None);
        assert_eq!(project_of("/Projectsx/a", &["/Projects".into()]), None);
    }

    proptest::proptest! {
        /// Any command text and any param: no panic, and every IP found
        /// parses back as one.
        #[test]
        fn extraction_never_panics(cmd in ".{0,120}", host in ".{0,40}") {
            let c = ctx(json!({"tool": "mcp__x__run", "params": {"command": cmd, "host": host}}));
            for ip in &c.ips {
                proptest::prop_assert!(ip.parse::<IpAddr>().is_ok());
            }
        }
    }
}
