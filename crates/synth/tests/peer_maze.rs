//! The paper's case study: the 16 maze controllers of the original tool, by synthesis alone.

mod common;
use common::*;
use std::time::Instant;
use trestle_bridge::certificate::{CertificateJson, certify};
use trestle_core::Budget;
use trestle_ir::{FBox, System};
use trestle_synth::{SynthConfig, SynthReport, synthesize};

fn run(sys: &System, cfg: &SynthConfig) -> SynthReport {
    synthesize(sys, cfg, &Budget::unlimited(), &quiet).unwrap()
}

/// The candidate invariant is removed, so it cannot play a part.
fn without_candidate(mut sys: System) -> System {
    sys.invariant = None;
    sys
}

/// Simulated runs from Init (seeded, random choices) stay inside the invariant.
fn runs_stay_inside(sys: &System, invariant: &[FBox]) {
    let init = sys.init.to_box_union(2, 4).unwrap()[0].enclosing_fbox().unwrap();
    let mut seed: u64 = 12345;
    let mut unit = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..20 {
        let mut s: Vec<f64> = (0..2).map(|i| init.lo[i] + (init.hi[i] - init.lo[i]) * unit()).collect();
        let mut memory = trestle_ir::sim::initial_memory::<f64>(sys);
        for _ in 0..60 {
            assert!(
                invariant.iter().any(|b| b.contains(&s)),
                "{}: a simulated run leaves the invariant at {s:?}",
                sys.name
            );
            let nondet: Vec<f64> = sys.nondet.iter().map(|_| 0.5 + 0.5 * unit()).collect();
            s = trestle_ir::sim::step(sys, &s, &mut memory, &nondet, 0).unwrap().next;
        }
    }
}

#[test]
fn det_128_is_safe_by_synthesis_and_its_certificate_is_accepted() {
    if shared_models().is_none() {
        return;
    }
    let sys = peer("det", 128);
    // The grid search (a resolution asks for it; by default one box grown from Init is tried
    // first, and proves this one too).
    let r = run(&sys, &SynthConfig { resolution: Some(8), ..Default::default() });
    assert_eq!(r.word(), "safe", "{}", r.reason);
    // The candidate fails near x = 0.95 (y' exceeds 0.95); the invariant found reaches beyond it.
    assert!(r.invariant.iter().any(|b| b.hi[1] > 0.95));
    // Every environment query of the proof was decided by the fast path, without splits.
    assert_eq!(r.stats.z3_queries, 0, "{:?}", r.stats);
    assert_eq!(r.stats.proof_splits, 0);
    assert_eq!(r.proof.as_ref().unwrap().clauses.len(), r.cells.len());
    runs_stay_inside(&sys, &r.invariant);
    // Re-checked independently, whether or not the system has a candidate of its own.
    let cert = CertificateJson::Proof(r.proof().unwrap());
    let text = serde_json::to_string(&cert).unwrap();
    let cert: CertificateJson = serde_json::from_str(&text).unwrap();
    for s in [sys.clone(), without_candidate(sys.clone())] {
        let c = certify(&cert, &s).unwrap();
        assert!(c.valid, "{:?}", c.checks);
    }
    // A certificate missing a clause is rejected.
    let CertificateJson::Proof(mut broken) = cert else { panic!() };
    broken.clauses.remove(broken.clauses.len() / 2);
    let c = certify(&CertificateJson::Proof(broken), &sys).unwrap();
    assert!(!c.valid && !c.checks[0].1, "{:?}", c.checks[0]);
}

#[test]
fn all_16_peer_controllers_are_safe_by_synthesis_alone() {
    if shared_models().is_none() {
        return;
    }
    let cfg = SynthConfig {
        threads: 2,
        bridge: trestle_bridge::Config { threads: 2, ..Default::default() },
        ..Default::default()
    };
    let systems: Vec<(String, System)> = ["det", "nondet"]
        .iter()
        .flat_map(|k| PEER_SIZES.map(|h| (format!("{k} 2x{h}"), without_candidate(peer(k, h)))))
        .collect();
    let start = Instant::now();
    eprintln!("instance     cells images splits dropped inv.cells boxes smt z3 bounds  seconds");
    for (name, sys) in &systems {
        let r = run(sys, &cfg);
        let s = &r.stats;
        eprintln!(
            "{name:<11} {:>6} {:>6} {:>6} {:>7} {:>9} {:>5} {:>3} {:>2} {:>6}  {:.3}",
            s.cells,
            s.images,
            s.splits,
            s.dropped,
            s.invariant_cells,
            s.invariant_boxes,
            s.smt_queries,
            s.z3_queries,
            s.bound_queries,
            s.seconds
        );
        assert_eq!(r.word(), "safe", "{name}: {}", r.reason);
        assert!(r.trajectory.is_none() && r.dropped_init.is_empty());
    }
    let total = start.elapsed().as_secs_f64();
    eprintln!("suite: {total:.3} s of wall time (synthesis and proof, 2 threads)");
}

