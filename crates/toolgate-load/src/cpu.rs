//! Who used the CPU during a run (Linux `/proc`; absent elsewhere).
//!
//! On a 2-core box the generator and the daemon share the CPU, and anything
//! else running (a compile in another terminal) skews the latency figures.
//! The report therefore says how busy the machine was, and how much of that
//! was the generator, the daemon (`--daemon-pid`) and everything else.

use std::time::Instant;

use serde::Serialize;

/// Clock ticks per second of `/proc` CPU times (`USER_HZ`: 100 on every
/// mainstream Linux architecture).
const TICKS_PER_SEC: f64 = 100.0;

/// CPU counters at one moment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    at: Instant,
    machine_busy: Option<u64>,
    own: Option<u64>,
    daemon: Option<u64>,
}

impl Sample {
    /// Reads the counters now (`daemon`: the daemon's pid, if known).
    pub(crate) fn take(daemon: Option<u32>) -> Self {
        Self {
            at: Instant::now(),
            machine_busy: std::fs::read_to_string("/proc/stat")
                .ok()
                .as_deref()
                .and_then(machine_busy_ticks),
            own: std::fs::read_to_string("/proc/self/stat")
                .ok()
                .as_deref()
                .and_then(process_ticks),
            daemon: daemon
                .and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
                .as_deref()
                .and_then(process_ticks),
        }
    }
}

/// CPU use between two samples, in percent of one core (200 = two cores
/// flat out).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Usage {
    /// Cores on the machine.
    pub cores: usize,
    /// The whole machine.
    pub machine_pct: Option<f64>,
    /// This generator.
    pub generator_pct: Option<f64>,
    /// The daemon, when its pid was given.
    pub daemon_pct: Option<f64>,
    /// Everything else: machine − generator − daemon (when both are known).
    pub other_pct: Option<f64>,
}

impl Usage {
    /// The use between `before` and `after`.
    pub(crate) fn between(before: &Sample, after: &Sample) -> Self {
        let secs = after
            .at
            .saturating_duration_since(before.at)
            .as_secs_f64()
            .max(1e-3);
        let pct = |a: Option<u64>, b: Option<u64>| {
            Some(
                (b?.saturating_sub(a?) as f64 / TICKS_PER_SEC / secs * 100.0 * 10.0).round() / 10.0,
            )
        };
        let machine_pct = pct(before.machine_busy, after.machine_busy);
        let generator_pct = pct(before.own, after.own);
        let daemon_pct = pct(before.daemon, after.daemon);
        let other_pct = match (machine_pct, generator_pct, daemon_pct) {
            (Some(m), Some(g), Some(d)) => Some(((m - g - d).max(0.0) * 10.0).round() / 10.0),
            _ => None,
        };
        Self {
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            machine_pct,
            generator_pct,
            daemon_pct,
            other_pct,
        }
    }
}

/// Busy ticks of all CPUs from `/proc/stat`: everything but idle and iowait.
pub(crate) fn machine_busy_ticks(stat: &str) -> Option<u64> {
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let v: Vec<u64> = line
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest is inside user).
    let busy = v.iter().take(8).sum::<u64>() - v.get(3)? - v.get(4).copied().unwrap_or(0);
    Some(busy)
}

/// utime + stime of a `/proc/PID/stat` line.
pub(crate) fn process_ticks(stat: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses: read after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is the state (field 3); utime and stime are fields 14 and 15.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_lines_are_read() {
        let stat = "cpu  100 5 50 1000 20 1 2 3 0 0\ncpu0 50 2 25 500 10 0 1 1 0 0\n";
        assert_eq!(machine_busy_ticks(stat), Some(100 + 5 + 50 + 1 + 2 + 3));
        let pid =
            "1234 (tool gate) (x)) S 1 1234 1234 0 -1 4194560 500 0 0 0 731 42 0 0 20 0 3 0 99 0";
        assert_eq!(process_ticks(pid), Some(731 + 42));
        assert_eq!(process_ticks("garbage"), None);
    }

    #[test]
    fn usage_is_percent_of_one_core() {
        let t = Instant::now();
        let before = Sample {
            at: t,
            machine_busy: Some(0),
            own: Some(0),
            daemon: Some(0),
        };
        let after = Sample {
            at: t + std::time::Duration::from_secs(2),
            machine_busy: Some(300),
            own: Some(40),
            daemon: Some(200),
        };
        let u = Usage::between(&before, &after);
        assert_eq!(u.machine_pct, Some(150.0));
        assert_eq!(u.generator_pct, Some(20.0));
        assert_eq!(u.daemon_pct, Some(100.0));
        assert_eq!(u.other_pct, Some(30.0));
        let no_daemon = Sample {
            daemon: None,
            ..after
        };
        assert_eq!(Usage::between(&before, &no_daemon).other_pct, None);
    }
}
