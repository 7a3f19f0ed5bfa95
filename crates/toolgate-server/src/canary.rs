//! Integration canaries (a hook that silently never fires is a guard that
//! is not there; docs/http-api.md, `POST /v1/canary`): an
//! integration reports when it starts, when its agent first shows activity
//! and when its pre-tool hook first fires. An agent that is active but whose
//! hook never fires is running unguarded, so the daemon says so — in
//! `/v1/state`, in the log and on `/ws` — instead of trusting the silence.

use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;

/// How long after an integration's first activity its hook must have fired.
pub const SILENT_AFTER_MS: i64 = 30_000;
/// Integrations remembered at once; past it the longest-quiet one is dropped,
/// so a client inventing instance ids cannot grow the daemon's memory.
pub const MAX_INTEGRATIONS: usize = 256;
/// Warnings kept per integration (the newest win).
const MAX_WARNINGS: usize = 16;
/// Longest runtime or instance name kept.
const MAX_NAME: usize = 128;
/// Longest detail text kept.
const MAX_DETAIL: usize = 1000;

/// The instance name under which the hooks whose calls reach this daemon
/// are listed.
pub const VIA_DAEMON: &str = "hooks via this daemon";

/// What an integration reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CanaryEvent {
    /// The integration was loaded.
    Start,
    /// Its agent did something (a prompt, a model call): from now on its
    /// hook should fire before any tool runs.
    Activity,
    /// Its pre-tool hook fired.
    Hook,
    /// The params that ran were not the ones judged, or something can
    /// rewrite them after toolgate; `detail` says what.
    Tamper,
}

/// One canary report, as posted to `/v1/canary`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CanaryReport {
    /// The runtime (`openclaw`, …).
    pub runtime: String,
    /// This process of the integration (stable for its lifetime).
    pub instance: String,
    /// What happened.
    pub event: CanaryEvent,
    /// Free text, for `tamper` mostly.
    #[serde(default)]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct Integration {
    started_ms: Option<i64>,
    first_activity_ms: Option<i64>,
    first_hook_ms: Option<i64>,
    last_hook_ms: Option<i64>,
    last_seen_ms: i64,
    warnings: Vec<String>,
    silent_reported: bool,
}

impl Integration {
    fn warn(&mut self, text: String) {
        if self.warnings.len() == MAX_WARNINGS {
            self.warnings.remove(0);
        }
        self.warnings.push(text);
    }

    fn silent(&self, now_ms: i64) -> Option<String> {
        let since = self.first_activity_ms?;
        (self.first_hook_ms.is_none() && now_ms - since >= SILENT_AFTER_MS).then(|| {
            format!(
                "before_tool_call has not fired {} s after the agent's first activity: \
                 tool calls may be running unguarded (is the hook registered and enabled?)",
                (now_ms - since) / 1000
            )
        })
    }
}

/// A warning to log and publish, produced by [`Canaries::report`] or
/// [`Canaries::sweep`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The runtime.
    pub runtime: String,
    /// The instance.
    pub instance: String,
    /// What is wrong.
    pub text: String,
}

impl Warning {
    /// The `/ws` event for it.
    pub fn event_json(&self) -> Value {
        json!({
            "type": "integration.warning",
            "runtime": self.runtime,
            "instance": self.instance,
            "warning": self.text,
        })
    }
}

/// What the daemon knows of each integration's canary.
#[derive(Debug, Default)]
pub struct Canaries {
    seen: Mutex<HashMap<(String, String), Integration>>,
    /// Runtimes whose hooks' calls this daemon decided: when first and last.
    /// Apart from the reports, and keyed by the runtime's static name, so
    /// noting one on the decision path allocates nothing.
    hooks: Mutex<HashMap<&'static str, (i64, i64)>>,
}

