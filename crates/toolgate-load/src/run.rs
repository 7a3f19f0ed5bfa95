//! One load run: preflight, connections, the pacer, the workers, the tally,
//! and the report.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use serde::{Deserialize, Serialize};
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::cpu::{self, Usage};
use crate::direct::Engine;
use crate::http::{Conn, Prepared, RawConn, ReqwestConn, Target};
use crate::mix::Mix;
use crate::schedule::{Job, Pacer, Schedule};
use crate::stats::Summary;
use crate::tally::{DecisionView, Tally, nanos};

/// Which HTTP client the workers use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ClientKind {
    /// The minimal built-in HTTP/1.1 client (accurate, cheap).
    Raw,
    /// reqwest over hyper, one connection per worker (for cross-checking).
    Reqwest,
}

/// Everything a run needs.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// Where and as whom.
    pub target: Target,
    /// The request rate.
    pub schedule: Schedule,
    /// Sent but not recorded, to warm connections, caches and the allocator.
    pub warmup: Duration,
    /// The measured phase.
    pub duration: Duration,
    /// Keep-alive connections, each carrying one request at a time.
    pub connections: usize,
    /// How long one request may take before it counts as a timeout.
    pub timeout: Duration,
    /// What to send.
    pub mix: Mix,
    /// Which client.
    pub client: ClientKind,
    /// The daemon's pid, to report its CPU use.
    pub daemon_pid: Option<u32>,
}

/// The part of an error answer the generator reads.
#[derive(Deserialize)]
struct ErrorView {
    error: ErrorBody,
}

#[derive(Deserialize)]
struct ErrorBody {
    code: String,
    message: String,
}

/// A clear sentence for a refused preflight request.
pub(crate) fn explain_status(status: u16, body: &[u8], url: &str) -> String {
    let detail = serde_json::from_slice::<ErrorView>(body)
        .map(|e| format!(" ({}: {})", e.error.code, e.error.message))
        .unwrap_or_else(|_| {
            let text = String::from_utf8_lossy(body);
            let text = text.trim();
            if text.is_empty() {
                String::new()
            } else {
                format!(" ({})", truncate(text, 200))
            }
        });
    match status {
        401 => format!(
            "the token was refused: pass the agent token from <data dir>/agent.token or TOOLGATE_AGENT_TOKEN{detail}"
        ),
        403 => format!(
            "the token was accepted but may not check calls: pass the agent (or operator) token{detail}"
        ),
        404 => format!("{url} answered 404: is this a toolgate daemon (`toolgate serve`)?{detail}"),
        400 | 422 => {
            format!("the daemon rejected the ToolCall as malformed: check the --mix file{detail}")
        }
        413 => format!("the daemon refused the ToolCall as too large (1 MiB at most){detail}"),
        s => format!("{url} answered HTTP {s}{detail}"),
    }
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Sends every distinct body of the mix once, one after another, so that a
/// wrong URL, a refused token or a body the daemon rejects stops the run
/// before it starts, with a clear message.
pub(crate) async fn preflight(plan: &Plan, prepared: &[Prepared]) -> anyhow::Result<()> {
    let url = &plan.target.check_url;
    let mut conn = match plan.client {
        ClientKind::Raw => Conn::Raw(RawConn::connect(plan.target.addr).await.map_err(|e| {
            anyhow::anyhow!(
                "cannot connect to {} ({e}): is `toolgate serve` running and listening there?",
                plan.target.addr
            )
        })?),
        ClientKind::Reqwest => Conn::Reqwest(ReqwestConn::new(&plan.target)?),
    };
    for req in prepared {
        let answer = tokio::time::timeout(plan.timeout, conn.roundtrip(req)).await;
        let (status, body) = match answer {
            Err(_) => bail!(
                "{url} did not answer within {}",
                humantime::format_duration(plan.timeout)
            ),
            Ok(Err(e)) => bail!("{url}: {e}: is `toolgate serve` running and listening there?"),
            Ok(Ok(r)) => r,
        };
        if !(200..300).contains(&status) {
            bail!("{}", explain_status(status, body, url));
        }
        let view: DecisionView = serde_json::from_slice(body)
            .map_err(|e| anyhow::anyhow!("{url} answered 2xx but not with a Decision ({e})"))?;
        if view.decision.is_none() {
            bail!("{url} answered 2xx but with no \"decision\" field: is this a toolgate daemon?");
        }
    }
    Ok(())
}

/// What [`run`] returns: the tally of the measured phase, when that phase
/// began, and the CPU use during it.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The counts and samples.
    pub tally: Tally,
    /// When the measured phase began (the end of the warm-up).
    pub measured_start: Instant,
    /// CPU use from the end of the warm-up to the last answer.
    pub cpu: Usage,
}

