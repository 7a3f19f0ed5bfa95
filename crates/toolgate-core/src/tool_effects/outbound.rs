//! Secrets in what a call sends: every outgoing argument (message bodies,
//! comments, URLs and their decoded query values, file contents sent
//! elsewhere) is scanned with the redaction's detectors, as written and
//! decoded once (percent-encoding, base64).

use super::Judged;
use crate::model::{RiskClass, Verdict};
use crate::normalize::NormalizedCall;
use base64::Engine as _;

/// The most text scanned per call, decoded forms included; a call that
/// sends more is held rather than judged on part of it.
const MAX_SCANNED: usize = 512 * 1024;

/// Kinds of credential that work as they are: sent out, they are spent.
const LIVE: &[&str] = &[
    "aws-access-key-id",
    "aws-secret-access-key",
    "github-token",
    "anthropic-key",
    "openai-key",
    "slack-token",
    "slack-webhook",
    "stripe-key",
    "google-api-key",
    "private-key",
];

/// The verdict on the secrets a call carries out, given whether where it
/// goes is inside the organisation.
pub(super) fn judge(n: &NormalizedCall, destination_inside: bool) -> Option<Judged> {
    let mut budget = MAX_SCANNED;
    let mut live: Option<String> = None;
    let mut other: Option<String> = None;
    let mut texts: Vec<&str> = crate::normalize::param_strings(&n.params, true);
    texts.extend(n.urls.iter().map(String::as_str));
    for text in texts {
        let Some(kinds) = kinds_in(text, &mut budget) else {
            // What is not read may carry anything: a key past 512 KiB of
            // padding is still a key.
            return Some(Judged {
                verdict: Verdict::Escalate,
                class: RiskClass::R3,
                reason: format!(
                    "{} sends more than {} KiB, past what toolgate scans for credentials",
                    n.tool,
                    MAX_SCANNED / 1024
                ),
                rule: "effects.too-large-to-scan",
            });
        };
        for kind in kinds {
            if LIVE.contains(&kind.as_str()) {
                live.get_or_insert(kind);
            } else {
                other.get_or_insert(kind);
            }
        }
        if live.is_some() {
            break;
        }
    }
    let who = &n.tool;
    match (live, other) {
        (Some(kind), _) if !destination_inside => Some(Judged {
            verdict: Verdict::Block,
            class: RiskClass::R4,
            reason: format!("{who} sends a live credential ({kind}) outside the organisation"),
            rule: "effects.secret-out",
        }),
        (Some(kind), _) => Some(Judged {
            verdict: Verdict::Escalate,
            class: RiskClass::R3,
            reason: format!("{who} carries a live credential ({kind}) in what it sends"),
            rule: "effects.secret-inside",
        }),
        (None, Some(kind)) if !destination_inside => Some(Judged {
            verdict: Verdict::Escalate,
            class: RiskClass::R3,
            reason: format!(
                "{who} sends what looks like a secret ({kind}) outside the organisation"
            ),
            rule: "effects.secret-like-out",
        }),
        _ => None,
    }
}

/// The secret kinds in a text as written, percent-decoded, and with each
/// base64-looking run decoded; `None` once the text, with what it decodes
/// to, is more than `budget` bytes (which it draws down).
fn kinds_in(text: &str, budget: &mut usize) -> Option<Vec<String>> {
    let mut spend = |n: usize| {
        *budget = budget.checked_sub(n)?;
        Some(())
    };
    spend(text.len())?;
    let mut kinds = scan(text);
    if text.contains('%')
        && let Some(decoded) = crate::url::percent_decode(&text.replace('+', " "))
        && decoded != text
    {
        spend(decoded.len())?;
        kinds.extend(scan(&decoded));
    }
    for run in
        text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '-' | '_')))
    {
        if run.len() < 20 {
            continue;
        }
        let run = run.trim_end_matches('=');
        let engines = [
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ];
        if let Some(bytes) = engines.iter().find_map(|e| e.decode(run).ok())
            && let Ok(s) = String::from_utf8(bytes)
        {
            spend(s.len())?;
            kinds.extend(scan(&s));
        }
    }
    Some(kinds)
}

/// The credential formats first (a token assigned to a secret-named
/// variable is still that token), then the other secret shapes.
fn scan(text: &str) -> Vec<String> {
    // A Stripe test key moves no real money.
    let live_stripe = text.contains("sk_live_") || text.contains("rk_live_");
    let mut kinds: Vec<String> = crate::redact::token_kinds(text)
        .into_iter()
        .filter(|k| *k != "stripe-key" || live_stripe)
        .map(str::to_string)
        .collect();
    kinds.extend(crate::redact::secret_kinds(text));
    kinds
}
