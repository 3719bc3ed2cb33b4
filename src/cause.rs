//! Necessary causes: which of a scenario's faults and mistakes a violation cannot do without.
//!
//! A counterexample shows that a violation *can* happen; it does not say which of the
//! ingredients the file grants were needed for it. This module answers that by running the
//! checker again, once per ingredient ([`Ingredient`]), on the scenario minus that one
//! ingredient: an ingredient is **necessary** for a violated property when, without it, the
//! property holds. No reasoning about the model happens here; every answer is a verdict of
//! [`Check`].
//!
//! ```
//! use redlock_lab::check::Check;
//! use redlock_lab::fault::FaultKind;
//! use redlock_lab::scenario::{Ingredient, Scenario};
//!
//! let scenario = Scenario::from_str("jump.toml", r#"
//!     name = "node-jump"
//!     title = "A node's clock jumps forward past the drift allowance"
//!     claim = "Redlock is unsafe when a node's clock jumps"
//!     source = "Kleppmann"
//!     quote = "The clock on node C jumps forward, causing the lock to expire."
//!     prose = "n2 jumps +2 with drift 1."
//!     [lock]
//!     ttl_ticks = 4
//!     [faults.clock_jumps]
//!     target = "node"
//!     jump_ticks = 2
//!     [expect]
//!     "mutual exclusion" = "violated"
//!     mechanism = ["clock jump"]
//! "#)?;
//! let report = Check::new(&scenario).run_with_causes();
//! let mutex = report.property("mutual exclusion").unwrap();
//! assert_eq!(mutex.necessary.as_deref(), Some(&[Ingredient::Fault(FaultKind::ClockJump)][..]));
//! assert!(redlock_lab::cause::mechanism_problems(&scenario, &report).is_empty());
//! # Ok::<(), redlock_lab::scenario::ScenarioError>(())
//! ```

use crate::check::{Check, PropertyReport, Report};
use crate::model::{Event, Step};
use crate::report::Story;
use crate::scenario::{Ingredient, Mistake, Scenario, Verdict};

impl Check {
    /// Runs the check, then fills [`PropertyReport::necessary`] for every violated property:
    /// one more run per ingredient the scenario grants (each run covers every property at once).
    pub fn run_with_causes(&self) -> Report {
        let mut report = self.run();
        annotate(self, &mut report);
        report
    }
}

/// Fills [`PropertyReport::necessary`] in `report`, a report of `check`, by re-running `check`
/// without each ingredient in turn. Does nothing when no property is violated.
pub fn annotate(check: &Check, report: &mut Report) {
    if report
        .properties
        .iter()
        .all(|p| p.verdict != Verdict::Violated)
    {
        return;
    }
    let present = Ingredient::present(check.scenario());
    for p in &mut report.properties {
        if p.verdict == Verdict::Violated {
            p.necessary = Some(Vec::new());
        }
    }
    for ingredient in present {
        let without = check
            .on(&ingredient.remove(check.scenario()))
            .reach(false)
            .run();
        for p in &mut report.properties {
            let Some(necessary) = &mut p.necessary else {
                continue;
            };
            match without.property(&p.name).map(|q| q.verdict) {
                Some(Verdict::Holds) => necessary.push(ingredient),
                // Stopped at a limit: neither necessary nor shown unnecessary.
                Some(Verdict::Incomplete) => p.undetermined.push(ingredient),
                _ => {}
            }
        }
    }
}

/// Whether `ingredient` is visible in a counterexample: `Some(true)` when a step or story line
/// shows it acting, `Some(false)` when none does, `None` when the ingredient has no step of its
/// own to look for (a fault that is a condition of the whole run rather than a strike, see
/// [`FaultKind::strikes`](crate::fault::FaultKind::strikes); and the missing validity check,
/// which changes how a step turns out, not which steps exist). A fault is found by the kind
/// its step has ([`Step::fault_kind`]), so no kind is named here.
pub fn witnessed(ingredient: Ingredient, steps: &[Step], story: &Story) -> Option<bool> {
    if let Some(kind) = ingredient.fault() {
        return kind
            .strikes()
            .then(|| steps.iter().any(|s| s.fault_kind() == Some(kind)));
    }
    match ingredient {
        Ingredient::Mistake(Mistake::ExtensionAnyNode) => {
            Some(steps.iter().any(|s| matches!(s, Step::Extend(_))))
        }
        // A value reused across attempts acts when a failed round's release arrives late, and
        // a get-then-del unlock when its `DEL` does (its `GET` alone deletes nothing).
        Ingredient::Mistake(Mistake::ReusedToken | Mistake::UnlockGetThenDel) => {
            Some(steps.iter().any(|s| matches!(s, Step::LateRelease { .. })))
        }
        // The mistake acts when a release deletes a key that is not the releaser's own.
        Ingredient::Mistake(Mistake::UnlockDel) | Ingredient::Mistake(Mistake::SharedToken) => {
            Some(story.lines.iter().any(|l| match &l.event {
                Event::Released { deleted, .. } | Event::NotAcquired { deleted, .. } => {
                    !deleted.is_empty()
                }
                _ => false,
            }))
        }
        _ => None,
    }
}

