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
