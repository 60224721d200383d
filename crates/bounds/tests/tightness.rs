//! Tightness relations between the methods, and under shrinking boxes.

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{InputBox, Method, OutputBounds, bound};

fn slack(b: &OutputBounds, i: usize) -> f64 {
    1e-9 * b.lo[i].abs().max(b.hi[i].abs()).max(1.0)
}

fn width(b: &OutputBounds, i: usize) -> f64 {
    b.hi[i] - b.lo[i]
}

/// A random box inside `b` (some dimensions shrunk to a point, some kept whole).
fn sub_box(rng: &mut ChaCha8Rng, b: &InputBox) -> InputBox {
    let (mut lo, mut hi) = (b.lo.clone(), b.hi.clone());
    for k in 0..lo.len() {
        if rng.random_bool(0.3) {
            continue;
        }
        let (a, c) = (rng.random_range(b.lo[k]..=b.hi[k]), rng.random_range(b.lo[k]..=b.hi[k]));
        lo[k] = a.min(c);
        hi[k] = a.max(c);
    }
    InputBox::new(lo, hi)
}

#[test]
fn alpha_crown_is_at_most_crown_is_at_most_ibp() {
    let mut alpha_gain = 0.0;
    for seed in 0..60u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(3000 + seed);
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let b = random_box(&mut rng, sizes[0]);
        let [ibp, crown, alpha, forward] = METHODS.map(|m| bound(&net, &b, &m.parse().unwrap()).unwrap());
        for i in 0..ibp.lo.len() {
            assert!(width(&crown, i) <= width(&ibp, i) + slack(&ibp, i), "seed {seed} output {i}");
            assert!(width(&forward, i) <= width(&ibp, i) + slack(&ibp, i), "seed {seed} output {i}");
            assert!(width(&alpha, i) <= width(&crown, i) + slack(&crown, i), "seed {seed} output {i}");
            alpha_gain += width(&crown, i) - width(&alpha, i);
        }
    }
    assert!(alpha_gain > 0.0, "alpha-CROWN never improved on CROWN");
}

/// IBP is inclusion-monotone (up to rounding slack), so it must never grow on a sub-box. The linear
/// methods are not monotone in theory: the adaptive lower slope can switch from 0 to 1 on a smaller
/// box (for `-relu(p)` with `p` in `[-2, 1]` CROWN's upper bound is 0, on `[-0.5, 1]` it is 0.5), and
/// alpha-CROWN's search is a heuristic; their boxes are intersected with IBP, which makes this rare,
/// so they may be looser on at most 1% of the comparisons.
#[test]
fn bounds_shrink_when_the_box_shrinks() {
    let mut linear_looser = [0usize; 4];
    let mut compared = 0;
    for seed in 0..80u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(5000 + seed);
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let b = random_box(&mut rng, sizes[0]);
        let parent = METHODS.map(|m| bound(&net, &b, &m.parse::<Method>().unwrap()).unwrap());
        for _ in 0..4 {
            let s = sub_box(&mut rng, &b);
            let child = METHODS.map(|m| bound(&net, &s, &m.parse::<Method>().unwrap()).unwrap());
            for (k, (p, c)) in parent.iter().zip(&child).enumerate() {
                for i in 0..p.lo.len() {
                    let ok = c.lo[i] >= p.lo[i] - slack(p, i) && c.hi[i] <= p.hi[i] + slack(p, i);
                    if k == 0 {
                        assert!(
                            ok,
                            "seed {seed}: IBP grew on a sub-box: {:?} vs {:?}",
                            (c.lo[i], c.hi[i]),
                            (p.lo[i], p.hi[i])
                        );
                    } else if !ok {
                        linear_looser[k] += 1;
                    }
                    compared += 1;
                }
            }
        }
    }
    eprintln!("sub-box bounds looser than the parent's: {linear_looser:?} of {compared}");
    for (k, &n) in linear_looser.iter().enumerate() {
        assert!(n * 100 <= compared / 4, "{}: {n} of {} sub-box bounds were looser", METHODS[k], compared / 4);
    }
}