/// Runs the plan: opens the connections, starts the pacer, and returns the
/// tally of the measured phase.
pub(crate) async fn run(plan: &Plan) -> anyhow::Result<Outcome> {
    let prepared: Arc<Vec<Prepared>> = Arc::new(
        plan.mix
            .bodies
            .iter()
            .map(|b| Prepared {
                raw: plan.target.raw_request(b),
                body: b.clone(),
            })
            .collect(),
    );
    preflight(plan, &prepared).await?;

    let warmup_n = plan.schedule.count_before(plan.warmup);
    let total = plan.schedule.count_before(plan.warmup + plan.duration);
    // Request 0 is due a moment after setup, so every task is waiting for it.
    let start = Instant::now() + Duration::from_millis(50);
    let measured_start = start + plan.warmup;
    // Requests still queued this long after the last one was due are not sent.
    let deadline = start + plan.warmup + plan.duration + plan.timeout;
    let daemon_pid = plan.daemon_pid;
    let cpu_before = tokio::spawn(async move {
        tokio::time::sleep_until(measured_start.into()).await;
        cpu::Sample::take(daemon_pid)
    });

    let tally = match plan.client {
        ClientKind::Raw => {
            // Open every connection before the clock starts.
            let mut streams = Vec::with_capacity(plan.connections);
            for n in 1..=plan.connections {
                let s = TcpStream::connect(plan.target.addr).await.map_err(|e| {
                    anyhow::anyhow!("cannot open connection {n} to {}: {e}", plan.target.addr)
                })?;
                s.set_nodelay(true)?;
                streams.push(s);
            }
            let engine = Engine {
                schedule: plan.schedule,
                start,
                warmup_n,
                total,
                deadline,
                timeout: plan.timeout,
                addr: plan.target.addr,
                requests: Arc::new(prepared.iter().map(|p| p.raw.clone()).collect()),
                mix: plan.mix.clone(),
            };
            engine.run(streams).await?
        }
        ClientKind::Reqwest => {
            let (tx, rx) = unbounded_channel();
            let rx = Arc::new(Mutex::new(rx));
            let mut tasks = Vec::with_capacity(plan.connections);
            for _ in 0..plan.connections {
                let worker = Worker {
                    rx: Arc::clone(&rx),
                    prepared: Arc::clone(&prepared),
                    mix: plan.mix.clone(),
                    warmup_n,
                    deadline,
                    timeout: plan.timeout,
                };
                let conn = Conn::Reqwest(ReqwestConn::new(&plan.target)?);
                tasks.push(tokio::spawn(worker.run(conn)));
            }
            let pacer = Pacer::spawn(plan.schedule, start, warmup_n, total, tx);
            let mut tally = Tally::default();
            for task in tasks {
                tally.merge(task.await?);
            }
            tally.timer_lag_ns = pacer.stop();
            tally
        }
    };
    let cpu_after = cpu::Sample::take(daemon_pid);
    let cpu = Usage::between(&cpu_before.await?, &cpu_after);
    Ok(Outcome {
        tally,
        measured_start,
        cpu,
    })
}

/// A reqwest worker: takes the next due request from the pacer's queue and
/// sends it on its own client.
struct Worker {
    rx: Arc<Mutex<UnboundedReceiver<Job>>>,
    prepared: Arc<Vec<Prepared>>,
    mix: Mix,
    warmup_n: u64,
    deadline: Instant,
    timeout: Duration,
}

