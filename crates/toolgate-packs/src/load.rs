//! Reading pack files, with errors that name the file and line.

use crate::model::PackFile;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// One pack file, parsed.
#[derive(Debug)]
pub struct Pack {
    /// The file.
    pub path: PathBuf,
    /// Its text (errors point into it).
    pub text: String,
    /// What it says.
    pub spec: PackFile,
}

/// Why a pack cannot be built, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackError {
    /// The pack file.
    pub file: PathBuf,
    /// 1-based line, 0 when the error is about the file as a whole.
    pub line: usize,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for PackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
        }
    }
}

impl std::error::Error for PackError {}

impl Pack {
    /// An error at byte offset `at` of this pack.
    pub fn error_at(&self, at: usize, message: impl Into<String>) -> PackError {
        PackError {
            file: self.path.clone(),
            line: line_of(&self.text, at),
            message: message.into(),
        }
    }

    /// An error at the start of `span` (a rule's id, a set's name).
    pub fn error(&self, span: Range<usize>, message: impl Into<String>) -> PackError {
        self.error_at(span.start, message)
    }
}

/// The 1-based line of byte offset `at`.
fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    1 + text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

/// Reads the packs in `dir` in `order`. A `*.toml` there that `order` does
/// not list is an error, and so is a listed file that is missing.
pub fn load(dir: &Path, order: &[&str]) -> Result<Vec<Pack>, PackError> {
    let whole = |file: PathBuf, message: String| PackError {
        file,
        line: 0,
        message,
    };
    let entries = std::fs::read_dir(dir)
        .map_err(|e| whole(dir.to_path_buf(), format!("cannot list the packs: {e}")))?;
    for entry in entries {
        let path = entry
            .map_err(|e| whole(dir.to_path_buf(), format!("cannot list the packs: {e}")))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".toml") && !order.contains(&name) {
            return Err(whole(
                path.clone(),
                "this pack is not in the build's list of packs (PACKS in crates/toolgate-core/build.rs): add it there, in the order it should be read".into(),
            ));
        }
    }
    order
        .iter()
        .map(|name| {
            let path = dir.join(name);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| whole(path.clone(), format!("cannot read the pack: {e}")))?;
            let spec: PackFile = toml::from_str(&text).map_err(|e| PackError {
                line: e.span().map_or(0, |s| line_of(&text, s.start)),
                file: path.clone(),
                message: e.message().trim().to_string(),
            })?;
            Ok(Pack { path, text, spec })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pack_dir(files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolgate-packs-load-{}-{}",
            std::process::id(),
            files.iter().map(|(n, _)| *n).collect::<Vec<_>>().join("_")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let dir = pack_dir(&[(
            "a.toml",
            "[pack]\nname = \"a\"\ndescription = \"x\"\n\n[[rule]]\nid = \"r\"\nclass = R4\n",
        )]);
        let e = load(&dir, &["a.toml"]).unwrap_err();
        assert_eq!(e.line, 7, "{e}");
        assert!(
            e.to_string()
                .starts_with(&format!("{}:7: ", dir.join("a.toml").display()))
        );
    }

    #[test]
    fn an_unknown_field_names_its_line() {
        let dir = pack_dir(&[(
            "b.toml",
            "[pack]\nname = \"b\"\ndescription = \"x\"\n\n[[rule]]\nid = \"r\"\nclass = \"R4\"\nreason = \"x\"\nflags_anny = [\"-r\"]\n",
        )]);
        let e = load(&dir, &["b.toml"]).unwrap_err();
        assert_eq!(e.line, 9, "{e}");
        assert!(e.message.contains("flags_anny"), "{e}");
    }

    #[test]
    fn every_pack_must_be_listed() {
        let dir = pack_dir(&[
            ("c.toml", "[pack]\nname = \"c\"\ndescription = \"x\"\n"),
            ("d.toml", "[pack]\nname = \"d\"\ndescription = \"x\"\n"),
        ]);
        let e = load(&dir, &["c.toml"]).unwrap_err();
        assert!(e.file.ends_with("d.toml"), "{e}");
        assert!(e.message.contains("not in the build's list"), "{e}");
        let e = load(&dir, &["c.toml", "d.toml", "e.toml"]).unwrap_err();
        assert!(e.file.ends_with("e.toml"), "{e}");
        assert_eq!(load(&dir, &["c.toml", "d.toml"]).unwrap().len(), 2);
    }
}
