//! Any bytes as any runtime's hook payload: reading it never panics, and
//! whatever call it yields, a block or escalation of it is answered with
//! something the runtime's answer table says stops the call, in every mode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_core::hooks::{Outcome, ReplyContext, Runtime};
use toolgate_core::{Decision, Layer, RiskClass, Verdict};

fuzz_target!(|data: &[u8]| {
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for r in Runtime::ALL {
        let spec = r.spec();
        let Ok(Some(hc)) = r.to_call(&payload) else {
            continue;
        };
        for verdict in [Verdict::Block, Verdict::Escalate] {
            let d = Decision::new(verdict, RiskClass::R3, 50, Layer::Exec, &hc.call.tool);
            // A block or an escalation must stop the call whatever the
            // policy says about allows.
            for (host_prompt, allow_is_final) in
                [(false, false), (true, false), (false, true), (true, true)]
            {
                let ctx = ReplyContext {
                    mode: hc.mode.as_deref(),
                    host_prompt,
                    allow_is_final,
                };
                let answer = r.reply(&d, &ctx);
                let mode = spec.answers.mode(hc.mode.as_deref());
                let outcome = mode.outcome(answer.kind(spec.classify));
                let ok = outcome == Outcome::Stops
                    || (verdict == Verdict::Escalate
                        && host_prompt
                        && mode.person_at_prompt
                        && outcome == Outcome::PersonDecides);
                assert!(ok, "{r} {:?}: {answer:?}", hc.mode);
            }
        }
    }
});
