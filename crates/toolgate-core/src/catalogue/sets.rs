//! Named sets of paths (`@critical`, `@secrets` …) and how an argument —
//! a resolved path, or a glob the shell would expand — is tested against them.
//!
//! Each set is compiled into two `GlobSet`s (absolute patterns, and patterns
//! under `~`, matched against the home-relative form of a path), so one test
//! is one automaton run whatever the set's size, and one compiled catalogue
//! serves any home directory. The patterns are parsed (and so checked) when
//! the set is made; the automata are built on first use, and not at all
//! while no pattern's literal start and end fit the paths asked about: a
//! short-lived process (a hook) pays only for the sets its call could be in.

use crate::paths::{Env, normalize_abs};
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use std::sync::OnceLock;

/// A compiled path set.
#[derive(Debug, Clone)]
pub struct PathSet {
    /// Each pattern, parsed, and whether it is home-relative.
    globs: Vec<(Glob, bool)>,
    /// For each pattern, in the same order, the literal text every path it
    /// matches starts and ends with ([`fences`]).
    fences: Vec<(String, String)>,
    /// The absolute and the home-relative automata, built on first use.
    automata: OnceLock<Box<(GlobSet, GlobSet)>>,
    /// `dir` for each `dir/**` pattern, which also covers `dir` itself
    /// (absolute, or `/~…` for home-relative ones).
    dirs: Vec<String>,
    /// Patterns without wildcards, as written (`~/.ssh`, `/etc`).
    concrete: Vec<String>,
    /// The directory before the first wildcard of each pattern, as written.
    literal_dirs: Vec<String>,
    /// File names tried inside a glob argument's directory (`.env`, `id_rsa`).
    probes: Vec<String>,
    /// Exceptions (the set `not_<name>`).
    exclude: Option<Box<PathSet>>,
    /// Members count only outside the workspace.
    outside_workspace_only: bool,
}

/// `/home/dev/x` → `/~/x`: the path relative to the home it lies in, for
/// whichever user ([`Env::home_of`]), so home-relative patterns cover
/// every user's home, not just the gate's own.
fn home_form(abs: &str, env: &Env) -> Option<String> {
    let home = env.home_of(abs)?;
    Some(format!("/~{}", &abs[home.len()..]))
}

fn expand_home(written: &str, env: &Env) -> String {
    if written == "~" {
        env.home.clone()
    } else if let Some(r) = written.strip_prefix("~/") {
        format!("{}/{r}", env.home)
    } else {
        written.to_string()
    }
}

impl PathSet {
    /// Compiles patterns: `**` crosses directories, `*` does not; `~` and
    /// `~/…` are relative to the home directory; `dir/**` covers `dir` too.
    pub fn new(patterns: &[String], probes: Vec<String>) -> Result<PathSet, globset::Error> {
        let mut globs = Vec::with_capacity(patterns.len());
        let mut fenced = Vec::with_capacity(patterns.len());
        let mut dirs = Vec::new();
        let mut concrete = Vec::new();
        let mut literal_dirs = Vec::new();
        for p in patterns {
            let home_relative = p == "~" || p.starts_with("~/");
            let body = if home_relative {
                p.replacen('~', "/~", 1)
            } else {
                p.clone()
            };
            let glob = GlobBuilder::new(&body)
                .literal_separator(true)
                .backslash_escape(true)
                .build()?;
            globs.push((glob, home_relative));
            fenced.push(fences(&body));
            if let Some(d) = body.strip_suffix("/**").filter(|d| !is_glob(d)) {
                dirs.push(d.to_string());
            }
            match p.find(['*', '?', '[', '{']) {
                None => concrete.push(p.clone()),
                Some(i) => {
                    if let Some((d, _)) = p[..i].rsplit_once('/')
                        && !d.is_empty()
                    {
                        literal_dirs.push(d.to_string());
                    }
                }
            }
        }
        Ok(PathSet {
            globs,
            fences: fenced,
            automata: OnceLock::new(),
            dirs,
            concrete,
            literal_dirs,
            probes,
            exclude: None,
            outside_workspace_only: false,
        })
    }

    /// Builds the automata (on first use; [`PathSet::compile`] builds them
    /// ahead). A set of patterns that each parse builds unless it exceeds the
    /// regex engine's size limits, which no shipped set comes near (a unit
    /// test builds every one); like a shipped pack that does not load, that
    /// would be a broken build, which must not decide as if the set were
    /// empty.
    fn automata(&self) -> &(GlobSet, GlobSet) {
        self.automata.get_or_init(|| match self.build() {
            Ok(sets) => Box::new(sets),
            Err(e) => panic!("path set does not compile: {e}"),
        })
    }

