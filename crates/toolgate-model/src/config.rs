//! The model approver's settings, as written in TOML, and their checks.
//!
//! ```toml
//! base_url = "http://127.0.0.1:8080/v1"   # OpenAI-compatible (llama.cpp, vLLM, …)
//! model = "qwen2.5-1.5b-instruct"
//! api_key_env = "TOOLGATE_MODEL_KEY"       # optional; the key itself never goes here
//! timeout = "800ms"
//! min_confidence = 0.7
//! max_tokens = 300
//! temperature = 0
//! ```

use reqwest::Url;
use serde::Deserialize;
use std::time::Duration;

/// The longest timeout accepted. The model stage sits in the path of a tool
/// call that an agent (and maybe a person) is waiting on; a slower model is
/// better left off, since the static rules stand when it abstains.
const MAX_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest `max_tokens` accepted: the answer is four short fields.
const MAX_MAX_TOKENS: u32 = 4096;

/// Settings of the model approver's client.
///
/// Deserialize it (it rejects unknown fields, so a typo is an error rather
/// than a silently ignored setting), then call [`ModelConfig::validate`];
/// [`ModelConfig::from_toml`] does both, and [`crate::ModelClient::new`]
/// validates again, so an unchecked config never reaches the network.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The OpenAI-compatible API root, e.g. `http://127.0.0.1:8080/v1`; the
    /// client POSTs to `{base_url}/chat/completions`. http or https, no
    /// user name or password, no query or fragment.
    pub base_url: String,
    /// The model name sent with each request.
    pub model: String,
    /// The name of the environment variable holding the API key, if the
    /// server needs one. The key itself is never written in the file.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// How long the whole call may take (connect, answer and body), as a
    /// humantime string such as `"800ms"`; above 0 and at most 30 s.
    #[serde(default = "default_timeout", deserialize_with = "de_duration")]
    pub timeout: Duration,
    /// The lowest confidence, 0..=1, at which an answer counts; below it
    /// the outcome is an abstention.
    #[serde(default = "default_min_confidence")]
    pub min_confidence: f64,
    /// The most tokens the model may answer with, 1..=4096.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// Sampling temperature, 0..=2; 0 keeps answers as repeatable as the
    /// server allows, which audited votes need.
    #[serde(default)]
    pub temperature: f64,
}

fn default_timeout() -> Duration {
    Duration::from_millis(800)
}

fn default_min_confidence() -> f64 {
    0.7
}

fn default_max_tokens() -> u32 {
    300
}

fn de_duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(d)?;
    humantime::parse_duration(&text).map_err(|e| {
        serde::de::Error::custom(format!(
            "timeout {text:?} is not a duration ({e}); write it like \"800ms\" or \"2s\""
        ))
    })
}

/// Why the model settings, or the key given with them, cannot be used.
/// Messages name the setting and what to change; none contains a key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// The TOML did not parse or did not match the settings' shape.
    #[error("the model settings do not parse: {0}")]
    Toml(String),
    /// `base_url` is not a usable http(s) API root.
    #[error("base_url is not usable: {0}; write it like \"http://127.0.0.1:8080/v1\"")]
    BadUrl(String),
    /// `model` is empty or not printable.
    #[error("model must name the model to ask (a non-empty, printable name)")]
    BadModel,
    /// `api_key_env` is not an environment variable name.
    #[error(
        "api_key_env {0:?} is not an environment variable name; use letters, digits and \
         underscores, like \"TOOLGATE_MODEL_KEY\" (the key itself never goes in the file)"
    )]
    BadKeyEnv(String),
    /// `timeout` is zero or above 30 s.
    #[error(
        "timeout {0:?} is out of range; use more than 0 and at most 30s (the static rules \
         stand when the model is slow)"
    )]
    Timeout(Duration),
    /// `min_confidence` is not within 0..=1.
    #[error("min_confidence {0} is out of range; use a number from 0 to 1, like 0.7")]
    MinConfidence(f64),
    /// `max_tokens` is 0 or above 4096.
    #[error("max_tokens {0} is out of range; use 1 to 4096 (about 300 is plenty)")]
    MaxTokens(u32),
    /// `temperature` is not within 0..=2.
    #[error("temperature {0} is out of range; use a number from 0 to 2 (0 is best)")]
    Temperature(f64),
    /// `api_key_env` is set but no key was found or given.
    #[error(
        "api_key_env names {0} but it holds no key; export the key in {0}, or remove \
         api_key_env if the server needs no key"
    )]
    MissingKey(String),
    /// The key cannot be sent in an HTTP header.
    #[error(
        "the API key is not a valid HTTP header value (empty, or control or non-ASCII \
         characters); check the environment variable that holds it"
    )]
    BadKey,
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client for the model: {0}")]
    Client(String),
}

