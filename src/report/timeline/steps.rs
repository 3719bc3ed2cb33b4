//! The list of steps under the picture, and its one numbering: each checker step is an
//! item, except that a long stretch where only time passes (a run in milliseconds, which the
//! checker tells tick by tick) is one item. The picture's marks, the break and the list all
//! count items, so "step 8" is the same step everywhere on the page.

use crate::model::QUIET_RUN;
use crate::time::Unit;

/// How a path's steps fall into the list's items.
#[derive(Clone, Debug, Default)]
pub(super) struct Items {
    /// Each item's last checker step, from 1: the state after it is the item's.
    pub last: Vec<usize>,
    /// Each checker step's item, from 1.
    pub of_step: Vec<usize>,
}

impl Items {
    /// Folds `steps`, each checker step's line with whether only time passed in it (a tick
    /// that changed nothing) and the tick it passed to: each item in one line, and the
    /// numbering.
    pub(super) fn fold(steps: Vec<(String, Option<u32>)>, unit: Unit) -> (Vec<String>, Items) {
        let mut items = Items::default();
        let mut lines = Vec::new();
        let mut i = 0;
        while i < steps.len() {
            let quiet = steps[i..].iter().take_while(|(_, q)| q.is_some()).count();
            let take = if quiet >= QUIET_RUN { quiet } else { 1 };
            let words = match steps[i + take - 1].1 {
                Some(to) if take > 1 => {
                    let first = steps[i].0.split(' ').next().unwrap_or_default();
                    let amount = unit.amount(take as u64);
                    format!("{first} time passes to t={to} ({amount} where nothing happens)")
                }
                _ => steps[i].0.clone(),
            };
            lines.push(words);
            items.last.push(i + take);
            items.of_step.extend(std::iter::repeat_n(lines.len(), take));
            i += take;
        }
        (lines, items)
    }

    /// The item checker step `step` (from 1) falls in; a step past the path's end counts on
    /// from its last item.
    pub(super) fn item(&self, step: usize) -> usize {
        match self.of_step.get(step.wrapping_sub(1)) {
            Some(&item) => item,
            None => self.last.len() + step.saturating_sub(self.of_step.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_quiet_stretch_is_one_item_and_the_rest_keep_their_order() {
        let mut steps = vec![("t=0 c1 begins".to_owned(), None)];
        for t in 0..30 {
            steps.push((format!("t={t} time passes to t={}", t + 1), Some(t + 1)));
        }
        steps.push(("t=30 c2 begins".to_owned(), None));
        steps.push(("t=30 time passes to t=31".to_owned(), Some(31)));
        let (lines, items) = Items::fold(steps, Unit::Millis);
        assert_eq!(
            lines,
            [
                "t=0 c1 begins",
                "t=0 time passes to t=30 (30 ms where nothing happens)",
                "t=30 c2 begins",
                "t=30 time passes to t=31",
            ]
        );
        assert_eq!(items.last, [1, 31, 32, 33]);
        assert_eq!((items.item(1), items.item(2), items.item(31)), (1, 2, 2));
        assert_eq!((items.item(32), items.item(33), items.item(34)), (3, 4, 5));
    }
}
