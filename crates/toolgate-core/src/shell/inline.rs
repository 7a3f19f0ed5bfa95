//! Shell commands hidden in interpreter one-liners: `os.system("…")`,
//! `subprocess.run(["rm", …])`, `execSync('…')`, Perl and Ruby backticks.
//! Each is handed back to the shell analyzer.

use base64::Engine as _;
use regex::Regex;
use std::sync::OnceLock;

/// A shell command found in program text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Snippet {
    /// Text a shell would parse (`os.system("rm -rf /")`).
    Script(String),
    /// An argv run without a shell (`subprocess.run(["rm", "-rf", "/"])`).
    Argv(Vec<String>),
}

/// Functions that run a shell command or a program, across the common
/// interpreters. Matched as a name followed by `(` or whitespace and a string.
const EXEC_FUNCTIONS: &str = r"(?:os\.system|os\.popen|os\.exec[lv]p?e?|os\.spawn[lv]p?e?|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|commands\.getoutput|pty\.spawn|system|exec|execSync|execFileSync|spawnSync|spawn|execFile|shell_exec|passthru|proc_open|popen|IO\.popen|Open3\.\w+|Kernel\.system|Kernel\.exec|do shell script|child_process\.\w+|Deno\.run|Bun\.spawn|Bun\.spawnSync|\$)";

fn string_call() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let pat = format!(
            r#"{EXEC_FUNCTIONS}\s*\(?\s*(?:[rbfu]{{0,2}})(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|`((?:[^`\\]|\\.)*)`)"#
        );
        Regex::new(&pat).unwrap_or_else(|_| Regex::new("$^").expect("trivial regex"))
    })
}

fn list_call() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let pat = format!(r#"{EXEC_FUNCTIONS}\s*\(\s*(?:\[|\()([^\]\)]*)"#);
        Regex::new(&pat).unwrap_or_else(|_| Regex::new("$^").expect("trivial regex"))
    })
}

fn quoted_item() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r#""((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'"#).expect("valid regex"))
}

fn backticks() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"`([^`]+)`|\bqx\s*[\{\(\[/]([^\}\)\]/]+)|%x\s*[\{\(\[]([^\}\)\]]+)").expect("valid regex"))
}

/// Finds the shell commands that `code` would run.
pub fn shell_snippets(code: &str) -> Vec<Snippet> {
    let mut out = Vec::new();
    for caps in string_call().captures_iter(code) {
        if let Some(m) = caps.get(1).or_else(|| caps.get(2)).or_else(|| caps.get(3)) {
            out.push(Snippet::Script(unescape(m.as_str())));
        }
    }
    for caps in list_call().captures_iter(code) {
        let Some(items) = caps.get(1) else { continue };
        let argv: Vec<String> = quoted_item()
            .captures_iter(items.as_str())
            .filter_map(|c| c.get(1).or_else(|| c.get(2)).map(|m| unescape(m.as_str())))
            .collect();
        if !argv.is_empty() {
            // `exec("sh", "-c", "…")` style calls list argv too
            out.push(Snippet::Argv(argv));
        }
    }
    for caps in backticks().captures_iter(code) {
        if let Some(m) = caps.get(1).or_else(|| caps.get(2)).or_else(|| caps.get(3)) {
            out.push(Snippet::Script(m.as_str().to_string()));
        }
    }
    out.truncate(32);
    out
}

/// Undoes the common string escapes of Python, JavaScript, Ruby and Perl.
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    super::words::decode_ansi_c(s)
}

/// Decodes base64 text (standard or URL alphabet, padding optional).
pub fn decode_base64(text: &str) -> Option<String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let trimmed = compact.trim_end_matches('=');
    let engines = [
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    engines.iter().find_map(|e| e.decode(trimmed).ok()).and_then(|bytes| String::from_utf8(bytes).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_system_calls() {
        assert_eq!(shell_snippets(r#"import os; os.system("rm -rf ~")"#), vec![Snippet::Script("rm -rf ~".into())]);
        assert_eq!(
            shell_snippets("require('child_process').execSync('rm -rf /')"),
            vec![Snippet::Script("rm -rf /".into())]
        );
        assert_eq!(
            shell_snippets("import subprocess; subprocess.run(['rm', '-rf', '/'])"),
            vec![Snippet::Argv(vec!["rm".into(), "-rf".into(), "/".into()])]
        );
        assert_eq!(shell_snippets("print `rm -rf /`"), vec![Snippet::Script("rm -rf /".into())]);
        assert!(shell_snippets("print(1+1)").is_empty());
    }

    #[test]
    fn decodes_base64() {
        assert_eq!(decode_base64("cm0gLXJmIC8K").as_deref(), Some("rm -rf /\n"));
        assert_eq!(decode_base64("not base64!!"), None);
    }
}