impl ModelConfig {
    /// Settings for `model` at `base_url` with every other setting at its
    /// default (no key, 800 ms, 0.7, 300 tokens, temperature 0). Not yet
    /// validated.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> ModelConfig {
        ModelConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            timeout: default_timeout(),
            min_confidence: default_min_confidence(),
            max_tokens: default_max_tokens(),
            temperature: 0.0,
        }
    }

    /// The client settings a policy's `[approvals.model]` table holds,
    /// checked (unknown keys, a bad URL or timeout, a confidence outside
    /// 0..=1); the error names the table and its line. The key is not read.
    pub fn from_stage(stage: &toolgate_core::ModelStage) -> Result<ModelConfig, String> {
        let at =
            |e: &dyn std::fmt::Display| format!("[approvals.model] (line {}): {e}", stage.line);
        let config: ModelConfig = toml::Value::Table(stage.client.clone())
            .try_into()
            .map_err(|e| at(&e))?;
        config.validate().map_err(|e| at(&e))?;
        Ok(config)
    }

    /// Parses settings from TOML text and validates them.
    pub fn from_toml(text: &str) -> Result<ModelConfig, ConfigError> {
        let config: ModelConfig =
            toml::from_str(text).map_err(|e| ConfigError::Toml(e.message().to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Checks every setting, returning the first problem found.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.endpoint_url()?;
        let model = self.model.trim();
        if model.is_empty() || self.model.chars().any(char::is_control) {
            return Err(ConfigError::BadModel);
        }
        if let Some(name) = &self.api_key_env
            && !is_env_name(name)
        {
            return Err(ConfigError::BadKeyEnv(name.clone()));
        }
        if self.timeout.is_zero() || self.timeout > MAX_TIMEOUT {
            return Err(ConfigError::Timeout(self.timeout));
        }
        if !(0.0..=1.0).contains(&self.min_confidence) {
            return Err(ConfigError::MinConfidence(self.min_confidence));
        }
        if self.max_tokens == 0 || self.max_tokens > MAX_MAX_TOKENS {
            return Err(ConfigError::MaxTokens(self.max_tokens));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(ConfigError::Temperature(self.temperature));
        }
        Ok(())
    }

    /// The URL requests go to: `{base_url}/chat/completions` (one slash
    /// between them however `base_url` ends).
    pub fn endpoint(&self) -> Result<Url, ConfigError> {
        self.endpoint_url()
    }

    /// Reads the key from the variable `api_key_env` names: `Ok(None)` when
    /// no variable is configured, an error when it is configured but unset,
    /// empty or not Unicode.
    pub fn key_from_env(&self) -> Result<Option<String>, ConfigError> {
        let Some(name) = &self.api_key_env else {
            return Ok(None);
        };
        match std::env::var(name) {
            Ok(key) if !key.trim().is_empty() => Ok(Some(key)),
            _ => Err(ConfigError::MissingKey(name.clone())),
        }
    }

    fn endpoint_url(&self) -> Result<Url, ConfigError> {
        // Parse errors never quote the input, which might hold a password.
        let base = Url::parse(self.base_url.trim())
            .map_err(|e| ConfigError::BadUrl(format!("it does not parse ({e})")))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(ConfigError::BadUrl(format!(
                "the scheme is {:?}, not http or https",
                base.scheme()
            )));
        }
        if base.host_str().is_none_or(str::is_empty) {
            return Err(ConfigError::BadUrl("it names no host".into()));
        }
        if !base.username().is_empty() || base.password().is_some() {
            return Err(ConfigError::BadUrl(
                "it carries a user name or password; put the key in the variable \
                 api_key_env names instead"
                    .into(),
            ));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(ConfigError::BadUrl(
                "it has a query or fragment; give only the API root".into(),
            ));
        }
        let path = format!("{}/chat/completions", base.path().trim_end_matches('/'));
        let mut url = base;
        url.set_path(&path);
        Ok(url)
    }
}

