//! What a script leaves behind for the commands after it: files downloaded,
//! repositories cloned, files written with known content, and the literal
//! output of `echo`, `printf`, `cat`, `base64 -d` and `ls`.

use super::analyzer::Analyzer;
use super::argv::display;
use super::scope::Scope;
use super::types::*;
use super::words;

/// Records text written by redirections (`> f` replaces, `>> f` appends).
pub(super) fn record_written(scope: &mut Scope, redirects: &[Redirect], text: &str) {
    for r in redirects {
        if r.target.dynamic || r.target.text.starts_with("/dev/") {
            continue;
        }
        let content = match r.kind {
            RedirectKind::Write => text.to_string(),
            RedirectKind::Append => format!(
                "{}{text}",
                scope.written_content(&r.target.text).unwrap_or("")
            ),
            _ => continue,
        };
        if scope.state.written.len() < 32 {
            scope
                .state_mut()
                .written
                .push((r.target.text.clone(), content));
        }
    }
}

/// The directory `git clone URL [DIR]` creates.
pub(super) fn clone_target(args: &[Word]) -> Option<Word> {
    let at = args.iter().position(|w| w.text == "clone")?;
    let mut operands = Vec::new();
    let mut i = at + 1;
    while i < args.len() {
        let t = args[i].text.as_str();
        if matches!(
            t,
            "-b" | "--branch"
                | "-o"
                | "--origin"
                | "--depth"
                | "-c"
                | "--config"
                | "--reference"
                | "--separate-git-dir"
                | "-u"
                | "--upload-pack"
                | "-j"
                | "--jobs"
                | "--filter"
                | "--template"
        ) {
            i += 2;
            continue;
        }
        if !t.starts_with('-') {
            operands.push(args[i].clone());
        }
        i += 1;
    }
    match operands.as_slice() {
        [_, dir, ..] => Some(dir.clone()),
        [url] => {
            let name = url
                .text
                .trim_end_matches('/')
                .rsplit(['/', ':'])
                .next()?
                .trim_end_matches(".git")
                .to_string();
            (!name.is_empty()).then(|| url.clone().with_text(&name))
        }
        [] => None,
    }
}

/// The file a download command writes, when it names one.
pub(super) fn download_target(program: &str, args: &[Word]) -> Option<Word> {
    let mut url: Option<&Word> = None;
    let mut i = 0;
    let mut remote_name = false;
    while i < args.len() {
        let a = args[i].text.as_str();
        let value_of = |flag: &str| a.strip_prefix(flag).filter(|v| !v.is_empty());
        match (program, a) {
            ("curl", "-o" | "--output")
            | ("wget", "-O" | "--output-document")
            | ("aria2c", "-o" | "--out")
            | ("http" | "xh", "-o" | "--output") => {
                return args.get(i + 1).cloned();
            }
            ("curl", "-O" | "--remote-name") => remote_name = true,
            _ => {}
        }
        if let Some(v) = value_of("--output=").or_else(|| value_of("--output-document=")) {
            return Some(args[i].clone().with_text(v));
        }
        // Short flags run together (`-sSLo FILE`, `-qO FILE`, `-sofile`):
        // the output flag takes the rest of the cluster, or the next word.
        if let Some(cluster) = a
            .strip_prefix('-')
            .filter(|c| !c.starts_with('-') && c.len() > 1)
        {
            let (out, remote) = match program {
                "curl" => (Some('o'), Some('O')),
                "wget" => (Some('O'), None),
                "aria2c" | "http" | "xh" => (Some('o'), None),
                _ => (None, None),
            };
            for (k, c) in cluster.char_indices() {
                if !c.is_ascii_alphanumeric() {
                    break;
                }
                if Some(c) == out {
                    let rest = &cluster[k + 1..];
                    return if rest.is_empty() {
                        args.get(i + 1).cloned()
                    } else {
                        Some(args[i].clone().with_text(rest))
                    };
                }
                if Some(c) == remote {
                    remote_name = true;
                }
            }
        }
        if a.contains("://") {
            url = Some(&args[i]);
        }
        i += 1;
    }
    // `wget URL` and `curl -O URL` save under the URL's last path segment
    let url = url?;
    if program == "wget" || remote_name {
        let name = url.text.split(['?', '#']).next()?.rsplit('/').next()?;
        if !name.is_empty() {
            return Some(url.clone().with_text(name));
        }
    }
    None
}

