//! A plain-text table that fits a terminal of [`WIDTH`] columns, with optional colour.

use std::io::IsTerminal;

/// The widest line a table prints: the last column wraps to stay within it.
pub(crate) const WIDTH: usize = 100;

/// The narrowest the wrapping column gets, however wide the others are.
const MIN_LAST: usize = 24;

#[derive(Debug)]
enum Row {
    Cells(Vec<String>),
    /// A line of its own under the row before it, indented and wrapped to the table's width.
    Note(String),
}

/// Rows of cells, printed left-aligned with two spaces between columns; the last column wraps
/// at word boundaries so no line is longer than [`WIDTH`] (unless one word is).
#[derive(Debug, Default)]
pub(crate) struct Table {
    rows: Vec<Row>,
}

impl Table {
    /// A table with a header row.
    pub(crate) fn new(header: &[&str]) -> Table {
        Table {
            rows: vec![Row::Cells(
                header.iter().map(|cell| (*cell).to_owned()).collect(),
            )],
        }
    }

    /// Appends a row.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(Row::Cells(cells));
    }

    /// Appends a line of text under the last row, indented by two spaces.
    pub(crate) fn note(&mut self, text: String) {
        self.rows.push(Row::Note(text));
    }

    /// The table as plain text, one line per row (more where the last column wraps).
    pub(crate) fn render(&self) -> String {
        self.render_with(&Paint::off())
    }

    /// The table with cells whose whole text is a verdict or a mark coloured by `paint`.
    pub(crate) fn render_with(&self, paint: &Paint) -> String {
        let columns = self
            .rows
            .iter()
            .filter_map(|row| match row {
                Row::Cells(cells) => Some(cells.len()),
                Row::Note(_) => None,
            })
            .max()
            .unwrap_or(0);
        let mut widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|row| match row {
                        Row::Cells(cells) => cells.get(c),
                        Row::Note(_) => None,
                    })
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        if let Some((last, others)) = widths.split_last_mut() {
            let used: usize = others.iter().map(|w| w + 2).sum();
            *last = (*last).min(WIDTH.saturating_sub(used).max(MIN_LAST));
        }
        let mut out = String::new();
        for row in &self.rows {
            match row {
                Row::Cells(cells) => render_row(&mut out, cells, &widths, paint),
                Row::Note(text) => {
                    for line in wrap(text, WIDTH - 2) {
                        out.push_str("  ");
                        out.push_str(&line);
                        out.push('\n');
                    }
                }
            }
        }
        out
    }
}

fn render_row(out: &mut String, cells: &[String], widths: &[usize], paint: &Paint) {
    let last = widths.len().saturating_sub(1);
    let mut continuation: Vec<String> = Vec::new();
    let mut line = String::new();
    for (c, cell) in cells.iter().enumerate() {
        let text = if c == last && c > 0 {
            let mut lines = wrap(cell, widths[c]).into_iter();
            let first = lines.next().unwrap_or_default();
            continuation = lines.collect();
            first
        } else {
            cell.clone()
        };
        line.push_str(&paint.cell(&text));
        if c + 1 < cells.len() {
            let pad = widths[c].saturating_sub(text.chars().count()) + 2;
            line.extend(std::iter::repeat_n(' ', pad));
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
    let indent: usize = widths[..last].iter().map(|w| w + 2).sum();
    for more in continuation {
        out.extend(std::iter::repeat_n(' ', indent));
        out.push_str(&more);
        out.push('\n');
    }
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word stays whole).
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let needed = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if !line.is_empty() && needed > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// Whether and how to colour verdicts: on a terminal, unless `NO_COLOR` is set (no-color.org).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Paint {
    enabled: bool,
}

impl Paint {
    /// Colour when standard output is a terminal and `NO_COLOR` is unset or empty.
    pub(crate) fn for_stdout() -> Paint {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
        Paint {
            enabled: std::io::stdout().is_terminal() && !no_color,
        }
    }

    /// Never colour.
    pub(crate) fn off() -> Paint {
        Paint { enabled: false }
    }

    /// `text` coloured when it is a whole verdict or mark: `ok` and `holds` green, `MISMATCH`
    /// bold red, `violated` yellow; anything else as it is.
    pub(crate) fn cell(&self, text: &str) -> String {
        let code = match text {
            _ if !self.enabled => None,
            "ok" | "holds" => Some("32"),
            "MISMATCH" => Some("1;31"),
            "violated" => Some("33"),
            _ => None,
        };
        match code {
            Some(code) => format!("\x1b[{code}m{text}\x1b[0m"),
            None => text.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_column_wraps_to_the_width_and_notes_are_indented() {
        let mut table = Table::new(&["name", "title"]);
        let long = "word ".repeat(40);
        table.row(vec!["a".repeat(60), long.trim_end().to_owned()]);
        table.note("x ".repeat(80).trim_end().to_owned());
        let text = table.render();
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "{line:?} is too long");
        }
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[2].starts_with(&" ".repeat(62)), "{text}");
        assert!(lines.iter().any(|l| l.starts_with("  x x")), "{text}");
    }

    #[test]
    fn colour_wraps_whole_verdicts_only_and_keeps_alignment() {
        let paint = Paint { enabled: true };
        assert_eq!(paint.cell("MISMATCH"), "\x1b[1;31mMISMATCH\x1b[0m");
        assert_eq!(paint.cell("violated"), "\x1b[33mviolated\x1b[0m");
        assert_eq!(paint.cell("mutual exclusion"), "mutual exclusion");
        assert_eq!(Paint::off().cell("ok"), "ok");
        let mut table = Table::new(&["verdict", "mark"]);
        table.row(vec!["violated".to_owned(), "ok".to_owned()]);
        let coloured = table.render_with(&paint);
        let plain = coloured.replace("\x1b[33m", "").replace("\x1b[32m", "");
        assert_eq!(plain.replace("\x1b[0m", ""), table.render());
    }
}
