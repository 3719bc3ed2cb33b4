//! The Explorer's step labels and its sequence diagram (client and node lanes), whose rows
//! are told from the model's events (see the `event` module).

use std::fmt::Write;

use crate::proto::Contact;
use crate::storage::TokenSource;
use crate::time::Unit;

use super::moments::{self, path_moments};
use super::shape::Shape;
use super::step::Step;
use super::world::World;
use crate::actor::Process;
use crate::event::Moment;

/// A short label for the Explorer's list of next steps.
pub(super) fn label(shape: &Shape, step: &Step) -> String {
    let c = |c: u8| format!("c{}", c + 1);
    match *step {
        Step::Tick => "tick".to_owned(),
        Step::Begin(i) => format!("{} begins a round", c(i)),
        Step::Deliver {
            client,
            node,
            early,
            acked,
        } => format!(
            "request {} → n{}{}{}",
            c(client),
            node + 1,
            if early { " (node clock fast)" } else { "" },
            acked_words(shape, acked)
        ),
        Step::Lose { client, node } => format!("lose request {} → n{}", c(client), node + 1),
        Step::LateRelease { client, node } => {
            format!("{}'s earlier release → n{} (late)", c(client), node + 1)
        }
        Step::Refuse { client, node } => {
            format!("phantom key refuses {} at n{}", c(client), node + 1)
        }
        // A sequential round's client hands the core one answer (or a timeout) at a time,
        // and most such steps ask the next node rather than decide.
        Step::Decide(i) if shape.client_params[usize::from(i)].contact == Contact::Sequential => {
            format!(
                "{} takes its answer or timeout (asks the next node, or decides)",
                c(i)
            )
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
        Step::CrashClient(i) => format!("crash {}", c(i)),
        Step::PartitionClient(i) => format!("cut {} off", c(i)),
        Step::Fsync(n) => format!("fsync n{}", n + 1),
        Step::CrashCounter => "crash the counter node".to_owned(),
        Step::FsyncCounter => "fsync the counter node".to_owned(),
        Step::Replicate(r) if shape.every_node => format!("replicate n{}", r + 1),
        Step::Promote(r) if shape.every_node => format!("fail n{} over to its replica", r + 1),
        Step::Replicate(_) if shape.replicas <= 1 => "replicate".to_owned(),
        Step::Replicate(r) => format!("replicate to replica{}", r + 1),
        Step::Promote(_) if shape.replicas <= 1 => "fail over to the replica".to_owned(),
        Step::Promote(r) => format!("fail over to replica{}", r + 1),
    }
}

/// Which replicas a write waits for, when that was the adversary's choice (more replicas
/// than `WAIT` counts): ` (WAIT counts replica1)`.
fn acked_words(shape: &Shape, acked: u8) -> String {
    if acked == 0 || shape.failover_wait >= shape.replicas {
        return String::new();
    }
    let names: Vec<String> = (0..8)
        .filter(|r| acked & 1 << r != 0)
        .map(|r| format!("replica{}", r + 1))
        .collect();
    format!(" (WAIT counts {})", names.join(" and "))
}

const LANE_GAP: usize = 90;
const ROW_GAP: usize = 26;
const TOP: usize = 40;

/// A sequence diagram of a path: one lane per client and node (and the separate counter node
/// of `counter-after-acquire`), one row per step.
pub(super) fn sequence_diagram(
    shape: &Shape,
    path: &[(World, Option<Step>)],
    unit: Unit,
) -> String {
    let lanes = Lanes::of(shape);
    // One label per step, told from the path's events like every other rendering.
    let told = path_moments(path);
    let labels: Vec<String> = path
        .iter()
        .filter_map(|(state, step)| step.map(|s| (state.now, s)))
        .zip(&told)
        .map(|((t, step), moments)| moments::line(t, &step, moments, unit))
        .collect();
    // Room for the longest label (about 7 px per character at font size 12).
    let label_width = labels
        .iter()
        .map(|l| l.chars().count() * 7)
        .max()
        .unwrap_or(0);
    let width = 120 + lanes.count * LANE_GAP + label_width.max(260);
    let rows = rows(path, &told);
    let height = TOP + (rows.len() + 2) * ROW_GAP;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg version='1.1' baseProfile='full' width='{width}' height='{height}' viewBox='0 0 {width} {height}' xmlns='http://www.w3.org/2000/svg'>\
         <defs><marker id='arrow' markerWidth='12' markerHeight='10' refX='12' refY='5' orient='auto'><polygon points='0 0, 12 5, 0 10'/></marker></defs>"
    );
    lanes.draw(&mut svg, height);
    let text_x = 80 + lanes.count * LANE_GAP;
    for (row, &(i, quiet)) in rows.iter().enumerate() {
        let Some(step) = path[i].1 else { continue };
        let y = TOP + (row + 1) * ROW_GAP;
        let label = if quiet > 1 {
            let to = path[i].0.now + quiet as u32;
            format!(
                "t={} time passes to t={to} ({} where nothing happens)",
                path[i].0.now,
                unit.amount(quiet as u64)
            )
        } else {
            labels[i].clone()
        };
        let fault = told[i].iter().any(Moment::is_fault);
        lanes.draw_step(&mut svg, step, y, text_x, fault);
        let _ = write!(
            svg,
            "<text x='{text_x}' y='{}' font-size='12'>{}</text>",
            y + 4,
            escape(&label)
        );
    }
    let _ = write!(svg, "</svg>");
    svg
}

