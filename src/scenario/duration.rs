//! Durations as people write them: `30s`, `500ms`, `2m`, `1h`, `1.5s`, `1m 30s`, a bare `0`,
//! for the command line's flags and for a scenario file's time keys alike.
//!
//! The parsing is humantime's (every unit it knows, from `ns` to `years`, and spans added up);
//! this file adds the rounding the commands rely on, the exact whole milliseconds a scenario
//! file needs, signed steps (`-50ms`), the drift policy's `1% + 2ms`, and errors in words.

use std::time::Duration;

/// The longest duration accepted, in milliseconds (about 31 700 years): far beyond any TTL or
/// fault, and small enough that every later conversion to milliseconds in a `u64` is exact.
const MAX_MILLIS: u128 = 1_000_000_000_000_000;

/// Why a duration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Nothing (or only spaces) was written.
    #[error("an empty duration: write e.g. 30s, 500ms, 2m")]
    Empty,
    /// A number without a unit other than a bare `0`, whose unit would not matter.
    #[error("{text:?} has no unit: write e.g. 30s, 500ms, 2m")]
    NoUnit {
        /// What was written.
        text: String,
    },
    /// A number with a unit humantime does not know.
    #[error("{text:?}: unknown unit {unit:?} (ms, s, m, h, d, …)")]
    UnknownUnit {
        /// What was written.
        text: String,
        /// The unit as written.
        unit: String,
    },
    /// Not numbers followed by units (`s`, `1.2.3s`, `-1s`).
    #[error("{text:?} is not a number and a unit (30s, 500ms, 2m)")]
    Malformed {
        /// What was written.
        text: String,
    },
    /// Longer than about 31 700 years, or too large for humantime to add up.
    #[error("{text:?} is too long")]
    TooLong {
        /// What was written.
        text: String,
    },
    /// A fraction of a millisecond in a scenario file, where every duration is exact.
    #[error("{text:?} is not a whole number of milliseconds")]
    NotWholeMillis {
        /// What was written.
        text: String,
    },
    /// A drift share that is not a percentage in `[0, 100)`.
    #[error("{text:?}: a drift share is a percentage below 100, e.g. \"1% + 2ms\"")]
    BadShare {
        /// What was written.
        text: String,
    },
}

/// Parses a duration (numbers with units, e.g. `1.5s` or `1m 30s`; a bare `0` is zero) and rounds
/// it up to the millisecond: every command counts in milliseconds, and rounding up keeps a
/// fault or a TTL written with a fraction from shrinking to less than was written.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let duration = parse_exact(text)?;
    let millis = duration.as_nanos().div_ceil(1_000_000);
    Ok(Duration::from_millis(whole(text, millis)?))
}

/// Parses a duration that must be a whole number of milliseconds, as every time key of a
/// scenario file is: the file's tick is the common divisor of its durations, and a rounded
/// value would change that divisor behind the writer's back.
pub(super) fn exact_millis(text: &str) -> Result<u64, DurationError> {
    let duration = parse_exact(text)?;
    if duration.subsec_nanos() % 1_000_000 != 0 {
        return Err(DurationError::NotWholeMillis {
            text: text.trim().to_owned(),
        });
    }
    whole(text, duration.as_millis())
}

/// Parses a clock step: a whole-millisecond duration with an optional sign (`-50ms` steps
/// back, `50ms` and `+50ms` forward).
pub(super) fn signed_millis(text: &str) -> Result<i64, DurationError> {
    let trimmed = text.trim();
    let (negative, magnitude) = match trimmed.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, trimmed.strip_prefix('+').unwrap_or(trimmed)),
    };
    let millis = i64::try_from(exact_millis(magnitude)?).expect("MAX_MILLIS fits in an i64");
    Ok(if negative { -millis } else { millis })
}

/// A drift allowance as a scenario file writes it: a fixed duration (`102ms`), a share of the
/// TTL (`1%`), or both (`1% + 2ms`, the client's default policy).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DriftText {
    /// The share of the TTL, as a fraction in `[0, 1)`.
    pub factor: f64,
    /// The fixed part, in milliseconds.
    pub floor_ms: u64,
}

/// Parses a drift allowance: `102ms`, `1%`, or `1% + 2ms`.
pub fn drift_text(text: &str) -> Result<DriftText, DurationError> {
    let mut drift = DriftText {
        factor: 0.0,
        floor_ms: 0,
    };
    let mut share_seen = false;
    for term in text.split('+').map(str::trim) {
        if let Some(percent) = term.strip_suffix('%') {
            let bad = || DurationError::BadShare {
                text: text.trim().to_owned(),
            };
            let percent: f64 = percent.trim().parse().map_err(|_| bad())?;
            if share_seen || !(0.0..100.0).contains(&percent) {
                return Err(bad());
            }
            share_seen = true;
            drift.factor = percent / 100.0;
        } else {
            let millis = exact_millis(term)?;
            drift.floor_ms = drift.floor_ms.saturating_add(millis);
        }
    }
    Ok(drift)
}

