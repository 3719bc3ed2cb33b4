//! The legend under a timeline: one swatch per kind of mark, in the colours the picture
//! uses, so a reader needs no other key.

use std::fmt::Write;

/// A swatch: how it is drawn (in a 24 × 14 box at the origin) and what it means.
const SWATCHES: &[(&str, &str)] = &[
    (
        "<rect x='0' y='4' width='24' height='5' fill='none' stroke='#2f6fca' stroke-width='1.4'/>",
        "round (T1 to decision)",
    ),
    (
        "<rect x='0' y='0' width='24' height='14' fill='#2f6fca'/>",
        "believes it holds the lock",
    ),
    (
        "<rect x='0' y='1' width='24' height='12' fill='#e08a1e'/>",
        "key on a node (owner's colour)",
    ),
    (
        "<rect x='0' y='0' width='12' height='14' fill='#2f6fca'/><rect x='12' y='0' width='12' height='14' fill='#2f6fca' opacity='.4'/>",
        "pale: after the run's end",
    ),
    (
        "<rect x='0' y='0' width='24' height='14' fill='#d7263d' fill-opacity='.22' stroke='#d7263d'/>",
        "two clients believe at once",
    ),
    (
        "<line x1='0' y1='12' x2='22' y2='2' stroke='#555' marker-end='url(#tl-head)'/>",
        "request, send to arrival",
    ),
    (
        "<line x1='0' y1='12' x2='14' y2='6' stroke='#999'/><path d='M11 2l7 7m0 -7l-7 7' stroke='#999' stroke-width='2'/>",
        "lost request",
    ),
    (
        "<line x1='0' y1='12' x2='22' y2='2' stroke='#aaa' stroke-dasharray='6 4' marker-end='url(#tl-head-grey)'/>",
        "in flight: may still apply",
    ),
    (
        "<rect x='0' y='0' width='24' height='14' fill='url(#hatch)' stroke='#888'/>",
        "fault: pause, restart, down",
    ),
    (
        "<rect x='0' y='0' width='24' height='14' rx='3' fill='#2f6fca' stroke='#d7263d' stroke-width='2.5'/>",
        "stale holder's op",
    ),
    (
        "<line x1='10' y1='0' x2='10' y2='14' stroke='#d7263d' stroke-width='2'/>",
        "the property breaks",
    ),
];

/// Draws the legend in rows from `top`.
pub(super) fn draw(svg: &mut String, top: f64) {
    let _ = write!(svg, "<g class='legend'>");
    let (mut x, mut y) = (16.0, top);
    for (shape, words) in SWATCHES {
        let width = 34.0 + words.chars().count() as f64 * 6.0 + 18.0;
        if x + width > 1190.0 {
            x = 16.0;
            y += 22.0;
        }
        let _ = write!(
            svg,
            "<g transform='translate({x:.1} {y:.1})'>{shape}<text x='30' y='11'>{words}</text></g>"
        );
        x += width;
    }
    svg.push_str("</g>");
}