#[test]
fn the_forward_search_proves_all_16_too() {
    if shared_models().is_none() {
        return;
    }
    let cfg = SynthConfig { forward: true, ..Default::default() };
    for kind in ["det", "nondet"] {
        for h in PEER_SIZES {
            let r = run(&peer(kind, h), &cfg);
            assert_eq!(r.word(), "safe", "{kind} 2x{h}: {}", r.reason);
        }
    }
}

#[test]
fn a_coarse_grid_is_refined_until_it_succeeds() {
    if shared_models().is_none() {
        return;
    }
    let sys = peer("det", 128);
    // Two cells per dimension and no refinement: every cell's image overflows the union.
    let frozen =
        run(&sys, &SynthConfig { resolution: Some(2), min_width: 0.99, attack_steps: 30, ..Default::default() });
    assert_eq!(frozen.word(), "unknown");
    assert_eq!(frozen.stats.splits, 0);
    assert!(!frozen.dropped_init.is_empty(), "the report names the cells of Init that were dropped");
    let t = frozen.trajectory.as_ref().expect("the closest run is reported");
    assert!(t.exact.is_none() && t.distance <= 0.0, "no run from Init leaves Safe");
    // With refinement the same grid succeeds.
    let refined = run(&sys, &SynthConfig { resolution: Some(2), ..Default::default() });
    assert_eq!(refined.word(), "safe", "{}", refined.reason);
    assert!(refined.stats.splits > 10 && refined.stats.cells > refined.stats.initial_cells, "{:?}", refined.stats);
    runs_stay_inside(&sys, &refined.invariant);
    // Even a single cell (Safe itself) is refined into an invariant.
    let one = run(&sys, &SynthConfig { resolution: Some(1), ..Default::default() });
    assert_eq!(one.word(), "safe", "{}", one.reason);
}

#[test]
fn the_full_fixed_point_also_proves_safety() {
    if shared_models().is_none() {
        return;
    }
    for (kind, h) in [("det", 32), ("nondet", 32)] {
        let sys = peer(kind, h);
        // Both on the grid (a resolution asks for it rather than the box grown from Init).
        let lazy = run(&sys, &SynthConfig { resolution: Some(8), ..Default::default() });
        let full = run(&sys, &SynthConfig { full: true, ..Default::default() });
        assert_eq!(full.word(), "safe", "{kind} 2x{h}: {}", full.reason);
        // The full iteration judges every cell of Safe, the lazy one what Init reaches.
        assert!(full.stats.images > lazy.stats.images, "{:?} vs {:?}", full.stats, lazy.stats);
    }
}

#[test]
fn results_ignore_the_candidate_and_the_thread_count() {
    if shared_models().is_none() {
        return;
    }
    let strip = |r: &SynthReport| {
        let mut s = r.stats.clone();
        (s.seconds, s.search_seconds, s.proof_seconds, s.attack_seconds) = (0.0, 0.0, 0.0, 0.0);
        // The quick run search before the invariant search is bounded by wall time.
        s.simulations = 0;
        (r.verdict.clone(), r.invariant.clone(), r.cells.clone(), r.dropped.clone(), s, r.proof())
    };
    for (kind, h) in [("det", 128), ("nondet", 512)] {
        let sys = peer(kind, h);
        let one = SynthConfig {
            threads: 1,
            bridge: trestle_bridge::Config { threads: 1, ..Default::default() },
            ..Default::default()
        };
        let two = SynthConfig {
            threads: 2,
            bridge: trestle_bridge::Config { threads: 2, ..Default::default() },
            ..Default::default()
        };
        let a = strip(&run(&sys, &one));
        assert_eq!(a, strip(&run(&sys, &two)), "{kind} 2x{h}: threads");
        assert_eq!(a, strip(&run(&without_candidate(sys), &one)), "{kind} 2x{h}: candidate");
    }
}
