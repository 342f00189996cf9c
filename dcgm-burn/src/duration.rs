//! `--duration`: `60`, `60s`, `2m`, `1h`, `1.5m`.

use std::time::Duration;

/// Parses a duration: a number of seconds, or a number followed by `s`, `m` or `h`. At most a
/// day; more than 0.
pub fn parse(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "{s:?}: unknown unit {other:?} (give seconds, or a number with s, m or h)"
            ));
        }
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (60, 60s, 2m, 1h)"))?;
    let secs = v * scale;
    if !(secs > 0.0 && secs <= 86_400.0) {
        return Err(format!("{s}: give a duration above 0 and at most a day"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_minutes_and_hours() {
        assert_eq!(parse("60"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse("0.5"), Ok(Duration::from_millis(500)));
        assert!(parse("0").is_err());
        assert!(parse("2d").unwrap_err().contains("unknown unit"));
        assert!(parse("fast").is_err());
        assert!(parse("25h").is_err());
    }
}
