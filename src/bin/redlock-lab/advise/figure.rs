//! One figure: which it is, the searches that found it, and its lines of text (a plain
//! sentence, and under `--verbose` the proof: the checks on both sides and the formula).

use std::fmt::Write as _;

use redlock_lab::check::Engine;
use redlock_lab::plural::count;
use redlock_lab::sweep::Formula;

use super::family::Found;
use super::texts::Faults;
use super::wrap::wrap;

/// Which figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The drift allowance.
    Drift,
    /// The restart delay of a crashed master.
    RestartDelay,
    /// Instead, the clients' restart guard.
    RestartGuard,
    /// The lease a holder must have left before each write.
    Margin,
    /// Whether fencing is required (when no margin will do).
    Fencing,
}

impl Kind {
    /// Its key in `--json`.
    pub(super) fn key(self) -> &'static str {
        match self {
            Kind::Drift => "drift",
            Kind::RestartDelay => "restart_delay",
            Kind::RestartGuard => "restart_guard",
            Kind::Margin => "check_margin",
            Kind::Fencing => "fencing",
        }
    }

    /// Its name in words.
    pub(super) fn name(self) -> &'static str {
        self.label().trim_start().trim_start_matches("or ")
    }

    /// The start of its line.
    pub(super) fn label(self) -> &'static str {
        match self {
            Kind::Drift => "drift allowance",
            Kind::RestartDelay => "restart delay",
            Kind::RestartGuard => "  or restart guard",
            Kind::Margin => "check margin",
            Kind::Fencing => "fencing",
        }
    }

    /// What the figure means, in a few plain words after it.
    fn sentence(self) -> &'static str {
        match self {
            Kind::Drift => "the client counts each lease this much short of its TTL",
            Kind::RestartDelay => "a crashed master stays down this long before it serves again",
            Kind::RestartGuard => "or the clients ignore a restarted master for this long",
            Kind::Margin => "write to the storage only while the lease has this much left",
            Kind::Fencing => "",
        }
    }
}

