//! A zone counterexample told as the discrete model's run, so a file only the zone engine
//! takes gets the same story, diagrams and JSON as any other.
//!
//! The zone engine's concrete run ([`TimedRun`]) gives every step a whole-number time, and
//! its steps are the model's: so it is replayed through [`RedlockModel`] one tick at a time
//! (the model's states do not depend on the constants' size; only the search does). Where
//! the model offers a choice the zone step does not name (a node reading its clock exactly or
//! `ε_n` fast), the one that gives the zone step's answer is taken.

use crate::model::{Activity, Mode, RedlockModel, Step, World};
use crate::scenario::Scenario;
use crate::zones::{TimedRun, ZoneStep};

/// `run` as the discrete model's steps, ticks included, up to the instant the property
/// breaks; `None` if the model refuses a step (a test holds every catalog run to it).
pub(super) fn model_steps(scenario: &Scenario, run: &TimedRun) -> Option<Vec<Step>> {
    let model = RedlockModel::with_mode(scenario, Mode::Safety);
    // The zone engine refuses a list of sizes, so its jumps are all of the one size.
    let jump = scenario
        .faults
        .clock_jumps
        .as_ref()
        .and_then(|j| j.jump_ticks.single())
        .unwrap_or(0);
    let mut state = model.initial();
    let mut steps = Vec::new();
    let mut now = 0;
    for timed in &run.steps {
        state = ticks(state, timed.at - now, &mut steps)?;
        now = timed.at;
        let (step, next) = candidates(timed.step, jump).into_iter().find_map(|step| {
            let next = state.after(step)?;
            answers(timed.step, &state, &next).then_some((step, next))
        })?;
        steps.push(step);
        state = next;
    }
    ticks(state, run.broken_at - now, &mut steps)?;
    Some(steps)
}

/// `count` ticks from `state`.
fn ticks(mut state: World, count: i64, steps: &mut Vec<Step>) -> Option<World> {
    for _ in 0..count {
        state = state.after(Step::Tick)?;
        steps.push(Step::Tick);
    }
    Some(state)
}

/// The model's steps that may be `step`.
fn candidates(step: ZoneStep, jump: i32) -> Vec<Step> {
    let c = |i: usize| i as u8;
    match step {
        ZoneStep::Begin(i) => vec![Step::Begin(c(i))],
        ZoneStep::Deliver { client, node, .. } => [false, true]
            .into_iter()
            // The zone engine refuses `[failover]`, so no write waits for a replica.
            .map(|early| Step::Deliver {
                client: c(client),
                node: c(node),
                early,
                acked: 0,
            })
            .collect(),
        ZoneStep::Refuse { client, node } => vec![Step::Refuse {
            client: c(client),
            node: c(node),
        }],
        ZoneStep::Decide { client, .. } => vec![Step::Decide(c(client))],
        ZoneStep::Release(i) => vec![Step::Release(c(i))],
        ZoneStep::Jump(n) => vec![Step::Jump {
            target: crate::actor::Process::node(n),
            ticks: jump,
        }],
        ZoneStep::ClientJump { client, .. } => vec![Step::Jump {
            target: crate::actor::Process::client(client),
            ticks: jump,
        }],
        ZoneStep::Crash(n) => vec![Step::Crash(c(n))],
        ZoneStep::Fsync(n) => vec![Step::Fsync(c(n))],
        ZoneStep::Issue { client, .. } | ZoneStep::GiveUp(client) => vec![Step::Issue(c(client))],
        ZoneStep::Land { client, .. } => vec![Step::Apply(c(client))],
        ZoneStep::Pause(i) => vec![Step::Pause(c(i))],
    }
}

/// Whether the model's move from `before` to `after` gave the answer the zone `step` names.
fn answers(step: ZoneStep, before: &World, after: &World) -> bool {
    match step {
        ZoneStep::Deliver {
            client,
            node,
            applied,
            counts,
        } => {
            let entry = |w: &World| w.nodes[node].state.entry;
            let set = entry(after).is_some() && entry(after) != entry(before);
            let guarded = after.clients[client]
                .guarded
                .iter()
                .any(|n| n.index() == node);
            set == applied && (!applied || guarded != counts)
        }
        ZoneStep::Decide { client, won } => {
            let holds = matches!(after.clients[client].activity(), Activity::Holding { .. });
            holds == won
        }
        _ => true,
    }
}
