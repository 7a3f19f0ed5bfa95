//! SOP files (`*.ai.sop`): Markdown whose `## preflight`, `## gotchas` and
//! `## credentials` sections are what an agent must read before acting.
//! Everything else in the file (history, rationale) stays out of the
//! agent's way: only those three sections are extracted.

use sha2::{Digest, Sha256};
use std::fmt;

/// The largest SOP file read, in bytes; a bigger one is a knowledge-source
/// error (an SOP nobody reads before each command is not an SOP).
pub const MAX_SOP_BYTES: usize = 256 * 1024;

/// The file name suffix of an SOP.
pub const SOP_SUFFIX: &str = ".ai.sop";

/// The sections extracted from an SOP.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum SectionKind {
    /// Checks to make before acting.
    Preflight,
    /// Traps.
    Gotchas,
    /// Where the secrets are and how to use them: never audited or logged,
    /// shown to the agent only where the policy says so.
    Credentials,
}

impl SectionKind {
    /// The lowercase heading name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The kind a heading names: its first word, without case or
    /// punctuation (`## Preflight checks`, `## Gotchas:`, `## Pre-flight`).
    fn of_heading(heading: &str) -> Option<SectionKind> {
        let first = heading
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let word: String = first.chars().filter(|c| c.is_ascii_alphabetic()).collect();
        match word.as_str() {
            "preflight" => Some(SectionKind::Preflight),
            "gotchas" | "gotcha" => Some(SectionKind::Gotchas),
            "credentials" | "credential" | "secrets" => Some(SectionKind::Credentials),
            _ => None,
        }
    }
}

impl fmt::Display for SectionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One extracted section: its kind and its text (trimmed, sub-headings kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Which section.
    pub kind: SectionKind,
    /// The Markdown under the heading, up to the next heading of the same
    /// or a higher level.
    pub text: String,
}

/// A parsed SOP: its name (the file name without `.ai.sop`), its title
/// (the first `#` heading), the extracted sections in file order, and a
/// digest of them so an acknowledgement lapses when they change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sop {
    /// The file name without `.ai.sop`.
    pub name: String,
    /// Where it was read from, for people.
    pub origin: String,
    /// The first level-one heading, if any.
    pub title: Option<String>,
    /// The preflight, gotchas and credentials sections, in file order.
    pub sections: Vec<Section>,
    digest: String,
}

impl Sop {
    /// Parses `text` (Markdown) read from `origin`. Sections are ATX
    /// headings (`#` to `######`) whose first word is preflight, gotchas or
    /// credentials, at any depth (one inside another ends it); a heading
    /// inside a fenced code block is not a heading. Two sections of the
    /// same kind are both kept.
    pub fn parse(name: &str, origin: &str, text: &str) -> Sop {
        let mut title = None;
        let mut sections: Vec<Section> = Vec::new();
        // The section being collected and the level of its heading.
        let mut open: Option<(SectionKind, usize, Vec<&str>)> = None;
        let mut fence: Option<&str> = None;
        for line in text.lines() {
            let trimmed = line.trim_start();
            if let Some(f) = fence {
                if trimmed.starts_with(f) {
                    fence = None;
                }
                if let Some((_, _, body)) = open.as_mut() {
                    body.push(line);
                }
                continue;
            }
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fence = Some(&trimmed[..3]);
                if let Some((_, _, body)) = open.as_mut() {
                    body.push(line);
                }
                continue;
            }
            if let Some((level, heading)) = atx_heading(line) {
                if level == 1 && title.is_none() {
                    title = Some(heading.to_string()).filter(|t| !t.is_empty());
                }
                // A heading naming a section starts it even inside another
                // section (`## Preflight` … `### Credentials`): otherwise a
                // nested credentials section would be shown as preflight.
                let named = SectionKind::of_heading(heading);
                let closes = open
                    .as_ref()
                    .is_some_and(|(_, l, _)| level <= *l || named.is_some());
                if closes && let Some((kind, _, body)) = open.take() {
                    push_section(&mut sections, kind, &body);
                }
                if let Some(kind) = named {
                    open = Some((kind, level, Vec::new()));
                    continue;
                }
            }
            if let Some((_, _, body)) = open.as_mut() {
                body.push(line);
            }
        }
        if let Some((kind, _, body)) = open.take() {
            push_section(&mut sections, kind, &body);
        }
        let mut h = Sha256::new();
        for s in &sections {
            h.update(s.kind.as_str().as_bytes());
            h.update([0]);
            h.update(s.text.as_bytes());
            h.update([0]);
        }
        let digest = crate::hex::hex(&h.finalize()[..6]);
        Sop {
            name: name.to_string(),
            origin: origin.to_string(),
            title,
            sections,
            digest,
        }
    }

    /// The acknowledgement key: `sop:<name>:<digest of the sections>`, so
    /// editing the sections asks for a fresh acknowledgement.
    pub fn key(&self) -> String {
        format!("sop:{}:{}", self.name, self.digest)
    }

    /// True when nothing was extracted (the file has none of the sections).
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty()
    }

    /// True when it has a credentials section.
    pub fn has_credentials(&self) -> bool {
        self.sections
            .iter()
            .any(|s| s.kind == SectionKind::Credentials)
    }
}