impl Analyzer<'_> {
    /// The content of a script written earlier in the same command.
    pub(super) fn written_script(&self, w: &Word, scope: &Scope) -> Option<String> {
        if w.dynamic || scope.state.written.is_empty() {
            return None;
        }
        let abs = self.resolve_word(w.clone(), scope);
        scope.written_content(&abs.text).map(str::to_string)
    }

    /// True when `w` names a file an earlier download in the script wrote.
    pub(super) fn is_downloaded(&self, w: &Word, scope: &Scope) -> bool {
        if w.dynamic || scope.state.downloaded.is_empty() {
            return false;
        }
        let abs = self.resolve_word(w.clone(), scope);
        scope.state.downloaded.iter().any(|d| d == &abs.text)
    }

    /// True when a build or run tool works on a repository cloned earlier in
    /// the same command (`git clone URL x && make -C x`).
    pub(super) fn touches_clone(
        &self,
        program: &str,
        first: &Word,
        args: &[Word],
        scope: &Scope,
    ) -> bool {
        const BUILDERS: &[&str] = &[
            "make", "gmake", "cmake", "ninja", "meson", "npm", "npx", "yarn", "pnpm", "bun", "pip",
            "pip3", "python", "python3", "node", "cargo", "go", "bash", "sh", "zsh", "ruby",
            "perl", "php", "gradle", "mvn", "bundle", "rake", "just", "docker", "podman",
            "composer", "poetry", "uv", "deno", "swift", "dotnet", "sbt", "mix", "stack", "cabal",
            "source", ".",
        ];
        let within = |w: &Word| {
            let abs = self.resolve_word(w.clone(), scope);
            !abs.dynamic
                && scope
                    .state
                    .cloned
                    .iter()
                    .any(|c| toolgate_paths::is_within(&abs.text, c))
        };
        if first.text.contains('/') && within(first) {
            return true;
        }
        if !BUILDERS.contains(&program) {
            return false;
        }
        scope.cwd.as_deref().is_some_and(|cwd| {
            scope
                .state
                .cloned
                .iter()
                .any(|c| toolgate_paths::is_within(cwd, c))
        }) || args.iter().any(|a| {
            let t = a.text.split_once('=').map(|(_, v)| v).unwrap_or(&a.text);
            (t.contains('/')
                || scope
                    .state
                    .cloned
                    .iter()
                    .any(|c| c.ends_with(&format!("/{t}"))))
                && within(&Word {
                    text: t.to_string(),
                    dynamic: a.dynamic,
                })
        })
    }
}

/// What `echo`, `printf`, `cat` (of stdin) and `base64 -d` print, when known.
pub(super) fn literal_output(program: &str, args: &[Word], scope: &Scope) -> Option<String> {
    if args.iter().any(|w| w.dynamic) {
        return None;
    }
    match program {
        "echo" => {
            let mut rest = args;
            let mut escapes = false;
            while let Some(first) = rest.first() {
                match first.text.as_str() {
                    "-n" | "-E" => rest = &rest[1..],
                    "-e" | "-ne" | "-en" => {
                        escapes = true;
                        rest = &rest[1..];
                    }
                    _ => break,
                }
            }
            let joined = display(rest);
            Some(if escapes {
                words::decode_ansi_c(&joined)
            } else {
                joined
            })
        }
        "printf" => {
            let (fmt, rest) = args.split_first()?;
            if fmt.text == "%s" || fmt.text == "%s\\n" || fmt.text == "%b" {
                Some(rest.iter().map(|w| w.text.as_str()).collect::<String>())
            } else if rest.is_empty() {
                Some(words::decode_ansi_c(&fmt.text))
            } else {
                format_strings(&fmt.text, rest)
            }
        }
        "cat" if args.is_empty() || args.iter().all(|w| w.text == "-") => scope.stdin_text.clone(),
        // Not its exact output, but the paths it lists are at or under these:
        // enough for `ls /var/log/* | xargs truncate -s 0` to be seen.
        "ls" => {
            let operands: Vec<&str> = args
                .iter()
                .map(|w| w.text.as_str())
                .filter(|t| !t.starts_with('-'))
                .collect();
            Some(if operands.is_empty() {
                ".".to_string()
            } else {
                operands.join("\n")
            })
        }
        "base64"
            if args
                .iter()
                .any(|w| matches!(w.text.as_str(), "-d" | "--decode" | "-D")) =>
        {
            let input = scope.stdin_text.as_deref()?;
            crate::decoders::decode_base64(input)
        }
        "xxd" | "basenc" | "rev" | "tr" | "base32" | "openssl" => {
            let input = scope.stdin_text.as_deref()?;
            let words: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
            crate::decoders::decoded(program, &words, input)
        }
        _ => None,
    }
}

/// `printf FORMAT ARGS…` for a format whose only conversions are `%s` (and
/// `%%`): each `%s` takes the next argument, the format repeating while
/// arguments remain, as printf does. `None` for any other conversion.
fn format_strings(fmt: &str, args: &[Word]) -> Option<String> {
    let fmt = words::decode_ansi_c(fmt);
    let conversions = fmt.matches("%s").count();
    if fmt.replace("%s", "").replace("%%", "").contains('%') || conversions == 0 {
        return None;
    }
    let mut out = String::new();
    let mut next = args.iter().map(|w| w.text.as_str());
    let mut first = true;
    while first || next.len() > 0 {
        first = false;
        let mut pieces = fmt.split("%s");
        out.push_str(&pieces.next().unwrap_or("").replace("%%", "%"));
        for piece in pieces {
            out.push_str(next.next().unwrap_or(""));
            out.push_str(&piece.replace("%%", "%"));
        }
    }
    Some(out)
}
