//! Engine behaviour on the project's own examples (no shared models needed).

mod common;
use common::*;
use std::time::Duration;
use trestle_bridge::certificate::{CertificateJson, certify, from_report};
use trestle_bridge::{Config, Inductiveness, Queue, Split, check};
use trestle_config::{Overrides, load_system_from_str};
use trestle_core::Budget;

#[test]
fn examples_are_safe_under_every_configuration() {
    for file in ["maze-det.toml", "maze-nondet.toml"] {
        let sys = example(file);
        for post in ["ibp", "crown", "alpha-crown", "forward"] {
            for linear in [false, true] {
                for split in [Split::All, Split::Widest, Split::Influence] {
                    for queue in [Queue::Fifo, Queue::Dfs, Queue::Priority] {
                        let cfg = Config {
                            post: post.parse().unwrap(),
                            linear_bridge: linear,
                            split,
                            queue,
                            ..Config::default()
                        };
                        let r = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
                        assert_eq!(r.word(), "safe", "{file} {post} linear={linear} {split:?} {queue:?}");
                        let c = certify(&from_report(&sys, &r), &sys).unwrap();
                        assert!(c.valid, "{file} {post} linear={linear} {split:?} {queue:?}: {:?}", c.checks);
                    }
                }
            }
        }
    }
}

/// A controller that pushes outward: not inductive, and the counterexample is found and replayed.
#[test]
fn a_repelling_controller_is_refuted() {
    let text = std::fs::read_to_string(repo().join("examples/maze-det.toml")).unwrap();
    let text = text.replace("x = \"x + 0.1*a0\"", "x = \"x - 0.1*a0\"");
    let path = repo().join("examples/maze-det.toml");
    let sys = load_system_from_str(&text, &path, &Overrides::default()).unwrap();
    let r = check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "not-inductive");
    let Inductiveness::Refuted(refutation) = &r.inductive.outcome else { panic!() };
    assert!(certify(&from_report(&sys, &r), &sys).unwrap().valid);
    assert!(!refutation.witness.next.is_empty());
}

#[test]
fn a_wrong_init_or_safe_is_an_unsafe_candidate() {
    let text = std::fs::read_to_string(repo().join("examples/maze-det.toml")).unwrap();
    let path = repo().join("examples/maze-det.toml");
    for (from, to) in [
        ("init = \"0.3 <= x <= 0.4", "init = \"0.2 <= x <= 0.4"),
        ("safe = \"0.22 <= x <= 0.98", "safe = \"0.3 <= x <= 0.98"),
    ] {
        let sys = load_system_from_str(&text.replace(from, to), &path, &Overrides::default()).unwrap();
        let r = check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap();
        assert_eq!(r.word(), "unsafe-candidate", "{to}");
    }
}

/// Undecided solver answers never become proofs: with Z3 limited to nothing and no fast path,
/// the verdict is unknown, with the undecided boxes listed. (The exact leaf's queries get a
/// resource limit of 1 too: a 1 ns watchdog may come after Z3 has already answered.)
#[test]
fn solver_failures_end_in_unknown_not_safe() {
    let sys = example("maze-nondet.toml");
    let cfg = Config {
        fast_path: false,
        // Zero, not 1 ns: a query limited to 1 ns raced with its watchdog and was sometimes
        // answered; a zero limit runs no query at all (`CheckerConfig::query_limit`).
        smt_timeout: Duration::ZERO,
        exact_rlimit: Some(1),
        min_width: 0.3,
        search: false,
        ..Config::default()
    };
    let r = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
    match r.word() {
        "unknown" => assert!(!r.inductive.undecided.is_empty()),
        // On a loaded machine the watchdog may start after Z3 has answered: then every answer is
        // a real one, and the proof must stand as a certificate.
        "safe" => assert!(certify(&from_report(&sys, &r), &sys).unwrap().valid),
        v => panic!("solver failures gave {v:?}"),
    }
    let cfg = Config { max_splits: 1, ..Config::paper() };
    let r = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "unknown", "split limit");
}

#[test]
fn tampered_certificates_are_rejected() {
    let sys = example("maze-det.toml");
    // Bridge clauses only (by default the example's boxes are decided exactly: no margin in y at
    // the level of psi); tampered exact clauses are in exact_leaf.rs.
    let cfg = Config { exact_after: None, ..Config::default() };
    let r = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
    let CertificateJson::Proof(good) = from_report(&sys, &r) else { panic!() };
    assert!(certify(&CertificateJson::Proof(good.clone()), &sys).unwrap().valid);
    // A clause missing: the boxes no longer cover the invariant.
    let mut missing = good.clone();
    missing.clauses.pop();
    assert!(!certify(&CertificateJson::Proof(missing), &sys).unwrap().valid);
    // A postcondition box narrowed: psi no longer holds on its box.
    let mut narrow = good.clone();
    let post = &mut narrow.clauses[0].post;
    post.hi[0] = post.lo[0] + (post.hi[0] - post.lo[0]) * 0.5;
    assert!(!certify(&CertificateJson::Proof(narrow), &sys).unwrap().valid);
    // A linear bound shifted: it is re-verified and fails.
    let mut shifted = good.clone();
    if let Some(l) = shifted.clauses[0].linear.as_mut() {
        l.upper.c[0] -= 0.05;
        assert!(!certify(&CertificateJson::Proof(shifted), &sys).unwrap().valid);
    }
    // A postcondition box widened a lot: psi holds but the step leaves the invariant.
    let mut wide = good;
    for c in &mut wide.clauses {
        c.post.lo = vec![-5.0; 2];
        c.post.hi = vec![5.0; 2];
        c.linear = None;
    }
    assert!(!certify(&CertificateJson::Proof(wide), &sys).unwrap().valid);
}
