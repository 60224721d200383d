//! `certify` against forged certificates (issue 9, item 2) and on the tool's own certificates for
//! affine observations. Each forgery below claims a proof for a system whose truth is established
//! by hand in its comment; `certify` must refuse it, either as a rejected proof (`valid == false`,
//! with the check that caught it named) or as a file that is not a certificate of the system
//! (`Err`, with a message naming the problem).

mod common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;
use trestle_bridge::certificate::{CertificateJson, Certification, certify, from_report, parse};
use trestle_bridge::{BridgeError, Config, check};
use trestle_config::{Overrides, load_system_from_str};
use trestle_core::Budget;
use trestle_ir::System;

fn system(text: &str) -> System {
    load_system_from_str(text, Path::new("sys.toml"), &Overrides::default()).unwrap()
}

fn certify_text(text: &str, sys: &System) -> Result<Certification, BridgeError> {
    certify(&parse(text)?, sys)
}

/// The proof is rejected, and the check named `caught_by` is among the failing ones.
fn assert_rejected(c: &Certification, caught_by: &str) {
    assert!(!c.valid, "accepted: {:?}", c.checks);
    assert!(
        c.checks.iter().any(|(name, ok, _)| !ok && name.contains(caught_by)),
        "no failing check '{caught_by}': {:?}",
        c.checks
    );
}

/// The file is refused as not a certificate of this system, with a message containing `what`.
fn assert_malformed(r: Result<Certification, BridgeError>, what: &str) {
    match r {
        Err(BridgeError::Certificate(m)) => assert!(m.contains(what), "expected '{what}' in: {m}"),
        other => panic!("expected a certificate error about '{what}', got {other:?}"),
    }
}

fn with_forge_rows(lower_c: f64, upper_c: f64, post: (f64, f64)) -> String {
    json!({"format":"trestle-bridge-certificate/1","system":"forge-bug","state_vars":["x"],"action_vars":["a"],
        "nondet_vars":[],"invariant":[{"lo":[0.0],"hi":[1.0]}],
        "clauses":[{"box":{"lo":[0.0],"hi":[1.0]},"post":{"lo":[post.0],"hi":[post.1]},
        "linear":{"lower":{"A":[[0.0]],"c":[lower_c]},"upper":{"A":[[0.0]],"c":[upper_c]}}}]})
    .to_string()
}

#[test]
fn forged_certificate_with_contradictory_constant_rows_is_rejected() {
    let sys = system(FORGE_BUG);
    // The truth, independently of certify: the checker refutes the invariant.
    assert_eq!(check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap().word(), "not-inductive");
    let c = certify_text(FORGE_BUG_FORGED, &sys).unwrap();
    assert_rejected(&c, "vacuous");
    assert_rejected(&c, "re-bounded");
}

/// Format `/2` (a proof with exact clauses) gets the same checks of its ordinary clauses: the
/// forged clause on [0, 0.5] next to an exact clause on [0.5, 1] is refused for its rows (and the
/// exact clause fails too: x' = x + 1 leaves). Exact clauses in format `/1` are malformed.
#[test]
fn forged_rows_in_a_certificate_with_exact_clauses_are_rejected() {
    let sys = system(FORGE_BUG);
    let mut v: Value = serde_json::from_str(FORGE_BUG_FORGED).unwrap();
    v["clauses"][0]["box"] = json!({"lo": [0.0], "hi": [0.5]});
    v["exact_clauses"] = json!([{"box": {"lo": [0.5], "hi": [1.0]}}]);
    assert_malformed(certify_text(&v.to_string(), &sys), "exact clauses need format");
    v["format"] = json!("trestle-bridge-certificate/2");
    let c = certify_text(&v.to_string(), &sys).unwrap();
    assert_rejected(&c, "vacuous");
    assert_rejected(&c, "re-bounded");
    assert_rejected(&c, "exact clause");
    let cover = c.checks.iter().find(|(n, _, _)| n.contains("cover")).unwrap();
    assert!(cover.1, "both kinds of clauses count for the coverage: {:?}", c.checks);
}

