//! The HTTP side: one POST to `{base_url}/chat/completions` per call, the
//! whole exchange bounded by the configured timeout, and every way it can
//! go wrong mapped to an [`Abstention`].

use crate::assessment::{ModelAssessment, confident_enough};
use crate::config::{ConfigError, ModelConfig};
use crate::context::ContextPackage;
use crate::outcome::{Abstention, ModelOutcome};
use crate::prompt::request_body;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use reqwest::{Client, Response, Url};
use serde::Deserialize;
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::runtime::Runtime;

/// Largest response body read. An assessment is a few hundred bytes; a
/// server streaming more is not answering the question.
const MAX_RESPONSE_BYTES: usize = 256 * 1024;
/// Longest detail kept in an [`Abstention`]'s text.
const MAX_DETAIL: usize = 300;

/// A client for one configured model. Cheap to share (`&self` methods);
/// make one and keep it, so connections are reused.
///
/// Creating one installs rustls's ring provider as the process default
/// (unless some provider already is), which reqwest's TLS needs.
pub struct ModelClient {
    config: ModelConfig,
    endpoint: Url,
    /// `Bearer <key>`, marked sensitive so it is never logged by the HTTP
    /// stack.
    auth: Option<HeaderValue>,
    http: Client,
    /// The runtime and connection pool of [`ModelClient::assess_blocking`],
    /// made on its first use. A pool of its own: a connection opened on
    /// one runtime is served by that runtime's tasks, so sharing one pool
    /// across runtimes could hand a request to a runtime nobody drives.
    blocking: OnceLock<Result<Blocking, String>>,
}