/// What is wrong with `scenario`'s declared `[expect] mechanism`, judged on `report` (a report
/// from [`Check::run_with_causes`]): the declaration must be exactly what `check --why`
/// computes, the ingredients some violated property needs (the union of their necessary
/// sets), in both directions. Each declared ingredient must be necessary for a violated
/// property and, where it has a step, appear in that property's shortest counterexample;
/// each necessary ingredient must be declared; and no re-check may have stopped at a limit
/// (then the set is not known). Empty when the declaration is true; a file that declares no
/// mechanism is not judged.
pub fn mechanism_problems(scenario: &Scenario, report: &Report) -> Vec<String> {
    let mut problems = Vec::new();
    if scenario.mechanism.is_empty() {
        return problems;
    }
    let violated: Vec<&PropertyReport> = report
        .properties
        .iter()
        .filter(|p| p.verdict == Verdict::Violated)
        .collect();
    if violated.is_empty() {
        problems.push(format!(
            "{} declares a mechanism but violates nothing",
            scenario.name
        ));
    }
    needed_and_declared(scenario, &violated, &mut problems);
    for &ingredient in &scenario.mechanism {
        let needing: Vec<&&PropertyReport> = violated
            .iter()
            .filter(|p| {
                p.necessary
                    .as_ref()
                    .is_some_and(|n| n.contains(&ingredient))
            })
            .collect();
        if needing.is_empty() && !violated.is_empty() {
            problems.push(format!(
                "{}: {:?} is declared but not necessary: without it every property is still \
                 violated",
                scenario.name,
                ingredient.name()
            ));
        }
        if report.engine != crate::check::Engine::Discrete {
            continue;
        }
        for p in needing {
            let told = crate::check::reported_story_path(scenario, report, &p.name);
            if let (Some(steps), Some(told)) = (&p.steps, &told)
                && witnessed(ingredient, steps, &told.story) == Some(false)
            {
                problems.push(format!(
                    "{}: {}: the shortest counterexample contains no {}",
                    scenario.name,
                    p.name,
                    ingredient.name()
                ));
            }
        }
    }
    problems
}

/// Adds to `problems` every ingredient some `violated` property needs (the union of their
/// necessary sets) that `scenario` does not declare, and every property whose causes were not
/// computed or whose re-check stopped at a limit for some ingredient.
fn needed_and_declared(
    scenario: &Scenario,
    violated: &[&PropertyReport],
    problems: &mut Vec<String>,
) {
    let mut needed: Vec<Ingredient> = Vec::new();
    for p in violated {
        let Some(necessary) = &p.necessary else {
            problems.push(format!(
                "{}: {}: necessary causes were not computed",
                scenario.name, p.name
            ));
            continue;
        };
        for ingredient in &p.undetermined {
            problems.push(format!(
                "{}: {}: whether {} is needed is not known (its re-check stopped at a limit)",
                scenario.name,
                p.name,
                ingredient.name()
            ));
        }
        for &ingredient in necessary {
            if !needed.contains(&ingredient) {
                needed.push(ingredient);
            }
        }
    }
    for &ingredient in &needed {
        if !scenario.mechanism.contains(&ingredient) {
            let properties: Vec<&str> = violated
                .iter()
                .filter(|p| {
                    p.necessary
                        .as_ref()
                        .is_some_and(|n| n.contains(&ingredient))
                })
                .map(|p| p.name.as_str())
                .collect();
            problems.push(format!(
                "{}: {:?} is necessary ({}) but not declared",
                scenario.name,
                ingredient.name(),
                properties.join(", ")
            ));
        }
    }
}

/// The necessary causes in one sentence, for `explain` and `check --why`; `undetermined`
/// are the ingredients whose re-check stopped at a limit.
pub fn sentence(
    present: &[Ingredient],
    necessary: &[Ingredient],
    undetermined: &[Ingredient],
) -> String {
    let known: Vec<Ingredient> = present
        .iter()
        .copied()
        .filter(|i| !undetermined.contains(i))
        .collect();
    let settled = known_sentence(&known, necessary);
    if undetermined.is_empty() {
        return settled;
    }
    let words: Vec<&str> = undetermined.iter().map(|i| i.phrase()).collect();
    let unknown = format!(
        "whether {} {} needed is not known: the check without {} stopped at a limit",
        join(&words),
        if undetermined.len() == 1 { "is" } else { "are" },
        if undetermined.len() == 1 {
            "it"
        } else {
            "each"
        },
    );
    if known.is_empty() {
        unknown
    } else {
        format!("{settled}; {unknown}")
    }
}

