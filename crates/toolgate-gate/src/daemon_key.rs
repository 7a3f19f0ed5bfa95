//! The daemon's signing key (Ed25519): what lets a hook tell the real daemon
//! from any other program answering on its address, and what signs the
//! audit log's checkpoints so a rewrite with recomputed hashes is caught
//! without a head kept elsewhere.
//!
//! The private half lives in the data directory (`daemon.key`, mode 0600,
//! owned by the daemon's user); the public half is written beside it
//! (`daemon.pub`, readable) and pinned into each installed hook's command
//! line. In separated mode the agent's user cannot read the data
//! directory, so it cannot forge either.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use toolgate_core::{hex, unhex};

/// The private key's file name in the data directory.
pub const KEY_FILE: &str = "daemon.key";
/// The public key's file name in the data directory.
pub const PUBLIC_FILE: &str = "daemon.pub";
/// How a public key is written: `ed25519:` and 64 hex digits.
const PREFIX: &str = "ed25519:";

/// Why a key could not be loaded, made or read.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key file is unusable (a link, another user's, readable by others,
    /// malformed); the message says what to do.
    #[error("{0}")]
    Invalid(String),
    /// The key file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// The daemon's private signing key.
pub struct DaemonKey {
    key: SigningKey,
}

impl std::fmt::Debug for DaemonKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret: only which key it is.
        write!(f, "DaemonKey({})", self.public())
    }
}

impl DaemonKey {
    /// The key made from a 32-byte seed (tests; a deterministic key).
    pub fn from_seed(seed: [u8; 32]) -> DaemonKey {
        DaemonKey {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// A new random key.
    pub fn generate() -> Result<DaemonKey, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| KeyError::Io {
            path: "the system's random source".into(),
            source: std::io::Error::other(e.to_string()),
        })?;
        Ok(DaemonKey::from_seed(seed))
    }

    /// The key in `dir` (`daemon.key`), made on first use, private to this
    /// user; `daemon.pub` is (re)written beside it. A key file that is a
    /// link, belongs to another user or is readable by others is refused:
    /// the message says how to fix it.
    pub fn load_or_create(dir: &Path) -> Result<DaemonKey, KeyError> {
        let path = dir.join(KEY_FILE);
        let io = |source| KeyError::Io {
            path: path.display().to_string(),
            source,
        };
        let key = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(mut f) => {
                let key = DaemonKey::generate()?;
                f.write_all(format!("{}\n", hex(key.key.as_bytes())).as_bytes())
                    .and_then(|()| f.sync_all())
                    .map_err(io)?;
                key
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => DaemonKey::read(&path)?,
            Err(e) => return Err(io(e)),
        };
        key.write_public(dir)?;
        Ok(key)
    }

    /// Reads an existing key file, with the same checks as
    /// [`DaemonKey::load_or_create`].
    pub fn read(path: &Path) -> Result<DaemonKey, KeyError> {
        let shown = path.display();
        let io = |source| KeyError::Io {
            path: shown.to_string(),
            source,
        };
        let meta = std::fs::symlink_metadata(path).map_err(io)?;
        if !meta.file_type().is_file() {
            return Err(KeyError::Invalid(format!(
                "{shown} is not a regular file (a symlink?): remove it and start the daemon again to make a new key (then run `toolgate install` again to pin it)"
            )));
        }
        let me = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
        if me.is_some_and(|uid| uid != 0 && uid != meta.uid()) {
            return Err(KeyError::Invalid(format!(
                "{shown} belongs to another user (uid {}): run toolgate as its owner",
                meta.uid()
            )));
        }
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(KeyError::Invalid(format!(
                "{shown} is readable by other users (mode {:o}): run `chmod 600 {shown}`",
                mode & 0o777
            )));
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        let mut seed = [0u8; 32];
        unhex(text.trim(), &mut seed).ok_or_else(|| {
                KeyError::Invalid(format!(
                    "{shown} does not hold a key (64 hex digits): remove it and start the daemon again to make a new one"
                ))
            })?;
        Ok(DaemonKey::from_seed(seed))
    }

    fn write_public(&self, dir: &Path) -> Result<(), KeyError> {
        let path = dir.join(PUBLIC_FILE);
        let text = format!("{}\n", self.public());
        if std::fs::read_to_string(&path).is_ok_and(|t| t == text) {
            return Ok(());
        }
        // Written beside and renamed over, so a reader never sees half a key
        // and a planted link is replaced, not followed.
        let tmp = dir.join(format!("{PUBLIC_FILE}.tmp"));
        let _ = std::fs::remove_file(&tmp);
        let io = |source| KeyError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&tmp)
            .map_err(io)?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }

    /// The public half, to pin in hooks and verify checkpoints with.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.key.verifying_key().to_bytes())
    }

    /// The signature of `message`, as 128 hex digits.
    pub fn sign(&self, message: &[u8]) -> String {
        hex(&self.key.sign(message).to_bytes())
    }
}

