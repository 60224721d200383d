//! `trestle verify`: the table of (system, property, expected verdict) that every engine adds its
//! rows to. Each row's truth is established independently of the run (the notes' known answers,
//! hand arguments in the comments); refutations must carry a trace, and the exit code must be
//! the worst of the rows (1 refuted, 3 not proven, 0 all proven).

mod common;

use common::cli::{Run, s, trestle};
use serde_json::Value;
use trestle_testkit::{AFFINE_OBSERVATION, FORGE_BUG, INT_BUG, scratch};

/// x' = x / 2 + a / 10 with a = x / 3 + 1/7 (AFFINE_OBSERVATION: x' = 8x/15 + 1/70), Init
/// [-0.5, 0.5], the file's candidate [-1, 1]. Truth: from Init the states stay in
/// [-0.5, 0.5] (|x'| <= 8/30 + 1/70 < 0.5), so `tight` holds although the candidate is too wide
/// for it; `half` (-1 <= x <= 0.4) fails at step 0 (x = 0.5 is initial).
fn affine_with_properties() -> String {
    format!(
        "{AFFINE_OBSERVATION}
[[property]]
name = \"tight\"
invariant = \"-0.6 <= x <= 0.6\"

[[property]]
name = \"half\"
invariant = \"-1 <= x <= 0.4\"
"
    )
}

/// The file's candidate [0.4, 1] misses Init = [0, 0.5]; the property [-1, 1] holds (x' = x / 2
/// stays in [0, 0.5]): the candidate fails, synthesis proves the property.
const HALVING: &str = r#"
init = "0 <= x <= 0.5"
safe = "-1 <= x <= 1"
invariant = "0.4 <= x <= 1"
[system]
name = "halving"
[state]
x = { type = "real" }
[networks.id]
layers = [
  { weights = [[1.0], [-1.0]], bias = [0.0, 0.0], activation = "relu" },
  { weights = [[1.0, -1.0]], bias = [0.0], activation = "identity" },
]
[controller]
network = "id"
inputs = ["x"]
actions = ["a"]
[step]
x = "a / 2"
"#;

fn verify(path: &str, extra: &[&str]) -> Run {
    let mut args = vec!["verify", path, "--json", "--timeout", "60"];
    args.extend_from_slice(extra);
    trestle(&args)
}

fn result<'a>(json: &'a Value, property: &str) -> &'a Value {
    json["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["property"] == property)
        .unwrap_or_else(|| panic!("no result for {property} in {json}"))
}

/// Checks one row: verdict and status, a trace exactly when refuted, and the schema envelope.
fn expect(json: &Value, property: &str, verdict: &str, status: &str) {
    let r = result(json, property);
    assert_eq!(r["verdict"], verdict, "{property}: {r}");
    assert_eq!(r["status"], status, "{property}: {r}");
    assert_eq!(r["format"], "trestle-result/1");
    assert_eq!(r["command"], "verify");
    assert!(r["stats"]["seconds"].is_number(), "{r}");
    if status == "refuted" {
        let states = r["trace"]["states_exact"].as_array().expect("a refutation carries a trace");
        assert!(!states.is_empty());
        assert_eq!(r["trace"]["replayed"], "exact rational arithmetic");
    } else {
        assert!(r.get("trace").is_none(), "{r}");
    }
    if status == "unknown" {
        assert!(r["reason"].as_str().is_some_and(|s| !s.is_empty()), "{r}");
    }
}

