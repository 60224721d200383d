//! Planted-truth discrete systems: every method and every CEGAR configuration against the truth
//! known by hand (and by the explicit search).

use std::path::{Path, PathBuf};
use trestle_cegar::bmc::{BmcOptions, check_bmc};
use trestle_cegar::cegar::recheck;
use trestle_cegar::explicit::{ExplicitOptions, check_explicit};
use trestle_cegar::{CegarOptions, Discrete, Outcome, PolicyEncoding, Refine, check_cegar};
use trestle_core::{Budget, Verdict};
use trestle_ir::System;

fn load(name: &str) -> System {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/systems").join(name);
    trestle_config::load_system(&path, &Default::default()).unwrap()
}

fn configurations() -> Vec<(&'static str, CegarOptions)> {
    let base = CegarOptions::default();
    vec![
        ("ws", base.clone()),
        ("ce", CegarOptions { refine: Refine::ConcretisationExclusion, ..base.clone() }),
        ("no-heuristic", CegarOptions { heuristic: false, ..base.clone() }),
        ("no-incremental", CegarOptions { incremental: false, ..base.clone() }),
        ("z3-encoding", CegarOptions { encoding: PolicyEncoding::Z3, ..base.clone() }),
    ]
}

fn all_methods(sys: &System) -> Vec<(String, Outcome)> {
    let d = Discrete::new(sys).unwrap();
    let mut out = vec![
        ("explicit".to_string(), check_explicit(&d, &ExplicitOptions::default(), &Budget::unlimited()).unwrap()),
        ("bmc".to_string(), check_bmc(&d, &BmcOptions::default(), &Budget::unlimited()).unwrap()),
    ];
    for (name, opts) in configurations() {
        let o = check_cegar(&d, &opts, &Budget::unlimited()).unwrap();
        if let Some(inv) = &o.invariant {
            recheck(&d, inv, &Budget::unlimited()).unwrap().unwrap_or_else(|e| panic!("{name}: the proof fails: {e}"));
        }
        out.push((name.to_string(), o));
    }
    out
}

#[test]
fn counter_is_safe_by_the_policy() {
    let sys = load("counter.toml");
    for (method, o) in all_methods(&sys) {
        assert!(matches!(o.verdict, Verdict::Proven { .. }), "{method}: {:?}", o.verdict);
        if method == "explicit" {
            // x in 0..=6; y counts increments from x >= 2 that stay in [0, 3].
            assert!(o.stats.states > 7, "{}", o.stats.states);
        }
    }
}

#[test]
fn proofs_are_rechecked_and_a_broken_one_is_refused() {
    let sys = load("counter.toml");
    let d = Discrete::new(&sys).unwrap();
    let o = check_cegar(&d, &CegarOptions::default(), &Budget::unlimited()).unwrap();
    let inv = o.invariant.expect("a safe verdict carries its invariant");
    recheck(&d, &inv, &Budget::unlimited()).unwrap().unwrap();
    // Without its states the union no longer contains the start states.
    let empty = trestle_cegar::cegar::AbstractInvariant { atoms: inv.atoms.clone(), states: Vec::new() };
    assert!(recheck(&d, &empty, &Budget::unlimited()).unwrap().unwrap_err().contains("start => invariant"));
    // A predicate that is not inductive: x <= 5 (the policy steps from 5 to 6).
    let mut loose = inv.clone();
    loose.atoms = vec![trestle_cegar::atom::Atom { coeffs: vec![1.into(), 0.into()], bound: 5.into() }];
    loose.states = vec![vec![true]];
    let why = recheck(&d, &loose, &Budget::unlimited()).unwrap().unwrap_err();
    assert!(why.contains("closed under 'inc"), "{why}");
}

#[test]
fn counter_unsafe_is_refuted_with_a_shortest_replayed_run() {
    let sys = load("counter-unsafe.toml");
    for (method, o) in all_methods(&sys) {
        let Verdict::Refuted { trace, .. } = &o.verdict else { panic!("{method}: {:?}", o.verdict) };
        trace.replay(&sys).unwrap();
        // 3 -> 4 -> 5 -> 6: three steps at least.
        assert!(trace.len() >= 3, "{method}: {} steps", trace.len());
        if method == "explicit" || method == "bmc" {
            assert_eq!(trace.len(), 3, "{method}: breadth-first and BMC find a shortest run");
        }
    }
}