/// A daemon's public key, written `ed25519:<64 hex digits>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey([u8; 32]);

impl std::fmt::Display for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{PREFIX}{}", hex(&self.0))
    }
}

impl PublicKey {
    /// Reads `ed25519:<64 hex digits>` (the prefix may be left out).
    pub fn parse(text: &str) -> Result<PublicKey, KeyError> {
        let t = text.trim();
        let digits = t.strip_prefix(PREFIX).unwrap_or(t);
        let mut bytes = [0u8; 32];
        unhex(digits, &mut bytes).ok_or_else(|| {
                KeyError::Invalid(format!(
                    "{t:?} is not a daemon key: expected ed25519: and 64 hex digits, as in the daemon's {PUBLIC_FILE}"
                ))
            })?;
        VerifyingKey::from_bytes(&bytes).map_err(|_| {
            KeyError::Invalid(format!(
                "{t:?} is not a valid Ed25519 public key: copy it again from the daemon's {PUBLIC_FILE}"
            ))
        })?;
        Ok(PublicKey(bytes))
    }

    /// The key in a `daemon.pub` file.
    pub fn read(path: &Path) -> Result<PublicKey, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io {
            path: path.display().to_string(),
            source,
        })?;
        PublicKey::parse(&text)
    }

    /// True when `signature` (128 hex digits) is this key's signature of
    /// `message`. Anything malformed is false.
    pub fn verify(&self, message: &[u8], signature: &str) -> bool {
        let Ok(key) = VerifyingKey::from_bytes(&self.0) else {
            return false;
        };
        let mut sig = [0u8; 64];
        if unhex(signature.trim(), &mut sig).is_none() {
            return false;
        }
        key.verify_strict(message, &Signature::from_bytes(&sig))
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> std::path::PathBuf {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).unwrap();
        let d = std::env::temp_dir().join(format!("toolgate-key-{}", hex(&b)));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn signs_and_verifies_and_refuses_other_messages_keys_and_junk() {
        let k = DaemonKey::from_seed([7; 32]);
        let sig = k.sign(b"nonce|decision");
        assert!(k.public().verify(b"nonce|decision", &sig));
        assert!(!k.public().verify(b"nonce|decisioN", &sig));
        let other = DaemonKey::from_seed([8; 32]);
        assert!(!other.public().verify(b"nonce|decision", &sig));
        for junk in ["", "zz", &sig[..126], &format!("{sig}00")] {
            assert!(!k.public().verify(b"nonce|decision", junk), "{junk:?}");
        }
    }

    #[test]
    fn public_keys_round_trip_and_bad_ones_are_refused() {
        let p = DaemonKey::from_seed([1; 32]).public();
        assert_eq!(PublicKey::parse(&p.to_string()).unwrap(), p);
        assert_eq!(PublicKey::parse(&p.to_string()[PREFIX.len()..]).unwrap(), p);
        for bad in ["", "ed25519:", "ed25519:zz", "rsa:00", &"0".repeat(63)] {
            assert!(PublicKey::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_key_file_is_made_private_reused_and_refused_when_loose() {
        let d = dir();
        let a = DaemonKey::load_or_create(&d).unwrap();
        let mode = std::fs::metadata(d.join(KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let b = DaemonKey::load_or_create(&d).unwrap();
        assert_eq!(a.public(), b.public());
        assert_eq!(PublicKey::read(&d.join(PUBLIC_FILE)).unwrap(), a.public());
        std::fs::set_permissions(d.join(KEY_FILE), std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = DaemonKey::load_or_create(&d).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_linked_key_file_is_refused() {
        let d = dir();
        std::fs::write(d.join("elsewhere"), "00".repeat(32)).unwrap();
        std::os::unix::fs::symlink(d.join("elsewhere"), d.join(KEY_FILE)).unwrap();
        let e = DaemonKey::load_or_create(&d).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn debug_shows_no_secret() {
        let k = DaemonKey::from_seed([9; 32]);
        let shown = format!("{k:?}");
        assert!(!shown.contains(&hex(&[9; 32])), "{shown}");
        assert!(shown.contains("ed25519:"), "{shown}");
    }
}
