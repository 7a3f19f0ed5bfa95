//! The syntax-tree walk: scopes, words, redirections and the sequence of
//! simple commands. Wrappers and interpreters are handled in `unwrap`.

use super::types::*;
use super::{fallback, shorten, words};
use crate::paths::Env;
use std::collections::HashMap;
use std::rc::Rc;
use tree_sitter::Node;

/// Deepest syntax nesting walked; deeper input is reported opaque.
const MAX_NESTING: usize = 256;
/// Deepest re-parse (`bash -c "bash -c '…'"`, `eval`, aliases …).
const MAX_REPARSE: usize = 12;
/// Most simple commands reported for one call.
const MAX_COMMANDS: usize = 2_000;
/// Most arguments checked in one simple command.
const MAX_ARGS: usize = 1024;
/// Most values a `for` loop is unrolled over.
const MAX_FOR_VALUES: usize = 16;

/// What the shell knows at one point of the script.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    /// Working directory; `None` after a `cd` to an unknown place.
    pub cwd: Option<String>,
    /// What commands change for the rest of the script; shared until changed.
    pub state: Rc<ShellState>,
    pub via: Vec<Via>,
    pub privileged: bool,
    pub remote: Option<String>,
    /// Programs feeding stdin.
    pub stdin_from: Vec<String>,
    /// The literal text on stdin, when known (here-doc, here-string, `echo … |`).
    pub stdin_text: Option<String>,
    pub redirects: Vec<Redirect>,
}

/// The parts of the shell's state that commands change for the commands
/// after them: variables, aliases, and what was downloaded, cloned or written.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShellState {
    /// Variables with a known literal value (`Some`) or an unknown one (`None`).
    pub vars: HashMap<String, Option<String>>,
    pub aliases: HashMap<String, String>,
    /// Files written by a network download earlier in the script.
    pub downloaded: Vec<String>,
    /// Directories a `git clone` earlier in the script created.
    pub cloned: Vec<String>,
    /// Files written earlier in the script with known content
    /// (`cat > run.sh <<EOF … EOF`), so running them can be judged.
    pub written: Vec<(String, String)>,
}

impl Scope {
    /// Takes over what a command run in this same shell changed (`cd`,
    /// assignments, aliases, files written): used after redirected
    /// statements and simple commands, which run in the current shell.
    pub fn absorb(&mut self, other: &Scope) {
        self.cwd = other.cwd.clone();
        self.state = other.state.clone();
    }

    /// The state, for a change (copied first if shared).
    pub fn state_mut(&mut self) -> &mut ShellState {
        Rc::make_mut(&mut self.state)
    }

    /// The content written to `path` earlier in the script, if known.
    pub fn written_content(&self, path: &str) -> Option<&str> {
        self.state.written.iter().rev().find(|(p, _)| p == path).map(|(_, c)| c.as_str())
    }
}

/// The word being built from its syntax parts.
#[derive(Default)]
struct WordAcc {
    text: String,
    dynamic: bool,
    brace: bool,
    /// Programs inside process substitutions in this word (`<(curl …)`).
    procsub: Vec<String>,
    /// An unquoted expansion contributed text, so the shell splits the word
    /// on `$IFS`.
    split: bool,
}

pub(crate) struct Analyzer<'e> {
    pub env: &'e Env,
    pub out: ShellAnalysis,
    pub reparse_depth: usize,
    /// Literal stdout of the last command emitted (`echo x`, `printf x`,
    /// `cat` of a here-doc, `base64 -d` of a literal), for the next pipe stage.
    pub last_output: Option<String>,
    /// The last command printed text built at run time (`echo "$x"`).
    pub last_output_dynamic: bool,
    truncated: bool,
}

impl<'e> Analyzer<'e> {
    pub fn new(env: &'e Env) -> Self {
        Analyzer { env, out: ShellAnalysis::default(), reparse_depth: 0, last_output: None, last_output_dynamic: false, truncated: false }
    }

    pub fn finish(self) -> ShellAnalysis {
        self.out
    }

    pub fn opaque(&mut self, reason: impl Into<String>, snippet: &str) {
        let reason = reason.into();
        if self.out.opaque.iter().any(|o| o.reason == reason && o.snippet == shorten(snippet, 120)) {
            return;
        }
        if self.out.opaque.len() < 64 {
            self.out.opaque.push(Opaque { reason, snippet: shorten(snippet, 120) });
        }
    }

