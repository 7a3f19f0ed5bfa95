//! Scope profiles (docs/profiles.md): a Markdown file whose YAML frontmatter says
//! on whose behalf the agent acts, which actions it may take, how
//! autonomously, and which hardening layers are on. The policy file names
//! it (`profile = "…"`); the caller reads the file and hands the text in.

mod layers;
pub(crate) mod model;

pub(crate) use layers::BASE_ALLOWLIST;
pub(crate) use model::ProfileDoc;

use crate::normalize::NormalizedCall;
use regex::Regex;

/// A validated profile, ready to judge calls.
#[derive(Debug, Clone)]
pub struct Profile {
    /// What the file says.
    pub doc: ProfileDoc,
    /// Where it came from (a path), for messages.
    pub origin: String,
    /// `actions[i].paths`, compiled.
    paths: Vec<Option<Regex>>,
    /// Files no call may write, name in a command, or redirect to: the
    /// policy and the profile themselves (set by the loader, absolute), and
    /// the files the sandbox detection trusts.
    protected: Vec<String>,
}

/// A profile that does not validate: where, and what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct ProfileError {
    /// The file.
    pub origin: String,
    /// What is wrong, with the path of the offending value (`scope.permitted_actions[2]`).
    pub message: String,
}

impl Profile {
    /// The largest profile file read, in bytes.
    pub const MAX_BYTES: usize = 256 * 1024;

    /// Parses a profile file: Markdown whose YAML frontmatter (between a
    /// first line `---` and the next `---`) is the profile; the body is for
    /// people. Errors carry the file's line and column. Hostile YAML
    /// (alias bombs, deep nesting) is refused by the parser's budgets.
    pub fn parse_markdown(text: &str, origin: &str) -> Result<Profile, ProfileError> {
        let err = |message: String| ProfileError {
            origin: origin.to_string(),
            message,
        };
        if text.len() > Profile::MAX_BYTES {
            return Err(err(format!(
                "the file is {} bytes; a profile is at most {} — keep the body short",
                text.len(),
                Profile::MAX_BYTES
            )));
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some(rest) = text
            .strip_prefix("---\n")
            .or_else(|| text.strip_prefix("---\r\n"))
        else {
            return Err(err(
                "no YAML frontmatter — the file must start with a line `---`, then the profile \
                 in YAML, then a line `---` (see docs/profiles.md)"
                    .into(),
            ));
        };
        let mut end = None;
        let mut pos = 0;
        for line in rest.split_inclusive('\n') {
            if line.trim_end() == "---" {
                end = Some(pos);
                break;
            }
            pos += line.len();
        }
        let Some(end) = end else {
            return Err(err(
                "the YAML frontmatter is not closed — end it with a line `---`".into(),
            ));
        };
        let doc: ProfileDoc = serde_saphyr::from_str(&rest[..end]).map_err(|e| {
            // Line 1 of the YAML is line 2 of the file.
            let at = e
                .location()
                .map(|l| format!("line {}, column {}: ", l.line() + 1, l.column()))
                .unwrap_or_default();
            err(format!(
                "{at}{} — see docs/profiles.md for the fields and their types",
                e.without_snippet()
            ))
        })?;
        Profile::build(doc, origin)
    }

    /// Validates a profile already read into a JSON value.
    pub fn from_value(value: serde_json::Value, origin: &str) -> Result<Profile, ProfileError> {
        let doc: ProfileDoc = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            let at = if path == "." {
                String::new()
            } else {
                format!("{path}: ")
            };
            ProfileError {
                origin: origin.to_string(),
                message: format!(
                    "{at}{inner} — see docs/profiles.md for the fields and their types"
                ),
            }
        })?;
        Profile::build(doc, origin)
    }

    fn build(doc: ProfileDoc, origin: &str) -> Result<Profile, ProfileError> {
        let err = |message: String| ProfileError {
            origin: origin.to_string(),
            message,
        };
        if doc.version != 1 {
            return Err(err(format!(
                "version: {} is not a known version — use 1",
                doc.version
            )));
        }
        if doc.scope.permitted_actions.is_empty() {
            return Err(err(
                "scope.permitted_actions is empty — name at least one action or tool (with \
                 tool_policy_lockdown on, nothing else could run)"
                    .into(),
            ));
        }
        for (i, a) in doc.actions.iter().enumerate() {
            if a.class.trim().is_empty() || a.tools.is_empty() {
                return Err(err(format!(
                    "actions[{i}]: needs a class and at least one tool"
                )));
            }
        }
        let paths = doc
            .actions
            .iter()
            .enumerate()
            .map(|(i, a)| {
                a.paths
                    .as_deref()
                    .map(|p| {
                        Regex::new(p).map_err(|e| {
                            err(format!("actions[{i}].paths is not a valid regex: {e}"))
                        })
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Profile {
            doc,
            origin: origin.to_string(),
            paths,
            protected: vec!["/.dockerenv".into(), "/run/.containerenv".into()],
        })
    }

    /// The same profile, also protecting `files` (absolute paths: the
    /// policy file and this profile, as the loader found them).
    pub fn protecting(mut self, files: impl IntoIterator<Item = String>) -> Profile {
        for f in files {
            if !self.protected.contains(&f) {
                self.protected.push(f);
            }
        }
        self
    }

    /// The files no call may touch for writing or name in a command.
    pub fn protected(&self) -> &[String] {
        &self.protected
    }

    /// The action classes of a call: every `actions` rule whose tools name
    /// the call's tool (or kind, or a `prefix*`, without case) and whose
    /// `paths` pattern, if any, matches a path the call touches.
    pub fn classes_of(&self, n: &NormalizedCall) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let tool = n.tool.to_ascii_lowercase();
        for (rule, re) in self.doc.actions.iter().zip(&self.paths) {
            let tool_hit = rule.tools.iter().any(|t| {
                let t = t.trim().to_ascii_lowercase();
                match t.strip_suffix('*') {
                    Some(prefix) => tool.starts_with(prefix),
                    None => t == tool || t == n.kind.as_str(),
                }
            });
            if !tool_hit {
                continue;
            }
            if let Some(re) = re
                && !n.paths.iter().any(|p| re.is_match(&p.path))
            {
                continue;
            }
            if !out.contains(&rule.class) {
                out.push(rule.class.clone());
            }
        }
        out
    }

    /// True when the exec allowlist admits `program` (a file name).
    pub fn exec_allowed(&self, program: &str) -> bool {
        BASE_ALLOWLIST.contains(&program) || self.doc.exec_allowlist.iter().any(|p| p == program)
    }
}

#[cfg(test)]
mod tests;
