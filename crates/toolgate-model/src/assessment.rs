//! The model's answer, parsed and checked by hand against the same schema
//! the request asks the server to enforce ([`crate::response_schema`]):
//! servers that ignore `response_format` must not get a looser contract.

use serde::{Deserialize, Serialize};
use toolgate_core::{RiskClass, redact_text};

/// Most labels an assessment may carry.
pub const MAX_LABELS: usize = 16;
/// Longest label, in characters.
pub const MAX_LABEL_CHARS: usize = 64;
/// Longest rationale kept, in characters; longer ones are cut with `…`.
pub const MAX_RATIONALE_CHARS: usize = 1000;

/// A validated risk assessment: the class is one of R0..R4, the confidence
/// is within 0..=1, there are at most [`MAX_LABELS`] labels of 1 to
/// [`MAX_LABEL_CHARS`] printable characters, and the rationale has at most
/// [`MAX_RATIONALE_CHARS`] characters. Only [`ModelAssessment::new`] and
/// the client make one, so every value of this type holds those promises.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelAssessment {
    risk_class: RiskClass,
    confidence: f64,
    labels: Vec<String>,
    rationale: String,
}

/// The answer as it must appear on the wire: exactly these four fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    // A string, not `RiskClass`: serde would also take `{"R1": null}`.
    risk_class: String,
    confidence: f64,
    labels: Vec<String>,
    rationale: String,
}

impl ModelAssessment {
    /// An assessment, if the values keep the type's promises (the
    /// rationale is cut, not refused, when long); otherwise what is wrong.
    pub fn new(
        risk_class: RiskClass,
        confidence: f64,
        labels: Vec<String>,
        rationale: &str,
    ) -> Result<ModelAssessment, String> {
        if !(0.0..=1.0).contains(&confidence) {
            return Err(format!("confidence {confidence} is not within 0..=1"));
        }
        if labels.len() > MAX_LABELS {
            return Err(format!(
                "{} labels, more than the {MAX_LABELS} allowed",
                labels.len()
            ));
        }
        let labels = labels
            .into_iter()
            .map(|l| check_label(&l))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ModelAssessment {
            risk_class,
            confidence,
            labels,
            rationale: clean_rationale(rationale),
        })
    }

    /// Parses a message's content: one JSON object of the schema, either
    /// bare or as the only thing inside a single ```` ```json ```` fence
    /// (some local servers ignore `response_format` and fence their JSON).
    /// Anything else — prose around it, two objects, extra fields, an array
    /// — is refused with the reason.
    pub(crate) fn parse(content: &str) -> Result<ModelAssessment, String> {
        let json = unfence(content)?;
        // A struct also deserializes from a JSON array; only an object is
        // the schema's shape.
        if !json.starts_with('{') {
            return Err("the answer is not a JSON object".into());
        }
        let wire: Wire = serde_json::from_str(json)
            .map_err(|e| format!("the answer does not match the schema: {e}"))?;
        let class = match wire.risk_class.as_str() {
            "R0" => RiskClass::R0,
            "R1" => RiskClass::R1,
            "R2" => RiskClass::R2,
            "R3" => RiskClass::R3,
            "R4" => RiskClass::R4,
            other => {
                return Err(format!(
                    "risk_class {:?} is not one of R0, R1, R2, R3, R4",
                    clip_chars(other, 16)
                ));
            }
        };
        ModelAssessment::new(class, wire.confidence, wire.labels, &wire.rationale)
    }

    /// The model's risk class.
    pub fn risk_class(&self) -> RiskClass {
        self.risk_class
    }

    /// The model's confidence, within 0..=1.
    pub fn confidence(&self) -> f64 {
        self.confidence
    }

    /// Short risk labels (`destructive`, `network-egress`, …), trimmed.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The model's one-paragraph rationale: redacted, control characters
    /// other than line breaks replaced, cut to [`MAX_RATIONALE_CHARS`].
    pub fn rationale(&self) -> &str {
        &self.rationale
    }
}

/// Whether `confidence` reaches `minimum`. Written so that a NaN on
/// either side never passes: a broken threshold abstains rather than
/// letting everything through.
pub(crate) fn confident_enough(confidence: f64, minimum: f64) -> bool {
    use std::cmp::Ordering::{Equal, Greater};
    matches!(confidence.partial_cmp(&minimum), Some(Greater | Equal))
}

/// The JSON text inside `content`: the trimmed content itself, or the body
/// of one fence (info string empty or `json`) that is all of the content.
fn unfence(content: &str) -> Result<&str, String> {
    let text = content.trim();
    let Some(rest) = text.strip_prefix("```") else {
        return Ok(text);
    };
    let (info, body) = rest
        .split_once('\n')
        .ok_or("the answer opens a code fence and holds nothing else")?;
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return Err(format!(
            "the answer is fenced as {:?}, not JSON",
            clip_chars(info, 16)
        ));
    }
    let body = body
        .trim_end()
        .strip_suffix("```")
        .ok_or("the answer's code fence is not closed at its end")?;
    if body.contains("```") {
        return Err("the answer holds more than one code fence".into());
    }
    Ok(body.trim())
}