    pub fn root_scope(&self) -> Scope {
        Scope {
            cwd: Some(self.env.cwd.clone()),
            state: Rc::new(ShellState::default()),
            via: Vec::new(),
            privileged: false,
            remote: None,
            stdin_from: Vec::new(),
            stdin_text: None,
            redirects: Vec::new(),
        }
    }

    pub fn analyze_top(&mut self, command: &str) {
        let mut scope = self.root_scope();
        self.analyze_text(command, &mut scope);
    }

    /// Analyzes shell text in `scope` (re-parsing for nested scripts).
    pub fn analyze_text(&mut self, text: &str, scope: &mut Scope) {
        if text.len() > super::MAX_COMMAND_BYTES {
            self.opaque("the command is too long to analyze", text);
            fallback::scan(self, text, scope);
            return;
        }
        if self.reparse_depth > MAX_REPARSE {
            self.opaque("commands are nested too deeply to analyze", text);
            return;
        }
        let joined = words::join_continuations(text);
        let src: &str = &joined;
        if let Some(argv) = fallback::plain_words(src) {
            // No shell syntax at all: a whitespace split is exact.
            if !argv.is_empty() {
                self.emit(argv, Vec::new(), Vec::new(), scope);
            }
            return;
        }
        let Some(tree) = super::parse(src) else {
            self.opaque("the shell parser gave up on this command", src);
            fallback::scan(self, src, scope);
            return;
        };
        let root = tree.root_node();
        self.reparse_depth += 1;
        if root.has_error() {
            self.opaque("the command does not parse as shell (syntax error)", src);
            // Parse errors can hide commands inside a bogus node; a lexical
            // scan finds simple commands the tree may have swallowed.
            fallback::scan(self, src, &mut scope.clone());
        }
        self.walk(root, src, scope, 0);
        self.reparse_depth -= 1;
    }