    fn build(&self) -> Result<(GlobSet, GlobSet), globset::Error> {
        let mut abs = GlobSetBuilder::new();
        let mut home = GlobSetBuilder::new();
        for (glob, home_relative) in &self.globs {
            if *home_relative {
                home.add(glob.clone());
            } else {
                abs.add(glob.clone());
            }
        }
        Ok((abs.build()?, home.build()?))
    }

    /// Builds the automata now (and its exceptions'); an error names what
    /// the glob engine refused.
    pub fn compile(&self) -> Result<(), String> {
        if self.automata.get().is_none() {
            let sets = self.build().map_err(|e| e.to_string())?;
            let _ = self.automata.set(Box::new(sets));
        }
        match &self.exclude {
            Some(x) => x.compile(),
            None => Ok(()),
        }
    }

    /// Sets the exceptions.
    pub fn set_exclude(&mut self, exclude: PathSet) {
        self.exclude = Some(Box::new(exclude));
    }

    /// Makes members count only outside the workspace.
    pub fn set_outside_workspace_only(&mut self, on: bool) {
        self.outside_workspace_only = on;
    }

    /// True when the concrete absolute path is in the set (and not excepted).
    pub fn contains(&self, abs: &str, env: &Env) -> bool {
        if self.exclude.as_ref().is_some_and(|x| x.contains(abs, env)) {
            return false;
        }
        if self.outside_workspace_only && env.in_workspace(abs) {
            return false;
        }
        self.matches(abs, home_form(abs, env).as_deref())
    }

    /// Whether a pattern matches the absolute path `abs` or, for
    /// home-relative patterns, its home-relative form `home` (`/~/…`).
    fn matches(&self, abs: &str, home: Option<&str>) -> bool {
        if self
            .dirs
            .iter()
            .any(|d| d == abs || Some(d.as_str()) == home)
        {
            return true;
        }
        // No pattern can match (the common case): no need to build the
        // automata to say so.
        if self.automata.get().is_none() && !self.may_match(abs, home) {
            return false;
        }
        let (abs_set, home_set) = self.automata();
        abs_set.is_match(abs) || home.is_some_and(|h| home_set.is_match(h))
    }

    /// Whether some pattern could match the absolute path `abs` (or its
    /// home-relative form `home`): false only when none can.
    fn may_match(&self, abs: &str, home: Option<&str>) -> bool {
        self.globs
            .iter()
            .zip(&self.fences)
            .any(|((_, home_relative), (start, end))| {
                let path = if *home_relative { home } else { Some(abs) };
                path.is_some_and(|p| p.starts_with(start.as_str()) && p.ends_with(end.as_str()))
            })
    }

    /// True when an argument (a resolved path, or a glob over paths) could
    /// name a member of the set.
    pub fn matches_arg(&self, arg: &str, env: &Env) -> bool {
        if !is_glob(arg) {
            return self.contains(arg, env);
        }
        if candidates(arg).iter().any(|c| self.contains(c, env)) {
            return true;
        }
        // Does the glob cover a concrete member (`/e*` covers `/etc`)? Only
        // members that start with the glob's literal prefix can be covered.
        let prefix = &arg[..arg.find(['*', '?', '[']).unwrap_or(arg.len())];
        let home_arg = home_form(arg, env);
        let covered = self.concrete.iter().any(|c| match c.strip_prefix('~') {
            Some(rest) => home_arg.as_deref().is_some_and(|h| {
                let member = format!("/~{rest}");
                let hp = &h[..h.find(['*', '?', '[']).unwrap_or(h.len())];
                member.starts_with(hp) && wildcard_match(h, &member)
            }),
            None => c.starts_with(prefix) && wildcard_match(arg, c),
        });
        if covered {
            return true;
        }
        // Or a probe file it aims at: sharing the probe's first letters
        // (`.en?`, `cred*`), or listing a directory that holds members
        // (`~/.ssh/*`). A wildcard never matches a leading dot.
        let (base, last) = arg
            .rsplit_once('/')
            .map(|(b, l)| (if b.is_empty() { "/" } else { b }, l))
            .unwrap_or(("/", arg));
        let literal = &last[..last.find(['*', '?', '[']).unwrap_or(last.len())];
        if self.probes.is_empty() {
            return false;
        }
        let base_home = home_form(base, env);
        let secret_dir = self.literal_dirs.iter().any(|d| {
            expand_home(d, env) == base
                || d.strip_prefix('~')
                    .is_some_and(|rest| base_home.as_deref() == Some(&format!("/~{rest}")))
        });
        self.probes.iter().any(|probe| {
            let cand = format!("{}/{probe}", base.trim_end_matches('/'));
            let dot_ok = !probe.starts_with('.') || last.starts_with('.');
            let aimed = secret_dir || (!literal.is_empty() && probe.starts_with(literal));
            dot_ok && aimed && wildcard_match(arg, &cand) && self.contains(&cand, env)
        })
    }
}

