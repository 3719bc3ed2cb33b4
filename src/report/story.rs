//! Building a [`Story`] from a checker path, and its text form.

use serde::Serialize;
use stateright::{Checker, Model};

use crate::model::{CLOCK_BASE, Phase, Process, RedlockModel, Step, World, owner_of};
use crate::node::{Availability, Persistence};
use crate::proto::{Failure, NodeId, NodeSet, RoundOutcome, Token, UnlockMode};
use crate::scenario::{Scenario, property};
use crate::storage::StorageOp;
use crate::time::Millis;

/// A counterexample told as a story.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Story {
    /// The scenario's name.
    pub scenario: String,
    /// The property the story breaks.
    pub property: String,
    /// The checker's steps in the path (ticks included), for "shortest: N steps".
    pub steps: usize,
    /// The lane names, clients first (`c1`, `n1`, `storage`, …), for diagrams.
    pub lanes: Vec<String>,
    /// One line per event; ticks that change nothing are left out.
    pub lines: Vec<Line>,
}

/// One event of a [`Story`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Line {
    /// True time, in ticks.
    pub t: u32,
    /// Who acts: `c1`, `n2`, `storage`, `replica`.
    pub actor: String,
    /// Who sent the message the actor handles, if any (draws an arrow in diagrams).
    pub from: Option<String>,
    /// What happens, in words.
    pub action: String,
    /// The actor's own clock reading, when it differs from true time.
    pub clock: Option<i64>,
    /// Whether the event is a fault (a pause, a clock jump, a crash, a loss, a failover).
    pub fault: bool,
    /// The property this event breaks, on the line where it first breaks.
    pub breaks: Option<String>,
    /// What each party believes when the property breaks (on the breaking line only).
    pub detail: Option<String>,
}

fn reading(clock: Millis) -> i64 {
    clock.as_u64() as i64 - CLOCK_BASE
}

fn client(c: usize) -> String {
    format!("c{}", c + 1)
}

fn node(n: usize) -> String {
    format!("n{}", n + 1)
}

