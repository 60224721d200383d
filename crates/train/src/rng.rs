//! The trainer's only source of randomness: ChaCha8 from a `u64` seed, with the few conversions
//! it needs written out here so that the stream of values is fixed by this file alone (not by a
//! distribution's implementation in some version of `rand`).

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

pub struct TrainRng(ChaCha8Rng);

impl TrainRng {
    pub fn new(seed: u64) -> TrainRng {
        TrainRng(ChaCha8Rng::seed_from_u64(seed))
    }

    /// Uniform in `[0, 1)`: the top 53 bits of one output, exactly.
    pub fn unit(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[-bound, bound)`.
    pub fn symmetric(&mut self, bound: f64) -> f64 {
        (2.0 * self.unit() - 1.0) * bound
    }

    /// Uniform in `0..n` (`n > 0`), without modulo bias (rejection of the incomplete last range).
    pub fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let v = self.0.next_u64();
            if v < zone {
                return (v % n) as usize;
            }
        }
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_fixed_by_the_seed() {
        let draw = |seed| {
            let mut r = TrainRng::new(seed);
            let mut v: Vec<usize> = (0..10).collect();
            r.shuffle(&mut v);
            (r.unit().to_bits(), v)
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
        let mut r = TrainRng::new(0);
        for _ in 0..1000 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            assert!(r.below(7) < 7);
            assert!((-2.0..2.0).contains(&r.symmetric(2.0)));
        }
    }
}
