//! What one request to the model came to: a validated assessment, or an
//! abstention saying why not. An abstention is never an approval: the
//! static rules stand, as they would with no model configured.

use crate::assessment::ModelAssessment;
use std::fmt;

/// The result of asking the model about one call.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelOutcome {
    /// A well-formed, schema-valid answer, at or above `min_confidence`,
    /// within the timeout.
    Assessed(ModelAssessment),
    /// Anything else.
    Abstained(Abstention),
}

impl ModelOutcome {
    /// The assessment, when there is one.
    pub fn assessment(&self) -> Option<&ModelAssessment> {
        match self {
            ModelOutcome::Assessed(a) => Some(a),
            ModelOutcome::Abstained(_) => None,
        }
    }
}

/// Why the model gave no usable assessment. `Display` is a sentence for an
/// operator: what happened and what to check. None of them carries the API
/// key or the body of an error response (which might echo it).
#[derive(Debug, Clone, PartialEq)]
pub enum Abstention {
    /// No complete answer within the configured timeout.
    Timeout,
    /// The server could not be reached (refused, DNS, TLS, reset); the
    /// text is the underlying cause.
    Unreachable(String),
    /// The server answered with a non-success HTTP status.
    HttpStatus(u16),
    /// The answer was not a well-formed, schema-valid assessment; the text
    /// says what was wrong.
    Malformed(String),
    /// The answer was valid but its confidence was below `min_confidence`.
    LowConfidence(f64),
}

impl fmt::Display for Abstention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Abstention::Timeout => write!(
                f,
                "the model did not answer within its timeout, so the static rules stand; \
                 raise timeout or use a faster model if this is frequent"
            ),
            Abstention::Unreachable(why) => write!(
                f,
                "the model server could not be reached ({why}); check base_url and that \
                 the server is running"
            ),
            Abstention::HttpStatus(code @ (401 | 403)) => write!(
                f,
                "the model server refused the request (HTTP {code}); check the key in the \
                 environment variable api_key_env names"
            ),
            Abstention::HttpStatus(code) => write!(
                f,
                "the model server answered HTTP {code} instead of an assessment; check \
                 base_url, the model name and the server's log"
            ),
            Abstention::Malformed(why) => write!(
                f,
                "the model's answer was not a valid assessment ({why}); the model may be \
                 too small to follow the schema, or the server ignores response_format"
            ),
            Abstention::LowConfidence(c) => write!(
                f,
                "the model was only {c:.2} confident, below min_confidence, so its \
                 assessment is not used"
            ),
        }
    }
}
