//! `trestle check`, `ltl` and `certify` on continuous-time systems (`[flow]`), through the binary, on the
//! planted pair of configs/systems/flow: the damped oscillator's box is inductive (proven, the
//! certificate accepted, tampered copies refused), its thin box and the harmonic oscillator's box
//! are not (refuted by validated runs that `certify` accepts and `simulate` replays; the harmonic
//! oscillator's closed-form flow lies in the reported enclosure).

mod common;

use common::cli::{Run, s, trestle};
use serde_json::Value;
use trestle_ir::num::{parse_rational, to_f64_nearest};

const DAMPED: &str = "configs/systems/flow/damped-oscillator.toml";
const HARMONIC: &str = "configs/systems/flow/harmonic-oscillator.toml";
/// The thin candidate, with an Init inside it.
const THIN: [&str; 4] =
    ["--set", "invariant=-1 <= x <= 1 and -0.1 <= y <= 0.1", "--set", "init=-0.5 <= x <= 0.5 and -0.05 <= y <= 0.05"];

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn write_json(path: &std::path::Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

/// An exact number of a certificate (a decimal or fraction string), nearest f64.
fn exact(v: &Value) -> f64 {
    to_f64_nearest(&parse_rational(v.as_str().unwrap()).unwrap())
}

#[test]
fn an_inductive_box_of_a_flow_is_proven_and_its_certificate_re_derived() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.json");
    let run = trestle(&["check", DAMPED, "--certificate", s(&cert), "--json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["status"], "proven", "{json}");
    assert_eq!(json["method"], "bridge+flow");
    assert_eq!(json["details"]["flow"]["period"], "0.5");
    let c = read_json(&cert);
    assert_eq!(c["format"], "trestle-bridge-certificate/3");
    assert_eq!(c["flow"]["period"], "0.5");
    let clauses = c["clauses"].as_array().unwrap().len();
    assert!(clauses >= 1);

    let ok = trestle(&["certify", s(&cert), DAMPED]);
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    assert!(ok.stdout.contains("the flow re-enclosed") && ok.stdout.contains("certificate VALID"), "{}", ok.stdout);

    // A leaf removed: the clauses no longer cover the invariant.
    let mut removed = c.clone();
    removed["clauses"].as_array_mut().unwrap().remove(0);
    let path = dir.path().join("removed.json");
    write_json(&path, &removed);
    let r = trestle(&["certify", s(&path), DAMPED]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("FAIL clause boxes cover the invariant"), "{}", r.stdout);

    // Another period: the certificate is of another system.
    let mut period = c.clone();
    period["flow"]["period"] = "0.25".into();
    let path = dir.path().join("period.json");
    write_json(&path, &period);
    trestle(&["certify", s(&path), DAMPED]).expect_input_error(&["flow.period is 0.25", "0.5"]);

    // Settings too coarse to re-derive the proof (one first-order step): rejected, not accepted.
    let mut coarse = c.clone();
    coarse["flow"]["order"] = 1.into();
    coarse["flow"]["substeps"] = 1.into();
    let path = dir.path().join("coarse.json");
    write_json(&path, &coarse);
    let r = trestle(&["certify", s(&path), DAMPED]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("FAIL each environment condition holds"), "{}", r.stdout);

    // A discrete system's certificate format for a flow system, and a flow certificate for a
    // system without [flow], are malformed.
    let mut old = c.clone();
    old["format"] = "trestle-bridge-certificate/1".into();
    let path = dir.path().join("old.json");
    write_json(&path, &old);
    trestle(&["certify", s(&path), DAMPED]).expect_input_error(&["unknown format"]);
    trestle(&["certify", s(&cert), "examples/double-integrator.toml"]).expect_input_error(&["[flow]"]);
}

#[test]
fn a_thin_box_is_refuted_by_a_validated_run_that_certify_accepts_and_simulate_replays() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.json");
    let run = trestle(&[&["check", DAMPED, "--certificate", s(&cert), "--json"][..], &THIN].concat());
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["verdict"], "not-inductive", "{json}");
    let c = read_json(&cert);
    assert_eq!(c["format"], "trestle-bridge-certificate/3");
    let start: Vec<f64> = c["witness_exact"]["state"].as_array().unwrap().iter().map(exact).collect();
    let d = exact(&c["witness_exact"]["nondet"][0]);
    assert!(start[0].abs() <= 1.0 && start[1].abs() <= 0.1, "{start:?}");
    // The enclosure of the successor is outside the thin box (|y| > 0.1 or |x| > 1).
    let next: Vec<(f64, f64)> =
        c["validated"]["next"].as_array().unwrap().iter().map(|b| (exact(&b[0]), exact(&b[1]))).collect();
    assert!(next[1].0 > 0.1 || next[1].1 < -0.1 || next[0].0 > 1.0 || next[0].1 < -1.0, "{next:?}");

    let ok = trestle(&[&["certify", s(&cert), DAMPED][..], &THIN].concat());
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    assert!(ok.stdout.contains("refutation VALID"), "{}", ok.stdout);
    // Against the inductive candidate the same start does not refute.
    let bad = trestle(&["certify", s(&cert), DAMPED]);
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);

    // `simulate` from the exact start under the same input lands inside the enclosure.
    let from = format!(
        "x={},y={}",
        c["witness_exact"]["state"][0].as_str().unwrap(),
        c["witness_exact"]["state"][1].as_str().unwrap()
    );
    let nondet = format!("d={}", c["witness_exact"]["nondet"][0].as_str().unwrap());
    let sim = trestle(&["simulate", DAMPED, "--from", &from, "--nondet", &nondet, "--steps", "1", "--json"]);
    assert_eq!(sim.code, 0, "{}", sim.stderr);
    let last = &sim.json()["runs"][0]["final"];
    for (i, name) in ["x", "y"].iter().enumerate() {
        let v = last[name].as_f64().unwrap();
        assert!(next[i].0 - 1e-12 <= v && v <= next[i].1 + 1e-12, "{name} = {v} outside {:?} (d = {d})", next[i]);
    }
}

