#![no_main]
//! Shell analysis must never panic, whatever the command text.

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolgate_paths::Env;

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| Env::new("/home/dev", "/home/dev/proj"))
}

fuzz_target!(|data: &[u8]| {
    // Only valid UTF-8 reaches the analyzer in practice (it takes &str);
    // skip the rest so libFuzzer does not spend time on lossy duplicates.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = toolgate_shell::analyze(text, env());
});
