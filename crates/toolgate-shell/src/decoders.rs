//! What the common decoders print when their input is known: `xxd -r -p`
//! and `basenc --base16 -d` of hex, `rev`, `tr` between two literal sets
//! (rot13 and its kin), `base32 -d`, `openssl base64 -d`. A command that
//! pipes such output into a shell is then judged as the text it runs.

use base64::Engine as _;

/// The output of `program args…` given `input` on stdin, when it is one of
/// the decoders and its result is known.
pub(crate) fn decoded(program: &str, args: &[&str], input: &str) -> Option<String> {
    let flags: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| a.starts_with('-'))
        .collect();
    let has = |f: &str| {
        flags
            .iter()
            .any(|a| *a == f || (a.len() > 2 && !a.starts_with("--") && a[1..].contains(&f[1..])))
    };
    match program {
        "xxd" if has("-r") && has("-p") => from_hex(input),
        "basenc" if args.contains(&"--base16") && (has("-d") || args.contains(&"--decode")) => {
            from_hex(input)
        }
        "rev" if args.is_empty() => Some(
            input
                .lines()
                .map(|l| l.chars().rev().collect::<String>())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        "tr" if args.len() == 2 && flags.is_empty() => translate(input, args[0], args[1]),
        "base32" if has("-d") || args.contains(&"--decode") => from_base32(input),
        "openssl"
            if args.first().is_some_and(|a| *a == "base64" || *a == "enc")
                && args.contains(&"-d")
                && (args[0] == "base64" || args.contains(&"-base64") || args.contains(&"-a")) =>
        {
            decode_base64(input)
        }
        _ => None,
    }
}

pub(crate) fn from_hex(text: &str) -> Option<String> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    let bytes = digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

fn from_base32(text: &str) -> Option<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut bits: u64 = 0;
    let mut count = 0;
    let mut out = Vec::new();
    for b in text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
    {
        let v = ALPHABET.iter().position(|a| *a == b.to_ascii_uppercase())? as u64;
        bits = (bits << 5) | v;
        count += 5;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A `tr` set with ranges (`a-z`) expanded; `None` for classes and escapes.
fn expand(set: &str) -> Option<Vec<char>> {
    if set.contains(['[', '\\']) {
        return None;
    }
    let chars: Vec<char> = set.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if i + 2 < chars.len() && chars[i + 1] == '-' && chars[i] <= chars[i + 2] {
            out.extend(chars[i]..=chars[i + 2]);
            i += 3;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    Some(out)
}

pub(crate) fn translate(input: &str, from: &str, to: &str) -> Option<String> {
    let (from, to) = (expand(from)?, expand(to)?);
    let last = *to.last()?;
    Some(
        input
            .chars()
            .map(|c| match from.iter().position(|f| *f == c) {
                Some(i) => to.get(i).copied().unwrap_or(last),
                None => c,
            })
            .collect(),
    )
}

/// Decodes base64 text (standard or URL alphabet, padding optional).
pub(crate) fn decode_base64(text: &str) -> Option<String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let trimmed = compact.trim_end_matches('=');
    let engines = [
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    engines
        .iter()
        .find_map(|e| e.decode(trimmed).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
}

#[cfg(test)]
mod tests {
    use super::decoded;

    #[test]
    fn each_decoder_gives_back_the_text() {
        assert_eq!(
            decoded("xxd", &["-r", "-p"], "726d202d7266207e").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(decoded("xxd", &["-rp"], "726d").as_deref(), Some("rm"));
        assert_eq!(decoded("rev", &[], "~ fr- mr").as_deref(), Some("rm -rf ~"));
        assert_eq!(
            decoded("tr", &["a-z", "n-za-m"], "ez -es ~").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            decoded("tr", &["A-Za-z", "N-ZA-Mn-za-m"], "ez -es ~").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            decoded("base32", &["-d"], "OJWSALLSMYQH4===").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            decoded("openssl", &["base64", "-d"], "cm0gLXJmIH4=").as_deref(),
            Some("rm -rf ~")
        );
    }

    #[test]
    fn anything_else_is_unknown() {
        assert_eq!(decoded("xxd", &["-p"], "726d"), None);
        assert_eq!(decoded("xxd", &["-r", "-p"], "7g6d"), None);
        assert_eq!(decoded("tr", &["-d", "x"], "abc"), None);
        assert_eq!(decoded("tr", &["[:lower:]", "[:upper:]"], "abc"), None);
        assert_eq!(decoded("sort", &[], "b\na"), None);
    }
}
