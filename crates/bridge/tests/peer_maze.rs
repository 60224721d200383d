//! The paper's case study: the 16 maze controllers of the original tool.

mod common;
use common::*;
use trestle_bridge::certificate::{CertificateJson, certify, from_report};
use trestle_bridge::{Config, Inductiveness, check};
use trestle_core::Budget;
use trestle_ir::{Env, Rational};

#[test]
fn det_128_is_not_inductive_with_a_replayed_counterexample_and_the_rest_are_safe() {
    if shared_models().is_none() {
        return;
    }
    let cfg = Config::default();
    for kind in ["det", "nondet"] {
        for h in PEER_SIZES {
            let sys = peer(kind, h);
            let report = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
            if kind == "det" && h == 128 {
                assert_eq!(report.word(), "not-inductive", "det 2x{h}");
                let Inductiveness::Refuted(r) = &report.inductive.outcome else { panic!() };
                let w = &r.witness;
                // Independent replay: the state is in Inv, f(s) is the network's exact output,
                // and the successor leaves Inv (the violations sit near x in [0.92, 0.95]).
                let inv = sys.invariant.as_ref().unwrap();
                assert!(inv.eval_exact(&Env::new(&w.state, &[], &[])).unwrap());
                let net = &sys.networks[0].network;
                let a = net.forward_exact(&w.state, &mut []).unwrap();
                assert_eq!(a, w.actions);
                let tenth = trestle_ir::num::parse_rational("0.1").unwrap();
                let next: Vec<Rational> = (0..2).map(|i| &w.state[i] + &tenth * &a[i]).collect();
                assert_eq!(next, w.next);
                assert!(!inv.eval_exact(&Env::new(&next, &[], &[])).unwrap());
                let x = trestle_ir::num::to_f64_nearest(&w.state[0]);
                assert!((0.9..=0.95).contains(&x), "x = {x}");
                let cert = from_report(&sys, &report);
                assert!(certify(&cert, &sys).unwrap().valid, "the refutation replays");
            } else {
                assert_eq!(report.word(), "safe", "{kind} 2x{h}: {:?}", report.inductive.outcome);
                let cert = from_report(&sys, &report);
                assert!(matches!(cert, CertificateJson::Proof(_)));
                let c = certify(&cert, &sys).unwrap();
                assert!(c.valid, "{kind} 2x{h}: {:?}", c.checks);
            }
        }
    }
}

