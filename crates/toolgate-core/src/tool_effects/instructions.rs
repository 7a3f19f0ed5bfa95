//! Instructions planted for later: a memory entry or an agent instruction
//! file that claims standing approval or tells the agent to skip checks.
//! Such a text is a block wherever it is written: no approval may stand in
//! for the checks it tells the agent to skip.

use regex::Regex;
use std::sync::LazyLock;

/// What such a text says, as one regex per claim with the words a person
/// reads in the reason.
static CLAIMS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (
            r"(?i)\b(?:standing|blanket|permanent|pre-?|prior)[ -]?approv(?:al|ed)\b",
            "claims standing approval",
        ),
        (
            r"(?i)\b(?:user|owner|admin|operator|security team|i)\b[^.\n]{0,40}\b(?:has|have|already)\b[^.\n]{0,20}\bapproved\b[^.\n]{0,30}\b(?:all|every|any|future|everything)\b",
            "claims standing approval",
        ),
        (
            r"(?i)\b(?:approval|permission|consent|authori[sz]ation)s?\b[^.\n]{0,50}\b(?:permanently|always|already|indefinitely)\s+(?:granted|given|approved)",
            "claims standing approval",
        ),
        (
            r"(?i)\b(?:permanently|indefinitely)\s+(?:granted|approved|authori[sz]ed)\b",
            "claims standing approval",
        ),
        (
            r"(?i)\b(?:auto-?approve|always approve|approve (?:all|every|any)|always allow|allow all)\b",
            "claims standing approval",
        ),
        (
            r"(?i)\b(?:without|no need (?:to|for)|never|don'?t|do not|stop)\s+(?:asking|ask|asking for|requesting|waiting for|seeking)\b[^.\n]{0,30}\b(?:approv|confirm|permission|review|check)",
            "tells the agent not to ask for approval",
        ),
        (
            r"(?i)\b(?:without|no)\s+(?:approval|confirmation|permission|review|checks?)\b",
            "tells the agent to act without approval",
        ),
        (
            r"(?i)\b(?:approval|confirmation|permission|review)s?\s+(?:is|are)\s+(?:not|no longer)\s+(?:needed|required|necessary)\b",
            "tells the agent approval is not needed",
        ),
        (
            r"(?i)\b(?:skip|bypass|ignore|disable|turn off|circumvent|evade|avoid)\s+(?:the\s+|all\s+|any\s+)?(?:safety|security|approval|permission|guard|guardrails?|toolgate|hooks?|checks?|verification|confirmation|policy|policies|review)s?\b",
            "tells the agent to skip checks",
        ),
        (
            r"(?i)\b(?:toolgate|the guard|guardrails?|hooks?)\s+(?:is|are)\s+(?:off|disabled|not needed|optional|broken)\b",
            "tells the agent the guard is off",
        ),
        (
            r"(?i)--dangerously-skip-permissions|--yolo\b|\bbypassPermissions\b|--dangerously-bypass-approvals",
            "tells the agent to run without permission checks",
        ),
    ]
    .into_iter()
    .map(|(re, what)| (Regex::new(re).expect("an instruction-claim regex compiles"), what))
    .collect()
});

/// What a text written into memory or an instruction file claims, when it
/// claims standing approval or tells the agent to skip checks.
pub(crate) fn claims_standing_approval(text: &str) -> Option<&'static str> {
    CLAIMS
        .iter()
        .find(|(re, _)| re.is_match(text))
        .map(|(_, what)| *what)
}
