//! Candidates that are unions of many boxes (issue 16): a union that is the same set as the peer
//! maze's single-box candidate gets the single box's verdict, under the default configuration
//! (fast path) and the paper's (every query in Z3, the union cut to the boxes a query reaches),
//! and its proof certifies; a union of a candidate that is not inductive is refuted by a step
//! that replays against the union.

mod common;
use common::*;
use trestle_bridge::certificate::{certify, from_report};
use trestle_bridge::{Config, Inductiveness, check};
use trestle_core::Budget;
use trestle_ir::{Env, System};

fn peer_with(kind: &str, h: usize, invariant: Option<&str>) -> System {
    let model = repo().join(format!("../shared/models/maze/{kind}/maze_2d_{h}x{h}.onnx"));
    let mut set = vec![format!("controller.model={}", model.display())];
    set.extend(invariant.map(|i| format!("invariant={i}")));
    load(&repo().join(format!("configs/systems/peer-maze-{kind}.toml")), &set)
}

fn boxes_of(sys: &System) -> usize {
    sys.invariant.as_ref().unwrap().to_box_union(2, 100_000).unwrap().len()
}

#[test]
fn a_union_of_tiles_gets_the_single_box_verdict_and_certifies() {
    if shared_models().is_none() {
        return;
    }
    let single = peer_with("det", 32, None);
    let cfg = Config::default();
    assert_eq!(check(&single, &cfg, &Budget::unlimited(), &quiet).unwrap().word(), "safe");
    for (what, inv) in [
        ("grid 20x15", tiled_union(&PEER_MAZE_INVARIANT, 20, 15)),
        ("ragged 300", ragged_union(&PEER_MAZE_INVARIANT, 300, 7)),
    ] {
        let sys = peer_with("det", 32, Some(&inv));
        assert!(boxes_of(&sys) >= 300, "{what}");
        let report = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
        assert_eq!(report.word(), "safe", "{what}: {:?}", report.inductive.outcome);
        let c = certify(&from_report(&sys, &report), &sys).unwrap();
        assert!(c.valid, "{what}: {:?}", c.checks);
    }
}

#[test]
fn a_union_of_tiles_gets_the_single_box_verdict_in_z3() {
    if shared_models().is_none() {
        return;
    }
    let cfg = Config::paper();
    let single = check(&peer_with("det", 32, None), &cfg, &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(single.word(), "safe");
    for (what, inv) in [
        ("grid 10x10", tiled_union(&PEER_MAZE_INVARIANT, 10, 10)),
        ("ragged 100", ragged_union(&PEER_MAZE_INVARIANT, 100, 3)),
    ] {
        let sys = peer_with("det", 32, Some(&inv));
        let report = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
        assert_eq!(report.word(), "safe", "{what}: {:?}", report.inductive.outcome);
        assert!(report.inductive.stats.z3_queries > 0, "{what}: the queries went to Z3");
        let c = certify(&from_report(&sys, &report), &sys).unwrap();
        assert!(c.valid, "{what}: {:?}", c.checks);
    }
}

/// det 2x128 is not inductive on the single box (see `peer_maze.rs`); neither is any union with
/// the same set, and the counterexample replays against the union itself.
#[test]
fn a_union_of_a_non_inductive_candidate_is_refuted_by_a_replayed_step() {
    if shared_models().is_none() {
        return;
    }
    let cfg = Config::default();
    assert_eq!(
        check(&peer_with("det", 128, None), &cfg, &Budget::unlimited(), &quiet).unwrap().word(),
        "not-inductive"
    );
    for (what, inv) in [
        ("grid 12x10", tiled_union(&PEER_MAZE_INVARIANT, 12, 10)),
        ("ragged 120", ragged_union(&PEER_MAZE_INVARIANT, 120, 11)),
    ] {
        let sys = peer_with("det", 128, Some(&inv));
        let report = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
        assert_eq!(report.word(), "not-inductive", "{what}: {:?}", report.inductive.outcome);
        let Inductiveness::Refuted(r) = &report.inductive.outcome else { panic!() };
        let union = sys.invariant.as_ref().unwrap();
        assert!(union.eval_exact(&Env::new(&r.witness.state, &[], &[])).unwrap(), "{what}");
        assert!(!union.eval_exact(&Env::new(&r.witness.next, &[], &[])).unwrap(), "{what}");
        let c = certify(&from_report(&sys, &report), &sys).unwrap();
        assert!(c.valid, "{what}: the refutation replays");
    }
}
