//! Browser sessions for the control UI, so an operator signs in once per
//! browser instead of pasting a token into every tab, and an approval's deep
//! link opens signed in.
//!
//! An operator (or `toolgate serve` at start) asks for a one-time sign-in
//! code; the link `http://<daemon>/#signin/<code>` carries it in the URL's
//! fragment, which browsers never send to a server or put in a Referer. The
//! page posts the code once to `POST /v1/session` and gets an `HttpOnly`,
//! `SameSite=Strict` cookie that scripts cannot read.
//!
//! Requests authenticated by that cookie must also carry the
//! `X-Toolgate-Channel` header (a page on another origin cannot add it
//! without a CORS preflight, which this daemon never grants) and, when the
//! browser sends them, an `Origin` naming this daemon and a `Sec-Fetch-Site`
//! of `same-origin` or `none`: together they keep another site, including
//! another server on this host, from voting through the cookie.
//!
//! Codes and sessions live in memory: a restart signs every browser out
//! (sign in again with `toolgate ui`), and nothing secret is written to disk.

use crate::auth::{Principal, Role};
use axum::http::HeaderMap;
use axum::http::header::{COOKIE, HOST, ORIGIN};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;

/// How long a sign-in code may wait to be used.
pub const CODE_TTL_MS: i64 = 15 * 60 * 1000;
/// How long a browser session lasts after sign-in.
pub const SESSION_TTL_MS: i64 = 12 * 60 * 60 * 1000;
/// At most this many unused codes are kept; minting more drops the oldest.
const MAX_CODES: usize = 256;
/// At most this many sessions are kept; signing in more drops the oldest.
const MAX_SESSIONS: usize = 4096;
/// The header a cookie-authenticated request must carry.
pub const CHANNEL_HEADER: &str = "x-toolgate-channel";

/// A principal and when its code or session stops working.
#[derive(Debug, Clone)]
struct Entry {
    identity: String,
    person: bool,
    created_ms: i64,
    expires_ms: i64,
}

/// Unused sign-in codes and live sessions, keyed by the SHA-256 of the
/// secret, so a lookup's timing says nothing about the secret itself.
#[derive(Debug, Default)]
pub struct Sessions {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    codes: HashMap<[u8; 32], Entry>,
    sessions: HashMap<[u8; 32], Entry>,
}

/// A session just opened: the cookie value and who it signs in.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The secret for the cookie.
    pub secret: String,
    /// Who the session acts as.
    pub principal: Principal,
    /// When it ends (Unix ms).
    pub expires_ms: i64,
}

impl Sessions {
    /// A new one-time sign-in code for `principal` (an operator), valid for
    /// [`CODE_TTL_MS`] from `now_ms`.
    pub fn mint_code(&self, principal: &Principal, now_ms: i64) -> std::io::Result<String> {
        let code = secret()?;
        let mut inner = self.lock();
        prune(&mut inner.codes, now_ms, MAX_CODES);
        inner.codes.insert(
            digest(&code),
            Entry {
                identity: principal.identity.clone(),
                person: principal.person,
                created_ms: now_ms,
                expires_ms: now_ms.saturating_add(CODE_TTL_MS),
            },
        );
        Ok(code)
    }

    /// Trades a sign-in code for a session, once: the code is gone
    /// afterwards whether or not it was still valid.
    pub fn redeem(&self, code: &str, now_ms: i64) -> std::io::Result<Option<Opened>> {
        let mut inner = self.lock();
        let Some(entry) = inner.codes.remove(&digest(code.trim())) else {
            return Ok(None);
        };
        if now_ms >= entry.expires_ms {
            return Ok(None);
        }
        let secret = secret()?;
        prune(&mut inner.sessions, now_ms, MAX_SESSIONS);
        let expires_ms = now_ms.saturating_add(SESSION_TTL_MS);
        inner.sessions.insert(
            digest(&secret),
            Entry {
                identity: entry.identity.clone(),
                person: entry.person,
                created_ms: now_ms,
                expires_ms,
            },
        );
        Ok(Some(Opened {
            secret,
            principal: principal(&entry),
            expires_ms,
        }))
    }

