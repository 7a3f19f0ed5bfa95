//! Reading the sandbox signals that `toolgate_core::posture` weighs: files
//! under a root (`/` in production, a fake tree in tests) and environment
//! variables through a lookup the caller chooses.

use std::path::Path;
use toolgate_core::{Posture, Signals, detect};

/// The most of `/proc/1/cgroup` or `/proc/1/mountinfo` read.
const MAX_READ: u64 = 256 * 1024;

/// Reads the signals under `root` with `env` for variables.
pub fn read_signals(root: &Path, env: &dyn Fn(&str) -> Option<String>) -> Signals {
    let read = |rel: &str| -> Option<String> {
        use std::io::Read;
        let f = std::fs::File::open(root.join(rel)).ok()?;
        let mut s = String::new();
        f.take(MAX_READ).read_to_string(&mut s).ok()?;
        Some(s)
    };
    Signals {
        dockerenv: root.join(".dockerenv").exists(),
        containerenv: root.join("run/.containerenv").exists(),
        cgroup: read("proc/1/cgroup"),
        mountinfo: read("proc/1/mountinfo"),
        container_env: env("container"),
        kubernetes_env: env("KUBERNETES_SERVICE_HOST").is_some_and(|v| !v.is_empty()),
    }
}

/// This process's posture: `/` and its own environment.
pub fn current() -> Posture {
    detect(&read_signals(Path::new("/"), &|k| std::env::var(k).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faked_signals_are_read_from_the_root_given() {
        let root =
            std::env::temp_dir().join(format!("toolgate-posture-{}", crate::random_hex().unwrap()));
        std::fs::create_dir_all(root.join("proc/1")).unwrap();
        std::fs::create_dir_all(root.join("run")).unwrap();
        let none = |_: &str| None;
        assert!(!detect(&read_signals(&root, &none)).in_container);
        std::fs::write(
            root.join("proc/1/cgroup"),
            "0::/system.slice/docker-abc.scope\n",
        )
        .unwrap();
        let p = detect(&read_signals(&root, &none));
        assert!(p.is_sandboxed());
        assert_eq!(p.runtime.as_deref(), Some("docker"));
        std::fs::remove_file(root.join("proc/1/cgroup")).unwrap();
        std::fs::write(root.join("run/.containerenv"), "").unwrap();
        let env = |k: &str| (k == "container").then(|| "podman".to_string());
        let p = detect(&read_signals(&root, &env));
        assert!(p.is_sandboxed());
        assert_eq!(p.signals.len(), 2, "{p:?}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