fn push_section(sections: &mut Vec<Section>, kind: SectionKind, body: &[&str]) {
    let text = body.join("\n").trim().to_string();
    if !text.is_empty() {
        sections.push(Section { kind, text });
    }
}

/// `# Title` → `(1, "Title")`; up to three spaces of indent, a space (or
/// nothing) after the hashes, closing hashes dropped.
fn atx_heading(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let text = after.trim().trim_end_matches('#').trim_end();
    Some((level, text))
}

/// The SOP name of a file name (`fleet.ai.sop` → `fleet`), if it is one.
pub fn sop_name(file_name: &str) -> Option<&str> {
    file_name
        .strip_suffix(SOP_SUFFIX)
        .filter(|n| !n.is_empty() && !n.starts_with('.'))
}

/// True when `name` may name an SOP file: letters, digits, `-`, `_`, `.`,
/// not starting with a dot (no path separators, so a rule or a project
/// name cannot point outside the SOP directories).
pub fn valid_sop_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLEET: &str = "# Fleet operations\n\nWhy this exists: history.\n\n\
        ## Preflight\n- check `uptime` first\n- tell #ops\n\n### Sub-step\nkeep me\n\n\
        ## Background\nnot for agents\n\n\
        ## Gotchas:\n```sh\n## not a heading\nssh -J bastion\n```\nstill gotchas\n\n\
        ## Credentials\nkey in vault at ops/fleet\n\n# Appendix\n## preflight again\ntwo\n";

    #[test]
    fn only_the_three_sections_are_extracted() {
        let s = Sop::parse("fleet", "/sop/fleet.ai.sop", FLEET);
        assert_eq!(s.title.as_deref(), Some("Fleet operations"));
        let kinds: Vec<_> = s.sections.iter().map(|x| x.kind).collect();
        assert_eq!(
            kinds,
            vec![
                SectionKind::Preflight,
                SectionKind::Gotchas,
                SectionKind::Credentials,
                SectionKind::Preflight
            ]
        );
        assert!(s.sections[0].text.contains("### Sub-step\nkeep me"));
        assert!(!s.sections[0].text.contains("not for agents"));
        assert!(s.sections[1].text.contains("## not a heading"), "{s:?}");
        assert!(s.sections[1].text.ends_with("still gotchas"));
        assert_eq!(s.sections[2].text, "key in vault at ops/fleet");
        assert!(!s.sections.iter().any(|x| x.text.contains("Appendix")));
        assert!(s.has_credentials());
    }

    #[test]
    fn a_nested_credentials_heading_is_its_own_section() {
        let s = Sop::parse(
            "x",
            "x",
            "## Preflight\ncheck\n### Credentials\npw hunter2\n### Steps\nmore\n## Other\n",
        );
        assert_eq!(s.sections.len(), 2, "{s:?}");
        assert_eq!(s.sections[0].text, "check");
        assert_eq!(s.sections[1].kind, SectionKind::Credentials);
        assert!(s.sections[1].text.starts_with("pw hunter2"));
        let shown = super::super::enforce::render(
            &super::super::enforce::Found {
                sops: vec![super::super::enforce::FoundSop {
                    sop: std::sync::Arc::new(s),
                    reason: super::super::settings::SopReason::Project("x".into()),
                }],
                memories: vec![],
            },
            super::super::enforce::Audience::Agent {
                show_credentials: false,
            },
            None,
        );
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn key_changes_with_the_sections_only() {
        let a = Sop::parse("f", "x", FLEET);
        let b = Sop::parse("f", "x", &FLEET.replace("history", "other history"));
        let c = Sop::parse("f", "x", &FLEET.replace("uptime", "w"));
        assert_eq!(a.key(), b.key());
        assert_ne!(a.key(), c.key());
        assert!(a.key().starts_with("sop:f:"));
    }

    #[test]
    fn headings_need_a_space_and_empty_sections_vanish() {
        let s = Sop::parse("x", "x", "#preflight\nno\n## Gotchas\n\n## Preflight\nyes");
        assert_eq!(s.sections.len(), 1);
        assert_eq!(s.sections[0].text, "yes");
        assert!(Sop::parse("x", "x", "").is_empty());
        assert_eq!(sop_name("fleet.ai.sop"), Some("fleet"));
        assert_eq!(sop_name(".ai.sop"), None);
        assert_eq!(sop_name("fleet.sop"), None);
        assert!(valid_sop_name("docker-deploy"));
        assert!(!valid_sop_name("../etc/passwd"));
        assert!(!valid_sop_name(".hidden"));
    }

    proptest::proptest! {
        /// Any text parses; every section is non-empty and comes from the text.
        #[test]
        fn parse_never_panics(text in "(#{0,3} ?(preflight|gotchas|credentials|x)?\n?|```\n|[a-z ]{0,8}\n){0,30}") {
            let s = Sop::parse("p", "p", &text);
            for sec in &s.sections {
                proptest::prop_assert!(!sec.text.is_empty());
            }
        }
    }
}