/// psi claims a = 0 by two constant rows (consistent, so not vacuous, and with a = 0 the step
/// x' = x keeps the invariant): only re-checking the rows' offsets against the network (a = 1)
/// catches it.
#[test]
fn forged_constant_row_offsets_are_rebounded() {
    let sys = system(FORGE_BUG);
    let c = certify_text(&with_forge_rows(0.0, 0.0, (-100.0, 100.0)), &sys).unwrap();
    assert_rejected(&c, "re-bounded");
    let env = c.checks.iter().find(|(n, _, _)| n.contains("environment")).unwrap();
    assert!(env.1, "with a = 0 every successor stays: only the rows are wrong: {:?}", c.checks);
    let vacuity = c.checks.iter().find(|(n, _, _)| n.contains("vacuous")).unwrap();
    assert!(vacuity.1, "{:?}", c.checks);
}

/// Offsets near the end of the f64 range: arithmetic on them overflows, which must refuse, never
/// accept or panic. `a >= 1e300` is false (a = 1); rows `+-1.7e308 (x + 1)` overflow when combined.
#[test]
fn forged_huge_offsets_are_rejected_without_overflow() {
    let sys = system(FORGE_BUG);
    let c = certify_text(&with_forge_rows(1e300, 1e301, (-1e301, 1e301)), &sys).unwrap();
    assert_rejected(&c, "re-bounded");
    let text = FORGE_BUG_FORGED
        .replace(r#""lower":{"A":[[0.0]],"c":[1000.0]}"#, r#""lower":{"A":[[1.7e308]],"c":[1.7e308]}"#)
        .replace(r#""upper":{"A":[[0.0]],"c":[1000.0]}"#, r#""upper":{"A":[[-1.7e308]],"c":[-1.7e308]}"#);
    let c = certify_text(&text, &sys).unwrap();
    assert!(!c.valid, "{:?}", c.checks);
}

/// A network that always picks index 1 ("go": x' = x + 1, unsafe from x = 0.5). The forged psi
/// keeps the true index hull [0, 1] as its box but pins the argmax action to 0 by its linear rows,
/// which were never checked for argmax actions.
#[test]
fn forged_argmax_rows_are_rebounded() {
    let sys = system(
        r#"
init = "0 <= x <= 0.5"
safe = "0 <= x <= 1"
invariant = "0 <= x <= 1"
[system]
name = "forge-argmax"
[state]
x = { type = "real" }
[networks.go]
layers = [ { weights = [[0.0], [0.0]], bias = [0.0, 1.0], activation = "identity" } ]
[controller]
network = "go"
inputs = ["x"]
argmax = "a"
labels = ["stay", "go"]
[step]
x = "x + a"
"#,
    );
    assert_eq!(check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap().word(), "not-inductive");
    let text = FORGE_BUG_FORGED
        .replace("forge-bug", "forge-argmax")
        .replace(r#""lo":[-100.0],"hi":[100.0]"#, r#""lo":[0.0],"hi":[1.0]"#);
    let c = certify_text(&text.replace("1000.0", "0.0"), &sys).unwrap();
    assert_rejected(&c, "re-bounded");
    // Rows that leave no integer (0.25 <= a <= 0.75) are vacuous as well as wrong.
    let text = text.replacen("[1000.0]", "[0.25]", 1).replacen("[1000.0]", "[0.75]", 1);
    let c = certify_text(&text, &sys).unwrap();
    assert_rejected(&c, "vacuous");
}

/// The project's example, proven by bridge clauses (the exact leaf off: by default its boxes are
/// decided exactly), as JSON to tamper with.
fn maze_certificate() -> (System, Value) {
    let sys = example("maze-det.toml");
    let cfg = Config { exact_after: None, ..Config::default() };
    let r = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
    let CertificateJson::Proof(p) = from_report(&sys, &r) else { panic!("a proof") };
    (sys, serde_json::to_value(p).unwrap())
}

#[test]
fn forged_structures_are_refused_with_a_clear_message() {
    let (sys, good) = maze_certificate();
    assert!(certify_text(&good.to_string(), &sys).unwrap().valid);
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        v.to_string()
    };
    // Not a certificate of this system: exit 2 material.
    let swapped = edit(&|v| v["state_vars"] = json!(["y", "x"]));
    assert_malformed(certify_text(&swapped, &sys), "variables differ");
    let renamed = edit(&|v| v["system"] = json!("another-system"));
    assert_malformed(certify_text(&renamed, &sys), "for system 'another-system'");
    let repeated = edit(&|v| {
        let first = v["clauses"][0].clone();
        v["clauses"].as_array_mut().unwrap().push(first);
    });
    assert_malformed(certify_text(&repeated, &sys), "repeats the box of clauses[0]");
    let extra_row = edit(&|v| {
        if v["clauses"][0]["linear"].is_object() {
            v["clauses"][0]["linear"]["lower"]["A"].as_array_mut().unwrap().push(json!([0.0, 0.0]));
        } else {
            v["clauses"][0]["post"]["lo"].as_array_mut().unwrap().push(json!(0.0));
        }
    });
    assert_malformed(certify_text(&extra_row, &sys), "clauses[0]");
    let misspelt = edit(&|v| v["clauses"][0]["linaer"] = json!(null));
    assert_malformed(certify_text(&misspelt, &sys), "unknown field");
    let text = good.to_string();
    let number = text.split("\"lo\":[").nth(1).unwrap().split(',').next().unwrap().to_string();
    for bad in ["NaN", "Infinity", "1e999", "-1e999"] {
        let t = text.replacen(&format!("\"lo\":[{number}"), &format!("\"lo\":[{bad}"), 1);
        assert_malformed(
            certify_text(&t, &sys),
            if bad == "NaN" || bad == "Infinity" { "not a trestle certificate" } else { "" },
        );
    }
    // Well-formed but not a proof: rejected by a named check (exit 1 material).
    let uncovered = edit(&|v| {
        v["clauses"].as_array_mut().unwrap().pop();
    });
    assert_rejected(&certify_text(&uncovered, &sys).unwrap(), "cover the invariant");
    let outside = edit(&|v| {
        let mut far = v["clauses"][0].clone();
        far["box"] = json!({"lo": [2.0, 2.0], "hi": [3.0, 3.0]});
        v["clauses"].as_array_mut().unwrap().push(far);
    });
    assert_rejected(&certify_text(&outside, &sys).unwrap(), "lie inside it");
    // An invariant of the certificate's own that misses Init: Init => Inv fails.
    let shrunk = edit(&|v| {
        v["invariant"] = json!([{"lo": [0.5, 0.55], "hi": [0.95, 0.95]}]);
        v["clauses"] = json!([v["clauses"][0].clone()]);
        v["clauses"][0]["box"] = json!({"lo": [0.5, 0.55], "hi": [0.95, 0.95]});
    });
    let c = certify_text(&shrunk, &sys).unwrap();
    assert_rejected(&c, "Init => Inv");
}

/// Two state variables mixed by the observations u0 = (x + y)/3, u1 = x/5 - y; a = u. Then
/// x' = x/2 + a0/4 = 7x/12 + y/12 and y' = y/2 + a1/4 = x/20 + y/4: |x'| <= 2/3, |y'| <= 0.3 on
/// [-1, 1]^2: inductive, safe.
const AFFINE_2D: &str = r#"
init = "-0.5 <= x <= 0.5 and -0.5 <= y <= 0.5"
safe = "-1 <= x <= 1 and -1 <= y <= 1"
invariant = "-1 <= x <= 1 and -1 <= y <= 1"
[system]
name = "affine-2d"
[state]
x = { type = "real" }
y = { type = "real" }
[networks.id2]
layers = [
  { weights = [[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]], bias = [0.0, 0.0, 0.0, 0.0], activation = "relu" },
  { weights = [[1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]], bias = [0.0, 0.0], activation = "identity" },
]
[controller]
network = "id2"
inputs = ["(x + y) / 3", "x / 5 - y"]
actions = ["a0", "a1"]
[step]
x = "x / 2 + a0 / 4"
y = "y / 2 + a1 / 4"
"#;

#[test]
fn affine_observation_certificates_are_accepted() {
    for text in [AFFINE_OBSERVATION, AFFINE_2D] {
        let sys = system(text);
        for post in ["ibp", "crown", "alpha-crown", "forward"] {
            for linear_bridge in [false, true] {
                // Postconditions alone (the exact leaf off): the certificate's rows are the subject.
                let cfg = Config { post: post.parse().unwrap(), linear_bridge, exact_after: None, ..Config::default() };
                let r = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
                assert_eq!(r.word(), "safe", "{} {post} {linear_bridge}", sys.name);
                assert!(r.inductive.exact_clauses.is_empty());
                let c = certify(&from_report(&sys, &r), &sys).unwrap();
                assert!(c.valid, "{} {post} linear={linear_bridge}: {:?}", sys.name, c.checks);
            }
        }
    }
}

/// The affine re-check is not a pass-through: an upper row moved down by half the action range
/// no longer bounds the network and is refused.
#[test]
fn affine_observation_rows_are_rebounded() {
    let sys = system(AFFINE_OBSERVATION);
    let cfg = Config { exact_after: None, ..Config::default() };
    let r = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
    let CertificateJson::Proof(mut p) = from_report(&sys, &r) else { panic!("a proof") };
    let clause = &mut p.clauses[0];
    let half = (clause.post.hi[0] - clause.post.lo[0]) / 2.0;
    clause.linear.as_mut().expect("linear bounds by default").upper.c[0] -= half;
    assert_rejected(&certify(&CertificateJson::Proof(p), &sys).unwrap(), "re-bounded");
}

/// Unsafe systems observed through `inputs`: the network computes a = 2x (u0 + u1 with x read
/// twice, or u with u = 2x), and x' = 3x - 2a = -x, which leaves [0, 1] from any x > 0 of Init.
/// The forged psi claims a = x by its rows (with a = x, x' = x stays: the environment condition
/// holds), inside a true box [-1, 3], so only re-bounding the rows through the exact observation
/// map catches it; a checker that took the observations for the state variable x itself (summing
/// or dropping the repeated column, or ignoring the scale) would confirm `a = x`.
fn doubled(inputs: &str, weights: &str) -> System {
    system(&format!(
        r#"
init = "0 <= x <= 0.5"
safe = "0 <= x <= 1"
invariant = "0 <= x <= 1"
[system]
name = "forge-bug"
[state]
x = {{ type = "real" }}
[networks.double]
layers = [ {{ weights = {weights}, bias = [0.0], activation = "identity" }} ]
[controller]
network = "double"
inputs = {inputs}
actions = ["a"]
[step]
x = "3*x - 2*a"
"#
    ))
}

#[test]
fn forged_rows_over_repeated_or_scaled_observations_are_rejected() {
    for sys in [doubled(r#"["x", "x"]"#, "[[1.0, 1.0]]"), doubled(r#"["2 * x"]"#, "[[1.0]]")] {
        assert_eq!(check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap().word(), "not-inductive");
        let text = with_forge_rows(0.0, 0.0, (-1.0, 3.0)).replace(r#""A":[[0.0]]"#, r#""A":[[1.0]]"#);
        let c = certify_text(&text, &sys).unwrap();
        assert_rejected(&c, "re-bounded");
        let env = c.checks.iter().find(|(n, _, _)| n.contains("environment")).unwrap();
        assert!(env.1, "with a = x every successor stays: only the rows are wrong: {:?}", c.checks);
        // True rows 2x - 1e-6 <= a <= 2x + 1e-6 are confirmed, and then the environment condition
        // fails.
        let text = with_forge_rows(-1e-6, 1e-6, (-1.0, 3.0)).replace(r#""A":[[0.0]]"#, r#""A":[[2.0]]"#);
        let c = certify_text(&text, &sys).unwrap();
        let rows = c.checks.iter().find(|(n, _, _)| n.contains("re-bounded")).unwrap();
        assert!(rows.1, "{:?}", c.checks);
        assert_rejected(&c, "environment");
    }
}
