//! Codex: a hook runs only with a matching trust entry in config.toml
//! (`codex_trust_cmd::wanted` / `recorded`), and a project's
//! `.codex/hooks.json` is read only in a project config.toml trusts.

use crate::codex_trust_cmd;
use crate::doctor_cmd::Ctx;
use crate::doctor_cmd::hooks::{Note, Scope, Settings};
use crate::doctor_cmd::report::Level;
use std::path::{Path, PathBuf};
use toolgate_core::hooks::Spec;
use toolgate_core::hooks::install::Found;

/// Codex: every toolgate hook needs a matching trust entry in config.toml,
/// and a project's `.codex/hooks.json` is read only in a trusted project.
pub(super) fn codex_notes(
    spec: &Spec,
    ctx: &Ctx,
    file: &Settings,
    found: &[Found],
    fix: &str,
) -> Vec<Note> {
    if file.scope == Scope::System {
        // Requirements' hooks are managed: they run with no trust entry.
        return vec![Note::ok(
            "managed (system requirements): runs with no trust entry".into(),
        )];
    }
    let Some(config) = ctx.user_dir(spec).map(|d| d.join("config.toml")) else {
        return vec![Note::at(
            Level::Error,
            "cannot find Codex's config.toml ($CODEX_HOME and $HOME are unset), so whether Codex \
             trusts the hook is unknown"
                .into(),
            "set HOME or CODEX_HOME as Codex runs, and run toolgate doctor again",
        )];
    };
    let doc = match codex_trust_cmd::read_config(&config) {
        Ok((_, doc)) => doc,
        Err(e) => {
            return vec![Note::at(
                Level::Error,
                format!(
                    "{}: Codex cannot read its config either, and whether it trusts the hook is \
                     unknown",
                    format!("{e:#}").replace("; fix it first (nothing was changed)", "")
                ),
                &format!("correct {} by hand, then run: {fix}", config.display()),
            )];
        }
    };
    let mut notes = Vec::new();
    if file.scope == Scope::Project {
        notes.push(codex_project_trust(ctx, &doc, &config, &file.path));
    }
    let wanted = codex_trust_cmd::wanted(&file.path, &file.value, spec);
    if wanted.len() != found.len() {
        notes.push(Note::at(
            Level::Error,
            format!(
                "toolgate cannot work out the trust entries Codex needs for its {} hook(s) here \
                 (it computed {}): whether Codex runs them is unknown, and Codex skips an \
                 untrusted hook without a word",
                found.len(),
                wanted.len()
            ),
            "check in Codex's hook review (/hooks) that toolgate's hook is trusted, and report \
             this as a toolgate bug",
        ));
        return notes;
    }
    let before = notes.len();
    for (key, hash) in &wanted {
        match codex_trust_cmd::recorded(&doc, key) {
            None => notes.push(Note::at(
                Level::Error,
                format!(
                    "Codex has no trust entry for the hook {key} in {}: it skips the hook \
                     without a word and runs every call (toolgate install codex writes the \
                     entry and its trust)",
                    config.display()
                ),
                fix,
            )),
            Some(h) if h != *hash => notes.push(Note::at(
                Level::Error,
                format!(
                    "the hook {key} was edited after Codex trusted it (the trusted_hash in {} is \
                     for another command, timeout, matcher or position): Codex skips it and runs \
                     every call (toolgate install codex writes the entry and its trust again)",
                    config.display()
                ),
                fix,
            )),
            Some(_) => {}
        }
    }
    if notes[before..].is_empty() {
        notes.push(Note::ok(format!("trusted in {}", config.display())));
    }
    notes
}

/// Whether config.toml trusts the project (`[projects."<dir>"] trust_level
/// = "trusted"`, the most specific entry covering it).
fn codex_project_trust(
    ctx: &Ctx,
    doc: &toml_edit::DocumentMut,
    config: &Path,
    hooks: &Path,
) -> Note {
    let mut best: Option<(PathBuf, Option<String>)> = None;
    if let Some(projects) = doc.get("projects").and_then(|i| i.as_table_like()) {
        for (key, item) in projects.iter() {
            let p = Path::new(key);
            let covers = ctx.project.starts_with(p)
                || p.canonicalize().is_ok_and(|c| ctx.project.starts_with(c));
            let deeper = best
                .as_ref()
                .is_none_or(|(b, _)| p.components().count() > b.components().count());
            if covers && deeper {
                let level = item
                    .as_table_like()
                    .and_then(|t| t.get("trust_level"))
                    .and_then(|i| i.as_str())
                    .map(str::to_string);
                best = Some((p.to_path_buf(), level));
            }
        }
    }
    let project = ctx.project.display();
    match best {
        Some((p, Some(level))) if level == "trusted" => {
            Note::ok(format!("Codex trusts the project {}", p.display()))
        }
        Some((p, level)) => Note::at(
            Level::Error,
            format!(
                "Codex's config.toml marks {} {}: Codex does not read {} there, so toolgate's hook \
                 does not run",
                p.display(),
                level.map_or_else(|| "without a trust_level".into(), |l| format!("as {l:?}")),
                hooks.display()
            ),
            &format!(
                "set trust_level = \"trusted\" under [projects.\"{}\"] in {}",
                p.display(),
                config.display()
            ),
        ),
        None => Note::at(
            Level::Error,
            format!(
                "{project} is not a project Codex trusts (no [projects.\"…\"] trust_level = \
                 \"trusted\" in {} covers it): Codex does not read {} there, so toolgate's hook \
                 does not run",
                config.display(),
                hooks.display()
            ),
            &format!(
                "start codex there once and trust the folder (or run codex exec --trust there), \
                 or add [projects.\"{project}\"] trust_level = \"trusted\" to {}",
                config.display()
            ),
        ),
    }
}
