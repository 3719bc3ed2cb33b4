//! Uniform draws from the simulator's seeded generators (only `rand_core` is a dependency, so
//! the two helpers the world needs live here).

use rand_core::RngCore;

/// A value drawn uniformly from `lo..=hi` (`lo` when the range is empty or a single point).
///
/// Lemire's multiply-shift: one 64-bit draw, bias below 2^-32 for the small ranges used here,
/// and no loop, so a draw never consumes a variable number of values (which would make a
/// trace depend on more than the seed).
pub(crate) fn uniform<R: RngCore + ?Sized>(rng: &mut R, lo: u64, hi: u64) -> u64 {
    if hi <= lo {
        return lo;
    }
    let span = hi - lo;
    if span == u64::MAX {
        return rng.next_u64();
    }
    let width = u128::from(span + 1);
    lo + ((u128::from(rng.next_u64()) * width) >> 64) as u64
}

/// `true` with probability `per_mille / 1000`.
pub(crate) fn chance<R: RngCore + ?Sized>(rng: &mut R, per_mille: u16) -> bool {
    per_mille > 0 && uniform(rng, 0, 999) < u64::from(per_mille)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;

    #[test]
    fn draws_stay_in_range_and_cover_it() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = uniform(&mut rng, 3, 7);
            assert!((3..=7).contains(&v));
            seen[(v - 3) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(uniform(&mut rng, 9, 9), 9);
        assert_eq!(uniform(&mut rng, 9, 2), 9);
    }

    #[test]
    fn chance_respects_the_extremes() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        assert!((0..1000).all(|_| !chance(&mut rng, 0)));
        assert!((0..1000).all(|_| chance(&mut rng, 1000)));
        let hits = (0..10_000).filter(|_| chance(&mut rng, 100)).count();
        assert!((800..1200).contains(&hits), "{hits} hits at 10%");
    }
}
