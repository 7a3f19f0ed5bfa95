//! What only one runtime has: settings that switch every hook off (Claude
//! Code's `disableAllHooks` and managed `allowManagedHooksOnly`, Gemini's
//! `hooksConfig`), Codex's hook trust and project trust, Gemini's folder
//! trust and the environment it strips from hooks.

mod codex;
mod gemini;

pub(super) use gemini::gemini_env;
#[cfg(test)]
use gemini::{Trust, gemini_trust};

use super::Ctx;
use super::hooks::{Note, Settings};
use super::report::Level;
use serde_json::Value;
use std::path::{Path, PathBuf};
use toolgate_core::hooks::install::Found;
use toolgate_core::hooks::{Runtime, Spec};

/// Settings that turn toolgate's hooks off wherever they are registered,
/// with the file that holds each.
pub(super) fn switches(
    spec: &Spec,
    ctx: &Ctx,
    files: &[Settings],
    installed: &[(&Settings, Vec<Found>)],
) -> Vec<(PathBuf, Note)> {
    match spec.runtime {
        Runtime::ClaudeCode => claude_switches(ctx, files, installed),
        Runtime::Gemini => gemini::gemini_switches(ctx, files, installed),
        Runtime::Codex | Runtime::Cursor => Vec::new(),
    }
}

/// Notes about one file holding toolgate entries that depend on the
/// runtime: Codex's trust, Gemini's folder trust.
pub(super) fn file_notes(
    spec: &Spec,
    ctx: &Ctx,
    file: &Settings,
    found: &[Found],
    fix: &str,
) -> Vec<Note> {
    match spec.runtime {
        Runtime::Codex => codex::codex_notes(spec, ctx, file, found, fix),
        Runtime::Gemini => gemini::gemini_notes(ctx, file.scope),
        Runtime::ClaudeCode | Runtime::Cursor => Vec::new(),
    }
}

/// Claude Code: `disableAllHooks` (the highest-precedence file that sets
/// it wins: user < project < project local < managed; outside the managed
/// file it does not switch off a managed hook) and the managed
/// `allowManagedHooksOnly`.
fn claude_switches(
    ctx: &Ctx,
    files: &[Settings],
    installed: &[(&Settings, Vec<Found>)],
) -> Vec<(PathBuf, Note)> {
    let managed = crate::install_cmd::read_settings(&ctx.claude_managed)
        .ok()
        .flatten()
        .map(|(_, v)| v);
    let mut sources: Vec<(&Path, &Value)> = files
        .iter()
        .filter(|f| f.path != ctx.claude_managed)
        .map(|f| (f.path.as_path(), &f.value))
        .collect();
    if let Some(m) = &managed {
        sources.push((&ctx.claude_managed, m));
    }
    let managed_hook = installed
        .iter()
        .any(|(f, _)| f.scope == super::hooks::Scope::System || f.path == ctx.claude_managed);
    let mut out = Vec::new();
    let last = sources.iter().rev().find_map(|(p, v)| {
        v.get("disableAllHooks")
            .and_then(Value::as_bool)
            .map(|b| (*p, b))
    });
    if let Some((path, true)) = last
        && managed_hook
        && path != ctx.claude_managed
    {
        out.push((
            path.to_path_buf(),
            Note::at(
                Level::Warn,
                "\"disableAllHooks\": true: Claude Code runs no user or project hooks; \
                 toolgate's hook in the managed settings still runs"
                    .into(),
                &format!("remove \"disableAllHooks\" from {}", path.display()),
            ),
        ));
    } else if let Some((path, true)) = last {
        out.push((
            path.to_path_buf(),
            Note::at(
                Level::Error,
                "\"disableAllHooks\": true: Claude Code runs no hooks at all, toolgate's included"
                    .into(),
                &format!("remove \"disableAllHooks\" from {}", path.display()),
            ),
        ));
    }
    if !managed_hook
        && managed
            .as_ref()
            .and_then(|m| m.get("allowManagedHooksOnly"))
            .and_then(Value::as_bool)
            == Some(true)
    {
        out.push((
            ctx.claude_managed.clone(),
            Note::at(
                Level::Error,
                "\"allowManagedHooksOnly\": true: Claude Code runs only hooks from managed \
                 settings, so toolgate's entries in user and project settings are skipped"
                    .into(),
                "as root, put toolgate's hook in the managed settings: sudo toolgate setup \
                 separated",
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests;