#[test]
fn the_harmonic_oscillator_box_is_refuted_and_its_closed_form_flow_is_inside_the_enclosure() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.json");
    let run = trestle(&["check", HARMONIC, "--certificate", s(&cert), "--json"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let c = read_json(&cert);
    let x0 = exact(&c["witness_exact"]["state"][0]);
    let y0 = exact(&c["witness_exact"]["state"][1]);
    let u = (-x0 - 1.5 * y0).clamp(-1.0, 1.0);
    let (cos, sin) = (0.5f64.cos(), 0.5f64.sin());
    let closed = [u + (x0 - u) * cos + y0 * sin, -(x0 - u) * sin + y0 * cos];
    let next: Vec<(f64, f64)> =
        c["validated"]["next"].as_array().unwrap().iter().map(|b| (exact(&b[0]), exact(&b[1]))).collect();
    for i in 0..2 {
        // The enclosure from a point is tight (about 1e-15) and holds the closed form (f64
        // evaluation error a few 1e-16).
        assert!(next[i].1 - next[i].0 < 1e-12, "{next:?}");
        assert!(next[i].0 - 1e-14 <= closed[i] && closed[i] <= next[i].1 + 1e-14, "{closed:?} vs {next:?}");
    }
    assert!(next.iter().any(|(lo, hi)| *lo > 1.0 || *hi < -1.0), "{next:?}");
    let ok = trestle(&["certify", s(&cert), HARMONIC]);
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
}

#[test]
fn flow_settings_are_checked_and_the_baselines_refuse_flows() {
    trestle(&["check", DAMPED, "--flow-order", "0"]).expect_input_error(&["--flow-order"]);
    trestle(&["check", DAMPED, "--flow-substeps", "0"]).expect_input_error(&["--flow-substeps"]);
    trestle(&["check", DAMPED, "--flow-tolerance", "2"]).expect_input_error(&["--flow-tolerance"]);
    trestle(&["check", DAMPED, "--method", "milp"]).expect_input_error(&["--method bridge"]);
    // Fixed settings prove the same box.
    let run = trestle(&["check", DAMPED, "--flow-order", "8", "--flow-substeps", "4", "--json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["details"]["flow"]["substeps"], 4);
}

/// ARCH-COMP TORA (remain): the competition's box [-2, 2]^4 as the candidate is refuted by a
/// validated run from its corner (the (x1, x2) oscillator turns the corner outside any box), and
/// `certify` accepts the refutation. (Run on the shared models; skipped without them.)
#[test]
fn archcomp_tora_box_is_refuted_by_a_validated_run() {
    let Some(models) = trestle_testkit::shared_models() else { return };
    let model = models.join("archcomp/Benchmark9-Tora/controllerTora.onnx");
    let set = format!("controller.model={}", s(&model));
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.json");
    let tora = "configs/systems/archcomp/tora.toml";
    let run = trestle(&["check", tora, "--set", &set, "--certificate", s(&cert), "--json", "--timeout", "600"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["verdict"], "not-inductive");
    let c = read_json(&cert);
    let next: Vec<(f64, f64)> =
        c["validated"]["next"].as_array().unwrap().iter().map(|b| (exact(&b[0]), exact(&b[1]))).collect();
    assert!(next.iter().any(|(lo, hi)| *lo > 2.0 || *hi < -2.0), "{next:?}");
    let ok = trestle(&["certify", s(&cert), tora, "--set", &set]);
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
}

/// ARCH-COMP single pendulum, the competition's bounded property (x1 in [0, 1] for 0.5 <= t <= 1,
/// the time a state): `ltl --method bpt` refutes it by a validated run of 10 periods from Init
/// (the box of step 10 strictly above x1 = 1), `certify` re-derives the run from its exact start,
/// a start moved inside Init (to x1 = 1) is rejected, and `simulate` from that exact start
/// reproduces the violation. (Run on the shared models; skipped without them.)
#[test]
fn archcomp_single_pendulum_bounded_property_is_refuted_by_a_validated_run() {
    let Some(models) = trestle_testkit::shared_models() else { return };
    let set =
        format!("controller.model={}", s(&models.join("archcomp/Single_Pendulum/controller_single_pendulum.onnx")));
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.json");
    let sys = "configs/systems/archcomp/single-pendulum.toml";
    let run = trestle(&[
        "ltl",
        sys,
        "--property",
        "arch",
        "--method",
        "bpt",
        "--set",
        &set,
        "--certificate",
        s(&cert),
        "--json",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let j = run.json();
    assert_eq!((&j["status"], &j["method"]), (&Value::from("refuted"), &Value::from("bpt-flow")), "{j}");
    let t = &j["trace"];
    assert_eq!(t["precision_bits"], 53, "{t}");
    assert!(t["replayed"].as_str().unwrap().contains("outward-rounded f64"), "{t}");
    let boxes = t["enclosures"].as_array().unwrap();
    assert_eq!(boxes.len(), 11, "{t}");
    assert!(exact(&boxes[10][0][0]) > 1.0, "{t}");
    let ok = trestle(&["certify", s(&cert), sys, "--set", &set]);
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    // The same ten periods from (1, x2) do not leave Safe.
    let mut c = read_json(&cert);
    c["run"]["start"][0] = Value::from("1");
    let tampered = dir.path().join("tampered.json");
    write_json(&tampered, &c);
    let bad = trestle(&["certify", s(&tampered), sys, "--set", &set]);
    assert_ne!(bad.code, 0, "{}{}", bad.stdout, bad.stderr);
    assert!(bad.stdout.contains("not strictly outside Safe"), "{}", bad.stdout);
    let start = read_json(&cert)["run"]["start"].clone();
    let from =
        format!("x1={},x2={},t={}", start[0].as_str().unwrap(), start[1].as_str().unwrap(), start[2].as_str().unwrap());
    let sim = trestle(&["simulate", sys, "--set", &set, "--from", &from, "--steps", "11", "--json"]);
    assert_eq!(sim.code, 0, "{}", sim.stderr);
    let step10 = &sim.json()["runs"][0]["steps"][10]["state"];
    assert!(step10["x1"].as_f64().unwrap() > 1.0, "{step10}");
}

/// On a continuous-time system, `ltl` takes `G<=k p` by --method bpt alone, and the other
/// commands still refuse it naming those that read it.
#[test]
fn ltl_on_flows_takes_bounded_always_by_bpt_and_the_others_refuse_flows() {
    let sys = "configs/systems/flow/harmonic-oscillator.toml";
    let proven = trestle(&["ltl", sys, "--formula", "G<=3 (-2 <= x <= 2)", "--json"]);
    assert_eq!(proven.code, 0, "{}{}", proven.stdout, proven.stderr);
    assert_eq!(proven.json()["method"], "bpt-flow");
    let wrong = trestle(&["ltl", sys, "--formula", "G<=3 (-2 <= x <= 2)", "--method", "rmilp"]);
    assert_eq!(wrong.code, 2, "{}", wrong.stderr);
    let shape = trestle(&["ltl", sys, "--formula", "F<=3 (x >= 0)"]);
    assert_eq!(shape.code, 2, "{}", shape.stderr);
    assert!(shape.stderr.contains("G<=k p"), "{}", shape.stderr);
    let ctl = trestle(&["ctl", sys, "--formula", "AG^3 (x <= 2)"]);
    assert_eq!(ctl.code, 2, "{}", ctl.stderr);
    assert!(ctl.stderr.contains("`ltl`"), "{}", ctl.stderr);
}

/// `--timeout` stops `ltl` on a flow in its falsification: bound propagation gives up at once
/// (`(x - y)^2 >= 0` written expanded straddles on every box along the diagonal) and the search
/// would simulate 10^5 periods from each candidate start. The run ends by itself with the time
/// limit as its reason (the CLI's backstop notes a run still going 2 s after its limit).
#[test]
fn ltl_on_a_flow_stops_at_its_time_limit_during_falsification() {
    let formula = "G<=100000 (x*x + y*y >= 2*x*y)";
    let run = trestle(&["ltl", HARMONIC, "--formula", formula, "--method", "bpt", "--timeout", "1", "--json"]);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["reason_kind"], "time-limit", "{json}");
    assert!(json["details"].get("note").is_none(), "{json}");
}

/// `ltl --method bpt --json` on ARCH-COMP TORA's bounded property with the shared controller and
/// `extra` flags; `None` (the test skips) without ../shared/models.
fn tora_bpt(extra: &[&str]) -> Option<Run> {
    let models = trestle_testkit::shared_models()?;
    let set = format!("controller.model={}", s(&models.join("archcomp/Benchmark9-Tora/controllerTora.onnx")));
    let mut args = vec![
        "ltl",
        "configs/systems/archcomp/tora.toml",
        "--property",
        "arch",
        "--method",
        "bpt",
        "--set",
        &set,
        "--json",
    ];
    args.extend_from_slice(extra);
    Some(trestle(&args))
}

/// ARCH-COMP TORA's bounded property (published verified by NNV): `ltl` never refutes it (with a
/// 5 s limit here: the proof takes about 20 CPU seconds, see the ignored test below).
#[test]
fn archcomp_tora_bounded_property_is_never_refuted() {
    let Some(run) = tora_bpt(&["--timeout", "5"]) else { return };
    assert!(run.code == 0 || run.code == 3, "{}{}", run.stdout, run.stderr);
    assert_ne!(run.json()["status"], "refuted");
}

/// TORA's bounded property is verified by zonotope propagation (about 20 CPU seconds, 82 boxes
/// of Init, at most 48 generators: too long for CI). Run with `cargo test --release --test
/// flow_check archcomp_tora_bounded_property_is_verified -- --ignored`.
#[test]
#[ignore]
fn archcomp_tora_bounded_property_is_verified() {
    let Some(run) = tora_bpt(&[]) else { return };
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(json["status"], "proven", "{json}");
    assert!(json["details"]["bpt_zonotope_boxes"].as_u64().unwrap() >= 1, "{json}");
}

/// `synth` on a flow: the damped oscillator's Safe is itself inductive; the harmonic oscillator
/// has no inductive box around the origin (file header), and the search finds a union of boxes
/// inside Safe = [-2, 2]^2 through the flow's enclosures. Both are proven by the flow check, their
/// certificates are of format `/3` and `certify` re-derives them.
#[test]
fn synth_proves_both_oscillators_and_certify_re_derives_the_invariants() {
    let dir = tempfile::tempdir().unwrap();
    for (sys, more_than_one_box) in [(DAMPED, false), (HARMONIC, true)] {
        let cert = dir.path().join("cert.json");
        let run = trestle(&["synth", sys, "--certificate", s(&cert), "--json"]);
        assert_eq!(run.code, 0, "{sys}: {}{}", run.stdout, run.stderr);
        let json = run.json();
        assert_eq!((json["status"].as_str(), json["method"].as_str()), (Some("proven"), Some("synth+flow")), "{json}");
        assert_eq!(json["details"]["flow"]["period"], "0.5");
        let boxes = json["details"]["invariant_boxes"].as_u64().unwrap();
        assert_eq!(boxes > 1, more_than_one_box, "{sys}: {boxes} boxes");
        let c = read_json(&cert);
        assert_eq!(c["format"], "trestle-bridge-certificate/3");
        assert!(!c["clauses"].as_array().unwrap().is_empty());
        let ok = trestle(&["certify", s(&cert), sys]);
        assert_eq!(ok.code, 0, "{sys}: {}{}", ok.stdout, ok.stderr);
        assert!(ok.stdout.contains("the flow re-enclosed") && ok.stdout.contains("certificate VALID"), "{}", ok.stdout);
    }
}

/// Planted truth: the harmonic oscillator from Init near the corner (1, -1) of Safe = [-1, 1]^2
/// leaves Safe after one period (closed form: y(0.5) = -0.5 sin(1/2) - cos(1/2) = -1.117.. from
/// the corner itself), so no invariant exists inside Safe. `synth` must answer unsafe by a
/// validated run, never safe, and `certify` re-derives the run from its start.
#[test]
fn synth_on_a_flow_that_leaves_safe_answers_unsafe_by_a_validated_run() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.json");
    let planted = ["--set", "safe=-1 <= x <= 1 and -1 <= y <= 1", "--set", "init=0.9 <= x <= 1 and -1 <= y <= -0.9"];
    let run = trestle(&[&["synth", HARMONIC, "--certificate", s(&cert), "--json"][..], &planted].concat());
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!((json["verdict"].as_str(), json["status"].as_str()), (Some("unsafe"), Some("refuted")), "{json}");
    let c = read_json(&cert);
    assert_eq!(c["format"], "trestle-bridge-certificate/3");
    assert!(c["run"].is_object(), "{c}");
    let ok = trestle(&[&["certify", s(&cert), HARMONIC][..], &planted].concat());
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    // Against the shipped Safe ([-2, 2]^2) the same run stays inside: the certificate is refused.
    let bad = trestle(&[&["certify", s(&cert), HARMONIC][..], &planted[2..]].concat());
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);
}

/// ARCH-COMP ACC's bounded property (the safe distance for 5 s, published verified by NNV): the
/// controller sees the observation (30, 1.4, v_ego, x_lead - x_ego, v_lead - v_ego) through
/// `[controller] inputs`, and `ltl` never refutes the property.
#[test]
fn archcomp_acc_bounded_property_is_never_refuted() {
    if trestle_testkit::shared_models().is_none() {
        return;
    }
    let run = trestle(&[
        "ltl",
        "configs/systems/archcomp/acc.toml",
        "--property",
        "arch",
        "--method",
        "bpt",
        "--json",
        "--timeout",
        "20",
    ]);
    assert!(run.code == 0 || run.code == 3, "{}{}", run.stdout, run.stderr);
    let j = run.json();
    assert_ne!(j["status"], "refuted", "{j}");
    assert_eq!(j["method"], "bpt-flow", "{j}");
}

/// `synth --reach` proves the damped oscillator safe forever by a reach chain of zonotopes into a
/// terminal box around the equilibrium; `certify` re-derives every set, and refuses the
/// certificate once a set is moved or against a smaller Safe.
#[test]
fn synth_reach_proves_the_damped_oscillator_forever_and_certify_re_derives_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("reach.json");
    let run = trestle(&["synth", DAMPED, "--reach", "--certificate", s(&cert), "--json"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!((json["status"].as_str(), json["method"].as_str()), (Some("proven"), Some("reach-flow")), "{json}");
    assert!(json["details"]["sets"].as_u64().unwrap() >= 3, "{json}");
    let c = read_json(&cert);
    assert_eq!(c["format"], "trestle-flow-reach-certificate/1");
    let ok = trestle(&["certify", s(&cert), DAMPED]);
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    assert!(ok.stdout.contains("certificate VALID"), "{}", ok.stdout);
    // A chain's second set moved: its recomputed image no longer matches.
    let mut moved = c.clone();
    let x = moved["chains"][0]["sets"][1]["center"][0].as_f64().unwrap();
    moved["chains"][0]["sets"][1]["center"][0] = serde_json::json!(x + 1e-3);
    write_json(&cert, &moved);
    let bad = trestle(&["certify", s(&cert), DAMPED]);
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);
    // Against a Safe that cuts through the first set, the untouched certificate is refused.
    write_json(&cert, &c);
    let bad = trestle(&["certify", s(&cert), DAMPED, "--set", "safe=-1 <= x <= 1 and -1 <= y <= 0.45"]);
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);
    // The search's flags: the terminal margins tried, the generators kept (in the certificate,
    // which certify's recomputed steps use), the flow's tolerance; bad values are input errors.
    let tuned = ["--reach-margins", "0.3,0.1", "--reach-generators", "6", "--flow-tolerance", "1e-10"];
    let run = trestle(&[&["synth", DAMPED, "--reach", "--certificate", s(&cert), "--json"][..], &tuned].concat());
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["details"]["terminal_half_side"], 0.3, "{}", run.stdout);
    let c = read_json(&cert);
    assert_eq!((c["generators_per_state"].as_u64(), c["flow"]["tolerance"].as_f64()), (Some(6), Some(1e-10)));
    assert_eq!(trestle(&["certify", s(&cert), DAMPED]).code, 0);
    for bad in [&["--reach-margins", "0,1"][..], &["--reach-max-chains", "0"], &["--flow-order", "31"]] {
        trestle(&[&["synth", DAMPED, "--reach"][..], bad].concat()).expect_input_error(&[bad[0]]);
    }
}

/// Planted truth (the damped oscillator's header): from (1, 0) the flow reaches y < -0.3 within
/// one period (and so from x >= 0.9: the action -x pulls y down at about 2 per second), so with
/// Safe cut at y >= -0.3 this Init is unsafe; `synth --reach` must never answer safe, and it
/// stops at the first period's set. `--reach` on a discrete system is an input error.
#[test]
fn synth_reach_never_proves_a_planted_unsafe_flow() {
    let planted =
        ["--set", "safe=-1 <= x <= 1 and -0.3 <= y <= 1", "--set", "init=0.9 <= x <= 0.99 and -0.05 <= y <= 0.05"];
    let run = trestle(&[&["synth", DAMPED, "--reach", "--json"][..], &planted].concat());
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["status"], "unknown");
    let reason = run.json()["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("not decided on the set of period 1"), "{reason}");
    // Stopped by its time limit, it says so (the chains' last error is not the reason then).
    let stopped = trestle(&[&["synth", DAMPED, "--reach", "--json", "--timeout", "0"][..], &planted].concat());
    assert_eq!(stopped.code, 3, "{}{}", stopped.stdout, stopped.stderr);
    assert_eq!(stopped.json()["reason_kind"], "time-limit", "{}", stopped.stdout);
    let discrete = trestle(&["synth", "examples/double-integrator.toml", "--reach"]);
    assert_eq!(discrete.code, 2, "{}", discrete.stderr);
}
