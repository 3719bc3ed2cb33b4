//! A path told: the events every step of it tells as it is replayed, and what only the
//! whole path knows (how long a request travelled, which write a stale write erased).

use crate::storage::StorageOp;
use crate::time::Unit;

use super::step::Step;
use super::world::World;
use crate::actor::Actor;
use crate::event::{Event, Moment};

/// The events of every step of `path` (states with the step taken from each; the last step
/// is `None`), one list per step, with what only the whole path shows: which write a write
/// erased ([`Event::UpdateLost`] when a stale write lands after a newer one,
/// [`Event::WriteOnStaleRead`] when a write was computed before another one landed).
pub(crate) fn path_moments(path: &[(World, Option<Step>)]) -> Vec<Vec<Moment>> {
    let mut memory = PathMemory::default();
    let mut steps = Vec::new();
    for pair in path.windows(2) {
        let (before, Some(step)) = &pair[0] else {
            continue;
        };
        let after = &pair[1].0;
        let mut moments = Vec::new();
        let replayed = before.apply(*step, &mut moments);
        debug_assert!(
            replayed.as_ref() == Some(after),
            "a path's step replays to its state"
        );
        memory.note_delays(&mut moments);
        // The loss is told right after the write that caused it.
        if let Some((at, event)) = memory.note_storage(&moments) {
            moments.insert(at + 1, Moment::new(after.now, Actor::Storage, event));
        }
        steps.push(moments);
    }
    steps
}

/// What the path has shown so far that a later step's events need.
#[derive(Default)]
struct PathMemory {
    /// The writes the storage applied so far, in order: (client, epoch).
    writes: Vec<(Actor, u32)>,
    /// For each client, how many writes had landed when its latest read was applied.
    read_after: Vec<(Actor, usize)>,
    /// For each client, when it sent its latest round's requests.
    sent_at: Vec<(Actor, u32)>,
}

impl PathMemory {
    /// Notes when each round was sent, and marks how long each answer's request travelled.
    fn note_delays(&mut self, moments: &mut [Moment]) {
        for m in moments {
            match (&m.event, m.from) {
                (
                    Event::RoundBegan { .. }
                    | Event::NodeAsked { .. }
                    | Event::ExtensionBegan { .. }
                    | Event::WriteBackBegan { .. },
                    _,
                ) => {
                    self.sent_at.retain(|(c, _)| *c != m.actor);
                    self.sent_at.push((m.actor, m.t));
                }
                (
                    Event::KeySet { .. }
                    | Event::KeyExtended { .. }
                    | Event::ExtensionRefused { .. }
                    | Event::SetRefused { .. }
                    | Event::FenceRaised { .. }
                    | Event::FenceRefused { .. }
                    | Event::NotServing { .. },
                    Some(from),
                ) => {
                    m.delayed = self
                        .sent_at
                        .iter()
                        .find(|(c, _)| *c == from)
                        .map(|(_, sent)| m.t.saturating_sub(*sent))
                        .filter(|ticks| *ticks > 0);
                }
                _ => {}
            }
        }
    }

    /// Notes the step's applied reads and writes, and returns the last update a write lost,
    /// with the index of the moment of that write.
    fn note_storage(&mut self, moments: &[Moment]) -> Option<(usize, Event)> {
        let mut lost = None;
        for (at, m) in moments.iter().enumerate() {
            let Event::OpArrived {
                client,
                op,
                applied: true,
                ..
            } = m.event
            else {
                continue;
            };
            match op {
                StorageOp::Read { .. } => {
                    self.read_after.retain(|(c, _)| *c != client);
                    self.read_after.push((client, self.writes.len()));
                }
                StorageOp::Write { epoch, .. } => {
                    let found = self.lost_by_write(client, epoch);
                    lost = found.map(|event| (at, event)).or(lost);
                    self.writes.push((client, epoch));
                }
                StorageOp::Mark { .. } => {}
            }
        }
        lost
    }