/// A figure and the searches that found it (each with its family's label: the drift has one
/// per kind of jump).
pub(super) struct Figure {
    pub kind: Kind,
    /// In ticks: the largest of the searches' values; `None` when one found none or did not
    /// settle.
    pub value: Option<u32>,
    pub searches: Vec<(&'static str, Found)>,
}

impl Figure {
    /// The figure its searches found: the largest of their values, since it must hold against
    /// every family's faults.
    pub(super) fn new(kind: Kind, searches: Vec<(&'static str, Found)>) -> Figure {
        let value = (searches.iter())
            .map(|(_, f)| f.value)
            .try_fold(0, |max, v| v.map(|v| v.max(max)));
        Figure {
            kind,
            value: if searches.is_empty() { None } else { value },
            searches,
        }
    }

    /// A figure not searched, and why.
    pub(super) fn not_searched(kind: Kind, why: &str) -> Figure {
        Figure::new(kind, vec![("", Found::unsettled(0, why.to_owned()))])
    }

    /// Why it did not settle, if it did not.
    pub(super) fn unsettled(&self) -> Option<&str> {
        (self.searches.iter()).find_map(|(_, f)| f.unsettled.as_deref())
    }

    /// For fencing: whether it is required (its search ran because no margin would do).
    pub(super) fn required(&self) -> bool {
        self.kind == Kind::Fencing && !self.searches.is_empty()
    }

    /// Its lines: a plain sentence, and under `verbose` the evidence and the formula.
    pub(super) fn write(&self, out: &mut String, faults: &Faults, verbose: bool) {
        let label = self.kind.label();
        let fencing = if self.value.is_some() {
            "REQUIRED       no margin survives these pauses and delays; tokens do (checked)"
        } else {
            "REQUIRED       no margin, nor even a token, survives these (see the files)"
        };
        match (self.unsettled(), self.kind, self.value) {
            (Some(why), _, _) => wrap(out, label, 21, &format!("not settled: {why}")),
            (None, Kind::Fencing, _) if self.required() => {
                let _ = writeln!(out, "{label:<20} {fencing}");
            }
            (None, Kind::Fencing, _) => {
                let _ = writeln!(
                    out,
                    "{label:<20} not required with that margin, for pauses and delays within their bounds"
                );
            }
            (None, Kind::Drift, None) => {
                let _ = writeln!(
                    out,
                    "drift allowance: none below the TTL keeps mutual exclusion ({}).\nLengthen the TTL, or bound the clocks better; nothing else can be advised.",
                    (self.searches.iter())
                        .map(|(_, f)| f.evidence.clone())
                        .collect::<Vec<_>>()
                        .join("; ")
                );
                return;
            }
            (None, kind, value) => {
                let shown = figure(faults, value, verbose);
                let sentence = match (kind, value) {
                    (_, Some(_)) => kind.sentence(),
                    (Kind::Margin, None) => "no margin that still leaves time to write is safe",
                    (_, None) => "no value in the range searched is safe",
                };
                // Two spaces at least between the figure and its sentence, for a reader's eye
                // and a script's split.
                let _ = writeln!(out, "{label:<20} {shown:<13}  {sentence}");
            }
        }
        if verbose && self.unsettled().is_none() {
            for (family, found) in &self.searches {
                let family = (self.searches.len() > 1).then_some(*family);
                let named = family.map(|f| format!("{f}: ")).unwrap_or_default();
                let _ = writeln!(out, "  checker            {named}{}", evidence(found));
                formula_line(out, faults, found, family);
            }
        }
    }
}

/// Ticks in the user's units (with the tick count under `verbose`, unless a tick is 1 ms), or
/// why there is none.
fn figure(faults: &Faults, value: Option<u32>, verbose: bool) -> String {
    match value {
        Some(ticks) if faults.scale.is_millisecond() || !verbose => faults.scale.show(ticks),
        Some(ticks) => format!(
            "{} ({})",
            faults.scale.show(ticks),
            count(ticks, "tick", "ticks")
        ),
        None => "none in range".to_owned(),
    }
}

/// The evidence of a search, with how many checks it took and which engine made them.
pub(super) fn evidence(found: &Found) -> String {
    let proved = (found.proved_for.as_deref())
        .map(|sizes| format!(", proved for {sizes}"))
        .unwrap_or_default();
    format!(
        "{} ({}{} {}, {}{proved})",
        found.evidence,
        obtained(found),
        if found.read_off {
            ", confirmed by"
        } else {
            ","
        },
        count(found.checks, "check", "checks"),
        engine(found.engine)
    )
}

/// How a search found its figure.
pub(super) fn obtained(found: &Found) -> &'static str {
    if found.read_off {
        "read off the symbolic exploration"
    } else {
        "binary search"
    }
}

/// The engine's name.
pub(super) fn engine(engine: Engine) -> &'static str {
    if engine == Engine::Zones {
        "zone engine"
    } else {
        "discrete engine"
    }
}

/// The line under a figure that says what holds for every value of its keys (nothing when
/// the figure has no formula).
fn formula_line(out: &mut String, faults: &Faults, found: &Found, label: Option<&str>) {
    let Some(formula) = &found.formula else {
        return;
    };
    let unit = if faults.scale.is_millisecond() {
        "in ms".to_owned()
    } else {
        format!("in ticks of {}", faults.scale.show(1))
    };
    let label = label.map(|l| format!("{l}; ")).unwrap_or_default();
    let text = match formula {
        Formula::Proved {
            condition,
            zones,
            tight,
            exact: true,
        } => format!(
            "holds exactly when {condition}   ({label}{unit}; both sides proved for every value at N=3, C=2: one symbolic exploration, {zones} zones{})",
            if *tight { "; tight" } else { "" }
        ),
        Formula::Proved {
            condition,
            zones,
            tight,
            exact: false,
        } => format!(
            "holds whenever {condition}   ({label}{unit}; proved for every value by one symbolic exploration at N=3, C=2, {zones} zones{})",
            if *tight {
                "; tight: one tick less is outside it"
            } else {
                ""
            }
        ),
        Formula::NotAtThePoint => format!(
            "not derived ({label}the symbolic exploration does not prove the figure's own point: please report it)"
        ),
        Formula::NotDerived(why) => format!("not derived ({label}{why})"),
    };
    let _ = writeln!(out, "  for every value    {text}");
}
