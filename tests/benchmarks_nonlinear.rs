//! The shipped non-linear benchmarks give their known verdicts through the binary (the verdicts
//! each file's header states): never the opposite of the known answer, every proof certified by
//! `certify`, every refutation a validated run (exact start, MPFR enclosures strictly on the wrong
//! side) that `certify` accepts where it is a certificate. Our own plants need nothing else; the
//! ARCH-COMP controllers are read from `../shared/models` (skipped when absent, failing under
//! `CI=true`). The slow questions (synthesis on the 4-D and 6-D systems) are in the campaign
//! `configs/campaigns/nonlinear.toml`, not here. ARCH-COMP's VCAS (discrete, in the competition's
//! semantics) is here too: its published instances give the published verdicts.

mod common;

use common::cli::{Run, s, trestle};
use serde_json::Value;
use std::path::{Path, PathBuf};
use trestle_testkit::{repo, shared_models};

fn system(name: &str) -> PathBuf {
    repo().join("configs/systems").join(name)
}

/// `--set controller.model=..` for an ARCH-COMP model of `../shared/models/archcomp`, or `None`
/// when the folder is absent (outside CI).
fn arch_model(rel: &str) -> Option<String> {
    let path = shared_models()?.join("archcomp").join(rel);
    assert!(path.is_file(), "{} is missing", path.display());
    Some(format!("controller.model={}", path.display()))
}

fn run(args: &[&str], set: Option<&str>) -> Run {
    let mut all: Vec<&str> = args.to_vec();
    if let Some(set) = set {
        all.extend(["--set", set]);
    }
    trestle(&all)
}

/// `certify CERT SYSTEM` accepts (exit 0), with `what` in its report.
fn certified(cert: &Path, sys: &Path, set: Option<&str>, what: &str) {
    let v = run(&["certify", s(cert), s(sys)], set);
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
    assert!(v.stdout.contains(what), "expected '{what}' in {}", v.stdout);
}

/// A refutation of a candidate through irrational values: not-inductive, the witness validated
/// (exact start, successor enclosed at 256 bits strictly outside the candidate).
fn validated_not_inductive(r: &Run) -> Value {
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!((&j["status"], &j["verdict"]), (&Value::from("refuted"), &Value::from("not-inductive")), "{j}");
    let t = j["trace"].clone();
    assert_eq!(t["precision_bits"], 256, "{t}");
    assert_eq!(t["enclosures"].as_array().map(Vec::len), Some(2), "{t}");
    t
}

#[test]
fn cubic_is_proven_by_z3_on_the_polynomial_step_and_certified() {
    let dir = tempfile::tempdir().unwrap();
    let (sys, cert) = (system("cubic.toml"), dir.path().join("cubic.json"));
    let r = trestle(&["check", s(&sys), "--json", "--certificate", s(&cert)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!((&r.json()["status"], &r.json()["verdict"]), (&Value::from("proven"), &Value::from("safe")));
    certified(&cert, &sys, None, "certificate VALID");
    // With an outward push of 0.4 x in place of the controller the candidate's end 1.5 steps to
    // 1.5 - 0.3375 + 0.6 = 1.7625: not inductive, by an exact successor.
    let pushed = trestle(&["check", s(&sys), "--json", "--set", "step.x=x - 0.1*x^3 + 0.4*relu(x) - 0.4*relu(-x)"]);
    assert_eq!(pushed.code, 1, "{}{}", pushed.stdout, pushed.stderr);
    assert_eq!(pushed.json()["verdict"], "not-inductive");
    // A polynomial refutation is exact: the successor is rational.
    assert!(pushed.json()["trace"]["precision_bits"].is_null(), "{}", pushed.stdout);
}

/// Bounded safety by bound propagation through time on curved steps: intervals alone lose the
/// controller's correlation with the state (cubic's enclosure overflows f64 within 50 steps,
/// unicycle's leaves Safe by step 10), while CROWN's domain meets each step's box with the step's
/// linear relaxation under the controller's linear bounds and proves both; `certify` re-derives
/// that relaxation on each box of the chain (the unicycle's sin through the environment check's
/// relaxation, the cubic's polynomial exactly by Z3).
#[test]
fn curved_steps_are_proven_bounded_by_bpt_with_the_relaxed_step_and_certified() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("cubic.toml", "G<=50 (-1.5 <= x and x <= 1.5)"),
        ("unicycle.toml", "G<=20 (-1 <= y and y <= 1 and -1 <= th and th <= 1)"),
    ];
    for (file, formula) in cases {
        let sys = system(file);
        let cert = dir.path().join(format!("{file}.json"));
        let ltl = |domain: &str, cert: Option<&Path>| {
            let mut args = vec!["ltl", s(&sys), "--formula", formula, "--method", "bpt", "--bpt", domain, "--json"];
            if let Some(c) = cert {
                args.extend(["--certificate", s(c)]);
            }
            trestle(&args)
        };
        let plain = ltl("interval", None);
        assert_eq!(plain.code, 3, "{file}: {}{}", plain.stdout, plain.stderr);
        let relaxed = ltl("crown", Some(&cert));
        assert_eq!(relaxed.code, 0, "{file}: {}{}", relaxed.stdout, relaxed.stderr);
        assert_eq!(relaxed.json()["method"], "bpt-crown", "{}", relaxed.stdout);
        certified(&cert, &sys, None, "certificate VALID");
    }
}

