//! Fan-out: concurrent delivery, per-target retries, and reports.

mod common;

use async_trait::async_trait;
use common::{Fake, Reply, closed_base, notice};
use serde_json::json;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc};
use toolgate_channels::{
    Channel, ClientOptions, Delivered, DeliveryError, DeliveryState, Notice, Phase, Resolution,
    RetryPolicy, SlackChannel, TargetStatus, TelegramChannel, WebhookChannel, fan_out,
    fan_out_resolved,
};

fn quick(attempts: u32) -> RetryPolicy {
    RetryPolicy {
        attempts,
        first_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
    }
}

/// Collects every report.
fn recorder() -> (
    Arc<Mutex<Vec<TargetStatus>>>,
    impl Fn(TargetStatus) + Send + Sync + 'static,
) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = log.clone();
    (log, move |s| sink.lock().unwrap().push(s))
}

fn states_of(log: &[TargetStatus], kind: &str) -> Vec<DeliveryState> {
    log.iter()
        .filter(|s| s.kind == kind)
        .map(|s| s.state.clone())
        .collect()
}

#[tokio::test]
async fn a_down_target_is_retried_then_failed_while_the_others_deliver() {
    let slack = Fake::start(Reply::json(
        200,
        json!({ "ok": true, "channel": "C1", "ts": "1.1" }),
    ))
    .await;
    let telegram = Fake::start(Reply::json(
        200,
        json!({ "ok": true, "result": { "message_id": 5, "chat": { "id": 9 } } }),
    ))
    .await;
    let down = ClientOptions {
        api_base: None,
        timeout: Duration::from_millis(300),
    };
    let targets: Vec<Arc<dyn Channel>> = vec![
        Arc::new(SlackChannel::new("xoxb-t", "C1", &slack.options()).unwrap()),
        Arc::new(
            WebhookChannel::new(
                &format!("{}/hook", closed_base().await),
                "0123456789abcdef",
                &down,
            )
            .unwrap(),
        ),
        Arc::new(TelegramChannel::new("1:t", "9", &telegram.options()).unwrap()),
    ];
    let (log, report) = recorder();
    let finals = fan_out(&targets, &notice(), quick(3), report).await;

    assert_eq!(finals.len(), 3);
    assert_eq!(finals[0].kind, "slack");
    assert!(matches!(finals[0].state, DeliveryState::Delivered(_)));
    assert_eq!(finals[0].attempts, 1);
    assert_eq!(finals[2].kind, "telegram");
    assert!(matches!(finals[2].state, DeliveryState::Delivered(_)));
    assert_eq!(finals[1].kind, "webhook");
    assert_eq!(finals[1].attempts, 3);
    let DeliveryState::Failed { error } = &finals[1].state else {
        panic!("the down webhook failed: {:?}", finals[1]);
    };
    assert!(error.contains("gave up after 3 tries"), "{error}");
    assert!(finals.iter().all(|s| s.phase == Phase::Request));

    let log = log.lock().unwrap();
    let webhook = states_of(&log, "webhook");
    assert_eq!(webhook.len(), 4, "{webhook:?}");
    assert_eq!(webhook[0], DeliveryState::Pending);
    assert!(matches!(
        webhook[1],
        DeliveryState::Retrying { attempt: 1, .. }
    ));
    assert!(matches!(
        webhook[2],
        DeliveryState::Retrying { attempt: 2, .. }
    ));
    assert!(matches!(webhook[3], DeliveryState::Failed { .. }));
    let slack_states = states_of(&log, "slack");
    assert_eq!(slack_states.len(), 2);
    assert_eq!(slack_states[0], DeliveryState::Pending);
    assert_eq!(slack.seen().len(), 1);
    assert_eq!(telegram.seen().len(), 1);
}

#[tokio::test]
async fn a_transient_failure_is_retried_and_a_permanent_one_is_not() {
    let flaky = Fake::start(Reply::json(
        200,
        json!({ "ok": true, "channel": "C1", "ts": "1.1" }),
    ))
    .await;
    flaky.script([Reply::text(500, "")]);
    let refusing = Fake::start(Reply::json(
        200,
        json!({ "ok": false, "error": "channel_not_found" }),
    ))
    .await;
    let targets: Vec<Arc<dyn Channel>> = vec![
        Arc::new(SlackChannel::new("xoxb-t", "C1", &flaky.options()).unwrap()),
        Arc::new(SlackChannel::new("xoxb-t", "C2", &refusing.options()).unwrap()),
    ];
    let (log, report) = recorder();
    let finals = fan_out(&targets, &notice(), quick(4), report).await;
    assert!(matches!(finals[0].state, DeliveryState::Delivered(_)));
    assert_eq!(finals[0].attempts, 2);
    assert_eq!(flaky.seen().len(), 2);
    let DeliveryState::Failed { error } = &finals[1].state else {
        panic!("refused: {:?}", finals[1]);
    };
    assert!(error.contains("channel_not_found"), "{error}");
    assert_eq!(finals[1].attempts, 1);
    assert_eq!(refusing.seen().len(), 1, "a permanent error is not retried");
    let log = log.lock().unwrap();
    assert!(log.iter().any(|s| s.target == "C1"
        && matches!(&s.state, DeliveryState::Retrying { attempt: 1, error, .. } if error.contains("HTTP 500"))));
}

