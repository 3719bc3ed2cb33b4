//! The read-only view of a held lock that both guards give ([`Guard`](super::Guard) and the
//! async client's `AsyncGuard`), written once as [`held_lock_view!`].

/// Expands, inside a guard's `impl`, to the guard's read-only accessors. The guard has the
/// fields `lock` (the core's `Lock`) and `errors` (an `ErrorLog` of `$error`); `$now`, with
/// the guard bound to `$guard`, reads the client's clock.
macro_rules! held_lock_view {
    ($error:ty, |$guard:ident| $now:expr) => {
        /// The token stored at the nodes.
        pub fn token(&self) -> $crate::proto::Token {
            self.lease().token
        }

        /// The fencing token this lock's acquisition derived from the nodes' counters (`None`
        /// with [`Fencing::Off`](crate::proto::Fencing::Off), the default; use
        /// [`Fencing::WriteBack`](crate::proto::Fencing::WriteBack)).
        ///
        /// It comes from the same round as the lock, with no extra node: every later holder's
        /// token is larger, as long as every lock node keeps its counter across a crash
        /// (`appendfsync always`). Send it with every operation on the guarded resource, reads
        /// included, and let the resource refuse a token smaller than one it has seen (see
        /// [`FencedStore`](crate::driver::redis::fenced::FencedStore)).
        pub fn fencing_token(&self) -> Option<u64> {
            match self.lock.params().fencing {
                $crate::proto::Fencing::WriteBack | $crate::proto::Fencing::MaxOnly => {
                    Some(self.lease().fence)
                }
                $crate::proto::Fencing::Off => None,
            }
        }

        /// The client-clock reading at which the lock must be considered lost.
        pub fn deadline(&self) -> $crate::time::Millis {
            self.lease().deadline
        }

        /// Time left before the deadline, by the client's clock (zero once it passed).
        pub fn remaining(&self) -> $crate::time::Millis {
            let $guard = self;
            self.deadline() - $now
        }

        /// Whether the client may still act as the holder: its clock is before the deadline.
        pub fn is_valid(&self) -> bool {
            let $guard = self;
            self.lock.believes($now)
        }

        /// Node errors seen while acquiring (and extending).
        pub fn node_errors(&self) -> &[$crate::driver::NodeError<$error>] {
            self.errors.as_slice()
        }

        fn lease(&self) -> &$crate::proto::Lease {
            // A guard exists only for a won lock, and only a release ends the lease, which
            // consumes or drops the guard.
            self.lock.lease().expect("a guard always holds a lease")
        }
    };
}

pub(super) use held_lock_view;
