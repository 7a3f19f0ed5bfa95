//! Prometheus metrics. One recorder per process (the `metrics` facade is
//! global), installed on first use and shared by every server in it.

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Duration;

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Latency buckets for checks, in seconds: fine-grained below a
/// millisecond, where the bar is.
const CHECK_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.1, 1.0,
];
/// Time-to-decision buckets for approvals, in seconds.
const APPROVAL_BUCKETS: &[f64] = &[1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3600.0];

/// How often the histograms' buffered samples are folded into their
/// buckets. The exporter keeps every recorded sample (16 bytes each, one
/// per check) until a scrape or this upkeep drains it: a daemon nobody
/// scraped grew by 1.5 MB every 90,000 checks, without end. At 5,000
/// checks a second a second's buffer is 80 KB.
const UPKEEP_EVERY: Duration = Duration::from_secs(1);

/// Installs the recorder (once per process), starts its upkeep and
/// describes the metrics.
pub fn install() {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("toolgate_check_duration_seconds".into()),
                CHECK_BUCKETS,
            )
            .and_then(|b| {
                b.set_buckets_for_metric(
                    Matcher::Full("toolgate_approval_decision_seconds".into()),
                    APPROVAL_BUCKETS,
                )
            });
        let handle = match builder.map(|b| b.install_recorder()) {
            Ok(Ok(h)) => {
                start_upkeep(h.clone());
                Some(h)
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "metrics are off: cannot install the recorder");
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "metrics are off: bad bucket configuration");
                None
            }
        };
        describe();
        handle
    });
}

/// Drains the histograms' sample buffers every [`UPKEEP_EVERY`], on a
/// thread of its own: the recorder is process-wide and may be installed
/// outside any async runtime. Without it memory grows with every check,
/// so a failure to start it is logged as an error.
fn start_upkeep(handle: PrometheusHandle) {
    let started = std::thread::Builder::new()
        .name("toolgate-metrics".into())
        .spawn(move || {
            loop {
                std::thread::sleep(UPKEEP_EVERY);
                handle.run_upkeep();
            }
        });
    if let Err(e) = started {
        tracing::error!(
            error = %e,
            "cannot start the metrics upkeep thread: memory will grow with every check until /metrics is scraped"
        );
    }
}

fn describe() {
    metrics::describe_counter!(
        "toolgate_checks_total",
        "Checks answered, by decision, risk class, deciding layer and tool kind."
    );
    metrics::describe_histogram!(
        "toolgate_check_duration_seconds",
        metrics::Unit::Seconds,
        "Time to answer POST /v1/check inside the daemon, including the durable commit."
    );
    metrics::describe_gauge!(
        "toolgate_pending_approvals",
        "Open approvals (pending or approved, not yet used)."
    );
    metrics::describe_counter!(
        "toolgate_approval_outcomes_total",
        "Approvals by how they ended: approved, denied, expired, consumed."
    );
    metrics::describe_histogram!(
        "toolgate_approval_decision_seconds",
        metrics::Unit::Seconds,
        "Time from an approval request to its approval or denial."
    );
    metrics::describe_gauge!("toolgate_audit_entries", "Entries in the audit chain.");
    metrics::describe_counter!(
        "toolgate_policy_reloads_total",
        "Policy reloads by result: loaded or rejected."
    );
}

/// The current metrics in Prometheus text format.
pub fn render() -> String {
    install();
    match HANDLE.get() {
        Some(Some(h)) => h.render(),
        _ => "# metrics recorder unavailable (another recorder is installed in this process)\n"
            .to_string(),
    }
}

/// The knowledge gate's counters (docs/knowledge.md, "Metrics") in Prometheus text
/// format: interceptions, injections, holds, acknowledgements, cache hits,
/// source errors and the lookup-time histogram.
pub fn knowledge(s: &toolgate_gate::KnowledgeSnapshot) -> String {
    let mut out = String::new();
    let mut counter = |name: &str, help: &str, v: u64| {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}\n"
        ));
    };
    counter(
        "toolgate_knowledge_interceptions_total",
        "Calls the knowledge layer looked up.",
        s.interceptions,
    );
    counter(
        "toolgate_knowledge_injections_total",
        "Decisions that carried knowledge to the agent.",
        s.injections,
    );
    counter(
        "toolgate_knowledge_held_total",
        "Calls held until knowledge was acknowledged.",
        s.held,
    );
    out.push_str(&format!(
        "# HELP toolgate_knowledge_acks_total Acknowledgements of held knowledge, by how.\n\
         # TYPE toolgate_knowledge_acks_total counter\n\
         toolgate_knowledge_acks_total{{how=\"retry\"}} {}\n\
         toolgate_knowledge_acks_total{{how=\"explicit\"}} {}\n",
        s.acked_by_retry, s.acked_explicitly
    ));
    let mut counter = |name: &str, help: &str, v: u64| {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}\n"
        ));
    };
    counter(
        "toolgate_knowledge_cache_hits_total",
        "Memory searches answered from the cache.",
        s.cache_hits,
    );
    counter(
        "toolgate_knowledge_cache_misses_total",
        "Memory searches that went to the store.",
        s.cache_misses,
    );
    counter(
        "toolgate_knowledge_source_errors_total",
        "Lookups in which a knowledge source failed.",
        s.source_errors,
    );
    out.push_str(
        "# HELP toolgate_knowledge_lookup_seconds Time to find the knowledge for a call.\n\
         # TYPE toolgate_knowledge_lookup_seconds histogram\n",
    );
    let mut cumulative = 0;
    for (i, n) in s.lookup_us_buckets.iter().enumerate() {
        cumulative += n;
        let le = toolgate_gate::LOOKUP_BUCKETS_US
            .get(i)
            .map_or("+Inf".to_string(), |us| format!("{}", *us as f64 / 1e6));
        out.push_str(&format!(
            "toolgate_knowledge_lookup_seconds_bucket{{le=\"{le}\"}} {cumulative}\n"
        ));
    }
    out.push_str(&format!(
        "toolgate_knowledge_lookup_seconds_sum {}\ntoolgate_knowledge_lookup_seconds_count {}\n",
        s.lookup_us_mean * s.interceptions as f64 / 1e6,
        s.interceptions
    ));
    out
}
