//! URL specifiers for fetch rules: `domain:docs.rs` (that host and its
//! subdomains), `domain:*.docs.rs` (subdomains only), `domain:*` (any URL,
//! even one that does not parse), or a URL glob such as `https://docs.rs/**`.
//!
//! Hosts are parsed in [`crate::url`], without a URL crate, and in two
//! strengths:
//!
//! * **strict** (allow rules): the URL must be plain — an `http`/`https`
//!   scheme followed by `//` (or no scheme at all), no userinfo (`user@`), no
//!   backslash, blank or control character, no percent-encoding or non-ASCII
//!   in the host. Anything else does not match, so parser differentials
//!   between toolgate and the fetching tool cannot turn an allow into a hole.
//! * **broad** (deny and ask rules): the host is worked out the way a WHATWG
//!   URL parser (browsers, Node's `fetch`) would *and* the way a classic
//!   parser (curl) would, and the rule matches if either host matches.
//!   Percent-encoding, full-width characters and numeric IPv4 forms
//!   (`2130706433`, `0x7f.1`) are normalized first.
//!
//! Hosts compare case-insensitively, without a trailing dot.

use super::path::compile;
use crate::url::{any_candidate, parse_ipv4, parse_strict};
use globset::GlobSet;

/// A compiled fetch specifier (not `*`).
#[derive(Debug, Clone)]
pub(crate) enum UrlSpec {
    /// `domain:…`
    Domain(DomainPattern),
    /// A URL glob: case sensitive for allow, folded for deny.
    Glob { exact: GlobSet, folded: GlobSet },
}

/// The host part of a `domain:` specifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DomainPattern {
    /// `domain:*`: every URL, parsable or not.
    Any,
    /// `domain:docs.rs`: the host and its subdomains.
    WithSubdomains(String),
    /// `domain:*.docs.rs`: subdomains only.
    SubdomainsOnly(String),
    /// `domain:127.0.0.1` or `domain:[::1]`: that address only.
    Address(String),
}

impl UrlSpec {
    /// Parses a fetch specifier (not `*`). Errors are sentence tails.
    pub(crate) fn parse(spec: &str) -> Result<UrlSpec, String> {
        if let Some(d) = spec.strip_prefix("domain:") {
            return DomainPattern::parse(d.trim()).map(UrlSpec::Domain);
        }
        if !spec.contains("://") && !spec.starts_with("//") {
            return Err(format!(
                "has a web_fetch specifier {spec:?} that is neither domain:HOST nor a URL glob — \
                 write e.g. web_fetch(domain:docs.rs) or web_fetch(https://docs.rs/**)"
            ));
        }
        let mut globs = vec![spec];
        if let Some(d) = spec.strip_suffix("/**") {
            globs.push(d);
        }
        Ok(UrlSpec::Glob {
            exact: compile(&globs, false, spec)?,
            folded: compile(&globs, true, spec)?,
        })
    }

    /// Allow-side match.
    pub(crate) fn matches_strict(&self, url: &str) -> bool {
        match self {
            UrlSpec::Domain(DomainPattern::Any) => true,
            UrlSpec::Domain(d) => parse_strict(url).is_some_and(|p| d.matches_host(&p.host)),
            UrlSpec::Glob { exact, .. } => {
                parse_strict(url).is_some_and(|p| exact.is_match(p.canonical()))
            }
        }
    }

    /// Deny-side match.
    pub(crate) fn matches_broad(&self, url: &str) -> bool {
        match self {
            UrlSpec::Domain(DomainPattern::Any) => true,
            UrlSpec::Domain(d) => any_candidate(url, |p| d.matches_host(&p.host)),
            UrlSpec::Glob { folded, .. } => {
                folded.is_match(url.trim())
                    || any_candidate(url, |p| folded.is_match(p.canonical()))
            }
        }
    }
}

impl DomainPattern {
    fn parse(d: &str) -> Result<DomainPattern, String> {
        const HINT: &str = "domain: takes a bare host name such as docs.rs or *.docs.rs \
                            (no scheme, port or path)";
        if d == "*" {
            return Ok(DomainPattern::Any);
        }
        if let Some(v6) = d.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            if !v6.is_empty()
                && v6
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
            {
                return Ok(DomainPattern::Address(v6.to_ascii_lowercase()));
            }
            return Err(format!(
                "has an invalid IPv6 address in domain:{d} — {HINT}"
            ));
        }
        let (subs_only, name) = match d.strip_prefix("*.") {
            Some(n) => (true, n),
            None => (false, d),
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        let valid = !name.is_empty()
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            });
        if !valid {
            return Err(format!("has an invalid domain {d:?} — {HINT}"));
        }
        if let Some(ip) = parse_ipv4(&name) {
            if subs_only {
                return Err(format!(
                    "puts '*.' before an IP address in domain:{d} — {HINT}"
                ));
            }
            return Ok(DomainPattern::Address(ip));
        }
        Ok(if subs_only {
            DomainPattern::SubdomainsOnly(name)
        } else {
            DomainPattern::WithSubdomains(name)
        })
    }

    /// Whether a normalized host (lowercase, no trailing dot, IPv6 without
    /// brackets, IPv4 dotted) is covered.
    fn matches_host(&self, host: &str) -> bool {
        match self {
            DomainPattern::Any => true,
            DomainPattern::Address(a) => host == a,
            DomainPattern::WithSubdomains(d) => host == d || is_subdomain(host, d),
            DomainPattern::SubdomainsOnly(d) => is_subdomain(host, d),
        }
    }
}

