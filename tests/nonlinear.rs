//! Planted truths through a tanh controller and a `sin` in the step, through the binary: inductive
//! with a margin of 1e-9 is proven (and `certify` accepts the proof), not inductive by 1e-9 is
//! refuted by a validated counterexample (exact start, successor enclosed at 256 bits strictly
//! outside; `certify` re-validates it), a violation of 1e-100 is decided only at 1024 bits, and a
//! margin below 1e-100 is never refuted. The engines that encode systems piecewise-linearly
//! refuse both with exit 2 and one message naming the engines that take them (the LTL engine's
//! MILP methods relax tanh neurons instead, and refuse the `sin` step).

mod common;

use common::cli::{Run, s, trestle};
use serde_json::Value;
use std::path::{Path, PathBuf};
use trestle_testkit::{Nonlinear, planted_nonlinear};

const KINDS: [Nonlinear; 2] = [Nonlinear::TanhController, Nonlinear::SinStep];

/// The planted system with the constant `c` (an expression over exact decimals), in `dir`.
fn write(dir: &Path, kind: Nonlinear, name: &str, c: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, planted_nonlinear(kind, name, c)).unwrap();
    path
}

fn check(sys: &Path, cert: &Path) -> Run {
    trestle(&["check", s(sys), "--json", "--certificate", s(cert)])
}

#[test]
fn a_margin_of_1e_9_is_proven_and_certified() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let sys = write(dir.path(), kind, "margin", &format!("{} - 0.000000001", kind.gap()));
        let cert = dir.path().join("margin.cert.json");
        let r = check(&sys, &cert);
        assert_eq!(r.code, 0, "{kind:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.json()["status"], "proven");
        let v = trestle(&["certify", s(&cert), s(&sys)]);
        assert_eq!(v.code, 0, "{kind:?}: {}{}", v.stdout, v.stderr);
        if kind == Nonlinear::SinStep {
            assert!(
                v.stdout.contains("rigorous enclosures and linear relaxations; the step applies sin"),
                "{}",
                v.stdout
            );
        }
    }
}

/// The validated trace of a refutation: start exact, the successor's enclosure above 1.
fn validated_trace(r: &Run, bits: u64) -> Value {
    let j = r.json();
    assert_eq!(j["status"], "refuted", "{j}");
    let t = j["trace"].clone();
    assert_eq!(t["precision_bits"], bits, "{t}");
    assert_eq!(t["states_exact"], serde_json::json!([["1"]]), "{t}");
    let next = &t["enclosures"][1][0];
    let lo = trestle_ir::num::parse_rational(next[0].as_str().unwrap()).unwrap();
    assert!(lo > trestle_ir::num::rational_from_i64(1), "{t}");
    assert_eq!(t["violates"], "0 <= x and x <= 1", "{t}");
    t
}

#[test]
fn a_violation_of_1e_9_is_refuted_by_a_validated_run_that_certify_accepts() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let sys = write(dir.path(), kind, "over", &format!("{} + 0.000000001", kind.gap()));
        let cert = dir.path().join("over.cert.json");
        let r = check(&sys, &cert);
        assert_eq!(r.code, 1, "{kind:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.json()["verdict"], "not-inductive");
        validated_trace(&r, 256);
        let v = trestle(&["certify", s(&cert), s(&sys)]);
        assert_eq!(v.code, 0, "{kind:?}: {}{}", v.stdout, v.stderr);
        assert!(v.stdout.contains("validated at 256 bits"), "{}", v.stdout);
        // The same refutation against the system with the margin: re-validation fails.
        let safe = write(dir.path(), kind, "over", &format!("{} - 0.000000001", kind.gap()));
        let v = trestle(&["certify", s(&cert), s(&safe)]);
        assert_eq!(v.code, 1, "{kind:?}: {}{}", v.stdout, v.stderr);
        assert!(v.stdout.contains("REJECTED"), "{}", v.stdout);
    }
}

#[test]
fn a_violation_of_1e_100_is_decided_only_at_1024_bits() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = format!("0.{}1", "0".repeat(99));
    for kind in KINDS {
        // f(1) + gap lies in (1 - 1e-100, 1]: with 1e-100 more it is above 1 by less than 1e-100.
        let sys = write(dir.path(), kind, "boundary", &format!("{} + {tiny}", kind.gap()));
        let cert = dir.path().join("boundary.cert.json");
        let r = check(&sys, &cert);
        assert_eq!(r.code, 1, "{kind:?}: {}{}", r.stdout, r.stderr);
        validated_trace(&r, 1024);
        let v = trestle(&["certify", s(&cert), s(&sys)]);
        assert_eq!(v.code, 0, "{kind:?}: {}{}", v.stdout, v.stderr);
        // Without it the candidate is inductive by less than 1e-100: never refuted.
        let sys = write(dir.path(), kind, "boundary", kind.gap());
        let r = check(&sys, &cert);
        assert!(r.code == 0 || r.code == 3, "{kind:?}: {}{}", r.stdout, r.stderr);
    }
}

