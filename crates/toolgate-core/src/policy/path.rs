//! Path specifiers for read / write rules (and MCP / other tools): a glob
//! such as `/etc/**`, `~/.ssh/**`, `./**` or `src/*.rs`.
//!
//! # How matching stays fast without knowing the environment at load time
//!
//! A pattern is split once, at load time, into a *base* (the root `/`, the
//! home directory `~`, or the workspace `./`) and a *tail* relative to it.
//! Only the tail is compiled into a glob, so nothing depends on the [`Env`]
//! and nothing is compiled per call. At check time the (absolute, normalized)
//! path is made relative to the base taken from the `Env` by stripping a
//! prefix — no allocation — and the tail glob is run on the rest.
//!
//! `*` does not cross `/`, `**` does. A tail ending in `/**` (or a pattern
//! written with a trailing `/`) also matches the directory itself, so
//! `write(/etc/**)` covers `/etc`. `..` is refused in patterns: write the
//! absolute path instead.
//!
//! Matching comes in two strengths: `strict` (allow rules) compares case
//! sensitively, `broad` (deny and ask rules) ignores ASCII case, because on
//! case-insensitive file systems (macOS, Windows) `~/.SSH/id_rsa` is
//! `~/.ssh/id_rsa`.

use crate::paths::Env;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// What a path pattern is relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    /// `/abs` or `//abs`.
    Root,
    /// `~` or `~/…` (also `$HOME/…`).
    Home,
    /// `./…` or a relative pattern.
    Workspace,
}

/// A compiled path pattern.
#[derive(Debug, Clone)]
pub(crate) struct PathPattern {
    base: Base,
    /// True when the pattern also matches the base directory itself
    /// (`/**`, `~`, `./**`, `.`).
    matches_base: bool,
    /// The tail glob (plus its directory form for `dir/**`), case sensitive.
    exact: Option<GlobSet>,
    /// The same, ignoring ASCII case.
    folded: Option<GlobSet>,
}

impl PathPattern {
    /// Parses a path specifier (not `*`). Errors are sentence tails.
    pub(crate) fn parse(spec: &str) -> Result<PathPattern, String> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err("has an empty path".into());
        }
        let (base, rest) = if let Some(r) = spec.strip_prefix("//") {
            (Base::Root, r)
        } else if let Some(r) = spec.strip_prefix('/') {
            (Base::Root, r)
        } else if spec == "~" || spec.starts_with("~/") {
            (Base::Home, &spec[1..])
        } else if let Some(r) = ["${HOME}", "$HOME"].iter().find_map(|v| {
            spec.strip_prefix(v)
                .filter(|r| r.is_empty() || r.starts_with('/'))
        }) {
            (Base::Home, r)
        } else if let Some(user_rest) = spec.strip_prefix('~') {
            // `~user/…`, resolved as paths.rs does.
            let (user, tail) = user_rest.split_at(user_rest.find('/').unwrap_or(user_rest.len()));
            if user.is_empty()
                || !user
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
            {
                return Err(format!(
                    "has an unsupported '~' form {spec:?} — write ~/path, ~user/path or an absolute path"
                ));
            }
            let home = if user == "root" {
                "root".to_string()
            } else {
                format!("home/{user}")
            };
            return Self::build(Base::Root, &format!("{home}{tail}"), spec);
        } else {
            (Base::Workspace, spec)
        };
        Self::build(base, rest, spec)
    }

    fn build(base: Base, rest: &str, spec: &str) -> Result<PathPattern, String> {
        let trailing_slash = rest.ends_with('/');
        let mut parts: Vec<&str> = Vec::new();
        for part in rest.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    return Err(format!(
                        "has '..' in its path {spec:?} — write the absolute path instead"
                    ));
                }
                p => parts.push(p),
            }
        }
        let mut tail = parts.join("/");
        if trailing_slash && !tail.is_empty() && !tail.ends_with("**") {
            tail.push_str("/**");
        }
        // The forms that also match the directory itself.
        let (dir_form, matches_base) = if tail == "**" || tail.is_empty() {
            (None, true)
        } else if let Some(dir) = tail.strip_suffix("/**") {
            (Some(dir.to_string()), false)
        } else {
            (None, false)
        };
        let (exact, folded) = if tail.is_empty() {
            (None, None)
        } else {
            let mut globs = vec![tail.as_str()];
            if let Some(d) = &dir_form {
                globs.push(d);
            }
            (
                Some(compile(&globs, false, spec)?),
                Some(compile(&globs, true, spec)?),
            )
        };
        Ok(PathPattern {
            base,
            matches_base,
            exact,
            folded,
        })
    }

    /// Case-sensitive match of an absolute, normalized path (allow side).
    pub(crate) fn matches_strict(&self, abs_path: &str, env: &Env) -> bool {
        self.matches(abs_path, env, false)
    }

    /// ASCII-case-insensitive match of an absolute, normalized path (deny side).
    pub(crate) fn matches_broad(&self, abs_path: &str, env: &Env) -> bool {
        self.matches(abs_path, env, true)
    }

    fn matches(&self, abs_path: &str, env: &Env, fold: bool) -> bool {
        // Deny and ask rules (`fold`) written `~/…` cover every user's home;
        // allow rules only the agent's own.
        let other_home = match self.base {
            Base::Home if fold => env.home_of(abs_path),
            _ => None,
        };
        let base = match self.base {
            Base::Root => "/",
            Base::Home => other_home.as_deref().unwrap_or(env.home.as_str()),
            Base::Workspace => env.workspace.as_str(),
        };
        let Some(rel) = relative_to(abs_path, base, fold) else {
            return false;
        };
        if rel.is_empty() {
            return self.matches_base;
        }
        let set = if fold { &self.folded } else { &self.exact };
        set.as_ref().is_some_and(|s| s.is_match(rel))
    }
}