/// Whether `name` is a conventional environment variable name.
fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> ModelConfig {
        ModelConfig::new("http://127.0.0.1:8080/v1", "tiny")
    }

    #[test]
    fn defaults_apply_when_only_url_and_model_are_given() {
        let c =
            ModelConfig::from_toml("base_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"tiny\"\n")
                .unwrap();
        assert_eq!(c, base());
        assert_eq!(c.timeout, Duration::from_millis(800));
        assert_eq!(c.min_confidence, 0.7);
        assert_eq!(c.max_tokens, 300);
        assert_eq!(c.temperature, 0.0);
        assert_eq!(c.api_key_env, None);
    }

    #[test]
    fn every_setting_parses() {
        let c = ModelConfig::from_toml(
            r#"
            base_url = "https://models.example.invalid/v1/"
            model = "m"
            api_key_env = "TOOLGATE_MODEL_KEY"
            timeout = "1s 500ms"
            min_confidence = 0.9
            max_tokens = 200
            temperature = 0.2
            "#,
        )
        .unwrap();
        assert_eq!(c.timeout, Duration::from_millis(1500));
        assert_eq!(c.api_key_env.as_deref(), Some("TOOLGATE_MODEL_KEY"));
        assert_eq!(
            c.endpoint().unwrap().as_str(),
            "https://models.example.invalid/v1/chat/completions"
        );
    }

    #[test]
    fn endpoint_joins_with_one_slash() {
        for url in ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"] {
            let c = ModelConfig::new(url, "m");
            assert_eq!(
                c.endpoint().unwrap().as_str(),
                "http://127.0.0.1:8080/v1/chat/completions"
            );
        }
        let c = ModelConfig::new("http://localhost:8000", "m");
        assert_eq!(
            c.endpoint().unwrap().as_str(),
            "http://localhost:8000/chat/completions"
        );
    }

    #[test]
    fn unknown_fields_and_bad_types_are_errors() {
        let err =
            ModelConfig::from_toml("base_url = \"http://h/v1\"\nmodel = \"m\"\ntimout = \"1s\"")
                .unwrap_err();
        assert!(
            matches!(&err, ConfigError::Toml(m) if m.contains("timout")),
            "{err}"
        );
        let err =
            ModelConfig::from_toml("base_url = \"http://h/v1\"\nmodel = \"m\"\ntimeout = \"soon\"")
                .unwrap_err();
        assert!(err.to_string().contains("800ms"), "{err}");
        let err = ModelConfig::from_toml("model = \"m\"").unwrap_err();
        assert!(err.to_string().contains("base_url"), "{err}");
    }

    #[test]
    fn bad_urls_are_rejected_without_echoing_them() {
        for (url, says) in [
            ("not a url", "does not parse"),
            ("ftp://h/v1", "scheme"),
            ("http://user:hunter2@h/v1", "password"),
            ("http://h/v1?x=1", "query"),
            ("http://h/v1#f", "fragment"),
        ] {
            let mut c = base();
            c.base_url = url.into();
            let err = c.validate().unwrap_err();
            assert!(matches!(err, ConfigError::BadUrl(_)), "{url}: {err}");
            let msg = err.to_string();
            assert!(msg.contains(says), "{url}: {msg}");
            assert!(!msg.contains("hunter2"), "{msg}");
        }
    }

    #[test]
    fn out_of_range_numbers_are_rejected() {
        type Change = fn(&mut ModelConfig);
        let cases: Vec<(Change, &str)> = vec![
            (|c| c.timeout = Duration::ZERO, "timeout"),
            (|c| c.timeout = Duration::from_secs(31), "timeout"),
            (|c| c.min_confidence = 1.01, "min_confidence"),
            (|c| c.min_confidence = -0.1, "min_confidence"),
            (|c| c.min_confidence = f64::NAN, "min_confidence"),
            (|c| c.max_tokens = 0, "max_tokens"),
            (|c| c.max_tokens = 100_000, "max_tokens"),
            (|c| c.temperature = -1.0, "temperature"),
            (|c| c.temperature = 3.0, "temperature"),
            (|c| c.model = "  ".into(), "model"),
            (|c| c.api_key_env = Some("MY-KEY".into()), "api_key_env"),
            (|c| c.api_key_env = Some("".into()), "api_key_env"),
        ];
        for (change, says) in cases {
            let mut c = base();
            change(&mut c);
            let err = c.validate().unwrap_err();
            assert!(err.to_string().contains(says), "{err}");
        }
        let mut c = base();
        c.timeout = Duration::from_secs(30);
        c.min_confidence = 1.0;
        c.temperature = 2.0;
        c.validate().unwrap();
    }

    #[test]
    fn key_comes_from_the_named_variable() {
        let mut c = base();
        assert_eq!(c.key_from_env(), Ok(None));
        // A name no other test or process sets.
        c.api_key_env = Some("TOOLGATE_MODEL_TEST_UNSET_VARIABLE_7F3A".into());
        assert_eq!(
            c.key_from_env(),
            Err(ConfigError::MissingKey(
                "TOOLGATE_MODEL_TEST_UNSET_VARIABLE_7F3A".into()
            ))
        );
        c.api_key_env = Some("PATH".into());
        assert!(c.key_from_env().unwrap().is_some());
    }
}
