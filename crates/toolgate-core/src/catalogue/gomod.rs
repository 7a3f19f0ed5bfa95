//! Go modules fetched and built by `go install`, `go get` and
//! `go run module@version`. Go has no registry of its own: a module path
//! names its owner's repository, so a module of an owner nobody vetted is
//! code straight from a stranger's repository, and a path one slip away
//! from a well-known module (`github.com/stretchr/testifyy`) is a possible
//! typosquat. The well-known modules are a list kept by hand
//! (`packs/popular/go.txt`); a line ending in `/` trusts an organisation.

use super::Finding;
use super::squat::{one_slip, skeleton};
use crate::model::{RiskClass, Verdict};
use crate::shell::SimpleCommand;
use std::sync::OnceLock;

/// The rule id a module of an unknown owner is recorded under.
const UNKNOWN_RULE: &str = "supply.go-module-unknown-owner";

/// The rule id a likely typosquat is recorded under (shared with the other
/// registries).
const SQUAT_RULE: &str = "supply.typosquat";

/// `go` build flags that take a value (`-o bin`, `-tags x`).
const VALUE_FLAGS: &[&str] = &[
    "-o",
    "-C",
    "-p",
    "-tags",
    "-ldflags",
    "-gcflags",
    "-asmflags",
    "-gccgoflags",
    "-mod",
    "-modfile",
    "-overlay",
    "-pgo",
    "-pkgdir",
    "-toolexec",
    "-exec",
    "-buildmode",
    "-compiler",
    "-covermode",
    "-coverpkg",
];

/// The well-known modules: exact module paths, and prefixes (ending `/`).
fn known() -> &'static [String] {
    static LIST: OnceLock<Vec<String>> = OnceLock::new();
    LIST.get_or_init(|| {
        include_str!("../../packs/popular/go.txt")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_ascii_lowercase)
            .collect()
    })
}

/// The module paths a `go` command fetches from their owners: `None` for
/// any other command.
fn fetched(cmd: &SimpleCommand) -> Option<Vec<&str>> {
    if cmd.program != "go" {
        return None;
    }
    let args = cmd.args();
    let sub = args.iter().position(|w| !w.text.starts_with('-'))?;
    let verb = args[sub].text.as_str();
    if !matches!(verb, "install" | "get" | "run") {
        return None;
    }
    let mut out = Vec::new();
    let mut skip_value = false;
    for w in &args[sub + 1..] {
        if skip_value {
            skip_value = false;
            continue;
        }
        let t = w.text.as_str();
        if t.starts_with('-') {
            // Go reads `-flag` and `--flag` alike.
            let single = format!("-{}", t.trim_start_matches('-'));
            skip_value = !single.contains('=') && VALUE_FLAGS.contains(&single.as_str());
            continue;
        }
        if verb == "run" {
            // `go run pkg@version [args]`: only a versioned first operand is
            // fetched; anything after it is the program's own arguments.
            if t.contains('@') {
                out.push(t);
            }
            break;
        }
        out.push(t);
    }
    Some(out)
}

/// A module path that comes from a remote owner, without its version or
/// `/...` wildcard; `None` for local packages and the standard library.
fn remote_path(operand: &str) -> Option<String> {
    let (path, version) = operand.split_once('@').unwrap_or((operand, ""));
    if version == "none" || path.starts_with(['.', '/', '~']) || path.contains('\\') {
        return None;
    }
    let path = path.trim_end_matches("/...").trim_end_matches('/');
    let host = path.split('/').next()?;
    // `fmt`, `net/http`, `std`, `all`: no dot in the first element.
    host.contains('.').then(|| path.to_ascii_lowercase())
}

/// `host/owner/name` of a path (`golang.org/x/tools` for its packages).
fn repo_of(path: &str) -> String {
    path.split('/').take(3).collect::<Vec<_>>().join("/")
}

fn is_known(path: &str) -> bool {
    known().iter().any(|k| match k.strip_suffix('/') {
        Some(prefix) => path.starts_with(k.as_str()) || path == prefix,
        None => {
            path == k
                || path
                    .strip_prefix(k.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        }
    })
}

/// The well-known module or organisation `path` is one slip away from.
fn slip_of(path: &str) -> Option<&'static str> {
    let repo = repo_of(path);
    let owner: String = path.split('/').take(2).collect::<Vec<_>>().join("/");
    known().iter().map(String::as_str).find(|k| {
        let (mine, theirs) = match k.strip_suffix('/') {
            Some(org) if org.matches('/').count() == 1 => (owner.as_str(), org.to_string()),
            Some(_) => return false,
            None => (repo.as_str(), repo_of(k)),
        };
        mine != theirs && (one_slip(mine, &theirs) || skeleton(mine) == skeleton(&theirs))
    })
}

/// The finding for a `go` command fetching a module of an unknown owner or
/// a likely typosquat, if the command is one.
pub(super) fn check(cmd: &SimpleCommand) -> Option<Finding> {
    let operands = fetched(cmd)?;
    operands.into_iter().filter_map(remote_path).find_map(|path| {
        if is_known(&path) {
            return None;
        }
        let (rule, reason) = match slip_of(&path) {
            Some(k) => (
                SQUAT_RULE,
                format!(
                    "fetches the Go module `{path}`, one slip away from the well-known `{}`: a possible typosquat",
                    k.trim_end_matches('/')
                ),
            ),
            None => (
                UNKNOWN_RULE,
                format!(
                    "fetches and builds the Go module `{path}` straight from its owner's repository, which is not on the list of well-known modules"
                ),
            ),
        };
        Some(Finding {
            rule: rule.to_string(),
            class: RiskClass::R3,
            verdict: Verdict::Escalate,
            reason,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(command: &str) -> Option<Finding> {
        crate::catalogue::tests::first_finding(check, command)
    }

    #[test]
    fn well_known_and_local_modules_run() {
        for c in [
            "go install golang.org/x/tools/gopls@latest",
            "go install github.com/golangci/golangci-lint/cmd/golangci-lint@v1.61.0",
            "go get github.com/stretchr/testify",
            "go get -u ./...",
            "go get github.com/gin-gonic/gin@v1.10.0",
            "go install .",
            "go install ./cmd/server",
            "go run main.go",
            "go run . --port 8080",
            "go run -tags integration ./cmd/tool",
            "go get example.com/unused@none",
            "go build ./...",
            "go get google.golang.org/grpc",
            "go install -v honnef.co/go/tools/cmd/staticcheck@latest",
        ] {
            assert!(judged(c).is_none(), "{c}: {:?}", judged(c));
        }
    }

    #[test]
    fn unknown_owners_and_slips_are_held() {
        for (c, rule) in [
            ("go install github.com/unknown-dev/x@latest", UNKNOWN_RULE),
            ("go run github.com/someone/tool@v0.1.0 --init", UNKNOWN_RULE),
            ("go get github.com/stretchr/testifyy", SQUAT_RULE),
            ("go get github.com/stretchrr/testify", SQUAT_RULE),
            ("go install github.com/goog1e/uuid@latest", SQUAT_RULE),
            (
                "go get -u github.com/sirupsen/logrus github.com/x/evil",
                UNKNOWN_RULE,
            ),
            (
                "go install -o /tmp/x gitlab.com/anyone/tool@latest",
                UNKNOWN_RULE,
            ),
        ] {
            let f = judged(c).unwrap_or_else(|| panic!("{c}: not held"));
            assert_eq!(f.rule, rule, "{c}: {}", f.reason);
        }
    }
}
