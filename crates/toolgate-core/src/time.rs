//! Time as the core sees it: Unix milliseconds handed in by the caller,
//! their RFC 3339 text for people and wire formats, and the one way a
//! length of time is written for people ([`span`]).

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

/// The Unix time in milliseconds of RFC 3339 text as [`rfc3339_ms`]
/// writes it (any UTC RFC 3339 time is read); `None` for other text.
pub fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(text).ok()?;
    let ms = t.duration_since(UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok()
}

/// Milliseconds in a duration, saturating at `i64::MAX`.
pub fn duration_ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// How [`span`] writes a length of time. Every message that tells a person
/// or an agent how long something lasts goes through [`span`]; the styles
/// exist because each message already had its wording (agents and tests
/// read it), and keeping them in one function keeps the rules in one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanStyle {
    /// Exact, compact, in minutes and seconds: `45s`, `2m`, `1m30s`,
    /// `60m`.
    Exact,
    /// One whole unit, compact: `5m` when the span is whole minutes (at
    /// least one), else seconds (`90s`, `0s`).
    WholeUnit,
    /// One whole unit, spelled for prose: `1 h`, `5 min`, `90 s`: hours
    /// when the span is whole hours, minutes when whole minutes, else
    /// seconds.
    Prose,
    /// Approximate, compact: seconds under two minutes (`119s`), whole
    /// minutes rounded down from there (`2m`, `4m` for 299 s).
    About,
}

/// `secs` seconds written in `style`; see [`SpanStyle`] for each style's
/// output. Callers holding a signed difference of clock readings clamp it
/// at zero first (a clock that stepped back reads as `0s`).
pub fn span(secs: u64, style: SpanStyle) -> String {
    let (m, s) = (secs / 60, secs % 60);
    match style {
        SpanStyle::Exact => match (m, s) {
            (0, s) => format!("{s}s"),
            (m, 0) => format!("{m}m"),
            (m, s) => format!("{m}m{s}s"),
        },
        SpanStyle::WholeUnit if m > 0 && s == 0 => format!("{m}m"),
        SpanStyle::WholeUnit => format!("{secs}s"),
        SpanStyle::Prose if secs > 0 && secs.is_multiple_of(3600) => format!("{} h", secs / 3600),
        SpanStyle::Prose if m > 0 && s == 0 => format!("{m} min"),
        SpanStyle::Prose => format!("{secs} s"),
        SpanStyle::About if secs < 120 => format!("{secs}s"),
        SpanStyle::About => format!("{m}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_text_reads_back() {
        for ms in [0, 1_700_000_000_123, 1_800_000_000_000] {
            assert_eq!(parse_rfc3339_ms(&rfc3339_ms(ms)), Some(ms));
        }
        assert_eq!(parse_rfc3339_ms("yesterday"), None);
    }

    /// Pins every style's text: these strings are in block reasons, the
    /// agent protocol text and CLI tables.
    #[test]
    fn spans_in_each_style() {
        use SpanStyle::*;
        let cases: &[(u64, SpanStyle, &str)] = &[
            (0, Exact, "0s"),
            (45, Exact, "45s"),
            (60, Exact, "1m"),
            (90, Exact, "1m30s"),
            (120, Exact, "2m"),
            (3600, Exact, "60m"),
            (3661, Exact, "61m1s"),
            (0, WholeUnit, "0s"),
            (59, WholeUnit, "59s"),
            (60, WholeUnit, "1m"),
            (90, WholeUnit, "90s"),
            (300, WholeUnit, "5m"),
            (3600, WholeUnit, "60m"),
            (0, Prose, "0 s"),
            (30, Prose, "30 s"),
            (60, Prose, "1 min"),
            (90, Prose, "90 s"),
            (300, Prose, "5 min"),
            (3600, Prose, "1 h"),
            (5400, Prose, "90 min"),
            (86_400, Prose, "24 h"),
            (0, About, "0s"),
            (119, About, "119s"),
            (120, About, "2m"),
            (299, About, "4m"),
            (3600, About, "60m"),
        ];
        for (secs, style, want) in cases {
            assert_eq!(span(*secs, *style), *want, "{secs} {style:?}");
        }
    }

    #[test]
    fn formats_utc_with_millis() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_795_368_000_123), "2026-11-22T17:20:00.123Z");
        assert_eq!(rfc3339_ms(-5), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(i64::MAX), "9999-12-31T23:59:59.999Z");
    }
}
