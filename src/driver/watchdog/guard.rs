//! The blocking client's [`Guard`] as an [`Extendable`], and [`Guard::watch`].

use rand_core::RngCore;

use super::{ExtendOutcome, Extendable};
#[cfg(not(redlock_loom))]
use super::{Timer, Watchdog, WatchdogConfig};
use crate::driver::{Clock, Guard};
use crate::node::Node;
use crate::proto::{Extension, Failure, LockParams, Tally};
use crate::time::Millis;

impl ExtendOutcome {
    /// Sorts a failed extension round: [`Refused`](ExtendOutcome::Refused) when no later round
    /// can win (the lease had expired, or more than `N − Q` nodes answered that our key is gone
    /// or not ours: compare-and-pexpire never brings a key back), otherwise
    /// [`Inconclusive`](ExtendOutcome::Inconclusive).
    pub fn from_failure(failure: Failure, nodes: Tally, params: &LockParams) -> ExtendOutcome {
        let still_ours = usize::from(params.node_count).saturating_sub(nodes.not_applied.len());
        if failure == Failure::LeaseExpired || still_ours < params.quorum() {
            ExtendOutcome::Refused { failure }
        } else {
            ExtendOutcome::Inconclusive { failure }
        }
    }
}

impl<N: Node, C: Clock, R: RngCore> Extendable for Guard<'_, N, C, R> {
    type Released = Tally;

    fn extend(&mut self) -> ExtendOutcome {
        match self.try_extend() {
            Ok(Extension::Extended { .. }) => ExtendOutcome::Extended,
            Ok(Extension::NotExtended { failure, nodes }) => {
                ExtendOutcome::from_failure(failure, nodes, self.params())
            }
            // A guard's lock is held (or being extended by this very call) until the guard is
            // unlocked, so the core has no usage error to report; were it to, no extension
            // could ever succeed again.
            Err(_) => ExtendOutcome::Refused {
                failure: Failure::LeaseExpired,
            },
        }
    }

    fn deadline(&self) -> Millis {
        Guard::deadline(self)
    }

    fn ttl(&self) -> Millis {
        self.params().ttl
    }

    fn release(self) -> Tally {
        self.unlock()
    }
}

#[cfg(not(redlock_loom))]
impl<'a, N, C, R> Guard<'a, N, C, R>
where
    N: Node + Send,
    C: Timer + Sync,
    R: RngCore + Send,
{
    /// Hands the guard to a [`Watchdog`] on a thread of `scope`, which extends it every
    /// [`period`](WatchdogConfig::period) of the TTL on the client's clock until
    /// [`Watchdog::unlock`] (or the end of the scope, which drops and so releases it).
    pub fn watch<'scope>(
        self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        config: WatchdogConfig,
    ) -> Watchdog<'scope, Self, &'a C>
    where
        'a: 'scope,
    {
        let clock = self.clock();
        Watchdog::spawn_scoped(scope, self, clock, config)
    }

    /// Runs `work` while a watchdog keeps the lock extended, then unlocks (the watchdog stops
    /// first) and returns what `work` returned with the per-node release results.
    ///
    /// `work` gets the watchdog to ask [`is_valid`](Watchdog::is_valid) before each step that
    /// needs the lock; for a loss it must act on at once, set
    /// [`on_lost`](WatchdogConfig::on_lost).
    pub fn with_watchdog<T>(
        self,
        config: WatchdogConfig,
        work: impl for<'scope> FnOnce(&Watchdog<'scope, Self, &'a C>) -> T,
    ) -> (T, Tally) {
        std::thread::scope(|scope| {
            let watched = self.watch(scope, config);
            let out = work(&watched);
            (out, watched.unlock())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{Config, NodeId, NodeSet};

    fn tally(not_applied: &[u8]) -> Tally {
        let mut set = NodeSet::EMPTY;
        for &node in not_applied {
            set.insert(NodeId(node));
        }
        Tally {
            not_applied: set,
            ..Tally::default()
        }
    }

    #[test]
    fn an_extension_is_refused_once_a_majority_is_out_of_reach() {
        let params = Config::new(5).params(Millis(1_000)).unwrap();
        let no_quorum = Failure::NoQuorum {
            applied: 2,
            quorum: 3,
        };
        // Two of five gone: three can still say yes.
        assert_eq!(
            ExtendOutcome::from_failure(no_quorum, tally(&[0, 1]), &params),
            ExtendOutcome::Inconclusive { failure: no_quorum }
        );
        // Three of five gone: at most two can.
        assert_eq!(
            ExtendOutcome::from_failure(no_quorum, tally(&[0, 1, 2]), &params),
            ExtendOutcome::Refused { failure: no_quorum }
        );
        assert_eq!(
            ExtendOutcome::from_failure(Failure::LeaseExpired, tally(&[]), &params),
            ExtendOutcome::Refused {
                failure: Failure::LeaseExpired
            }
        );
    }
}
