//! Roles and tokens. Two bearer tokens: the agent's (may check) and the
//! operator's (may also approve, deny and read everything). Tokens come from
//! the environment or from 0600 files in the data directory, created on
//! first start, and are compared in constant time.

use crate::error::ApiError;
use axum::http::HeaderMap;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use subtle::ConstantTimeEq;

/// What a token lets its holder do.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::IntoStaticStr, strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum Role {
    /// May check calls and use the hook endpoints.
    Agent,
    /// May do everything an agent may, and approve, deny and read state.
    Operator,
}

impl Role {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Who is calling: the role their token grants and the identity their
/// votes are recorded under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// What they may do.
    pub role: Role,
    /// `agent` for the agent token; [`toolgate_gate::ADMIN`] for the
    /// shared operator token (the break-glass administrator, one identity
    /// in every quorum); the operator's name for a person's own token.
    pub identity: String,
    /// Whether the token is a named person's (`toolgate operators add`).
    pub person: bool,
}

/// Shortest token accepted from the environment: shorter ones can be
/// guessed over a fast loopback link.
pub const MIN_TOKEN_LEN: usize = 16;

/// Where a token came from, for the start-up message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// An environment variable.
    Env(&'static str),
    /// A file in the data directory (created now or earlier).
    File(PathBuf),
}

/// The two tokens.
#[derive(Clone)]
pub struct Tokens {
    agent: String,
    operator: String,
    /// Where the agent token came from.
    pub agent_source: TokenSource,
    /// Where the operator token came from.
    pub operator_source: TokenSource,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secrets themselves.
        f.debug_struct("Tokens")
            .field("agent_source", &self.agent_source)
            .field("operator_source", &self.operator_source)
            .finish_non_exhaustive()
    }
}

/// Why the tokens could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// A token file or variable is unusable.
    #[error("{0}")]
    Invalid(String),
    /// A token file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

impl Tokens {
    /// Two explicit tokens (tests, embedding).
    pub fn new(agent: &str, operator: &str) -> Result<Tokens, TokenError> {
        let agent = check("agent token", agent)?;
        let operator = check("operator token", operator)?;
        if agent == operator {
            return Err(TokenError::Invalid(
                "the agent and operator tokens are the same: an agent could approve its own calls; use two different tokens".into(),
            ));
        }
        Ok(Tokens {
            agent,
            operator,
            agent_source: TokenSource::Env("(given)"),
            operator_source: TokenSource::Env("(given)"),
        })
    }

    /// The tokens for a daemon whose data lives in `dir`: each from its
    /// environment variable when set (and not empty), else from its file in
    /// `dir`, created with 32 random bytes and mode 0600 if missing.
    pub fn load(
        dir: &Path,
        agent_env: Option<String>,
        operator_env: Option<String>,
    ) -> Result<Tokens, TokenError> {
        let (agent, agent_source) = one(dir, "agent", "TOOLGATE_AGENT_TOKEN", agent_env)?;
        let (operator, operator_source) =
            one(dir, "operator", "TOOLGATE_OPERATOR_TOKEN", operator_env)?;
        let mut t = Tokens::new(&agent, &operator)?;
        t.agent_source = agent_source;
        t.operator_source = operator_source;
        Ok(t)
    }

    /// `Bearer <agent token>`, for a request whose credential is the
    /// kernel's word on its peer (the Unix socket) rather than a token.
    pub(crate) fn agent_bearer(&self) -> axum::http::HeaderValue {
        axum::http::HeaderValue::from_str(&format!("Bearer {}", self.agent))
            .unwrap_or_else(|_| axum::http::HeaderValue::from_static("Bearer -"))
    }

    /// The role a presented token grants, if any. Both secrets are always
    /// compared, as SHA-256 digests in constant time, so timing tells
    /// nothing about either, not even its length.
    pub fn role_of(&self, presented: &str) -> Option<Role> {
        let p = Sha256::digest(presented.as_bytes());
        let is_operator: bool = p.ct_eq(&Sha256::digest(self.operator.as_bytes())).into();
        let is_agent: bool = p.ct_eq(&Sha256::digest(self.agent.as_bytes())).into();
        if is_operator {
            Some(Role::Operator)
        } else if is_agent {
            Some(Role::Agent)
        } else {
            None
        }
    }

    /// Checks the `Authorization: Bearer` header (or `fallback`, a token
    /// given another way) against the role `need`.
    pub fn authorize(
        &self,
        headers: &HeaderMap,
        fallback: Option<&str>,
        need: Role,
    ) -> Result<Role, ApiError> {
        let presented = bearer(headers).or(fallback).ok_or_else(|| {
            ApiError::unauthorized(format!(
                "missing token: send `Authorization: Bearer <{} token>` (see `toolgate serve` output for where it is)",
                need.as_str()
            ))
        })?;
        let role = self.role_of(presented).ok_or_else(|| {
            ApiError::unauthorized(
                "unknown token: use the agent or operator token of this toolgate daemon, or your own from `toolgate operators add NAME`",
            )
        })?;
        if role < need {
            return Err(ApiError::forbidden(format!(
                "the {} token may not do this; it needs the {} token",
                role.as_str(),
                need.as_str()
            )));
        }
        Ok(role)
    }
}

/// The key signing one-time approve/deny links: `TOOLGATE_LINK_KEY` when
/// set, else `link.token` in `dir` (created like the token files: 32
/// random bytes as hex, mode 0600), so links outlive a restart.
pub fn load_link_key(dir: &Path, env: Option<String>) -> Result<Vec<u8>, TokenError> {
    let (key, _) = one(dir, "link", "TOOLGATE_LINK_KEY", env)?;
    if key.len() < 32 {
        return Err(TokenError::Invalid(
            "the link key is shorter than 32 characters: use a long random value (e.g. `openssl rand -hex 32`)".into(),
        ));
    }
    Ok(key.into_bytes())
}

