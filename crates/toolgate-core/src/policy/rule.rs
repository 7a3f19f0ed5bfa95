//! One policy rule: `Tool(specifier)` or a bare `Tool`.
//!
//! # The tool part
//!
//! * `*`: any tool.
//! * `mcp__server__tool`: that MCP tool; `*` may stand for any run of
//!   characters in either part (`mcp__github__*`); `mcp__server` alone means
//!   every tool of that server.
//! * A name of a kind whose runtime spellings are interchangeable — shell
//!   (`exec`, `Bash`, `run_shell_command`, …), read (`read`, `Read`, `Grep`, …),
//!   write (`write`, `Edit`, `MultiEdit`, `apply_patch`, …), fetch (`web_fetch`,
//!   `WebFetch`, …) and search (`web_search`, `WebSearch`, …): every tool of
//!   that kind, whatever the runtime calls it.
//! * The canonical name of any other kind (`message`, `gateway`,
//!   `automations`, `nodes`, `browser`, `process`, `sessions`, `plugins`,
//!   `secrets`, `memory`): every tool of that kind.
//! * Another known name of those kinds (`sessions_spawn`, `memory_get`,
//!   `cron`, …): that tool only, ignoring case. These kinds group tools that
//!   do different things (`sessions_list` is not `sessions_spawn`), so an
//!   allow for one must not allow the others.
//! * Any other name: that exact tool name, case-sensitively.
//!
//! # The specifier, chosen by the tool's kind
//!
//! Absent or `*`: any call of the tool. Otherwise:
//!
//! * shell tools: a shell-words prefix (see `exec.rs`), matched per simple
//!   command with [`Rule::matches_exec_strict`] / [`Rule::matches_exec_broad`];
//! * read / write tools, MCP tools, memory tools and unknown tools: a path
//!   glob (see `path.rs`); a call with no paths does not match it;
//! * fetch tools: `domain:HOST` or a URL glob (see `url.rs`);
//! * action tools (message, gateway, automations, nodes, browser, process,
//!   sessions, plugins, secrets): a glob over the call's `action` param;
//!   `*` crosses dots (`config.*` matches `config.apply`); a call without an
//!   action matches only `*`;
//! * search tools and `*` take no specifier.

use super::error::RuleError;
use super::exec::{ExecPattern, strict_preconditions};
use super::path::PathPattern;
use super::url::UrlSpec;
use crate::normalize::{NormalizedCall, ToolKind, kind_of, split_mcp};
use crate::paths::Env;
use crate::shell::SimpleCommand;
use crate::wildcard::star_match;
use globset::{GlobBuilder, GlobMatcher};

const HOW: &str = "write rules as Tool(specifier), e.g. exec(git push:*)";

/// A parsed policy rule. Cheap to match: everything that can be compiled is
/// compiled when the rule is parsed.
#[derive(Debug, Clone)]
pub struct Rule {
    text: String,
    tool: ToolMatcher,
    spec: Spec,
    location: Option<(usize, usize)>,
}

#[derive(Debug, Clone)]
enum ToolMatcher {
    /// `*`
    Any,
    /// Every tool of a kind.
    Kind(ToolKind),
    /// One named tool of an action or memory kind (ASCII case ignored).
    Named { kind: ToolKind, name: String },
    /// A tool toolgate does not know, by exact name.
    Exact(String),
    /// `mcp__server__tool` with `*` wildcards.
    Mcp { server: String, tool: String },
}

#[derive(Debug, Clone)]
enum Spec {
    Any,
    Exec(ExecPattern),
    Path(PathPattern),
    Url(UrlSpec),
    Action(ActionGlob),
}

/// What kind of specifier a tool takes.
enum SpecKind {
    None,
    Exec,
    Path,
    Url,
    Action,
}

/// An action-name glob, compiled case sensitive and folded.
#[derive(Debug, Clone)]
struct ActionGlob {
    exact: GlobMatcher,
    folded: GlobMatcher,
}

impl ActionGlob {
    fn parse(spec: &str) -> Result<ActionGlob, String> {
        let build = |fold: bool| {
            GlobBuilder::new(spec)
                .literal_separator(false)
                .case_insensitive(fold)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| format!("has an invalid action glob {spec:?}: {}", e.kind()))
        };
        Ok(ActionGlob {
            exact: build(false)?,
            folded: build(true)?,
        })
    }
}

