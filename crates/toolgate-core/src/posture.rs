//! Sandbox posture (a scope profile's sandbox layer): is toolgate — and so the agent it
//! guards — running inside a container? Pure: the caller reads the signals
//! (files, `/proc`, the environment) and hands them in; this module weighs
//! them. Several independent signals are used because each alone can be
//! missing (rootless Podman has no `/.dockerenv`; cgroup v2 hides the
//! runtime's name) or faked by a single environment variable.

use serde::Serialize;

/// What the caller observed. Every field is optional: a missing file is
/// `false` / `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signals {
    /// `/.dockerenv` exists.
    pub dockerenv: bool,
    /// `/run/.containerenv` exists (Podman, Buildah).
    pub containerenv: bool,
    /// The text of `/proc/1/cgroup`.
    pub cgroup: Option<String>,
    /// The text of `/proc/1/mountinfo` (overlay root of a container).
    pub mountinfo: Option<String>,
    /// The value of `$container` (set by systemd-nspawn, Podman, LXC, Flatpak).
    pub container_env: Option<String>,
    /// Kubernetes's `$KUBERNETES_SERVICE_HOST` is set.
    pub kubernetes_env: bool,
}

/// How sure the detection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// No signal at all.
    None,
    /// Only the environment says so (a variable anyone can set).
    Weak,
    /// A file or kernel signal says so.
    Strong,
}

/// The verdict on the posture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Posture {
    /// True when some signal says "container".
    pub in_container: bool,
    /// How much to trust `in_container`.
    pub confidence: Confidence,
    /// The runtime, when a signal names it (`docker`, `podman`, `kubernetes`, …).
    pub runtime: Option<String>,
    /// Each signal seen, as a sentence.
    pub signals: Vec<String>,
}

impl Posture {
    /// True when the posture satisfies `require_sandbox`: a strong signal.
    /// An environment variable alone is not enough to unlock tools that
    /// must only run sandboxed.
    pub fn is_sandboxed(&self) -> bool {
        self.in_container && self.confidence == Confidence::Strong
    }
}

/// Runtime names looked for in cgroup paths, in order.
const CGROUP_RUNTIMES: &[(&str, &str)] = &[
    ("kubepods", "kubernetes"),
    ("docker", "docker"),
    ("libpod", "podman"),
    ("containerd", "containerd"),
    ("cri-o", "cri-o"),
    ("crio-", "cri-o"),
    ("lxc", "lxc"),
];

/// Weighs the signals.
pub fn detect(s: &Signals) -> Posture {
    let mut signals = Vec::new();
    let mut runtime: Option<String> = None;
    let mut strong = false;
    let mut weak = false;
    let name = |r: &str, runtime: &mut Option<String>| {
        if runtime.is_none() {
            *runtime = Some(r.to_string());
        }
    };
    if s.dockerenv {
        strong = true;
        name("docker", &mut runtime);
        signals.push("/.dockerenv exists".to_string());
    }
    if s.containerenv {
        strong = true;
        name("podman", &mut runtime);
        signals.push("/run/.containerenv exists".to_string());
    }
    if let Some(cg) = &s.cgroup {
        let hit = cg.lines().find_map(|line| {
            let path = line.rsplit(':').next().unwrap_or("");
            CGROUP_RUNTIMES
                .iter()
                .find(|(needle, _)| path.contains(needle))
                .map(|(_, r)| *r)
        });
        if let Some(r) = hit {
            strong = true;
            name(r, &mut runtime);
            signals.push(format!("/proc/1/cgroup names {r}"));
        }
    }
    if let Some(mi) = &s.mountinfo {
        // The root mount of a container is usually an overlay whose
        // source names the runtime's storage.
        let root_overlay = mi.lines().any(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            f.get(4) == Some(&"/")
                && line.contains(" - overlay ")
                && [
                    "docker",
                    "containers/storage",
                    "containerd",
                    "overlay-containers",
                ]
                .iter()
                .any(|n| line.contains(n))
        });
        if root_overlay {
            strong = true;
            signals.push("the root file system is a container overlay".to_string());
        }
    }
    if let Some(v) = s
        .container_env
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        weak = true;
        name(v, &mut runtime);
        signals.push(format!("$container = {v:?}"));
    }
    if s.kubernetes_env {
        weak = true;
        name("kubernetes", &mut runtime);
        signals.push("$KUBERNETES_SERVICE_HOST is set".to_string());
    }
    let confidence = if strong {
        Confidence::Strong
    } else if weak {
        Confidence::Weak
    } else {
        Confidence::None
    };
    Posture {
        in_container: strong || weak,
        confidence,
        runtime: runtime.filter(|_| strong || weak),
        signals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_host_is_not_a_container() {
        let p = detect(&Signals {
            cgroup: Some("0::/user.slice/user-1000.slice/session-2.scope\n".into()),
            mountinfo: Some("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n".into()),
            ..Default::default()
        });
        assert!(!p.in_container && !p.is_sandboxed());
        assert_eq!(p.confidence, Confidence::None);
        assert!(p.signals.is_empty() && p.runtime.is_none());
    }

    #[test]
    fn docker_podman_kubernetes_and_cgroup_v1_are_recognised() {
        let p = detect(&Signals {
            dockerenv: true,
            ..Default::default()
        });
        assert!(p.is_sandboxed());
        assert_eq!(p.runtime.as_deref(), Some("docker"));
        let p = detect(&Signals {
            containerenv: true,
            container_env: Some("podman".into()),
            ..Default::default()
        });
        assert!(p.is_sandboxed());
        assert_eq!(p.runtime.as_deref(), Some("podman"));
        assert_eq!(p.signals.len(), 2);
        let p = detect(&Signals {
            cgroup: Some(
                "12:memory:/kubepods/besteffort/pod1/abc\n11:cpu:/kubepods/besteffort/pod1/abc\n"
                    .into(),
            ),
            ..Default::default()
        });
        assert!(p.is_sandboxed());
        assert_eq!(p.runtime.as_deref(), Some("kubernetes"));
        let p = detect(&Signals {
            mountinfo: Some(
                "500 400 0:52 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/X\n"
                    .into(),
            ),
            ..Default::default()
        });
        assert!(p.is_sandboxed(), "{p:?}");
    }

    #[test]
    fn the_environment_alone_is_weak() {
        let p = detect(&Signals {
            container_env: Some("lxc".into()),
            kubernetes_env: true,
            ..Default::default()
        });
        assert!(p.in_container);
        assert_eq!(p.confidence, Confidence::Weak);
        assert!(
            !p.is_sandboxed(),
            "a variable cannot unlock sandbox-only tools"
        );
        assert_eq!(
            detect(&Signals {
                container_env: Some("  ".into()),
                ..Default::default()
            }),
            detect(&Signals::default())
        );
    }
}
