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

/// The disturbed 8-D arena `xi' = xi + 0.1*ai + di`, `di` in `[-0.02, 0.02]`, whose controller
/// is the go-to-goal law plus a thin bump at the corner `(0.8, ..., 0.8)` of the candidate
/// `[0.2, 0.8]^8`: only there, and only with `d1 = 0.02`, does `x1'` leave (by 0.02 at the
/// corner; nowhere beyond 0.003 of it, in every coordinate). Before, the search found nothing
/// in 30 s (1,390 splits, the exact leaf off): its f64 ranking ran every input vertex at the
/// nearest f64 of `0.02`, which lies outside the exact interval, so every step failed; and past
/// 6 dimensions it tries no corner at all. Candidates aimed at the faces (the crossing face, the
/// input vertex pushing across, the vertex where the controller's linear bounds make the crossing
/// likeliest), taken inside the candidate exactly, find it on the first box.
#[test]
fn a_disturbed_corner_counterexample_is_found_by_aiming_at_the_faces() {
    let n = 8;
    let vars = |c: char| (1..=n).map(|i| format!("\"{c}{i}\"")).collect::<Vec<_>>().join(", ");
    let cube = |lo: &str, hi: &str| (1..=n).map(|i| format!("{lo} <= x{i} <= {hi}")).collect::<Vec<_>>().join(" and ");
    // Row k of a layer: `v` at column k, then the columns of `extra`.
    let row = |k: usize, v: f64, extra: &[f64]| {
        let cols: Vec<String> = (0..n)
            .map(|j| if j == k { v } else { 0.0 })
            .chain(extra.iter().copied())
            .map(|x| format!("{x:?}"))
            .collect();
        format!("[{}]", cols.join(", "))
    };
    // Hidden: x1..xn (stable on the candidate) and relu(x1 + ... + xn - (0.8 n - 0.003)).
    let hidden_w: Vec<String> =
        (0..n).map(|k| row(k, 1.0, &[])).chain([format!("[{}]", vec!["1.0"; n].join(", "))]).collect();
    let hidden_b = format!("[{}, -6.397]", vec!["0.0"; n].join(", "));
    // Outputs: ai = 0.5 - xi, plus 100 times the bump for a1.
    let out_w: Vec<String> = (0..n).map(|k| row(k, -1.0, &[if k == 0 { 100.0 } else { 0.0 }])).collect();
    let text = format!(
        "init = \"{}\"\nsafe = \"{}\"\ninvariant = \"{}\"\n[system]\nname = \"corner-bump\"\n[state]\n{}[nondet]\n{}\
         [networks.net]\nlayers = [\n  {{ weights = [{}], bias = {hidden_b}, activation = \"relu\" }},\n  \
         {{ weights = [{}], bias = [{}], activation = \"identity\" }},\n]\n\
         [controller]\nnetwork = \"net\"\ninputs = [{}]\nactions = [{}]\n[step]\n{}",
        cube("0.45", "0.55"),
        cube("0.15", "0.85"),
        cube("0.2", "0.8"),
        (1..=n).map(|i| format!("x{i} = {{ type = \"real\" }}\n")).collect::<String>(),
        (1..=n).map(|i| format!("d{i} = {{ interval = [-0.02, 0.02] }}\n")).collect::<String>(),
        hidden_w.join(", "),
        out_w.join(", "),
        vec!["0.5"; n].join(", "),
        vars('x'),
        vars('a'),
        (1..=n).map(|i| format!("x{i} = \"x{i} + 0.1*a{i} + d{i}\"\n")).collect::<String>(),
    );
    let sys = load_system_from_str(&text, &repo().join("corner-bump.toml"), &Overrides::default()).unwrap();
    let q = |s: &str| trestle_ir::num::parse_rational(s).unwrap();
    // The f64 form of an interval input's end is inside its interval.
    let ends = trestle_bridge::witness::f64_inputs(&sys, &vec![q("0.02"); n]);
    assert!(ends.iter().all(|&x| trestle_ir::num::rational_from_f64(x) <= q("0.02") && x > 0.0199));
    // The search alone: no exact leaf (which would also find it, by Z3 on a small enough box).
    let cfg = Config { exact_after: None, threads: 1, ..Config::default() };
    let budget = Budget::new(Some(Duration::from_secs(120)));
    let r = check(&sys, &cfg, &budget, &quiet).unwrap();
    assert_eq!(r.word(), "not-inductive", "{:?}", r.inductive.stats);
    assert_eq!(r.inductive.stats.exact_queries, 0);
    assert!(r.inductive.stats.splits <= 2, "found only after {} splits", r.inductive.stats.splits);
    let Inductiveness::Refuted(refutation) = &r.inductive.outcome else { panic!("{:?}", r.inductive.outcome) };
    // The witness: x1 leaves upward under d1 = 0.02, from a state within 0.003 of the corner.
    let w = &refutation.witness;
    assert_eq!(w.nondet[0], q("0.02"));
    assert!(w.next[0] > q("0.8"), "{w}");
    assert!(w.state.iter().all(|x| *x >= q("0.797") && *x <= q("0.8")), "{w}");
    assert!(certify(&from_report(&sys, &r), &sys).unwrap().valid);
}