impl Worker {
    async fn run(self, mut conn: Conn) -> Tally {
        let mut t = Tally::default();
        loop {
            let job = { self.rx.lock().await.recv().await };
            let Some(job) = job else { break };
            let measured = job.index >= self.warmup_n;
            let now = Instant::now();
            if now > self.deadline {
                if measured {
                    t.unsent += 1;
                }
                continue;
            }
            let req = &self.prepared[self.mix.pick(job.index)];
            if measured {
                t.sent += 1;
                t.send_lag_ns
                    .push(nanos(now.saturating_duration_since(job.intended)));
            }
            let answer = tokio::time::timeout(self.timeout, conn.roundtrip(req)).await;
            let done = Instant::now();
            if !measured {
                continue;
            }
            match answer {
                Err(_) => {
                    t.timeouts += 1;
                    t.last_done = t.last_done.max(Some(done));
                }
                Ok(Err(e)) => t.failed(done, e.to_string()),
                Ok(Ok((status, body))) => t.answer(job.intended, done, status, body),
            }
        }
        t
    }
}

/// The figures a run prints, in microseconds.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// The check endpoint.
    pub url: String,
    /// The mix's name.
    pub mix: String,
    /// The client used.
    pub client: ClientKind,
    /// The target rate, requests per second.
    pub target_rps: f64,
    /// Measured answers (any status) per second over the measured phase,
    /// from its start to the last answer.
    pub achieved_rps: f64,
    /// Length of the measured phase, seconds.
    pub duration_s: f64,
    /// Warm-up before it, seconds.
    pub warmup_s: f64,
    /// Keep-alive connections.
    pub connections: usize,
    /// Measured requests scheduled.
    pub scheduled: u64,
    /// Measured requests sent.
    pub sent: u64,
    /// 2xx answers.
    pub ok: u64,
    /// Everything that was not a 2xx answer: non-2xx + timeouts + I/O errors.
    pub errors: u64,
    /// Non-2xx answers by status.
    pub non_2xx: BTreeMap<String, u64>,
    /// Requests with no answer in time.
    pub timeouts: u64,
    /// Connection failures by message.
    pub io_errors: BTreeMap<String, u64>,
    /// Measured requests never sent (the daemon fell too far behind).
    pub unsent: u64,
    /// Decisions seen in 2xx answers.
    pub decisions: BTreeMap<String, u64>,
    /// Latency of 2xx answers from the intended send time, µs.
    pub latency_us: Summary,
    /// How late requests left the generator (included in `latency_us`):
    /// timer lateness plus any wait for a free connection, µs.
    pub send_lag_us: Summary,
    /// How late the generator's timer woke, µs: its own error.
    pub timer_lag_us: Summary,
    /// The most measured requests waiting at once for a free connection
    /// (raw client only).
    pub max_queued: u64,
    /// The daemon's own `elapsed_us` per decision, µs.
    pub server_elapsed_us: Summary,
    /// The first non-2xx answer, explained.
    pub first_error: Option<String>,
    /// CPU use during the measured phase, percent of one core.
    pub cpu: Usage,
}

impl Report {
    /// Builds the report of a finished run.
    pub(crate) fn new(plan: &Plan, outcome: Outcome) -> Self {
        let Outcome {
            tally,
            measured_start,
            cpu,
        } = outcome;
        let answered = tally.ok + tally.statuses.values().sum::<u64>();
        let span = tally
            .last_done
            .map(|t| t.saturating_duration_since(measured_start))
            .unwrap_or_default()
            .max(plan.duration);
        let non_2xx_total: u64 = tally.statuses.values().sum();
        let io_total: u64 = tally.io_errors.values().sum();
        Self {
            url: plan.target.check_url.clone(),
            mix: plan.mix.name.clone(),
            client: plan.client,
            target_rps: plan.schedule.rate(),
            achieved_rps: answered as f64 / span.as_secs_f64(),
            duration_s: plan.duration.as_secs_f64(),
            warmup_s: plan.warmup.as_secs_f64(),
            connections: plan.connections,
            scheduled: plan.schedule.count_before(plan.warmup + plan.duration)
                - plan.schedule.count_before(plan.warmup),
            sent: tally.sent,
            ok: tally.ok,
            errors: non_2xx_total + tally.timeouts + io_total,
            non_2xx: tally
                .statuses
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect(),
            timeouts: tally.timeouts,
            io_errors: tally.io_errors,
            unsent: tally.unsent,
            decisions: tally.decisions,
            latency_us: Summary::of(tally.latency_ns).scaled(1000),
            send_lag_us: Summary::of(tally.send_lag_ns).scaled(1000),
            timer_lag_us: Summary::of(tally.timer_lag_ns).scaled(1000),
            max_queued: tally.max_queued,
            server_elapsed_us: Summary::of(tally.server_us),
            first_error: tally
                .first_error_body
                .map(|(s, body)| explain_status(s, body.as_bytes(), &plan.target.check_url)),
            cpu,
        }
    }