/// True when `host` is a proper subdomain of `domain` (`api.docs.rs` of `docs.rs`).
fn is_subdomain(host: &str, domain: &str) -> bool {
    host.len() > domain.len()
        && host.ends_with(domain)
        && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> UrlSpec {
        UrlSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn domain_table() {
        // (spec, url, strict, broad)
        let cases: &[(&str, &str, bool, bool)] = &[
            ("domain:docs.rs", "https://docs.rs/x", true, true),
            ("domain:docs.rs", "https://docs.rs", true, true),
            ("domain:docs.rs", "https://api.docs.rs/v1", true, true),
            ("domain:docs.rs", "HTTPS://DOCS.RS/x", true, true),
            ("domain:docs.rs", "https://docs.rs./x", true, true),
            ("domain:docs.rs", "https://docs.rs:443/x", true, true),
            ("domain:docs.rs", "docs.rs/x", true, true),
            ("domain:docs.rs", "docs.rs:8443/x", false, true),
            ("domain:localhost", "localhost:8080", false, true),
            ("domain:docs.rs", "https://evildocs.rs/", false, false),
            ("domain:docs.rs", "https://docs.rs.evil.com/", false, false),
            ("domain:docs.rs", "https://evil.com/docs.rs", false, false),
            ("domain:docs.rs", "https://evil.com?docs.rs", false, false),
            ("domain:docs.rs", "https://evil.com#@docs.rs", false, false),
            // Userinfo: the host is after '@'.
            ("domain:docs.rs", "https://docs.rs@evil.com/", false, false),
            ("domain:evil.com", "https://docs.rs@evil.com/", false, true),
            ("domain:docs.rs", "https://evil.com@docs.rs/", false, true),
            // Backslash: WHATWG ends the host there, curl does not.
            ("domain:docs.rs", "https://docs.rs\\@evil.com/", false, true),
            (
                "domain:evil.com",
                "https://docs.rs\\@evil.com/",
                false,
                true,
            ),
            // Scheme oddities WHATWG accepts.
            ("domain:evil.com", "https:evil.com/x", false, true),
            ("domain:evil.com", "https:\\\\evil.com/x", false, true),
            ("domain:evil.com", "ftp://evil.com/x", false, true),
            // Encodings.
            ("domain:evil.com", "https://%65vil.com/", false, true),
            ("domain:evil.com", "https://ｅｖｉｌ。com/", false, true),
            ("domain:evil.com", "https://ev\til.com/", false, true),
            // IP addresses in any notation.
            (
                "domain:169.254.169.254",
                "http://169.254.169.254/latest",
                true,
                true,
            ),
            (
                "domain:169.254.169.254",
                "http://2852039166/latest",
                true,
                true,
            ),
            ("domain:169.254.169.254", "http://0xA9FEA9FE/", true, true),
            (
                "domain:169.254.169.254",
                "http://0251.0376.0251.0376/",
                true,
                true,
            ),
            ("domain:127.0.0.1", "http://127.1/", true, true),
            ("domain:[::1]", "http://[::1]:8080/", true, true),
            ("domain:[::1]", "http://[::2]/", false, false),
            // Subdomains only.
            ("domain:*.docs.rs", "https://api.docs.rs/", true, true),
            ("domain:*.docs.rs", "https://docs.rs/", false, false),
            // Anything, even garbage (deny side).
            ("domain:*", "not a url", true, true),
            ("domain:docs.rs", "not a url", false, false),
            ("domain:docs.rs", "", false, false),
            ("domain:docs.rs", "javascript:alert(1)", false, false),
        ];
        for (s, url, strict, broad) in cases {
            let p = spec(s);
            assert_eq!(p.matches_strict(url), *strict, "strict {s} vs {url:?}");
            assert_eq!(p.matches_broad(url), *broad, "broad {s} vs {url:?}");
        }
    }

    #[test]
    fn glob_table() {
        let cases: &[(&str, &str, bool, bool)] = &[
            (
                "https://docs.rs/**",
                "https://docs.rs/serde/latest",
                true,
                true,
            ),
            ("https://docs.rs/**", "https://docs.rs", true, true),
            ("https://docs.rs/**", "https://DOCS.rs/x", true, true),
            (
                "https://docs.rs/**",
                "https://docs.rs.evil.com/x",
                false,
                false,
            ),
            (
                "https://docs.rs/**",
                "https://docs.rs@evil.com/x",
                false,
                false,
            ),
            ("https://docs.rs/*", "https://docs.rs/a/b", false, false),
            ("https://docs.rs/*", "https://docs.rs/a", true, true),
            ("https://docs.rs/*", "HTTPS://docs.rs/A", true, true),
            ("https://evil.com/**", "https:evil.com/x", false, true),
            ("https://evil.com/**", "https://EVIL.com/X", true, true),
            ("https://evil.com/x", "https://evil.com/X", false, true),
        ];
        for (s, url, strict, broad) in cases {
            let p = spec(s);
            assert_eq!(p.matches_strict(url), *strict, "strict {s} vs {url:?}");
            assert_eq!(p.matches_broad(url), *broad, "broad {s} vs {url:?}");
        }
    }

    #[test]
    fn parse_errors() {
        for bad in [
            "domain:",
            "domain:https://docs.rs",
            "domain:docs.rs:443",
            "domain:docs.rs/x",
            "domain:a..b",
            "domain:*.1.2.3.4",
            "domain:[zz]",
            "docs.rs",
            "https://docs.rs/[",
        ] {
            assert!(UrlSpec::parse(bad).is_err(), "{bad:?}");
        }
    }
}
