//! What the knowledge layer does with what was found: nothing, show it
//! (advisory), or hold the call until it is acknowledged — and the text the
//! agent reads. Pure: acknowledgements are looked up by the caller.

use super::memory::{Category, Memory};
use super::settings::{Enforcement, KnowledgeSettings, SopReason};
use super::sop::{SectionKind, Sop};
use std::sync::Arc;

/// One SOP that applies to a call, and why.
#[derive(Debug, Clone)]
pub struct FoundSop {
    /// The parsed SOP (shared with the cache that read it).
    pub sop: Arc<Sop>,
    /// Why it applies.
    pub reason: SopReason,
}

/// The knowledge found for one call.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// SOPs with at least one extracted section.
    pub sops: Vec<FoundSop>,
    /// Memories above the call's confidence threshold, best first.
    pub memories: Vec<Memory>,
}

impl Found {
    /// True when nothing applies.
    pub fn is_empty(&self) -> bool {
        self.sops.is_empty() && self.memories.is_empty()
    }

    /// Every item's acknowledgement key.
    pub fn keys(&self) -> Vec<String> {
        self.sops
            .iter()
            .map(|s| s.sop.key())
            .chain(self.memories.iter().map(Memory::key))
            .collect()
    }

    /// The keys of the items `settings` enforces (all of them under strict
    /// enforcement, those in a blocking category under `category`, none
    /// otherwise). SOPs count as `process` knowledge.
    pub fn enforced_keys(&self, settings: &KnowledgeSettings) -> Vec<String> {
        let blocks = |cats: &[Category]| match settings.enforcement {
            Enforcement::Strict => true,
            Enforcement::Category => cats.iter().any(|c| settings.block_categories.contains(c)),
            Enforcement::Advisory | Enforcement::Disabled => false,
        };
        let sops = self
            .sops
            .iter()
            .filter(|_| blocks(&[Category::Process]))
            .map(|s| s.sop.key());
        let mems = self
            .memories
            .iter()
            .filter(|m| blocks(&m.categories))
            .map(Memory::key);
        sops.chain(mems).collect()
    }
}

/// What the layer does with a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing applies, or all of it was acknowledged recently.
    Nothing,
    /// Show the knowledge; the call is not held by this layer.
    Advise,
    /// Hold the call until these keys are acknowledged.
    Require(Vec<String>),
}

/// The outcome for `found` under `settings`, where `acked` says whether a
/// key was acknowledged recently (in the call's scope). Acknowledged
/// knowledge neither holds the call nor is shown again within the cooldown.
pub fn outcome(
    settings: &KnowledgeSettings,
    found: &Found,
    acked: &dyn Fn(&str) -> bool,
) -> Outcome {
    if !settings.enabled() || found.is_empty() {
        return Outcome::Nothing;
    }
    let pending: Vec<String> = found
        .enforced_keys(settings)
        .into_iter()
        .filter(|k| !acked(k))
        .collect();
    if !pending.is_empty() {
        return Outcome::Require(pending);
    }
    if found.keys().iter().all(|k| acked(k)) {
        Outcome::Nothing
    } else {
        Outcome::Advise
    }
}

/// How the agent can acknowledge held knowledge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckHint {
    /// The id of the shown record.
    pub id: String,
    /// The cooldown, as people write it (`5m`).
    pub cooldown: String,
}

/// The most knowledge text shown for one call, in bytes (before the
/// how-to-acknowledge paragraph).
pub const MAX_RENDERED: usize = 32 * 1024;

/// Who the text is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The agent: credentials appear if the policy allows.
    Agent {
        /// Show credentials sections and memories.
        show_credentials: bool,
    },
    /// Logs and the audit record: credentials never appear.
    Record,
}

