//! Checking a scenario's `quote` against the text it quotes.
//!
//! A quote must be the source's own words, so the match is verbatim except for what a copy
//! may change without changing the words: runs of whitespace (line wrapping, indentation) and
//! markdown emphasis markers (`*word*`, `_word_`). Punctuation, case and accents count.

use thiserror::Error;

/// A quote that the text does not contain.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum QuoteError {
    /// The quote is empty once normalised: it could match anything.
    #[error("the quote is empty")]
    Empty,
    /// The normalised quote is not in the normalised text. `matched` is how many of its
    /// leading words the text contains in order, so the message points at the first word
    /// where the quote departs from the source.
    #[error(
        "the quote is not in the text: its first {matched} of {words} words are, then it departs at {departs:?} (quote: {quote:?})"
    )]
    NotFound {
        /// The normalised quote.
        quote: String,
        /// Its number of words.
        words: usize,
        /// How many leading words are found.
        matched: usize,
        /// The first word that breaks the match.
        departs: String,
    },
}

/// `text` with every run of whitespace made one space, markdown emphasis markers removed, and
/// the ends trimmed.
///
/// A `*` is always emphasis in prose; a `_` is emphasis only at a word's edge, so that
/// identifiers such as `last_token` keep theirs.
pub fn normalise(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let inner = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let emphasis = c == '*' || (c == '_' && !(inner(i.checked_sub(1)) && inner(Some(i + 1))));
        if emphasis {
            continue;
        }
        if c.is_whitespace() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// Whether `text` contains `quote`, both [normalised](normalise).
///
/// ```
/// use redlock_lab::scenario::{find_quote, QuoteError};
///
/// let text = "Redlock usa N nodes Redis\nindependentes, *sem* replicação.";
/// assert!(find_quote(text, "usa N nodes Redis independentes, sem replicação.").is_ok());
/// assert!(matches!(
///     find_quote(text, "usa N nodes Redis dependentes"),
///     Err(QuoteError::NotFound { matched: 4, .. })
/// ));
/// ```
pub fn find_quote(text: &str, quote: &str) -> Result<(), QuoteError> {
    let quote = normalise(quote);
    if quote.is_empty() {
        return Err(QuoteError::Empty);
    }
    let text = normalise(text);
    if text.contains(&quote) {
        return Ok(());
    }
    let words: Vec<&str> = quote.split(' ').collect();
    // A prefix of a found prefix is found, so the first missing prefix is where it departs.
    let matched = (1..=words.len())
        .find(|&k| !text.contains(&words[..k].join(" ")))
        .map_or(words.len(), |k| k - 1);
    Err(QuoteError::NotFound {
        words: words.len(),
        matched,
        departs: words.get(matched).copied().unwrap_or_default().to_owned(),
        quote,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_and_emphasis_are_normalised_and_nothing_else() {
        assert_eq!(normalise("  a\n\t b  "), "a b");
        assert_eq!(
            normalise("**bold** and *it* and _em_"),
            "bold and it and em"
        );
        assert_eq!(normalise("last_token < ?"), "last_token < ?");
        assert_eq!(normalise("“NX” — é"), "“NX” — é");
    }

    #[test]
    fn a_verbatim_quote_is_found_across_line_breaks() {
        let text = "O valor é um token aleatório,\n  usado para que apenas o cliente proprietário possa deletar a lock.";
        assert_eq!(
            find_quote(
                text,
                "usado para que apenas o cliente proprietário possa deletar a lock."
            ),
            Ok(())
        );
    }

    #[test]
    fn an_altered_quote_is_refused_at_the_altered_word() {
        let text =
            "A lock é considerada adquirida com sucesso quando ambas as condições são verdadeiras";
        let error = find_quote(
            text,
            "A lock é considerada adquirida com sucesso quando todas as condições",
        )
        .unwrap_err();
        assert_eq!(
            error,
            QuoteError::NotFound {
                quote: "A lock é considerada adquirida com sucesso quando todas as condições"
                    .to_owned(),
                words: 11,
                matched: 8,
                departs: "todas".to_owned(),
            }
        );
        // Accents and punctuation are the source's words too.
        assert!(find_quote(text, "A lock e considerada").is_err());
        assert_eq!(find_quote(text, " \n "), Err(QuoteError::Empty));
    }
}
