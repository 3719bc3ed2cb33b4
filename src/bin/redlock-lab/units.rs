//! Durations as people write them: `30s`, `500ms`, `2m`, `1h`, `1.5s`, `1m 30s`, a bare `0`.
//!
//! The parsing is humantime's (every unit it knows, from `ns` to `years`, and spans added up);
//! this file adds the rounding the commands rely on and errors in the commands' words.

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
    /// Longer than [`MAX_MILLIS`], or too large for humantime to add up.
    #[error("{text:?} is too long")]
    TooLong {
        /// What was written.
        text: String,
    },
}

/// Parses a duration (numbers with units, e.g. `1.5s` or `1m 30s`; a bare `0` is zero) and rounds
/// it up to the millisecond: every command counts in milliseconds, and rounding up keeps a
/// fault or a TTL written with a fraction from shrinking to less than was written.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let owned = || text.trim().to_owned();
    let duration = humantime::parse_duration(text).map_err(|error| match error {
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
    })?;
    let millis = duration.as_nanos().div_ceil(1_000_000);
    if millis > MAX_MILLIS {
        return Err(DurationError::TooLong { text: owned() });
    }
    let millis = u64::try_from(millis).expect("MAX_MILLIS fits in a u64");
    Ok(Duration::from_millis(millis))
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