/// Milliseconds as a `u64`, refused above [`MAX_MILLIS`].
fn whole(text: &str, millis: u128) -> Result<u64, DurationError> {
    if millis > MAX_MILLIS {
        return Err(DurationError::TooLong {
            text: text.trim().to_owned(),
        });
    }
    Ok(u64::try_from(millis).expect("MAX_MILLIS fits in a u64"))
}

/// humantime's parse, with its errors in these words.
fn parse_exact(text: &str) -> Result<Duration, DurationError> {
    let owned = || text.trim().to_owned();
    humantime::parse_duration(text).map_err(|error| match error {
        humantime::DurationError::Empty => DurationError::Empty,
        humantime::DurationError::UnknownUnit { unit, .. } if unit.is_empty() => {
            DurationError::NoUnit { text: owned() }
        }
        humantime::DurationError::UnknownUnit { unit, .. } => DurationError::UnknownUnit {
            text: owned(),
            unit,
        },
        humantime::DurationError::NumberOverflow => DurationError::TooLong { text: owned() },
        // `InvalidCharacter`, `NumberExpected`, and any kind a later humantime adds.
        _ => DurationError::Malformed { text: owned() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Result<Duration, DurationError> {
        Ok(Duration::from_millis(millis))
    }

    #[test]
    fn the_forms_users_write_parse() {
        assert_eq!(parse_duration("30s"), ms(30_000));
        assert_eq!(parse_duration("500ms"), ms(500));
        assert_eq!(parse_duration("2m"), ms(120_000));
        assert_eq!(parse_duration("2min"), ms(120_000));
        assert_eq!(parse_duration("1h"), ms(3_600_000));
        assert_eq!(parse_duration("1.5s"), ms(1_500));
        assert_eq!(parse_duration("0"), ms(0));
        assert_eq!(parse_duration("0s"), ms(0));
        assert_eq!(parse_duration(" 30s "), ms(30_000));
        // humantime's own forms come along: spans added up, words, days.
        assert_eq!(parse_duration("1m 30s"), ms(90_000));
        assert_eq!(parse_duration("2 seconds"), ms(2_000));
        assert_eq!(parse_duration("1d"), ms(86_400_000));
    }

    #[test]
    fn fractions_of_a_millisecond_round_up() {
        assert_eq!(parse_duration("1.0001s"), ms(1_001));
        assert_eq!(parse_duration("0.0001s"), ms(1));
        assert_eq!(parse_duration("1500us"), ms(2));
        assert_eq!(parse_duration("2000us"), ms(2));
    }

    #[test]
    fn a_file_duration_is_exact_and_a_step_may_be_signed() {
        assert_eq!(exact_millis("10s"), Ok(10_000));
        assert_eq!(
            exact_millis("1.5ms"),
            Err(DurationError::NotWholeMillis {
                text: "1.5ms".to_owned()
            })
        );
        assert_eq!(signed_millis("-50ms"), Ok(-50));
        assert_eq!(signed_millis("+2s"), Ok(2_000));
        assert_eq!(signed_millis("50ms"), Ok(50));
        assert!(signed_millis("--5ms").is_err());
    }

    #[test]
    fn a_drift_is_a_duration_a_share_or_both() {
        let drift = |factor, floor_ms| Ok(DriftText { factor, floor_ms });
        assert_eq!(drift_text("102ms"), drift(0.0, 102));
        assert_eq!(drift_text("1%"), drift(0.01, 0));
        assert_eq!(drift_text("1% + 2ms"), drift(0.01, 2));
        assert_eq!(drift_text(" 2ms+1% "), drift(0.01, 2));
        for bad in ["100%", "-1%", "1% + 2%", "x%"] {
            assert!(
                matches!(drift_text(bad), Err(DurationError::BadShare { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            drift_text("1% + 2"),
            Err(DurationError::NoUnit { .. })
        ));
    }

    #[test]
    fn bad_input_is_refused_in_words() {
        let text = |t: &str| t.to_owned();
        assert_eq!(parse_duration(""), Err(DurationError::Empty));
        assert_eq!(parse_duration("  "), Err(DurationError::Empty));
        assert_eq!(
            parse_duration("30"),
            Err(DurationError::NoUnit { text: text("30") })
        );
        assert_eq!(
            parse_duration("3x"),
            Err(DurationError::UnknownUnit {
                text: text("3x"),
                unit: text("x"),
            })
        );
        for malformed in ["s", "1.2.3s", "-1s", "ten s"] {
            assert_eq!(
                parse_duration(malformed),
                Err(DurationError::Malformed {
                    text: text(malformed)
                }),
                "{malformed}"
            );
        }
        for long in ["32000000y", "99999999999999999999999s"] {
            assert_eq!(
                parse_duration(long),
                Err(DurationError::TooLong { text: text(long) }),
                "{long}"
            );
        }
        assert_eq!(
            DurationError::NoUnit { text: text("30") }.to_string(),
            "\"30\" has no unit: write e.g. 30s, 500ms, 2m"
        );
    }
}