    /// The update `client`'s write of `epoch` erases, if any: a newer write it lands after,
    /// or one that landed after the read it was computed from.
    fn lost_by_write(&self, client: Actor, epoch: u32) -> Option<Event> {
        let newest = self.writes.iter().copied().max_by_key(|(_, e)| *e);
        let since_read = self
            .read_after
            .iter()
            .find(|(c, _)| *c == client)
            .map_or(self.writes.len(), |(_, n)| *n);
        match newest {
            Some((newer, newer_epoch)) if newer_epoch > epoch => Some(Event::UpdateLost {
                stale: client,
                stale_epoch: epoch,
                overwritten: newer,
                overwritten_epoch: newer_epoch,
            }),
            _ => self.writes[since_read..]
                .iter()
                .rfind(|(c, _)| *c != client)
                .map(|&(other, other_epoch)| Event::WriteOnStaleRead {
                    writer: client,
                    writer_epoch: epoch,
                    lost: other,
                    lost_epoch: other_epoch,
                }),
        }
    }
}

/// One step in one line (`t=3 c1 checks its lease …`), as the Explorer's pane, its diagram
/// and the `--json` counterexample print it: the step's events joined, or the tick, with
/// amounts of time in `unit`.
pub(crate) fn line(t: u32, step: &Step, moments: &[Moment], unit: Unit) -> String {
    if moments.is_empty() {
        return match step {
            Step::Tick => format!("t={t} time passes to t={}", t + 1),
            _ => format!("t={t} nothing changes"),
        };
    }
    let sentences: Vec<String> = moments.iter().map(|m| m.sentence_in(unit)).collect();
    match step {
        Step::Tick => format!("t={t} time passes to t={}: {}", t + 1, sentences.join("; ")),
        _ => format!("t={t} {}", sentences.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actor::Process;
    use crate::model::Activity;
    use crate::model::RedlockModel;
    use crate::model::Step;
    use crate::scenario::Scenario;

    fn guarded() -> RedlockModel {
        let text = "name = \"t\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
            [lock]\nnodes = 3\nclients = 2\nttl_ticks = 4\ndrift_ticks = 1\n\
            [faults.crashes]\ncount = 1\npersistence = \"none\"\nrestart_delay_ticks = 0\n\
            client_guard_ticks = 3\n[network]\nmessage_loss = 1\n\
            [expect]\n\"mutual exclusion\" = \"holds\"\n";
        RedlockModel::new(&Scenario::from_str("t.toml", text).unwrap())
    }

    fn walk(model: &RedlockModel, steps: &[Step]) -> Vec<(World, Option<Step>)> {
        let mut path = Vec::new();
        let mut world = model.initial();
        for &step in steps {
            let next = world.after(step).expect("enabled");
            path.push((world, Some(step)));
            world = next;
        }
        path.push((world, None));
        path
    }

    fn deliver(client: u8, node: u8) -> Step {
        Step::deliver(client, node)
    }

    /// A restarted node's yes that the clients' guard keeps out of the quorum says so, and the
    /// tick at which the guard runs out says that too.
    #[test]
    fn the_guard_is_told_when_it_refuses_a_vote_and_when_it_ends() {
        let model = guarded();
        let mut steps = vec![Step::Crash(0), Step::Begin(0), deliver(0, 0)];
        steps.extend([Step::Tick; 3]);
        let told = path_moments(&walk(&model, &steps));
        let events: Vec<&Event> = told.iter().flatten().map(|m| &m.event).collect();
        assert!(
            events.contains(&&Event::GuardRefused {
                client: Actor::Client(0)
            }),
            "{events:?}"
        );
        assert!(events.contains(&&Event::GuardEnded), "{events:?}");
        let line = told
            .iter()
            .flatten()
            .find(|m| matches!(m.event, Event::GuardRefused { .. }))
            .map(Moment::sentence)
            .unwrap();
        assert_eq!(
            line,
            "n1 restarted too recently: the clients' guard keeps this yes out of c1's quorum"
        );
    }

    /// An extension request that lands after its round was decided still extends the key,
    /// and is told so (not as a `SET`).
    #[test]
    fn a_late_extension_is_told_as_an_extension() {
        let text = "name = \"t\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
            [lock]\nnodes = 3\nclients = 1\nttl_ticks = 4\ndrift_ticks = 1\nextensions = 1\n\
            [expect]\n\"mutual exclusion\" = \"holds\"\n";
        let model = RedlockModel::new(&Scenario::from_str("t.toml", text).unwrap());
        let steps = [
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            deliver(0, 2),
            Step::Decide(0),
            Step::Tick,
            Step::Extend(0),
            deliver(0, 0),
            deliver(0, 1),
            Step::Decide(0),
            deliver(0, 2),
        ];
        let path = walk(&model, &steps);
        assert!(
            matches!(path[path.len() - 2].0.activity(0), Activity::Holding { .. }),
            "the extension round is decided before the last request lands"
        );
        let told = path_moments(&path);
        let last = told.last().and_then(|moments| moments.first()).unwrap();
        assert!(
            matches!(last.event, Event::KeyExtended { .. }),
            "{:?}",
            last.event
        );
    }

    fn fenced(token_source: &str) -> RedlockModel {
        let text = format!(
            "name = \"t\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
            [lock]\nnodes = 3\nclients = 2\nttl_ticks = 4\ndrift_ticks = 1\n\
            [storage]\nprotection = \"fencing-token\"\ntoken_source = \"{token_source}\"\n\
            [faults.crashes]\ncount = 1\npersistence = \"none\"\nrestart_delay_ticks = 4\n\
            [expect]\n\"mutual exclusion\" = \"holds\"\n"
        );
        RedlockModel::new(&Scenario::from_str("t.toml", &text).unwrap())
    }

    fn sentences(told: &[Vec<Moment>]) -> Vec<String> {
        told.iter().flatten().map(Moment::sentence).collect()
    }

    /// `counter-after-acquire`: the `INCR` is told by the counter node with the token it
    /// hands out, and its crash with the counter before and after.
    #[test]
    fn the_separate_counter_node_is_told_as_counter() {
        let model = fenced("counter-after-acquire");
        let steps = [
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            Step::Decide(0),
            Step::Issue(0),
            Step::Apply(0),
            Step::CrashCounter,
            Step::Apply(0),
        ];
        let told = sentences(&path_moments(&walk(&model, &steps)));
        assert!(
            told.contains(
                &"c1 checks its lease (clock 0, deadline 3): still valid, goes ahead with its read (token still to take, for the 1st lock acquired)"
                    .to_owned()
            ),
            "{told:#?}"
        );
        assert!(
            told.contains(&"counter INCR for c1: token 1".to_owned()),
            "{told:#?}"
        );
        assert!(
            told.contains(
                &"counter crashes (no persistence) and restarts at once: its counter goes from 1 to 0"
                    .to_owned()
            ),
            "{told:#?}"
        );
        assert!(
            told.iter()
                .any(|s| s.starts_with("storage applies c1's read (token 1): ")
                    && s.ends_with("; the counter reads 0")),
            "{told:#?}"
        );
        let crash = path_moments(&walk(&model, &steps))[6][0].clone();
        assert_eq!(crash.actor, Actor::Counter);
        assert!(crash.is_fault());
    }

    /// `lock-quorum`: the `SET` tells the node's counter, the won round tells the write-back,
    /// each node tells whether it took it, and the acquisition tells the token.
    #[test]
    fn the_write_back_and_the_token_are_told() {
        let model = fenced("lock-quorum");
        // c2's SET raised n2's counter once before; c1 then wins n1 (counter 1) and n2
        // (counter 2), so the fence 2 must be written back before c1 counts as acquired.
        let steps = [
            Step::Begin(1),
            deliver(1, 1),
            Step::Tick,
            Step::Decide(1),
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            Step::Decide(0),
            deliver(0, 0),
            deliver(0, 1),
            Step::Decide(0),
        ];
        let told = sentences(&path_moments(&walk(&model, &steps)));
        let expected = [
            "n1 sets c1's key, expiring when n1's clock reads 5, and its fencing counter becomes 1",
            "c1 wins n1 n2 (T2=1); the largest fencing counter among them is 2, and it writes 2 back to every node it reaches before it counts as acquired",
            "n1 takes c1's fencing write-back: its counter goes from 1 to 2",
        ];
        for line in expected {
            assert!(told.contains(&line.to_owned()), "{line}\n{told:#?}");
        }
    }

    /// When the nodes that said yes all returned the same counter, they already stand at the
    /// fence: no write-back round, and the token is that counter.
    #[test]
    fn counters_that_agree_need_no_write_back() {
        let model = fenced("lock-quorum");
        let steps = [
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            Step::Decide(0),
        ];
        let told = sentences(&path_moments(&walk(&model, &steps)));
        assert!(
            told.iter()
                .any(|l| l.starts_with("c1 acquires n1 n2") && l.ends_with("fencing token 1")),
            "{told:#?}"
        );
        assert!(!told.iter().any(|l| l.contains("write-back")), "{told:#?}");
    }

    /// A lost request is told, with whose it was and where it was going.
    #[test]
    fn a_lost_request_is_told() {
        let model = guarded();
        let path = walk(&model, &[Step::Begin(0), Step::Lose { client: 0, node: 2 }]);
        let told = path_moments(&path);
        assert_eq!(
            told[1][0].sentence(),
            "c1's request to n3 is lost in the network"
        );
    }

    /// One client on three nodes (ttl 4, drift 1) with the `extra` tables.
    fn one_client(extra: &str) -> RedlockModel {
        let text = format!(
            "name = \"t\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
             [lock]\nnodes = 3\nclients = 1\nttl_ticks = 4\ndrift_ticks = 1\n{extra}\
             [expect]\n\"mutual exclusion\" = \"holds\"\n"
        );
        RedlockModel::new(&Scenario::from_str("t.toml", &text).unwrap())
    }

    /// A node that may answer anything says yes and keeps nothing, and its story says that
    /// (the state-diff narrator told it as a refusal).
    #[test]
    fn a_node_that_answers_anything_is_told_as_keeping_nothing() {
        let model = one_client("[storage]\nprotection = \"fencing-token\"\n")
            .with_chaos_nodes()
            .expect("eligible for nodes that answer anything");
        let path = walk(&model, &[Step::Begin(0), deliver(0, 1)]);
        let told = path_moments(&path);
        assert_eq!(
            told[1][0].sentence(),
            "n2 answers yes to c1's request and keeps nothing"
        );
        assert!(path[2].0.nodes[1].state.entry.is_none());
    }

    /// A holder whose clock steps back before its deadline believes again, and the story
    /// tells it on the jump.
    #[test]
    fn a_belief_that_returns_with_a_clock_step_is_told() {
        let model = one_client("[faults.clock_jumps]\ntarget = \"client\"\njump_ticks = -3\n");
        let mut steps = vec![
            Step::Begin(0),
            deliver(0, 0),
            deliver(0, 1),
            Step::Decide(0),
        ];
        steps.extend([Step::Tick; 3]);
        steps.push(Step::Jump {
            target: Process::Client(0),
            ticks: -3,
        });
        let path = walk(&model, &steps);
        let told = path_moments(&path);
        let ended = told.iter().flatten().any(|m| m.event == Event::BeliefEnded);
        let jump = told.last().expect("the jump");
        assert!(ended, "{told:?}");
        assert_eq!(jump.len(), 2, "{jump:?}");
        assert_eq!(jump[1].event, Event::BeliefReturned);
        assert!(path.last().expect("a state").0.believes(0));
    }
}