/// One row of the table: a file, its overrides, (property, verdict, status) for each of its
/// properties, and the exit code of the whole run.
type Row = (&'static str, &'static [&'static str], &'static [(&'static str, &'static str, &'static str)], i32);

/// The table over the shipped systems.
#[test]
fn shipped_systems_give_their_known_verdicts() {
    let rows: &[Row] = &[
        // The notes' FrozenLake answers: safe TRUE and succ FALSE for every k.
        ("configs/systems/frozenlake.toml", &[], &[("safe", "true", "proven"), ("succ", "false", "refuted")], 1),
        // VCAS from hdot0 = -19.5: TRUE for k = 1..4; from -22.5: FALSE at k = 3 (the notes).
        ("configs/systems/vcas.toml", &[], &[("sep", "true", "proven")], 0),
        ("configs/systems/vcas.toml", &["--set", "init.hdot0=-22.5"], &[("sep", "false", "refuted")], 1),
        // The peer tool's mazes, no [[property]]: their [safe], proven with the file's invariant.
        ("configs/systems/peer-maze-det.toml", &[], &[("safe", "true", "proven")], 0),
        ("configs/systems/peer-maze-nondet.toml", &[], &[("safe", "true", "proven")], 0),
        // The notes' Figure-1 RNN: z_t = 0 on every path. Interval bound propagation proves
        // X^2 (z <= 2) exactly, CROWN's X^3 (the MILP's evidence case is pi-tuned's `settles`).
        (
            "configs/systems/rnn-figure1.toml",
            &[],
            &[("bounded-2", "true", "proven"), ("bounded-3", "true", "proven")],
            0,
        ),
        ("configs/systems/rnn-figure1.toml", &["--property", "bounded-2"], &[("bounded-2", "true", "proven")], 0),
        // The PI controller as a ReLU RNN: tuned, |x| <= 1/2 forever (invariant of x and hidden
        // state) and to t = 20 (bound propagation), settling on MILP evidence; badly tuned, a
        // limit cycle: never settles (a lasso on the full state).
        (
            "configs/systems/pi-tuned.toml",
            &[],
            &[("stays", "true", "proven"), ("stays-20", "true", "proven"), ("settles", "true", "evidence")],
            3,
        ),
        ("configs/systems/pi-oscillating.toml", &[], &[("settles", "false", "refuted")], 1),
        // The integral without leak: no box is inductive; synthesis over the lifted state
        // (x and the kept hidden units) proves both bounds.
        ("configs/systems/pi-integral.toml", &[], &[("stays", "true", "proven"), ("tight", "true", "proven")], 0),
    ];
    for (file, set, expected, code) in rows {
        let r = verify(file, set);
        assert_eq!(r.code, *code, "{file} {set:?}: {}", r.stderr);
        let json = r.json();
        assert_eq!(json["results"].as_array().unwrap().len(), expected.len(), "{file}: {json}");
        for (property, verdict, status) in *expected {
            expect(&json, property, verdict, status);
        }
        if file.ends_with("pi-integral.toml") {
            assert_eq!(result(&json, "stays")["method"], "synthesis", "{json}");
        }
    }
}

#[test]
fn invariant_properties_are_about_runs_not_the_candidate() {
    // The candidate is checked against each property; a failed candidate leads to synthesis, and
    // only a run from Init refutes.
    let (_d, affine) = scratch("affine.toml", &affine_with_properties());
    let r = verify(s(&affine), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    expect(&json, "tight", "true", "proven");
    assert_eq!(result(&json, "tight")["method"], "bridge+synth");
    expect(&json, "half", "false", "refuted");
    // The refutation is Init itself: a run of no steps from x = 1/2.
    let trace = &result(&json, "half")["trace"];
    assert_eq!(trace["states_exact"], serde_json::json!([["0.5"]]), "{trace}");

    let (_h, halving) = scratch("halving.toml", HALVING);
    let r = verify(s(&halving), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    expect(&r.json(), "safe", "true", "proven");

    // issue 9's reproducers: int-bug is safe (the file's invariant is inductive); forge-bug is
    // unsafe (e.g. the run 0.5 -> 1.5).
    let (_i, int_bug) = scratch("int.toml", INT_BUG);
    let r = verify(s(&int_bug), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    expect(&json, "safe", "true", "proven");
    assert_eq!(result(&json, "safe")["method"], "bridge");
    let (_f, forge) = scratch("forge.toml", FORGE_BUG);
    let r = verify(s(&forge), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    expect(&json, "safe", "false", "refuted");
    let states = result(&json, "safe")["trace"]["states"].as_array().unwrap().clone();
    assert!(states[0]["x"].as_f64().unwrap() <= 0.5, "starts in Init: {json}");
    assert!(states.last().unwrap()["x"].as_f64().unwrap() > 1.0, "ends outside Safe: {json}");
}

#[test]
fn named_properties_and_text_output() {
    let r = verify("configs/systems/frozenlake.toml", &["--property", "safe"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["results"].as_array().unwrap().len(), 1);
    let r = trestle(&["verify", "configs/systems/frozenlake.toml", "--property", "succ"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("succ") && r.stdout.contains("false") && r.stdout.contains("refuted"), "{}", r.stdout);
    assert!(r.stdout.contains("s0: row = "), "the run is printed: {}", r.stdout);
}

#[test]
fn bad_requests_are_input_errors() {
    verify("configs/systems/frozenlake.toml", &["--property", "nope"])
        .expect_input_error(&["no property 'nope'", "safe, succ"]);
    verify("configs/systems/missing.toml", &[]).expect_input_error(&["missing.toml"]);
    let bare = AFFINE_OBSERVATION.replace("safe = \"-1 <= x <= 1\"\n", "");
    let (_d, path) = scratch("bare.toml", &bare);
    verify(s(&path), &[]).expect_input_error(&["nothing to verify"]);
    verify("configs/systems/frozenlake.toml", &["--threads", "0"]).expect_input_error(&["--threads"]);
}