#[test]
fn the_piecewise_linear_engines_refuse_with_one_message_naming_the_engines_that_can() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let sys = write(dir.path(), kind, "refused", &format!("{} - 0.000000001", kind.gap()));
        let what = match kind {
            Nonlinear::TanhController => "network 'squash' (layer 0) has the activation tanh",
            Nonlinear::SinStep => "applies sin",
        };
        let can = "`check` (the bridge engine), `synth`, `verify` and `certify`";
        trestle(&["check", s(&sys), "--method", "milp"]).expect_input_error(&["check --method milp", what, can]);
        trestle(&["ctl", s(&sys), "--formula", "AG^2 (x <= 1)"]).expect_input_error(&["bounded CTL", what, can]);
        let rmilp = trestle(&["ltl", s(&sys), "--formula", "G<=2 (x <= 1)", "--method", "rmilp"]);
        let lasso = trestle(&["ltl", s(&sys), "--formula", "F (x <= 0)", "--method", "lasso", "--depth", "2"]);
        match kind {
            Nonlinear::SinStep => {
                rmilp.expect_input_error(&["ltl --method rmilp", what, can]);
                lasso.expect_input_error(&["ltl --method lasso", what, can]);
            }
            // The MILP methods relax tanh neurons: RMILP answers (here true, as evidence), the
            // lasso search only ever says that no lasso refutes through tanh.
            Nonlinear::TanhController => {
                assert_eq!(rmilp.code, 3, "{}{}", rmilp.stdout, rmilp.stderr);
                assert!(rmilp.stdout.contains("evidence"), "{}", rmilp.stdout);
                assert_eq!(lasso.code, 3, "{}{}", lasso.stdout, lasso.stderr);
                assert!(lasso.stdout.contains("cannot be shown to close"), "{}", lasso.stdout);
            }
        }
    }
}

#[test]
fn synth_refutes_by_a_validated_run_and_simulate_runs_in_enclosures() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        // With c = 1/2 every run from Init leaves Safe within three steps (f(1) + 1/2 > 1).
        let text = planted_nonlinear(kind, "unsafe", "0.5").replace("safe = \"x <= 1\"", "safe = \"-1 <= x <= 1\"");
        let sys = dir.path().join("unsafe.toml");
        std::fs::write(&sys, text).unwrap();
        let r = trestle(&["synth", s(&sys), "--json"]);
        assert_eq!(r.code, 1, "{kind:?}: {}{}", r.stdout, r.stderr);
        let t = &r.json()["trace"];
        assert!(t["precision_bits"].as_u64().is_some(), "{t}");
        let last = t["enclosures"].as_array().unwrap().last().unwrap()[0][0].as_str().unwrap();
        assert!(trestle_ir::num::parse_rational(last).unwrap() > trestle_ir::num::rational_from_i64(1), "{t}");
        let r = trestle(&["simulate", s(&sys), "--steps", "3", "--json"]);
        assert_eq!(r.code, 0, "{kind:?}: {}", r.stderr);
        let j = r.json();
        assert_eq!(j["arithmetic"], "enclosed", "{j}");
        let run = &j["runs"][0];
        assert_eq!((run["steps"].as_array().unwrap().len(), &run["stopped"]), (3, &Value::Null), "{j}");
        assert_eq!(run["precision_bits"], 256, "{j}");
    }
}

