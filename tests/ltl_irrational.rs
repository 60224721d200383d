//! Regressions of the LTL engine on steps through irrational values (issue 36's closing notes):
//! a value with no rational form is not a stop of the run. The exact sweep that looks for stops
//! and the exact replay of a refutation cannot follow `sqrt(2)`; before, `ltl` called such a run
//! a stop and answered the system's error (exit 2) on a system whose runs never stop. Now the
//! answer is unknown with its reason; an evaluation really outside a function's domain stays the
//! system's error or unknown, never an internal error (exit 4) and never a verdict.

mod common;

use common::cli::{s, trestle};
use trestle_testkit::scratch;

/// `x' = sqrt(x^2 + 1)` from 0: 0, 1, sqrt 2, sqrt 3, 2, ... never stops and never goes below 0.
const GROWS: &str = "init = \"x == 0\"\nsafe = \"-10 <= x <= 10\"\n[state]\nx = {}\n[step]\nx = \"sqrt(x^2 + 1)\"\n";

#[test]
fn a_refutation_through_sqrt_is_unknown_not_a_stop() {
    let (_dir, sys) = scratch("grows.toml", GROWS);
    // F<=5 (x <= -1) is false on the only run, and bound propagation shows it on every step's
    // enclosure, but the run cannot be replayed in exact rationals: unknown, saying why (before:
    // "a run from Init stops: step 0: sqrt has no exact rational value", exit 2).
    for method in ["auto", "bpt"] {
        let r = trestle(&["ltl", s(&sys), "--formula", "F<=5 (x <= -1)", "--method", method, "--json"]);
        assert_eq!(r.code, 3, "{method}: {}{}", r.stdout, r.stderr);
        let j = r.json();
        assert_eq!((&j["status"], &j["reason_kind"]), (&"unknown".into(), &"irrational-model".into()), "{j}");
        assert!(j["reason"].as_str().unwrap().contains("values with no rational form"), "{j}");
        // The unbounded F goes through the same bounded check, and says the same.
        let r = trestle(&["ltl", s(&sys), "--formula", "F (x <= -1)", "--method", method, "--json"]);
        assert_eq!(r.code, 3, "{method}: {}{}", r.stdout, r.stderr);
        assert!(r.json()["reason"].as_str().unwrap().contains("values with no rational form"), "{}", r.stdout);
    }
}

#[test]
fn a_sweep_through_sqrt_leaves_a_true_formula_unknown_or_true_never_an_error() {
    let (_dir, sys) = scratch("grows.toml", GROWS);
    for formula in ["F (x >= 2)", "G<=3 (x >= 0)", "X^2 (x >= 1)", "G (x >= 0)"] {
        for method in ["auto", "bpt"] {
            let r = trestle(&["ltl", s(&sys), "--formula", formula, "--method", method, "--json"]);
            assert!(r.code == 0 || r.code == 3, "{formula} {method}: {}{}", r.stdout, r.stderr);
            r.expect_no_internals();
        }
    }
}

#[test]
fn sqrt_leaving_its_domain_is_the_systems_error_or_unknown_never_internal_nor_a_verdict() {
    // x' = sqrt(x) - 1: from 4 the run is 4, 1, 0, -1 and then sqrt(-1) is undefined: it stops.
    let text = "init = \"0 <= x <= 4\"\nsafe = \"-10 <= x <= 10\"\n[state]\nx = {}\n[step]\nx = \"sqrt(x) - 1\"\n";
    let (_dir, sys) = scratch("sqrt-minus-one.toml", text);
    for init in ["x == 0", "x == 4", "x == 2", "0 <= x <= 4"] {
        let init = format!("init={init}");
        for formula in
            ["G (x >= -1)", "F (x <= -1)", "G<=5 (x >= -1)", "F<=5 (x <= -1)", "G F (x <= 0)", "X^2 (x <= 5)"]
        {
            for method in ["auto", "bpt", "invariant"] {
                let r = trestle(&["ltl", s(&sys), "--set", &init, "--formula", formula, "--method", method, "--json"]);
                // Every run from these states stops within four steps (a refutation would need a
                // run that goes on): true on the steps before the stop, the system's error, or
                // unknown.
                assert!([0, 2, 3].contains(&r.code), "{init} {formula} {method}: {}{}", r.stdout, r.stderr);
                r.expect_no_internals();
            }
        }
    }
}
