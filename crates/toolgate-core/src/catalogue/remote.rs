//! Operands that name a file on another machine: `user@host:path` to scp or
//! rsync, a URL to curl. They are judged as remote destinations (the
//! network rules see them), never resolved against the working directory
//! as if they were local paths.
//!
//! Only a program that itself reads an operand this way gets this reading:
//! to `cp`, `host:/etc/x` is a local path under a directory named `host:`,
//! and reading it as remote there would hide a local write. A "remote" that
//! is this machine (`localhost:/etc/x`, `file:///etc/x`) is the local path
//! it names.

/// Programs that read `[user@]host:path` as a file on `host` (a colon
/// before any slash), as scp does.
const HOST_COLON_PATH: &[&str] = &[
    "scp", "rsync", "sftp", "rclone", "pscp", "rcp", "unison", "sshfs",
];

/// Programs whose operands may be URLs (`scheme://…`).
const URL_OPERANDS: &[&str] = &[
    "curl", "wget", "http", "https", "xh", "aria2c", "git", "aws", "gsutil", "s3cmd", "rclone",
    "rsync", "scp", "sftp",
];

/// How a program reads one of its operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Operand {
    /// A path on this machine, as written.
    Local,
    /// Written as remote but on this machine (`file:///etc/x`,
    /// `localhost:.bashrc`): the path it names, absolute or under `~`.
    ThisMachine(String),
    /// A file or resource on another machine.
    Remote,
}

/// How `program` reads `text`, a literal operand.
pub(super) fn classify(program: &str, text: &str) -> Operand {
    if URL_OPERANDS.contains(&program)
        && let Some((scheme, rest)) = url_scheme(text)
    {
        if !scheme.eq_ignore_ascii_case("file") {
            return Operand::Remote;
        }
        // file:///etc/x and file://localhost/etc/x name /etc/x; any other
        // host is not this machine's file.
        let path = rest.strip_prefix("localhost").unwrap_or(rest);
        return if path.starts_with('/') {
            Operand::ThisMachine(path.to_string())
        } else {
            Operand::Remote
        };
    }
    if HOST_COLON_PATH.contains(&program)
        && let Some((host, path)) = host_and_path(text)
    {
        if !is_this_machine(host) {
            return Operand::Remote;
        }
        // A relative path on the far side is under the login's home.
        return Operand::ThisMachine(if path.starts_with('/') || path.starts_with('~') {
            path.to_string()
        } else if path.is_empty() {
            "~".to_string()
        } else {
            format!("~/{path}")
        });
    }
    Operand::Local
}

/// Whether a host names this machine (the loopback interface). An address
/// is read as the network stack reads it (`127.1`, `0x7f000001`); a name
/// that merely starts with `127.` is a name.
fn is_this_machine(host: &str) -> bool {
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.eq_ignore_ascii_case("localhost.localdomain")
        || host == "::1"
        || crate::url::parse_ipv4(host).is_some_and(|ip| ip.starts_with("127.") || ip == "0.0.0.0")
}

/// HTTP methods, as httpie and xh take them before the URL.
const METHODS: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PURGE", "TRACE", "CONNECT",
];

/// Whether an HTTP client's operand names another machine: a URL or a host
/// that is not the loopback. A method word (`DELETE`) and an item
/// (`name=value`, `a==b`, `h:=1`) are not hosts; what no parser can take
/// apart counts as another machine. Of an operand known only at run time
/// (`dynamic`), only a written-out `scheme://host/` before the first
/// expansion says where it goes; otherwise it may go anywhere.
pub(crate) fn reaches_another_machine(text: &str, dynamic: bool) -> bool {
    if dynamic {
        let literal = &text[..text.find(['$', '`']).unwrap_or(text.len())];
        let host_written = literal
            .split_once("://")
            .is_some_and(|(_, rest)| rest.contains(['/', '?', '#']));
        return !host_written || reaches_another_machine(literal, false);
    }
    if text.is_empty()
        || text.starts_with(['-', '@'])
        || METHODS.iter().any(|m| text.eq_ignore_ascii_case(m))
        || (!text.contains("://") && text.split('/').next().is_some_and(|h| h.contains('=')))
    {
        return false;
    }
    let hosts = crate::url::hosts(text);
    hosts.is_empty() || hosts.iter().any(|h| !is_this_machine(h))
}

/// `scheme://rest` → (scheme, rest).
fn url_scheme(text: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some((scheme, rest))
}

