//! A figure as a formula: the family's keys left free, and the condition under which its
//! properties hold for every value of them, proved by one symbolic exploration.

use redlock_lab::check::Synthesis;
use redlock_lab::property::Property;
use redlock_lab::sweep::{synthesize_keys, written_number};

use super::family::Family;

/// What the symbolic exploration proved around one figure.
pub(super) enum Formula {
    /// The properties hold whenever `condition` does, for every value of the keys; `tight`:
    /// one tick below the figure is outside it; `exact`: the condition is the whole of where
    /// they hold (outside it a run breaks one of them, for every value: both sides proved),
    /// not a part of it that reads more simply.
    Proved {
        condition: String,
        zones: usize,
        tight: bool,
        exact: bool,
    },
    /// The exploration ran, but does not prove the figure's own point, which the checker
    /// proved: the two disagree (a bug to report).
    NotAtThePoint,
    /// It could not run (why).
    NotDerived(String),
}

/// The most symbolic states one formula may take (under a minute): past it the figure is
/// printed without one, and says so.
const MAX_ZONES: usize = 500_000;

/// The name a key has in a formula.
fn name(key: &str) -> &str {
    match key {
        "lock.ttl_ticks" => "ttl",
        "lock.drift_ticks" => "drift",
        "clock.node_error_ticks" => "ε_node",
        "clock.client_error_ticks" => "ε_client",
        "faults.crashes.restart_delay_ticks" => "restart_delay",
        "faults.crashes.client_guard_ticks" => "client_guard",
        "storage.check_margin_ticks" => "margin",
        "faults.clock_jumps.jump_ticks" => "jump",
        "faults.pauses.max_ticks" => "pause",
        "storage.max_delay_ticks" => "delay",
        other => other,
    }
}

/// The formula of `family` around its figure `value`, from the scenario `text` at it (`None`
/// when the family leaves no key free).
pub(super) fn derive(family: &Family<'_>, value: u32, text: &str) -> Option<Formula> {
    // A key the file does not write (a clock error of zero) stays at its default.
    let keys: Vec<&str> = family
        .free
        .iter()
        .copied()
        .filter(|key| written_number(text, key).is_some())
        .collect();
    if keys.is_empty() {
        return None;
    }
    let file = format!("advise-{}.toml", family.slug);
    let synthesis = match synthesize_keys(&file, text, &keys, MAX_ZONES) {
        Ok(synthesis) => synthesis,
        Err(e) => return Some(Formula::NotDerived(e.to_string())),
    };
    let properties: Vec<Property> = family
        .must_hold
        .iter()
        .filter_map(|n| Property::from_name(n))
        .collect();
    let at = synthesis.base.clone();
    if !properties.iter().all(|&p| synthesis.proved_at(p, &at)) {
        return Some(Formula::NotAtThePoint);
    }
    let figure = keys.iter().position(|k| *k == family.key);
    let tight = figure.is_some_and(|k| {
        let mut below = at.clone();
        below[k] = i64::from(value) - 1;
        properties
            .iter()
            .any(|&p| synthesis.proved_broken_at(p, &below))
    });
    let (condition, narrowed) = condition(&synthesis, &properties, figure);
    let exact = !narrowed;
    Some(Formula::Proved {
        condition,
        zones: synthesis.zones,
        tight,
        exact,
    })
}

/// The condition that proves every property: for each region, the negation of what it adds
/// to the regions' common part (dropping the common part only narrows the condition, so it
/// stays proved), each written for the figure's key when it appears; and whether a common
/// part was dropped (then the condition is narrower than the regions' complement).
fn condition(
    synthesis: &Synthesis,
    properties: &[Property],
    figure: Option<usize>,
) -> (String, bool) {
    let names: Vec<String> = synthesis.keys.iter().map(|k| name(k).to_owned()).collect();
    // Two properties often break in the same region: it is one part of the condition.
    let mut regions: Vec<_> = Vec::new();
    for region in properties
        .iter()
        .flat_map(|&p| synthesis.regions(p).unwrap_or_default())
    {
        if !regions.contains(&region) {
            regions.push(region);
        }
    }
    let common: Vec<_> = regions
        .first()
        .map(|first| {
            first
                .iter()
                .filter(|i| regions.iter().all(|r| r.contains(i)))
                .collect()
        })
        .unwrap_or_default();
    let mut parts: Vec<String> = Vec::new();
    for region in &regions {
        let own: Vec<_> = region.iter().filter(|i| !common.contains(i)).collect();
        let own = if own.is_empty() {
            region.iter().collect()
        } else {
            own
        };
        let negated: Vec<String> = own
            .iter()
            .map(|i| {
                // For the figure's key when it appears, else for the first key that can be.
                let not = i.negated();
                figure
                    .into_iter()
                    .chain(0..names.len())
                    .find_map(|k| not.solved_for(&names, k))
                    .unwrap_or_else(|| not.display(&names).to_string())
            })
            .collect();
        let part = match negated.as_slice() {
            [one] => one.clone(),
            many => format!("({})", many.join(" or ")),
        };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    let narrowed = regions.len() > 1 && !common.is_empty();
    let condition = if parts.is_empty() {
        "always".to_owned()
    } else {
        parts.join(" and ")
    };
    (condition, narrowed)
}
