//! Interpreter code with its encoded string literals decoded in place:
//! `shutil.rmtree(base64.b64decode("L2hvbWUvZGV2").decode())` reads as
//! `shutil.rmtree("/home/dev")`, so the code rules see the path it acts on.
//! Only a literal inside a known decoding call (base64, hex, rot13,
//! reversal) is replaced; everything else is left as written.

use crate::decoders::{decode_base64, from_hex, translate};

/// How a wrapped literal is decoded.
#[derive(Clone, Copy)]
enum Decode {
    Base64,
    Hex,
    Rot13,
    Reverse,
}

/// Text right before a literal and right after it (spaces aside; `'`
/// stands for either quote), and the decoding they mean.
const WRAPPERS: &[(&str, &str, Decode)] = &[
    ("base64.b64decode(", ").decode()", Decode::Base64),
    ("base64.b64decode(", ").decode('utf-8')", Decode::Base64),
    ("base64.b64decode(", ").decode('utf8')", Decode::Base64),
    ("b64decode(", ").decode()", Decode::Base64),
    ("base64.standard_b64decode(", ").decode()", Decode::Base64),
    ("bytes.fromhex(", ").decode()", Decode::Hex),
    ("binascii.unhexlify(", ").decode()", Decode::Hex),
    ("codecs.decode(", ",'rot13')", Decode::Rot13),
    ("codecs.decode(", ",'rot_13')", Decode::Rot13),
    ("Buffer.from(", ",'base64').toString()", Decode::Base64),
    (
        "Buffer.from(",
        ",'base64').toString('utf8')",
        Decode::Base64,
    ),
    ("Buffer.from(", ",'hex').toString()", Decode::Hex),
    ("atob(", ")", Decode::Base64),
    ("Base64.decode64(", ")", Decode::Base64),
    ("decode_base64(", ")", Decode::Base64),
    ("", "[::-1]", Decode::Reverse),
    ("", ".split('').reverse().join('')", Decode::Reverse),
    ("", ".reverse", Decode::Reverse),
];

/// The code with every decodable wrapped literal replaced by a
/// double-quoted literal of its decoded text; `None` when there is none.
pub(crate) fn decoded_in_place(code: &str) -> Option<String> {
    if code.len() > 64 * 1024 {
        return None;
    }
    let mut out = String::with_capacity(code.len());
    let mut copied = 0;
    let mut changed = false;
    for (start, end, body) in literals(code) {
        if start < copied {
            continue;
        }
        let before = squeeze(&code[..start]);
        let after = squeeze(&code[end..]);
        for (pre, post, how) in WRAPPERS {
            let pre = pre.replace('\'', "\"");
            let post_dq = post.replace('\'', "\"");
            let post_match = if after.starts_with(&post_dq) {
                Some(post_dq.len())
            } else if after.starts_with(*post) {
                Some(post.len())
            } else {
                None
            };
            let (Some(post_len), true) = (post_match, before.ends_with(&pre)) else {
                continue;
            };
            let Some(text) = decode(*how, &body) else {
                continue;
            };
            // Map the squeezed lengths back onto the code.
            let (Some(from), Some(to)) = (
                unsqueezed_start(&code[..start], pre.len()),
                unsqueezed_end(&code[end..], post_len).map(|n| end + n),
            ) else {
                continue;
            };
            out.push_str(&code[copied..from]);
            out.push('"');
            out.push_str(&text.replace('"', "'"));
            out.push('"');
            copied = to;
            changed = true;
            break;
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&code[copied..]);
    Some(out)
}

fn decode(how: Decode, body: &str) -> Option<String> {
    let text = match how {
        Decode::Base64 => decode_base64(body)?,
        Decode::Hex => from_hex(body)?,
        Decode::Rot13 => translate(body, "A-Za-z", "N-ZA-Mn-za-m")?,
        Decode::Reverse => body.chars().rev().collect(),
    };
    (!text.is_empty() && !text.contains(['\0', '\n'])).then_some(text)
}

/// String literals of the code: (start of the opening quote, end after the
/// closing one, the text inside); only those without escapes.
fn literals(code: &str) -> Vec<(usize, usize, String)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() && out.len() < 256 {
        let q = bytes[i];
        if q != b'"' && q != b'\'' {
            i += 1;
            continue;
        }
        let Some(len) = code[i + 1..].find(q as char) else {
            break;
        };
        let body = &code[i + 1..i + 1 + len];
        if !body.contains('\\') {
            out.push((i, i + len + 2, body.to_string()));
        }
        i += len + 2;
    }
    out
}

/// Text without spaces, for comparing the code around a literal.
fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Where, in `text`, its last `n` non-space characters begin.
fn unsqueezed_start(text: &str, n: usize) -> Option<usize> {
    if n == 0 {
        return Some(text.len());
    }
    let mut seen = 0;
    for (i, c) in text.char_indices().rev() {
        if !c.is_whitespace() {
            seen += 1;
            if seen == n {
                return Some(i);
            }
        }
    }
    None
}

/// How many bytes of `text` its first `n` non-space characters take.
fn unsqueezed_end(text: &str, n: usize) -> Option<usize> {
    if n == 0 {
        return Some(0);
    }
    let mut seen = 0;
    for (i, c) in text.char_indices() {
        if !c.is_whitespace() {
            seen += 1;
            if seen == n {
                return Some(i + c.len_utf8());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::decoded_in_place;

    #[test]
    fn wrapped_literals_are_decoded() {
        for (code, want) in [
            (
                r#"import shutil,base64;shutil.rmtree(base64.b64decode("L2hvbWUvZGV2").decode())"#,
                r#"shutil.rmtree("/home/dev")"#,
            ),
            (
                r#"shutil.rmtree(bytes.fromhex("2f686f6d652f646576").decode())"#,
                r#"shutil.rmtree("/home/dev")"#,
            ),
            (
                r#"shutil.rmtree(codecs.decode("/ubzr/qri","rot13"))"#,
                r#"shutil.rmtree("/home/dev")"#,
            ),
            (
                r#"shutil.rmtree("ved/emoh/"[::-1])"#,
                r#"shutil.rmtree("/home/dev")"#,
            ),
            (
                r#"require("fs").rmSync(Buffer.from("L2hvbWUvZGV2", "base64").toString(),{recursive:true})"#,
                r#"rmSync("/home/dev",{recursive:true})"#,
            ),
        ] {
            let got = decoded_in_place(code).unwrap_or_default();
            assert!(got.contains(want), "{code} → {got}");
        }
    }

    #[test]
    fn plain_code_is_left_alone() {
        assert_eq!(decoded_in_place(r#"print("hello")"#), None);
        assert_eq!(decoded_in_place(r#"x = b64decode(data).decode()"#), None);
    }
}
