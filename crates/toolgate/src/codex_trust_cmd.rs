//! Codex's hook trust, on disk: the `[hooks.state."<key>"] trusted_hash`
//! entries in `$CODEX_HOME/config.toml` that make Codex run toolgate's hook
//! (`toolgate_core::hooks::codex_trust` computes them). Written by
//! `toolgate install codex`, checked by `toolgate doctor`, removed by
//! `toolgate uninstall codex`. The rest of
//! config.toml is kept as it was, comments and order included.

use crate::settings_file::{user_dir, write_text};
use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use std::path::{Path, PathBuf};
use toolgate_core::hooks::Spec;
use toolgate_core::hooks::codex_trust;

/// The config.toml holding the trust entries: `$CODEX_HOME/config.toml`
/// (default `~/.codex/config.toml`), whichever hooks.json they trust.
pub(crate) fn config_path(spec: &Spec) -> Result<PathBuf> {
    Ok(user_dir(spec.install)?.join("config.toml"))
}

/// The trust entries toolgate's hooks in `settings` (the hooks.json at
/// `hooks_path`) need: `(state key, trusted_hash)`.
pub(crate) fn wanted(hooks_path: &Path, settings: &Value, spec: &Spec) -> Vec<(String, String)> {
    let path = hooks_path.to_string_lossy();
    spec.install
        .find(spec.name, settings)
        .iter()
        .map(|found| codex_trust::state_for(&path, found))
        .collect()
}

/// The `trusted_hash` config.toml records for `key`, if any.
pub(crate) fn recorded(doc: &toml_edit::DocumentMut, key: &str) -> Option<String> {
    doc.get("hooks")?
        .get("state")?
        .get(key)?
        .get("trusted_hash")?
        .as_str()
        .map(str::to_string)
}

/// Reads config.toml (empty when absent).
pub(crate) fn read_config(path: &Path) -> Result<(Option<String>, toml_edit::DocumentMut)> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let doc = text
        .as_deref()
        .unwrap_or("")
        .parse::<toml_edit::DocumentMut>()
        .map_err(|e| {
            anyhow!(
                "{} is not valid TOML ({e}); fix it first (nothing was changed)",
                path.display()
            )
        })?;
    Ok((text, doc))
}

/// Writes the trust entries for toolgate's hooks in `settings` (the
/// hooks.json at `hooks_path`) into config.toml; says what it did.
pub(crate) fn trust(hooks_path: &Path, settings: &Value, spec: &Spec) -> Result<String> {
    let config = config_path(spec)?;
    let wanted = wanted(hooks_path, settings, spec);
    if wanted.is_empty() {
        anyhow::bail!(
            "no toolgate hook found in {} to trust, so Codex would skip it; nothing was trusted",
            hooks_path.display()
        );
    }
    let (before, mut doc) = read_config(&config)?;
    let mut changed = false;
    for (key, hash) in &wanted {
        if recorded(&doc, key).as_deref() == Some(hash.as_str()) {
            continue;
        }
        let hooks = table(doc.as_table_mut(), "hooks", &config)?;
        let state = table(hooks, "state", &config)?;
        let entry = table(state, key, &config)?;
        entry.insert("trusted_hash", toml_edit::value(hash.as_str()));
        changed = true;
    }
    if !changed {
        return Ok(format!(
            "Codex already trusts it ({} entr{} in {})",
            wanted.len(),
            if wanted.len() == 1 { "y" } else { "ies" },
            config.display()
        ));
    }
    write_text(&config, &doc.to_string(), before.as_deref())?;
    Ok(format!(
        "Codex trusts it: {} trust entr{} written to {}",
        wanted.len(),
        if wanted.len() == 1 { "y" } else { "ies" },
        config.display()
    ))
}

/// Removes from config.toml the trust entries `toolgate install` wrote for
/// toolgate's hooks in `settings` (the hooks.json at `hooks_path`, read
/// before the hooks are removed): an entry goes only when its key and its
/// `trusted_hash` are the ones toolgate's hook has, so a trust the user
/// gave anything else stays. Says what it did, or `None` when there was
/// nothing of toolgate's.
pub(crate) fn untrust(hooks_path: &Path, settings: &Value, spec: &Spec) -> Result<Option<String>> {
    let config = config_path(spec)?;
    let ours = wanted(hooks_path, settings, spec);
    if ours.is_empty() || !config.exists() {
        return Ok(None);
    }
    let (before, mut doc) = read_config(&config)?;
    let mut removed = 0;
    for (key, hash) in &ours {
        if recorded(&doc, key).as_deref() != Some(hash.as_str()) {
            continue;
        }
        let state = doc
            .get_mut("hooks")
            .and_then(|h| h.get_mut("state"))
            .and_then(toml_edit::Item::as_table_like_mut);
        if let Some(state) = state
            && state.remove(key).is_some()
        {
            removed += 1;
        }
    }
    if removed == 0 {
        return Ok(None);
    }
    // Tables left empty by the removal go too, when nothing else is in them.
    let empty = |item: Option<&toml_edit::Item>| {
        item.and_then(toml_edit::Item::as_table_like)
            .is_some_and(|t| t.is_empty())
    };
    if empty(doc.get("hooks").and_then(|h| h.get("state")))
        && let Some(h) = doc
            .get_mut("hooks")
            .and_then(toml_edit::Item::as_table_like_mut)
    {
        h.remove("state");
    }
    if empty(doc.get("hooks")) {
        doc.remove("hooks");
    }
    write_text(&config, &doc.to_string(), before.as_deref())?;
    Ok(Some(format!(
        "removed toolgate's {removed} trust entr{} from {}",
        if removed == 1 { "y" } else { "ies" },
        config.display()
    )))
}

/// The sub-table `key` of `parent`, created (not inline, not dotted) when
/// absent; an error when `key` holds something else.
fn table<'a>(
    parent: &'a mut toml_edit::Table,
    key: &str,
    config: &Path,
) -> Result<&'a mut toml_edit::Table> {
    if !parent.contains_key(key) {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        parent.insert(key, toml_edit::Item::Table(t));
    }
    parent
        .get_mut(key)
        .and_then(toml_edit::Item::as_table_mut)
        .ok_or_else(|| {
            anyhow!(
                "{}: `{key}` is not a table; fix it by hand first (nothing was changed)",
                config.display()
            )
        })
}
