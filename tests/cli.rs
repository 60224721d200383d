//! The `trestle` command line: what users run, with its exit codes and JSON.
//!
//! Exit codes: 0 proven/done, 1 refuted, 2 input error, 3 unknown (or floating-point evidence
//! only), 4 internal error.

use serde_json::Value;
use std::process::Command;
use trestle_testkit::{
    AFFINE_OBSERVATION, FORGE_BUG, FORGE_BUG_FORGED as FORGED, INT_BUG, WALK, regression_path, repo, scratch,
    shared_models,
};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{}", self.stdout))
    }
}

fn trestle(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_trestle")).args(args).current_dir(repo()).output().expect("runs");
    Run {
        code: out.status.code().expect("exits normally, not by a signal"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// An input error: exit 2, a message naming the problem, and never a panic.
fn expect_input_error(r: &Run, fragments: &[&str]) {
    assert_eq!(r.code, 2, "exit code; stderr: {}", r.stderr);
    assert!(!r.stderr.contains("panicked") && !r.stderr.contains("internal error"), "{}", r.stderr);
    for f in fragments {
        assert!(r.stderr.contains(f), "expected '{f}' in: {}", r.stderr);
    }
}

const SMALL: &str = r#"
init = "0.3 <= x <= 0.4 and 0.6 <= y <= 0.7"
safe = "0.22 <= x <= 0.98 and 0.54 <= y <= 0.98"
invariant = "0.25 <= x <= 0.95 and 0.55 <= y <= 0.95"
[state]
x = { type = "real" }
y = { type = "real" }
[controller]
model = "net.nnet"
nnet_normalization = "none"
actions = ["a0", "a1"]
[step]
x = "x + 0.1*a0"
y = "y + 0.1*a1"
"#;

#[test]
fn check_proves_the_example_and_certify_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.json");
    let plot = dir.path().join("plot.svg");
    let r = trestle(&[
        "check",
        "examples/maze-det.toml",
        "--json",
        "--certificate",
        cert.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["verdict"], "safe");
    for k in ["splits", "smt_queries", "bound_queries", "seconds"] {
        assert!(j["stats"][k].is_number(), "stats.{k}");
    }
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    // CROWN's bounds reach y' = 0.95 exactly on the example's boxes (no margin at the level of
    // psi), so its boxes are decided exactly: exact clauses, format /2.
    assert_eq!(c["format"], "trestle-bridge-certificate/2");
    assert_eq!(c["state_vars"], serde_json::json!(["x", "y"]));
    assert!(
        c["clauses"].as_array().unwrap().iter().all(|cl| cl["box"]["lo"].is_array() && cl["post"]["hi"].is_array())
    );
    assert!(j["stats"]["exact_clauses"].as_u64().unwrap() > 0);
    let exact = c["exact_clauses"].as_array().unwrap();
    assert!(!exact.is_empty() && exact.iter().all(|cl| cl["box"]["hi"].is_array() && cl.get("post").is_none()));
    assert!(std::fs::read_to_string(&plot).unwrap().contains("<svg"));
    let v = trestle(&["certify", cert.to_str().unwrap(), "examples/maze-det.toml", "--json"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert_eq!(v.json()["valid"], true);
    // The same certificate does not prove a system with a different step.
    let text =
        std::fs::read_to_string(repo().join("examples/maze-det.toml")).unwrap().replace("x + 0.1*a0", "x - 0.1*a0");
    let other = dir.path().join("other.toml");
    std::fs::write(&other, text).unwrap();
    std::fs::create_dir_all(dir.path().join("networks")).unwrap();
    std::fs::copy(repo().join("examples/networks/maze-2x8.nnet"), dir.path().join("networks/maze-2x8.nnet")).unwrap();
    let bad = trestle(&["certify", cert.to_str().unwrap(), other.to_str().unwrap()]);
    assert_eq!(bad.code, 1, "{}", bad.stdout);
}

#[test]
fn check_refutes_a_repelling_controller_with_exit_1() {
    let (_d, path) = scratch("sys.toml", &SMALL.replace("x + 0.1*a0", "x - 0.1*a0"));
    let r = trestle(&["check", path.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["verdict"], "not-inductive");
    assert!(j["details"]["counterexample"]["next"]["x"].is_number());
    assert_eq!(j["details"]["counterexample"]["replayed"], "exact rational arithmetic");
}

/// `check` and `synth` print their refutations in one shape, the result schema's trace: a step
/// that leaves the candidate, a run from Init that leaves Safe (FORGE_BUG: x' = x + 1).
#[test]
fn check_and_synth_print_refutations_as_one_trace_shape() {
    let (_d, path) = scratch("forge.toml", FORGE_BUG);
    let check = trestle(&["check", path.to_str().unwrap(), "--json"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    let synth = trestle(&["synth", path.to_str().unwrap(), "--json"]);
    assert_eq!(synth.code, 1, "{}", synth.stderr);
    for (what, j) in [("check", check.json()), ("synth", synth.json())] {
        let t = &j["trace"];
        let states = t["states_exact"].as_array().unwrap_or_else(|| panic!("{what}: no trace in {j}"));
        let steps = t["steps"].as_array().unwrap();
        assert_eq!(states.len(), steps.len() + 1, "{what}: {t}");
        assert!(!steps.is_empty(), "{what}: {t}");
        assert_eq!(steps[0]["branch"], "step", "{what}: {t}");
        assert_eq!(steps[0]["actions_exact"], serde_json::json!(["1"]), "{what}: a = 1: {t}");
        assert_eq!(t["replayed"], "exact rational arithmetic");
        assert!(states.last().unwrap()[0].as_str().unwrap().parse::<f64>().unwrap() > 1.0, "{what}: {t}");
    }
}

/// The paper's baselines agree with the bridge engine on the example and on a refuted variant.
#[test]
fn monolithic_and_milp_baselines_agree_with_the_bridge() {
    let (_d, bad) = scratch("sys.toml", &SMALL.replace("x + 0.1*a0", "x - 0.1*a0"));
    let (_e, good) = scratch("sys.toml", SMALL);
    for method in ["monolithic", "milp"] {
        let r = trestle(&["check", good.to_str().unwrap(), "--method", method, "--json"]);
        assert_eq!(r.code, 0, "{method}: {}", r.stderr);
        assert!(r.json()["evidence"].is_string());
        let r = trestle(&["check", bad.to_str().unwrap(), "--method", method, "--json"]);
        assert_eq!(r.code, 1, "{method}: {}", r.stderr);
        assert_eq!(r.json()["verdict"], "not-inductive");
        assert!(r.json()["details"]["counterexample"]["next"].is_object());
    }
}

/// `--method milp`: the issue's reproducer (a weight of 1e-10 next to 9e5, which HiGHS used to drop,
/// answering "safe" with exit 0) is refuted; MILP evidence is "safe" (exit 0) only once the bridge
/// engine confirms it, otherwise "safe-by-milp-evidence" with exit 3 and the margin.
#[test]
fn milp_evidence_is_never_reported_as_a_proof() {
    let path = regression_path("tiny-weight.toml");
    let r = trestle(&["check", path.to_str().unwrap(), "--method", "milp", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["verdict"], "not-inductive");
    assert_eq!(j["details"]["counterexample"]["state_exact"][0], "1");
    assert_eq!(j["details"]["milp"]["answer"], "counterexample");
    let r = trestle(&["check", "examples/maze-det.toml", "--method", "milp", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    assert_eq!(
        (j["verdict"].as_str(), j["details"]["milp"]["confirmation"]["result"].as_str()),
        (Some("safe"), Some("proven"))
    );
    assert_eq!(j["details"]["milp"]["exact"], false);
    let r = trestle(&["check", "examples/maze-det.toml", "--method", "milp", "--max-splits", "0", "--json"]);
    assert_eq!(r.code, 3, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["verdict"], "safe-by-milp-evidence");
    assert_eq!(j["details"]["milp"]["confirmation"]["result"], "undecided");
    assert!(j["details"]["milp"]["margin"].as_f64().unwrap() > j["details"]["milp"]["threshold"].as_f64().unwrap());
    let text = trestle(&["check", "examples/maze-det.toml", "--method", "milp", "--max-splits", "0"]);
    assert_eq!(text.code, 3);
    assert!(text.stdout.contains("SAFE-BY-MILP-EVIDENCE") && text.stdout.contains("NOT a proof"), "{}", text.stdout);
}

/// `synth` proves the example without its candidate, and `certify` accepts the union it writes.
#[test]
fn synth_proves_the_example_and_certify_accepts_it() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("synth.json");
    let r = trestle(&["synth", "examples/maze-det.toml", "--json", "--certificate", cert.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["verdict"], "safe");
    assert_eq!(j["details"]["conditions"]["inductive"]["result"], "proven");
    assert!(j["details"]["invariant_boxes"].as_u64().unwrap() >= 1);
    for k in ["images", "smt_queries", "bound_queries", "seconds"] {
        assert!(j["stats"][k].is_number(), "stats.{k}");
    }
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    // /1, or /2 when boxes of the proof were decided by the exact leaf (the box grown from Init
    // is proven as one starting box, whose corners may need it).
    let format = c["format"].as_str().unwrap();
    assert!(["trestle-bridge-certificate/1", "trestle-bridge-certificate/2"].contains(&format), "{format}");
    let v = trestle(&["certify", cert.to_str().unwrap(), "examples/maze-det.toml", "--json"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert_eq!(v.json()["valid"], true);
}

/// `ltl --certificate` writes the bridge engine's proof of a `G p` proven by synthesis over the
/// lifted state of a recurrent controller (or by a box of bound propagation); `certify` re-checks it on the lifted system with `p` as
/// Safe, and rejects it once the formula is tightened past the invariant, or for another system.
#[test]
fn ltl_certificate_of_a_recurrent_invariant_is_rechecked() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("ltl.json");
    let sys = "configs/systems/pi-integral.toml";
    let r = trestle(&["ltl", sys, "--property", "stays", "--json", "--certificate", cert.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["method"], "synthesis");
    let text = std::fs::read_to_string(&cert).unwrap();
    let c: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(c["state_vars"].as_array().unwrap().len(), 3, "x and the two kept hidden units");
    let v = trestle(&["certify", cert.to_str().unwrap(), sys, "--json"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert_eq!(v.json()["valid"], true);
    let ltl = c["ltl"].as_str().unwrap();
    let tight = dir.path().join("tight.json");
    std::fs::write(&tight, text.replace(ltl, &ltl.replace("0.5)", "0.1)"))).unwrap();
    let v = trestle(&["certify", tight.to_str().unwrap(), sys]);
    assert_eq!(v.code, 1, "{}", v.stdout);
    assert!(v.stdout.contains("FAIL Inv => Safe"), "{}", v.stdout);
    // A formula that is not `G p` over the system's variables is an input error.
    for (formula, fragment) in [("G (y <= 1)", "y"), ("F (x <= 0.5)", "not G p")] {
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, text.replace(ltl, formula)).unwrap();
        expect_input_error(&trestle(&["certify", bad.to_str().unwrap(), sys]), &["ltl", fragment]);
    }
    // A bounded verdict on MILP evidence has no certificate: none is written, and stderr says so.
    let none = dir.path().join("none.json");
    let formula = "G<=10 (x <= 0.5 and x >= -0.5)";
    let r = trestle(&["ltl", sys, "--formula", formula, "--certificate", none.to_str().unwrap()]);
    assert_eq!(r.code, 3, "true on evidence; {}", r.stderr);
    assert!(!none.exists() && r.stderr.contains("floating-point evidence"), "{}", r.stderr);
    // The box invariant bound propagation finds for the tuned servo gets one too.
    let tuned = "configs/systems/pi-tuned.toml";
    let r = trestle(&["ltl", tuned, "--property", "stays", "--json", "--certificate", cert.to_str().unwrap()]);
    assert_eq!((r.code, &r.json()["method"]), (0, &Value::from("invariant")), "{}", r.stderr);
    let v = trestle(&["certify", cert.to_str().unwrap(), tuned, "--json"]);
    assert_eq!((v.code, &v.json()["valid"]), (0, &Value::from(true)), "{}", v.stdout);
}

/// `ltl --certificate` writes the enclosures of a bounded formula bound propagation proves;
/// `certify` re-checks them (exit 0), rejects them once an enclosure is shrunk past the runs or
/// the formula is tightened past them (exit 1), and refuses a formula of another depth (exit 2).
#[test]
fn ltl_certificate_of_a_bounded_formula_is_rechecked() {
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("bounded.json");
    let sys = "configs/systems/rnn-figure1.toml";
    let r =
        trestle(&["ltl", sys, "--formula", "X^2 (z <= 2)", "--method", "bpt", "--certificate", cert.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&cert).unwrap();
    let c: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(c["format"], "trestle-ltl-bounded-certificate/1");
    assert_eq!(c["chains"][0].as_array().unwrap().len(), 3, "steps 0, 1, 2");
    let v = trestle(&["certify", cert.to_str().unwrap(), sys, "--json"]);
    assert_eq!((v.code, &v.json()["valid"]), (0, &Value::from(true)), "{}", v.stdout);
    assert_eq!(v.json()["ltl"], "X^2 (z <= 2)");
    // R_2 = [0, 2]^2 (z and the hidden unit) shrunk to [0, 1/2]^2: from z = h = 1 in R_1 with
    // x = 0 the next z is 1.
    let mut shrunk = c.clone();
    shrunk["chains"][0][2]["hi"] = serde_json::json!([0.5, 0.5]);
    let path = dir.path().join("shrunk.json");
    std::fs::write(&path, shrunk.to_string()).unwrap();
    let v = trestle(&["certify", path.to_str().unwrap(), sys]);
    assert_eq!(v.code, 1, "{}", v.stdout);
    assert!(v.stdout.contains("FAIL R_t") && v.stdout.contains("step 1 -> 2"), "{}", v.stdout);
    let tight = dir.path().join("tight.json");
    std::fs::write(&tight, text.replace("X^2 (z <= 2)", "X^2 (z <= 1)")).unwrap();
    let v = trestle(&["certify", tight.to_str().unwrap(), sys]);
    assert_eq!(v.code, 1, "{}", v.stdout);
    assert!(v.stdout.contains("FAIL 'X^2 (z <= 1)' holds"), "{}", v.stdout);
    let deeper = dir.path().join("deeper.json");
    std::fs::write(&deeper, text.replace("X^2 (z <= 2)", "X^3 (z <= 2)")).unwrap();
    expect_input_error(&trestle(&["certify", deeper.to_str().unwrap(), sys]), &["chain 0 has 3 boxes"]);
    // An unknown verdict writes none.
    let none = dir.path().join("none.json");
    let r =
        trestle(&["ltl", sys, "--formula", "X^3 (z <= 2)", "--method", "bpt", "--certificate", none.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(!none.exists() && r.stderr.contains("only a proven formula"), "{}", r.stderr);
}

/// A candidate that is not inductive is replaced by a synthesised one with
/// `--synthesize-on-failure`; without the flag the check is refuted.
#[test]
fn check_synthesizes_when_the_candidate_fails() {
    // Too tight: the controller's steps of 0.1 leave this thin band around the target.
    let (_d, path) = scratch("sys.toml", &SMALL.replace("0.55 <= y <= 0.95\"", "0.6 <= y <= 0.7\""));
    let plain = trestle(&["check", path.to_str().unwrap(), "--json"]);
    assert_eq!(plain.code, 1, "{}", plain.stdout);
    assert!(plain.json()["details"].get("candidate").is_none());
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("cert.json");
    let r = trestle(&[
        "check",
        path.to_str().unwrap(),
        "--synthesize-on-failure",
        "--json",
        "--certificate",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["verdict"].as_str(), j["method"].as_str()), (Some("safe"), Some("bridge+synth")));
    assert_eq!(j["details"]["candidate"]["verdict"], "not-inductive", "the candidate's own result rides along");
    let v = trestle(&["certify", cert.to_str().unwrap(), path.to_str().unwrap()]);
    assert_eq!(v.code, 0, "the certificate is the synthesised proof: {}", v.stdout);
    let r = trestle(&["check", path.to_str().unwrap(), "--method", "milp", "--synthesize-on-failure"]);
    expect_input_error(&r, &["--synthesize-on-failure"]);
}

/// `synth` on the det 2x128 peer controller, whose candidate is not inductive (the issue's case).
#[test]
fn synth_proves_the_det_128_peer_controller() {
    if shared_models().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cert = dir.path().join("c.json");
    let model = "controller.model=../shared/models/maze/det/maze_2d_128x128.onnx";
    let sys = "configs/systems/peer-maze-det.toml";
    let r = trestle(&["synth", sys, "--set", model, "--json", "--certificate", cert.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["verdict"], "safe");
    let v = trestle(&["certify", cert.to_str().unwrap(), sys, "--set", model, "--json"]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert_eq!(v.json()["valid"], true);
}

#[test]
fn limits_give_unknown_with_exit_3() {
    let r = trestle(&["check", "examples/maze-det.toml", "--paper", "--max-splits", "1", "--json"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(r.json()["verdict"], "unknown");
}

#[test]
fn bad_input_is_an_error_with_exit_2() {
    expect_input_error(&trestle(&["check", "no/such/file.toml"]), &["no/such/file.toml", "cannot read"]);
    let (_d, p) = scratch("bad.toml", "[state\nx=1");
    expect_input_error(&trestle(&["info", p.to_str().unwrap()]), &["bad.toml", "malformed TOML"]);
    let (_d, p) = scratch("sys.toml", &SMALL.replace("0.1*a1", "0.1*b1"));
    expect_input_error(&trestle(&["info", p.to_str().unwrap()]), &["sys.toml", "step.y", "unknown name 'b1'"]);
    let (_d, p) =
        scratch("sys.toml", &SMALL.replace("actions = [\"a0\", \"a1\"]", "actions = [\"a0\"]").replace("0.1*a1", "0"));
    expect_input_error(&trestle(&["info", p.to_str().unwrap()]), &["2 outputs but 1"]);
    let (_d, p) = scratch("sys.toml", &SMALL.replace("x + 0.1*a0", "x + (0.1*a0"));
    expect_input_error(&trestle(&["check", p.to_str().unwrap()]), &["step.x", "cannot parse"]);
    let (_d, p) = scratch("sys.toml", &SMALL.replace("net.nnet", "missing.onnx"));
    expect_input_error(&trestle(&["check", p.to_str().unwrap()]), &["controller.model", "missing.onnx"]);
    // NaN weights in a model file, named with the file.
    let (d, p) = scratch("sys.toml", SMALL);
    let nnet = std::fs::read_to_string(d.path().join("net.nnet")).unwrap().replacen("-4.0,0.0,", "nan,0.0,", 1);
    std::fs::write(d.path().join("net.nnet"), nnet).unwrap();
    expect_input_error(&trestle(&["check", p.to_str().unwrap()]), &["net.nnet"]);
    // Unsupported ONNX operators are named; a garbage .onnx is refused.
    let (d, p) = scratch("sys.toml", &SMALL.replace("net.nnet", "net.onnx"));
    std::fs::write(d.path().join("net.onnx"), b"not a model").unwrap();
    expect_input_error(&trestle(&["check", p.to_str().unwrap()]), &["net.onnx"]);
    // Arguments.
    expect_input_error(&trestle(&["check", "examples/maze-det.toml", "--post", "magic"]), &["--post"]);
    expect_input_error(&trestle(&["check", "examples/maze-det.toml", "--set", "nokey"]), &["KEY=VALUE"]);
    expect_input_error(
        &trestle(&["simulate", "examples/maze-det.toml", "--from", "z=1"]),
        &["unknown state variable 'z'"],
    );
    expect_input_error(&trestle(&["eval", "examples/networks/maze-2x8.nnet", "--input", "0.3"]), &["takes 2"]);
    expect_input_error(
        &trestle(&["eval", "examples/networks/maze-2x8.nnet", "--input", "0.3,nan"]),
        &["not a finite number"],
    );
    expect_input_error(
        &trestle(&["bounds", "examples/networks/maze-2x8.nnet", "--lo", "0.5,0.6", "--hi", "0.4,0.7"]),
        &["lo 0.5 > hi 0.4"],
    );
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"format\": 1}").unwrap();
    expect_input_error(
        &trestle(&["certify", junk.to_str().unwrap(), "examples/maze-det.toml"]),
        &["not a trestle certificate"],
    );
    // Synthesis needs a bounded Safe made of variable bounds.
    let (_d, p) = scratch(
        "sys.toml",
        &SMALL.replace("safe = \"0.22 <= x <= 0.98 and 0.54 <= y <= 0.98\"", "safe = \"x <= 0.98\""),
    );
    expect_input_error(&trestle(&["synth", p.to_str().unwrap()]), &["safe region", "unbounded"]);
    let (_d, p) = scratch("sys.toml", &SMALL.replace("safe = ", "# safe = "));
    expect_input_error(&trestle(&["synth", p.to_str().unwrap()]), &["safe"]);
    expect_input_error(&trestle(&["synth", "examples/maze-det.toml", "--resolution", "0"]), &["--resolution"]);
    // Errors under --json are one JSON object too.
    let r = trestle(&["check", "no/such/file.toml", "--json"]);
    assert_eq!(r.json()["error"]["kind"], "input");
}

#[test]
fn dump_smt_writes_every_z3_query() {
    let dir = tempfile::tempdir().unwrap();
    let r = trestle(&[
        "check",
        "examples/maze-nondet.toml",
        "--no-fast-path",
        "--dump-smt",
        dir.path().to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let z3 = r.json()["stats"]["z3_queries"].as_u64().unwrap() as usize;
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(z3 > 0 && files.len() >= z3, "{} files for {z3} Z3 queries", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.contains("(check-sat)") && text.contains("declare-fun"), "{}", f.display());
    }
}

#[test]
fn eval_and_bounds_print_json() {
    let r = trestle(&["eval", "examples/networks/maze-2x8.nnet", "--input", "0.3,0.6", "--json"]);
    assert_eq!(r.code, 0);
    // a0 = clip(4*(0.6-0.3), -1, 1) = 1, a1 = clip(4*(0.75-0.6), -1, 1) = 0.6
    let out: Vec<f64> = serde_json::from_value(r.json()["output"].clone()).unwrap();
    assert_eq!(out[0], 1.0);
    assert!((out[1] - 0.6).abs() < 1e-12);
    let b = trestle(&[
        "bounds",
        "examples/networks/maze-2x8.nnet",
        "--lo",
        "0.3,0.6",
        "--hi",
        "0.31,0.61",
        "--method",
        "alpha-crown",
        "--json",
    ]);
    assert_eq!(b.code, 0, "{}", b.stderr);
    let j = b.json();
    assert!(j["lo"][1].as_f64().unwrap() <= 0.56 && j["hi"][1].as_f64().unwrap() >= 0.6);
    assert_eq!(j["linear"]["upper"]["A"].as_array().unwrap().len(), 2);
}

#[test]
fn info_describes_the_system() {
    let r = trestle(&["info", "examples/maze-nondet.toml", "--json"]);
    assert_eq!(r.code, 0);
    let j = r.json();
    assert_eq!(j["networks"][0]["layers"], serde_json::json!([2, 8, 8, 2]));
    assert_eq!(j["nondet"][0]["name"], "c");
    assert_eq!(j["step"][0]["updates"][0]["next"], "x + 0.1*c*a0");
    let t = trestle(&["info", "examples/maze-nondet.toml"]);
    assert!(t.stdout.contains("2 -> 8 -> 8 -> 2") && t.stdout.contains("x' = x + 0.1*c*a0"), "{}", t.stdout);
}

/// The known VerticalCAS counterexample (notes/bounded-ctl.md): CL1500 three times, pilot at g/4.
#[test]
fn simulate_reproduces_the_vcas_counterexample() {
    if shared_models().is_none() {
        return;
    }
    let r = trestle(&[
        "simulate",
        "configs/systems/vcas.toml",
        "--set",
        "init.hdot0=-22.5",
        "--from",
        "h=-129",
        "--steps",
        "3",
        "--branch",
        "accel-0",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    let steps = j["runs"][0]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    for s in steps {
        assert_eq!(s["actions"]["a"]["label"], "CL1500");
    }
    let expect = [(-110.525, -14.45), (-100.1, -6.4), (-97.725, 1.65)];
    let states: Vec<&Value> = steps[1..].iter().map(|s| &s["state"]).chain([&j["runs"][0]["final"]]).collect();
    for (s, (h, hd)) in states.iter().zip(expect) {
        assert!((s["h"].as_f64().unwrap() - h).abs() < 1e-9 && (s["hdot0"].as_f64().unwrap() - hd).abs() < 1e-9, "{s}");
    }
    // Exactly: the final state is the decimal, not a float near it.
    assert_eq!(j["runs"][0]["final_exact"][0], "-97.725");
}

#[test]
fn simulate_frozenlake_and_the_figure1_rnn() {
    if shared_models().is_none() {
        return;
    }
    let r = trestle(&["simulate", "configs/systems/frozenlake.toml", "--steps", "6", "--branch", "intended", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    // The agent's policy from s1 is "up" (README of the model): it stays in s1 on the intended branch.
    assert_eq!(j["runs"][0]["steps"][0]["actions"]["a"]["label"], "up");
    assert_eq!(j["runs"][0]["final"]["row"], 1.0);
    let r = trestle(&[
        "simulate",
        "configs/systems/rnn-figure1.toml",
        "--steps",
        "5",
        "--runs",
        "3",
        "--seed",
        "4",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for run in r.json()["runs"].as_array().unwrap() {
        for s in run["steps"].as_array().unwrap() {
            assert_eq!(s["actions"]["out"], 0.0, "z_t = 0 for every t");
        }
    }
}

#[test]
fn simulate_uses_init_and_the_seed() {
    let a = trestle(&["simulate", "examples/maze-nondet.toml", "--steps", "5", "--seed", "3", "--json"]);
    let b = trestle(&["simulate", "examples/maze-nondet.toml", "--steps", "5", "--seed", "3", "--json"]);
    assert_eq!(a.stdout, b.stdout, "same seed, same run");
    let j = a.json();
    assert_eq!(j["runs"][0]["start_in_init"], true);
    let t = trestle(&["simulate", "examples/maze-det.toml", "--steps", "2"]);
    assert!(t.stdout.lines().next().unwrap().contains("a0"), "{}", t.stdout);
}

/// `simulate --float` feeds the step the f64 of each drawn disturbance, and that f64 lies in the
/// declared interval even where the nearest f64 of an end does not (the nearest f64 of -0.005 is
/// below -1/200; this interval holds one or two floats, so draws land on its ends half the time).
/// The step `x = d` records every drawn value exactly as the next state.
#[test]
fn simulate_float_draws_disturbances_inside_their_interval() {
    let text = INT_BUG
        .replace("type = \"int\" }", "type = \"real\" }\n[nondet]\nd = { interval = [-0.005, -0.004999999999999999] }")
        .replace("x = \"if x > 0 and x < 1 then 100 else a\"", "x = \"d + 0*a\"")
        .replace("safe = \"0 <= x <= 1\"", "safe = \"-1 <= x <= 1\"");
    let (_d, p) = scratch("float.toml", &text);
    let r = trestle(&["simulate", p.to_str().unwrap(), "--float", "--steps", "20", "--runs", "3", "--json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let q = |t: &str| trestle_ir::num::parse_rational(t).unwrap();
    let (lo, hi) = (q("-0.005"), q("-0.004999999999999999"));
    let j = r.json();
    for run in j["runs"].as_array().unwrap() {
        assert_eq!(run["stopped"], Value::Null, "{run}");
        let steps = run["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 20);
        let drawn = steps[1..].iter().map(|s| &s["state_exact"][0]).chain([&run["final_exact"][0]]);
        for x in drawn {
            let x = q(x.as_str().unwrap());
            assert!(lo <= x && x <= hi, "{x} outside [-0.005, -0.004999999999999999]");
        }
    }
}

/// A rejected certificate exits 1 with the failing checks named; a file that is not a certificate
/// of the system exits 2 with the problem named.
#[test]
fn certify_rejects_the_forged_certificate_of_issue_9() {
    let (dir, sys) = scratch("forge.toml", FORGE_BUG);
    let sys = sys.to_str().unwrap();
    let check = trestle(&["check", sys, "--json"]);
    assert_eq!((check.code, check.json()["verdict"].clone()), (1, Value::from("not-inductive")), "{}", check.stdout);
    let cert = dir.path().join("forged.json");
    std::fs::write(&cert, FORGED).unwrap();
    let r = trestle(&["certify", cert.to_str().unwrap(), sys]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("REJECTED") && r.stdout.contains("FAIL"), "{}", r.stdout);
    let j = trestle(&["certify", cert.to_str().unwrap(), sys, "--json"]).json();
    assert_eq!(j["valid"], false);
    for (text, fragment) in [
        (FORGED.replace("1000.0", "NaN"), "not a trestle certificate"),
        (FORGED.replace("\"forge-bug\"", "\"other\""), "for system 'other'"),
        (FORGED.replace("[[0.0]]", "[[0.0],[0.0]]"), "1 x 1 matrix"),
        (FORGED.replace("\"state_vars\":[\"x\"]", "\"state_vars\":[\"y\"]"), "variables differ"),
    ] {
        std::fs::write(&cert, text).unwrap();
        expect_input_error(&trestle(&["certify", cert.to_str().unwrap(), sys]), &["forged.json", fragment]);
    }
}

/// The tool's own certificate for an observation `x / 3 + 1/7` (not a state variable) is
/// re-checked and accepted. Postconditions alone (`--no-exact-leaf`), so that its clauses carry
/// linear rows over the observation.
#[test]
fn certify_accepts_certificates_of_affine_observations() {
    let (dir, sys) = scratch("affine.toml", AFFINE_OBSERVATION);
    let cert = dir.path().join("cert.json");
    let r = trestle(&["check", sys.to_str().unwrap(), "--no-exact-leaf", "--certificate", cert.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    assert!(written["clauses"][0]["linear"].is_object(), "{written}");
    let v = trestle(&["certify", cert.to_str().unwrap(), sys.to_str().unwrap()]);
    assert_eq!(v.code, 0, "{}", v.stdout);
    assert!(v.stdout.contains("certificate VALID"), "{}", v.stdout);
}

/// An int variable holds integers, so x = 0.5 is no state: the check never refutes the
/// reproducer, a simulation cannot start there, and certify refuses a witness there (exit 2).
#[test]
fn int_bug_no_command_accepts_a_non_integer_state() {
    let (d, p) = scratch("int.toml", INT_BUG);
    let p = p.to_str().unwrap();
    let r = trestle(&["check", p]);
    assert!(r.code == 0 || r.code == 3, "exit {}: {}", r.code, r.stdout);
    let r = trestle(&["synth", p]);
    assert!(r.code == 0 || r.code == 3, "exit {}: {}", r.code, r.stdout);
    expect_input_error(&trestle(&["simulate", p, "--from", "x=0.5"]), &["start state", "x = 0.5", "int"]);
    let r = trestle(&["simulate", p, "--from", "x=1", "--steps", "3", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["runs"][0]["final_exact"][0], "1");
    let forged = d.path().join("forged.json");
    std::fs::write(
        &forged,
        r#"{"format":"trestle-bridge-certificate/1","system":"int-bug","verdict":"not-inductive",
            "witness_exact":{"state":["1/2"],"action":["1/2"],"nondet":[],"next":["100"],"branch":"step"}}"#,
    )
    .unwrap();
    expect_input_error(&trestle(&["certify", forged.to_str().unwrap(), p]), &["x = 0.5", "int"]);
    // A domain bound is part of the state space too.
    let (_e, q) = scratch("dom.toml", &INT_BUG.replace("type = \"int\" }", "type = \"int\", domain = [0, 1] }"));
    expect_input_error(&trestle(&["simulate", q.to_str().unwrap(), "--from", "x=2"]), &["x = 2", "[0, 1]"]);
}

#[test]
fn maze_generate_writes_a_suite_that_passes_and_refuses_bad_specs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let spec = d.join("spec.toml");
    let text = r#"
[maze]
name = "cli"
seed = 3
dt = 0.1
init = [[0.3, 0.4], [0.6, 0.7]]
safe = [[0.22, 0.98], [0.54, 0.98]]
candidate = [[[0.25, 0.95], [0.55, 0.95]]]
goal = [0.6, 0.75]

[[family]]
dynamics = "det"
shapes = ["2x16"]
defects = ["none", "drift"]
"#;
    std::fs::write(&spec, text).unwrap();
    let out = d.join("out");
    let r = trestle(&["maze", "generate", &s(&spec), &s(&out), "--quiet"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("2 instances (1 safe, 1 not-inductive, 0 not judged"), "{}", r.stdout);
    let r = trestle(&["suite", "run", &s(&out.join("suite.toml")), "--out", &s(&d.join("results")), "--quiet"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("# suite cli: PASS"), "{}", r.stdout);

    let missing = trestle(&["maze", "generate", &s(&d.join("nope.toml")), &s(&out)]);
    expect_input_error(&missing, &["nope.toml"]);
    std::fs::write(&spec, text.replace("\"2x16\"", "\"sixteen\"")).unwrap();
    expect_input_error(&trestle(&["maze", "generate", &s(&spec), &s(&out)]), &["shape 'sixteen'"]);
    std::fs::write(&spec, text.replace("candidate = [[[0.25", "candidate = [[[0.35")).unwrap();
    expect_input_error(&trestle(&["maze", "generate", &s(&spec), &s(&out), "--quiet"]), &["contain init"]);
}

/// [`WALK`] with two properties for `trestle ctl`.
fn walk_with_properties() -> String {
    format!(
        r#"{WALK}
[[property]]
name = "floor"
k = 3
ctl = "AG^k x >= 2"
[[property]]
name = "reach"
ctl = "AX^3 x == 8"
"#
    )
}

#[test]
fn ctl_exit_codes_and_json_follow_the_verdict() {
    let (_dir, path) = scratch("walk.toml", &walk_with_properties());
    let p = path.to_str().unwrap();
    // Explicit: exact, exit 0.
    let r = trestle(&["ctl", p, "--property", "floor", "--method", "explicit", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["verdict"].as_str(), j["status"].as_str()), (Some("true"), Some("proven")));
    assert_eq!(j["command"], "ctl");
    for key in ["milps_built", "milps_solved", "milps_pruned", "binaries", "seconds"] {
        assert!(j["stats"][key].is_number(), "stats.{key} in {j}");
    }
    // --k 4 breaks it (x reaches 1): a replayed run, exit 1, in every engine.
    for method in ["explicit", "monolithic", "compositional"] {
        let r = trestle(&["ctl", p, "--property", "floor", "--k", "4", "--method", method, "--json"]);
        assert_eq!(r.code, 1, "{method}: {}", r.stderr);
        let j = r.json();
        assert_eq!(j["verdict"], "false");
        let states = j["trace"]["states"].as_array().unwrap();
        assert!(states.iter().any(|s| s["x"].as_f64() == Some(1.0)), "{method}: {j}");
    }
    // A formula with no counterexample from the MILP engine: true, on evidence or bounds.
    let r = trestle(&["ctl", p, "--formula", "EX^3 x == 8", "--method", "monolithic", "--json"]);
    let j = r.json();
    assert_eq!(j["verdict"], "true", "{j}");
    match j["status"].as_str() {
        Some("evidence") => {
            assert_eq!(r.code, 3);
            assert!(
                j["margin"].as_f64().unwrap() > 0.0 && j["evidence"].as_str().unwrap().contains("not an exact proof")
            );
        }
        Some("proven") => assert_eq!(r.code, 0),
        s => panic!("status {s:?}"),
    }
    // Text output names the verdict and the run.
    let r = trestle(&["ctl", p, "--property", "reach", "--quiet"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("FALSE (refuted") && r.stdout.contains("branch down"), "{}", r.stdout);
}

#[test]
fn ctl_bad_input_is_an_error_with_exit_2() {
    let (_dir, path) = scratch("walk.toml", &walk_with_properties());
    let p = path.to_str().unwrap();
    expect_input_error(&trestle(&["ctl", p, "--property", "nope"]), &["no property 'nope'", "floor, reach"]);
    expect_input_error(&trestle(&["ctl", p, "--property", "reach", "--k", "2"]), &["no horizon parameter"]);
    expect_input_error(&trestle(&["ctl", p, "--formula", "AG x >= 0"]), &["bound"]);
    expect_input_error(&trestle(&["ctl", p, "--formula", "AX^2 y >= 0"]), &["unknown name 'y'"]);
    expect_input_error(&trestle(&["ctl", p, "--formula", "AX x >= 0", "--method", "nope"]), &["nope"]);
    expect_input_error(&trestle(&["ctl", p]), &["--property"]);
    let nondet = walk_with_properties()
        .replace("[[branch]]\nname = \"up\"", "[nondet]\nc = { interval = [0, 1] }\n[[branch]]\nname = \"up\"");
    let (_d2, path2) = scratch("walk2.toml", &nondet);
    expect_input_error(&trestle(&["ctl", path2.to_str().unwrap(), "--property", "reach"]), &["interval"]);
    let r = trestle(&["ctl", p, "--property", "nope", "--json"]);
    assert_eq!(r.code, 2);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("no property"));
}

#[test]
fn ctl_decides_the_case_studies() {
    if shared_models().is_none() {
        return;
    }
    let r = trestle(&[
        "ctl",
        "configs/systems/vcas.toml",
        "--property",
        "sep",
        "--k",
        "3",
        "--set",
        "init.hdot0=-22.5",
        "--json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    for s in j["trace"]["steps"].as_array().unwrap() {
        assert_eq!(s["labels"]["a"], "CL1500", "{s}");
    }
    let r = trestle(&["ctl", "configs/systems/frozenlake.toml", "--property", "safe", "--k", "10", "--json"]);
    assert_eq!(r.json()["verdict"], "true", "{}", r.stdout);
    let r = trestle(&["ctl", "configs/systems/vcas-fts.toml", "--property", "sep", "--k", "2", "--json"]);
    assert!(matches!(r.code, 0 | 1 | 3), "{}", r.stderr);
}

/// Every command's exit codes by kind: a run with its documented outcome, and input the user can
/// fix (a missing file, a value outside a flag's choices) exits 2 with a message, never 4 (our
/// own errors) and never a panic. Internal errors (exit 4) cannot be provoked from the command
/// line; their classification is unit-tested (`engine_errors_map_to_exit_codes_by_kind`).
#[test]
fn exit_codes_per_command() {
    let (_d, forge) = scratch("forge.toml", FORGE_BUG);
    let forge = forge.to_str().unwrap();
    let net = "examples/networks/maze-2x8.nnet";
    let runs: &[(&[&str], i32)] = &[
        (&["info", "examples/maze-det.toml"], 0),
        (&["simulate", "examples/maze-det.toml", "--steps", "3"], 0),
        (&["eval", net, "--input", "0.5,0.6"], 0),
        (&["bounds", net, "--lo", "0.5,0.6", "--hi", "0.51,0.61"], 0),
        (&["check", "examples/maze-det.toml"], 0),
        (&["check", forge], 1),
        (&["synth", forge], 1),
        (&["ctl", "configs/systems/frozenlake.toml", "--property", "succ"], 1),
        (&["verify", "configs/systems/frozenlake.toml", "--property", "safe"], 0),
        (&["ltl", "configs/systems/spread-2.toml", "--property", "live", "--k", "9"], 1),
        (&["campaign", "explain", "configs/campaigns/paper-table1.toml"], 0),
    ];
    for (args, code) in runs {
        let r = trestle(args);
        assert_eq!(r.code, *code, "{args:?}: {}", r.stderr);
    }
    let inputs: &[&[&str]] = &[
        &["info", "missing.toml"],
        &["simulate", "missing.toml"],
        &["eval", "missing.nnet", "--input", "0.5"],
        &["eval", net, "--input", "0.5,0.6", "--nnet-normalization", "sometimes"],
        &["bounds", net, "--lo", "0.5,0.6", "--hi", "0.51,0.61", "--method", "deeppoly"],
        &["check", "missing.toml"],
        &["check", "examples/maze-det.toml", "--method", "smt"],
        &["check", "examples/maze-det.toml", "--post", "deeppoly"],
        &["check", "examples/maze-det.toml", "--split", "random"],
        &["check", "examples/maze-det.toml", "--queue", "lifo"],
        &["certify", "missing.json", "examples/maze-det.toml"],
        &["synth", "missing.toml"],
        &["ctl", "missing.toml", "--property", "safe"],
        &["verify", "missing.toml"],
        &["campaign", "explain", "missing.toml"],
        &["suite", "run", "missing.toml"],
        &["spread", "generate", "unused-dir", "--agents", "3"],
    ];
    for args in inputs {
        let r = trestle(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked") && !r.stderr.is_empty(), "{args:?}: {}", r.stderr);
    }
}

/// `trestle ltl`: exit codes by verdict and status, the result schema, bad input.
#[test]
fn ltl_exit_codes_json_and_bad_input() {
    let fig = "configs/systems/rnn-figure1.toml";
    let r = trestle(&["ltl", fig, "--property", "bounded-2", "--method", "bpt", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(
        (j["verdict"].as_str(), j["status"].as_str(), j["method"].as_str()),
        (Some("true"), Some("proven"), Some("bpt"))
    );
    assert_eq!(j["details"]["depth"], 2);
    assert_eq!(j["details"]["bpt_enclosures"][2], serde_json::json!([[0.0, 2.0]]));
    let r = trestle(&["ltl", fig, "--property", "bounded-3", "--method", "bpt", "--json"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(r.json()["status"], "unknown");
    // Auto: CROWN's enclosures prove it exactly; the MILP alone gives evidence with a margin.
    let r = trestle(&["ltl", fig, "--property", "bounded-3", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["status"].as_str(), j["method"].as_str()), (Some("proven"), Some("bpt-crown")));
    let r = trestle(&["ltl", fig, "--property", "bounded-3", "--method", "bpt", "--bpt", "crown", "--json"]);
    assert_eq!((r.code, r.json()["method"].as_str()), (0, Some("bpt-crown")), "{}", r.stderr);
    let r = trestle(&["ltl", fig, "--property", "bounded-3", "--method", "rmilp", "--json"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["status"].as_str(), j["method"].as_str()), (Some("evidence"), Some("rmilp")));
    assert!(j["margin"].as_f64().unwrap() > 0.0);
    // The default races the two encodings (one winner per RMILP check); one alone races nothing.
    let wins = |j: &serde_json::Value| {
        j["stats"]["tightened_wins"].as_u64().unwrap() + j["stats"]["plain_wins"].as_u64().unwrap()
    };
    assert_eq!(wins(&j), 1, "{j}");
    for tighten in ["on", "off"] {
        let r = trestle(&["ltl", fig, "--property", "bounded-3", "--method", "rmilp", "--tighten", tighten, "--json"]);
        assert_eq!((r.code, wins(&r.json())), (3, 0), "{}", r.stderr);
    }
    expect_input_error(&trestle(&["ltl", fig, "--property", "bounded-3", "--tighten", "maybe"]), &["--tighten"]);
    let r = trestle(&["ltl", fig, "--formula", "X^k (z >= 0.5)", "--k", "4", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["trace"]["steps"].as_array().unwrap().len(), 4);
    assert!(j["trace"]["hidden_exact"].is_array(), "the recurrent hidden state is part of the trace: {j}");
    let r = trestle(&["ltl", fig, "--formula", "X^2 (z <= 2)"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("TRUE (proven"), "{}", r.stdout);
    expect_input_error(&trestle(&["ltl", fig, "--formula", "G F (z <= 2)"]), &["unbounded LTL"]);
    // Unbounded G with no box invariant (intervals give z_t in [0, t]) and no violation: unknown.
    assert_eq!(trestle(&["ltl", fig, "--formula", "G (z <= 2)"]).code, 3);
    expect_input_error(&trestle(&["ltl", fig, "--formula", "X (z <= 2)", "--depth", "0"]), &["--depth"]);
    expect_input_error(&trestle(&["ltl", fig, "--formula", "X^2 (w <= 2)"]), &["--formula"]);
    expect_input_error(&trestle(&["ltl", fig, "--property", "nope"]), &["no property 'nope'", "bounded-2"]);
    expect_input_error(
        &trestle(&["ltl", "configs/systems/frozenlake.toml", "--property", "safe"]),
        &["not an LTL formula"],
    );
    expect_input_error(&trestle(&["ltl", fig, "--property", "bounded-2", "--method", "lasso"]), &["lasso"]);
    // Unbounded G on a memoryless controller, which box invariants miss: the bridge engine with
    // the file's candidate, or synthesis when the candidate is not inside the predicate.
    let maze = "examples/maze-det.toml";
    for (p, method) in [("0.22", "bridge"), ("0.26", "bridge+synth")] {
        let f = format!("G ({p} <= x and x <= 0.98 and 0.54 <= y and y <= 0.98)");
        let r = trestle(&["ltl", maze, "--formula", &f, "--json"]);
        assert_eq!(r.code, 0, "{f}: {}", r.stderr);
        let j = r.json();
        assert_eq!(
            (j["status"].as_str(), j["method"].as_str(), j["command"].as_str()),
            (Some("proven"), Some(method), Some("ltl"))
        );
        assert!(j["details"]["ltl_engine"].is_string(), "{j}");
    }
    // A lasso names its shape besides the trace's loop-back.
    let r = trestle(&["ltl", "configs/systems/pi-oscillating.toml", "--property", "settles", "--json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let j = r.json();
    let (stem, cycle) =
        (j["details"]["lasso"]["stem"].as_u64().unwrap(), j["details"]["lasso"]["loop"].as_u64().unwrap());
    assert_eq!(j["trace"]["loop_back"].as_u64(), Some(stem));
    assert_eq!(j["trace"]["states"].as_array().unwrap().len() as u64, stem + cycle + 1);
}

/// `trestle cegar`: verdicts and exit codes of the three methods, the result schema, bad input.
#[test]
fn cegar_exit_codes_json_and_bad_input() {
    let safe = "crates/cegar/tests/systems/counter.toml";
    let unsafe_ = "crates/cegar/tests/systems/counter-unsafe.toml";
    for method in ["cegar", "bmc", "explicit"] {
        let r = trestle(&["cegar", safe, "--method", method, "--json"]);
        assert_eq!(r.code, 0, "{method}: {}", r.stderr);
        let j = r.json();
        assert_eq!((j["verdict"].as_str(), j["status"].as_str()), (Some("safe"), Some("proven")), "{j}");
        let r = trestle(&["cegar", unsafe_, "--method", method, "--json"]);
        assert_eq!(r.code, 1, "{method}: {}", r.stderr);
        let j = r.json();
        assert_eq!(j["verdict"], "unsafe");
        assert!(j["trace"]["steps"].as_array().unwrap().len() >= 3, "{j}");
    }
    let j = trestle(&["cegar", safe, "--json"]).json();
    assert_eq!(j["details"]["predicates"], serde_json::json!(["x <= 6"]));
    assert_eq!(j["details"]["rechecked"], true);
    for flags in [&["--refine", "ce"][..], &["--no-heuristic"], &["--no-incremental"]] {
        let mut args = vec!["cegar", unsafe_];
        args.extend_from_slice(flags);
        assert_eq!(trestle(&args).code, 1, "{flags:?}");
    }
    let r = trestle(&["cegar", unsafe_]);
    assert!(r.stdout.contains("UNSAFE (refuted") && r.stdout.contains("s3: x = 6"), "{}", r.stdout);
    expect_input_error(
        &trestle(&["cegar", safe, "--set", "system.on_domain_exit=error"]),
        &["on_domain_exit = \"drop\""],
    );
    expect_input_error(&trestle(&["cegar", "examples/maze-det.toml"]), &["is real"]);
    expect_input_error(&trestle(&["cegar", safe, "--timeout=-1"]), &["--timeout"]);
    expect_input_error(&trestle(&["cegar", safe, "--method", "bmc", "--depth", "0"]), &["--depth"]);
    // Int updates that may be non-integral (issue 34.6: CEGAR crashed with exit 4, "a refinement
    // added no predicate"): CEGAR refuses them and names who can; BMC and explicit answer safe
    // (3/2, 7/4, ... are not states: those successors are dropped).
    for update in ["x / 2", "(x + 1) / 2"] {
        let text = std::fs::read_to_string(repo().join(safe))
            .unwrap()
            .replace("update = { x = \"x - 1\" }", &format!("update = {{ x = \"{update}\" }}"));
        assert!(text.contains(update));
        let (_dir, file) = scratch("halving.toml", &text);
        let file = file.to_str().unwrap();
        let r = trestle(&["cegar", file]);
        expect_input_error(&r, &["non-integral", "--method bmc"]);
        for method in ["bmc", "explicit"] {
            let r = trestle(&["cegar", file, "--method", method, "--json"]);
            assert_eq!(r.code, 0, "{update} {method}: {}", r.stderr);
        }
    }
}

/// `trestle planning generate` rebuilds the shipped planning instances byte for byte.
#[test]
fn planning_generate_rebuilds_the_shipped_instances() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let r = trestle(&["planning", "generate", out, "--seed", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("12 instances"), "{}", r.stdout);
    for name in ["blocks4-h16", "transport-h64", "puzzle8-h32"] {
        let shipped = repo().join("configs/systems");
        for file in [format!("{name}.toml"), format!("networks/{name}.onnx")] {
            assert_eq!(
                std::fs::read(dir.path().join(&file)).unwrap(),
                std::fs::read(shipped.join(&file)).unwrap(),
                "{file} differs from the shipped one"
            );
        }
    }
}

/// `trestle arena generate`: a small n-dimensional suite with its verdicts; a bad spec is an
/// input error.
#[test]
fn arena_generate_writes_a_judged_suite() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.toml");
    let text = "[arena]\nname = \"cli\"\nseed = 3\ndt = 0.1\ngoal = 0.5\ninit = [0.45, 0.55]\n\
                candidate = [0.2, 0.8]\nsafe = [0.15, 0.85]\nsamples = 512\nepochs = 20\n\n\
                [[family]]\ndims = [3]\ndynamics = \"det\"\nshapes = [\"1x16\"]\ndefects = [\"none\", \"drift\"]\n";
    std::fs::write(&spec, text).unwrap();
    let out = dir.path().join("out");
    // With --json, one summary object (the text summary is the maze test's).
    let r =
        trestle(&["arena", "generate", spec.to_str().unwrap(), out.to_str().unwrap(), "--json", "--timeout", "3600"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!((j["status"].as_str(), j["verdict"].as_str()), (Some("done"), Some("complete")), "{j}");
    assert_eq!((j["stats"]["instances"].as_u64(), j["stats"]["generated"].as_u64()), (Some(2), Some(2)), "{j}");
    let by_truth = &j["stats"]["by_truth"];
    assert_eq!(
        (&by_truth["safe"], &by_truth["not-inductive"], &by_truth["not judged"]),
        (&1.into(), &1.into(), &0.into())
    );
    assert!(!r.stderr.contains("trained in"), "--json prints no line per instance: {}", r.stderr);
    for file in ["suite.toml", "models/det-3d-1x16-none.onnx", "systems/det-3d-1x16-drift.toml"] {
        assert!(out.join(file).is_file(), "{file}");
    }
    std::fs::write(&spec, text.replace("goal = 0.5", "goal = 0.9")).unwrap();
    expect_input_error(&trestle(&["arena", "generate", spec.to_str().unwrap(), out.to_str().unwrap()]), &["goal"]);
}

/// One system of issue 34.5: `x` of `kind`, Init `init`, the candidate `inv`, one branch, the
/// identity network (`a = x`), Safe `-1000 <= x <= 1000`.
fn stopping_system(init: &str, inv: &str, kind: &str, branch: &str) -> String {
    format!(
        "init = \"{init}\"\nsafe = \"-1000 <= x and x <= 1000\"\ninvariant = \"{inv}\"\n[system]\nname = \"stops\"\n\
         [state]\nx = {{ type = {kind} }}\n[networks.id]\n\
         layers = [{{ weights = [[1.0]], bias = [0.0], activation = \"identity\" }}]\n\
         [controller]\nnetwork = \"id\"\ninputs = [\"x\"]\nactions = [\"a\"]\n[[branch]]\nname = \"step\"\n{branch}\n"
    )
}

/// The four systems of issue 34.5, each with a run from Init that stops at once, and what the
/// error names: the state, the branch, why.
const STOPPING: [(&str, &str, &str, &str, &[&str]); 4] = [
    ("x == 0", "0 <= x and x <= 1", "\"int\"", "update = { x = \"a/2 + 1/4\" }", &["x = 0", "'step'", "x = 0.25"]),
    (
        "x == 10",
        "0 <= x and x <= 100",
        "\"int\", domain = [0, 10]",
        "update = { x = \"min(a + 1, 100)\" }",
        &["x = 10", "'step'", "x = 11"],
    ),
    ("x == 0", "0 <= x and x <= 1", "\"real\"", "guard = \"x >= 200\"\nupdate = { x = \"a\" }", &["x = 0", "deadlock"]),
    (
        "x == 5",
        "0 <= x and x <= 10",
        "\"real\"",
        "update = { x = \"lookup(x, [0, 1])\" }",
        &["x = 5", "lookup index 5"],
    ),
];

/// Issue 34.5: a run from Init that stops (a non-integral int update under "error", a successor
/// leaving a domain, a deadlock, a lookup out of range) is the system's error in `check` (every
/// method), `synth` and `verify`, as `ctl` and `ltl` judge it: exit 2 naming the stop, never
/// "safe" (each answered safe before). The same systems without the stop are proven.
#[test]
fn safety_engines_report_a_reachable_stop_as_the_systems_error() {
    for (init, inv, kind, branch, names) in STOPPING {
        let (_d, file) = scratch("stops.toml", &stopping_system(init, inv, kind, branch));
        let f = file.to_str().unwrap();
        for args in [
            vec!["check", f],
            vec!["check", f, "--method", "monolithic"],
            vec!["check", f, "--method", "milp"],
            vec!["synth", f],
        ] {
            let r = trestle(&args);
            expect_input_error(&r, &["a run from Init stops"]);
            for n in names {
                assert!(r.stderr.contains(n), "{args:?}: '{n}' in {}", r.stderr);
            }
        }
        let r = trestle(&["verify", f, "--json"]);
        let j = r.json();
        assert_eq!(j["results"][0]["status"], "unknown", "{branch}: {j}");
        let reason = j["results"][0]["reason"].as_str().unwrap();
        assert!(reason.contains("a run from Init stops"), "{branch}: {reason}");
        assert_ne!(r.code, 0, "{branch}: {j}");
    }
    let fine = stopping_system("x == 0", "0 <= x and x <= 1", "\"real\"", "update = { x = \"a/2\" }");
    let (_d, file) = scratch("fine.toml", &fine);
    for cmd in ["check", "synth", "verify"] {
        assert_eq!(trestle(&[cmd, file.to_str().unwrap()]).code, 0, "{cmd}");
    }
}

/// Issue 34.5: a stop inside the candidate that no run from Init reaches leaves the answer
/// unknown (`runs-may-stop`, naming the stop): the candidate is closed under every step, but no
/// proof (before, `check` and `verify` answered safe).
#[test]
fn an_unreached_stop_in_the_invariant_leaves_the_candidate_unknown() {
    // x' = a/2 stays in [0, 1/2] from [0, 1/2]; the candidate [0, 300] holds x >= 200, where the
    // one branch is disabled.
    let text = stopping_system(
        "0 <= x and x <= 0.5",
        "0 <= x and x <= 300",
        "\"real\"",
        "guard = \"x <= 200\"\nupdate = { x = \"a/2\" }",
    );
    let (_d, file) = scratch("unreached.toml", &text);
    let r = trestle(&["check", file.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 3, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["reason_kind"], "runs-may-stop", "{j}");
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.contains("deadlock") && reason.contains("no run from Init was shown"), "{reason}");
    // `verify` falls back on synthesis, which grows one box from Init ([0, 1/2], inductive): an
    // invariant without the stop, so the proof is right; it must not hold a state of x > 200,
    // where no branch is enabled (before the box from Init, synthesis's grid kept those states
    // and `verify` stayed unknown).
    let v = trestle(&["verify", file.to_str().unwrap(), "--json"]);
    let row = &v.json()["results"][0];
    let verdict = row["verdict"].as_str();
    assert!(matches!((v.code, verdict), (0, Some("true")) | (3, Some("unknown"))), "{}", v.stdout);
    if verdict == Some("true") {
        let boxes = row["details"]["invariant"].as_array().expect("the proven invariant's boxes");
        assert!(boxes.iter().all(|b| b["hi"][0].as_f64().unwrap() < 200.0), "{row}");
    } else {
        assert!(row["reason"].as_str().unwrap().contains("runs may stop"), "{row}");
    }
}

/// Issue 34.5: `certify` re-checks stop-freedom from a certificate's own clauses, so the proof of
/// a stop-free system does not certify a twin whose runs stop (where the environment condition
/// alone holds: no successor, or one inside the invariant that is no state).
#[test]
fn certify_refuses_a_proof_for_a_system_whose_runs_stop() {
    let dir = tempfile::tempdir().unwrap();
    let twins = [
        (
            "x == 0",
            "0 <= x and x <= 1",
            "update = { x = \"a/2 + 1/4\" }",
            "\"real\"",
            "\"int\"",
            "update = { x = \"a/2 + 1/4\" }",
        ),
        (
            "x == 0",
            "0 <= x and x <= 1",
            "update = { x = \"a/2\" }",
            "\"real\"",
            "\"real\"",
            "guard = \"x >= 200\"\nupdate = { x = \"a/2\" }",
        ),
    ];
    for (k, (init, inv, good, kind, bad_kind, bad)) in twins.into_iter().enumerate() {
        let good_file = dir.path().join(format!("good{k}.toml"));
        let bad_file = dir.path().join(format!("bad{k}.toml"));
        std::fs::write(&good_file, stopping_system(init, inv, kind, good)).unwrap();
        std::fs::write(&bad_file, stopping_system(init, inv, bad_kind, bad)).unwrap();
        let cert = dir.path().join(format!("cert{k}.json"));
        let r = trestle(&["check", good_file.to_str().unwrap(), "--certificate", cert.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{}", r.stdout);
        let ok = trestle(&["certify", cert.to_str().unwrap(), good_file.to_str().unwrap(), "--json"]);
        assert_eq!((ok.code, &ok.json()["valid"]), (0, &Value::Bool(true)), "{}", ok.stdout);
        let v = trestle(&["certify", cert.to_str().unwrap(), bad_file.to_str().unwrap(), "--json"]);
        assert_eq!(v.code, 1, "{}", v.stdout);
        let j = v.json();
        let checks = j["checks"].as_array().unwrap();
        let failed: Vec<&Value> = checks.iter().filter(|c| c["ok"] == false).collect();
        assert_eq!(failed.len(), 1, "only the stop check fails: {j}");
        assert!(failed[0]["check"].as_str().unwrap().contains("no run stops"), "{j}");
    }
}

/// Issue 34.5: guards that together cover every state (`comply` / `not comply`, here reading the
/// network's action) leave no run without a step: `check` proves the system, its certificate
/// passes the stop check, and so does a pair of guards that covers the invariant only.
#[test]
fn complementary_guards_are_proven_stop_free() {
    let dir = tempfile::tempdir().unwrap();
    for (comply, defy) in [("x <= 3 and a >= 0", "not (x <= 3 and a >= 0)"), ("a <= 0.5", "x >= 0.25")] {
        let branches = format!(
            "guard = \"{comply}\"\nupdate = {{ x = \"a/2\" }}\n[[branch]]\nname = \"defy\"\nguard = \"{defy}\"\nupdate = {{ x = \"a/4\" }}"
        );
        let file = dir.path().join("comply.toml");
        std::fs::write(&file, stopping_system("0 <= x and x <= 1", "0 <= x and x <= 1", "\"real\"", &branches))
            .unwrap();
        let cert = dir.path().join("comply.json");
        let r = trestle(&["check", file.to_str().unwrap(), "--json", "--certificate", cert.to_str().unwrap()]);
        assert_eq!((r.code, &r.json()["verdict"]), (0, &Value::from("safe")), "{comply}: {}", r.stdout);
        let v = trestle(&["certify", cert.to_str().unwrap(), file.to_str().unwrap(), "--json"]);
        assert_eq!((v.code, &v.json()["valid"]), (0, &Value::Bool(true)), "{comply}: {}", v.stdout);
    }
}

/// Issue 34.5: guards that cover the states runs reach only through the network (`a <= 0.5` /
/// `x >= 0.25`: on x < 1/4 the identity network gives a = x <= 1/2) defeat the syntactic stop
/// test, and the states from an interval Init cannot be swept, so `ctl` answered "runs may stop"
/// on a true `AG`. The exact stop check on the file's invariant (as `check` proves it) shows that
/// no run from Init stops: `ctl` and `verify`'s ctl property are true, `ltl` too, and a system
/// whose invariant holds a stop stays unknown.
#[test]
fn ctl_and_ltl_prove_complementary_guards_stop_free() {
    let dir = tempfile::tempdir().unwrap();
    let system = |guard: &str| {
        let branches = format!(
            "guard = \"a <= 0.5\"\nupdate = {{ x = \"a/2\" }}\n[[branch]]\nname = \"defy\"\nguard = \"{guard}\"\nupdate = {{ x = \"a/4\" }}"
        );
        let text = stopping_system("0 <= x and x <= 1", "0 <= x and x <= 1", "\"real\"", &branches);
        format!("{text}[[property]]\nname = \"bounded\"\nctl = \"AG^5 x <= 1\"\n")
    };
    let file = dir.path().join("comply.toml");
    std::fs::write(&file, system("x >= 0.25")).unwrap();
    let f = file.to_str().unwrap();
    // True, proven or on the MILP's evidence (exit 0 or 3 by the status); before, unknown.
    let is_true = |code: i32, j: &Value| {
        let status = j["status"].as_str();
        j["verdict"] == "true" && matches!((code, status), (0, Some("proven")) | (3, Some("evidence")))
    };
    let r = trestle(&["ctl", f, "--formula", "AG^5 (x <= 1)", "--json"]);
    let j = r.json();
    assert!(is_true(r.code, &j), "{j}");
    assert!(j["evidence"].as_str().unwrap().contains("no run from Init stops"), "{j}");
    let l = trestle(&["ltl", f, "--formula", "G (x <= 1)", "--json"]);
    assert!(is_true(l.code, &l.json()), "{}", l.stdout);
    let v = trestle(&["verify", f, "--property", "bounded", "--json"]);
    assert!(is_true(v.code, &v.json()["results"][0]), "{}", v.stdout);
    // The second guard moved to x >= 0.75: at x in (1/2, 3/4), states of Init, no branch is
    // enabled, so runs stop: the exact check finds the stop and the answer is never "true".
    std::fs::write(&file, system("x >= 0.75")).unwrap();
    let r = trestle(&["ctl", f, "--formula", "AG^5 (x <= 1)", "--json", "--timeout", "60"]);
    assert_ne!(r.json()["verdict"], "true", "{}", r.stdout);
}

/// Issue 34.5: certificates gained no field for stop-freedom: `certify` re-derives the stop
/// check from the clauses of any certificate, old or new (the check's line is in its report),
/// so a certificate written before the check existed is judged by the same rule.
#[test]
fn certify_re_derives_the_stop_check_from_a_certificates_clauses() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fine.toml");
    std::fs::write(&file, stopping_system("x == 0", "0 <= x and x <= 1", "\"real\"", "update = { x = \"a/2\" }"))
        .unwrap();
    let cert = dir.path().join("fine.json");
    let r = trestle(&["check", file.to_str().unwrap(), "--certificate", cert.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&cert).unwrap()).unwrap();
    fn keys(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, v)| {
                out.push(k.clone());
                keys(v, out);
            }),
            Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    let mut fields = Vec::new();
    keys(&written, &mut fields);
    assert!(!fields.iter().any(|k| k.contains("stop")), "no certificate field speaks of stops: {fields:?}");
    let v = trestle(&["certify", cert.to_str().unwrap(), file.to_str().unwrap(), "--json"]);
    let j = v.json();
    assert_eq!((v.code, &j["valid"]), (0, &Value::Bool(true)), "{j}");
    let stop_line =
        j["checks"].as_array().unwrap().iter().find(|c| c["check"].as_str().unwrap().contains("no run stops"));
    assert_eq!(stop_line.map(|c| &c["ok"]), Some(&Value::Bool(true)), "{j}");
}

/// A discrete system for `cegar`: int `x` in `domain`, one label `go` (the argmax of a one-output
/// network), one command.
fn discrete_system(init: &str, domain: &str, command: &str) -> String {
    format!(
        "init = \"{init}\"\nsafe = \"x <= 250\"\n[system]\nname = \"ends\"\non_domain_exit = \"drop\"\n\
         [state]\nx = {{ type = \"int\", domain = {domain} }}\n[networks.score]\n\
         layers = [{{ weights = [[1.0]], bias = [0.0], activation = \"identity\" }}]\n\
         [controller]\nnetwork = \"score\"\ninputs = [\"x\"]\nargmax = \"a\"\nlabels = [\"go\"]\n\
         [[command]]\nlabel = \"go\"\n{command}\n"
    )
}

/// Issue 34.5: CEGAR's planning rule is the documented exception (a run ends where the chosen
/// label enables no command), and its "safe" says so with one such run; a system without such
/// runs says nothing of it. BMC and explicit follow the same rule.
#[test]
fn cegar_safe_says_when_runs_end() {
    let ending = [
        ("x == 0", "[0, 300]", "guard = \"x >= 200\"\nupdate = { x = \"x + 1\" }", 0),
        ("x == 10", "[0, 10]", "update = { x = \"x + 1\" }", 0),
        ("x == 0", "[0, 10]", "update = { x = \"x + 1\" }", 10),
    ];
    for (init, domain, command, steps) in ending {
        let (_d, file) = scratch("ends.toml", &discrete_system(init, domain, command));
        for method in ["cegar", "bmc", "explicit"] {
            let r = trestle(&["cegar", file.to_str().unwrap(), "--method", method, "--json"]);
            assert_eq!(r.code, 0, "{command} {method}: {}{}", r.stdout, r.stderr);
            let j = r.json();
            assert_eq!(j["verdict"], "safe");
            let evidence = j["evidence"].as_str().unwrap();
            assert!(
                evidence.starts_with("safe; some runs end where the chosen label enables no command"),
                "{evidence}"
            );
            assert_eq!(j["details"]["ended_label"], "go");
            assert_eq!(j["details"]["ended_run"]["steps"].as_array().unwrap().len(), steps, "{j}");
        }
    }
    let (_d, file) = scratch("loops.toml", &discrete_system("x == 0", "[0, 10]", "update = { x = \"10 - x\" }"));
    let r = trestle(&["cegar", file.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    assert!(j["details"].get("ended_run").is_none() && !j["evidence"].as_str().unwrap().contains("runs end"), "{j}");
}

/// `--plot` in each command that draws: check and synth in the state plane (any two variables,
/// any size), ltl's reach sets over time; bad picture flags are input errors before any work.
#[test]
fn pictures_of_check_synth_and_ltl() {
    let dir = tempfile::tempdir().unwrap();
    let png = |name: &str| dir.path().join(name);
    let example = "examples/double-integrator.toml";
    let synth = png("synth.png");
    let r =
        trestle(&["synth", example, "--plot", synth.to_str().unwrap(), "--plot-vars", "v,x", "--plot-size", "500x400"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bytes = std::fs::read(&synth).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"));
    // Width and height of the IHDR chunk.
    assert_eq!((&bytes[16..20], &bytes[20..24]), (&500u32.to_be_bytes()[..], &400u32.to_be_bytes()[..]));
    let svg = png("check.svg");
    let r = trestle(&["check", example, "--plot", svg.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let text = std::fs::read_to_string(&svg).unwrap();
    let has_line = |text: &str, line: &str| text.lines().any(|l| l.trim() == line);
    assert!(text.contains("counterexample") && has_line(&text, "x") && has_line(&text, "v"), "labels and the step");
    let reach = png("reach.svg");
    let r =
        trestle(&["ltl", "configs/systems/pi-tuned.toml", "--property", "stays-20", "--plot", reach.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&reach).unwrap();
    assert!(text.contains("enclosures") && has_line(&text, "step"), "the reach sets over time");
    for (args, fragment) in [
        (vec!["check", example, "--plot", "/tmp/x.svg", "--plot-vars", "x,q"], "'q' is not a state variable"),
        (vec!["check", example, "--plot", "/tmp/x.svg", "--plot-vars", "x"], "two different state variables"),
        (vec!["synth", example, "--plot", "/tmp/x.png", "--plot-size", "20x20"], "plot size: WIDTHxHEIGHT"),
        (vec!["check", example, "--plot", "/tmp/x.txt"], "extension"),
    ] {
        expect_input_error(&trestle(&args), &[fragment]);
    }
}
