//! Durations as people write them: `30s`, `500ms`, `2m`, `1h`, `1.5s`.

use std::time::Duration;

/// Parses a number and a unit (`ms`, `s`, `m`, `h`); a bare `0` is zero. Fractions are kept
/// to the millisecond, rounded up.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{text:?} has no unit: write e.g. 30s, 500ms, 2m"))?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a number and a unit (30s, 500ms, 2m)"))?;
    let ms_per_unit = match unit {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (ms, s, m, h)")),
    };
    let ms = (number * ms_per_unit).ceil();
    if !ms.is_finite() || ms > 1e15 {
        return Err(format!("{text:?} is too long"));
    }
    Ok(Duration::from_millis(ms as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1_500)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["30", "s", "3x", "1.2.3s", ""] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
