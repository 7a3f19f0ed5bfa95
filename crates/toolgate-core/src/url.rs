//! Hosts of a URL as the fetching tools would read them, without a URL
//! crate: a strict parse (plain `http`/`https` URLs only, for allow rules)
//! and the two lenient ones a WHATWG parser (browsers, Node's `fetch`) and a
//! classic parser (curl) apply (for deny rules and the catalogue). A leaf:
//! it uses nothing else of the crate, so the policy and the catalogue can
//! both read URLs without importing each other.

use std::borrow::Cow;

/// A URL taken apart; borrows from the URL text where it can.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedUrl<'a> {
    /// Lowercase scheme, if any.
    pub(crate) scheme: Option<Cow<'a, str>>,
    /// Normalized host.
    pub(crate) host: Cow<'a, str>,
    /// Port digits, if any.
    pub(crate) port: Option<&'a str>,
    /// Path, query and fragment as written.
    pub(crate) rest: &'a str,
}

impl ParsedUrl<'_> {
    /// `scheme://host[:port]rest` (for IPv6, the host in brackets).
    pub(crate) fn canonical(&self) -> String {
        let mut s = String::with_capacity(self.host.len() + self.rest.len() + 16);
        if let Some(sc) = &self.scheme {
            s.push_str(sc);
            s.push(':');
        }
        s.push_str("//");
        if self.host.contains(':') {
            s.push('[');
            s.push_str(&self.host);
            s.push(']');
        } else {
            s.push_str(&self.host);
        }
        if let Some(p) = self.port {
            s.push(':');
            s.push_str(p);
        }
        s.push_str(self.rest);
        s
    }
}

fn split_scheme(s: &str) -> Option<(&str, &str)> {
    let i = s.find(':')?;
    let scheme = &s[..i];
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    (first_ok && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then(|| (scheme, &s[i + 1..]))
}

fn lower(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// The strict parse used for allow rules; `None` for anything unusual.
pub(crate) fn parse_strict(url: &str) -> Option<ParsedUrl<'_>> {
    let url = url.trim();
    if url.is_empty()
        || url
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return None;
    }
    let (scheme, after) = match split_scheme(url) {
        Some((sc, rest)) => {
            if !sc.eq_ignore_ascii_case("http") && !sc.eq_ignore_ascii_case("https") {
                return None;
            }
            (Some(lower(sc)), rest.strip_prefix("//")?)
        }
        None => (None, url.strip_prefix("//").unwrap_or(url)),
    };
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    if authority.contains('@') || authority.contains('%') {
        return None;
    }
    let (host, port) = split_host_port(authority)?;
    if !host.is_ascii() {
        return None;
    }
    let host = normalize_host(Cow::Borrowed(host.strip_suffix('.').unwrap_or(host)))?;
    Some(ParsedUrl {
        scheme,
        host,
        port,
        rest,
    })
}

/// True when `f` holds for the URL as a lenient WHATWG parser (browsers,
/// Node's `fetch`) or a classic parser (curl) would take it apart.
pub(crate) fn any_candidate(url: &str, mut f: impl FnMut(&ParsedUrl<'_>) -> bool) -> bool {
    // WHATWG removes tabs and newlines anywhere and trims C0 controls and spaces.
    let cleaned: Cow<'_, str> = if url.contains(['\t', '\n', '\r']) {
        Cow::Owned(
            url.chars()
                .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
                .collect(),
        )
    } else {
        Cow::Borrowed(url)
    };
    let cleaned = cleaned.trim_matches(|c: char| c <= ' ');
    let whatwg = parse_lenient(cleaned, true);
    if whatwg.as_ref().is_some_and(&mut f) {
        return true;
    }
    let classic = parse_lenient(cleaned, false);
    classic != whatwg && classic.as_ref().is_some_and(f)
}

/// Every host the URL could reach under either parser (at most two,
/// without duplicates); empty when neither can take it apart.
pub(crate) fn hosts(url: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(2);
    any_candidate(url, |p| {
        if !out.iter().any(|h| *h == p.host) {
            out.push(p.host.to_string());
        }
        false
    });
    out
}

const SPECIAL: [&str; 6] = ["http", "https", "ws", "wss", "ftp", "file"];

fn parse_lenient(url: &str, whatwg: bool) -> Option<ParsedUrl<'_>> {
    // `docs.rs:8443/x` and `localhost:8080` are a host and port, not a scheme.
    let scheme_part = split_scheme(url)
        .filter(|(sc, rest)| !(sc.contains('.') || rest.starts_with(|c: char| c.is_ascii_digit())));
    let (scheme, after) = match scheme_part {
        Some((sc, rest)) => {
            let sc = lower(sc);
            let special = SPECIAL.contains(&sc.as_ref());
            let after = if whatwg && special {
                // `https:/x`, `https:\\x` and `https:x` all mean host x.
                rest.trim_start_matches(['/', '\\'])
            } else {
                rest.strip_prefix("//")?
            };
            (Some(sc), after)
        }
        None => (None, url.strip_prefix("//").unwrap_or(url)),
    };
    let special = scheme.as_deref().is_none_or(|s| SPECIAL.contains(&s));
    let end = if whatwg && special {
        after.find(['/', '\\', '?', '#'])
    } else {
        after.find(['/', '?', '#'])
    }
    .unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    let hostport = match authority.rfind('@') {
        Some(i) => &authority[i + 1..],
        None => authority,
    };
    let (host, port) = split_host_port(hostport)?;
    let host = fold_fullwidth(percent_decode(host)?);
    let host = match host {
        Cow::Borrowed(h) => Cow::Borrowed(h.trim_end_matches('.')),
        Cow::Owned(h) => Cow::Owned(h.trim_end_matches('.').to_string()),
    };
    let host = normalize_host(host)?;
    Some(ParsedUrl {
        scheme,
        host,
        port,
        rest,
    })
}