#[test]
fn unicycle_is_proven_safe_forever_by_synthesis_and_certified() {
    let dir = tempfile::tempdir().unwrap();
    let (sys, cert) = (system("unicycle.toml"), dir.path().join("unicycle.json"));
    let r = trestle(&["synth", s(&sys), "--json", "--certificate", s(&cert)]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!((&r.json()["status"], &r.json()["verdict"]), (&Value::from("proven"), &Value::from("safe")));
    certified(&cert, &sys, None, "certificate VALID");
}

#[test]
fn cartpole_candidate_is_refuted_by_a_validated_step_that_certify_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let (sys, cert) = (system("cartpole-relu.toml"), dir.path().join("cartpole.json"));
    let r = trestle(&["check", s(&sys), "--json", "--certificate", s(&cert)]);
    validated_not_inductive(&r);
    certified(&cert, &sys, None, "refutation VALID");
    // Its runs from Init stay upright: simulated in validated enclosures, never a stop.
    let sim = trestle(&["simulate", s(&sys), "--steps", "40", "--json"]);
    assert_eq!(sim.code, 0, "{}", sim.stderr);
    assert_eq!(sim.json()["arithmetic"], "enclosed");
}

#[test]
fn arch_single_pendulum_is_refuted_by_a_validated_run_from_init() {
    let Some(set) = arch_model("Single_Pendulum/controller_single_pendulum.onnx") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (sys, cert) = (system("arch-single-pendulum.toml"), dir.path().join("pendulum.json"));
    let r = run(&["synth", s(&sys), "--json", "--certificate", s(&cert)], Some(&set));
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!((&j["status"], &j["verdict"]), (&Value::from("refuted"), &Value::from("unsafe")), "{j}");
    let t = &j["trace"];
    assert_eq!(t["precision_bits"], 256, "{t}");
    // Ten steps from an exact state of Init (near its corner th = 1.175, w = 0.2); at step 10
    // the angle's whole enclosure is above 1.
    let q = |v: &Value| trestle_ir::num::parse_rational(v.as_str().unwrap()).unwrap();
    let r = |text: &str| trestle_ir::num::parse_rational(text).unwrap();
    let start = &t["states_exact"][0];
    assert!(r("1") <= q(&start[0]) && q(&start[0]) <= r("1.175"), "{t}");
    assert!(r("0") <= q(&start[1]) && q(&start[1]) <= r("0.2") && start[2] == "0", "{t}");
    let enclosures = t["enclosures"].as_array().unwrap();
    assert_eq!(enclosures.len(), 11, "{t}");
    assert!(q(&enclosures[10][0][0]) > r("1"), "{t}");
    assert_eq!(enclosures[10][2], serde_json::json!(["10", "10"]), "{t}");
    // The certificate records the run; `certify` re-validates it from its exact start.
    let v = run(&["certify", s(&cert), s(&sys)], Some(&set));
    assert_eq!(v.code, 0, "{}{}", v.stdout, v.stderr);
}

#[test]
fn arch_docking_tanh_candidate_is_refuted_by_a_validated_step_that_certify_accepts() {
    let Some(set) = arch_model("Docking/model.onnx") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (sys, cert) = (system("arch-docking-tanh.toml"), dir.path().join("docking.json"));
    let r = run(&["check", s(&sys), "--json", "--certificate", s(&cert)], Some(&set));
    let t = validated_not_inductive(&r);
    // The corner (70, 70, -0.28, -0.28), compared as numbers (decimals or p/q print alike).
    let q = |v: &Value| trestle_ir::num::parse_rational(v.as_str().unwrap()).unwrap();
    let start: Vec<_> = t["states_exact"][0].as_array().unwrap().iter().map(q).collect();
    let corner: Vec<_> =
        ["70", "70", "-7/25", "-7/25"].iter().map(|v| trestle_ir::num::parse_rational(v).unwrap()).collect();
    assert_eq!(start, corner, "{t}");
    certified(&cert, &sys, Some(&set), "refutation VALID");
}

