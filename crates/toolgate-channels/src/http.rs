//! The HTTP exchange every adapter shares: one request bounded by a
//! timeout, a bounded body, and failures mapped to [`DeliveryError`] with
//! every secret scrubbed out of the text.

use crate::channel::DeliveryError;
use crate::config_error::ConfigError;
use reqwest::header::{HeaderValue, RETRY_AFTER};
use reqwest::{Client, RequestBuilder, StatusCode};
use std::time::Duration;

/// Largest answer body read. Chat APIs answer in a few kilobytes; more is
/// not an answer to this request.
const MAX_BODY: usize = 256 * 1024;
/// Longest service-provided text kept in an error.
const MAX_DETAIL: usize = 300;
/// The longest Retry-After taken at face value; anything larger is read as
/// this (a day), which no retry policy waits for anyway.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(86_400);

/// What stands in for a secret in any text that leaves an adapter.
pub(crate) const REDACTED: &str = "<redacted>";

/// One adapter's HTTP client and the facts its errors need.
pub(crate) struct Http {
    client: Client,
    timeout: Duration,
    /// `"<kind> <target>"`, the start of every error message.
    to: String,
    /// Texts that must never appear in an error (tokens, secrets).
    secrets: Vec<String>,
}

/// A complete answer: status, the service's Retry-After, and the body.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub retry_after: Option<Duration>,
    pub body: Vec<u8>,
}

impl Http {
    /// A client with `timeout` on connect and on the whole request, and no
    /// redirects (a redirect would carry the Authorization header, or a
    /// token in the path, to wherever the server pointed).
    pub(crate) fn new(to: String, timeout: Duration, secrets: Vec<String>) -> Result<Http, String> {
        // reqwest is built without a crypto provider; ring is ours.
        // Installing fails harmlessly when a provider is already set.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("toolgate-channels/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("could not build the HTTP client: {}", causes(&e)))?;
        let secrets = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        Ok(Http {
            client,
            timeout,
            to,
            secrets,
        })
    }

    /// The client, to build requests with.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// Sends `request` and reads the whole answer within the timeout. Only
    /// transport failures are errors here; statuses are the caller's to
    /// judge (Telegram and Slack put their error codes in the body).
    pub(crate) async fn send(&self, request: RequestBuilder) -> Result<Answer, DeliveryError> {
        // reqwest's own timeout covers the request; this one also bounds
        // reading the body.
        match tokio::time::timeout(self.timeout, self.exchange(request)).await {
            Ok(answer) => answer,
            Err(_) => Err(self.timed_out()),
        }
    }

    async fn exchange(&self, request: RequestBuilder) -> Result<Answer, DeliveryError> {
        let mut response = request.send().await.map_err(|e| self.transport(e))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(parse_retry_after);
        if response
            .content_length()
            .is_some_and(|n| n > MAX_BODY as u64)
        {
            return Err(self.malformed(format!("the answer is over {MAX_BODY} bytes")));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport(e))? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(self.malformed(format!("the answer is over {MAX_BODY} bytes")));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            retry_after,
            body,
        })
    }

    /// The usual reading of a status that is not a success: 429 is rate
    /// limiting, 5xx a server failure, any other 4xx a refusal that
    /// `detail` (the service's own error text) and `hint` explain.
    pub(crate) fn status_error(
        &self,
        answer: &Answer,
        detail: Option<String>,
        hint: &'static str,
    ) -> DeliveryError {
        let status = answer.status.as_u16();
        let said = match detail {
            Some(d) if !d.trim().is_empty() => format!("HTTP {status}: {}", self.scrub(&d)),
            _ => format!("HTTP {status}"),
        };
        if answer.status == StatusCode::TOO_MANY_REQUESTS {
            DeliveryError::RateLimited {
                to: self.to.clone(),
                retry_after: answer.retry_after,
            }
        } else if answer.status.is_server_error() {
            DeliveryError::Server {
                to: self.to.clone(),
                detail: said,
            }
        } else {
            DeliveryError::Refused {
                to: self.to.clone(),
                detail: said,
                hint,
            }
        }
    }

    /// A [`DeliveryError::Malformed`] with `detail` scrubbed.
    pub(crate) fn malformed(&self, detail: impl AsRef<str>) -> DeliveryError {
        DeliveryError::Malformed {
            to: self.to.clone(),
            detail: self.scrub(detail.as_ref()),
        }
    }

    /// A [`DeliveryError::Refused`] for an API-level error code.
    pub(crate) fn refused(&self, detail: impl AsRef<str>, hint: &'static str) -> DeliveryError {
        DeliveryError::Refused {
            to: self.to.clone(),
            detail: self.scrub(detail.as_ref()),
            hint,
        }
    }

    /// A [`DeliveryError::Server`] for an API-level temporary failure.
    pub(crate) fn server(&self, detail: impl AsRef<str>) -> DeliveryError {
        DeliveryError::Server {
            to: self.to.clone(),
            detail: self.scrub(detail.as_ref()),
        }
    }

    /// A [`DeliveryError::RateLimited`].
    pub(crate) fn rate_limited(&self, retry_after: Option<Duration>) -> DeliveryError {
        DeliveryError::RateLimited {
            to: self.to.clone(),
            retry_after,
        }
    }

    /// Refuses to send buttons for an id that callbacks would refuse:
    /// a vote on them could never count.
    pub(crate) fn check_approval_id(&self, id: &str) -> Result<(), DeliveryError> {
        if crate::crypto::is_approval_id(id) {
            return Ok(());
        }
        Err(self.invalid(
            "the approval id is not 32 lowercase hex characters, so votes on its buttons would \
             be refused; this is a bug in the caller",
        ))
    }

    /// A [`DeliveryError::Invalid`].
    pub(crate) fn invalid(&self, detail: impl Into<String>) -> DeliveryError {
        DeliveryError::Invalid {
            to: self.to.clone(),
            detail: self.scrub(&detail.into()),
        }
    }

    fn timed_out(&self) -> DeliveryError {
        DeliveryError::Timeout {
            to: self.to.clone(),
            after: self.timeout,
        }
    }

    /// A transport error as a timeout or a connection failure. reqwest
    /// puts the URL in its errors, and Telegram's URL carries the bot
    /// token, so the URL is dropped and the text scrubbed as well.
    fn transport(&self, e: reqwest::Error) -> DeliveryError {
        if e.is_timeout() {
            return self.timed_out();
        }
        let e = e.without_url();
        DeliveryError::Connection {
            to: self.to.clone(),
            detail: self.scrub(&causes(&e)),
        }
    }

    /// `text` with every secret replaced and cut to a readable length.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_string();
        for secret in &self.secrets {
            text = text.replace(secret.as_str(), REDACTED);
        }
        crate::notice::clip(&text, MAX_DETAIL)
    }
}

