//! The syntax-tree walk: the statements that sequence simple commands
//! (lists, pipelines, groups, subshells, loops, functions, substitutions).
//! The analyzer's state is in `analyzer`, scopes in `scope`, words in
//! `expand`, redirections in `redirect` and simple commands in `command`;
//! wrappers and interpreters are handled in `unwrap`.

use super::analyzer::{Analyzer, MAX_NESTING, slice};
use super::scope::Scope;
use super::types::*;
use super::{fallback, words};
use tree_sitter::Node;

/// Deepest re-parse (`bash -c "bash -c '…'"`, `eval`, aliases …).
const MAX_REPARSE: usize = 12;

/// Most values a `for` loop is unrolled over.
const MAX_FOR_VALUES: usize = 16;

impl Analyzer<'_> {
    pub(crate) fn analyze_top(&mut self, command: &str) {
        let mut scope = self.root_scope();
        self.analyze_text(command, &mut scope);
        self.analyze_uncalled();
    }

    /// Analyzes shell text in `scope` (re-parsing for nested scripts).
    pub(crate) fn analyze_text(&mut self, text: &str, scope: &mut Scope) {
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

    pub(super) fn walk(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        if self.truncated {
            return;
        }
        if depth > MAX_NESTING {
            self.opaque(
                "the command is nested too deeply to analyze",
                slice(src, node.byte_range()),
            );
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
                        let name = child
                            .child_by_field_name("name")
                            .map(|n| slice(src, n.byte_range()).to_string())
                            .unwrap_or_default();
                        let value = scope.state.vars.get(&name).cloned().flatten();
                        argv.push(match value {
                            Some(v) => Word::lit(format!("{name}={v}")),
                            None => Word {
                                text: slice(src, child.byte_range()).to_string(),
                                dynamic: true,
                            },
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
                let name = node
                    .child_by_field_name("name")
                    .map(|n| slice(src, n.byte_range()).to_string())
                    .unwrap_or_default();
                let body = node.child_by_field_name("body");
                let kept = body.is_some_and(|b| {
                    self.define_function(&name, slice(src, b.byte_range()), scope)
                });
                if !kept && let Some(body) = body {
                    let mut inner = scope.clone();
                    inner.via.push(Via {
                        wrapper: format!("function {name}"),
                    });
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
                inner.via.push(Via {
                    wrapper: "loop".into(),
                });
                self.walk_children(node, src, &mut inner, depth);
            }
            "command_substitution" | "process_substitution" => {
                self.substitution(node, src, scope, depth);
            }
            "ERROR" => {
                // Already reported; still walk what tree-sitter recovered.
                self.walk_children(node, src, scope, depth);
            }
            "word"
            | "string"
            | "raw_string"
            | "ansi_c_string"
            | "concatenation"
            | "simple_expansion"
            | "expansion"
            | "number"
            | "arithmetic_expansion"
            | "translated_string" => {
                self.eval_word(node, src, scope, depth);
            }
            _ => self.walk_children(node, src, scope, depth),
        }
    }

    pub(super) fn walk_children(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let mut c = node.walk();
        let children: Vec<Node> = node.children(&mut c).collect();
        for (i, child) in children.iter().enumerate() {
            if !child.is_named() {
                continue;
            }
            // `cmd &`: the statement runs in the background
            if children
                .get(i + 1)
                .is_some_and(|n| !n.is_named() && n.kind() == "&")
            {
                let mut bg = scope.clone();
                bg.via.push(Via {
                    wrapper: "&".into(),
                });
                self.walk(*child, src, &mut bg, depth + 1);
                scope.state = bg.state;
            } else {
                self.walk(*child, src, scope, depth + 1);
            }
        }
    }

    pub(super) fn substitution(
        &mut self,
        node: Node,
        src: &str,
        scope: &Scope,
        depth: usize,
    ) -> Vec<String> {
        let label = match node.kind() {
            "process_substitution" => "<( )",
            _ if slice(src, node.byte_range()).starts_with('`') => "` `",
            _ => "$( )",
        };
        let mut inner = scope.clone();
        inner.via.push(Via {
            wrapper: label.to_string(),
        });
        inner.stdin_from.clear();
        inner.stdin_text = None;
        inner.redirects.clear();
        let before = self.out.commands.len();
        self.walk_children(node, src, &mut inner, depth);
        self.out.commands[before..]
            .iter()
            .filter(|c| !c.wrapper)
            .map(|c| c.program.clone())
            .collect()
    }

    fn assign(&mut self, node: Node, src: &str, scope: &mut Scope, depth: usize) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
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
        let var = node
            .child_by_field_name("variable")
            .map(|n| slice(src, n.byte_range()).to_string());
        let mut values: Vec<Word> = Vec::new();
        let mut has_values = false;
        let mut c = node.walk();
        self.last_output = None;
        for v in node.children_by_field_name("value", &mut c) {
            has_values = true;
            values.extend(self.eval_word(v, src, scope, depth + 1));
        }
        // What a substitution among the values printed, when known (`find`
        // prints its roots, or ROOT/**/NAME with a name test).
        let listed = self.last_output.take();
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let Some(var) = var else {
            self.walk(body, src, scope, depth + 1);
            return;
        };
        // `for f in $(find ~ …)`: the loop runs once per entry of a tree.
        let over_tree = node
            .children_by_field_name("value", &mut node.walk())
            .any(|v| lists_tree(slice(src, v.byte_range())));
        let known =
            has_values && values.len() <= MAX_FOR_VALUES && values.iter().all(|w| !w.dynamic);
        if known {
            for v in &values {
                let mut inner = scope.clone();
                inner
                    .state_mut()
                    .vars
                    .insert(var.clone(), Some(v.text.clone()));
                self.walk(body, src, &mut inner, depth + 1);
            }
            scope
                .state_mut()
                .vars
                .insert(var, values.last().map(|w| w.text.clone()));
        } else if over_tree {
            let mut inner = scope.clone();
            inner.state_mut().vars.insert(var, None);
            let entries = listed
                .as_deref()
                .map(|t| t.lines().map(Word::lit).collect::<Vec<_>>())
                .filter(|w| !w.is_empty())
                .unwrap_or_else(|| {
                    vec![Word {
                        text: "{tree entries}".into(),
                        dynamic: true,
                    }]
                });
            inner.tree = Some(entries);
            self.walk(body, src, &mut inner, depth + 1);
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
        // What the last stage printed, for a substitution around the pipeline.
        self.last_output = text;
    }
}

/// Whether a word's source runs a tree enumeration in a command
/// substitution (`$(find ~ -type f)`, `` `fd . /` ``).
fn lists_tree(text: &str) -> bool {
    let t = text.trim_start_matches(['"', '\'']);
    let inner = t
        .strip_prefix("$(")
        .or_else(|| t.strip_prefix('`'))
        .map(str::trim_start);
    inner.is_some_and(|i| {
        let i = i.strip_prefix("sudo ").unwrap_or(i).trim_start();
        let program = i.split_whitespace().next().unwrap_or("");
        let program = program.rsplit('/').next().unwrap_or(program);
        matches!(
            program,
            "find" | "fd" | "fdfind" | "locate" | "plocate" | "mlocate"
        ) || (program == "ls"
            && i.split_whitespace()
                .any(|w| w == "-R" || w.starts_with("-R") || w == "--recursive"))
    })
}
