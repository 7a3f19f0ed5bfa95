//! Time as the core sees it: Unix milliseconds handed in by the caller, and
//! their RFC 3339 text for people and wire formats.

use std::time::{Duration, UNIX_EPOCH};

/// The last millisecond RFC 3339 can write: 9999-12-31T23:59:59.999Z.
const MAX_MS: u64 = 253_402_300_799_999;

/// RFC 3339 UTC text with milliseconds (`2026-11-22T17:20:00.123Z`) for a
/// Unix time in milliseconds; times before 1970 print as the epoch, times
/// after 9999 as its last millisecond.
pub fn rfc3339_ms(unix_ms: i64) -> String {
    let ms = u64::try_from(unix_ms).unwrap_or(0).min(MAX_MS);
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

/// Milliseconds in a duration, saturating at `i64::MAX`.
pub fn duration_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_with_millis() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_795_368_000_123), "2026-11-22T17:20:00.123Z");
        assert_eq!(rfc3339_ms(-5), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(i64::MAX), "9999-12-31T23:59:59.999Z");
    }
}
