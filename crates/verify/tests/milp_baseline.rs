//! `check --method milp`: the MILP baseline's verdicts. A MILP "no violation" is floating-point
//! evidence, so `safe` needs the exact confirmation by the bridge engine; without it the verdict is
//! `safe-by-milp-evidence` with status evidence. Counterexamples are replayed exactly.

use trestle_bridge::Inductiveness;
use trestle_bridge::certificate::{CertificateJson, certify, from_report};
use trestle_core::{Budget, Status, Verdict};
use trestle_ir::num::rational_from_i64;
use trestle_testkit::{example, load, regression_path};
use trestle_verify::milp::check_milp;
use trestle_verify::{CheckMethod, CheckOptions, Silent};

/// The reproducer (its truth is in the file): not inductive. HiGHS used to drop the weight
/// 1e-10 and the baseline said "safe" with exit code 0.
#[test]
fn a_tiny_weight_next_to_a_huge_one_is_not_inductive() {
    let sys = load(&regression_path("tiny-weight.toml"), &[]);
    let cfg = trestle_bridge::Config::default();
    let (r, milp) = check_milp(&sys, &cfg, &Budget::unlimited()).unwrap();
    assert_eq!(r.word(), "not-inductive");
    let Inductiveness::Refuted(refutation) = &r.inductive.outcome else { panic!("{:?}", r.inductive.outcome) };
    assert_eq!(refutation.witness.state, vec![rational_from_i64(1)]);
    assert_eq!(milp.answer, "counterexample");
    assert!(milp.moved_coefficients >= 1 && milp.confirmation.is_none(), "{milp:?}");
    // The bridge engine agrees.
    let bridge = trestle_bridge::check(&sys, &cfg, &Budget::unlimited(), &|_| {}).unwrap();
    assert_eq!(bridge.word(), "not-inductive");
}

#[test]
fn milp_evidence_is_safe_only_when_the_bridge_engine_confirms_it() {
    let sys = example("maze-det.toml");
    let cfg = trestle_bridge::Config::default();
    let (r, milp) = check_milp(&sys, &cfg, &Budget::unlimited()).unwrap();
    assert_eq!(r.word(), "safe");
    assert_eq!((milp.answer, &milp.confirmation), ("evidence", &Some(("proven", None))));
    assert!(milp.margin.is_some_and(|m| m > milp.threshold), "{milp:?}");
    // The proof is the bridge's clauses (ordinary or exact): a certificate `certify` re-checks.
    assert!(!r.inductive.clauses.is_empty() || !r.inductive.exact_clauses.is_empty());
    let cert = from_report(&sys, &r);
    assert!(matches!(cert, CertificateJson::Proof(_)));
    assert!(certify(&cert, &sys).unwrap().valid);
    // With no splits allowed the confirmation stays undecided: evidence only, never "safe".
    let cramped = trestle_bridge::Config { max_splits: 0, ..trestle_bridge::Config::default() };
    let (r, milp) = check_milp(&sys, &cramped, &Budget::unlimited()).unwrap();
    assert_eq!(r.word(), "safe-by-milp-evidence");
    assert!(matches!(r.verdict, Verdict::Evidence { margin } if margin > 0.0), "{:?}", r.verdict);
    assert!(matches!(milp.confirmation, Some(("undecided", Some(_)))), "{milp:?}");
    let Inductiveness::Unknown(reason) = &r.inductive.outcome else { panic!("{:?}", r.inductive.outcome) };
    assert!(reason.to_string().contains("floating-point evidence"), "{reason}");
    assert!(!matches!(from_report(&sys, &r), CertificateJson::Proof(_)));
    // Through the driver: status evidence, never proven, and the summary in the details.
    let opts =
        CheckOptions { method: CheckMethod::Milp, bridge: cramped, synthesize_on_failure: false, ..Default::default() };
    let run = trestle_verify::check(&sys, &opts, &Budget::unlimited(), &Silent).unwrap();
    assert_eq!(run.result.status, Status::Evidence);
    assert_eq!(run.result.verdict, "safe-by-milp-evidence");
    assert!(run.result.margin.is_some_and(|m| m > 0.0));
    assert_eq!(run.result.details["milp"]["confirmation"]["result"], "undecided");
}
