//! Word evaluation: the argv words bash makes of one word node, through
//! quoting, parameter expansion, command and process substitution, `$IFS`
//! splitting and brace expansion. What is only known at run time is marked
//! dynamic.

use super::analyzer::{Analyzer, MAX_NESTING, slice};
use super::scope::Scope;
use super::types::*;
use super::words;
use tree_sitter::Node;

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

impl Analyzer<'_> {
    pub(crate) fn eval_word(
        &mut self,
        node: Node,
        src: &str,
        scope: &Scope,
        depth: usize,
    ) -> Vec<Word> {
        let mut procsub = Vec::new();
        self.eval_word_procsub(node, src, scope, depth, &mut procsub)
    }

    pub(super) fn eval_word_procsub(
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
                Some(None) => {
                    return vec![Word {
                        text: acc.text,
                        dynamic: true,
                    }];
                }
            };
            if !ifs.is_empty() && acc.text.contains(|c| ifs.contains(c)) {
                return acc
                    .text
                    .split(|c| ifs.contains(c))
                    .filter(|p| !p.is_empty())
                    .map(Word::lit)
                    .collect();
            }
        }
        if acc.brace
            && !acc.dynamic
            && let Some(expanded) = words::brace_expand(&acc.text)
        {
            return expanded.into_iter().map(Word::lit).collect();
        }
        vec![Word {
            text: acc.text,
            dynamic: acc.dynamic,
        }]
    }

    fn word_part(&mut self, node: Node, src: &str, scope: &Scope, depth: usize, acc: &mut WordAcc) {
        if depth > MAX_NESTING {
            acc.dynamic = true;
            self.opaque(
                "a word is nested too deeply to analyze",
                slice(src, node.byte_range()),
            );
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
            "raw_string" => acc
                .text
                .push_str(raw.get(1..raw.len().saturating_sub(1)).unwrap_or("")),
            "ansi_c_string" => {
                let body = raw
                    .strip_prefix("$'")
                    .and_then(|r| r.strip_suffix('\''))
                    .unwrap_or(raw);
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
                        acc.text
                            .push_str(&words::unescape_double(slice(src, pos..child.start_byte())));
                    }
                    self.word_part(child, src, scope, depth + 1, acc);
                    pos = child.end_byte();
                }
                if inner_end > pos {
                    acc.text
                        .push_str(&words::unescape_double(slice(src, pos..inner_end)));
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
                // what runs inside is judged; what it prints is the word
                self.last_output = None;
                self.substitution(node, src, scope, depth);
                // Only a decoder's output is the word; what `find` lists is
                // left for the loop around it (`for f in $(find …)`).
                let decoded = if ends_in_decoder(raw) {
                    self.last_output.take()
                } else {
                    None
                };
                if decoded.is_some() {
                    // Unquoted, the decoded text is split into words as the
                    // shell would (`$(echo … | base64 -d)` as a command).
                    acc.split |= !quoted(node);
                }
                // `$(pwd)` is the directory the command runs in.
                let cwd = matches!(raw, "$(pwd)" | "`pwd`" | "$(pwd -L)" | "$(pwd -P)")
                    .then(|| scope.cwd.clone())
                    .flatten();
                match literal_substitution(node, src).or(decoded).or(cwd) {
                    Some(text) => acc.text.push_str(&text),
                    None => {
                        acc.dynamic = true;
                        acc.text.push_str(raw);
                    }
                }
            }
            "process_substitution" => {
                self.last_output = None;
                let programs = self.substitution(node, src, scope, depth);
                // `bash <(echo … | xxd -r -p)`: what the reader reads, when
                // the substitution prints a known text.
                self.procsub_output = self.last_output.take();
                acc.procsub.extend(programs);
                acc.text.push_str("/dev/fd/63");
            }
            "arithmetic_expansion" => {
                let mut inner = scope.clone();
                self.walk_children(node, src, &mut inner, depth);
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
    pub(crate) fn var_value(&self, name: &str, scope: &Scope) -> Option<String> {
        if let Some(v) = scope.state.vars.get(name) {
            return v.clone();
        }
        match name {
            "HOME" => Some(self.env.home.clone()),
            "PWD" => scope.cwd.clone(),
            _ => None,
        }
    }

    fn expansion(
        &mut self,
        node: Node,
        src: &str,
        raw: &str,
        scope: &Scope,
        depth: usize,
        acc: &mut WordAcc,
    ) {
        let inner = raw
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix('}'))
            .unwrap_or("");
        let name_len = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        let (name, rest) = inner.split_at(name_len);
        if !name.is_empty() {
            let value = self.var_value(name, scope);
            match (rest, value) {
                ("", Some(v)) => return acc.text.push_str(&v),
                (r, Some(v))
                    if (r.starts_with(":-")
                        || r.starts_with(":=")
                        || r.starts_with(":?")
                        || r.starts_with(['-', '=', '?']))
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

/// Whether a substitution's text is a pipeline whose last stage is one of
/// the decoders whose output the walk computes from a literal
/// (`$(echo cm0g… | base64 -d)`): only then is what it printed its value.
fn ends_in_decoder(raw: &str) -> bool {
    let inner = raw
        .strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| raw.strip_prefix('`').and_then(|r| r.strip_suffix('`')));
    let last = inner.and_then(|i| i.rsplit('|').next()).map(str::trim);
    let program = last.and_then(|l| l.split_whitespace().next());
    matches!(
        program,
        Some("base64" | "base32" | "basenc" | "xxd" | "rev" | "tr" | "openssl" | "printf" | "echo")
    ) && !inner.is_some_and(|i| i.contains([';', '&', '\n']))
}

/// The value of `$(echo word…)`, `$(printf %s word)`, `$(which prog)` and
/// `$(command -v prog)` when every word is literal: these are used to hide a
/// command name, and resolving them turns an escalation into a clear answer.
fn literal_substitution(node: Node, src: &str) -> Option<String> {
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