/// The knowledge as text for `audience`: each SOP's sections, the memories
/// with their confidences and categories, and, when the call is held, how
/// to acknowledge. Credentials are replaced by a note unless the audience
/// may see them.
pub fn render(found: &Found, audience: Audience, ack: Option<&AckHint>) -> String {
    let creds_ok = matches!(
        audience,
        Audience::Agent {
            show_credentials: true
        }
    );
    let mut out = String::new();
    match ack {
        Some(_) => out.push_str(
            "toolgate: read this knowledge before this call runs. It applies to what you are \
             about to do.\n",
        ),
        None => out.push_str("toolgate: knowledge that applies to this call.\n"),
    }
    for f in &found.sops {
        let s = &f.sop;
        out.push_str(&format!("\n## SOP {}", s.name));
        if let Some(t) = &s.title {
            out.push_str(&format!(" — {t}"));
        }
        out.push_str(&format!(" (matched: {})\n", f.reason));
        for sec in &s.sections {
            out.push_str(&format!("### {}\n", sec.kind));
            if sec.kind == SectionKind::Credentials && !creds_ok {
                let n = sec.text.lines().count();
                out.push_str(&format!(
                    "[credentials section withheld ({n} line{}): ask a person for access]\n",
                    if n == 1 { "" } else { "s" }
                ));
            } else {
                out.push_str(&sec.text);
                out.push('\n');
            }
        }
    }
    if !found.memories.is_empty() {
        out.push_str("\n## Memories\n");
        for m in &found.memories {
            let cats: Vec<&str> = m.categories.iter().map(|c| c.as_str()).collect();
            let src = m
                .source
                .as_deref()
                .map(|s| format!(", source {s}"))
                .unwrap_or_default();
            let text = if m.is_credentials() && !creds_ok {
                "[credentials memory withheld: ask a person for access]".to_string()
            } else {
                m.text.replace('\n', " ")
            };
            out.push_str(&format!(
                "- ({}; confidence {:.2}; {}{src}) {text}\n",
                m.key(),
                m.confidence,
                cats.join(", ")
            ));
        }
    }
    if !creds_ok {
        // A second line of defence: secrets written outside a credentials
        // section (a token in a gotcha) are still masked.
        out = crate::redact::redact_text(&out).into_owned();
    }
    if out.len() > MAX_RENDERED {
        let mut cut = MAX_RENDERED;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str(
            "\n[… cut: more knowledge applies than fits here; `toolgate knowledge show` prints \
             it all]\n",
        );
    }
    if let Some(a) = ack {
        out.push_str(&format!(
            "\nTo acknowledge: having read it, retry the call within {}; or acknowledge id {} \
             (`toolgate knowledge ack {}`, POST /v1/knowledge/ack {{\"id\": \"{}\"}}, or the \
             `toolgate_ack` tool with {{\"id\": \"{}\"}}), then retry. Acknowledged knowledge \
             does not hold your calls again for {}.\n",
            a.cooldown, a.id, a.id, a.id, a.id, a.cooldown
        ));
    }
    out
}

