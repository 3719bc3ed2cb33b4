//! Human-readable steps and the Explorer's sequence diagram (client and node lanes).

use std::fmt::Write;

use crate::node::Persistence;
use crate::proto::{Failure, RoundOutcome, UnlockMode};
use crate::storage::StorageOp;
use crate::time::Millis;

use super::RedlockModel;
use super::step::{Process, Step};
use super::world::{CLOCK_BASE, Phase, World};

fn reading(clock: Millis) -> i64 {
    clock.as_u64() as i64 - CLOCK_BASE
}

fn failure(f: &Failure) -> String {
    match *f {
        Failure::NoQuorum { applied, quorum } => format!("{applied} of the {quorum} nodes needed"),
        Failure::ValidityExhausted { elapsed } => {
            format!("{} ticks elapsed, no validity left", elapsed.as_u64())
        }
        Failure::LeaseExpired => "the lease had expired".to_owned(),
    }
}

fn persistence(p: Persistence) -> &'static str {
    match p {
        Persistence::None => "no persistence",
        Persistence::FsyncAlways => "fsync always",
        Persistence::FsyncPeriodic => "fsync periodic",
    }
}

fn unlock(u: UnlockMode) -> &'static str {
    match u {
        UnlockMode::CompareAndDelete => "compare-and-delete",
        UnlockMode::PlainDel => "DEL",
    }
}

fn op_name(op: &StorageOp) -> String {
    match *op {
        StorageOp::Mark { epoch } => format!("mark(epoch {epoch})"),
        StorageOp::Read { epoch, fence } if fence != epoch => {
            format!("read(epoch {epoch}, token {fence})")
        }
        StorageOp::Read { epoch, .. } => format!("read(epoch {epoch})"),
        StorageOp::Write {
            epoch,
            fence,
            value,
        } if fence != epoch => format!("write {value} (epoch {epoch}, token {fence})"),
        StorageOp::Write { epoch, value, .. } => format!("write {value} (epoch {epoch})"),
    }
}

/// A short label for the Explorer's list of next steps.
pub(super) fn label(step: &Step) -> String {
    let c = |c: u8| format!("c{}", c + 1);
    match *step {
        Step::Tick => "tick".to_owned(),
        Step::Begin(i) => format!("{} begins a round", c(i)),
        Step::Deliver {
            client,
            node,
            early,
        } => format!(
            "request {} → n{}{}",
            c(client),
            node + 1,
            if early { " (node clock fast)" } else { "" }
        ),
        Step::Lose { client, node } => format!("lose request {} → n{}", c(client), node + 1),
        Step::Refuse { client, node } => {
            format!("phantom key refuses {} at n{}", c(client), node + 1)
        }
        Step::Decide(i) => format!("{} decides its round", c(i)),
        Step::Extend(i) => format!("{} extends", c(i)),
        Step::Release(i) => format!("{} releases", c(i)),
        Step::Issue(i) => format!("{} checks and sends a storage op", c(i)),
        Step::Apply(i) => format!("storage receives {}'s op", c(i)),
        Step::Pause(i) => format!("pause {}", c(i)),
        Step::Jump { target, ticks } => match target {
            Process::Node(n) => format!("n{} clock {ticks:+}", n + 1),
            Process::Client(i) => format!("{} clock {ticks:+}", c(i)),
        },
        Step::Crash(n) => format!("crash n{}", n + 1),
        Step::Fsync(n) => format!("fsync n{}", n + 1),
        Step::CrashCounter => "crash the counter node".to_owned(),
        Step::FsyncCounter => "fsync the counter node".to_owned(),
        Step::Replicate => "replicate".to_owned(),
        Step::Promote => "fail over to the replica".to_owned(),
    }
}

