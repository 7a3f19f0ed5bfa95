//! Codex CLI's hook trust: the `[hooks.state."…"] trusted_hash` entry that
//! makes Codex run a user hook (INTEGRATIONS.md). Being written.
