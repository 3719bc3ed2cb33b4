//! Every catalog story is held against the states it tells, both ways: an event that says a
//! node refused, set, expired or kept a key must match what the model's step did to that
//! node, and every key and belief a step changed must be told by one of its events.
//!
//! The stories are told from the model's steps; this test is what catches a telling that
//! disagrees with the step it tells (a request told as failed that the node served).

use std::path::Path;

use crate::actor::Actor;
use crate::model::{Event, Moment, World, path_moments};
use crate::scenario::{Scenario, Verdict};

use super::Check;
use super::story_path::story_path;

/// Node `n`'s index for a node actor.
fn node_of(actor: Actor) -> Option<usize> {
    match actor {
        Actor::Node(n) => Some(usize::from(n)),
        _ => None,
    }
}

fn client_of(actor: Actor) -> Option<usize> {
    match actor {
        Actor::Client(c) => Some(usize::from(c)),
        _ => None,
    }
}

/// A key told as set on node `n` for `client` is that client's key there afterwards.
fn check_key_set(
    m: &Moment,
    client: Actor,
    n: usize,
    after: &World,
    set: &mut [u64],
) -> Result<(), String> {
    let c = client_of(client).ok_or("a key set for no client")?;
    let token = after.clients[c].token();
    if after.nodes[n].state.entry.map(|e| e.token) != Some(token) {
        return Err(format!(
            "{} is told, but the node does not hold that key",
            m.sentence()
        ));
    }
    set[c] |= 1 << n;
    Ok(())
}

/// What `moment` claims about node keys, checked against the step's two states; `set` holds,
/// per client, the nodes that told they set its key since its latest round began.
fn check_moment(m: &Moment, before: &World, after: &World, set: &mut [u64]) -> Result<(), String> {
    let key = |w: &World, n: usize| w.nodes[n].state.entry;
    let node = node_of(m.actor);
    match (&m.event, node) {
        (
            Event::NotServing { .. }
            | Event::SetRefused { .. }
            | Event::ExtensionRefused { .. }
            | Event::FenceRefused { .. }
            | Event::ReleaseServed { deleted: false, .. },
            Some(n),
        ) if key(before, n) != key(after, n) => {
            return Err(format!(
                "{} is told as refused, but the node's key changed",
                m.sentence()
            ));
        }
        (Event::KeySet { client, .. }, Some(n)) => check_key_set(m, *client, n, after, set)?,
        (Event::FenceRaised { client, .. }, Some(n)) => {
            let c = client_of(*client).ok_or("a write-back of no client")?;
            set[c] |= 1 << n;
        }
        (
            Event::RoundBegan { .. } | Event::ExtensionBegan { .. } | Event::WriteBackBegan { .. },
            _,
        ) => {
            if let Some(c) = client_of(m.actor) {
                set[c] = 0;
            }
        }
        (Event::Acquired { on, .. }, _) => {
            let c = client_of(m.actor).ok_or("an acquisition by no client")?;
            if on.0.iter().any(|n| set[c] & (1 << n.index()) == 0) {
                return Err(format!(
                    "{} names nodes that did not tell they applied its request",
                    m.sentence()
                ));
            }
        }
        (Event::KeyExpired { .. }, Some(n))
            if key(before, n).is_none() || key(after, n).is_some() =>
        {
            return Err(format!(
                "{} is told, but no key went from the node",
                m.sentence()
            ));
        }
        (
            Event::Crashed {
                key: Some((_, survived)),
                ..
            },
            Some(n),
        ) if key(after, n).is_some() != *survived => {
            return Err(format!(
                "{} is told, but the node's key says otherwise",
                m.sentence()
            ));
        }
        _ => {}
    }
    Ok(())
}

/// Whether the events of one step account for every key and belief the step changed: a key
/// that appears is told as set, one that goes as expired, deleted, lost in a crash or a
/// failover (or released by its owner, on a node its release names as freed), one whose expiry moves as extended; a belief that
/// starts, ends or returns is told as such. This is what catches a step that does something
/// its story leaves out.
fn check_step(moments: &[Moment], before: &World, after: &World) -> Result<(), String> {
    for n in 0..before.shape.nodes {
        let (was, is) = (before.nodes[n].state.entry, after.nodes[n].state.entry);
        if was == is {
            continue;
        }
        let on_node = |m: &&Moment| node_of(m.actor) == Some(n);
        let set = || {
            moments
                .iter()
                .filter(on_node)
                .any(|m| matches!(m.event, Event::KeySet { .. } | Event::Promoted { .. }))
        };
        let told = match (was, is) {
            (None, Some(_)) => set(),
            (Some(w), Some(e)) if w.token != e.token => set(),
            (Some(_), Some(_)) => moments.iter().filter(on_node).any(|m| {
                matches!(
                    m.event,
                    Event::KeyExtended { .. } | Event::Promoted { .. } | Event::Crashed { .. }
                )
            }),
            (Some(e), None) => {
                let owner = Actor::client(before.key_owner(n, e.token));
                moments.iter().any(|m| match &m.event {
                    Event::KeyExpired { .. }
                    | Event::Crashed { .. }
                    | Event::Promoted { .. }
                    | Event::ReleaseServed { deleted: true, .. } => node_of(m.actor) == Some(n),
                    Event::Released { deleted, freed, .. }
                    | Event::NotAcquired { deleted, freed, .. } => {
                        let own = m.actor == owner && freed.contains(Actor::node(n));
                        own || deleted.contains(&(owner, Actor::node(n)))
                    }
                    _ => false,
                })
            }
            (None, None) => true,
        };
        if !told {
            return Err(format!(
                "n{}'s key changed and no event of the step says so",
                n + 1
            ));
        }
    }
    for c in 0..before.shape.clients {
        let (was, is) = (before.believes(c), after.believes(c));
        let actor = Actor::client(c);
        let told = was == is
            || moments.iter().any(|m| {
                m.actor == actor
                    && match m.event {
                        Event::Acquired { .. } | Event::BeliefReturned => is,
                        Event::BeliefEnded
                        | Event::Released { .. }
                        | Event::ClientCrashed { .. } => !is,
                        _ => false,
                    }
            });
        if !told {
            return Err(format!(
                "c{}'s belief changed and no event of the step says so",
                c + 1
            ));
        }
    }
    Ok(())
}

#[test]
fn every_catalog_story_tells_what_its_steps_did() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut files: Vec<_> = std::fs::read_dir(&models)
        .expect("the models folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut stories = 0;
    let mut wrong = Vec::new();
    for file in files {
        let scenario = Scenario::load(&file).expect("a catalog scenario");
        let report = Check::new(&scenario).run();
        for p in report
            .properties
            .iter()
            .filter(|p| p.verdict == Verdict::Violated)
        {
            let Some(told) = story_path(&scenario, &report, &p.name) else {
                continue;
            };
            stories += 1;
            let path = &told.path;
            let mut set = vec![0u64; usize::from(scenario.lock.clients)];
            for (moments, pair) in path_moments(path).iter().zip(path.windows(2)) {
                if let Err(why) = check_step(moments, &pair[0].0, &pair[1].0) {
                    wrong.push(format!("{} ({}): {why}", scenario.name, p.name));
                }
                for m in moments {
                    if let Err(why) = check_moment(m, &pair[0].0, &pair[1].0, &mut set) {
                        wrong.push(format!("{} ({}): {why}", scenario.name, p.name));
                    }
                }
            }
        }
    }
    assert!(stories > 30, "only {stories} stories told");
    assert!(
        wrong.is_empty(),
        "stories that contradict their steps:\n{}",
        wrong.join("\n")
    );
}