/// Synthesis's unsafe verdict comes with its whole run from Init in the certificate, and
/// `certify` re-runs it from the exact start and choices alone: validated through tanh and sin,
/// exactly on a rational twin. A start moved out of Init, or a run cut before it leaves Safe, is
/// rejected.
#[test]
fn synth_unsafe_runs_are_certified_from_their_start_and_choices() {
    let dir = tempfile::tempdir().unwrap();
    let rational = planted_nonlinear(Nonlinear::SinStep, "unsafe", "0.5").replace("sin(x)", "x");
    let systems = KINDS.iter().map(|&k| planted_nonlinear(k, "unsafe", "0.5")).chain([rational]);
    for (k, text) in systems.enumerate() {
        let text = text.replace("safe = \"x <= 1\"", "safe = \"-1 <= x <= 1\"");
        let sys = dir.path().join(format!("unsafe-{k}.toml"));
        std::fs::write(&sys, text).unwrap();
        let cert = dir.path().join(format!("unsafe-{k}.json"));
        let r = trestle(&["synth", s(&sys), "--certificate", s(&cert)]);
        assert_eq!(r.code, 1, "{k}: {}{}", r.stdout, r.stderr);
        let r = trestle(&["certify", s(&cert), s(&sys)]);
        assert_eq!(r.code, 0, "{k}: {}{}", r.stdout, r.stderr);
        let how = if k == 2 { "(replayed exactly)" } else { "(validated)" };
        assert!(r.stdout.contains(how) && r.stdout.contains("leaves Safe"), "{k}: {}", r.stdout);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
        let tampered = |edit: &dyn Fn(&mut Value)| {
            let mut d = doc.clone();
            edit(&mut d);
            let path = dir.path().join("tampered.json");
            std::fs::write(&path, d.to_string()).unwrap();
            trestle(&["certify", s(&path), s(&sys)])
        };
        let outside_init = tampered(&|d| d["run"]["start"][0] = "0.75".into());
        assert_eq!(outside_init.code, 1, "{k}: {}", outside_init.stdout);
        assert!(outside_init.stdout.contains("FAIL the run starts in Init"), "{}", outside_init.stdout);
        // One step from Init (x <= 1/2) stays inside Safe: f(x) + 1/2 < 1.
        let cut = tampered(&|d| d["run"]["steps"].as_array_mut().unwrap().truncate(1));
        assert_eq!(cut.code, 1, "{k}: {}", cut.stdout);
    }
}

/// `th' = th - 0.2 sin(th) + c w`: on the invariant [-1, 1]^2 the interval enclosure of the step
/// loses the dependency between `th` and `sin(th)` (it needs 19 boxes), the mean-value relaxation
/// keeps it and Z3 or the bounds prove the whole box at once, which `certify` re-derives. With
/// `c = 0.2` the step leaves the box (1 - 0.2 sin 1 + 0.2 > 1): never proven, refuted by a
/// validated run.
#[test]
fn a_linear_relaxation_proves_a_transcendental_step_on_one_box_and_never_a_false_one() {
    let dir = tempfile::tempdir().unwrap();
    let system = |c: &str| {
        format!(
            "init = \"-0.1 <= th <= 0.1 and -0.1 <= w <= 0.1\"\nsafe = \"-1 <= th <= 1 and -1 <= w <= 1\"\n\
             invariant = \"-1 <= th <= 1 and -1 <= w <= 1\"\n[system]\nname = \"sin-dependency\"\n\
             [state]\nth = {{ type = \"real\" }}\nw = {{ type = \"real\" }}\n[networks.k]\n\
             layers = [{{ type = \"dense\", weights = [[-1.0, -0.5]], bias = [0.0], activation = \"relu\" }}, \
             {{ type = \"dense\", weights = [[0.1]], bias = [0.0], activation = \"identity\" }}]\n\
             [controller]\nnetwork = \"k\"\ninputs = [\"th\", \"w\"]\nactions = [\"u\"]\n\
             [step]\nth = \"th - 0.2*sin(th) + {c}*w\"\nw = \"0.5*w + 0.3*sin(th) - u\"\n"
        )
    };
    let safe = dir.path().join("safe.toml");
    std::fs::write(&safe, system("0.1")).unwrap();
    let cert = dir.path().join("safe.cert.json");
    let r = check(&safe, &cert);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "proven", "{j}");
    assert_eq!(j["stats"]["boxes"], 1, "{j}");
    let v = trestle(&["certify", s(&cert), s(&safe)]);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    assert!(v.stdout.contains("rigorous enclosures and linear relaxations"), "{}", v.stdout);
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, system("0.2")).unwrap();
    let r = check(&bad, &dir.path().join("bad.cert.json"));
    assert_eq!(r.json()["status"], "refuted", "{}{}", r.stdout, r.stderr);
}

/// `ltl` hands a `G p` its engine leaves open (here with `--depth 2`: `G<=2` holds, no inductive
/// box inside `p` exists) on a memoryless system to the invariant question, whose synthesis
/// refutes `p` by a validated run (the run from 1/2 passes 0.99 at step 6 and only its start is
/// exact). Before, the refutation was dropped (its last exact state is the start, inside `p`) and
/// the answer was unknown.
#[test]
fn ltl_keeps_a_validated_refutation_of_g_p_from_the_invariant_question() {
    let dir = tempfile::tempdir().unwrap();
    let kind = Nonlinear::TanhController;
    let sys = write(dir.path(), kind, "creep", &format!("{} - 0.000000001", kind.gap()));
    let r = trestle(&["ltl", s(&sys), "--formula", "G (x <= 0.99)", "--depth", "2", "--json"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    let last = j["trace"]["enclosures"].as_array().and_then(|e| e.last()).cloned().unwrap_or_default();
    let lo = trestle_ir::num::parse_rational(last[0][0].as_str().unwrap()).unwrap();
    assert!(lo > trestle_ir::num::parse_rational("0.99").unwrap(), "{j}");
}