/// Splits `host[:port]` / `[v6][:port]`; the port must be digits.
fn split_host_port(hp: &str) -> Option<(&str, Option<&str>)> {
    let (host, port) = if let Some(r) = hp.strip_prefix('[') {
        let close = r.find(']')?;
        let host = &r[..close];
        let after = &r[close + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return None,
        };
        (host, port)
    } else {
        match hp.rfind(':') {
            Some(i) => (&hp[..i], Some(&hp[i + 1..])),
            None => (hp, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        Some("") | None => None,
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => Some(p),
        Some(_) => return None,
    };
    Some((host, port))
}

/// Lowercases and validates a host; numeric IPv4 forms become dotted quads.
fn normalize_host(host: Cow<'_, str>) -> Option<Cow<'_, str>> {
    let lower = match host {
        Cow::Borrowed(h) => lower(h),
        Cow::Owned(h) => Cow::Owned(h.to_ascii_lowercase()),
    };
    if lower.contains(':') {
        // IPv6 (brackets already removed).
        return lower
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
            .then_some(lower);
    }
    if lower.is_empty()
        || !lower
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_' || !c.is_ascii())
    {
        return None;
    }
    // Only a host whose last label starts with a digit can be an address.
    let last = lower.rsplit('.').next().unwrap_or("");
    if last.starts_with(|c: char| c.is_ascii_digit())
        && let Some(ip) = parse_ipv4(&lower)
    {
        return Some(Cow::Owned(ip));
    }
    Some(lower)
}

/// WHATWG's IPv4 parser: one to four parts, each decimal, `0x` hex or
/// leading-zero octal; the last part fills the remaining bytes.
pub(crate) fn parse_ipv4(host: &str) -> Option<String> {
    let parts: Vec<&str> = host.split('.').collect();
    let last = parts.last()?;
    if last.is_empty() || parts.len() > 4 {
        return None;
    }
    let num = |p: &str| -> Option<u64> {
        if p.is_empty() {
            return None;
        }
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X"))
        {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (p, 10)
        };
        if digits.is_empty() {
            return Some(0);
        }
        if digits.len() > 12 {
            return None;
        }
        u64::from_str_radix(digits, radix).ok()
    };
    let nums: Vec<u64> = parts.iter().map(|p| num(p)).collect::<Option<_>>()?;
    let (init, tail) = nums.split_at(nums.len() - 1);
    if init.iter().any(|&n| n > 255) {
        return None;
    }
    let tail = tail[0];
    if tail >= 1u64 << (8 * (5 - nums.len())) {
        return None;
    }
    let mut value = tail;
    for (i, &n) in init.iter().enumerate() {
        value += n << (8 * (3 - i));
    }
    Some(format!(
        "{}.{}.{}.{}",
        (value >> 24) & 255,
        (value >> 16) & 255,
        (value >> 8) & 255,
        value & 255
    ))
}

pub(crate) fn percent_decode(s: &str) -> Option<Cow<'_, str>> {
    if !s.contains('%') {
        return Some(Cow::Borrowed(s));
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

/// Maps full-width ASCII and ideographic full stops to ASCII, as IDNA
/// mapping would (`ｄｏｃｓ。rs` → `docs.rs`).
fn fold_fullwidth(s: Cow<'_, str>) -> Cow<'_, str> {
    if s.is_ascii() {
        return s;
    }
    Cow::Owned(
        s.chars()
            .map(|c| match c {
                '\u{3002}' | '\u{FF0E}' | '\u{FF61}' => '.',
                '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
                c => c,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_lists_what_each_parser_sees() {
        assert_eq!(hosts("https://Docs.rs/x"), ["docs.rs"]);
        assert_eq!(hosts("https://a.com\\@b.com/"), ["a.com", "b.com"]);
        assert!(hosts("not a url").is_empty());
    }

    #[test]
    fn ipv4_forms() {
        assert_eq!(parse_ipv4("127.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(parse_ipv4("2130706433").as_deref(), Some("127.0.0.1"));
        assert_eq!(parse_ipv4("0x7f.0.0.1").as_deref(), Some("127.0.0.1"));
        assert_eq!(parse_ipv4("256.0.0.1"), None);
        assert_eq!(parse_ipv4("1.2.3.4.5"), None);
        assert_eq!(parse_ipv4("docs.rs"), None);
        assert_eq!(parse_ipv4("4294967296"), None);
        assert_eq!(parse_ipv4("08"), None);
    }
}
