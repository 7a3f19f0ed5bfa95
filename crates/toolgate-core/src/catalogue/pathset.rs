//! Named sets of paths (`@critical`, `@secrets` …) and glob matching of
//! resolved paths against them, including arguments that are globs themselves.

use crate::paths::{Env, is_within};
use globset::{Glob, GlobBuilder, GlobMatcher};

/// A compiled path pattern. Patterns starting with `~/` (or equal to `~`)
/// are matched against the home-relative form of a path, so one compiled
/// catalogue serves any home directory.
#[derive(Debug, Clone)]
pub struct PathPattern {
    text: String,
    home_relative: bool,
    matcher: GlobMatcher,
    /// For `dir/**`: `dir` itself, which the pattern also covers.
    dir_itself: Option<String>,
}

impl PathPattern {
    /// Compiles a pattern; `**` crosses directories, `*` does not, and
    /// `dir/**` also matches `dir` itself.
    pub fn new(text: &str) -> Result<PathPattern, globset::Error> {
        let home_relative = text == "~" || text.starts_with("~/");
        let body = if home_relative { text.replacen('~', "/~", 1) } else { text.to_string() };
        let dir_itself = body.strip_suffix("/**").filter(|d| !is_glob(d)).map(str::to_string);
        let glob: Glob = GlobBuilder::new(&body).literal_separator(true).backslash_escape(true).build()?;
        Ok(PathPattern { text: text.to_string(), home_relative, matcher: glob.compile_matcher(), dir_itself })
    }

    /// The pattern as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The directory before the pattern's first wildcard, absolute
    /// (`~/.ssh/id_*` → `/home/dev/.ssh`); `None` when it starts with one.
    pub fn literal_dir(&self, env: &Env) -> Option<String> {
        let first_glob = self.text.find(['*', '?', '[', '{'])?;
        let dir = self.text[..first_glob].rsplit_once('/')?.0;
        if dir.is_empty() {
            return None;
        }
        Some(if dir == "~" { env.home.clone() } else if let Some(r) = dir.strip_prefix("~/") { format!("{}/{r}", env.home) } else { dir.to_string() })
    }

    /// True when the absolute path `abs` matches.
    pub fn matches(&self, abs: &str, env: &Env) -> bool {
        let form;
        let subject = if self.home_relative {
            match home_form(abs, &env.home) {
                Some(rel) => {
                    form = rel;
                    form.as_str()
                }
                None => return false,
            }
        } else {
            abs
        };
        self.dir_itself.as_deref() == Some(subject) || self.matcher.is_match(subject)
    }
}

/// `/home/dev/x` → `/~/x` when home is `/home/dev`.
fn home_form(abs: &str, home: &str) -> Option<String> {
    if !is_within(abs, home) {
        return None;
    }
    Some(format!("/~{}", &abs[home.len()..]))
}

/// True when `text` has glob characters the shell would expand.
pub fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// The concrete paths to test for a resolved argument. A plain path is
/// itself. A glob stands for what it could match: a glob over all of a
/// directory's entries (`/*`, `~/.*`) stands for the directory itself, since
/// removing every entry is removing the tree; any other glob is tested by
/// the paths its wildcards could produce (empty and one-character fills),
/// plus its literal base directory's children.
pub fn candidates(abs: &str) -> Vec<String> {
    if !is_glob(abs) {
        return vec![abs.to_string()];
    }
    let mut out = Vec::new();
    let (base, last) = match abs.rfind('/') {
        Some(0) => ("/", &abs[1..]),
        Some(i) => (&abs[..i], &abs[i + 1..]),
        None => ("/", abs),
    };
    if !is_glob(base) && matches!(last, "*" | ".*" | "**" | "*.*" | "{*,.*}" | ".[!.]*" | "..?*" | ".??*" | "[!.]*") {
        out.push(base.to_string());
    }
    let fill = |with: &str| {
        let mut s = String::with_capacity(abs.len());
        let mut in_class = false;
        for c in abs.chars() {
            match c {
                '[' => {
                    in_class = true;
                    s.push_str(with);
                }
                ']' if in_class => in_class = false,
                _ if in_class => {}
                '*' => s.push_str(with),
                '?' => s.push('x'),
                _ => s.push(c),
            }
        }
        crate::paths::normalize_abs(&s)
    };
    out.push(fill(""));
    out.push(fill("x"));
    out.dedup();
    out
}

/// A glob argument tested directly against concrete paths (`/e*` against
/// `/etc`): used for sets of directories.
pub fn glob_covers(glob: &str, concrete: &str) -> bool {
    match GlobBuilder::new(glob).literal_separator(true).build() {
        Ok(g) => g.compile_matcher().is_match(concrete),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env::new("/home/dev", "/home/dev/proj")
    }

    #[test]
    fn home_relative_patterns() {
        let p = PathPattern::new("~/.ssh/**").unwrap();
        assert!(p.matches("/home/dev/.ssh/id_rsa", &env()));
        assert!(p.matches("/home/dev/.ssh", &env()));
        assert!(!p.matches("/root/.ssh/id_rsa", &env()));
        let home = PathPattern::new("~").unwrap();
        assert!(home.matches("/home/dev", &env()));
        assert!(!home.matches("/home/dev/x", &env()));
    }

    #[test]
    fn glob_arguments_expand_to_candidates() {
        assert!(candidates("/*").contains(&"/".to_string()));
        assert!(candidates("/home/dev/.*").contains(&"/home/dev".to_string()));
        assert!(!candidates("/home/dev/proj/*.o").contains(&"/home/dev/proj".to_string()));
        assert!(candidates("/home/dev/proj/.en?").contains(&"/home/dev/proj/.enx".to_string()));
        assert!(glob_covers("/e*", "/etc"));
    }
}