/// With the original tool's configuration, the counts of Table 1 are reproduced exactly where
/// our postcondition is the same as theirs (forward-mode bounds, box psi, all-dims split, FIFO).
#[test]
fn paper_configuration_reproduces_table_1() {
    if shared_models().is_none() {
        return;
    }
    // (kind, size, splits, SMT queries, NNV queries) from Table 1 of the paper.
    let table = [
        ("det", 32, 12, 61, 49),
        ("det", 40, 13, 66, 53),
        ("det", 48, 10, 51, 41),
        ("det", 56, 8, 41, 33),
        ("det", 64, 15, 76, 61),
        ("det", 256, 27, 136, 109),
        ("det", 512, 60, 301, 241),
        ("nondet", 32, 14, 71, 57),
        ("nondet", 40, 13, 66, 53),
        ("nondet", 48, 8, 41, 33),
        ("nondet", 56, 9, 46, 37),
        ("nondet", 64, 12, 61, 49),
    ];
    let cfg = Config::paper();
    for (kind, h, splits, smt, nnv) in table {
        let report = check(&peer(kind, h), &cfg, &Budget::unlimited(), &quiet).unwrap();
        assert_eq!(report.word(), "safe", "{kind} 2x{h}");
        let s = &report.inductive.stats;
        assert_eq!((s.splits, s.smt_queries, s.bound_queries), (splits, smt, nnv), "{kind} 2x{h}");
        assert_eq!(s.z3_queries, s.smt_queries, "the paper's configuration sends every query to Z3");
    }
    // 2x128 det: falsified by the paper's heuristic, in the box the original tool reports
    // (x in [601/640, 19/20], y in [57/80, 23/32]).
    let report = check(&peer("det", 128), &cfg, &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(report.word(), "not-inductive");
    let Inductiveness::Refuted(r) = &report.inductive.outcome else { panic!() };
    let b = r.region.as_ref().expect("found by the falsification check");
    // Our boxes split the invariant's outward f64 enclosure, so the ends agree up to a few ulps.
    let expected = [601.0 / 640.0, 0.95, 57.0 / 80.0, 23.0 / 32.0];
    for (got, want) in [b.lo[0], b.hi[0], b.lo[1], b.hi[1]].into_iter().zip(expected) {
        assert!((got - want).abs() < 1e-12, "falsifying box {b:?}");
    }
}

/// Our default configuration needs fewer queries than the paper on every instance.
#[test]
fn default_configuration_beats_the_paper_on_queries() {
    if shared_models().is_none() {
        return;
    }
    let paper = [
        (("det", 32), (61, 49)),
        (("det", 40), (66, 53)),
        (("det", 48), (51, 41)),
        (("det", 56), (41, 33)),
        (("det", 64), (76, 61)),
        (("det", 128), (225, 160)),
        (("det", 256), (136, 109)),
        (("det", 512), (301, 241)),
        (("nondet", 32), (71, 57)),
        (("nondet", 40), (66, 53)),
        (("nondet", 48), (41, 33)),
        (("nondet", 56), (46, 37)),
        (("nondet", 64), (61, 49)),
        (("nondet", 128), (141, 113)),
        (("nondet", 256), (116, 93)),
        (("nondet", 512), (226, 181)),
    ];
    for ((kind, h), (smt, nnv)) in paper {
        let s = check(&peer(kind, h), &Config::default(), &Budget::unlimited(), &quiet).unwrap().inductive.stats;
        assert!(
            s.smt_queries < smt && s.bound_queries < nnv,
            "{kind} 2x{h}: {} SMT, {} NNV",
            s.smt_queries,
            s.bound_queries
        );
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    if shared_models().is_none() {
        return;
    }
    for (kind, h) in [("det", 128), ("nondet", 512), ("det", 64)] {
        for base in [Config::default(), Config::paper()] {
            let run = |threads| {
                let cfg = Config { threads, ..base.clone() };
                check(&peer(kind, h), &cfg, &Budget::unlimited(), &quiet).unwrap()
            };
            let (one, two) = (run(1), run(2));
            assert_eq!(one.verdict, two.verdict);
            assert_eq!(one.inductive.clauses, two.inductive.clauses, "{kind} 2x{h}");
            assert_eq!(one.inductive.outcome, two.inductive.outcome);
            let strip = |s: &trestle_bridge::RunStats| {
                (s.boxes, s.splits, s.smt_queries, s.z3_queries, s.bound_queries, s.searches)
            };
            assert_eq!(strip(&one.inductive.stats), strip(&two.inductive.stats));
        }
    }
}

/// Simulated runs from Init stay inside every invariant the engine proved (one definition of the
/// step for proofs and simulation).
#[test]
fn simulated_runs_stay_in_proven_invariants() {
    if shared_models().is_none() {
        return;
    }
    use trestle_ir::sim;
    for (kind, h) in [("det", 32), ("nondet", 256)] {
        let sys = peer(kind, h);
        assert_eq!(check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap().word(), "safe");
        let inv = sys.invariant.clone().unwrap();
        for k in 0..20 {
            let mut s = vec![0.3 + 0.1 * (k as f64 / 19.0), 0.7 - 0.1 * ((k * 7 % 20) as f64 / 19.0)];
            let mut mem = sim::initial_memory::<f64>(&sys);
            for t in 0..60 {
                let c: Vec<f64> =
                    if sys.nondet.is_empty() { vec![] } else { vec![0.5 + 0.5 * ((t * 13 + k) % 10) as f64 / 9.0] };
                s = sim::step(&sys, &s, &mut mem, &c, 0).unwrap().next;
                assert!(
                    inv.eval_f64(&Env::new(&s, &[], &[])).unwrap(),
                    "{kind} 2x{h}: run {k} left Inv at step {t}: {s:?}"
                );
            }
        }
    }
}
