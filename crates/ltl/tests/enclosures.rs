//! Soundness of bound propagation through time: random runs, simulated exactly (random starts in
//! Init, random inputs), stay inside the enclosure of every step, with intervals and with CROWN.

use proptest::prelude::*;
use trestle_ir::num::{Rational, cmp_f64_rational};
use trestle_ir::system::NondetDomain;
use trestle_ltl::bpt::{Domain, propagate};
use trestle_testkit::{load, repo};

const STEPS: usize = 6;

/// `lo + (hi - lo) * k / 64`.
fn grid(lo: &Rational, hi: &Rational, k: i64) -> Rational {
    lo + (hi - lo) * Rational::new(k.into(), 64.into())
}

fn runs_stay_inside(file: &str, picks: &[i64]) -> Result<(), TestCaseError> {
    let sys = load(&repo().join("configs/systems").join(file), &[]);
    assert_eq!(sys.step.branches.len(), 1, "{file}: one branch");
    let start = sys.init.to_box_union(sys.state.len(), 1).unwrap().remove(0);
    let mut pick = picks.iter().copied().cycle();
    let state: Vec<Rational> = (0..sys.state.len())
        .map(|i| grid(start.lo[i].as_ref().unwrap(), start.hi[i].as_ref().unwrap(), pick.next().unwrap()))
        .collect();
    let choices: Vec<(Vec<Rational>, usize)> = (0..STEPS)
        .map(|_| {
            let inputs = sys
                .nondet
                .iter()
                .map(|v| match &v.domain {
                    NondetDomain::Interval(lo, hi) => grid(lo, hi, pick.next().unwrap()),
                    NondetDomain::Set(s) => s[pick.next().unwrap() as usize % s.len()].clone(),
                })
                .collect();
            (inputs, 0)
        })
        .collect();
    let trace = trestle_core::Trace::simulate(&sys, state, choices).unwrap();
    for domain in [Domain::Interval, Domain::Crown] {
        let boxes = propagate(&sys, &start, STEPS, domain, &trestle_core::Budget::unlimited()).unwrap();
        for (t, (s, b)) in trace.states.iter().zip(&boxes).enumerate() {
            for (x, iv) in s.iter().zip(b) {
                prop_assert!(
                    cmp_f64_rational(iv.lo, x).is_le() && cmp_f64_rational(iv.hi, x).is_ge(),
                    "{file} {domain:?} step {t}: {x} outside {iv:?}"
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn simulated_runs_stay_inside_the_enclosures(picks in proptest::collection::vec(0i64..=64, 32)) {
        for file in ["rnn-figure1.toml", "pi-tuned.toml", "pi-oscillating.toml", "pi-integral.toml", "spread-2.toml"] {
            runs_stay_inside(file, &picks)?;
        }
    }
}