/// `[user@]host:path` as scp reads it: a colon with a non-empty host
/// before it and no slash before the colon (a `./` or `/` prefix is how a
/// local name with a colon is written). A bracketed IPv6 host keeps its
/// colons; rsync's `host::module` is a host too.
fn host_and_path(text: &str) -> Option<(&str, &str)> {
    let host_end = match text.find('[') {
        Some(open) if !text[..open].contains([':', '/']) => open + text[open..].find(']')? + 1,
        _ => text.find(':')?,
    };
    let (host, rest) = text.split_at(host_end);
    let path = rest.strip_prefix(':')?;
    (!host.is_empty() && !host.contains('/')).then_some((host, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_clients_operand_reaches_another_machine_unless_it_is_the_loopback() {
        for remote in [
            "https://api.example.com/x",
            "evilhost",
            "http://evilhost:8080/x",
            "10.0.0.5:9200/idx",
            "http://127.evil.example/",
            "ftp://files.example.org/a",
        ] {
            assert!(reaches_another_machine(remote, false), "{remote}");
        }
        for local in [
            "http://localhost:8080/api/items/3",
            "localhost:9200/test-index",
            "http://127.0.0.1:5000/api",
            "http://127.1/",
            "http://[::1]:3000/",
            "DELETE",
            "name=value",
            "-XDELETE",
        ] {
            assert!(!reaches_another_machine(local, false), "{local}");
        }
        assert!(!reaches_another_machine(
            "http://localhost:3000/?t=$TOKEN",
            true
        ));
        assert!(reaches_another_machine(
            "https://c.example.net/?t=$TOKEN",
            true
        ));
        assert!(reaches_another_machine("http://$HOST/x", true));
        assert!(reaches_another_machine("$URL", true));
        assert!(reaches_another_machine(
            "http://localhost$PATH_SUFFIX",
            true
        ));
    }

    #[test]
    fn host_colon_path_is_remote_only_to_programs_that_read_it_so() {
        for (program, text) in [
            ("scp", "user@host:/srv/releases"),
            ("scp", "host:"),
            ("scp", "deploy@[2001:db8::1]:/srv"),
            ("rsync", "deploy@web1:/var/www/app/"),
            ("rsync", "mirror::pub/"),
            ("rclone", "remote:bucket/path"),
            ("sftp", "user@host:/etc/passwd"),
        ] {
            assert_eq!(classify(program, text), Operand::Remote, "{program} {text}");
        }
        for (program, text) in [
            // cp, mv, ln: a colon is part of a local name.
            ("cp", "user@host:/etc/cron.d/x"),
            ("mv", "x:/etc/passwd"),
            ("tee", "host:/etc/passwd"),
            // An explicit local path, as scp's manual says to write one.
            ("scp", "./host:/etc/x"),
            ("scp", "/etc/x"),
            ("scp", "build.tar"),
            ("rsync", ":no-host"),
            ("rsync", "dir/with:colon"),
        ] {
            assert_eq!(classify(program, text), Operand::Local, "{program} {text}");
        }
    }

    #[test]
    fn urls_are_remote_and_file_urls_are_local_paths() {
        assert_eq!(classify("curl", "https://example.com/x"), Operand::Remote);
        assert_eq!(classify("rsync", "rsync://mirror/pub/"), Operand::Remote);
        assert_eq!(classify("aws", "s3://bucket/key"), Operand::Remote);
        assert_eq!(classify("git", "ssh://git@host/repo.git"), Operand::Remote);
        assert_eq!(
            classify("curl", "file:///etc/shadow"),
            Operand::ThisMachine("/etc/shadow".into())
        );
        assert_eq!(
            classify("curl", "FILE://localhost/etc/shadow"),
            Operand::ThisMachine("/etc/shadow".into())
        );
        assert_eq!(classify("curl", "file://otherhost/x"), Operand::Remote);
        // Not a URL-reading program, or not a scheme.
        assert_eq!(classify("cp", "https://x/../../etc/passwd"), Operand::Local);
        assert_eq!(classify("curl", "1http://x"), Operand::Local);
        // git's own host:path form is not read as remote (git add takes
        // local names with colons).
        assert_eq!(classify("git", "host:repo"), Operand::Local);
    }

    #[test]
    fn a_remote_that_is_this_machine_is_the_local_path() {
        for (text, path) in [
            ("localhost:/etc/cron.d/job", "/etc/cron.d/job"),
            ("root@127.0.0.1:/etc/passwd", "/etc/passwd"),
            ("me@[::1]:/etc/x", "/etc/x"),
            ("localhost:.bashrc", "~/.bashrc"),
            ("LOCALHOST:", "~"),
        ] {
            assert_eq!(
                classify("scp", text),
                Operand::ThisMachine(path.into()),
                "{text}"
            );
        }
        assert_eq!(classify("scp", "me@[2001:db8::1]:/x"), Operand::Remote);
        assert_eq!(classify("scp", "[::1"), Operand::Local);
    }
}
