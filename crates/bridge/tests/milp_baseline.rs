//! `check_milp`: the MILP baseline's verdicts. A MILP "no violation" is floating-point evidence,
//! so `safe` needs the exact confirmation by the bridge engine; without it the verdict is
//! `safe-by-milp-evidence`. Counterexamples are replayed exactly.

mod common;
use common::*;
use trestle_bridge::certificate::{CertificateJson, certify, from_report};
use trestle_bridge::{Config, Confirmation, Inductiveness, Verdict, check, check_milp};
use trestle_ir::num::rational_from_i64;

/// The reproducer (its truth is in the file): not inductive. HiGHS used to drop the weight
/// 1e-10 and the baseline said "safe" with exit code 0.
#[test]
fn a_tiny_weight_next_to_a_huge_one_is_not_inductive() {
    let sys = load(&regression_path("tiny-weight.toml"), &[]);
    let r = check_milp(&sys, &Config::default()).unwrap();
    assert_eq!(r.verdict, Verdict::NotInductive);
    let Inductiveness::Refuted(refutation) = &r.inductive.outcome else { panic!("{:?}", r.inductive.outcome) };
    assert_eq!(refutation.witness.state, vec![rational_from_i64(1)]);
    let milp = r.milp.as_ref().unwrap();
    assert_eq!(milp.answer, "counterexample");
    assert!(milp.moved_coefficients >= 1 && milp.confirmation.is_none(), "{milp:?}");
    // The bridge engine agrees.
    assert_eq!(check(&sys, &Config::default(), &quiet).unwrap().verdict, Verdict::NotInductive);
}

#[test]
fn milp_evidence_is_safe_only_when_the_bridge_engine_confirms_it() {
    let sys = example("maze-det.toml");
    let cfg = Config::default();
    let r = check_milp(&sys, &cfg).unwrap();
    assert_eq!(r.verdict, Verdict::Safe);
    let milp = r.milp.as_ref().unwrap();
    assert_eq!((milp.answer, &milp.confirmation), ("evidence", &Some(Confirmation::Proven)));
    assert!(milp.margin.is_some_and(|m| m > milp.threshold), "{milp:?}");
    // The proof is the bridge's clauses (ordinary or exact): a certificate `certify` re-checks.
    assert!(!r.inductive.clauses.is_empty() || !r.inductive.exact_clauses.is_empty());
    let cert = from_report(&sys, &r, &cfg);
    assert!(matches!(cert, CertificateJson::Proof(_)));
    assert!(certify(&cert, &sys).unwrap().valid);
    // With no splits allowed the confirmation stays undecided: evidence only, never "safe".
    let cramped = Config { max_splits: 0, ..Config::default() };
    let r = check_milp(&sys, &cramped).unwrap();
    assert_eq!(r.verdict, Verdict::SafeByMilpEvidence);
    assert_eq!(r.verdict.as_str(), "safe-by-milp-evidence");
    let milp = r.milp.as_ref().unwrap();
    assert!(matches!(milp.confirmation, Some(Confirmation::Undecided(_))), "{milp:?}");
    let Inductiveness::Unknown { reason } = &r.inductive.outcome else { panic!("{:?}", r.inductive.outcome) };
    assert!(reason.contains("floating-point evidence"), "{reason}");
    assert!(!matches!(from_report(&sys, &r, &cramped), CertificateJson::Proof(_)));
}
