//! Which of `sed`'s arguments are its script rather than files, so that a
//! script such as `s/a/b/g` is never read as the path `./s/a/b/g`.
//!
//! GNU sed's rule: the script is the value of each `-e SCRIPT`
//! (`--expression`), the file of each `-f FILE` (`--file`), or, when
//! neither is given, the first operand; every other operand is a file.
//! Options may come after operands (GNU permutes them). Only what is
//! certain is reported: with any word expanded at run time (`$X` could
//! become `-e …`, making the first operand a file) or an option cluster
//! that might hold `-e` or `-f`, no first operand is taken for the script,
//! and every operand stays a file. Reporting less never hides a file.

use crate::Word;

/// What a long option of sed is, when it names one of those that matter
/// here (GNU getopt accepts any unambiguous start: `--expr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Long {
    /// `--expression[=SCRIPT]`.
    Expression,
    /// `--file[=FILE]`.
    File,
    /// `--line-length[=N]`.
    LineLength,
    /// Another option, or a start of several (sed refuses it).
    Other,
    /// A start that could be `--file` or another option (`--f`).
    Unsure,
}

fn long(name: &str) -> Long {
    const WITH_VALUES: [(&str, Long); 3] = [
        ("expression", Long::Expression),
        ("file", Long::File),
        ("line-length", Long::LineLength),
    ];
    // Every GNU sed long option, to tell an abbreviation's meaning.
    const ALL: [&str; 16] = [
        "expression",
        "file",
        "line-length",
        "debug",
        "follow-symlinks",
        "in-place",
        "null-data",
        "zero-terminated",
        "posix",
        "quiet",
        "silent",
        "regexp-extended",
        "sandbox",
        "separate",
        "unbuffered",
        "help",
    ];
    if name.is_empty() {
        return Long::Unsure;
    }
    let starts: Vec<&str> = ALL
        .iter()
        .copied()
        .filter(|o| o.starts_with(name))
        .collect();
    let exact = ALL.contains(&name);
    let meant = if exact {
        Some(name)
    } else if starts.len() == 1 {
        Some(starts[0])
    } else {
        None
    };
    match meant {
        Some(o) => WITH_VALUES
            .iter()
            .find(|(w, _)| *w == o)
            .map_or(Long::Other, |(_, l)| *l),
        // Ambiguous: one that could give a script or file is unsure.
        None if starts
            .iter()
            .any(|o| WITH_VALUES.iter().any(|(w, _)| w == o)) =>
        {
            Long::Unsure
        }
        None => Long::Other,
    }
}