/// The token in an `Authorization: Bearer …` header.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = v.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn check(what: &str, token: &str) -> Result<String, TokenError> {
    let t = token.trim();
    if t.len() < MIN_TOKEN_LEN {
        return Err(TokenError::Invalid(format!(
            "the {what} is shorter than {MIN_TOKEN_LEN} characters: use a long random value (e.g. `openssl rand -hex 32`)"
        )));
    }
    if t.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(TokenError::Invalid(format!(
            "the {what} contains spaces or control characters: use a single word"
        )));
    }
    Ok(t.to_string())
}

fn one(
    dir: &Path,
    name: &str,
    var: &'static str,
    env: Option<String>,
) -> Result<(String, TokenSource), TokenError> {
    if let Some(v) = env.filter(|v| !v.trim().is_empty()) {
        return Ok((v, TokenSource::Env(var)));
    }
    let path = dir.join(format!("{name}.token"));
    let io = |source| TokenError::Io {
        path: path.display().to_string(),
        source,
    };
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
    {
        Ok(mut f) => {
            let token = new_token().map_err(io)?;
            f.write_all(format!("{token}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(io)?;
            Ok((token, TokenSource::File(path)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            use std::os::unix::fs::MetadataExt;
            // Not followed: a symlink planted here could point the daemon
            // at a token someone else controls.
            let meta = std::fs::symlink_metadata(&path).map_err(io)?;
            if !meta.file_type().is_file() {
                return Err(TokenError::Invalid(format!(
                    "{} is not a regular file (a symlink?): remove it and start again to get a new token",
                    path.display()
                )));
            }
            let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
            if me.is_some_and(|uid| uid != meta.uid()) {
                return Err(TokenError::Invalid(format!(
                    "{} belongs to another user (uid {}): run toolgate as its owner or remove the file",
                    path.display(),
                    meta.uid()
                )));
            }
            let mode = meta.permissions().mode();
            if mode & 0o077 != 0 {
                return Err(TokenError::Invalid(format!(
                    "{} is readable by other users (mode {:o}): run `chmod 600 {}`",
                    path.display(),
                    mode & 0o777,
                    path.display()
                )));
            }
            let text = std::fs::read_to_string(&path).map_err(io)?;
            let token = check(&format!("token in {}", path.display()), &text)?;
            Ok((token, TokenSource::File(path)))
        }
        Err(e) => Err(io(e)),
    }
}

/// 32 random bytes as 64 hex characters.
fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(toolgate_core::hex(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The role names are in logs and answers: derived, and pinned here.
    #[test]
    fn role_strings_are_pinned() {
        use strum::VariantArray;
        let t = [(Role::Agent, "agent"), (Role::Operator, "operator")];
        assert_eq!(t.len(), Role::VARIANTS.len());
        for (r, s) in t {
            assert_eq!(r.as_str(), s);
        }
    }

    fn dir() -> PathBuf {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).unwrap();
        let d = std::env::temp_dir().join(format!("tg-auth-{}", toolgate_core::hex(&b)));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn files_are_created_private_and_reused() {
        let d = dir();
        let t1 = Tokens::load(&d, None, None).unwrap();
        let mode = std::fs::metadata(d.join("agent.token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let t2 = Tokens::load(&d, None, None).unwrap();
        assert_eq!(t1.agent, t2.agent);
        assert_ne!(t1.agent, t1.operator);
        assert_eq!(t1.agent.len(), 64);
    }

    #[test]
    fn loose_permissions_are_refused() {
        let d = dir();
        Tokens::load(&d, None, None).unwrap();
        std::fs::set_permissions(
            d.join("operator.token"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let e = Tokens::load(&d, None, None).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
    }

    #[test]
    fn roles_and_bad_tokens() {
        let t = Tokens::new("agent-token-0123456789", "operator-token-0123456789").unwrap();
        assert_eq!(t.role_of("agent-token-0123456789"), Some(Role::Agent));
        assert_eq!(t.role_of("operator-token-0123456789"), Some(Role::Operator));
        assert_eq!(t.role_of("agent-token-012345678"), None);
        assert_eq!(t.role_of(""), None);
        assert!(Tokens::new("short", "operator-token-0123456789").is_err());
        assert!(Tokens::new("same-token-0123456789", "same-token-0123456789").is_err());
        let mut h = HeaderMap::new();
        h.insert(
            "authorization",
            "Bearer agent-token-0123456789".parse().unwrap(),
        );
        assert_eq!(t.authorize(&h, None, Role::Agent), Ok(Role::Agent));
        assert_eq!(
            t.authorize(&h, None, Role::Operator).unwrap_err().code,
            "forbidden"
        );
        h.insert(
            "authorization",
            "Basic agent-token-0123456789".parse().unwrap(),
        );
        assert_eq!(
            t.authorize(&h, None, Role::Agent).unwrap_err().code,
            "unauthorized"
        );
    }

    #[test]
    fn the_environment_wins_over_files() {
        let d = dir();
        let t = Tokens::load(
            &d,
            Some("env-agent-token-0123".into()),
            Some("env-operator-token-0123".into()),
        )
        .unwrap();
        assert_eq!(t.agent_source, TokenSource::Env("TOOLGATE_AGENT_TOKEN"));
        assert!(!d.join("agent.token").exists());
        assert_eq!(t.role_of("env-operator-token-0123"), Some(Role::Operator));
    }
}