/// Retry-After as a number of seconds (integer or, as Discord sends,
/// fractional). The HTTP-date form is not read; none of these services
/// sends it, and a 429 without a usable value still backs off.
pub(crate) fn parse_retry_after(value: &HeaderValue) -> Option<Duration> {
    let secs: f64 = value.to_str().ok()?.trim().parse().ok()?;
    retry_after_secs(secs)
}

/// Seconds from a service's body (`retry_after` fields) as a Duration.
pub(crate) fn retry_after_secs(secs: f64) -> Option<Duration> {
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(secs).min(MAX_RETRY_AFTER))
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

/// A header value marked sensitive, so the HTTP stack never logs it;
/// `None` when the text cannot be a header (a newline in a token).
pub(crate) fn secret_header(text: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(text).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// The checked, trimmed bot token of a `kind` adapter and its
/// `Authorization: <scheme> <token>` header (marked sensitive).
pub(crate) fn token_auth(
    kind: &'static str,
    scheme: &str,
    bot_token: &str,
) -> Result<(String, HeaderValue), ConfigError> {
    let invalid = |detail: &str| ConfigError::invalid(kind, detail.to_string());
    let token = bot_token.trim();
    if token.is_empty() {
        return Err(invalid("the bot token is empty"));
    }
    let auth = secret_header(&format!("{scheme} {token}")).ok_or_else(|| {
        invalid("the bot token has characters a header cannot carry; copy it again")
    })?;
    Ok((token.to_string(), auth))
}

/// Whether `base` is an http(s) URL without credentials, query or
/// fragment, so that paths can be appended to it. Returns it without a
/// trailing slash.
pub(crate) fn api_base(base: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(base).map_err(|e| {
        format!("api_base {base:?} is not a URL ({e}); write it like https://host/path")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("api_base {base:?} must be http or https"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "api_base must not carry credentials; tokens come from environment variables".into(),
        );
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "api_base {base:?} must not have a query or fragment"
        ));
    }
    Ok(base.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_whole_and_fractional_seconds() {
        let v = |s: &str| parse_retry_after(&HeaderValue::from_str(s).unwrap());
        assert_eq!(v("3"), Some(Duration::from_secs(3)));
        assert_eq!(v("0.25"), Some(Duration::from_millis(250)));
        assert_eq!(v("-1"), None);
        assert_eq!(v("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(v("1e12"), Some(MAX_RETRY_AFTER));
    }

    #[test]
    fn scrub_removes_every_secret() {
        let http = Http::new("x y".into(), Duration::from_secs(1), vec!["s3cr3t".into()]).unwrap();
        assert_eq!(http.scrub("a s3cr3t b s3cr3t"), "a <redacted> b <redacted>");
    }

    #[test]
    fn api_base_refuses_credentials_and_queries() {
        assert_eq!(
            api_base("http://127.0.0.1:1/api/").unwrap(),
            "http://127.0.0.1:1/api"
        );
        assert!(api_base("https://u:p@example.invalid").is_err());
        assert!(api_base("https://example.invalid/?t=1").is_err());
        assert!(api_base("ftp://example.invalid").is_err());
        assert!(api_base("not a url").is_err());
    }
}