/// The shortest stretch of quiet ticks drawn as one row, here and in the timeline's list of
/// steps, so both fold the same stretches.
pub(crate) const QUIET_RUN: usize = 20;

/// The diagram's rows: each step's index in `path`, and how many quiet ticks the row stands
/// for (1 for a step of its own). A long stretch where nothing but time happens (a run in
/// milliseconds) is one row, so the diagram stays a picture of what happened.
fn rows(path: &[(World, Option<Step>)], told: &[Vec<Moment>]) -> Vec<(usize, usize)> {
    let quiet = |i: usize| path[i].1 == Some(Step::Tick) && told[i].is_empty();
    let steps = told.len();
    let mut rows = Vec::new();
    let mut i = 0;
    while i < steps {
        let run = (i..steps).take_while(|&j| quiet(j)).count();
        if run >= QUIET_RUN {
            rows.push((i, run));
            i += run;
        } else {
            rows.push((i, 1));
            i += 1;
        }
    }
    rows
}

/// Where the diagram's lanes lie: the clients', then the nodes', then the counter node's.
struct Lanes {
    clients: usize,
    nodes: usize,
    /// Whether the counter node has a lane (`counter-after-acquire`).
    counter_lane: bool,
    /// How many lanes there are.
    count: usize,
}

impl Lanes {
    fn of(shape: &Shape) -> Lanes {
        let counter_lane = shape.token_source == TokenSource::CounterAfterAcquire;
        Lanes {
            clients: shape.clients,
            nodes: shape.nodes,
            counter_lane,
            count: shape.clients + shape.nodes + usize::from(counter_lane),
        }
    }

    fn client_x(&self, c: usize) -> usize {
        60 + c * LANE_GAP
    }

    fn node_x(&self, n: usize) -> usize {
        60 + (self.clients + n) * LANE_GAP
    }

    fn counter_x(&self) -> usize {
        60 + (self.clients + self.nodes) * LANE_GAP
    }

    /// Every lane's line and name, down to `height`.
    fn draw(&self, svg: &mut String, height: usize) {
        for c in 0..self.clients {
            let x = self.client_x(c);
            let _ = write!(
                svg,
                "<line x1='{x}' y1='{TOP}' x2='{x}' y2='{height}' class='svg-actor-timeline' stroke='black'/>\
                 <text x='{x}' y='{}' text-anchor='middle' class='svg-actor-label'>c{}</text>",
                TOP - 10,
                c + 1
            );
        }
        for n in 0..self.nodes {
            let x = self.node_x(n);
            let _ = write!(
                svg,
                "<line x1='{x}' y1='{TOP}' x2='{x}' y2='{height}' stroke='gray'/>\
                 <text x='{x}' y='{}' text-anchor='middle'>n{}</text>",
                TOP - 10,
                n + 1
            );
        }
        if self.counter_lane {
            let counter_x = self.counter_x();
            let _ = write!(
                svg,
                "<line x1='{counter_x}' y1='{TOP}' x2='{counter_x}' y2='{height}' stroke='gray'/>\
                 <text x='{counter_x}' y='{}' text-anchor='middle'>{}</text>",
                TOP - 10,
                crate::actor::Actor::Counter
            );
        }
    }

    /// One step's mark at row `y`: a dashed line for a tick, an arrow for a delivery, else a
    /// dot on the actor's lane (red for a fault).
    fn draw_step(&self, svg: &mut String, step: Step, y: usize, text_x: usize, fault: bool) {
        match step {
            Step::Tick => {
                let _ = write!(
                    svg,
                    "<line x1='20' y1='{y}' x2='{}' y2='{y}' stroke='#bbb' stroke-dasharray='4'/>",
                    text_x - 10
                );
            }
            Step::Deliver { client, node, .. } | Step::LateRelease { client, node } => {
                let _ = write!(
                    svg,
                    "<line x1='{}' y1='{}' x2='{}' y2='{y}' stroke='black' marker-end='url(#arrow)' class='svg-event-line'/>",
                    self.client_x(usize::from(client)),
                    y - ROW_GAP / 2,
                    self.node_x(usize::from(node))
                );
            }
            _ => {
                let x = self.actor_x(step);
                let fill = if fault { "red" } else { "steelblue" };
                let _ = write!(svg, "<circle cx='{x}' cy='{y}' r='6' fill='{fill}'/>");
            }
        }
    }

    /// The lane of the step's actor.
    fn actor_x(&self, step: Step) -> usize {
        match step {
            Step::Begin(c)
            | Step::Extend(c)
            | Step::Decide(c)
            | Step::Release(c)
            | Step::Issue(c)
            | Step::Apply(c)
            | Step::Pause(c)
            | Step::CrashClient(c)
            | Step::PartitionClient(c)
            | Step::Lose { client: c, .. }
            | Step::Refuse { client: c, .. }
            | Step::Jump {
                target: Process::Client(c),
                ..
            } => self.client_x(usize::from(c)),
            Step::Jump {
                target: Process::Node(n),
                ..
            }
            | Step::Crash(n)
            | Step::Fsync(n) => self.node_x(usize::from(n)),
            Step::CrashCounter | Step::FsyncCounter => self.counter_x(),
            _ => self.node_x(0),
        }
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
