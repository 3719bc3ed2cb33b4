//! The same scenario with another number of nodes: what the node-count argument and its
//! cross-check across sizes run.

use crate::proto::NodeSet;

use super::{Bound, JumpTarget, JumpTicks, MAX_MODEL_NODES, Scenario};
use crate::time::Millis;

/// Why a scenario cannot be run with another number of nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResizeError {
    /// The model holds at most [`MAX_MODEL_NODES`] nodes, and a lock at least one.
    #[error("{0} nodes is outside 1..={MAX_MODEL_NODES}")]
    OutOfRange(usize),
    /// `[network] reach` names which client reaches which node: a topology, not a size.
    #[error("[network] reach pins which client reaches which node")]
    PinnedReach,
    /// A clock jump pinned to a node the smaller scenario does not have.
    #[error("the clock jump is pinned to node {0}, which {1} nodes do not have")]
    PinnedJump(usize, usize),
    /// `[lock] quorum` pins a number of nodes that is not the majority: a count of this
    /// size, which says nothing about another.
    #[error("[lock] quorum pins {0} of {1} nodes instead of the majority")]
    PinnedQuorum(usize, usize),
    /// `[lock] quorum` gives each client its own count of nodes: counts of this size too.
    #[error("[lock] quorum gives each client its own count of the {0} nodes")]
    PerClientQuorums(usize),
}

impl Scenario {
    /// The same scenario with `nodes` masters (quorum `nodes / 2 + 1`), every client reaching
    /// every node, and everything else as written: the same TTL, drift, clients and fault
    /// budgets (a budget counts faults in the whole run, so it is the same budget at every
    /// size). `[simulate]` and `[mitigation]` are dropped: they describe the file's own size.
    ///
    /// # Errors
    /// A topology that does not carry over to another size: reach lists, a clock jump
    /// pinned to a node past the new count, or a quorum other than the majority; a count
    /// outside `1..=MAX_MODEL_NODES`.
    pub fn with_nodes(&self, nodes: usize) -> Result<Scenario, ResizeError> {
        if !(1..=MAX_MODEL_NODES).contains(&nodes) {
            return Err(ResizeError::OutOfRange(nodes));
        }
        let all = NodeSet::first(self.lock.nodes());
        if self.network.reach.iter().any(|r| *r != all) {
            return Err(ResizeError::PinnedReach);
        }
        if let Some(jumps) = &self.faults.clock_jumps
            && jumps.target != JumpTarget::Client
            && let Some(index) = jumps.index
            && usize::from(index) >= nodes
        {
            return Err(ResizeError::PinnedJump(usize::from(index) + 1, nodes));
        }
        if self.lock.quorums_differ() {
            return Err(ResizeError::PerClientQuorums(self.lock.nodes()));
        }
        if self.lock.params.quorum.is_some() {
            return Err(ResizeError::PinnedQuorum(
                self.lock.params.quorum(),
                self.lock.nodes(),
            ));
        }
        let mut resized = self.clone();
        resized.lock.params.node_count = nodes as u8;
        resized.network.reach = vec![NodeSet::first(nodes); usize::from(self.lock.clients)];
        resized.simulate = None;
        resized.mitigation = None;
        Ok(resized)
    }
}

impl Scenario {
    /// The same scenario with every timing constant multiplied by `factor`: the TTL, the
    /// drift, the round timeout, both clock errors, the jump, the restart delay and the
    /// client's guard, the pause, the storage delay and the check margin (the default margin
    /// of one tick is written out). The zone engine's verdicts do not change under it (it sees
    /// ratios, not units), which is how a file in ticks is asked as one in milliseconds.
    pub fn scaled(&self, factor: u32) -> Scenario {
        let mut out = self.clone();
        let k = u64::from(factor);
        let params = &mut out.lock.params;
        params.ttl = Millis(params.ttl.as_u64() * k);
        params.drift = Millis(params.drift.as_u64() * k);
        params.round_timeout = Millis(params.round_timeout.as_u64() * k);
        out.clock.node_error_ticks *= factor;
        out.clock.client_error_ticks *= factor;
        if let Some(jumps) = &mut out.faults.clock_jumps {
            jumps.jump_ticks = match &jumps.jump_ticks {
                JumpTicks::Every(size) => JumpTicks::Every(size * factor as i32),
                JumpTicks::EachOnce(sizes) => {
                    JumpTicks::EachOnce(sizes.iter().map(|s| s * factor as i32).collect())
                }
            };
        }
        if let Some(crashes) = &mut out.faults.crashes {
            crashes.restart_delay_ticks *= factor;
            crashes.client_guard_ticks *= factor;
        }
        let bound = |b: &mut Bound| {
            if let Bound::Ticks(t) = b {
                *t *= factor;
            }
        };
        if let Some(pauses) = &mut out.faults.pauses {
            bound(&mut pauses.max);
        }
        if let Some(storage) = &mut out.storage {
            bound(&mut storage.max_delay);
            storage.check_margin_ticks = Some(storage.check_margin_ticks.unwrap_or(1) * factor);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "name = \"s\"\ntitle = \"t\"\nclaim = \"c\"\nsource = \"derived\"\nprose = \"p\"\n\
             [lock]\nnodes = 3\nttl_ticks = 4\n{extra}\n[expect]\n\"mutual exclusion\" = \"holds\"\n"
        );
        Scenario::from_str("s.toml", &text).unwrap()
    }

    #[test]
    fn a_resized_scenario_has_the_new_quorum_and_full_reach() {
        let five = scenario("").with_nodes(5).unwrap();
        assert_eq!(five.lock.nodes(), 5);
        assert_eq!(five.lock.params.quorum(), 3);
        assert!(five.network.reach.iter().all(|r| *r == NodeSet::first(5)));
    }

    #[test]
    fn a_pinned_topology_does_not_resize() {
        let reach = scenario("[network]\nreach = [[1, 2], [2, 3]]");
        assert_eq!(reach.with_nodes(5), Err(ResizeError::PinnedReach));
        let jump = scenario("[faults.clock_jumps]\ntarget = \"node\"\nindex = 3\njump_ticks = 2");
        assert_eq!(jump.with_nodes(2), Err(ResizeError::PinnedJump(3, 2)));
        assert!(jump.with_nodes(7).is_ok());
        assert_eq!(jump.with_nodes(8), Err(ResizeError::OutOfRange(8)));
        let minority = scenario("quorum = 1");
        assert_eq!(minority.with_nodes(5), Err(ResizeError::PinnedQuorum(1, 3)));
        let per_client = scenario("clients = 2\nquorum = [3, 2]");
        assert_eq!(
            per_client.with_nodes(5).unwrap_err(),
            ResizeError::PerClientQuorums(3)
        );
        // Pinned to the majority is the default, and resizes with the count.
        let majority = scenario("quorum = 2").with_nodes(5).unwrap();
        assert_eq!(majority.lock.params.quorum(), 3);
    }
}