    /// The columns of [`Report::row`]: title, unit, width.
    const COLUMNS: [(&'static str, &'static str, usize); 16] = [
        ("rate", "req/s", 7),
        ("achieved", "req/s", 8),
        ("sent", "", 7),
        ("ok", "", 7),
        ("errors", "", 6),
        ("unsent", "", 6),
        ("p50", "µs", 7),
        ("p90", "µs", 7),
        ("p99", "µs", 7),
        ("p99.9", "µs", 7),
        ("max", "µs", 7),
        ("daemon", "p99 µs", 7),
        ("timer", "p99 µs", 7),
        ("daemon", "cpu%", 6),
        ("gen", "cpu%", 6),
        ("other", "cpu%", 6),
    ];

    fn line_of(cells: &[String], last: &str) -> String {
        let mut line = String::new();
        for (cell, (_, _, width)) in cells.iter().zip(Self::COLUMNS) {
            let pad = width.saturating_sub(cell.chars().count());
            line.push_str(&" ".repeat(pad + usize::from(!line.is_empty())));
            line.push_str(cell);
        }
        format!("{line}  {last}").trim_end().to_owned()
    }

    /// The column titles of [`Report::row`], two lines (names, units).
    pub(crate) fn row_header() -> String {
        let names: Vec<String> = Self::COLUMNS.iter().map(|c| c.0.to_owned()).collect();
        let units: Vec<String> = Self::COLUMNS.iter().map(|c| c.1.to_owned()).collect();
        format!(
            "{}\n{}",
            Self::line_of(&names, "decisions"),
            Self::line_of(&units, "")
        )
    }

    /// The figures on one line, for a table of runs (`scripts/load`).
    pub(crate) fn row(&self) -> String {
        let pct = |p: Option<f64>| p.map_or("?".to_owned(), |p| format!("{p:.0}"));
        let l = &self.latency_us;
        let cells = [
            format!("{:.0}", self.target_rps),
            format!("{:.1}", self.achieved_rps),
            self.sent.to_string(),
            self.ok.to_string(),
            self.errors.to_string(),
            self.unsent.to_string(),
            l.p50.to_string(),
            l.p90.to_string(),
            l.p99.to_string(),
            l.p999.to_string(),
            l.max.to_string(),
            // `-` when the answers carried no elapsed_us (not a toolgate
            // daemon: the nginx yardstick of scripts/load).
            if self.server_elapsed_us.count == 0 {
                "-".to_owned()
            } else {
                self.server_elapsed_us.p99.to_string()
            },
            self.timer_lag_us.p99.to_string(),
            pct(self.cpu.daemon_pct),
            pct(self.cpu.generator_pct),
            pct(self.cpu.other_pct),
        ];
        let decisions: Vec<String> = self
            .decisions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        Self::line_of(&cells, &decisions.join(", "))
    }

