//! A hook entry's command line, read the way the runtime's shell runs it:
//! the program, and the settings `toolgate hook` takes from it.

use super::Ctx;
use std::path::{Path, PathBuf};

/// The parts of a `toolgate … hook <runtime> …` command doctor needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HookCommand {
    /// Every word, unquoted.
    pub words: Vec<String>,
}

impl HookCommand {
    /// Splits `cmd` into words.
    pub(super) fn parse(cmd: &str) -> HookCommand {
        HookCommand {
            words: shell_words(cmd),
        }
    }

    /// The program (first word).
    pub(super) fn program(&self) -> Option<&str> {
        self.words.first().map(String::as_str)
    }

    /// The value given to `flag` (`--flag VALUE` or `--flag=VALUE`).
    pub(super) fn flag(&self, flag: &str) -> Option<&str> {
        let eq = format!("{flag}=");
        self.words.iter().enumerate().find_map(|(i, w)| {
            if w == flag {
                self.words.get(i + 1).map(String::as_str)
            } else {
                w.strip_prefix(&eq)
            }
        })
    }
}

/// Splits a command line as a POSIX shell does for plain words, single and
/// double quotes and backslashes (what `toolgate install` writes, and what
/// people type). Expansions are left as they are.
pub(super) fn shell_words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                any = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                any = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(n @ ('"' | '\\' | '$' | '`')) => cur.push(n),
                            Some(n) => {
                                cur.push('\\');
                                cur.push(n);
                            }
                            None => cur.push('\\'),
                        },
                        _ => cur.push(q),
                    }
                }
            }
            '\\' => {
                any = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                any = true;
                cur.push(c);
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// Where `program` is, as the runtime's shell would find it from the
/// project directory: `~/` expanded, a relative path with a slash taken
/// from the project, a bare name looked up in `$PATH`. An error says why it
/// cannot run.
pub(super) fn locate(program: &str, ctx: &Ctx) -> Result<PathBuf, String> {
    let path = if let Some(rest) = program.strip_prefix("~/") {
        match ctx.home() {
            Some(h) => h.join(rest),
            None => return Err("it starts with ~/ and $HOME is not set".into()),
        }
    } else if program.contains('/') {
        ctx.project.join(program)
    } else {
        let dirs = ctx.var("PATH").unwrap_or("");
        return std::env::split_paths(dirs)
            .map(|d| d.join(program))
            .find(|p| runnable(p).is_ok())
            .ok_or_else(|| format!("there is no executable {program} in $PATH"));
    };
    runnable(&path).map(|()| path)
}

/// Whether `path` is a file the runtime can execute.
fn runnable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{} does not exist", path.display()))
        }
        Err(e) => Err(format!("{} cannot be read ({e})", path.display())),
        Ok(m) if !m.is_file() => Err(format!("{} is not a file", path.display())),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => {
            Err(format!("{} is not executable", path.display()))
        }
        Ok(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell() {
        assert_eq!(
            shell_words("'/a b/toolgate' hook codex --policy \"/p \\\"q\\\".toml\" --timeout 10"),
            vec![
                "/a b/toolgate",
                "hook",
                "codex",
                "--policy",
                "/p \"q\".toml",
                "--timeout",
                "10"
            ]
        );
        assert_eq!(shell_words("a\\ b  ''  c"), vec!["a b", "", "c"]);
        let c = HookCommand::parse("toolgate --data-dir /d hook x --timeout=30 --url http://h");
        assert_eq!(c.flag("--timeout"), Some("30"));
        assert_eq!(c.flag("--data-dir"), Some("/d"));
        assert_eq!(c.flag("--url"), Some("http://h"));
        assert_eq!(c.flag("--policy"), None);
        assert_eq!(c.program(), Some("toolgate"));
    }

    #[test]
    fn programs_are_found_as_the_shell_finds_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("tg-doctor-locate-{}", std::process::id()));
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let exe = bin.join("toolgate");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plain = bin.join("toolgate-plain");
        std::fs::write(&plain, "").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let ctx = Ctx::for_test(
            &dir,
            &[
                ("HOME", dir.to_str().unwrap()),
                ("PATH", bin.to_str().unwrap()),
            ],
        );
        assert_eq!(locate("toolgate", &ctx), Ok(exe.clone()));
        assert_eq!(locate("~/bin/toolgate", &ctx), Ok(exe.clone()));
        assert_eq!(locate("bin/toolgate", &ctx), Ok(exe.clone()));
        assert_eq!(locate(exe.to_str().unwrap(), &ctx), Ok(exe));
        assert!(
            locate("toolgate-plain", &ctx)
                .unwrap_err()
                .contains("$PATH")
        );
        assert!(
            locate(plain.to_str().unwrap(), &ctx)
                .unwrap_err()
                .contains("not executable")
        );
        assert!(
            locate("/nonexistent/toolgate", &ctx)
                .unwrap_err()
                .contains("does not exist")
        );
        assert!(
            locate(bin.to_str().unwrap(), &ctx)
                .unwrap_err()
                .contains("not a file")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