/// At most `max` bytes of `s`, control characters shown as `\u{..}` so a
/// report cannot forge log lines.
fn cut(s: &str, max: usize) -> String {
    let s: String = s
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_unicode().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

impl Canaries {
    /// Records a report; returns the warning it raises, if any. Fails with a
    /// message for the client when the report is unusable.
    pub fn report(&self, report: CanaryReport, now_ms: i64) -> Result<Option<Warning>, String> {
        let runtime = report.runtime.trim();
        let instance = report.instance.trim();
        if runtime.is_empty() || instance.is_empty() {
            return Err("runtime and instance must not be empty".to_string());
        }
        let key = (cut(runtime, MAX_NAME), cut(instance, MAX_NAME));
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if !seen.contains_key(&key)
            && seen.len() >= MAX_INTEGRATIONS
            && let Some(oldest) = seen
                .iter()
                .min_by_key(|(_, i)| i.last_seen_ms)
                .map(|(k, _)| k.clone())
        {
            seen.remove(&oldest);
        }
        let entry = seen.entry(key.clone()).or_default();
        entry.last_seen_ms = now_ms;
        let warning = match report.event {
            CanaryEvent::Start => {
                entry.started_ms.get_or_insert(now_ms);
                None
            }
            CanaryEvent::Activity => {
                entry.first_activity_ms.get_or_insert(now_ms);
                None
            }
            CanaryEvent::Hook => {
                entry.first_hook_ms.get_or_insert(now_ms);
                entry.last_hook_ms = Some(now_ms);
                // Late is better than never; the earlier warning stays.
                None
            }
            CanaryEvent::Tamper => {
                let detail = report.detail.as_deref().map(str::trim).unwrap_or("");
                let text = if detail.is_empty() {
                    "tool-call params may be changed after toolgate judged them".to_string()
                } else {
                    cut(detail, MAX_DETAIL)
                };
                entry.warn(text.clone());
                Some(text)
            }
        };
        Ok(warning.map(|text| Warning {
            runtime: key.0,
            instance: key.1,
            text,
        }))
    }

    /// Notes that a hook of `runtime` (a runtime toolgate has a hook for)
    /// just had a call decided by this daemon: the integrations panel's
    /// "last hook" for hooks that report no canary of their own.
    pub fn hook_seen(&self, runtime: &'static str, now_ms: i64) {
        let mut hooks = self.hooks.lock().unwrap_or_else(|p| p.into_inner());
        hooks
            .entry(runtime)
            .and_modify(|(_, last)| *last = now_ms)
            .or_insert((now_ms, now_ms));
    }

    /// Raises the "hook never fired" warning for integrations that crossed
    /// [`SILENT_AFTER_MS`] since the last sweep (once each).
    pub fn sweep(&self, now_ms: i64) -> Vec<Warning> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for ((runtime, instance), i) in seen.iter_mut() {
            if i.silent_reported {
                continue;
            }
            if let Some(text) = i.silent(now_ms) {
                i.silent_reported = true;
                i.warn(text.clone());
                out.push(Warning {
                    runtime: runtime.clone(),
                    instance: instance.clone(),
                    text,
                });
            }
        }
        out
    }

    /// Every integration for `/v1/state`, most recently seen first. The
    /// silent-hook warning is computed at `now_ms`, so it shows even
    /// between sweeps.
    pub fn view(&self, now_ms: i64) -> Vec<Value> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let hooks = self.hooks.lock().unwrap_or_else(|p| p.into_inner());
        let via_daemon = hooks.iter().map(|(runtime, &(first, last))| {
            let row = json!({
                "runtime": runtime,
                "instance": VIA_DAEMON,
                "started_ms": null,
                "first_activity_ms": null,
                "first_hook_ms": first,
                "last_hook_ms": last,
                "last_seen_ms": last,
                "warnings": [],
            });
            (last, row)
        });
        let mut rows: Vec<(i64, Value)> = seen
            .iter()
            .map(|((runtime, instance), i)| {
                let mut warnings = i.warnings.clone();
                if !i.silent_reported
                    && let Some(w) = i.silent(now_ms)
                {
                    warnings.push(w);
                }
                let row = json!({
                    "runtime": runtime,
                    "instance": instance,
                    "started_ms": i.started_ms,
                    "first_activity_ms": i.first_activity_ms,
                    "first_hook_ms": i.first_hook_ms,
                    "last_hook_ms": i.last_hook_ms,
                    "last_seen_ms": i.last_seen_ms,
                    "warnings": warnings,
                });
                (i.last_seen_ms, row)
            })
            .chain(via_daemon)
            .collect();
        rows.sort_by_key(|(last, _)| std::cmp::Reverse(*last));
        rows.into_iter().map(|(_, row)| row).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(instance: &str, event: CanaryEvent) -> CanaryReport {
        CanaryReport {
            runtime: "openclaw".into(),
            instance: instance.into(),
            event,
            detail: None,
        }
    }

    #[test]
    fn a_hook_that_never_fires_is_reported_once() {
        let c = Canaries::default();
        c.report(report("a", CanaryEvent::Start), 0).unwrap();
        c.report(report("a", CanaryEvent::Activity), 1_000).unwrap();
        assert!(c.sweep(30_999).is_empty());
        assert!(c.view(30_999)[0]["warnings"].as_array().unwrap().is_empty());
        let w = c.sweep(31_000);
        assert_eq!(w.len(), 1);
        assert!(w[0].text.contains("before_tool_call has not fired"));
        assert!(c.sweep(60_000).is_empty(), "reported once");
        assert_eq!(c.view(60_000)[0]["warnings"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_hook_that_fires_in_time_raises_nothing() {
        let c = Canaries::default();
        c.report(report("a", CanaryEvent::Activity), 0).unwrap();
        c.report(report("a", CanaryEvent::Hook), 5_000).unwrap();
        assert!(c.sweep(100_000).is_empty());
        let v = &c.view(100_000)[0];
        assert_eq!(v["first_hook_ms"], 5_000);
        assert!(v["warnings"].as_array().unwrap().is_empty());
    }

    #[test]
    fn tamper_is_a_warning_and_bad_reports_are_refused() {
        let c = Canaries::default();
        let mut r = report("a", CanaryEvent::Tamper);
        r.detail = Some("plugin x rewrites params after toolgate".into());
        let w = c.report(r, 0).unwrap().unwrap();
        assert!(w.text.contains("plugin x"));
        assert!(c.report(report(" ", CanaryEvent::Start), 0).is_err());
        let mut r = report("a", CanaryEvent::Tamper);
        r.detail = Some("x\nWARN forged line".into());
        let w = c.report(r, 0).unwrap().unwrap();
        assert!(!w.text.contains('\n'), "{}", w.text);
    }

    #[test]
    fn memory_is_bounded() {
        let c = Canaries::default();
        for n in 0..(MAX_INTEGRATIONS as i64 + 50) {
            c.report(report(&format!("i{n}"), CanaryEvent::Start), n)
                .unwrap();
        }
        let v = c.view(1_000);
        assert_eq!(v.len(), MAX_INTEGRATIONS);
        // The newest stay.
        assert_eq!(v[0]["instance"], format!("i{}", MAX_INTEGRATIONS + 49));
    }
}