/// The literal text every path a pattern matches starts with and ends with:
/// what comes before its first special character (`*?[]{}\\`) and after its
/// last, or the whole pattern when it has none. A `**` next to a `/` may
/// match nothing, taking the `/` with it (`**/.env` matches `.env`, `a/**`
/// is treated as possibly matching `a`), so that `/` is left out.
fn fences(pattern: &str) -> (String, String) {
    const SPECIAL: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];
    let (Some(first), Some(last)) = (pattern.find(SPECIAL), pattern.rfind(SPECIAL)) else {
        return (pattern.to_string(), pattern.to_string());
    };
    let mut start = &pattern[..first];
    if pattern[first..].starts_with("**") {
        start = start.strip_suffix('/').unwrap_or(start);
    }
    let mut end = &pattern[last + 1..];
    if pattern[..=last].ends_with("**") {
        end = end.strip_prefix('/').unwrap_or(end);
    }
    (start.to_string(), end.to_string())
}

/// True when `text` has glob characters the shell would expand.
pub fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// The concrete paths to test for a glob argument, besides coverage: a glob
/// over all of a directory's entries (`/*`, `~/.*`) stands for the directory
/// itself, since removing every entry is removing the tree; any glob also
/// stands for what its wildcards produce when filled with nothing or one
/// character.
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
    if !is_glob(base)
        && matches!(
            last,
            "*" | ".*" | "**" | "*.*" | "{*,.*}" | ".[!.]*" | "..?*" | ".??*" | "[!.]*"
        )
    {
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
        normalize_abs(&s)
    };
    out.push(fill(""));
    out.push(fill("x"));
    out.dedup();
    out
}

/// Shell-style matching of a glob argument against a concrete path: `*` and
/// `?` stay within one path component, `**` spans components, `[…]` is a
/// class (`!` or `^` negates). No compilation: arguments are one-off.
pub fn wildcard_match(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.split('/').collect();
    let txt: Vec<&str> = path.split('/').collect();
    match_components(&pat, &txt, 0)
}

fn match_components(pat: &[&str], txt: &[&str], depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    match pat.split_first() {
        None => txt.is_empty(),
        Some((&"**", rest)) => {
            (0..=txt.len()).any(|skip| match_components(rest, &txt[skip..], depth + 1))
        }
        Some((p, rest)) => match txt.split_first() {
            Some((t, trest)) => {
                match_segment(p.as_bytes(), t.as_bytes())
                    && match_components(rest, trest, depth + 1)
            }
            None => false,
        },
    }
}

