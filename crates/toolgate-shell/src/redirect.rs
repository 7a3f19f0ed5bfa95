//! Redirections and the statements they apply to: files read and written,
//! here-documents and here-strings (their text becomes the command's stdin),
//! and what tree-sitter hangs under a here-document.

use super::analyzer::{Analyzer, slice};
use super::scope::Scope;
use super::types::*;
use tree_sitter::Node;

impl Analyzer<'_> {
    pub(super) fn redirected(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let mut inner = scope.clone();
        let mut after: Vec<Node> = Vec::new();
        let mut c = node.walk();
        for r in node.children_by_field_name("redirect", &mut c) {
            self.redirect(r, src, &mut inner, depth, &mut after);
        }
        // here-strings appear as plain children in some positions
        let mut c = node.walk();
        for child in node.named_children(&mut c) {
            if child.kind() == "herestring_redirect"
                && node.child_by_field_name("body") != Some(child)
            {
                let mut unused = Vec::new();
                self.redirect(child, src, &mut inner, depth, &mut unused);
            }
        }
        let before = self.out.commands.len();
        match node.child_by_field_name("body") {
            Some(body) => self.walk(body, src, &mut inner, depth + 1),
            // `> file` alone still opens (and truncates) the file
            None => {
                self.emit_with_procsub(Vec::new(), Vec::new(), inner.clone(), &mut inner, false)
            }
        }
        // a redirected simple command or group runs in this shell
        if node
            .child_by_field_name("body")
            .is_some_and(|b| b.kind() != "subshell" && b.kind() != "pipeline")
        {
            scope.absorb(&inner);
        }
        // `cat <<EOF | sh` and `cat <<EOF && x`: tree-sitter hangs the rest of
        // the line under the here-doc.
        for rest in after {
            let mut next = scope.clone();
            if rest.kind() == "pipeline"
                || slice(src, node.byte_range()).contains('|') && rest.kind() == "command"
            {
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
    pub(super) fn redirect<'t>(
        &mut self,
        r: Node<'t>,
        src: &str,
        scope: &mut Scope,
        depth: usize,
        after: &mut Vec<Node<'t>>,
    ) {
        match r.kind() {
            "file_redirect" => {
                let op = operator_text(r, src);
                let dest = r.child_by_field_name("destination");
                let Some(dest) = dest else { return };
                if dest.kind() == "process_substitution" {
                    let before = self.out.commands.len();
                    self.last_output = None;
                    self.substitution(dest, src, scope, depth);
                    if op == "<" {
                        // `< <(find …)`: what the substitution prints is the
                        // statement's stdin, as with a pipe.
                        for cmd in &self.out.commands[before..] {
                            if !cmd.wrapper && !scope.stdin_from.contains(&cmd.program) {
                                scope.stdin_from.push(cmd.program.clone());
                            }
                        }
                        scope.stdin_text = self.last_output.take();
                    }
                    return;
                }
                let words = self.eval_word(dest, src, scope, depth + 1);
                let Some(target) = words.into_iter().next() else {
                    return;
                };
                let kind = match op.as_str() {
                    "<" => RedirectKind::Read,
                    ">>" | "&>>" => RedirectKind::Append,
                    "<>" => RedirectKind::ReadWrite,
                    ">&" | "<&" | ">&-" | "<&-"
                        if dest.kind() == "number" || target.text == "-" =>
                    {
                        RedirectKind::Dup
                    }
                    _ => RedirectKind::Write,
                };
                let target = if kind == RedirectKind::Dup {
                    target
                } else {
                    self.resolve_word(target, scope)
                };
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
                                    inner.via.push(Via {
                                        wrapper: "` `".into(),
                                    });
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
