//! The whole deployment: every figure together, against every fault the user declared.
//!
//! Each family faces the faults its figure answers for (the drift the clock errors and the
//! jump, the restart delay the crash, the margin the pause and the delay). What is deployed
//! is all of them at once, so one file holds every setting and every declared fault (the
//! crash as the user's persistence, with the restart delay or the guard) and must keep every
//! property. A client's backward jump is the one fault left out: a file jumps one clock, and
//! its own family sets the drift against it.

use std::fmt::Write as _;

use anyhow::Result;
use redlock_lab::check::{Engine, Report};
use redlock_lab::scenario::{Scenario, Verdict};

use super::family::{Limits, check};
use super::figure::{Figure, Kind};
use super::texts::{Faults, storage_text};
use super::wrap::wrap;

/// The figures the whole deployment is checked with, in ticks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    drift: u32,
    restart_delay: Option<u32>,
    restart_guard: Option<u32>,
    /// `None`: no margin will do, and the storage checks a fencing token.
    margin: Option<u32>,
}

impl Plan {
    /// The plan `figures` advise, or `None` when one did not settle or there is no drift.
    pub(super) fn of(figures: &[Figure]) -> Option<Plan> {
        if figures.iter().any(|f| f.unsettled().is_some()) {
            return None;
        }
        let value = |kind: Kind| (figures.iter()).find(|f| f.kind == kind)?.value;
        Some(Plan {
            drift: value(Kind::Drift)?,
            restart_delay: value(Kind::RestartDelay),
            restart_guard: value(Kind::RestartGuard),
            margin: value(Kind::Margin),
        })
    }
}

/// How the deployment survives a crash: a delayed start of the master, or the clients' guard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Recovery {
    /// A crashed master starts again only after this many ticks.
    Delay(u32),
    /// A restarted master's yes is kept out of a quorum for this many ticks.
    Guard(u32),
}

/// The whole deployment's file: the check margin's (or fencing's) file, with the crash the
/// user declared recovered as `recovery` says.
pub(super) fn whole_text(faults: &Faults, plan: &Plan, recovery: Recovery) -> String {
    let mut text = match plan.margin {
        Some(margin) => storage_text(faults, plan.drift, margin, "none"),
        None => storage_text(faults, plan.drift, 1, "fencing-token"),
    };
    let (delay, guard) = match recovery {
        Recovery::Delay(delay) => (delay, 0),
        Recovery::Guard(guard) => (0, guard),
    };
    let _ = write!(
        text,
        "\n[faults.crashes]\ncount = 1\npersistence = \"{}\"\nrestart_delay_ticks = {delay}\nclient_guard_ticks = {guard}\n",
        faults.persistence
    );
    text.replacen("name = \"advise-", "name = \"advise-whole-", 1)
}

/// The ways to recover the plan offers, each checked as a whole deployment.
pub(super) fn recoveries(plan: &Plan) -> Vec<Recovery> {
    let delay = plan.restart_delay.map(Recovery::Delay);
    let guard = plan.restart_guard.map(Recovery::Guard);
    delay.into_iter().chain(guard).collect()
}

/// One whole-deployment check: how the crash was recovered, whether every property holds,
/// and what the report says.
#[derive(Clone, Debug)]
pub(super) struct Checked {
    /// The recovery, in words (`the restart delay of 10 s`).
    pub with: String,
    pub holds: bool,
    /// The properties not proved, with their verdicts.
    pub broken: Vec<String>,
    /// How much the check explored (`40970 zones`).
    pub size: String,
}

impl Checked {
    /// Its lines: a plain sentence, the size under `--verbose`.
    pub(super) fn write(&self, out: &mut String, verbose: bool) {
        let text = if self.holds {
            format!(
                "holds: every figure at once, {}, every fault declared",
                self.with
            )
        } else {
            format!(
                "VIOLATED with {}: {} (`--out` writes its file)",
                self.with,
                self.broken.join(", ")
            )
        };
        wrap(out, "whole deployment", 21, &text);
        if verbose {
            let _ = writeln!(out, "{:21}checked in {}", "", self.size);
        }
    }
}

/// Checks the whole deployment, the crash recovered as `recovery` says.
pub(super) fn confirm(
    faults: &Faults,
    plan: &Plan,
    recovery: Recovery,
    limits: &Limits,
) -> Result<Checked> {
    let mut text = whole_text(faults, plan, recovery);
    text.push_str("\n[expect]\n\"lock acquired\" = \"holds\"\n");
    let scenario = Scenario::from_str("advise-whole-deployment.toml", &text)?;
    let with = match recovery {
        Recovery::Delay(d) => format!("the restart delay of {}", faults.scale.show(d)),
        Recovery::Guard(g) => format!("the restart guard of {}", faults.scale.show(g)),
    };
    errln!("advise: checking the whole deployment with {with}...");
    let report = check(&scenario, limits);
    errln!(
        "advise: the whole deployment with {with} took {:.1} s",
        report.seconds
    );
    let broken = broken(&report);
    Ok(Checked {
        with,
        holds: broken.is_empty(),
        broken,
        size: size(&report),
    })
}

/// The properties the report does not prove, with what stopped it when it stopped early.
fn broken(report: &Report) -> Vec<String> {
    (report.properties.iter())
        .filter(|p| p.verdict != Verdict::Holds)
        .map(|p| format!("{} {}", p.name, p.verdict))
        .collect()
}

/// How much the check explored, in the engine's unit.
fn size(report: &Report) -> String {
    let unit = if report.engine == Engine::Zones {
        "zones"
    } else {
        "states"
    };
    format!("{} {unit}", report.unique_states)
}
