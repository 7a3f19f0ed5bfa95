//! `apply_patch` run as a command (Codex's patch format, from a here-doc
//! or as its argument): each file the patch adds, updates, moves or
//! deletes is reported as the write or delete it is, so the same rules
//! judge it as any other write or `rm`.

use super::analyzer::Analyzer;
use super::scope::Scope;
use super::types::*;

/// Most files one patch is judged on.
const MAX_FILES: usize = 64;

impl Analyzer<'_> {
    /// Reports `apply_patch`'s command, then what its patch does to files.
    pub(crate) fn apply_patch(&mut self, cmd: SimpleCommand, args: &[Word], scope: &mut Scope) {
        let patch = args
            .iter()
            .find(|w| w.text.contains("*** Begin Patch"))
            .map(|w| (w.text.clone(), w.dynamic))
            .or_else(|| scope.stdin_text.clone().map(|t| (t, false)));
        let shown = cmd.display();
        self.push(cmd);
        let Some((text, dynamic)) = patch.filter(|(t, _)| t.contains("*** ")) else {
            self.opaque("apply_patch edits files named only at run time", &shown);
            return;
        };
        if dynamic {
            self.opaque("apply_patch's patch is built at run time", &shown);
        }
        let mut inner = scope.clone();
        inner.via.push(Via {
            wrapper: "apply_patch".into(),
        });
        inner.stdin_from.clear();
        inner.stdin_text = None;
        inner.redirects.clear();
        let mut updating: Option<&str> = None;
        for line in text.lines().take(100_000) {
            let line = line.trim_end();
            let (deleted, written) = if let Some(p) = line.strip_prefix("*** Delete File: ") {
                (Some(p), None)
            } else if let Some(p) = line.strip_prefix("*** Add File: ") {
                (None, Some(p))
            } else if let Some(p) = line.strip_prefix("*** Update File: ") {
                updating = Some(p);
                (None, Some(p))
            } else if let Some(p) = line.strip_prefix("*** Move to: ") {
                // The file updated above leaves its place.
                (updating.take(), Some(p))
            } else {
                continue;
            };
            if self.out.commands.len() > MAX_FILES * 4 {
                self.opaque("apply_patch changes too many files to list", &shown);
                return;
            }
            if let Some(p) = deleted.map(str::trim).filter(|p| !p.is_empty()) {
                let argv = vec![
                    Word::lit("rm"),
                    Word::lit("-f"),
                    Word::lit("--"),
                    Word::lit(p),
                ];
                self.emit(argv, Vec::new(), Vec::new(), &mut inner.clone());
            }
            if let Some(p) = written.map(str::trim).filter(|p| !p.is_empty()) {
                let target = self.resolve_word(Word::lit(p), &inner);
                let write = Redirect {
                    kind: RedirectKind::Write,
                    target,
                };
                self.emit(
                    vec![Word::lit(":")],
                    Vec::new(),
                    vec![write],
                    &mut inner.clone(),
                );
            }
        }
    }
}