/// A channel answering from a script, optionally waiting for a gate first.
struct Scripted {
    name: &'static str,
    script: Mutex<VecDeque<Result<(), DeliveryError>>>,
    calls: AtomicU32,
    gate: Option<Arc<Notify>>,
}

impl Scripted {
    fn new(name: &'static str, script: Vec<Result<(), DeliveryError>>) -> Scripted {
        Scripted {
            name,
            script: Mutex::new(script.into()),
            calls: AtomicU32::new(0),
            gate: None,
        }
    }

    fn next(&self) -> Result<(), DeliveryError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.script.lock().unwrap().pop_front().unwrap_or(Ok(()))
    }

    fn delivered(&self) -> Delivered {
        Delivered {
            kind: "fake".into(),
            target: self.name.into(),
            message_ref: json!({ "n": self.name }),
        }
    }
}

#[async_trait]
impl Channel for Scripted {
    fn kind(&self) -> &'static str {
        "fake"
    }

    fn target(&self) -> String {
        self.name.into()
    }

    async fn deliver(&self, _notice: &Notice) -> Result<Delivered, DeliveryError> {
        if let Some(gate) = &self.gate {
            gate.notified().await;
        }
        self.next().map(|()| self.delivered())
    }

    async fn resolved(
        &self,
        _d: &Delivered,
        _n: &Notice,
        _r: &Resolution,
    ) -> Result<(), DeliveryError> {
        self.next()
    }
}

fn limited(after: Duration) -> DeliveryError {
    DeliveryError::RateLimited {
        to: "fake".into(),
        retry_after: Some(after),
    }
}

#[tokio::test]
async fn retry_after_is_honoured_and_an_overlong_one_ends_the_tries() {
    let polite = Arc::new(Scripted::new(
        "polite",
        vec![Err(limited(Duration::from_millis(200)))],
    ));
    let greedy = Arc::new(Scripted::new(
        "greedy",
        vec![Err(limited(Duration::from_secs(3600)))],
    ));
    let targets: Vec<Arc<dyn Channel>> = vec![polite.clone(), greedy.clone()];
    let (log, report) = recorder();
    let policy = RetryPolicy {
        max_delay: Duration::from_secs(1),
        ..quick(5)
    };
    let started = Instant::now();
    let finals = fan_out(&targets, &notice(), policy, report).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(matches!(finals[0].state, DeliveryState::Delivered(_)));
    assert_eq!(polite.calls.load(Ordering::SeqCst), 2);
    let log = log.lock().unwrap();
    let waited = log.iter().find_map(|s| match &s.state {
        DeliveryState::Retrying { next_in_ms, .. } if s.target == "polite" => Some(*next_in_ms),
        _ => None,
    });
    assert!(waited.unwrap() >= 200, "{waited:?}");
    let DeliveryState::Failed { error } = &finals[1].state else {
        panic!("{:?}", finals[1]);
    };
    assert!(error.contains("not retried"), "{error}");
    assert_eq!(greedy.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_stuck_target_never_holds_up_the_others() {
    let gate = Arc::new(Notify::new());
    let stuck = Arc::new(Scripted {
        gate: Some(gate.clone()),
        ..Scripted::new("stuck", vec![])
    });
    let quick_one = Arc::new(Scripted::new("quick", vec![]));
    let targets: Vec<Arc<dyn Channel>> = vec![stuck, quick_one];
    let (tx, mut rx) = mpsc::unbounded_channel();
    let run = tokio::spawn({
        let n = notice();
        async move {
            fan_out(&targets, &n, quick(2), move |s| {
                let _ = tx.send(s);
            })
            .await
        }
    });
    // The quick target reports delivered while the stuck one still waits.
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let s = rx.recv().await.unwrap();
            if s.target == "quick" && matches!(s.state, DeliveryState::Delivered(_)) {
                break;
            }
            assert!(
                !(s.target == "stuck" && matches!(s.state, DeliveryState::Delivered(_))),
                "the stuck target cannot have delivered yet"
            );
        }
    })
    .await
    .expect("the quick target was held up");
    gate.notify_one();
    let finals = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .unwrap()
        .unwrap();
    assert!(
        finals
            .iter()
            .all(|s| matches!(s.state, DeliveryState::Delivered(_)))
    );
}

#[tokio::test]
async fn resolutions_fan_out_with_the_same_retries() {
    let ok = Arc::new(Scripted::new(
        "ok",
        vec![Err(DeliveryError::Server {
            to: "fake ok".into(),
            detail: "HTTP 502".into(),
        })],
    ));
    let gone = Arc::new(Scripted::new(
        "gone",
        vec![Err(DeliveryError::Refused {
            to: "fake gone".into(),
            detail: "message_not_found".into(),
            hint: "check",
        })],
    ));
    let deliveries: Vec<(Arc<dyn Channel>, Delivered)> = vec![
        (ok.clone(), ok.delivered()),
        (gone.clone(), gone.delivered()),
    ];
    let (log, report) = recorder();
    let finals = fan_out_resolved(
        &deliveries,
        &notice(),
        &Resolution::Withdrawn,
        quick(3),
        report,
    )
    .await;
    assert_eq!(finals[0].state, DeliveryState::Delivered(ok.delivered()));
    assert_eq!(finals[0].attempts, 2);
    assert!(matches!(finals[1].state, DeliveryState::Failed { .. }));
    assert_eq!(gone.calls.load(Ordering::SeqCst), 1);
    assert!(
        log.lock()
            .unwrap()
            .iter()
            .all(|s| s.phase == Phase::Resolution)
    );
}