    fn walk(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        if self.truncated {
            return;
        }
        if depth > MAX_NESTING {
            self.opaque("the command is nested too deeply to analyze", slice(src, node.byte_range()));
            return;
        }
        match node.kind() {
            "comment" | "heredoc_start" | "heredoc_end" | "file_descriptor" => {}
            "command" => self.command(node, src, scope, depth),
            "variable_assignment" => self.assign(node, src, scope, depth),
            "variable_assignments" | "declaration_command" | "unset_command" => {
                // `export X=1`, `unset HISTFILE`: reported as a command too, so
                // rules about the builtin itself can see its arguments.
                let mut argv: Vec<Word> = Vec::new();
                if node.kind() != "variable_assignments" {
                    let raw = slice(src, node.byte_range());
                    let keyword: String = raw.chars().take_while(|c| !c.is_whitespace()).collect();
                    argv.push(Word::lit(keyword));
                }
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    if child.kind() == "variable_assignment" {
                        self.assign(child, src, scope, depth + 1);
                        let name = child.child_by_field_name("name").map(|n| slice(src, n.byte_range()).to_string()).unwrap_or_default();
                        let value = scope.state.vars.get(&name).cloned().flatten();
                        argv.push(match value {
                            Some(v) => Word::lit(format!("{name}={v}")),
                            None => Word { text: slice(src, child.byte_range()).to_string(), dynamic: true },
                        });
                    } else {
                        argv.extend(self.eval_word(child, src, scope, depth + 1));
                    }
                }
                if !argv.is_empty() {
                    let mut own = scope.clone();
                    self.emit_with_procsub(argv, Vec::new(), own.clone(), &mut own, false);
                }
            }
            "function_definition" => {
                let name = node.child_by_field_name("name").map(|n| slice(src, n.byte_range()).to_string());
                let mut inner = scope.clone();
                inner.via.push(Via { wrapper: format!("function {}", name.unwrap_or_default()) });
                if let Some(body) = node.child_by_field_name("body") {
                    self.walk(body, src, &mut inner, depth + 1);
                }
            }
            "subshell" => {
                let mut inner = scope.clone();
                self.walk_children(node, src, &mut inner, depth);
            }
            "pipeline" => self.pipeline(node, src, scope, depth),
            "redirected_statement" => self.redirected(node, src, scope, depth),
            "for_statement" => self.for_loop(node, src, scope, depth),
            "while_statement" | "c_style_for_statement" => {
                let mut inner = scope.clone();
                inner.via.push(Via { wrapper: "loop".into() });
                self.walk_children(node, src, &mut inner, depth);
            }
            "command_substitution" | "process_substitution" => {
                self.substitution(node, src, scope, depth);
            }
            "ERROR" => {
                // Already reported; still walk what tree-sitter recovered.
                self.walk_children(node, src, scope, depth);
            }
            "word" | "string" | "raw_string" | "ansi_c_string" | "concatenation" | "simple_expansion"
            | "expansion" | "number" | "arithmetic_expansion" | "translated_string" => {
                self.eval_word(node, src, scope, depth);
            }
            _ => self.walk_children(node, src, scope, depth),
        }
    }

    fn walk_children(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let mut c = node.walk();
        let children: Vec<Node> = node.children(&mut c).collect();
        for (i, child) in children.iter().enumerate() {
            if !child.is_named() {
                continue;
            }
            // `cmd &`: the statement runs in the background
            if children.get(i + 1).is_some_and(|n| !n.is_named() && n.kind() == "&") {
                let mut bg = scope.clone();
                bg.via.push(Via { wrapper: "&".into() });
                self.walk(*child, src, &mut bg, depth + 1);
                scope.state = bg.state;
            } else {
                self.walk(*child, src, scope, depth + 1);
            }
        }
    }

    fn substitution(&mut self, node: Node, src: &str, scope: &Scope, depth: usize) -> Vec<String> {
        let label = match node.kind() {
            "process_substitution" => "<( )",
            _ if slice(src, node.byte_range()).starts_with('`') => "` `",
            _ => "$( )",
        };
        let mut inner = scope.clone();
        inner.via.push(Via { wrapper: label.to_string() });
        inner.stdin_from.clear();
        inner.stdin_text = None;
        inner.redirects.clear();
        let before = self.out.commands.len();
        self.walk_children(node, src, &mut inner, depth);
        self.out.commands[before..].iter().filter(|c| !c.wrapper).map(|c| c.program.clone()).collect()
    }

    fn assign(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let Some(name) = node.child_by_field_name("name") else { return };
        let name = slice(src, name.byte_range()).to_string();
        let value = match node.child_by_field_name("value") {
            Some(v) if v.kind() == "array" => {
                self.eval_word(v, src, scope, depth + 1);
                None
            }
            Some(v) => {
                let ws = self.eval_word(v, src, scope, depth + 1);
                match ws.as_slice() {
                    [w] if !w.dynamic => Some(w.text.clone()),
                    _ => None,
                }
            }
            None => Some(String::new()),
        };
        scope.state_mut().vars.insert(name, value);
    }

    fn for_loop(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let var = node.child_by_field_name("variable").map(|n| slice(src, n.byte_range()).to_string());
        let mut values: Vec<Word> = Vec::new();
        let mut has_values = false;
        let mut c = node.walk();
        for v in node.children_by_field_name("value", &mut c) {
            has_values = true;
            values.extend(self.eval_word(v, src, scope, depth + 1));
        }
        let Some(body) = node.child_by_field_name("body") else { return };
        let Some(var) = var else {
            self.walk(body, src, scope, depth + 1);
            return;
        };
        let known = has_values && values.len() <= MAX_FOR_VALUES && values.iter().all(|w| !w.dynamic);
        if known {
            for v in &values {
                let mut inner = scope.clone();
                inner.state_mut().vars.insert(var.clone(), Some(v.text.clone()));
                self.walk(body, src, &mut inner, depth + 1);
            }
            scope.state_mut().vars.insert(var, values.last().map(|w| w.text.clone()));
        } else {
            scope.state_mut().vars.insert(var, None);
            self.walk(body, src, scope, depth + 1);
        }
    }

    fn pipeline(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let mut upstream: Vec<String> = scope.stdin_from.clone();
        let mut text = scope.stdin_text.clone();
        let mut c = node.walk();
        for child in node.named_children(&mut c) {
            let mut inner = scope.clone();
            inner.stdin_from = upstream.clone();
            inner.stdin_text = text.take();
            self.last_output = None;
            self.last_output_dynamic = false;
            let before = self.out.commands.len();
            self.walk(child, src, &mut inner, depth + 1);
            text = self.last_output.take();
            if std::mem::take(&mut self.last_output_dynamic) && !upstream.iter().any(|u| u == "$") {
                upstream.push("$".into());
            }
            for cmd in &self.out.commands[before..] {
                if !cmd.wrapper && !upstream.contains(&cmd.program) {
                    upstream.push(cmd.program.clone());
                }
            }
        }
    }

    fn redirected(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let mut inner = scope.clone();
        let mut after: Vec<Node> = Vec::new();
        let mut c = node.walk();
        for r in node.children_by_field_name("redirect", &mut c) {
            self.redirect(r, src, &mut inner, depth, &mut after);
        }
        // here-strings appear as plain children in some positions
        let mut c = node.walk();
        for child in node.named_children(&mut c) {
            if child.kind() == "herestring_redirect" && node.child_by_field_name("body") != Some(child) {
                let mut unused = Vec::new();
                self.redirect(child, src, &mut inner, depth, &mut unused);
            }
        }
        let before = self.out.commands.len();
        match node.child_by_field_name("body") {
            Some(body) => self.walk(body, src, &mut inner, depth + 1),
            // `> file` alone still opens (and truncates) the file
            None => self.emit_with_procsub(Vec::new(), Vec::new(), inner.clone(), &mut inner, false),
        }
        // a redirected simple command or group runs in this shell
        if node.child_by_field_name("body").is_some_and(|b| b.kind() != "subshell" && b.kind() != "pipeline") {
            scope.absorb(&inner);
        }
        // `cat <<EOF | sh` and `cat <<EOF && x`: tree-sitter hangs the rest of
        // the line under the here-doc.
        for rest in after {
            let mut next = scope.clone();
            if rest.kind() == "pipeline" || slice(src, node.byte_range()).contains('|') && rest.kind() == "command" {
                let mut upstream = scope.stdin_from.clone();
                for cmd in &self.out.commands[before..] {
                    if !cmd.wrapper {
                        upstream.push(cmd.program.clone());
                    }
                }
                next.stdin_from = upstream;
                next.stdin_text = self.last_output.take();
                if rest.kind() == "pipeline" {
                    let mut c = rest.walk();
                    let stages: Vec<Node> = rest.named_children(&mut c).collect();
                    for stage in stages {
                        let mut s = next.clone();
                        self.last_output = None;
                        let b = self.out.commands.len();
                        self.walk(stage, src, &mut s, depth + 1);
                        next.stdin_text = self.last_output.take();
                        for cmd in &self.out.commands[b..] {
                            if !cmd.wrapper {
                                next.stdin_from.push(cmd.program.clone());
                            }
                        }
                    }
                    continue;
                }
            }
            self.walk(rest, src, &mut next, depth + 1);
        }
    }

    /// Records one redirection into `scope` (for the statement it applies to).
    fn redirect<'t>(&mut self, r: Node<'t>, src: &str, scope: &mut Scope, depth: usize, after: &mut Vec<Node<'t>>) {
        match r.kind() {
            "file_redirect" => {
                let op = operator_text(r, src);
                let dest = r.child_by_field_name("destination");
                let Some(dest) = dest else { return };
                if dest.kind() == "process_substitution" {
                    self.substitution(dest, src, scope, depth);
                    return;
                }
                let words = self.eval_word(dest, src, scope, depth + 1);
                let Some(target) = words.into_iter().next() else { return };
                let kind = match op.as_str() {
                    "<" => RedirectKind::Read,
                    ">>" | "&>>" => RedirectKind::Append,
                    "<>" => RedirectKind::ReadWrite,
                    ">&" | "<&" | ">&-" | "<&-" if dest.kind() == "number" || target.text == "-" => {
                        RedirectKind::Dup
                    }
                    _ => RedirectKind::Write,
                };
                let target = if kind == RedirectKind::Dup { target } else { self.resolve_word(target, scope) };
                scope.redirects.push(Redirect { kind, target });
            }
            "heredoc_redirect" => {
                let mut quoted = false;
                let mut body_text = String::new();
                let mut c = r.walk();
                for child in r.named_children(&mut c) {
                    match child.kind() {
                        "heredoc_start" => {
                            let t = slice(src, child.byte_range());
                            quoted = t.contains('\'') || t.contains('"') || t.contains('\\');
                        }
                        "heredoc_body" => {
                            body_text = slice(src, child.byte_range()).to_string();
                            if !quoted {
                                // Substitutions in an unquoted here-doc run.
                                self.walk_children(child, src, &mut scope.clone(), depth);
                                for snippet in backtick_spans(&body_text) {
                                    let mut inner = scope.clone();
                                    inner.via.push(Via { wrapper: "` `".into() });
                                    self.analyze_text(snippet, &mut inner);
                                }
                            }
                        }
                        "file_redirect" | "herestring_redirect" => {
                            let mut unused = Vec::new();
                            self.redirect(child, src, scope, depth, &mut unused);
                        }
                        "heredoc_end" => {}
                        _ => after.push(child),
                    }
                }
                scope.stdin_from.push("<<".into());
                scope.stdin_text = Some(body_text);
            }
            "herestring_redirect" => {
                let mut text = String::new();
                let mut dynamic = false;
                let mut c = r.walk();
                for child in r.named_children(&mut c) {
                    for w in self.eval_word(child, src, scope, depth + 1) {
                        dynamic |= w.dynamic;
                        text.push_str(&w.text);
                    }
                }
                scope.stdin_from.push("<<<".into());
                scope.stdin_text = if dynamic { None } else { Some(text) };
                if dynamic {
                    scope.stdin_from.push("$".into());
                }
            }
            _ => self.walk(r, src, scope, depth + 1),
        }
    }

    /// Resolves a redirect target or path word against the scope's cwd.
    pub fn resolve_word(&self, w: Word, scope: &Scope) -> Word {
        if w.dynamic {
            return w;
        }
        let t = w.text.as_str();
        let absolute = t.starts_with('/') || t.starts_with('~') || t.starts_with("$HOME") || t.starts_with("${HOME}");
        match (&scope.cwd, absolute) {
            (_, true) => Word::lit(self.env.resolve(t)),
            (Some(cwd), false) => Word::lit(self.env.resolve_from(cwd, t)),
            (None, false) => Word { text: t.to_string(), dynamic: true },
        }
    }

    fn command(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let mut argv: Vec<Word> = Vec::new();
        let mut assignments: Vec<(String, Word)> = Vec::new();
        let mut own = scope.clone();
        let mut procsub: Vec<String> = Vec::new();
        let mut cursor = node.walk();
        let mut last_end = node.start_byte();
        let mut after: Vec<Node> = Vec::new();
        for child in node.children(&mut cursor) {
            // tree-sitter-bash drops some tokens (a lone `-` before a here-doc);
            // whatever text lies between children is kept as literal words.
            if child.start_byte() > last_end {
                for piece in slice(src, last_end..child.start_byte()).split_whitespace() {
                    if !argv.is_empty() {
                        argv.push(Word::lit(piece));
                    }
                }
            }
            last_end = last_end.max(child.end_byte());
            if !child.is_named() {
                continue;
            }
            match child.kind() {
                "variable_assignment" => {
                    let name = child.child_by_field_name("name").map(|n| slice(src, n.byte_range()).to_string());
                    let value = match child.child_by_field_name("value") {
                        Some(v) => {
                            let ws = self.eval_word(v, src, scope, depth + 1);
                            join_words(ws)
                        }
                        None => Word::lit(""),
                    };
                    if let Some(name) = name {
                        assignments.push((name, value));
                    }
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child, src, &mut own, depth, &mut after);
                }
                "comment" => {}
                _ => {
                    let mut acc_procsub = Vec::new();
                    let ws = self.eval_word_procsub(child, src, scope, depth + 1, &mut acc_procsub);
                    procsub.extend(acc_procsub);
                    argv.extend(ws);
                }
            }
        }
        if !procsub.is_empty() {
            own.stdin_from.extend(procsub.iter().cloned());
        }
        self.emit_with_procsub(argv, assignments, own, scope, !procsub.is_empty());
        for rest in after {
            self.walk(rest, src, scope, depth + 1);
        }
    }

    /// Emits a command found by the tree walk. `own` carries its redirects;
    /// `scope` receives lasting effects (`cd`, `alias`).
    fn emit_with_procsub(
        &mut self,
        argv: Vec<Word>,
        assignments: Vec<(String, Word)>,
        mut own: Scope,
        scope: &mut Scope,
        script_from_procsub: bool,
    ) {
        if argv.is_empty() {
            if !own.redirects.is_empty() || !assignments.is_empty() {
                self.push(SimpleCommand {
                    assignments,
                    redirects: own.redirects.clone(),
                    via: own.via.clone(),
                    privileged: own.privileged,
                    remote: own.remote.clone(),
                    cwd: own.cwd.clone(),
                    ..SimpleCommand::default()
                });
            }
            return;
        }
        self.emit_full(argv, assignments, &mut own, script_from_procsub);
        // cd, alias, downloads and written files change the shell that runs
        // the following commands.
        scope.absorb(&own);
    }

    /// Emits argv found outside the tree walk (plain text, wrappers).
    pub fn emit(&mut self, argv: Vec<Word>, assignments: Vec<(String, Word)>, redirects: Vec<Redirect>, scope: &mut Scope) {
        let mut own = scope.clone();
        own.redirects.extend(redirects);
        self.emit_with_procsub(argv, assignments, own, scope, false);
    }

    pub fn push(&mut self, mut cmd: SimpleCommand) {
        if cmd.argv.len() > MAX_ARGS {
            // Checking every one of tens of thousands of operands against
            // every rule would let one call stall the gate; no agent needs it.
            self.opaque(format!("the command has {} arguments, more than the {MAX_ARGS} toolgate checks", cmd.argv.len()), &cmd.program);
            cmd.argv.truncate(MAX_ARGS);
        }
        if self.out.commands.len() >= MAX_COMMANDS {
            if !self.truncated {
                self.truncated = true;
                self.opaque("the command runs too many commands to analyze", &cmd.display());
            }
            return;
        }
        self.out.commands.push(cmd);
    }

    pub fn eval_word(&mut self, node: Node, src: &str, scope: &Scope, depth: usize) -> Vec<Word> {
        let mut procsub = Vec::new();
        self.eval_word_procsub(node, src, scope, depth, &mut procsub)
    }

    fn eval_word_procsub(
        &mut self,
        node: Node,
        src: &str,
        scope: &Scope,
        depth: usize,
        procsub: &mut Vec<String>,
    ) -> Vec<Word> {
        let mut acc = WordAcc::default();
        self.word_part(node, src, scope, depth, &mut acc);
        procsub.append(&mut acc.procsub);
        if acc.split && !acc.dynamic {
            // `c="rm -rf /"; $c` runs rm: unquoted expansions are split on IFS.
            let ifs: String = match scope.state.vars.get("IFS") {
                None => " \t\n".to_string(),
                Some(Some(v)) => v.clone(),
                Some(None) => return vec![Word { text: acc.text, dynamic: true }],
            };
            if !ifs.is_empty() && acc.text.contains(|c| ifs.contains(c)) {
                return acc.text.split(|c| ifs.contains(c)).filter(|p| !p.is_empty()).map(Word::lit).collect();
            }
        }
        if acc.brace && !acc.dynamic {
            if let Some(expanded) = words::brace_expand(&acc.text) {
                return expanded.into_iter().map(Word::lit).collect();
            }
        }
        vec![Word { text: acc.text, dynamic: acc.dynamic }]
    }

    fn word_part(&mut self, node: Node, src: &str, scope: &Scope, depth: usize, acc: &mut WordAcc) {
        if depth > MAX_NESTING {
            acc.dynamic = true;
            self.opaque("a word is nested too deeply to analyze", slice(src, node.byte_range()));
            return;
        }
        let raw = slice(src, node.byte_range());
        match node.kind() {
            "word" | "command_name" if node.named_child_count() == 0 => {
                if raw.contains('{') || raw.contains('}') {
                    acc.brace = true;
                }
                acc.text.push_str(&words::unescape_unquoted(raw));
            }
            "number" | "variable_name" | "extglob_pattern" | "regex" | "special_variable_name"
                if node.named_child_count() == 0 =>
            {
                acc.text.push_str(raw)
            }
            "raw_string" => acc.text.push_str(raw.get(1..raw.len().saturating_sub(1)).unwrap_or("")),
            "ansi_c_string" => {
                let body = raw.strip_prefix("$'").and_then(|r| r.strip_suffix('\'')).unwrap_or(raw);
                acc.text.push_str(&words::decode_ansi_c(body));
            }
            "string" | "translated_string" => {
                // Literal text between the parts is double-quoted text.
                let inner_start = node.start_byte() + raw.find('"').map(|i| i + 1).unwrap_or(0);
                let inner_end = node.end_byte().saturating_sub(1).max(inner_start);
                let mut pos = inner_start;
                let mut c = node.walk();
                for child in node.named_children(&mut c) {
                    if child.kind() == "string_content" || child.kind() == "string" {
                        continue;
                    }
                    if child.start_byte() > pos {
                        acc.text.push_str(&words::unescape_double(slice(src, pos..child.start_byte())));
                    }
                    self.word_part(child, src, scope, depth + 1, acc);
                    pos = child.end_byte();
                }
                if inner_end > pos {
                    acc.text.push_str(&words::unescape_double(slice(src, pos..inner_end)));
                }
            }
            "simple_expansion" => {
                let name = raw.trim_start_matches('$');
                acc.split |= !quoted(node);
                self.expand_var(name, raw, scope, acc);
            }
            "expansion" => {
                acc.split |= !quoted(node);
                self.expansion(node, src, raw, scope, depth, acc)
            }
            "command_substitution" => {
                let programs = self.substitution(node, src, scope, depth);
                match literal_substitution(node, src, self) {
                    Some(text) => acc.text.push_str(&text),
                    None => {
                        let _ = programs;
                        acc.dynamic = true;
                        acc.text.push_str(raw);
                    }
                }
            }
            "process_substitution" => {
                let programs = self.substitution(node, src, scope, depth);
                acc.procsub.extend(programs);
                acc.text.push_str("/dev/fd/63");
            }
            "arithmetic_expansion" => {
                let before = self.out.commands.len();
                let mut inner = scope.clone();
                self.walk_children(node, src, &mut inner, depth);
                let _ = before;
                acc.dynamic = true;
                acc.text.push_str(raw);
            }
            "concatenation" | "command_name" | "array" => {
                let mut c = node.walk();
                let mut pos = node.start_byte();
                for child in node.named_children(&mut c) {
                    if child.start_byte() > pos {
                        // unnamed tokens such as `{` `}` `,` inside a concatenation
                        let gap = slice(src, pos..child.start_byte());
                        if gap.contains('{') || gap.contains('}') {
                            acc.brace = true;
                        }
                        acc.text.push_str(&words::unescape_unquoted(gap));
                    }
                    self.word_part(child, src, scope, depth + 1, acc);
                    pos = child.end_byte();
                }
                if node.end_byte() > pos {
                    let gap = slice(src, pos..node.end_byte());
                    if gap.contains('{') || gap.contains('}') {
                        acc.brace = true;
                    }
                    acc.text.push_str(&words::unescape_unquoted(gap));
                }
            }
            "brace_expression" => {
                acc.brace = true;
                acc.text.push_str(raw);
            }
            _ => {
                // Anything else: keep its text, walk it for substitutions, and
                // treat its value as unknown.
                let mut inner = scope.clone();
                self.walk_children(node, src, &mut inner, depth);
                if node.named_child_count() > 0 {
                    acc.dynamic = true;
                }
                acc.text.push_str(raw);
            }
        }
    }

    fn expand_var(&mut self, name: &str, raw: &str, scope: &Scope, acc: &mut WordAcc) {
        match self.var_value(name, scope) {
            Some(v) => acc.text.push_str(&v),
            None => {
                acc.dynamic = true;
                acc.text.push_str(raw);
            }
        }
    }

    /// A variable's value when known statically.
    pub fn var_value(&self, name: &str, scope: &Scope) -> Option<String> {
        if let Some(v) = scope.state.vars.get(name) {
            return v.clone();
        }
        match name {
            "HOME" => Some(self.env.home.clone()),
            "PWD" => scope.cwd.clone(),
            _ => None,
        }
    }

    fn expansion(&mut self, node: Node, src: &str, raw: &str, scope: &Scope, depth: usize, acc: &mut WordAcc) {
        let inner = raw.strip_prefix("${").and_then(|r| r.strip_suffix('}')).unwrap_or("");
        let name_len = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(inner.len());
        let (name, rest) = inner.split_at(name_len);
        if !name.is_empty() {
            let value = self.var_value(name, scope);
            match (rest, value) {
                ("", Some(v)) => return acc.text.push_str(&v),
                (r, Some(v)) if (r.starts_with(":-") || r.starts_with(":=") || r.starts_with(":?") || r.starts_with(['-', '=', '?']))
                    && !v.is_empty() =>
                {
                    return acc.text.push_str(&v);
                }
                _ => {}
            }
        }
        // Walk substitutions inside the expansion (`${x:-$(cmd)}`).
        let mut inner_scope = scope.clone();
        self.walk_children(node, src, &mut inner_scope, depth);
        acc.dynamic = true;
        acc.text.push_str(raw);
    }
}