/// One component: the two-pointer wildcard algorithm with `[…]` classes.
fn match_segment(p: &[u8], t: &[u8]) -> bool {
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = class_match(&p[pi..], t[ti]) {
                        if matched {
                            pi += next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == b'[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Matches one byte against a `[…]` class at the start of `p`; returns
/// (matched, class length), or `None` when the class is unterminated.
fn class_match(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        if i + 2 < p.len() && p[i + 1] == b'-' && p[i + 2] != b']' {
            matched |= p[i] <= c && c <= p[i + 2];
            i += 3;
        } else {
            matched |= p[i] == c;
            i += 1;
        }
        first = false;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Env {
        Env::new("/home/dev", "/home/dev/proj")
    }

    fn set(p: &[&str]) -> PathSet {
        PathSet::new(
            &p.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            vec![".env".into(), "id_rsa".into()],
        )
        .unwrap()
    }

    #[test]
    fn home_relative_patterns() {
        let s = set(&["~/.ssh/**", "~"]);
        assert!(s.contains("/home/dev/.ssh/id_rsa", &env()));
        assert!(s.contains("/home/dev/.ssh", &env()));
        assert!(s.contains("/home/dev", &env()));
        assert!(!s.contains("/home/dev/x", &env()));
        // Every user's home, not only the gate's own.
        assert!(s.contains("/root/.ssh/id_rsa", &env()));
        assert!(s.contains("/home/alice/.ssh/config", &env()));
        assert!(s.contains("/Users/bob", &env()));
        assert!(!s.contains("/srv/.ssh/id_rsa", &env()));
        assert!(!s.contains("/home", &env()));
        // Globs over other users' homes.
        assert!(s.matches_arg("/home/*/.ssh/id_rsa", &env()));
    }

    #[test]
    fn glob_arguments() {
        let crit = set(&["/", "/etc", "~"]);
        assert!(crit.matches_arg("/*", &env()));
        assert!(crit.matches_arg("/e*", &env()));
        assert!(crit.matches_arg("/home/dev/.*", &env()));
        assert!(!crit.matches_arg("/home/dev/proj/*.o", &env()));
        let secrets = set(&["**/.env", "~/.ssh/id_*"]);
        assert!(secrets.matches_arg("/home/dev/proj/.en?", &env()));
        assert!(secrets.matches_arg("/home/dev/.ssh/*", &env()));
        assert!(!secrets.matches_arg("/home/dev/proj/node_modules/*", &env()));
    }

    /// Paths a pattern matches, and near misses: each special part filled
    /// in one of several ways.
    fn fill(pattern: &str, rng: &mut u64) -> String {
        let mut next = |n: usize| {
            *rng ^= *rng << 13;
            *rng ^= *rng >> 7;
            *rng ^= *rng << 17;
            (*rng % n as u64) as usize
        };
        let b: Vec<char> = pattern.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                '*' if b.get(i + 1) == Some(&'*') => {
                    let with = ["", "d", "d/e", "/"][next(4)];
                    out.push_str(with);
                    i += 2;
                    if with.is_empty() && b.get(i) == Some(&'/') && next(2) == 0 {
                        i += 1;
                    }
                    continue;
                }
                '*' => out.push_str(["", "x", "ab.c", "/"][next(4)]),
                '?' => out.push_str(["q", ".", ""][next(3)]),
                '[' => {
                    let end = b[i..]
                        .iter()
                        .position(|&c| c == ']')
                        .map_or(b.len(), |p| i + p);
                    let inner: Vec<char> = b[i + 1..end]
                        .iter()
                        .copied()
                        .filter(|c| *c != '!' && *c != '^')
                        .collect();
                    out.push(
                        inner
                            .first()
                            .copied()
                            .filter(|_| next(3) > 0)
                            .unwrap_or('z'),
                    );
                    i = end + 1;
                    continue;
                }
                '{' => {
                    let end = b[i..]
                        .iter()
                        .position(|&c| c == '}')
                        .map_or(b.len(), |p| i + p);
                    let body: String = b[i + 1..end].iter().collect();
                    let alts: Vec<&str> = body.split(',').collect();
                    out.push_str(alts[next(alts.len())]);
                    i = end + 1;
                    continue;
                }
                '\\' => {
                    if let Some(c) = b.get(i + 1) {
                        out.push(*c);
                    }
                    i += 2;
                    continue;
                }
                c => out.push(c),
            }
            i += 1;
        }
        match next(4) {
            0 => format!("{out}/f"),
            1 => out.chars().skip(1).collect(),
            _ => out,
        }
    }

    /// Skipping the automata when no pattern's literal start and end fit
    /// never changes an answer: checked for every shipped set against paths
    /// made from its own patterns.
    #[test]
    fn the_fences_never_hide_a_match() {
        let cat = crate::catalogue::Catalogue::builtin();
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut paths: Vec<String> = ["/", "/~", "/etc/passwd", "/tmp/x", "/~/proj/.env"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for set in &cat.sets {
            for (glob, _) in &set.globs {
                for _ in 0..12 {
                    paths.push(fill(glob.glob(), &mut rng));
                }
            }
        }
        let (mut hits, mut skipped) = (0, 0);
        for set in &cat.sets {
            let (abs, home) = set.build().unwrap();
            for p in &paths {
                let home_form = p.starts_with("/~").then_some(p.as_str());
                let matched = abs.is_match(p) || home_form.is_some_and(|h| home.is_match(h));
                let may = set.may_match(p, home_form);
                assert!(may || !matched, "{p} in {:?}", set.globs);
                hits += usize::from(matched);
                skipped += usize::from(!may);
            }
        }
        assert!(hits > 500, "only {hits} paths match");
        assert!(skipped > 5_000, "only {skipped} answers skip the automata");
    }

    #[test]
    fn fences_of_patterns() {
        let f = |p: &str| {
            let (a, b) = fences(p);
            (a, b)
        };
        assert_eq!(f("/etc"), ("/etc".into(), "/etc".into()));
        assert_eq!(f("**/.env"), ("".into(), ".env".into()));
        assert_eq!(f("/~/.ssh/**"), ("/~/.ssh".into(), "".into()));
        assert_eq!(f("/~/.ssh/id_*"), ("/~/.ssh/id_".into(), "".into()));
        assert_eq!(f("/a/**/b.json"), ("/a".into(), "b.json".into()));
        assert_eq!(f("/etc/cron*/**"), ("/etc/cron".into(), "".into()));
        assert_eq!(f("/x/{a,b}.y"), ("/x/".into(), ".y".into()));
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("/e*", "/etc"));
        assert!(!wildcard_match("/e*", "/etc/x"));
        assert!(wildcard_match("/**/*.pem", "/a/b/c.pem"));
        assert!(wildcard_match("/[e]tc", "/etc"));
        assert!(wildcard_match("/[!a]tc", "/etc"));
        assert!(!wildcard_match("/[!e]tc", "/etc"));
        assert!(wildcard_match("/e??", "/etc"));
        assert!(candidates("/*").contains(&"/".to_string()));
    }
}