/// `t=<true time> <who> <what>`, computed from the state before the step and after it.
pub(super) fn describe(state: &World, step: &Step) -> String {
    let t = state.now;
    let next = state.after(*step);
    let c_name = |c: u8| format!("c{}", c + 1);
    let what = match *step {
        Step::Tick => format!("time passes to t={}", t + 1),
        Step::Begin(c) => {
            let cu = usize::from(c);
            format!(
                "{} begins attempt {}: T1={} on its clock, sends SET to {}",
                c_name(c),
                state.clients[cu].lock.attempts() + 1,
                reading(state.client_clock(cu)),
                state.shape.reach[cu]
            )
        }
        Step::Deliver {
            client,
            node,
            early,
        } => {
            let n = usize::from(node);
            let after = next.as_ref().map(|w| w.nodes[n].state.entry);
            let token = state.clients[usize::from(client)].token();
            let result = match after {
                Some(Some(e)) if e.token == token && state.nodes[n].state.entry != Some(e) => {
                    format!(
                        "sets the key (expires at {} on n{}'s clock)",
                        reading(e.expires_at),
                        node + 1
                    )
                }
                _ if !state.nodes[n].state.is_serving(state.node_clock(n)) => {
                    "is not serving: fails".to_owned()
                }
                _ => "refuses: a live key exists".to_owned(),
            };
            let early = if early {
                format!(" (its clock read {} ticks fast)", state.shape.eps_n)
            } else {
                String::new()
            };
            format!(
                "n{} gets {}'s SET{early} and {result}",
                node + 1,
                c_name(client)
            )
        }
        Step::Lose { client, node } => format!("{}'s SET to n{} is lost", c_name(client), node + 1),
        Step::Refuse { client, node } => format!(
            "n{} refuses {}'s SET: another client's key is there",
            node + 1,
            c_name(client)
        ),
        Step::Decide(c) => {
            let cu = usize::from(c);
            let clock = state.client_clock(cu);
            match state.clients[cu].phase() {
                Phase::Acquiring(round) => match round.finish(&state.shape.params, clock) {
                    RoundOutcome::Won(lease) => format!(
                        "{} reads T2={} and acquires {}: validity {}, believes until its clock reads {}",
                        c_name(c),
                        reading(clock),
                        lease.tally.applied,
                        lease.validity.as_u64(),
                        reading(lease.deadline)
                    ),
                    RoundOutcome::Lost(f) => format!(
                        "{} reads T2={} and fails ({}); unlocks every node it reaches",
                        c_name(c),
                        reading(clock),
                        failure(&f)
                    ),
                },
                Phase::Extending { lease, round, .. } => {
                    match round.finish(&state.shape.params, clock) {
                        RoundOutcome::Won(extended) => format!(
                            "{} reads T2={} and extends on {}: believes until its clock reads {}",
                            c_name(c),
                            reading(clock),
                            extended.tally.applied,
                            reading(extended.deadline)
                        ),
                        RoundOutcome::Lost(f) => format!(
                            "{} reads T2={} and fails to extend ({}); keeps believing until {}",
                            c_name(c),
                            reading(clock),
                            failure(&f),
                            reading(lease.deadline)
                        ),
                    }
                }
                _ => format!("{} decides", c_name(c)),
            }
        }
        Step::Extend(c) => format!(
            "{} starts extending its lease: T1={} on its clock, compare-and-pexpire to {}",
            c_name(c),
            reading(state.client_clock(usize::from(c))),
            state.shape.reach[usize::from(c)]
        ),
        Step::Release(c) => format!(
            "{} releases ({} on {})",
            c_name(c),
            unlock(state.shape.params.unlock),
            state.shape.reach[usize::from(c)]
        ),
        Step::Issue(c) => {
            let cu = usize::from(c);
            match next.as_ref().map(|w| w.clients[cu].phase()) {
                Some(Phase::Holding { work, .. }) if work.pending.is_some() => format!(
                    "{} checks its lease (clock {}) and sends {}",
                    c_name(c),
                    reading(state.client_clock(cu)),
                    op_name(work.pending.as_ref().expect("checked above"))
                ),
                _ => format!(
                    "{} checks its lease (clock {}): too late, gives up and releases",
                    c_name(c),
                    reading(state.client_clock(cu))
                ),
            }
        }
        Step::Apply(c) => {
            let cu = usize::from(c);
            match state.clients[cu].phase() {
                Phase::Holding {
                    work:
                        super::Work {
                            pending: Some(op), ..
                        },
                    ..
                } if state.needs_counter(cu, &op) => format!(
                    "{} takes token {} from the counter node (INCR)",
                    c_name(c),
                    next.as_ref().map_or(0, |w| w.fences.taken[cu])
                ),
                Phase::Holding {
                    work:
                        super::Work {
                            pending: Some(op), ..
                        },
                    ..
                } => {
                    let op = op.with_fence(state.fence_of(cu));
                    let before = state.storage;
                    let after = next.as_ref().map(|w| w.storage).unwrap_or(before);
                    let accepted = after != before || matches!(op, StorageOp::Read { .. });
                    format!(
                        "storage {} {}'s {} (counter {})",
                        if accepted { "applies" } else { "rejects" },
                        c_name(c),
                        op_name(&op),
                        after.value
                    )
                }
                _ => format!("storage applies {}'s op", c_name(c)),
            }
        }
        Step::Pause(c) => format!("{} is paused while its op waits", c_name(c)),
        Step::Jump { target, ticks } => match target {
            Process::Node(n) => format!("n{}'s clock jumps {ticks:+}", n + 1),
            Process::Client(c) => format!("{}'s clock jumps {ticks:+}", c_name(c)),
        },
        Step::Crash(n) => format!(
            "n{} crashes ({}){}",
            n + 1,
            persistence(state.shape.persistence),
            if state.shape.restart {
                format!(
                    " and restarts, serving after {} ticks of its clock",
                    state.shape.restart_delay.as_u64()
                )
            } else {
                " and stays down".to_owned()
            }
        ),
        Step::Fsync(n) => format!("n{} fsyncs its key", n + 1),
        Step::CrashCounter => format!(
            "the counter node crashes ({}) and restarts with counter {}",
            persistence(state.shape.persistence),
            next.as_ref().map_or(0, |w| w.fences.counter_node.counter)
        ),
        Step::FsyncCounter => "the counter node fsyncs its counter".to_owned(),
        Step::Replicate => "the master's key reaches the replica".to_owned(),
        Step::Promote => "the master fails; the replica is promoted".to_owned(),
    };
    format!("t={t} {what}")
}