impl fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelClient")
            .field("endpoint", &self.endpoint.as_str())
            .field("model", &self.config.model)
            .field("timeout", &self.config.timeout)
            .field("key", &self.auth.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl ModelClient {
    /// A client for `config` (validated here) authenticating with `key`
    /// as a Bearer token, if given. When `config.api_key_env` names a
    /// variable, a key is required: a server that needs one would refuse
    /// every call. The key is never written in an error or in `Debug`.
    pub fn new(config: ModelConfig, key: Option<String>) -> Result<ModelClient, ConfigError> {
        config.validate()?;
        let endpoint = config.endpoint()?;
        let key = match (key, &config.api_key_env) {
            (Some(key), _) => Some(key),
            (None, Some(var)) => return Err(ConfigError::MissingKey(var.clone())),
            (None, None) => None,
        };
        let auth = key.as_deref().map(bearer).transpose()?;
        let http = http_client(config.timeout).map_err(ConfigError::Client)?;
        Ok(ModelClient {
            config,
            endpoint,
            auth,
            http,
            blocking: OnceLock::new(),
        })
    }

    /// A client whose key is read from the variable `config.api_key_env`
    /// names (none when it names none).
    pub fn from_env(config: ModelConfig) -> Result<ModelClient, ConfigError> {
        let key = config.key_from_env()?;
        ModelClient::new(config, key)
    }

    /// The settings this client uses.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Asks the model about one call. Returns [`ModelOutcome::Assessed`]
    /// only for a well-formed, schema-valid answer at or above
    /// `min_confidence` that arrived, body and all, within `timeout`;
    /// anything else is [`ModelOutcome::Abstained`]. Never panics on what
    /// the server sends. Must run inside a tokio runtime (with time and
    /// I/O enabled); from plain threads use [`ModelClient::assess_blocking`].
    pub async fn assess(&self, ctx: &ContextPackage) -> ModelOutcome {
        self.assess_with(&self.http, ctx).await
    }

    /// [`ModelClient::assess`] for code that is not async: runs the request
    /// on a small runtime of the client's own (one worker thread, made on
    /// first use and kept). Blocks the calling thread for at most about the
    /// timeout. Called from inside a tokio runtime it still works, by
    /// waiting on a scoped thread, but blocks that runtime's thread; prefer
    /// `assess().await` there.
    pub fn assess_blocking(&self, ctx: &ContextPackage) -> ModelOutcome {
        let blocking = match self
            .blocking
            .get_or_init(|| Blocking::start(self.config.timeout))
        {
            Ok(b) => b,
            Err(why) => return ModelOutcome::Abstained(Abstention::Unreachable(why.clone())),
        };
        let Some(rt) = &blocking.rt else {
            return ModelOutcome::Abstained(Abstention::Unreachable(
                "the client's runtime has shut down".into(),
            ));
        };
        let run = || rt.block_on(self.assess_with(&blocking.http, ctx));
        if tokio::runtime::Handle::try_current().is_err() {
            return run();
        }
        // `block_on` refuses to run on a thread that is already inside a
        // runtime; a scoped thread may borrow `self` and `ctx`.
        std::thread::scope(|s| {
            s.spawn(run)
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    async fn assess_with(&self, http: &Client, ctx: &ContextPackage) -> ModelOutcome {
        // reqwest's own timeout covers the request too; this one also
        // bounds reading the body and anything reqwest does not time.
        let answer = match tokio::time::timeout(self.config.timeout, self.exchange(http, ctx)).await
        {
            Err(_) => Err(Abstention::Timeout),
            Ok(answer) => answer,
        };
        match answer.and_then(|content| self.judge(&content)) {
            Ok(assessment) => ModelOutcome::Assessed(assessment),
            Err(abstention) => ModelOutcome::Abstained(abstention),
        }
    }

    /// Sends the request and returns the answer's message content.
    async fn exchange(&self, http: &Client, ctx: &ContextPackage) -> Result<String, Abstention> {
        let body = request_body(&self.config, ctx).to_string();
        let mut request = http
            .post(self.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        let mut response = request.send().await.map_err(network_abstention)?;
        let status = response.status();
        if !status.is_success() {
            // The body of an error response is not read: some servers echo
            // the request's headers, key included.
            return Err(Abstention::HttpStatus(status.as_u16()));
        }
        let bytes = read_bounded(&mut response).await?;
        message_content(&bytes)
    }

    /// The assessment in `content`, if it is valid and confident enough.
    fn judge(&self, content: &str) -> Result<ModelAssessment, Abstention> {
        let assessment =
            ModelAssessment::parse(content).map_err(|why| Abstention::Malformed(detail(&why)))?;
        if !confident_enough(assessment.confidence(), self.config.min_confidence) {
            return Err(Abstention::LowConfidence(assessment.confidence()));
        }
        Ok(assessment)
    }
}

/// The HTTP client: whole-request and connect timeouts, and no redirects
/// (a redirect would be a server sending the request, key and all,
/// somewhere else).
fn http_client(timeout: Duration) -> Result<Client, String> {
    // reqwest is built without a bundled crypto provider; ring is this
    // crate's. Installing fails harmlessly when a provider is already set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("toolgate-model/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| detail(&causes(&e)))
}

fn bearer(key: &str) -> Result<HeaderValue, ConfigError> {
    let key = key.trim();
    if key.is_empty() {
        return Err(ConfigError::BadKey);
    }
    let mut value =
        HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| ConfigError::BadKey)?;
    value.set_sensitive(true);
    Ok(value)
}

/// A transport error as an abstention: a timeout, or what could not be
/// reached and why. The URL carries no credentials (config validation
/// refuses them), and the key is only ever in a header, never in errors.
fn network_abstention(e: reqwest::Error) -> Abstention {
    if e.is_timeout() {
        return Abstention::Timeout;
    }
    Abstention::Unreachable(detail(&causes(&e)))
}

/// An error and its sources, outermost first, joined with ": ".
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}

/// Reads the body, refusing more than [`MAX_RESPONSE_BYTES`].
async fn read_bounded(response: &mut Response) -> Result<Vec<u8>, Abstention> {
    let too_big = || {
        Abstention::Malformed(format!(
            "the response is larger than {MAX_RESPONSE_BYTES} bytes"
        ))
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(too_big());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(network_abstention)? {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(too_big());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The parts of a chat-completions response used; servers add many more
/// fields (`id`, `usage`, timings), which are ignored here. Strictness is
/// for the model's answer, not the server's envelope.
#[derive(Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

/// `choices[0].message.content` of a response body.
fn message_content(body: &[u8]) -> Result<String, Abstention> {
    let response: ChatResponse = serde_json::from_slice(body).map_err(|e| {
        Abstention::Malformed(detail(&format!(
            "the response is not a chat completion: {e}"
        )))
    })?;
    let Some(choice) = response.choices.into_iter().next() else {
        return Err(Abstention::Malformed("the response has no choices".into()));
    };
    if choice.finish_reason.as_deref() == Some("length") {
        return Err(Abstention::Malformed(
            "the answer was cut off at max_tokens; raise max_tokens".into(),
        ));
    }
    if choice.message.refusal.is_some_and(|r| !r.trim().is_empty()) {
        return Err(Abstention::Malformed("the model refused to answer".into()));
    }
    match choice.message.content {
        Some(content) if !content.trim().is_empty() => Ok(content),
        _ => Err(Abstention::Malformed(
            "the response's message has no content".into(),
        )),
    }
}

/// `text` cut to [`MAX_DETAIL`] characters, so one odd answer cannot fill
/// a log line.
fn detail(text: &str) -> String {
    match text.char_indices().nth(MAX_DETAIL) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// The blocking path's runtime and connection pool.
struct Blocking {
    /// Always `Some` until dropped; an `Option` so `Drop` can take it.
    rt: Option<Runtime>,
    http: Client,
}

impl Blocking {
    fn start(timeout: Duration) -> Result<Blocking, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolgate-model")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the client's runtime: {e}"))?;
        let http = http_client(timeout)?;
        Ok(Blocking { rt: Some(rt), http })
    }
}

impl Drop for Blocking {
    fn drop(&mut self) {
        // Dropping a runtime inside another runtime's task panics; shutting
        // it down in the background never does.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assessment::ModelAssessment;
    use toolgate_core::RiskClass;

    fn body(content: &str) -> Vec<u8> {
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn the_first_choice_content_is_taken() {
        assert_eq!(message_content(&body("hi")).unwrap(), "hi");
    }

    #[test]
    fn envelopes_without_an_answer_are_malformed() {
        let cases: [(&[u8], &str); 6] = [
            (b"not json", "not a chat completion"),
            (b"{\"id\": \"x\"}", "choices"),
            (b"{\"choices\": []}", "no choices"),
            (
                b"{\"choices\": [{\"message\": {\"content\": null}}]}",
                "no content",
            ),
            (
                b"{\"choices\": [{\"message\": {\"content\": \"{\"}, \"finish_reason\": \"length\"}]}",
                "max_tokens",
            ),
            (
                b"{\"choices\": [{\"message\": {\"content\": null, \"refusal\": \"no\"}}]}",
                "refused",
            ),
        ];
        for (bytes, says) in cases {
            match message_content(bytes) {
                Err(Abstention::Malformed(why)) => assert!(why.contains(says), "{why}"),
                other => panic!("{}: {other:?}", String::from_utf8_lossy(bytes)),
            }
        }
    }

    #[test]
    fn keys_are_checked_and_never_shown() {
        let config = ModelConfig::new("http://127.0.0.1:9/v1", "m");
        assert_eq!(
            ModelClient::new(config.clone(), Some("  ".into())).unwrap_err(),
            ConfigError::BadKey
        );
        assert_eq!(
            ModelClient::new(config.clone(), Some("bad\nkey".into())).unwrap_err(),
            ConfigError::BadKey
        );
        let client = ModelClient::new(config.clone(), Some("sk-very-secret".into())).unwrap();
        let shown = format!("{client:?}");
        assert!(
            !shown.contains("sk-very-secret") && shown.contains("<set>"),
            "{shown}"
        );

        let mut needs_key = config;
        needs_key.api_key_env = Some("TOOLGATE_MODEL_KEY".into());
        assert_eq!(
            ModelClient::new(needs_key, None).unwrap_err(),
            ConfigError::MissingKey("TOOLGATE_MODEL_KEY".into())
        );
    }

    #[test]
    fn confidence_below_the_minimum_abstains() {
        let client =
            ModelClient::new(ModelConfig::new("http://127.0.0.1:9/v1", "m"), None).unwrap();
        let answer = |c: f64| {
            format!(r#"{{"risk_class":"R0","confidence":{c},"labels":[],"rationale":""}}"#)
        };
        assert_eq!(
            client.judge(&answer(0.69)),
            Err(Abstention::LowConfidence(0.69))
        );
        let at_minimum = client.judge(&answer(0.7)).unwrap();
        assert_eq!(
            at_minimum,
            ModelAssessment::new(RiskClass::R0, 0.7, vec![], "").unwrap()
        );
    }

    #[test]
    fn details_are_bounded() {
        assert_eq!(detail("short"), "short");
        assert_eq!(detail(&"x".repeat(1000)).chars().count(), MAX_DETAIL + 1);
    }
}