/// A one-line summary for reasons and logs: how many SOPs (by name) and
/// memories. Never contains SOP or memory text.
pub fn summary(found: &Found) -> String {
    let names: Vec<&str> = found.sops.iter().map(|s| s.sop.name.as_str()).collect();
    let mut parts = Vec::new();
    if !names.is_empty() {
        parts.push(format!("SOP {}", names.join(", ")));
    }
    match found.memories.len() {
        0 => {}
        1 => parts.push("1 memory".to_string()),
        n => parts.push(format!("{n} memories")),
    }
    parts.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sop(text: &str) -> FoundSop {
        FoundSop {
            sop: Arc::new(Sop::parse("fleet", "/s/fleet.ai.sop", text)),
            reason: SopReason::Rule(0, "ssh".into()),
        }
    }

    fn mem(id: u64, cats: &[Category], text: &str) -> Memory {
        Memory {
            id,
            text: text.into(),
            categories: cats.to_vec(),
            confidence: 0.9,
            source: Some("inc-7".into()),
            created_ms: 0,
        }
    }

    fn found() -> Found {
        Found {
            sops: vec![sop(
                "## Preflight\ncheck uptime\n## Credentials\nvault: s3cr3t-Pa55\n",
            )],
            memories: vec![
                mem(1, &[Category::Technical], "host .163 reboots slowly"),
                mem(2, &[Category::Credentials], "root pw hunter2"),
            ],
        }
    }

    fn with(level: Enforcement) -> KnowledgeSettings {
        let mut s = KnowledgeSettings::default();
        s.enforcement = level;
        s
    }

    #[test]
    fn each_enforcement_level() {
        let f = found();
        let none = |_: &str| false;
        let Outcome::Require(keys) = outcome(&with(Enforcement::Strict), &f, &none) else {
            panic!()
        };
        assert_eq!(keys.len(), 3);
        assert_eq!(
            outcome(&with(Enforcement::Advisory), &f, &none),
            Outcome::Advise
        );
        assert_eq!(
            outcome(&with(Enforcement::Disabled), &f, &none),
            Outcome::Nothing
        );
        // Category: the SOP (process) holds; technical and credentials memories do not.
        let Outcome::Require(keys) = outcome(&with(Enforcement::Category), &f, &none) else {
            panic!()
        };
        assert_eq!(keys, vec![f.sops[0].sop.key()]);
        let only_mems = Found {
            sops: vec![],
            memories: f.memories.clone(),
        };
        assert_eq!(
            outcome(&with(Enforcement::Category), &only_mems, &none),
            Outcome::Advise
        );
        assert_eq!(
            outcome(&with(Enforcement::Strict), &Found::default(), &none),
            Outcome::Nothing
        );
    }

    #[test]
    fn acknowledged_knowledge_neither_holds_nor_repeats() {
        let f = found();
        let s = with(Enforcement::Strict);
        let all = |_: &str| true;
        assert_eq!(outcome(&s, &f, &all), Outcome::Nothing);
        let sop_key = f.sops[0].sop.key();
        let some = move |k: &str| k == sop_key;
        let Outcome::Require(keys) = outcome(&s, &f, &some) else {
            panic!()
        };
        assert_eq!(keys, vec!["mem:1".to_string(), "mem:2".to_string()]);
    }

    #[test]
    fn credentials_are_withheld_unless_allowed_and_never_recorded() {
        let f = found();
        let hint = AckHint {
            id: "abc".into(),
            cooldown: "5m".into(),
        };
        let agent = render(
            &f,
            Audience::Agent {
                show_credentials: false,
            },
            Some(&hint),
        );
        assert!(
            !agent.contains("s3cr3t") && !agent.contains("hunter2"),
            "{agent}"
        );
        assert!(agent.contains("check uptime") && agent.contains("confidence 0.90"));
        assert!(agent.contains("toolgate knowledge ack abc"));
        let open = render(
            &f,
            Audience::Agent {
                show_credentials: true,
            },
            None,
        );
        assert!(open.contains("s3cr3t-Pa55") && open.contains("hunter2"));
        let mut leaky = found();
        leaky.memories[0].text =
            "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB in a gotcha".into();
        let masked = render(
            &leaky,
            Audience::Agent {
                show_credentials: false,
            },
            None,
        );
        assert!(!masked.contains("ghp_0123456789"), "{masked}");
        let mut huge = found();
        huge.memories[0].text = "x".repeat(100_000);
        let cut = render(
            &huge,
            Audience::Agent {
                show_credentials: false,
            },
            Some(&hint),
        );
        assert!(cut.len() < MAX_RENDERED + 2048 && cut.contains("toolgate knowledge ack abc"));
        let rec = render(&f, Audience::Record, None);
        assert!(!rec.contains("s3cr3t") && !rec.contains("hunter2"));
        assert_eq!(summary(&f), "SOP fleet and 2 memories");
    }
}
