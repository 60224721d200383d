//! Bounded CTL needs a successor at every state. The MILP engines leave out states without one,
//! so on systems whose runs may stop their "true" must not stand on that: the reachable states
//! are swept exactly and a stop is the system's error (as the explicit engine reports it), or,
//! where they cannot be swept, the verdict stays unknown. Before the sweep, both MILP engines
//! answered "true (proven)" for `AF^3 (x == 99)` where x never moves.

use trestle_core::{Budget, Verdict};
use trestle_ctl::{CtlError, CtlOptions, Method, check_ctl};
use trestle_ir::System;
use trestle_ir::parse::{SimpleScope, parse_ctl};
use trestle_testkit::system_from_text;

fn system(kind: &str, guard: &str, update: &str) -> System {
    system_from_text(&format!(
        r#"
init = "0 <= x <= 1"
[system]
name = "stops"
[state]
x = {{ type = "{kind}", domain = [0, 10] }}
[networks.id]
layers = [{{ weights = [[1.0]], bias = [0.0], activation = "identity" }}]
[controller]
network = "id"
inputs = ["x"]
actions = ["a"]
[[branch]]
name = "step"
{guard}
update = {{ x = "{update}" }}
"#
    ))
}

fn check(sys: &System, text: &str, method: Method) -> Result<Verdict, CtlError> {
    let phi = parse_ctl(text, &SimpleScope::with_state(&["x"])).unwrap();
    check_ctl(sys, &phi, &CtlOptions { method, ..CtlOptions::default() }, &Budget::unlimited()).map(|r| r.verdict)
}

#[test]
fn a_reachable_stop_is_an_error_in_every_engine() {
    let cases = [
        // x = 1 has no successor (the guard).
        (system("int", "guard = \"x <= 0\"", "x + 1"), "no successor"),
        // From x = 1, x + 5 leaves [0, 10] at the second step.
        (system("int", "", "x + 5"), "outside the declared domains"),
        // A successor of the wrong kind.
        (system("int", "", "x + 1/2"), "outside the declared domains"),
    ];
    for (sys, why) in &cases {
        for method in [Method::Explicit, Method::Monolithic, Method::Compositional] {
            // True on every run as far as it goes: only the stop can answer.
            for text in ["AG^3 (x <= 100)", "AX^3 (x >= 0)", "not EF^3 (x == 99)"] {
                match check(sys, text, method) {
                    Err(CtlError::Semantics(e)) => assert!(e.contains(why), "{method:?} {text}: {e}"),
                    other => panic!("{method:?} {text}: expected the system's error ({why}), got {other:?}"),
                }
            }
        }
    }
}

#[test]
fn unsweepable_systems_that_may_stop_get_no_true() {
    // Real x: its states cannot be enumerated, and the guard may leave it without a successor.
    let sys = system("real", "guard = \"x <= 5\"", "x + 1");
    for method in [Method::Monolithic, Method::Compositional] {
        match check(&sys, "AG^2 (x <= 100)", method) {
            Ok(Verdict::Unknown(reason)) => assert!(reason.to_string().contains("may stop"), "{reason}"),
            other => panic!("{method:?}: {other:?}"),
        }
    }
    // Without the guard no run stops, and the MILP's proof stands.
    let sys = system("real", "", "min(x + 1, 10)");
    for method in [Method::Monolithic, Method::Compositional] {
        assert!(
            matches!(check(&sys, "AG^2 (x <= 100)", method), Ok(Verdict::Proven { .. } | Verdict::Evidence { .. })),
            "{method:?}"
        );
    }
}

/// Two branches with the given guards over a real `x` (no domain), and an argmax controller
/// whose action `a` the guards may read (index 0 when x <= 3).
fn guarded(low: &str, high: &str) -> System {
    system_from_text(&format!(
        r#"
init = "0 <= x <= 1"
[system]
name = "cover"
[state]
x = {{ type = "real" }}
[networks.split]
layers = [{{ weights = [[-1.0], [0.0]], bias = [0.0, -3.0], activation = "identity" }}]
[controller]
network = "split"
inputs = ["x"]
argmax = "a"
labels = ["low", "high"]
[[branch]]
name = "up"
guard = "{low}"
update = {{ x = "x + 1" }}
[[branch]]
name = "down"
guard = "{high}"
update = {{ x = "x - 1" }}
"#
    ))
}

/// Guards that together cover every state leave no run without a successor, though no branch is
/// unguarded: complementary ones (`g` and `not g`, VerticalCAS's `comply` and its negation),
/// ones meeting on a boundary, ones reading an argmax action. Such systems are stop-free, so a
/// MILP "true" stands; before, every true CTL formula of them was "unknown: runs may stop"
/// (issue 34.5). Guards with a gap between them are not, and the true formula stays unknown.
#[test]
fn guards_that_cover_every_state_are_stop_free() {
    let covering = [
        ("x <= 5", "not (x <= 5)"),
        ("x <= 0", "x >= 0"),
        ("2 * x - 1 < 3", "x >= 2"),
        ("a == 0 and x <= 5", "not (a == 0 and x <= 5)"),
        ("a == 0 or x <= 5", "a == 1 and x > 5"),
    ];
    for (low, high) in covering {
        let sys = guarded(low, high);
        assert_eq!(trestle_ir::stops::stop_free(&sys), Ok(()), "{low} / {high}");
        for method in [Method::Monolithic, Method::Compositional, Method::Auto] {
            let v = check(&sys, "AG^3 (x <= 100)", method).unwrap();
            assert!(
                matches!(v, Verdict::Proven { .. } | Verdict::Evidence { .. }),
                "{low} / {high}, {method:?}: {v:?}"
            );
        }
    }
    for (low, high) in [("x <= 5", "x >= 6"), ("x < 0", "x > 0"), ("a == 0 and x <= 5", "a == 1 and x >= 6")] {
        let sys = guarded(low, high);
        assert!(trestle_ir::stops::stop_free(&sys).is_err(), "{low} / {high}");
        let v = check(&sys, "AG^3 (x <= 100)", Method::Monolithic).unwrap();
        assert!(matches!(v, Verdict::Unknown(trestle_core::Unknown::RunsMayStop(_))), "{low} / {high}: {v:?}");
    }
}
