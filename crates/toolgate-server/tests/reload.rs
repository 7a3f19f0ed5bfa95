//! The daemon watches the files the policy in force was read from: when a
//! reload makes the policy name another scope profile, a change to the new
//! profile reloads and a change to the old one no longer does.

use reqwest::StatusCode;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use toolgate_core::{Signals, detect};
use toolgate_gate::SystemClock;
use toolgate_server::{PolicySource, Server, ServerConfig, Tokens};
use toolgate_store_sqlite::{SqliteStore, SyncMode};

const AGENT: &str = "tg_agent_0123456789abcdef0123456789abcdef";
const OPERATOR: &str = "tg_oper_0123456789abcdef0123456789abcdef";

/// A profile that permits reading only; `marker` makes each write a change.
fn profile(marker: &str) -> String {
    format!(
        "---\nversion: 1\nprovider: {{name: {marker}}}\nscope:\n  permitted_actions: [read]\n---\n# {marker}\n"
    )
}

fn policy_naming(profile: &str) -> String {
    format!("profile = \"{profile}\"\n")
}

struct Daemon {
    url: String,
    http: reqwest::Client,
    dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Daemon {
    async fn start(policy: &str, profiles: &[(&str, String)]) -> Daemon {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::Builder::new()
            .prefix("tg-reload-")
            .tempdir()
            .unwrap();
        for (name, text) in profiles {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let policy_path = dir.path().join("policy.toml");
        std::fs::write(&policy_path, policy).unwrap();
        let store =
            Arc::new(SqliteStore::open(&dir.path().join("state"), SyncMode::Normal).unwrap());
        let cwd = dir.path().to_path_buf();
        let loader: toolgate_server::PolicyLoader = Arc::new(move || {
            let env = toolgate_bundle::LoadEnv {
                home: "/home/t".into(),
                cwd: cwd.clone(),
                posture: &|| detect(&Signals::default()),
            };
            toolgate_bundle::load(Some(&policy_path), &env).map_err(|e| e.to_string())
        });
        let server = Server::bind(ServerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            store,
            clock: Arc::new(SystemClock),
            tokens: Tokens::new(AGENT, OPERATOR).unwrap(),
            policy: PolicySource { loader },
            base: toolgate_core::paths::Env::new("/home/t", "/home/t/proj"),
            link_key: None,
        })
        .await
        .unwrap();
        let url = format!("http://{}", server.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Daemon {
            url,
            http: reqwest::Client::new(),
            dir,
            stop: Some(stop),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    async fn policy_state(&self) -> Value {
        let r = self
            .http
            .get(format!("{}/v1/state", self.url))
            .bearer_auth(OPERATOR)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK);
        r.json::<Value>().await.unwrap()["policy"].clone()
    }

    /// Waits (up to 10 s) until the reload count passes `after`; the count.
    async fn reloads_past(&self, after: u64) -> Option<u64> {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let n = self.policy_state().await["reloads"].as_u64().unwrap();
            if n > after {
                return Some(n);
            }
        }
        None
    }

    /// The reload count once no reload has come for 1.5 s.
    async fn settled_reloads(&self) -> u64 {
        let mut last = self.policy_state().await["reloads"].as_u64().unwrap();
        loop {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let now = self.policy_state().await["reloads"].as_u64().unwrap();
            if now == last {
                return now;
            }
            last = now;
        }
    }
}

fn shown(paths: &[&Path]) -> Value {
    Value::from(
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_that_names_another_profile_moves_the_watch_to_it() {
    let d = Daemon::start(
        &policy_naming("one.profile.md"),
        &[
            ("one.profile.md", profile("one")),
            ("two.profile.md", profile("two")),
        ],
    )
    .await;
    let (policy, one, two) = (
        d.path("policy.toml"),
        d.path("one.profile.md"),
        d.path("two.profile.md"),
    );
    let state = d.policy_state().await;
    assert_eq!(state["sources"], shown(&[&policy, &one]), "{state}");
    assert_eq!(state["watched"], shown(&[&one, &policy]), "{state}");

    // The policy now names the second profile.
    std::fs::write(&policy, policy_naming("two.profile.md")).unwrap();
    assert!(
        d.reloads_past(0).await.is_some(),
        "the policy change was missed"
    );
    let after_switch = d.settled_reloads().await;
    let state = d.policy_state().await;
    assert_eq!(state["sources"], shown(&[&policy, &two]), "{state}");
    assert_eq!(state["watched"], shown(&[&policy, &two]), "{state}");

    // A change to the profile it names now reloads ...
    std::fs::write(&two, profile("two-edited")).unwrap();
    assert!(
        d.reloads_past(after_switch).await.is_some(),
        "a change to the newly named profile did not reload"
    );
    let after_edit = d.settled_reloads().await;

    // ... and a change to the one it no longer names does not.
    std::fs::write(&one, profile("one-edited")).unwrap();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(
        d.policy_state().await["reloads"].as_u64().unwrap(),
        after_edit,
        "the profile the policy no longer names still reloads it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_reload_keeps_the_policy_and_what_is_watched() {
    let d = Daemon::start(
        &policy_naming("one.profile.md"),
        &[("one.profile.md", profile("one"))],
    )
    .await;
    let (policy, one) = (d.path("policy.toml"), d.path("one.profile.md"));
    // A policy naming a profile that is not there is rejected.
    std::fs::write(&policy, policy_naming("missing.profile.md")).unwrap();
    let mut error = Value::Null;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        error = d.policy_state().await["last_error"].clone();
        if !error.is_null() {
            break;
        }
    }
    let text = error.as_str().expect("the rejected reload is reported");
    assert!(text.contains("missing.profile.md"), "{text}");
    let state = d.policy_state().await;
    assert_eq!(state["reloads"], 0, "{state}");
    assert_eq!(state["sources"], shown(&[&policy, &one]), "{state}");
    assert_eq!(state["watched"], shown(&[&one, &policy]), "{state}");
    // The policy file is still watched: fixing it reloads and clears the
    // error.
    std::fs::write(&policy, policy_naming("one.profile.md")).unwrap();
    assert!(
        d.reloads_past(0).await.is_some(),
        "fixing the policy did not reload"
    );
    assert!(d.policy_state().await["last_error"].is_null());
}
