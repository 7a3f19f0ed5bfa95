//! Durations as policies write them: `250ms`, `30s`, `5m`, `1h`, `2d`, or
//! several joined (`1h30m`).

use std::time::Duration;

/// Parses a duration; the error is a sentence tail saying how to write one.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    const HOW: &str =
        "write a number and a unit (ms, s, m, h, d), e.g. \"30s\", \"5m\" or \"1h30m\"";
    let t = s.trim();
    if t.is_empty() {
        return Err(format!("is empty — {HOW}"));
    }
    let mut total: u128 = 0;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("{t:?} is not a duration — {HOW}"));
        }
        let n: u128 = rest[..digits]
            .parse()
            .map_err(|_| format!("{t:?} is too long — {HOW}"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let ms_per: u128 = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "" => return Err(format!("{t:?} has no unit — {HOW}")),
            u => return Err(format!("{t:?} has the unknown unit {u:?} — {HOW}")),
        };
        rest = &rest[unit_len..];
        total = n
            .checked_mul(ms_per)
            .and_then(|v| total.checked_add(v))
            .filter(|v| *v <= u64::MAX as u128)
            .ok_or_else(|| format!("{t:?} is too long — {HOW}"))?;
    }
    if total == 0 {
        return Err(format!("{t:?} is zero — {HOW}"));
    }
    Ok(Duration::from_millis(total as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_sums() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("2d"), Ok(Duration::from_secs(172_800)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration(" 5m "), Ok(Duration::from_secs(300)));
    }

    #[test]
    fn refuses_the_rest() {
        for bad in [
            "",
            "5",
            "m",
            "5 m",
            "5min",
            "-5s",
            "1.5h",
            "0s",
            "0ms",
            "s5",
            "99999999999999999999999999999999999999999d",
            "5M",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}