fn check_label(label: &str) -> Result<String, String> {
    let l = label.trim();
    let chars = l.chars().count();
    if chars == 0 || chars > MAX_LABEL_CHARS || l.chars().any(char::is_control) {
        return Err(format!(
            "label {:?} is not 1 to {MAX_LABEL_CHARS} printable characters",
            clip_chars(l, 32)
        ));
    }
    Ok(l.to_string())
}

fn clean_rationale(rationale: &str) -> String {
    let redacted = redact_text(rationale.trim());
    let printable: String = redacted
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect();
    if printable.chars().count() <= MAX_RATIONALE_CHARS {
        return printable;
    }
    let mut cut = clip_chars(&printable, MAX_RATIONALE_CHARS - 1).to_string();
    cut.push('…');
    cut
}

/// The first `n` characters of `s`.
fn clip_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"risk_class":"R1","confidence":0.9,"labels":["workspace-write"],"rationale":"edits a file in the workspace"}"#;

    #[test]
    fn a_schema_valid_answer_parses() {
        let a = ModelAssessment::parse(GOOD).unwrap();
        assert_eq!(a.risk_class(), RiskClass::R1);
        assert_eq!(a.confidence(), 0.9);
        assert_eq!(a.labels(), ["workspace-write"]);
        assert_eq!(a.rationale(), "edits a file in the workspace");
    }

    #[test]
    fn one_fenced_object_is_accepted() {
        for fenced in [
            format!("```json\n{GOOD}\n```"),
            format!("  ```JSON\n{GOOD}```\n"),
            format!("```\n{GOOD}\n```"),
        ] {
            assert!(ModelAssessment::parse(&fenced).is_ok(), "{fenced}");
        }
    }

    #[test]
    fn anything_else_is_refused() {
        let cases = [
            ("", "not a JSON object"),
            ("Sure! Here it is: ```json\n{}\n```", "not a JSON object"),
            (&format!("{GOOD}\nHope that helps"), "schema"),
            (&format!("```json\n{GOOD}\n```\nmore"), "not closed"),
            (
                &format!("```json\n{GOOD}\n```\n```json\n{GOOD}\n```"),
                "more than one",
            ),
            (&format!("```python\n{GOOD}\n```"), "fenced as"),
            ("```json", "holds nothing else"),
            (r#"["R1", 0.9, [], "x"]"#, "not a JSON object"),
            (
                r#"{"risk_class":"R1","confidence":0.9,"labels":[]}"#,
                "rationale",
            ),
            (
                r#"{"risk_class":"R1","confidence":0.9,"labels":[],"rationale":"","approve":true}"#,
                "unknown field",
            ),
            (
                r#"{"risk_class":"R1","risk_class":"R0","confidence":0.9,"labels":[],"rationale":""}"#,
                "duplicate field",
            ),
            (
                r#"{"risk_class":{"R1":null},"confidence":0.9,"labels":[],"rationale":""}"#,
                "schema",
            ),
            (
                r#"{"risk_class":"r1","confidence":0.9,"labels":[],"rationale":""}"#,
                "not one of",
            ),
            (
                r#"{"risk_class":"R9","confidence":0.9,"labels":[],"rationale":""}"#,
                "not one of",
            ),
            (
                r#"{"risk_class":"R1","confidence":1.7,"labels":[],"rationale":""}"#,
                "0..=1",
            ),
            (
                r#"{"risk_class":"R1","confidence":-0.1,"labels":[],"rationale":""}"#,
                "0..=1",
            ),
            (
                r#"{"risk_class":"R1","confidence":"high","labels":[],"rationale":""}"#,
                "schema",
            ),
            (
                r#"{"risk_class":"R1","confidence":0.9,"labels":[""],"rationale":""}"#,
                "label",
            ),
            (
                r#"{"risk_class":"R1","confidence":0.9,"labels":["a\nb"],"rationale":""}"#,
                "label",
            ),
        ];
        for (content, says) in cases {
            let err = ModelAssessment::parse(content).unwrap_err();
            assert!(err.contains(says), "{content:?}: {err}");
        }
    }

    #[test]
    fn label_count_and_length_are_limited() {
        let labels = |n: usize, len: usize| vec!["x".repeat(len); n];
        assert!(ModelAssessment::new(RiskClass::R0, 1.0, labels(16, 64), "").is_ok());
        assert!(ModelAssessment::new(RiskClass::R0, 1.0, labels(17, 1), "").is_err());
        assert!(ModelAssessment::new(RiskClass::R0, 1.0, labels(1, 65), "").is_err());
        assert!(ModelAssessment::new(RiskClass::R0, f64::NAN, vec![], "").is_err());
    }

    #[test]
    fn long_rationales_are_cut_and_cleaned() {
        let a = ModelAssessment::new(RiskClass::R0, 0.5, vec![], &"é".repeat(3000)).unwrap();
        assert_eq!(a.rationale().chars().count(), MAX_RATIONALE_CHARS);
        assert!(a.rationale().ends_with('…'));
        let a = ModelAssessment::new(RiskClass::R0, 0.5, vec![], "a\u{1b}[31mb\nc").unwrap();
        assert_eq!(a.rationale(), "a [31mb\nc");
    }
}