    /// The human-readable report.
    pub(crate) fn text(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "toolgate-load  {}  mix {}  client {}  {} connections  {}s measured after {}s warm-up",
            self.url,
            self.mix,
            serde_plain(&self.client),
            self.connections,
            self.duration_s,
            self.warmup_s
        );
        let _ = writeln!(
            o,
            "rate        target {:.0} req/s   achieved {:.1} req/s",
            self.target_rps, self.achieved_rps
        );
        let _ = writeln!(
            o,
            "requests    scheduled {}   sent {}   ok {}   errors {} (non-2xx {}, timeouts {}, connection {})   unsent {}",
            self.scheduled,
            self.sent,
            self.ok,
            self.errors,
            self.non_2xx.values().sum::<u64>(),
            self.timeouts,
            self.io_errors.values().sum::<u64>(),
            self.unsent
        );
        let line = |s: &Summary| {
            format!(
                "p50 {}   p90 {}   p99 {}   p99.9 {}   max {}   (mean {}, n {})",
                s.p50, s.p90, s.p99, s.p999, s.max, s.mean, s.count
            )
        };
        let _ = writeln!(o, "latency µs  {}", line(&self.latency_us));
        let _ = writeln!(o, "  send lag  {}", line(&self.send_lag_us));
        let _ = writeln!(o, "  timer lag {}", line(&self.timer_lag_us));
        if self.server_elapsed_us.count > 0 {
            let _ = writeln!(o, "  daemon    {}", line(&self.server_elapsed_us));
        }
        let decisions: Vec<String> = self
            .decisions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            o,
            "decisions   {}",
            if decisions.is_empty() {
                "none".into()
            } else {
                decisions.join("   ")
            }
        );
        for (status, n) in &self.non_2xx {
            let _ = writeln!(o, "error       HTTP {status} × {n}");
        }
        for (msg, n) in &self.io_errors {
            let _ = writeln!(o, "error       {msg} × {n}");
        }
        let pct = |p: Option<f64>| p.map_or("?".to_owned(), |p| format!("{p:.0}%"));
        if self.cpu.machine_pct.is_some() {
            let _ = write!(
                o,
                "cpu         machine {} (of {}%: {} cores)   generator {}",
                pct(self.cpu.machine_pct),
                self.cpu.cores * 100,
                self.cpu.cores,
                pct(self.cpu.generator_pct)
            );
            if self.cpu.daemon_pct.is_some() {
                let _ = write!(
                    o,
                    "   daemon {}   other processes {}",
                    pct(self.cpu.daemon_pct),
                    pct(self.cpu.other_pct)
                );
            }
            let _ = writeln!(o);
        }
        if let Some(e) = &self.first_error {
            let _ = writeln!(o, "first error {e}");
        }
        let _ = writeln!(
            o,
            "(latency: 2xx answers, from each request's intended send time, so queueing behind a stall counts; \
             send lag: how late requests went out, included in latency: the timer's lateness plus any wait \
             for a free connection; timer lag: the generator's own lateness; \
             daemon: the Decision's own elapsed_us, deciding plus the durable commit)"
        );
        if self.unsent > 0 {
            let _ = writeln!(
                o,
                "warning: {} requests were never sent (every connection stayed busy past the run's end): \
                 the daemon could not keep up at this rate, and the latency figures leave those out",
                self.unsent
            );
        }
        if self.cpu.other_pct.is_some_and(|p| p >= 20.0) {
            let _ = writeln!(
                o,
                "warning: other processes used {} of the CPU during the run: these figures are not from a quiet machine",
                pct(self.cpu.other_pct)
            );
        }
        if self.max_queued > 0 {
            let _ = writeln!(
                o,
                "note: at times all {} connections were busy (up to {} requests waited for one): \
                 that wait is in the latency, as it would be for a caller",
                self.connections, self.max_queued
            );
        }
        if self.timer_lag_us.p99 > 200 {
            let _ = writeln!(
                o,
                "note: the generator's timer woke {} µs late at p99 (it shares the CPU with the daemon); \
                 latency includes this",
                self.timer_lag_us.p99
            );
        }
        o
    }
}