/// The indices in `args` (argv without `argv[0]`) of the words that are
/// sed scripts, not files: each `-e`/`--expression` value (or the
/// `--expression=SCRIPT` word itself), and the first operand when no
/// `-e`/`-f` gives the script. Empty whenever that cannot be known for
/// sure (see the module's documentation).
pub fn sed_script_args(args: &[Word]) -> Vec<usize> {
    if args.iter().any(|w| w.dynamic) {
        return Vec::new();
    }
    let mut scripts = Vec::new();
    let mut given = false; // -e or -f seen: every operand is a file
    let mut unsure = false;
    let mut operands = Vec::new();
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let t = args[i].text.as_str();
        if only_operands || t == "-" || !t.starts_with('-') {
            operands.push(i);
        } else if t == "--" {
            only_operands = true;
        } else if let Some(name) = t.strip_prefix("--") {
            let (name, value) = match name.split_once('=') {
                Some((n, _)) => (n, true),
                None => (name, false),
            };
            match long(name) {
                Long::Expression => {
                    given = true;
                    if value {
                        scripts.push(i);
                    } else {
                        i += 1;
                        if i < args.len() {
                            scripts.push(i);
                        }
                    }
                }
                Long::File => {
                    given = true;
                    if !value {
                        i += 1; // the file: a path
                    }
                }
                Long::LineLength => {
                    if !value {
                        i += 1;
                    }
                }
                Long::Other => {}
                Long::Unsure => unsure = true,
            }
        } else {
            match t {
                "-e" => {
                    given = true;
                    i += 1;
                    if i < args.len() {
                        scripts.push(i);
                    }
                }
                "-f" => {
                    given = true;
                    i += 1;
                }
                "-l" => i += 1,
                // -i takes an attached suffix (`-i.bak`, `-ie` is a suffix
                // of `e`): nothing after it in the word is an option.
                _ if t.starts_with("-i") => {}
                // Flags without values, alone or together (`-nE`).
                _ if t[1..].bytes().all(|b| b"nrEsuz".contains(&b)) => {}
                // A cluster that may hold -e, -f or -l (`-ne`, `-nf`):
                // where their values are is not worth guessing.
                _ => unsure = true,
            }
        }
        i += 1;
    }
    if !given
        && !unsure
        && let Some(&first) = operands.first()
    {
        scripts.push(first);
    }
    scripts.sort_unstable();
    scripts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scripts(args: &[&str]) -> Vec<String> {
        let words: Vec<Word> = args
            .iter()
            .map(|t| Word {
                text: (*t).to_string(),
                dynamic: false,
            })
            .collect();
        sed_script_args(&words)
            .into_iter()
            .map(|i| words[i].text.clone())
            .collect()
    }

    /// The first operand is the script unless -e or -f gives it; -e's
    /// values are scripts; -f's value and every other operand are files.
    #[test]
    fn the_script_is_told_from_the_files() {
        assert_eq!(scripts(&["-i", "s/a/b/g", "hosts"]), ["s/a/b/g"]);
        assert_eq!(scripts(&["s/a/b/g", "-i", "hosts"]), ["s/a/b/g"]);
        assert_eq!(scripts(&["-i.bak", "$a x", "/etc/hosts"]), ["$a x"]);
        assert_eq!(scripts(&["-ie", "s/a/b/", "hosts"]), ["s/a/b/"]);
        assert_eq!(scripts(&["-nE", "1p", "hosts"]), ["1p"]);
        assert_eq!(scripts(&["-l", "5", "l", "hosts"]), ["l"]);
        assert_eq!(
            scripts(&["-i", "-e", "s/a/b/", "-e", "s/c/d/", "hosts"]),
            ["s/a/b/", "s/c/d/"]
        );
        assert_eq!(
            scripts(&["-i", "--expr", "s/a/b/", "--expression=s/c/d/", "f"]),
            ["s/a/b/", "--expression=s/c/d/"]
        );
        assert_eq!(scripts(&["-i", "--", "s/a/b/", "-n"]), ["s/a/b/"]);
        // -f gives the script: every operand is a file, and so is -f's value.
        assert!(scripts(&["-i", "-f", "edit.sed", "s/a/b/g"]).is_empty());
        assert!(scripts(&["-i", "s/a/b/g", "--file=x.sed"]).is_empty());
        // With -e anywhere, the first operand is a file.
        assert!(scripts(&["-i", "/etc/hosts", "-e", "s/a/b/"]) == ["s/a/b/"]);
    }

    /// Whatever is not certain leaves every operand a file.
    #[test]
    fn when_unsure_every_operand_stays_a_file() {
        // A cluster that may hold -e (its value would be the next word).
        assert!(scripts(&["-ne", "p", "hosts"]).is_empty());
        // `--f` could be --file or --follow-symlinks.
        assert!(scripts(&["--f", "x", "hosts"]).is_empty());
        // A word expanded at run time could be `-e SCRIPT`.
        let words = [
            Word {
                text: "-i".into(),
                dynamic: false,
            },
            Word {
                text: "/etc/passwd".into(),
                dynamic: false,
            },
            Word {
                text: "$X".into(),
                dynamic: true,
            },
        ];
        assert!(sed_script_args(&words).is_empty());
    }
}