/// `src[range]`, widened to character boundaries. Tree-sitter recovers from
/// errors with ranges that can end inside a character (an unterminated
/// string); slicing must never panic on input.
fn slice(src: &str, range: std::ops::Range<usize>) -> &str {
    let mut start = range.start.min(src.len());
    let mut end = range.end.clamp(start, src.len());
    while !src.is_char_boundary(start) {
        start -= 1;
    }
    while !src.is_char_boundary(end) {
        end += 1;
    }
    &src[start..end]
}

/// True when a node sits inside double quotes (no word splitting there).
fn quoted(node: Node) -> bool {
    let mut p = node.parent();
    while let Some(n) = p {
        match n.kind() {
            "string" | "translated_string" | "heredoc_body" => return true,
            "command" | "program" | "variable_assignment" | "command_substitution" => return false,
            _ => p = n.parent(),
        }
    }
    false
}

/// The operator token of a redirect node (`>`, `>>`, `<`, `&>` …).
fn operator_text(r: Node, src: &str) -> String {
    let mut c = r.walk();
    for child in r.children(&mut c) {
        if !child.is_named() {
            return slice(src, child.byte_range()).to_string();
        }
    }
    String::new()
}

/// Joins several words (from brace expansion) into one, as an assignment does.
fn join_words(ws: Vec<Word>) -> Word {
    let dynamic = ws.iter().any(|w| w.dynamic);
    let text = ws.into_iter().map(|w| w.text).collect::<Vec<_>>().join(" ");
    Word { text, dynamic }
}