/// Compiles globs into one set; `*` does not cross `/`.
pub(crate) fn compile(globs: &[&str], fold: bool, spec: &str) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for g in globs {
        let glob = GlobBuilder::new(g)
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(fold)
            .build()
            .map_err(|e| format!("has an invalid glob {spec:?}: {}", e.kind()))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| format!("has an invalid glob {spec:?}: {}", e.kind()))
}

/// `path` relative to `base` (both absolute and normalized): `""` for the
/// base itself, `None` when the path is outside it.
fn relative_to<'a>(path: &'a str, base: &str, fold: bool) -> Option<&'a str> {
    if base == "/" {
        return path.strip_prefix('/');
    }
    let head = path.get(..base.len())?;
    let same = if fold {
        head.eq_ignore_ascii_case(base)
    } else {
        head == base
    };
    if !same {
        return None;
    }
    let rest = &path[base.len()..];
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env::new("/home/dev", "/home/dev/proj")
    }

    fn pat(s: &str) -> PathPattern {
        PathPattern::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str, bool)] = &[
            ("/etc/**", "/etc/passwd", true),
            ("/etc/**", "/etc/ssh/sshd_config", true),
            ("/etc/**", "/etc", true),
            ("/etc/**", "/etcetera", false),
            ("/etc/**", "/", false),
            ("/etc", "/etc", true),
            ("/etc", "/etc/passwd", false),
            ("/etc/", "/etc/passwd", true),
            ("//etc/*", "/etc/passwd", true),
            ("/etc/*", "/etc/ssh/sshd_config", false),
            ("/**", "/", true),
            ("/**", "/anything/at/all", true),
            ("/", "/", true),
            ("/", "/x", false),
            ("~/.ssh/**", "/home/dev/.ssh/id_rsa", true),
            ("~/.ssh/**", "/home/dev/.ssh", true),
            ("~/.ssh/**", "/home/dev/.sshx", false),
            ("~/.ssh/**", "/root/.ssh/id_rsa", false),
            ("~", "/home/dev", true),
            ("~", "/home/dev/x", false),
            ("$HOME/.aws/**", "/home/dev/.aws/credentials", true),
            ("~root/.ssh/**", "/root/.ssh/id_rsa", true),
            ("~alice/**", "/home/alice/x", true),
            ("./**", "/home/dev/proj", true),
            ("./**", "/home/dev/proj/src/main.rs", true),
            ("./**", "/home/dev/project2/x", false),
            ("./**", "/home/dev", false),
            ("**", "/home/dev/proj/a/b", true),
            ("src/*.rs", "/home/dev/proj/src/main.rs", true),
            ("src/*.rs", "/home/dev/proj/src/a/main.rs", false),
            ("src/**/*.rs", "/home/dev/proj/src/a/b/main.rs", true),
            ("./src/./x", "/home/dev/proj/src/x", true),
            ("**/.env", "/home/dev/proj/a/.env", true),
            ("**/.env", "/home/dev/proj/.env", true),
            ("**/.env", "/etc/.env", false),
        ];
        let e = env();
        for (p, path, want) in cases {
            assert_eq!(pat(p).matches_strict(path, &e), *want, "{p:?} vs {path:?}");
        }
    }

    #[test]
    fn broad_ignores_case_strict_does_not() {
        let e = env();
        let p = pat("~/.ssh/**");
        assert!(p.matches_broad("/home/dev/.SSH/id_rsa", &e));
        assert!(!p.matches_strict("/home/dev/.SSH/id_rsa", &e));
        assert!(p.matches_broad("/HOME/dev/.ssh/id_rsa", &e));
    }

    #[test]
    fn env_decides_home_and_workspace() {
        let p = pat("./**");
        let mut e = env();
        e.workspace = "/srv/app".into();
        assert!(p.matches_strict("/srv/app/x", &e));
        assert!(!p.matches_strict("/home/dev/proj/x", &e));
        e.workspace = "/".into();
        assert!(p.matches_strict("/anything", &e));
    }

    #[test]
    fn parse_errors() {
        for bad in ["", "../x", "/etc/../x", "~/../x", "~$(x)/y", "/a/[z"] {
            assert!(PathPattern::parse(bad).is_err(), "{bad:?}");
        }
    }
}