const LANE_GAP: usize = 90;
const ROW_GAP: usize = 26;
const TOP: usize = 40;

/// A sequence diagram of a path: one lane per client and node, one row per step.
pub(super) fn sequence_diagram(model: &RedlockModel, path: &[(World, Option<Step>)]) -> String {
    let shape = &model.shape;
    let lanes = shape.clients + shape.nodes;
    let client_x = |c: usize| 60 + c * LANE_GAP;
    let node_x = |n: usize| 60 + (shape.clients + n) * LANE_GAP;
    // Room for the longest label (about 7 px per character at font size 12).
    let label_width = path
        .iter()
        .filter_map(|(state, step)| step.map(|s| describe(state, &s).chars().count() * 7))
        .max()
        .unwrap_or(0);
    let width = 120 + lanes * LANE_GAP + label_width.max(260);
    let height = TOP + (path.len() + 1) * ROW_GAP;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg version='1.1' baseProfile='full' width='{width}' height='{height}' viewBox='0 0 {width} {height}' xmlns='http://www.w3.org/2000/svg'>\
         <defs><marker id='arrow' markerWidth='12' markerHeight='10' refX='12' refY='5' orient='auto'><polygon points='0 0, 12 5, 0 10'/></marker></defs>"
    );
    for c in 0..shape.clients {
        let x = client_x(c);
        let _ = write!(
            svg,
            "<line x1='{x}' y1='{TOP}' x2='{x}' y2='{height}' class='svg-actor-timeline' stroke='black'/>\
             <text x='{x}' y='{}' text-anchor='middle' class='svg-actor-label'>c{}</text>",
            TOP - 10,
            c + 1
        );
    }
    for n in 0..shape.nodes {
        let x = node_x(n);
        let _ = write!(
            svg,
            "<line x1='{x}' y1='{TOP}' x2='{x}' y2='{height}' stroke='gray'/>\
             <text x='{x}' y='{}' text-anchor='middle'>n{}</text>",
            TOP - 10,
            n + 1
        );
    }
    let text_x = 80 + lanes * LANE_GAP;
    for (i, (state, step)) in path.iter().enumerate() {
        let Some(step) = step else { continue };
        let y = TOP + (i + 1) * ROW_GAP;
        let label = escape(&describe(state, step));
        match *step {
            Step::Tick => {
                let _ = write!(
                    svg,
                    "<line x1='20' y1='{y}' x2='{}' y2='{y}' stroke='#bbb' stroke-dasharray='4'/>",
                    text_x - 10
                );
            }
            Step::Deliver { client, node, .. } => {
                let _ = write!(
                    svg,
                    "<line x1='{}' y1='{}' x2='{}' y2='{y}' stroke='black' marker-end='url(#arrow)' class='svg-event-line'/>",
                    client_x(usize::from(client)),
                    y - ROW_GAP / 2,
                    node_x(usize::from(node))
                );
            }
            _ => {
                let x = match *step {
                    Step::Begin(c)
                    | Step::Extend(c)
                    | Step::Decide(c)
                    | Step::Release(c)
                    | Step::Issue(c)
                    | Step::Apply(c)
                    | Step::Pause(c)
                    | Step::Lose { client: c, .. }
                    | Step::Refuse { client: c, .. }
                    | Step::Jump {
                        target: Process::Client(c),
                        ..
                    } => client_x(usize::from(c)),
                    Step::Jump {
                        target: Process::Node(n),
                        ..
                    }
                    | Step::Crash(n)
                    | Step::Fsync(n) => node_x(usize::from(n)),
                    _ => node_x(0),
                };
                let fault = matches!(
                    step,
                    Step::Jump { .. }
                        | Step::Crash(_)
                        | Step::CrashCounter
                        | Step::Pause(_)
                        | Step::Lose { .. }
                        | Step::Promote
                );
                let fill = if fault { "red" } else { "steelblue" };
                let _ = write!(svg, "<circle cx='{x}' cy='{y}' r='6' fill='{fill}'/>");
            }
        }
        let _ = write!(
            svg,
            "<text x='{text_x}' y='{}' font-size='12'>{label}</text>",
            y + 4
        );
    }
    let _ = write!(svg, "</svg>");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
