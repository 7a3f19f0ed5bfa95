#![no_main]
//! Policy parsing must never panic: any text yields Ok or a PolicyError.

use libfuzzer_sys::fuzz_target;
use toolgate_core::Policy;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = Policy::from_toml_str(text, "fuzz.toml") {
        // Rendering the error (line/column, snippet) must not panic either.
        let _ = e.to_string();
    }
});
