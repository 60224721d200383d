//! Issue 9, item 10: an NNet's header clamp was `lo + relu(x - lo) - relu(x - hi)`, whose two
//! ReLUs cancel catastrophically in f64 for huge inputs (`eval --input 1e20,0.75` on the maze
//! controller gave a0 = 1 where the clamped input gives -1). f64 evaluation, the exact forward
//! pass and every bounding method must agree on the clamped semantics, for every finite input.

use trestle_bounds::{BoundsError, InputBox, Method, bound};
use trestle_ir::Network;
use trestle_ir::num::{rational_from_f64, to_f64_nearest};
use trestle_nn::{LoadOptions, NnetNormalization, load_network};

fn maze() -> Network {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/networks/maze-2x8.nnet");
    load_network(&path, &LoadOptions { nnet_normalization: NnetNormalization::Header }).unwrap()
}

/// The header's input range of the maze controller.
const LO: f64 = -1000.0;
const HI: f64 = 1000.0;

fn exact(net: &Network, x: &[f64]) -> Vec<f64> {
    let input: Vec<_> = x.iter().map(|&v| rational_from_f64(v)).collect();
    let out = net.forward_exact(&input, &mut net.initial_hidden_exact()).unwrap();
    out.iter().map(to_f64_nearest).collect()
}

const HUGE: [f64; 8] = [1e20, 9.3e18, -1e20, -9.3e18, 1e300, -1e300, f64::MAX, -f64::MAX];

#[test]
fn eval_of_huge_inputs_is_the_eval_of_the_clamped_input() {
    let net = maze();
    // The reproducer: x = 1e20 is clamped to 1000, far right of the target 0.6: a0 = -1.
    assert_eq!(net.eval(&[1e20, 0.75]).unwrap(), vec![-1.0, 0.0]);
    assert_eq!(net.eval(&[9.3e18, 0.75]).unwrap(), vec![-1.0, 0.0]);
    for &x in &HUGE {
        for &y in &[0.3_f64, 0.75, 1e19, -7e22] {
            let clamped = [x.clamp(LO, HI), y.clamp(LO, HI)];
            assert_eq!(net.eval(&[x, y]).unwrap(), net.eval(&clamped).unwrap(), "({x}, {y})");
            assert_eq!(exact(&net, &[x, y]), exact(&net, &clamped), "exact ({x}, {y})");
            assert_eq!(net.eval(&[x, y]).unwrap(), exact(&net, &[x, y]), "f64 vs exact ({x}, {y})");
        }
    }
}

#[test]
fn f64_and_exact_evaluation_agree_everywhere() {
    let net = maze();
    let mut xs: Vec<f64> = vec![0.0, 0.3, 0.6, 0.75, 0.85, -0.2, LO, HI, LO - 1e-9, HI + 1e-9, 999.999, -999.999];
    xs.extend(HUGE);
    for &x in &xs {
        for &y in &xs {
            let (f, e) = (net.eval(&[x, y]).unwrap(), exact(&net, &[x, y]));
            for k in 0..2 {
                assert!((f[k] - e[k]).abs() <= 1e-9, "({x}, {y}) output {k}: f64 {} vs exact {}", f[k], e[k]);
            }
        }
    }
}

#[test]
fn every_bounding_method_contains_the_exact_output_of_huge_inputs() {
    let net = maze();
    for method in ["ibp", "crown", "alpha-crown", "forward"] {
        let m: Method = method.parse().unwrap();
        for &x in &HUGE {
            let point = [x, 0.75];
            let want = exact(&net, &point);
            // A point box and a box of relative width 2e-10 around it (all clamped to the same
            // value; at ±f64::MAX the wide box has an infinite end and is the point box).
            let wide = ([x - x.abs() * 1e-10, 0.7], [x + x.abs() * 1e-10, 0.8]);
            let wide = if wide.0[0].is_finite() && wide.1[0].is_finite() { wide } else { (point, point) };
            for (lo, hi) in [(point, point), wide] {
                let b = match bound(&net, &InputBox::new(lo.to_vec(), hi.to_vec()), &m) {
                    Ok(b) => b,
                    // Intermediate bounds beyond 1e300 (`x - lo` rounded outward) are refused by
                    // design (their differences could overflow): an error, never a wrong bound.
                    Err(BoundsError::Overflow { .. }) if x.abs() >= 1e300 => continue,
                    Err(e) => panic!("{method} at {x}: {e}"),
                };
                for k in 0..2 {
                    assert!(b.lo[k] <= want[k] && want[k] <= b.hi[k], "{method} at {x}: {want:?} not in {b:?}");
                }
                // Beyond the clamp the output does not depend on x: the bounds are tight in a0.
                assert!(b.hi[0] - b.lo[0] <= 1e-9, "{method} at {x}: a0 in [{}, {}]", b.lo[0], b.hi[0]);
            }
        }
    }
}
