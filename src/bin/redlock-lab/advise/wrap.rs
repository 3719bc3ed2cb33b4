//! The text output's lines: at most [`WIDTH`] characters, wrapped between words.

use std::fmt::Write as _;

use crate::table::WIDTH;

/// Writes `text` after `head` (padded to `indent` characters), wrapped at [`WIDTH`] with
/// every further line indented as far; a code span in backticks is never broken.
pub(super) fn wrap(out: &mut String, head: &str, indent: usize, text: &str) {
    let mut words = Vec::new();
    let (mut word, mut in_code) = (String::new(), false);
    for c in text.chars() {
        if c == '`' {
            in_code = !in_code;
        }
        if c == ' ' && !in_code {
            words.push(std::mem::take(&mut word));
        } else {
            word.push(c);
        }
    }
    words.push(word);
    // A unit stays on the line of its number.
    let mut glued: Vec<String> = Vec::new();
    for word in words.into_iter().filter(|w| !w.is_empty()) {
        match glued.last_mut() {
            Some(last) if matches!(word.as_str(), "s" | "ms" | "s;" | "ms;" | "s," | "ms,") => {
                last.push(' ');
                last.push_str(&word);
            }
            _ => glued.push(word),
        }
    }
    let mut line = format!("{head:<indent$}");
    let mut empty = true;
    for word in &glued {
        let width = line.chars().count();
        if !empty && width + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(out, "{line}");
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_code_spans_whole_and_lines_short() {
        let mut out = String::new();
        let long =
            "word ".repeat(30) + "`Config { drift: DriftPolicy::fixed(Millis(100)), .. }` end";
        wrap(&mut out, "  drift", 21, &long);
        assert!(out.lines().all(|l| l.chars().count() <= WIDTH), "{out}");
        assert!(
            out.lines().skip(1).all(|l| l.starts_with(&" ".repeat(21))),
            "{out}"
        );
        assert!(out.contains("`Config { drift: DriftPolicy::fixed(Millis(100)), .. }`"));
        assert!(out.starts_with("  drift              word word"), "{out}");
        // A number and its unit share a line: "2" would fit on the first line, "2 s" does not.
        let mut out = String::new();
        wrap(&mut out, "", 0, &format!("{} 2 s", "x".repeat(97)));
        assert_eq!(out.lines().nth(1), Some("2 s"), "{out}");
    }
}