fn is_action_kind(kind: ToolKind) -> bool {
    matches!(
        kind,
        ToolKind::Message
            | ToolKind::Gateway
            | ToolKind::Automation
            | ToolKind::Nodes
            | ToolKind::Browser
            | ToolKind::Process
            | ToolKind::Sessions
            | ToolKind::Plugins
            | ToolKind::Secrets
    )
}

/// Every kind with a canonical rule name (`ToolKind::as_str`); `other` is
/// not one: it names no tool.
const CANONICAL: [ToolKind; 15] = [
    ToolKind::Exec,
    ToolKind::Read,
    ToolKind::Write,
    ToolKind::Fetch,
    ToolKind::Search,
    ToolKind::Message,
    ToolKind::Gateway,
    ToolKind::Automation,
    ToolKind::Nodes,
    ToolKind::Browser,
    ToolKind::Process,
    ToolKind::Sessions,
    ToolKind::Plugins,
    ToolKind::Secrets,
    ToolKind::Memory,
];

/// Kinds whose runtime names all mean the same operation on the same params.
fn is_interchangeable_kind(kind: ToolKind) -> bool {
    matches!(
        kind,
        ToolKind::Exec | ToolKind::Read | ToolKind::Write | ToolKind::Fetch | ToolKind::Search
    )
}

fn valid_tool_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*')
}

impl ToolMatcher {
    fn parse(name: &str, rule: &str) -> Result<ToolMatcher, RuleError> {
        if name.is_empty() {
            return Err(RuleError::new(
                rule,
                format!("has no tool name before '(' — {HOW}"),
            ));
        }
        if !name.chars().all(valid_tool_char) {
            return Err(RuleError::new(
                rule,
                format!(
                    "has an invalid tool name {name:?} — tool names are letters, digits, \
                     '_', '-' and '.', e.g. exec, Bash, WebFetch or mcp__github__*"
                ),
            ));
        }
        if name == "*" {
            return Ok(ToolMatcher::Any);
        }
        if let Some(rest) = name.strip_prefix("mcp__") {
            let (server, tool) = match split_mcp(name) {
                Some((s, t)) => (s, t),
                None if !rest.is_empty() && !rest.contains("__") => (rest, "*"),
                None => {
                    return Err(RuleError::new(
                        rule,
                        format!(
                            "has an incomplete MCP tool name {name:?} — write \
                             mcp__server__tool, mcp__server__* or mcp__server"
                        ),
                    ));
                }
            };
            return Ok(ToolMatcher::Mcp {
                server: server.to_string(),
                tool: tool.to_string(),
            });
        }
        if name.contains('*') {
            return Err(RuleError::new(
                rule,
                format!(
                    "has '*' in the tool name {name:?} — '*' is only allowed alone (any tool) \
                     or in MCP names such as mcp__github__*"
                ),
            ));
        }
        if let Some(kind) = CANONICAL
            .iter()
            .copied()
            .find(|k| name.eq_ignore_ascii_case(k.as_str()))
        {
            return Ok(ToolMatcher::Kind(kind));
        }
        let kind = kind_of(name);
        Ok(if kind == ToolKind::Other {
            ToolMatcher::Exact(name.to_string())
        } else if is_interchangeable_kind(kind) {
            ToolMatcher::Kind(kind)
        } else {
            ToolMatcher::Named {
                kind,
                name: name.to_string(),
            }
        })
    }

    fn spec_kind(&self) -> SpecKind {
        let kind = match self {
            ToolMatcher::Any => return SpecKind::None,
            ToolMatcher::Mcp { .. } | ToolMatcher::Exact(_) => return SpecKind::Path,
            ToolMatcher::Kind(k) | ToolMatcher::Named { kind: k, .. } => *k,
        };
        match kind {
            ToolKind::Exec => SpecKind::Exec,
            ToolKind::Read | ToolKind::Write | ToolKind::Memory | ToolKind::Other => SpecKind::Path,
            ToolKind::Fetch => SpecKind::Url,
            ToolKind::Search => SpecKind::None,
            k if is_action_kind(k) => SpecKind::Action,
            _ => SpecKind::Path,
        }
    }