fn serde_plain(c: &ClientKind) -> &'static str {
    match c {
        ClientKind::Raw => "raw",
        ClientKind::Reqwest => "reqwest",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{read_some, write_all};
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn refusals_are_explained() {
        let body = br#"{"error":{"code":"unauthorized","message":"missing or unknown token"}}"#;
        let m = explain_status(401, body, "http://x/v1/check");
        assert!(m.starts_with("the token was refused: pass the agent token from <data dir>/agent.token or TOOLGATE_AGENT_TOKEN"), "{m}");
        assert!(m.contains("unauthorized: missing or unknown token"));
        assert!(explain_status(404, b"", "http://x/v1/check").contains("toolgate serve"));
        assert!(explain_status(503, b"busy", "u").contains("HTTP 503 (busy)"));
    }

    /// How the stand-in daemon misbehaves.
    #[derive(Clone, Copy, Default)]
    struct Quirks {
        /// Answer with this status after the first answer (200: never).
        status_after: u16,
        /// Close the connection after every n-th answer.
        close_every: Option<u64>,
        /// Never answer every n-th request.
        silent_every: Option<u64>,
        /// Wait this long before each answer.
        delay: Duration,
    }

    const FINE: Quirks = Quirks {
        status_after: 200,
        close_every: None,
        silent_every: None,
        delay: Duration::ZERO,
    };

    /// A stand-in daemon: answers each request with a small Decision
    /// (`block` for `rm -rf`, else `allow`), with the given quirks.
    async fn fake_daemon(q: Quirks, answered: Arc<AtomicU64>) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (s, _) = listener.accept().await.unwrap();
                let answered = Arc::clone(&answered);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        // One request: headers, then Content-Length bytes.
                        let (head_end, len) = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                let head = String::from_utf8_lossy(&buf[..i]).to_ascii_lowercase();
                                let len: usize = head
                                    .lines()
                                    .find_map(|l| l.strip_prefix("content-length:"))
                                    .map(|v| v.trim().parse().unwrap())
                                    .unwrap_or(0);
                                if buf.len() >= i + 4 + len {
                                    break (i + 4, len);
                                }
                            }
                            match read_some(&s, &mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        };
                        let n = answered.fetch_add(1, Ordering::Relaxed);
                        let body =
                            String::from_utf8_lossy(&buf[head_end..head_end + len]).into_owned();
                        buf.drain(..head_end + len);
                        if q.silent_every.is_some_and(|k| n > 0 && n.is_multiple_of(k)) {
                            continue;
                        }
                        if !q.delay.is_zero() {
                            tokio::time::sleep(q.delay).await;
                        }
                        let (status, answer) = if q.status_after != 200 && n > 0 {
                            (
                                q.status_after,
                                r#"{"error":{"code":"x","message":"y"}}"#.to_owned(),
                            )
                        } else if body.contains("rm -rf") {
                            (200, r#"{"decision":"block","elapsed_us":7}"#.to_owned())
                        } else {
                            (200, r#"{"decision":"allow","elapsed_us":3}"#.to_owned())
                        };
                        let close = q.close_every.is_some_and(|k| n % k == k - 1);
                        let reply = format!(
                            "HTTP/1.1 {status} X\r\ncontent-length: {}\r\n{}\r\n{answer}",
                            answer.len(),
                            if close { "connection: close\r\n" } else { "" }
                        );
                        if write_all(&s, reply.as_bytes()).await.is_err() || close {
                            return;
                        }
                    }
                });
            }
        });
        addr
    }

    async fn plan_for(addr: std::net::SocketAddr, client: ClientKind) -> Plan {
        Plan {
            target: Target::resolve(&format!("http://{addr}"), "tok").await.unwrap(),
            schedule: Schedule::new(2000.0).unwrap(),
            warmup: Duration::from_millis(100),
            duration: Duration::from_millis(500),
            connections: 4,
            timeout: Duration::from_secs(2),
            mix: Mix::from_jsonl(
                "t",
                "{\"tool\":\"exec\",\"params\":{\"command\":\"ls\"}}\n{\"tool\":\"exec\",\"params\":{\"command\":\"rm -rf ~\"}}\n",
            )
            .unwrap(),
            client,
            daemon_pid: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_sends_exactly_the_schedule_and_counts_decisions() {
        for client in [ClientKind::Raw, ClientKind::Reqwest] {
            let answered = Arc::new(AtomicU64::new(0));
            let addr = fake_daemon(FINE, Arc::clone(&answered)).await;
            let plan = plan_for(addr, client).await;
            let r = Report::new(&plan, run(&plan).await.unwrap());
            assert_eq!(r.scheduled, 1000, "{client:?}");
            assert_eq!(
                (r.sent, r.ok, r.errors, r.unsent),
                (1000, 1000, 0, 0),
                "{client:?}"
            );
            // Preflight (2 bodies) + warm-up (200) + measured (1000).
            assert_eq!(answered.load(Ordering::Relaxed), 1202, "{client:?}");
            assert_eq!(r.decisions.get("allow"), Some(&500));
            assert_eq!(r.decisions.get("block"), Some(&500));
            assert_eq!(r.latency_us.count, 1000);
            assert!(r.latency_us.p50 <= r.latency_us.p99 && r.latency_us.p99 <= r.latency_us.max);
            assert_eq!(r.server_elapsed_us.min, 3);
            assert_eq!(r.server_elapsed_us.max, 7);
            // How fast the run went depends on the machine; that it was
            // measured at all does not.
            assert!(
                r.achieved_rps.is_finite() && r.achieved_rps > 0.0,
                "{}",
                r.achieved_rps
            );
            let json = serde_json::to_value(&r).unwrap();
            assert_eq!(json["latency_us"]["count"], 1000);
            assert!(
                r.text().contains("decisions   allow 500   block 500"),
                "{}",
                r.text()
            );
            let row = r.row();
            assert!(row.starts_with("   2000 "), "{row}");
            assert!(row.ends_with("  allow 500, block 500"), "{row}");
            let header = Report::row_header();
            let first = header.lines().next().unwrap();
            assert_eq!(
                first.find("decisions"),
                row.find("allow"),
                "columns line up:\n{header}\n{row}"
            );
        }
    }

    #[tokio::test]
    async fn errors_are_counted_not_timed() {
        let answered = Arc::new(AtomicU64::new(0));
        // Preflight's first answer is fine; everything after is a 503.
        let addr = fake_daemon(
            Quirks {
                status_after: 503,
                ..FINE
            },
            Arc::clone(&answered),
        )
        .await;
        let mut plan = plan_for(addr, ClientKind::Raw).await;
        plan.mix =
            Mix::from_jsonl("t", "{\"tool\":\"exec\",\"params\":{\"command\":\"ls\"}}\n").unwrap();
        let r = Report::new(&plan, run(&plan).await.unwrap());
        assert_eq!((r.sent, r.ok, r.errors), (1000, 0, 1000));
        assert_eq!(r.non_2xx.get("503"), Some(&1000));
        assert_eq!(r.latency_us.count, 0);
        assert!(r.first_error.as_deref().unwrap().contains("HTTP 503"));
    }

    #[tokio::test]
    async fn closed_connections_are_reopened_without_losing_requests() {
        for client in [ClientKind::Raw, ClientKind::Reqwest] {
            let answered = Arc::new(AtomicU64::new(0));
            let addr = fake_daemon(
                Quirks {
                    close_every: Some(7),
                    ..FINE
                },
                Arc::clone(&answered),
            )
            .await;
            let plan = plan_for(addr, client).await;
            let r = Report::new(&plan, run(&plan).await.unwrap());
            assert_eq!(
                (r.sent, r.ok, r.errors, r.unsent),
                (1000, 1000, 0, 0),
                "{client:?}: {}",
                r.text()
            );
        }
    }

    #[tokio::test]
    async fn lost_answers_time_out_and_the_connection_is_replaced() {
        for client in [ClientKind::Raw, ClientKind::Reqwest] {
            let answered = Arc::new(AtomicU64::new(0));
            let addr = fake_daemon(
                Quirks {
                    silent_every: Some(100),
                    ..FINE
                },
                Arc::clone(&answered),
            )
            .await;
            let mut plan = plan_for(addr, client).await;
            plan.timeout = Duration::from_millis(150);
            let r = Report::new(&plan, run(&plan).await.unwrap());
            // Every 100th request after preflight goes unanswered. (On a
            // busy machine a slow debug build may leave a few unsent.)
            assert!((3..=13).contains(&r.timeouts), "{client:?}: {}", r.text());
            assert_eq!(r.sent + r.unsent, 1000, "{client:?}");
            assert_eq!(r.ok + r.timeouts, r.sent, "{client:?}: {}", r.text());
            assert_eq!(r.latency_us.count, r.ok);
        }
    }

    #[tokio::test]
    async fn a_daemon_too_slow_for_the_rate_shows_queueing_and_unsent_requests() {
        let answered = Arc::new(AtomicU64::new(0));
        // 2 connections × 20 ms per answer = 100 answers/s, asked for 2000/s.
        let addr = fake_daemon(
            Quirks {
                delay: Duration::from_millis(20),
                ..FINE
            },
            Arc::clone(&answered),
        )
        .await;
        let mut plan = plan_for(addr, ClientKind::Raw).await;
        plan.connections = 2;
        plan.warmup = Duration::ZERO;
        plan.duration = Duration::from_millis(300);
        plan.timeout = Duration::from_millis(200);
        let started = Instant::now();
        let r = Report::new(&plan, run(&plan).await.unwrap());
        assert_eq!(r.scheduled, 600);
        assert_eq!(r.sent + r.unsent, 600, "{}", r.text());
        assert!(r.unsent > 500, "{}", r.text());
        assert!(r.ok >= 10 && r.ok <= 60, "{}", r.text());
        // Queued requests are charged their wait: the median is far above 20 ms.
        assert!(r.latency_us.p50 > 100_000, "{}", r.text());
        assert!(r.text().contains("never sent"));
        // The run stops at its deadline instead of draining the backlog.
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[tokio::test]
    async fn a_refused_token_stops_the_run_before_it_starts() {
        let answered = Arc::new(AtomicU64::new(1)); // every answer refused
        let addr = fake_daemon(
            Quirks {
                status_after: 401,
                ..FINE
            },
            answered,
        )
        .await;
        let plan = plan_for(addr, ClientKind::Raw).await;
        let err = run(&plan).await.unwrap_err().to_string();
        assert!(err.starts_with("the token was refused"), "{err}");
    }

    /// `scripts/load` reads a row by whitespace-separated fields (1-based
    /// awk `$2` achieved, `$5` errors, `$6` unsent, `$7` p50, `$9` p99,
    /// `$10` p99.9): keep them there.
    #[tokio::test]
    async fn a_row_has_p99_9_where_scripts_load_reads_it() {
        let mut plan = plan_for("127.0.0.1:9".parse().unwrap(), ClientKind::Raw).await;
        plan.duration = Duration::from_secs(10);
        // 1..=10,000 µs: p50 5000, p99 9900, p99.9 9990 (nearest rank).
        let tally = Tally {
            sent: 10_000,
            ok: 10_000,
            latency_ns: (1..=10_000u64).rev().map(|us| us * 1000).collect(),
            ..Tally::default()
        };
        let r = Report::new(
            &plan,
            Outcome {
                tally,
                measured_start: Instant::now(),
                cpu: Usage::default(),
            },
        );
        assert_eq!(
            (r.latency_us.p50, r.latency_us.p99, r.latency_us.p999),
            (5000, 9900, 9990)
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["latency_us"]["p99_9"], 9990);
        let row = r.row();
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(fields[1], "1000.0", "{row}");
        assert_eq!((fields[4], fields[5]), ("0", "0"), "{row}");
        assert_eq!(
            (fields[6], fields[8], fields[9]),
            ("5000", "9900", "9990"),
            "{row}"
        );
        // No elapsed_us in the answers (nginx): the daemon column says so.
        assert_eq!(fields[11], "-", "{row}");
        // The figure sits under its title.
        let header = Report::row_header();
        let titles = header.lines().next().unwrap();
        let title_end = titles.find(" p99.9").unwrap() + " p99.9".len();
        let value_end = row.find(" 9990").unwrap() + " 9990".len();
        assert_eq!(title_end, value_end, "\n{header}\n{row}");
        assert!(r.text().contains("p99 9900   p99.9 9990"), "{}", r.text());
    }

    #[tokio::test]
    async fn nothing_listening_is_a_clear_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let plan = plan_for(addr, ClientKind::Raw).await;
        let err = run(&plan).await.unwrap_err().to_string();
        assert!(err.contains("is `toolgate serve` running"), "{err}");
    }
}