    /// Who the session with `secret` signs in, while it lasts.
    pub fn principal(&self, secret: &str, now_ms: i64) -> Option<Principal> {
        let mut inner = self.lock();
        let key = digest(secret);
        match inner.sessions.get(&key) {
            Some(e) if now_ms < e.expires_ms => Some(principal(e)),
            Some(_) => {
                inner.sessions.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Ends the session with `secret` (sign-out); unknown ones are ignored.
    pub fn end(&self, secret: &str) {
        self.lock().sessions.remove(&digest(secret));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn principal(e: &Entry) -> Principal {
    Principal {
        role: Role::Operator,
        identity: e.identity.clone(),
        person: e.person,
    }
}

/// Drops what expired, then the oldest until there is room for one more.
fn prune(map: &mut HashMap<[u8; 32], Entry>, now_ms: i64, max: usize) {
    map.retain(|_, e| now_ms < e.expires_ms);
    while map.len() >= max {
        let Some(oldest) = map
            .iter()
            .min_by_key(|(_, e)| e.created_ms)
            .map(|(k, _)| *k)
        else {
            break;
        };
        map.remove(&oldest);
    }
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// 32 random bytes as hex.
fn secret() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(toolgate_core::hex(&bytes))
}

/// The session cookie's name for a daemon listening on `listen`: browsers
/// share cookies between ports of one host, so two daemons on one machine
/// each need their own.
pub fn cookie_name(listen: &str) -> String {
    let port = listen.rsplit(':').next().unwrap_or("");
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        format!("toolgate_session_{port}")
    } else {
        "toolgate_session".to_string()
    }
}

/// The `Set-Cookie` value opening a session.
pub fn set_cookie(name: &str, secret: &str, max_age_s: i64) -> String {
    format!("{name}={secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age_s}")
}

/// The `Set-Cookie` value ending one.
pub fn clear_cookie(name: &str) -> String {
    format!("{name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// The value of cookie `name` in the request, if sent.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// Why a cookie-carrying request is refused as possibly cross-site, if it
/// is: `Origin`, when sent, must be this daemon (`http(s)://` + `Host`);
/// `Sec-Fetch-Site`, when sent, must be `same-origin` or `none`.
pub fn cross_site(headers: &HeaderMap) -> Option<&'static str> {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text(axum::http::HeaderName::from_static("sec-fetch-site"))
        && site != "same-origin"
        && site != "none"
    {
        return Some("the request came from another site");
    }
    if let Some(origin) = text(ORIGIN) {
        let host = text(HOST).unwrap_or("");
        let ours = !host.is_empty()
            && (origin == format!("http://{host}") || origin == format!("https://{host}"));
        if !ours {
            return Some("the request's Origin is not this daemon");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operator() -> Principal {
        Principal {
            role: Role::Operator,
            identity: "alice".into(),
            person: true,
        }
    }

    #[test]
    fn a_code_opens_one_session_once() {
        let s = Sessions::default();
        let code = s.mint_code(&operator(), 1_000).unwrap();
        let opened = s
            .redeem(&code, 2_000)
            .unwrap()
            .expect("a fresh code opens a session");
        assert_eq!(opened.principal, operator());
        assert!(
            s.redeem(&code, 2_000).unwrap().is_none(),
            "a code works once"
        );
        assert_eq!(s.principal(&opened.secret, 3_000), Some(operator()));
        assert_eq!(s.principal("not-a-session", 3_000), None);
        s.end(&opened.secret);
        assert_eq!(s.principal(&opened.secret, 3_000), None);
    }

    #[test]
    fn codes_and_sessions_expire() {
        let s = Sessions::default();
        let code = s.mint_code(&operator(), 0).unwrap();
        assert!(s.redeem(&code, CODE_TTL_MS).unwrap().is_none());
        let code = s.mint_code(&operator(), 0).unwrap();
        let opened = s.redeem(&code, 10).unwrap().unwrap();
        assert!(
            s.principal(&opened.secret, 10 + SESSION_TTL_MS - 1)
                .is_some()
        );
        assert!(s.principal(&opened.secret, 10 + SESSION_TTL_MS).is_none());
    }

    #[test]
    fn the_oldest_codes_make_room() {
        let s = Sessions::default();
        let first = s.mint_code(&operator(), 0).unwrap();
        for i in 1..=MAX_CODES as i64 {
            s.mint_code(&operator(), i).unwrap();
        }
        assert!(s.redeem(&first, 1_000).unwrap().is_none());
        assert_eq!(s.lock().codes.len(), MAX_CODES);
    }

    #[test]
    fn cookies_are_found_by_name_and_scoped_by_port() {
        assert_eq!(cookie_name("127.0.0.1:7878"), "toolgate_session_7878");
        assert_eq!(cookie_name("[::1]:9000"), "toolgate_session_9000");
        let mut h = HeaderMap::new();
        h.insert(
            COOKIE,
            "a=1; toolgate_session_7878=abc ; b=2".parse().unwrap(),
        );
        assert_eq!(cookie(&h, "toolgate_session_7878"), Some("abc"));
        assert_eq!(cookie(&h, "toolgate_session_9000"), None);
        let set = set_cookie("n", "v", 60);
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
    }

    #[test]
    fn cross_site_requests_are_told_apart() {
        let mut h = HeaderMap::new();
        h.insert(HOST, "127.0.0.1:7878".parse().unwrap());
        assert_eq!(cross_site(&h), None, "no Origin: a same-origin GET");
        h.insert(ORIGIN, "http://127.0.0.1:7878".parse().unwrap());
        assert_eq!(cross_site(&h), None);
        h.insert(ORIGIN, "http://127.0.0.1:3000".parse().unwrap());
        assert!(cross_site(&h).is_some(), "another port is another origin");
        h.insert(ORIGIN, "http://127.0.0.1:7878".parse().unwrap());
        h.insert("sec-fetch-site", "same-site".parse().unwrap());
        assert!(cross_site(&h).is_some());
        h.insert("sec-fetch-site", "same-origin".parse().unwrap());
        assert_eq!(cross_site(&h), None);
    }
}