    fn covers_exec(&self) -> bool {
        matches!(self, ToolMatcher::Any | ToolMatcher::Kind(ToolKind::Exec))
    }
}

impl Rule {
    /// Parses one rule as written in a policy (`exec(git push:*)`, `Read`,
    /// `web_fetch(domain:docs.rs)`, `mcp__github__*`, `*`). Surrounding
    /// whitespace is ignored. The error says what is wrong and how to write it.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(RuleError::new(
                text,
                format!("is empty — {HOW}, or a bare tool name such as web_search"),
            ));
        }
        let (name, spec) = match t.find('(') {
            None => {
                if t.contains(')') {
                    return Err(RuleError::new(
                        text,
                        format!("has a ')' without an opening '(' — {HOW}"),
                    ));
                }
                (t, None)
            }
            Some(i) => {
                if !t.ends_with(')') {
                    let problem = if t[i..].contains(')') {
                        "has text after its closing ')'"
                    } else {
                        "is missing its closing ')'"
                    };
                    return Err(RuleError::new(text, format!("{problem} — {HOW}")));
                }
                (t[..i].trim_end(), Some(t[i + 1..t.len() - 1].trim()))
            }
        };
        let tool = ToolMatcher::parse(name, text)?;
        let spec = match spec {
            None | Some("*") => Spec::Any,
            Some("") => {
                return Err(RuleError::new(
                    text,
                    format!(
                        "has an empty specifier — write {name} or {name}(*) for any call, \
                         or put a specifier between the parentheses"
                    ),
                ));
            }
            Some(s) => Self::parse_spec(&tool, name, s).map_err(|p| RuleError::new(text, p))?,
        };
        Ok(Rule {
            text: t.to_string(),
            tool,
            spec,
            location: None,
        })
    }

    fn parse_spec(tool: &ToolMatcher, name: &str, s: &str) -> Result<Spec, String> {
        let kind = tool.spec_kind();
        if s.starts_with("domain:") && !matches!(kind, SpecKind::Url) {
            return Err(format!(
                "uses a domain: specifier on {name} — domain: only applies to web_fetch \
                 rules, e.g. web_fetch({s})"
            ));
        }
        match kind {
            SpecKind::None => Err(format!(
                "gives {name} a specifier, but {name} rules take none — write {name} alone"
            )),
            SpecKind::Exec => ExecPattern::parse(s).map(Spec::Exec),
            SpecKind::Path => PathPattern::parse(s).map(Spec::Path),
            SpecKind::Url => UrlSpec::parse(s).map(Spec::Url),
            SpecKind::Action => ActionGlob::parse(s).map(Spec::Action),
        }
    }

    pub(crate) fn with_location(mut self, line: usize, col: usize) -> Rule {
        self.location = Some((line, col));
        self
    }

    /// The rule as written (trimmed), for reasons shown to people and agents.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where the rule was written (1-based line and column of its string in
    /// the policy file), when it came from one.
    pub fn location(&self) -> Option<(usize, usize)> {
        self.location
    }

    /// The canonical kind the rule's tool part targets: `Some(kind)` for a
    /// kind or a tool name (`Some(ToolKind::Other)` for a tool toolgate does
    /// not know), `None` for `*` and for MCP rules, which match by name.
    pub fn tool_kind(&self) -> Option<ToolKind> {
        match &self.tool {
            ToolMatcher::Any | ToolMatcher::Mcp { .. } => None,
            ToolMatcher::Kind(k) | ToolMatcher::Named { kind: k, .. } => Some(*k),
            ToolMatcher::Exact(_) => Some(ToolKind::Other),
        }
    }

    /// The tool the rule names when toolgate does not know it (no kind and
    /// no runtime's own tool has that name): the rule then matches only a
    /// tool of exactly that name, which is often a misspelling (`Bsh`).
    pub fn unknown_tool(&self) -> Option<&str> {
        match &self.tool {
            ToolMatcher::Exact(name) => Some(name),
            _ => None,
        }
    }

    /// Whether every call `other` matches, this rule matches too (as a
    /// deny or ask rule matches, which is never narrower than an allow
    /// rule's strict match of the same text). Decided only where it is
    /// plain: a tool part that covers `other`'s (`*`, the same kind, the
    /// same name), and a specifier that is `*`, the same text, or for
    /// shell commands the same words or a `:*` start of them. `false` when
    /// unsure.
    pub fn covers(&self, other: &Rule) -> bool {
        let tool = match (&self.tool, &other.tool) {
            (ToolMatcher::Any, _) => true,
            (ToolMatcher::Kind(a), ToolMatcher::Kind(b)) => a == b,
            (ToolMatcher::Kind(a), ToolMatcher::Named { kind, .. }) => a == kind,
            (ToolMatcher::Named { name: a, .. }, ToolMatcher::Named { name: b, .. }) => {
                a.eq_ignore_ascii_case(b)
            }
            (ToolMatcher::Exact(a), ToolMatcher::Exact(b)) => a == b,
            (
                ToolMatcher::Mcp {
                    server: s1,
                    tool: t1,
                },
                ToolMatcher::Mcp {
                    server: s2,
                    tool: t2,
                },
            ) => star_match(s1, s2) && star_match(t1, t2),
            _ => false,
        };
        tool && match (&self.spec, &other.spec) {
            (Spec::Any, _) => true,
            (_, Spec::Any) => false,
            (Spec::Exec(a), Spec::Exec(b)) => a.covers(b),
            _ => self.spec_text().is_some() && self.spec_text() == other.spec_text(),
        }
    }

    /// The specifier as written (between the parentheses), if any.
    fn spec_text(&self) -> Option<&str> {
        let open = self.text.find('(')?;
        self.text
            .get(open + 1..self.text.len().saturating_sub(1))
            .map(str::trim)
    }

    /// Names a rule's tool part may use: the canonical kinds and every
    /// runtime's own tool names.
    pub fn known_tool_names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = CANONICAL.iter().map(|k| k.as_str()).collect();
        for r in crate::hooks::Runtime::ALL {
            names.extend(r.spec().vocabulary.iter().map(|(n, _)| *n));
        }
        names
    }

    /// True when the tool part of the rule covers the call's tool (see the
    /// module docs for how names map to tools). Says nothing about the specifier.
    pub fn applies_to_tool(&self, call: &NormalizedCall) -> bool {
        match &self.tool {
            ToolMatcher::Any => true,
            ToolMatcher::Kind(k) => call.kind == *k,
            ToolMatcher::Named { name, .. } => call.tool.eq_ignore_ascii_case(name),
            ToolMatcher::Exact(name) => call.tool == *name,
            ToolMatcher::Mcp { server, tool } => call
                .mcp
                .as_ref()
                .is_some_and(|(s, t)| star_match(server, s) && star_match(tool, t)),
        }
    }

    /// Whether the rule matches a whole call. `strict` is for allow rules,
    /// `!strict` for deny / ask / always-ask rules:
    ///
    /// * paths and URLs: with `strict`, the call must have at least one and
    ///   *every* one must match (case-sensitively, plain URLs only); without,
    ///   *any* one matching suffices (case ignored, every plausible parse);
    /// * actions: with `strict`, case-sensitive; without, case ignored;
    /// * a rule without specifier matches every call of its tools, shell calls
    ///   included;
    /// * a shell rule with a command pattern returns `false` here: judge each
    ///   simple command with [`Rule::matches_exec_strict`] /
    ///   [`Rule::matches_exec_broad`].
    pub fn matches(&self, call: &NormalizedCall, env: &Env, strict: bool) -> bool {
        if !self.applies_to_tool(call) {
            return false;
        }
        match &self.spec {
            Spec::Any => true,
            Spec::Exec(_) => false,
            Spec::Path(p) => quantify(call.paths.iter().map(|t| t.path.as_str()), strict, |x| {
                if strict {
                    p.matches_strict(x, env)
                } else {
                    p.matches_broad(x, env)
                }
            }),
            Spec::Url(u) => quantify(call.urls.iter().map(String::as_str), strict, |x| {
                if strict {
                    u.matches_strict(x)
                } else {
                    u.matches_broad(x)
                }
            }),
            Spec::Action(_) => {
                if strict {
                    self.matches_action(call.action.as_deref())
                } else {
                    self.matches_action_broad(call.action.as_deref())
                }
            }
        }
    }

    /// Allow-side match of one simple command: `true` only when the rule
    /// covers shell tools and either has no specifier or its words equal the
    /// command's words one for one (a trailing `:*` lets more follow), no
    /// compared word dynamic, the program invoked by bare name or by the
    /// exact path the rule wrote. Never `true` for a command with a dynamic
    /// program, run privileged or remotely, with environment assignments, or
    /// with a redirection writing anything but `/dev/null`.
    pub fn matches_exec_strict(&self, cmd: &SimpleCommand) -> bool {
        match &self.spec {
            Spec::Any => self.tool.covers_exec() && strict_preconditions(cmd),
            Spec::Exec(p) => p.matches_strict(cmd),
            _ => false,
        }
    }

    /// Deny/ask-side match of one simple command: `true` when the rule covers
    /// shell tools and either has no specifier or the command contains the
    /// rule's program (basename, case ignored), all its flags (as sets,
    /// long flags abbreviable to ≥ 3 characters) and its positional words in
    /// order (paths compared after resolution against `env`, shell globs by
    /// what they can expand to, dynamic words matching anything), whatever
    /// else the command contains.
    pub fn matches_exec_broad(&self, cmd: &SimpleCommand, env: &Env) -> bool {
        match &self.spec {
            Spec::Any => self.tool.covers_exec(),
            Spec::Exec(p) => p.matches_broad(cmd, env),
            _ => false,
        }
    }

    /// Allow-side match of one absolute, normalized path against the rule's
    /// path glob (case-sensitive). A rule without specifier covers every
    /// path; a rule with a non-path specifier covers none.
    pub fn matches_path(&self, abs_path: &str, env: &Env) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Path(p) => p.matches_strict(abs_path, env),
            _ => false,
        }
    }

    /// Deny-side [`Rule::matches_path`]: ASCII case ignored, as on
    /// case-insensitive file systems.
    pub fn matches_path_broad(&self, abs_path: &str, env: &Env) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Path(p) => p.matches_broad(abs_path, env),
            _ => false,
        }
    }

    /// Allow-side match of one URL: only plain `http(s)` URLs (no userinfo,
    /// backslashes, blanks or encoded hosts) can match a domain or URL glob;
    /// an unparsable URL matches only `domain:*` or a rule without specifier.
    pub fn matches_url(&self, url: &str) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Url(u) => u.matches_strict(url),
            _ => false,
        }
    }

    /// Deny-side match of one URL: matches when the host any common URL
    /// parser would see is covered; an unparsable URL matches only `domain:*`
    /// or a rule without specifier.
    pub fn matches_url_broad(&self, url: &str) -> bool {
        match &self.spec {
            Spec::Any => true,
            Spec::Url(u) => u.matches_broad(url),
            _ => false,
        }
    }

    /// Allow-side match of a call's `action` param (case-sensitive glob).
    /// A missing action matches only a rule without specifier or `*`.
    pub fn matches_action(&self, action: Option<&str>) -> bool {
        match (&self.spec, action) {
            (Spec::Any, _) => true,
            (Spec::Action(g), Some(a)) => g.exact.is_match(a),
            _ => false,
        }
    }

    /// Deny-side [`Rule::matches_action`]: ASCII case ignored.
    pub fn matches_action_broad(&self, action: Option<&str>) -> bool {
        match (&self.spec, action) {
            (Spec::Any, _) => true,
            (Spec::Action(g), Some(a)) => g.folded.is_match(a),
            _ => false,
        }
    }
}

/// `strict`: non-empty and all match; otherwise any matches.
fn quantify<'a>(
    items: impl Iterator<Item = &'a str>,
    strict: bool,
    mut f: impl FnMut(&str) -> bool,
) -> bool {
    if strict {
        let mut seen = false;
        for x in items {
            if !f(x) {
                return false;
            }
            seen = true;
        }
        seen
    } else {
        items.into_iter().any(f)
    }
}

#[cfg(test)]
mod tests;