/// `` `…` `` spans in here-doc text (tree-sitter-bash misses them there).
fn backtick_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        let after = &rest[start + 1..];
        match after.find('`') {
            Some(end) => {
                out.push(&after[..end]);
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}

/// The value of `$(echo word…)`, `$(printf %s word)`, `$(which prog)` and
/// `$(command -v prog)` when every word is literal: these are used to hide a
/// command name, and resolving them turns an escalation into a clear answer.
fn literal_substitution(node: Node, src: &str, an: &Analyzer) -> Option<String> {
    let mut c = node.walk();
    let stmts: Vec<Node> = node.named_children(&mut c).collect();
    let [cmd] = stmts.as_slice() else { return None };
    if cmd.kind() != "command" {
        return None;
    }
    let mut parts: Vec<String> = Vec::new();
    let mut c = cmd.walk();
    for child in cmd.named_children(&mut c) {
        match child.kind() {
            "command_name" | "word" | "raw_string" | "number" => {
                let raw = slice(src, child.byte_range());
                let text = if child.kind() == "raw_string" {
                    raw.trim_matches('\'').to_string()
                } else {
                    words::unescape_unquoted(raw)
                };
                parts.push(text);
            }
            "string" if child.named_child_count() <= 1 => {
                let raw = slice(src, child.byte_range());
                if raw.contains('$') || raw.contains('`') {
                    return None;
                }
                parts.push(words::unescape_double(raw.trim_matches('"')));
            }
            _ => return None,
        }
    }
    let _ = an;
    let (prog, args) = parts.split_first()?;
    match (prog.as_str(), args) {
        ("echo", a) if !a.is_empty() && !a[0].starts_with('-') => Some(a.join(" ")),
        ("printf", [fmt, a]) if fmt == "%s" => Some(a.clone()),
        ("printf", [a]) if !a.contains('%') && !a.contains('\\') => Some(a.clone()),
        ("which" | "type" | "whereis", [p]) => Some(p.clone()),
        ("command", [v, p]) if v == "-v" || v == "-V" => Some(p.clone()),
        _ => None,
    }
}
