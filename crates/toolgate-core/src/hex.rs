//! Lowercase hexadecimal, the one text form of ids and hashes everywhere
//! (approval ids, binding hashes, audit hashes, trace ids).

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Fills `out` from exactly `2 * out.len()` hex digits (either case);
/// `None` for any other text.
pub fn unhex(s: &str, out: &mut [u8]) -> Option<()> {
    let bytes = s.as_bytes();
    if bytes.len() != out.len() * 2 {
        return None;
    }
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = (hi * 16 + lo) as u8;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_junk() {
        let bytes = [0u8, 1, 0xab, 0xff];
        assert_eq!(hex(&bytes), "0001abff");
        let mut out = [0u8; 4];
        assert_eq!(unhex("0001ABff", &mut out), Some(()));
        assert_eq!(out, bytes);
        assert_eq!(unhex("0001abf", &mut out), None);
        assert_eq!(unhex("0001abfg", &mut out), None);
    }
}
