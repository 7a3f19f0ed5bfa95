//! Simple commands found by the tree walk: argv, assignments and redirects
//! gathered from the syntax node, then emitted for unwrapping.

use super::analyzer::{Analyzer, slice};
use super::scope::Scope;
use super::types::*;
use tree_sitter::Node;

impl Analyzer<'_> {
    pub(super) fn command(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let mut argv: Vec<Word> = Vec::new();
        let mut assignments: Vec<(String, Word)> = Vec::new();
        let mut own = scope.clone();
        let mut procsub: Vec<String> = Vec::new();
        self.procsub_output = None;
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
                    let name = child
                        .child_by_field_name("name")
                        .map(|n| slice(src, n.byte_range()).to_string());
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
            if let Some(text) = self.procsub_output.take() {
                own.stdin_text = Some(text);
            }
        }
        self.emit_with_procsub(argv, assignments, own, scope, !procsub.is_empty());
        for rest in after {
            self.walk(rest, src, scope, depth + 1);
        }
    }

    /// Emits a command found by the tree walk. `own` carries its redirects;
    /// `scope` receives lasting effects (`cd`, `alias`).
    pub(super) fn emit_with_procsub(
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
    pub(crate) fn emit(
        &mut self,
        argv: Vec<Word>,
        assignments: Vec<(String, Word)>,
        redirects: Vec<Redirect>,
        scope: &mut Scope,
    ) {
        let mut own = scope.clone();
        own.redirects.extend(redirects);
        self.emit_with_procsub(argv, assignments, own, scope, false);
    }
}

/// Joins several words (from brace expansion) into one, as an assignment does.
fn join_words(ws: Vec<Word>) -> Word {
    let dynamic = ws.iter().any(|w| w.dynamic);
    let text = ws.into_iter().map(|w| w.text).collect::<Vec<_>>().join(" ");
    Word { text, dynamic }
}