fn nodes(set: NodeSet) -> String {
    set.iter()
        .map(|n| node(n.index()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn owner(token: Token) -> String {
    client(owner_of(token))
}

fn op_words(op: &StorageOp) -> String {
    match *op {
        StorageOp::Mark { epoch } => format!("mark (token {epoch})"),
        // With a real token source the token and the lock's epoch may differ: show both.
        // A token not taken yet (a separate counter is asked just before the op lands).
        StorageOp::Read { epoch, fence: 0 } => {
            format!("read (lock epoch {epoch}, token still to take)")
        }
        StorageOp::Read { epoch, fence } if fence != epoch => {
            format!("read (token {fence}, lock epoch {epoch})")
        }
        StorageOp::Read { epoch, .. } => format!("read (token {epoch})"),
        StorageOp::Write {
            epoch,
            fence,
            value,
        } if fence != epoch => format!("write {value} (token {fence}, lock epoch {epoch})"),
        StorageOp::Write { epoch, value, .. } => format!("write {value} (token {epoch})"),
    }
}

/// Whether `property` is broken in `state`.
fn broken(property: &str, state: &World) -> bool {
    match property {
        property::MUTUAL_EXCLUSION => state.believers() > 1,
        property::STORAGE_SAFETY => !state.storage.fenced_order_holds(),
        property::NO_LOST_UPDATE => !state.storage.no_lost_update_holds(),
        _ => false,
    }
}

/// What the parties believe when `property` breaks in `state`.
fn detail(property: &str, state: &World) -> String {
    match property {
        property::MUTUAL_EXCLUSION => {
            let beliefs: Vec<String> = state
                .clients()
                .filter(|c| c.believes)
                .map(|c| {
                    let deadline = match c.phase {
                        Phase::Holding { lease, .. } | Phase::Extending { lease, .. } => reading(lease.deadline),
                        _ => 0,
                    };
                    let late = match state.shape.eps_c {
                        0 => String::new(),
                        eps => format!(" and may run {eps} late"),
                    };
                    format!(
                        "{} believes it holds the lock until its clock reads {deadline} (it reads {}{late})",
                        client(c.index),
                        reading(c.clock)
                    )
                })
                .collect();
            format!("at t={} {}", state.now, beliefs.join(", and "))
        }
        property::STORAGE_SAFETY if state.counters_matter() || state.counter_node_in_play() => {
            format!(
                "the storage applied an op of an older lock epoch after one of lock epoch {}: the tokens did not follow the order of the acquisitions",
                state.storage.max_epoch_applied
            )
        }
        property::STORAGE_SAFETY => format!(
            "the storage applied an op with an older token after one with token {}",
            state.storage.max_epoch_applied
        ),
        property::NO_LOST_UPDATE => format!(
            "the counter reads {} but {} writes were acknowledged: an update is lost",
            state.storage.value, state.storage.acknowledged_writes
        ),
        _ => String::new(),
    }
}

impl Story {
    /// Runs the checker breadth-first on one thread and tells the shortest counterexample of
    /// `property`, or `None` when the property holds (or is not an `always` property).
    pub fn shortest(scenario: &Scenario, property: &str) -> Option<Story> {
        let model = RedlockModel::new(scenario);
        let name = model
            .properties()
            .into_iter()
            .find(|p| p.name == property && p.expectation == stateright::Expectation::Always)?
            .name;
        let checker = model.checker().spawn_bfs().join();
        let path = checker.discovery(name)?;
        Some(Story::from_path(
            checker.model(),
            property,
            &path.into_vec(),
        ))
    }

    /// Tells `path` (states with the step taken from each; the last step is `None`), marking
    /// the first state where `property` breaks.
    pub fn from_path(
        model: &RedlockModel,
        property: &str,
        path: &[(World, Option<Step>)],
    ) -> Story {
        let scenario = model.scenario();
        let mut lanes: Vec<String> = (0..usize::from(scenario.lock.clients))
            .map(client)
            .collect();
        lanes.extend((0..usize::from(scenario.lock.nodes)).map(node));
        if path.iter().any(|(w, _)| w.replica.is_some()) {
            lanes.push("replica".to_owned());
        }
        if scenario.storage.is_some() {
            lanes.push("storage".to_owned());
        }
        let mut lines = Vec::new();
        let mut steps = 0;
        let mut broke = false;
        for pair in path.windows(2) {
            let (before, Some(step)) = &pair[0] else {
                continue;
            };
            let after = &pair[1].0;
            steps += 1;
            let mut told = tell(before, step, after);
            if !broke && broken(property, after) {
                broke = true;
                if told.is_empty() {
                    told.push(line(after.now, "time", None, "time passes".to_owned()));
                }
                let last = told.last_mut().expect("not empty");
                last.breaks = Some(property.to_owned());
                last.detail = Some(detail(property, after));
            }
            lines.extend(told);
        }
        // An `eventually` counterexample breaks nowhere in particular: at its end, the run
        // stops (at the horizon, or with nothing left to do) and nobody ever acquired.
        if !broke
            && property == property::EVENTUALLY_ACQUIRED
            && let (Some(last), Some((end, _))) = (lines.last_mut(), path.last())
        {
            last.breaks = Some(property.to_owned());
            last.detail = Some(format!(
                "the run ends at t={} and no client ever acquired the lock",
                end.now
            ));
        }
        Story {
            scenario: scenario.name.clone(),
            property: property.to_owned(),
            steps,
            lanes,
            lines,
        }
    }

    /// The story as aligned text: a header line, then one line per event.
    pub fn to_text(&self) -> String {
        // `c1` is a client and `n1` a node; `counter` (the separate counter node) is itself.
        let numbered = |l: &Line| l.actor[1..].starts_with(|c: char| c.is_ascii_digit());
        let who = |l: &Line| match l.actor.chars().next() {
            Some('c') if numbered(l) => format!("client {}", l.actor),
            Some('n') if numbered(l) => format!("node {}", l.actor),
            _ => l.actor.clone(),
        };
        let t_width = self
            .lines
            .iter()
            .map(|l| format!("t={}", l.t).len())
            .max()
            .unwrap_or(3);
        let who_width = self
            .lines
            .iter()
            .map(|l| who(l).chars().count())
            .max()
            .unwrap_or(0);
        let mut out = format!(
            "{}: {} violated (shortest counterexample: {} steps)\n",
            self.scenario, self.property, self.steps
        );
        for l in &self.lines {
            let mut text = format!(
                "{:t_width$}  {:who_width$}  {}",
                format!("t={}", l.t),
                who(l),
                l.action
            );
            if let Some(clock) = l.clock {
                text.push_str(&format!(" [{}'s clock reads {clock}]", l.actor));
            }
            if let Some(property) = &l.breaks {
                text.push_str(&format!("  ✗ {property}"));
            }
            out.push_str(text.trim_end());
            out.push('\n');
            if let Some(detail) = &l.detail {
                out.push_str(&format!(
                    "{:width$}{detail}\n",
                    "",
                    width = t_width + 2 + who_width + 2
                ));
            }
        }
        out
    }

    /// The story as a Mermaid `sequenceDiagram`.
    pub fn to_mermaid(&self) -> String {
        super::mermaid::render(self)
    }
}

fn line(t: u32, actor: &str, from: Option<String>, action: String) -> Line {
    Line {
        t,
        actor: actor.to_owned(),
        from,
        action,
        clock: None,
        fault: false,
        breaks: None,
        detail: None,
    }
}

/// The clock reading of `actor` in `w`, if it differs from true time.
fn own_clock(w: &World, actor: &str) -> Option<i64> {
    let (kind, index) = actor.split_at(1);
    let i: usize = index.parse::<usize>().ok()?.checked_sub(1)?;
    let clock = match kind {
        "c" => reading(w.client_clock(i)),
        "n" => reading(w.node_clock(i)),
        _ => return None,
    };
    (clock != i64::from(w.now)).then_some(clock)
}

/// Keys that a step removed from a node without anyone deleting them: expiry.
fn expired_keys(before: &World, after: &World, out: &mut Vec<Line>, why: &str) {
    for n in 0..before.shape.nodes {
        if let (Some(e), None) = (before.nodes[n].state.entry, after.nodes[n].state.entry)
            && after.nodes[n].state.availability == Availability::Up
        {
            out.push(line(
                after.now,
                &node(n),
                None,
                format!("{}'s key expires{why}", owner(e.token)),
            ));
        }
    }
}

/// The lines one step adds: none for a tick that changes nothing.
fn tell(before: &World, step: &Step, after: &World) -> Vec<Line> {
    let t = before.now;
    let shape = &before.shape;
    let mut out = Vec::new();
    match *step {
        Step::Tick => {
            expired_keys(before, after, &mut out, "");
            for n in 0..shape.nodes {
                if matches!(
                    before.nodes[n].state.availability,
                    Availability::Restarting { .. }
                ) && after.nodes[n].state.availability == Availability::Up
                {
                    out.push(line(
                        after.now,
                        &node(n),
                        None,
                        "serves again: its restart delay is over".to_owned(),
                    ));
                }
            }
            for c in 0..shape.clients {
                if before.believes(c) && !after.believes(c) {
                    out.push(line(
                        after.now,
                        &client(c),
                        None,
                        "stops believing: its clock reached the lease's deadline".to_owned(),
                    ));
                }
            }
        }
        Step::Begin(c) => {
            let cu = usize::from(c);
            out.push(line(
                t,
                &client(cu),
                None,
                format!(
                    "begins attempt {}: T1={}, sends SET NX PX {} to {}",
                    after.clients[cu].lock.attempts(),
                    reading(before.client_clock(cu)),
                    shape.params.ttl.as_u64(),
                    nodes(shape.reach[cu])
                ),
            ));
        }
        Step::Deliver {
            client: c,
            node: n,
            early,
        } => {
            let (cu, nu) = (usize::from(c), usize::from(n));
            let token = before.clients[cu].token();
            let state = before.nodes[nu].state;
            let write_back = matches!(
                before.clients[cu].request,
                Some(crate::proto::Request {
                    op: crate::proto::Op::RaiseFence { .. },
                    ..
                })
            );
            let action = if !state.is_serving(before.node_clock(nu)) {
                match state.availability {
                    Availability::Down => "is down: the request fails".to_owned(),
                    _ => "is restarting: the request fails".to_owned(),
                }
            } else if write_back {
                if state.live_entry(before.node_clock(nu)).map(|e| e.token) == Some(token) {
                    format!(
                        "takes {}'s fencing write-back: its counter goes from {} to {}",
                        client(cu),
                        state.counter,
                        after.nodes[nu].state.counter
                    )
                } else {
                    format!(
                        "refuses {}'s fencing write-back: {}'s key is not there",
                        client(cu),
                        client(cu)
                    )
                }
            } else {
                let extending = matches!(before.clients[cu].phase(), Phase::Extending { .. });
                match after.nodes[nu].state.entry {
                    Some(e) if extending && e.token == token && state.entry != Some(e) => format!(
                        "extends {}'s key, now expiring when {}'s clock reads {}",
                        client(cu),
                        node(nu),
                        reading(e.expires_at)
                    ),
                    _ if extending => {
                        format!("refuses {}'s extension: its key is not there", client(cu))
                    }
                    Some(e) if e.token == token && state.entry != Some(e) => {
                        let expired = match state.entry {
                            Some(old) if early => format!(
                                "its clock reads up to {} ticks fast, so {}'s key is already gone; ",
                                shape.eps_n,
                                owner(old.token)
                            ),
                            _ => String::new(),
                        };
                        let counter = if before.counters_matter() {
                            format!(
                                ", and its fencing counter becomes {}",
                                after.nodes[nu].state.counter
                            )
                        } else {
                            String::new()
                        };
                        format!(
                            "{expired}sets {}'s key, expiring when {}'s clock reads {}{counter}",
                            client(cu),
                            node(nu),
                            reading(e.expires_at)
                        )
                    }
                    Some(e) => format!(
                        "refuses {}'s SET: {}'s key is live",
                        client(cu),
                        owner(e.token)
                    ),
                    None => format!("refuses {}'s SET", client(cu)),
                }
            };
            let guarded = after.clients[cu].guarded.contains(NodeId(n))
                && !before.clients[cu].guarded.contains(NodeId(n));
            let action = if guarded {
                format!(
                    "{action}; the clients' guard keeps this yes out of the quorum ({} restarted too recently)",
                    node(nu)
                )
            } else {
                action
            };
            let mut l = line(t, &node(nu), Some(client(cu)), action);
            l.clock = own_clock(before, &node(nu));
            out.push(l);
        }
        Step::Refuse { client: c, node: n } => {
            let l = line(
                t,
                &node(usize::from(n)),
                Some(client(usize::from(c))),
                format!(
                    "refuses {}'s SET: a third client's key is there",
                    client(usize::from(c))
                ),
            );
            out.push(l);
        }
        Step::Lose { client: c, node: n } => {
            let mut l = line(
                t,
                &client(usize::from(c)),
                None,
                format!("its SET to {} is lost in the network", node(usize::from(n))),
            );
            l.fault = true;
            out.push(l);
        }
        Step::Decide(c) => {
            let cu = usize::from(c);
            let clock = before.client_clock(cu);
            let action = match before.clients[cu].phase() {
                Phase::Acquiring(round) => match round.finish(&shape.params, clock) {
                    RoundOutcome::Won(_) if round.needs_write_back(&shape.params) => {
                        let fence = match after.clients[cu].lock.phase() {
                            crate::proto::LockPhase::Acquiring(r) => r.fence,
                            _ => 0,
                        };
                        format!(
                            "wins {} (T2={}); the largest fencing counter among them is {fence}, and it writes {fence} back to every node it reaches before it counts as acquired",
                            nodes(round.tally.applied),
                            reading(clock)
                        )
                    }
                    RoundOutcome::Won(lease) if before.counters_matter() => {
                        let fence = after.clients[cu].lock.lease().map_or(0, |l| l.fence);
                        let how = if round.kind == crate::proto::RoundKind::Fence {
                            "the write-back reached"
                        } else {
                            "acquires"
                        };
                        format!(
                            "{how} {} (T2={}, validity {}, believes until its clock reads {}), fencing token {fence}",
                            nodes(lease.tally.applied),
                            reading(clock),
                            lease.validity.as_u64(),
                            reading(lease.deadline)
                        )
                    }
                    RoundOutcome::Won(lease) => format!(
                        "acquires {} (T2={}, validity {}, believes until its clock reads {})",
                        nodes(lease.tally.applied),
                        reading(clock),
                        lease.validity.as_u64(),
                        reading(lease.deadline)
                    ),
                    RoundOutcome::Lost(failure) => {
                        let why = match failure {
                            Failure::NoQuorum { applied, quorum } => {
                                format!("{applied} of the {quorum} nodes it needs")
                            }
                            Failure::ValidityExhausted { elapsed } => {
                                format!(
                                    "the round took {} ticks: no validity left",
                                    elapsed.as_u64()
                                )
                            }
                            Failure::LeaseExpired => "its lease had expired".to_owned(),
                        };
                        let mut text =
                            format!("fails to acquire ({why}) and unlocks every node it reaches");
                        text.push_str(&deleted_keys(before, after, cu));
                        text
                    }
                },
                Phase::Extending { lease, round, .. } => match round.finish(&shape.params, clock) {
                    RoundOutcome::Won(extended) => format!(
                        "extends its lease on {} (T2={}, believes until its clock reads {})",
                        nodes(extended.tally.applied),
                        reading(clock),
                        reading(extended.deadline)
                    ),
                    RoundOutcome::Lost(_) => format!(
                        "fails to extend (T2={}); keeps believing until its clock reads {}",
                        reading(clock),
                        reading(lease.deadline)
                    ),
                },
                _ => "decides".to_owned(),
            };
            let mut l = line(t, &client(cu), None, action);
            l.clock = own_clock(before, &client(cu));
            out.push(l);
        }
        Step::Extend(c) => {
            let cu = usize::from(c);
            let mut l = line(
                t,
                &client(cu),
                None,
                format!(
                    "starts extending its lease: T1={}, compare-and-pexpire to {}",
                    reading(before.client_clock(cu)),
                    nodes(shape.reach[cu])
                ),
            );
            l.clock = own_clock(before, &client(cu));
            out.push(l);
        }
        Step::Release(c) => {
            let cu = usize::from(c);
            let how = match shape.params.unlock {
                UnlockMode::CompareAndDelete => "compare-and-delete",
                UnlockMode::PlainDel => "DEL",
            };
            out.push(line(
                t,
                &client(cu),
                None,
                format!(
                    "releases with {how} on {}{}",
                    nodes(shape.reach[cu]),
                    deleted_keys(before, after, cu)
                ),
            ));
        }
        Step::Issue(c) => {
            let cu = usize::from(c);
            let clock = reading(before.client_clock(cu));
            let deadline = match before.clients[cu].phase() {
                Phase::Holding { lease, .. } | Phase::Extending { lease, .. } => {
                    reading(lease.deadline)
                }
                _ => 0,
            };
            let action = match after.clients[cu].phase() {
                Phase::Holding { work, .. } if work.pending.is_some() => format!(
                    "checks its lease (clock {clock}, deadline {deadline}) and sends {} to the storage",
                    op_words(work.pending.as_ref().expect("checked above"))
                ),
                _ => format!(
                    "checks its lease (clock {clock}, deadline {deadline}): too late, gives up and releases"
                ),
            };
            let mut l = line(t, &client(cu), None, action);
            l.clock = own_clock(before, &client(cu));
            out.push(l);
        }
        Step::Apply(c) => {
            let cu = usize::from(c);
            let action = match before.clients[cu].phase() {
                Phase::Holding {
                    work:
                        crate::model::Work {
                            pending: Some(op), ..
                        },
                    ..
                } if before.needs_counter(cu, &op) => {
                    let stale = if before.believes(cu) {
                        ""
                    } else {
                        " (its lease is over, but it does not look)"
                    };
                    let l = line(
                        t,
                        "counter",
                        Some(client(cu)),
                        format!(
                            "INCR for {}: token {}{stale}",
                            client(cu),
                            after.fences.taken[cu]
                        ),
                    );
                    out.push(l);
                    return out;
                }
                Phase::Holding {
                    work:
                        crate::model::Work {
                            pending: Some(op), ..
                        },
                    ..
                } => {
                    let op = op.with_fence(before.fence_of(cu));
                    let accepted = after.storage != before.storage
                        || matches!(op, StorageOp::Read { .. })
                            && !matches!(after.clients[cu].phase(), Phase::Done);
                    let stale = if before.believes(cu) {
                        ""
                    } else {
                        ", a stale holder's op"
                    };
                    if accepted {
                        format!(
                            "applies {}'s {}{stale}: counter {}",
                            client(cu),
                            op_words(&op),
                            after.storage.value
                        )
                    } else {
                        format!("rejects {}'s {}{stale}", client(cu), op_words(&op))
                    }
                }
                _ => format!("applies {}'s op", client(cu)),
            };
            out.push(line(t, "storage", Some(client(cu)), action));
        }
        Step::Pause(c) => {
            let cu = usize::from(c);
            let op = match before.clients[cu].phase() {
                Phase::Holding { work, .. } => work.pending.as_ref().map(op_words),
                _ => None,
            };
            let mut l = line(
                t,
                &client(cu),
                None,
                format!(
                    "is paused (a GC pause) while its {} waits to reach the storage",
                    op.unwrap_or_else(|| "op".to_owned())
                ),
            );
            l.fault = true;
            out.push(l);
        }
        Step::Jump { target, ticks } => {
            let (actor, clock) = match target {
                Process::Node(n) => (node(usize::from(n)), after.node_clock(usize::from(n))),
                Process::Client(c) => (client(usize::from(c)), after.client_clock(usize::from(c))),
            };
            let mut l = line(
                t,
                &actor,
                None,
                format!("clock jumps {ticks:+} (it now reads {})", reading(clock)),
            );
            l.fault = true;
            out.push(l);
            expired_keys(
                before,
                after,
                &mut out,
                " at once: the jump moved its clock past the expiry",
            );
        }
        Step::Crash(n) => {
            let nu = usize::from(n);
            let lost = match (before.nodes[nu].state.entry, after.nodes[nu].state.entry) {
                (Some(e), None) => format!(", losing {}'s key", owner(e.token)),
                (Some(e), Some(_)) => format!(", keeping {}'s key", owner(e.token)),
                _ => String::new(),
            };
            let persistence = match shape.persistence {
                Persistence::None => "no persistence",
                Persistence::FsyncAlways => "AOF, fsync always",
                Persistence::FsyncPeriodic => "AOF, fsync every second",
            };
            let restart = if shape.restart {
                if shape.restart_delay.as_u64() == 0 {
                    " and restarts at once".to_owned()
                } else {
                    format!(
                        " and restarts, refusing requests for {} ticks of its clock",
                        shape.restart_delay.as_u64()
                    )
                }
            } else {
                " and stays down".to_owned()
            };
            // The clients' restarted-node guard starts now: say until when it acts, so that a
            // story can show the guard ending too early.
            let guard = match after.nodes[nu].guarded_until {
                Some(until) if shape.restart => format!(
                    "; the clients' guard keeps its yes out of every quorum until its clock reads {}",
                    reading(until)
                ),
                _ => String::new(),
            };
            let mut l = line(
                t,
                &node(nu),
                None,
                format!("crashes ({persistence}){lost}{restart}{guard}"),
            );
            l.fault = true;
            out.push(l);
        }
        Step::CrashCounter => {
            let persistence = match shape.persistence {
                Persistence::None => "no persistence",
                Persistence::FsyncAlways => "AOF, fsync always",
                Persistence::FsyncPeriodic => "AOF, fsync every second",
            };
            let mut l = line(
                t,
                "counter",
                None,
                format!(
                    "crashes ({persistence}) and restarts at once: its counter goes from {} to {}",
                    before.fences.counter_node.counter, after.fences.counter_node.counter
                ),
            );
            l.fault = true;
            out.push(l);
        }
        Step::FsyncCounter => out.push(line(
            t,
            "counter",
            None,
            format!(
                "fsyncs its counter ({}) to disk",
                before.fences.counter_node.counter
            ),
        )),
        Step::Fsync(n) => {
            let nu = usize::from(n);
            let whose = before.nodes[nu]
                .state
                .entry
                .map_or("its key".to_owned(), |e| {
                    format!("{}'s key", owner(e.token))
                });
            out.push(line(t, &node(nu), None, format!("fsyncs {whose} to disk")));
        }
        Step::Replicate => {
            let whose = after
                .replica
                .and_then(|r| r.entry)
                .map_or("no key".to_owned(), |e| format!("{}'s key", owner(e.token)));
            out.push(line(
                t,
                "replica",
                Some(node(0)),
                format!("receives {whose} from n1"),
            ));
        }
        Step::Promote => {
            let lost = match (before.nodes[0].state.entry, after.nodes[0].state.entry) {
                (Some(e), None) => {
                    format!(": {}'s key was not replicated and is gone", owner(e.token))
                }
                _ => String::new(),
            };
            let mut l = line(
                t,
                &node(0),
                None,
                format!("fails; its asynchronous replica is promoted in its place{lost}"),
            );
            l.fault = true;
            out.push(l);
        }
    }
    out
}

/// `", deleting c2's key on n2"` when a release removed another client's key.
fn deleted_keys(before: &World, after: &World, c: usize) -> String {
    let mut victims = Vec::new();
    for n in 0..before.shape.nodes {
        if let (Some(e), None) = (before.nodes[n].state.entry, after.nodes[n].state.entry)
            && owner_of(e.token) != c
        {
            victims.push(format!("{}'s key on {}", owner(e.token), node(n)));
        }
    }
    if victims.is_empty() {
        String::new()
    } else {
        format!(", deleting {}", victims.join(" and "))
    }
}
