//! What doctor reports: findings, their levels, the text and JSON forms, and
//! the exit code.

use serde::Serialize;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Level {
    /// Installed, and the runtime runs it fail-closed.
    Ok,
    /// Fail-closed, but weaker than it should be, or not installed (when no
    /// runtime was asked for by name).
    Warn,
    /// The runtime would run a tool call toolgate did not allow, or toolgate
    /// cannot work as set up (every call fails).
    Error,
}

/// One thing doctor found. The JSON form always has all five fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(super) struct Finding {
    /// The runtime's CLI name (`claude-code`, `codex`, `gemini`, `cursor`,
    /// `openclaw`).
    pub runtime: &'static str,
    /// The settings file it is about (`null` when about no one file).
    pub file: Option<String>,
    /// How bad it is.
    pub level: Level,
    /// What was found.
    pub message: String,
    /// The command or edit that fixes it (`null` when nothing needs fixing).
    pub fix: Option<String>,
}

/// The exit code: 1 when any finding is an error, else 0.
pub(super) fn exit_code(findings: &[Finding]) -> u8 {
    u8::from(findings.iter().any(|f| f.level == Level::Error))
}

/// The findings as one pretty-printed JSON array.
pub(super) fn json(findings: &[Finding]) -> String {
    serde_json::to_string_pretty(findings).expect("findings serialize")
}

/// The findings for a person: one block per finding, then a summary line.
pub(super) fn text(findings: &[Finding]) -> String {
    let mut out = String::new();
    let width = findings.iter().map(|f| f.runtime.len()).max().unwrap_or(0);
    for f in findings {
        let tag = match f.level {
            Level::Ok => "ok   ",
            Level::Warn => "warn ",
            Level::Error => "ERROR",
        };
        let file = f
            .file
            .as_deref()
            .map(|p| format!("{p}: "))
            .unwrap_or_default();
        out.push_str(&format!(
            "{tag} {:width$}  {file}{}\n",
            f.runtime, f.message
        ));
        if let Some(fix) = &f.fix {
            out.push_str(&format!("      {:width$}  fix: {fix}\n", ""));
        }
    }
    let count = |l| findings.iter().filter(|f| f.level == l).count();
    let (errors, warnings) = (count(Level::Error), count(Level::Warn));
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    out.push_str(&if errors > 0 {
        format!(
            "{}, {}: a runtime above may run tool calls toolgate did not allow, or toolgate \
             cannot work there; run the fixes, then toolgate doctor again\n",
            plural(errors, "error"),
            plural(warnings, "warning")
        )
    } else {
        format!(
            "no errors, {}: every runtime toolgate is installed into runs it fail-closed\n",
            plural(warnings, "warning")
        )
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(level: Level, fix: Option<&str>) -> Finding {
        Finding {
            runtime: "codex",
            file: Some("/h/.codex/hooks.json".into()),
            level,
            message: "m".into(),
            fix: fix.map(str::to_string),
        }
    }

    #[test]
    fn errors_decide_the_exit_code_and_json_keeps_every_field() {
        assert_eq!(
            exit_code(&[f(Level::Ok, None), f(Level::Warn, Some("x"))]),
            0
        );
        assert_eq!(
            exit_code(&[f(Level::Ok, None), f(Level::Error, Some("x"))]),
            1
        );
        assert_eq!(exit_code(&[]), 0);
        let v: serde_json::Value = serde_json::from_str(&json(&[f(Level::Ok, None)])).unwrap();
        assert_eq!(
            v,
            serde_json::json!([{"runtime": "codex", "file": "/h/.codex/hooks.json",
                "level": "ok", "message": "m", "fix": null}])
        );
    }

    #[test]
    fn text_shows_each_fix_under_its_finding_and_sums_up() {
        let t = text(&[
            f(Level::Error, Some("toolgate install codex")),
            f(Level::Warn, None),
        ]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "ERROR codex  /h/.codex/hooks.json: m");
        assert_eq!(lines[1], "             fix: toolgate install codex");
        assert!(lines[2].starts_with("warn  codex"));
        assert!(lines[3].starts_with("1 error, 1 warning:"), "{t}");
        assert!(text(&[]).starts_with("no errors, 0 warnings"));
    }
}
