//! Why a configured target cannot be built: [`ConfigError`].
//!
//! A leaf (it imports no other module of the crate): `config` builds every
//! channel, and each channel's constructor (`webhook`, `slack`, `telegram`,
//! `discord`) and the HTTP helpers report their own invalid settings with
//! this error. Kept in `config`, it made each channel import the module
//! that imports it.

/// Why a target cannot be built. Messages name the target and the setting
/// and never contain a secret's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A variable named for a secret is unset or empty.
    #[error(
        "{target}: the environment variable {var} (named by {field}) is not set or is empty; \
         set it in the daemon's environment (secrets never go in the config file)"
    )]
    MissingEnv {
        /// `target "name" (kind)`.
        target: String,
        /// The setting naming it (`bot_token_env`…).
        field: &'static str,
        /// The variable's name.
        var: String,
    },
    /// A setting's value is unusable.
    #[error("{target}: {detail}")]
    Invalid {
        /// `target "name" (kind)`, or the kind alone.
        target: String,
        /// What is wrong and what to write instead.
        detail: String,
    },
}

impl ConfigError {
    pub(crate) fn invalid(target: &str, detail: String) -> ConfigError {
        ConfigError::Invalid {
            target: target.to_string(),
            detail,
        }
    }

    /// The same error, naming `label` as its target.
    pub(crate) fn about(self, label: &str) -> ConfigError {
        match self {
            ConfigError::Invalid { detail, .. } => ConfigError::Invalid {
                target: label.to_string(),
                detail,
            },
            ConfigError::MissingEnv { field, var, .. } => ConfigError::MissingEnv {
                target: label.to_string(),
                field,
                var,
            },
        }
    }
}