fn known_sentence(present: &[Ingredient], necessary: &[Ingredient]) -> String {
    let phrases = |list: &[Ingredient]| -> String {
        let words: Vec<&str> = list.iter().map(|i| i.phrase()).collect();
        join(&words)
    };
    let spare: Vec<Ingredient> = present
        .iter()
        .copied()
        .filter(|i| !necessary.contains(i))
        .collect();
    let needed = match (present.len(), necessary.len()) {
        (0, _) => {
            return "no fault or mistake is needed: the configuration alone breaks it".to_owned();
        }
        (_, 0) => {
            return format!(
                "no single ingredient is necessary: without any one of {} the property is still \
                 violated",
                phrases(present)
            );
        }
        (1, 1) => format!(
            "{} is needed: without it the property holds",
            phrases(necessary)
        ),
        (_, 1) => format!("{} is needed", phrases(necessary)),
        (_, 2) if spare.is_empty() => format!(
            "both {} are needed; either alone is harmless",
            phrases(necessary)
        ),
        (_, 2) => format!("both {} are needed", phrases(necessary)),
        (_, _) if spare.is_empty() => format!(
            "all of {} are needed; without any one of them the property holds",
            phrases(necessary)
        ),
        (_, _) => format!("all of {} are needed", phrases(necessary)),
    };
    if spare.is_empty() {
        needed
    } else {
        format!(
            "{needed}; {} {} not (without {} the property is still violated)",
            phrases(&spare),
            if spare.len() == 1 { "is" } else { "are" },
            if spare.len() == 1 { "it" } else { "each" },
        )
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::FaultKind;

    #[test]
    fn sentences_say_what_is_needed() {
        const CLOCK_JUMP: Ingredient = Ingredient::Fault(FaultKind::ClockJump);
        const CRASH: Ingredient = Ingredient::Fault(FaultKind::Crash);
        const PARTITION: Ingredient = Ingredient::Fault(FaultKind::Partition);
        assert_eq!(
            sentence(&[CLOCK_JUMP, CRASH], &[CLOCK_JUMP, CRASH], &[]),
            "both the clock jump and the crash are needed; either alone is harmless"
        );
        assert_eq!(
            sentence(&[CLOCK_JUMP], &[CLOCK_JUMP], &[]),
            "the clock jump is needed: without it the property holds"
        );
        assert_eq!(
            sentence(&[CLOCK_JUMP, CRASH], &[CLOCK_JUMP], &[]),
            "the clock jump is needed; the crash is not (without it the property is still violated)"
        );
        assert_eq!(
            sentence(
                &[CLOCK_JUMP, CRASH, PARTITION],
                &[CLOCK_JUMP, CRASH, PARTITION],
                &[]
            ),
            "all of the clock jump, the crash and the partition are needed; without any one of them the property holds"
        );
        assert!(sentence(&[], &[], &[]).starts_with("no fault or mistake"));
        assert!(sentence(&[CRASH], &[], &[]).starts_with("no single ingredient"));
        // A re-check stopped at a limit proves nothing either way.
        assert_eq!(
            sentence(&[CLOCK_JUMP, CRASH], &[CLOCK_JUMP], &[CRASH]),
            "the clock jump is needed: without it the property holds; whether the crash is \
             needed is not known: the check without it stopped at a limit"
        );
        assert_eq!(
            sentence(&[CRASH], &[], &[CRASH]),
            "whether the crash is needed is not known: the check without it stopped at a limit"
        );
    }

    #[test]
    fn a_re_check_stopped_at_a_limit_is_undetermined_not_unnecessary() {
        // The violation is found within about 36 000 states; without `DEL` the scenario
        // holds, which takes about 225 000 states to prove. A limit between the two leaves
        // `DEL` undetermined instead of "not necessary".
        let scenario = crate::scenario::Scenario::load(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("models/redlock-unlock-del-on-failed-acquire.toml"),
        )
        .expect("a valid catalog file");
        let full = Check::new(&scenario).run_with_causes();
        let mutex = full
            .property(crate::scenario::property::MUTUAL_EXCLUSION)
            .unwrap();
        assert!(
            mutex
                .necessary
                .as_ref()
                .unwrap()
                .contains(&Ingredient::Mistake(Mistake::UnlockDel))
        );
        assert!(mutex.undetermined.is_empty());
        let limited = Check::new(&scenario)
            .max_states(full.unique_states + 1_000)
            .run_with_causes();
        let mutex = limited
            .property(crate::scenario::property::MUTUAL_EXCLUSION)
            .unwrap();
        assert_eq!(mutex.verdict, Verdict::Violated);
        assert!(
            !mutex
                .necessary
                .as_ref()
                .unwrap()
                .contains(&Ingredient::Mistake(Mistake::UnlockDel))
        );
        assert!(
            mutex
                .undetermined
                .contains(&Ingredient::Mistake(Mistake::UnlockDel))
        );
    }
}
