//! Decides one command many times, for profilers:
//! `cargo build --release --example profile && valgrind --tool=callgrind target/$(rustc --print host-tuple)/release/examples/profile`.
use toolgate_core::paths::Env;
use toolgate_core::{Engine, Policy, ToolCall};

fn main() {
    let cmd = std::env::args().nth(1).unwrap_or_else(|| "cd /home/dev/proj/web && npm ci --no-audit 2>&1 | tail -20 && npm run lint -- --max-warnings=0 && npm test -- --coverage --watchAll=false > coverage.txt 2>&1; status=$?; for f in dist/*.js; do wc -c \"$f\"; done; if [ $status -ne 0 ]; then echo \"tests failed: $(grep -c FAIL coverage.txt)\"; fi; git log --oneline -5 | cat".to_string());
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let engine = Engine::new(Policy::default());
    let env = Env::new("/home/dev", "/home/dev/proj");
    let call: ToolCall =
        serde_json::from_value(serde_json::json!({"tool": "Bash", "params": {"command": cmd}}))
            .expect("call");
    for _ in 0..n {
        std::hint::black_box(engine.decide(&call, &env));
    }
}