#[test]
fn arch_attitude_sigmoid_candidate_is_refuted_by_a_validated_step_that_certify_accepts() {
    let Some(set) = arch_model("Attitude-Control/attitude_control_3_64_torch.onnx") else { return };
    let dir = tempfile::tempdir().unwrap();
    let (sys, cert) = (system("arch-attitude-sigmoid.toml"), dir.path().join("attitude.json"));
    // Z3's non-linear arithmetic on the degree-3 step gets two seconds per query.
    let r = run(&["check", s(&sys), "--json", "--smt-timeout", "2", "--certificate", s(&cert)], Some(&set));
    validated_not_inductive(&r);
    certified(&cert, &sys, Some(&set), "refutation VALID");
}

/// ARCH-COMP VCAS in the competition's semantics (configs/systems/archcomp/vcas-*.toml): the eight
/// published instances give the published verdicts (middle -19.5, -22.5 and worst -19.5 proven,
/// the other five refuted), and the non-deterministic variant is refuted where the worst strategy
/// is. Each refutation's run is replayed independently by `simulate` from its exact start (on
/// the branches it names): it ends with |h| <= 100 at the step the engine reports.
#[test]
fn arch_vcas_instances_give_the_published_verdicts_and_their_runs_replay() {
    if shared_models().is_none() {
        return;
    }
    let cases = [
        ("vcas-middle.toml", "-19.5", true),
        ("vcas-middle.toml", "-22.5", true),
        ("vcas-middle.toml", "-25.5", false),
        ("vcas-middle.toml", "-28.5", false),
        ("vcas-worst.toml", "-19.5", true),
        ("vcas-worst.toml", "-22.5", false),
        ("vcas-worst.toml", "-25.5", false),
        ("vcas-worst.toml", "-28.5", false),
        ("vcas-nondet.toml", "-22.5", false),
        ("vcas-nondet.toml", "-28.5", false),
    ];
    for (file, hdot0, holds) in cases {
        let sys = system(&format!("archcomp/{file}"));
        let set = format!("init.hdot0={hdot0}");
        let r = trestle(&["ctl", s(&sys), "--property", "arch", "--set", &set, "--json"]);
        let j = r.json();
        if holds {
            assert_eq!((r.code, &j["status"]), (0, &Value::from("proven")), "{file} {hdot0}: {j}");
            continue;
        }
        assert_eq!((r.code, &j["status"]), (1, &Value::from("refuted")), "{file} {hdot0}: {j}");
        let t = &j["trace"];
        assert_eq!(t["replayed"], "exact rational arithmetic", "{t}");
        let states = t["states_exact"].as_array().unwrap();
        let start = &states[0];
        assert_eq!((&start[1], &start[2], &start[3]), (&Value::from(hdot0), &Value::from("25"), &Value::from("0")));
        let from = format!("h={},hdot0={hdot0},tau=25,adv=0", start[0].as_str().unwrap());
        let steps = states.len() - 1;
        let mut sim = vec!["simulate", s(&sys), "--set", &set, "--from", &from, "--json"];
        let n = steps.to_string();
        sim.extend(["--steps", &n]);
        // The non-deterministic variant's run names its branch at every step; all are "lowest".
        let branches: Vec<&str> =
            t["steps"].as_array().unwrap().iter().map(|x| x["branch"].as_str().unwrap()).collect();
        if file == "vcas-nondet.toml" {
            assert!(branches.iter().all(|b| *b == "lowest"), "{branches:?}");
            sim.extend(["--branch", "lowest"]);
        }
        let replay = trestle(&sim);
        assert_eq!(replay.code, 0, "{}", replay.stderr);
        let run = &replay.json()["runs"][0];
        assert_eq!(run["start_in_init"], true, "{run}");
        assert_eq!(run["final_exact"], states[steps], "{run}");
        let h = trestle_ir::num::parse_rational(run["final_exact"][0].as_str().unwrap()).unwrap();
        let hundred = trestle_ir::num::parse_rational("100").unwrap();
        assert!(-hundred.clone() <= h && h <= hundred, "{file} {hdot0}: {run}");
    }
}
