//! Int and bool state variables (Int-sorted), lookups, guards and domain exits (`Drop` vs
//! `Error`), and a lookup out of its table: a model that fails the exact replay is `Unknown`,
//! never a verdict — for Z3 and the layered checker alike.

mod common;

use common::counter::{counter, p};
use common::*;
use trestle_ir::system::{DomainExit, System};
use trestle_smt::{
    Answer, BridgeQuery, Checker, CheckerConfig, EnvChecker, Postcondition, Target, Unknown, Z3Backend, replay_bridge,
};

fn answers(sys: &System, q: &BridgeQuery<'_>) -> [Answer; 2] {
    let mut z3 = Z3Backend::new(sys, CheckerConfig::default()).unwrap();
    let mut layered = Checker::new(sys, CheckerConfig::default()).unwrap();
    let a = [z3.check_bridge(q).unwrap(), layered.check_bridge(q).unwrap()];
    for w in a.iter().filter_map(Answer::witness) {
        replay_bridge(sys, q, w).unwrap();
    }
    a
}

#[test]
fn int_and_bool_variables_are_integers() {
    let sys = counter(DomainExit::Error);
    let region = fbox(&[0.4, 0.0, 0.0], &[0.6, 2.0, 1.0]);
    let psi = Postcondition::Box(fbox(&[-1.0], &[1.0]));
    // x' in [0.3, 0.7], mode' in {0, 1, 2}, flag' in {0, 1}.
    let within = p("0 <= x <= 1 and 0 <= mode <= 2 and 0 <= flag <= 1");
    assert_eq!(
        answers(&sys, &BridgeQuery::new(&region, &psi, Target::StaysIn(&within))),
        [Answer::Valid, Answer::Valid]
    );
    // Only because mode is an integer: a real mode of 0.5 would step to 1.5.
    let integral = p("mode <= 0 or mode == 1 or mode >= 2");
    assert_eq!(
        answers(&sys, &BridgeQuery::new(&region, &psi, Target::StaysIn(&integral))),
        [Answer::Valid, Answer::Valid]
    );
    // Only because flag is 0 or 1: some guard is enabled, and flag' stays in {0, 1}.
    let flag = p("flag == 0 or flag == 1");
    assert_eq!(answers(&sys, &BridgeQuery::new(&region, &psi, Target::StaysIn(&flag))), [Answer::Valid, Answer::Valid]);
    // mode = 1 steps to 2 through "move" (flag 0), and mode = 2 stays 2 through "hold" (flag 1):
    // refuted with an integral witness of one of the two.
    let low = p("mode <= 1");
    for a in answers(&sys, &BridgeQuery::new(&region, &psi, Target::StaysIn(&low))) {
        let w = a.witness().expect("Invalid");
        let found = (w.state[1].clone(), w.state[2].clone(), w.branch);
        assert!(found == (q("1"), q("0"), 0) || found == (q("2"), q("1"), 1), "{found:?}");
        assert_eq!(w.next[1], q("2"));
    }
    // flag = 1 and x < 1/2 keeps flag at 1 through "hold".
    let cleared = p("flag == 0");
    for a in answers(&sys, &BridgeQuery::new(&region, &psi, Target::StaysIn(&cleared))) {
        let w = a.witness().expect("Invalid");
        assert_eq!(w.branch, 1);
        assert!(w.state[0] < q("0.5"));
    }
}

#[test]
fn dropped_successors_do_not_exist() {
    // x in [0.95, 1], mode 0, flag 0, a0 in [0, 1]: x' in [0.95, 1.1]. Under Drop the successors
    // above 1 (outside x's domain) do not exist, so "x <= 1" holds for all that do; under Error
    // they count.
    let region = fbox(&[0.95, 0.0, 0.0], &[1.0, 0.0, 0.0]);
    let psi = Postcondition::Box(fbox(&[0.0], &[1.0]));
    let below = p("x <= 1");
    let q1 = BridgeQuery::new(&region, &psi, Target::StaysIn(&below));
    assert_eq!(answers(&counter(DomainExit::Drop), &q1), [Answer::Valid, Answer::Valid]);
    for a in answers(&counter(DomainExit::Error), &q1) {
        assert!(a.witness().expect("Invalid").next[0] > q("1"));
    }
    // x = 1 with a0 in [0.5, 1]: every successor is dropped, so no successor is below 1 either.
    let edge = fbox(&[1.0, 0.0, 0.0], &[1.0, 0.0, 0.0]);
    let push = Postcondition::Box(fbox(&[0.5], &[1.0]));
    let q2 = BridgeQuery::new(&edge, &push, Target::Leaves(&below));
    assert_eq!(answers(&counter(DomainExit::Drop), &q2), [Answer::Valid, Answer::Valid]);
    let q3 = BridgeQuery::new(&edge, &push, Target::StaysIn(&below));
    assert!(answers(&counter(DomainExit::Error), &q3).iter().all(Answer::is_invalid));
}

#[test]
fn a_lookup_outside_its_table_is_unknown_not_a_verdict() {
    // mode may be 3 in p (the system ignores domains, so mode = 3 is a state), and
    // lookup(3, [..3 entries..]) has no value (the simulator fails). The real successors all keep
    // x in [0.3, 0.7]; only the undefined lookup could leave. Z3 leaves it unconstrained and finds
    // a "counterexample" that the exact replay rejects: Unknown. The fast path must not call it
    // Valid either.
    let sys = counter(DomainExit::Ignore);
    let region = fbox(&[0.4, 0.0, 0.0], &[0.6, 3.0, 0.0]);
    let psi = Postcondition::Box(fbox(&[-1.0], &[1.0]));
    let target = p("0.2 <= x <= 0.8");
    for a in answers(&sys, &BridgeQuery::new(&region, &psi, Target::StaysIn(&target))) {
        assert!(matches!(&a, Answer::Unknown(Unknown::ReplayFailed(m)) if m.contains("lookup")), "{a:?}");
    }
    // Where domains hold, mode = 3 is no state and the query is Valid; so it is with mode within
    // the table.
    let sys_in_domains = counter(DomainExit::Error);
    let region3 = fbox(&[0.4, 0.0, 0.0], &[0.6, 3.0, 0.0]);
    assert_eq!(
        answers(&sys_in_domains, &BridgeQuery::new(&region3, &psi, Target::StaysIn(&target))),
        [Answer::Valid, Answer::Valid]
    );
    let region = fbox(&[0.4, 0.0, 0.0], &[0.6, 2.0, 0.0]);
    assert_eq!(
        answers(&sys, &BridgeQuery::new(&region, &psi, Target::StaysIn(&target))),
        [Answer::Valid, Answer::Valid]
    );
}
