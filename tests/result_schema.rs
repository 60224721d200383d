//! Every command that gives a verdict prints one `trestle-result/1` object under `--json` (issue
//! 33): `check` (each method), `synth`, `ctl`, `ltl`, `cegar`, and `verify` (`{"system",
//! "results"}` of them); its status agrees with the exit code, a refutation carries its trace, a
//! proof its evidence, an unknown its reason and reason kind. The campaign store reads nothing
//! else.

mod common;

use common::cli::trestle;
use serde_json::Value;

const STATUSES: [&str; 4] = ["proven", "evidence", "refuted", "unknown"];

/// Checks one result against the schema and the exit code of the run that printed it.
fn check_result(r: &Value, code: i32, what: &str) {
    assert_eq!(r["format"], "trestle-result/1", "{what}: {r}");
    for key in ["command", "system", "method", "verdict", "status"] {
        assert!(r[key].is_string(), "{what}: `{key}` missing: {r}");
    }
    let status = r["status"].as_str().unwrap();
    assert!(STATUSES.contains(&status), "{what}: status {status}");
    let expected = match status {
        "proven" => 0,
        "refuted" => 1,
        _ => 3,
    };
    assert_eq!(code, expected, "{what}: exit code vs status {status}");
    assert_eq!(r["trace"].is_object(), status == "refuted", "{what}: a trace exactly when refuted: {r}");
    if status == "unknown" {
        assert!(r["reason"].is_string() && r["reason_kind"].is_string(), "{what}: {r}");
    }
    if status == "evidence" {
        assert!(r["margin"].as_f64().is_some_and(|m| m > 0.0), "{what}: evidence has its margin: {r}");
    }
    assert!(r["stats"].is_object(), "{what}: {r}");
}

#[test]
fn every_command_prints_one_result_object() {
    let maze = "examples/maze-det.toml";
    let fig = "configs/systems/rnn-figure1.toml";
    let counter = "crates/cegar/tests/systems/counter.toml";
    let counter_unsafe = "crates/cegar/tests/systems/counter-unsafe.toml";
    let runs: Vec<(Vec<&str>, &str)> = vec![
        (vec!["check", maze], "proven"),
        (vec!["check", maze, "--method", "monolithic"], "proven"),
        (vec!["check", maze, "--method", "milp"], "proven"),
        (vec!["check", maze, "--set", "invariant=0.3 <= x <= 0.4 and 0.6 <= y <= 0.7"], "refuted"),
        (vec!["synth", maze], "proven"),
        (vec!["ctl", maze, "--formula", "AX^2 (x >= 0)"], "proven"),
        (vec!["ltl", fig, "--property", "bounded-2", "--method", "bpt"], "proven"),
        (vec!["ltl", fig, "--formula", "X^4 (z >= 0.5)"], "refuted"),
        (vec!["ltl", fig, "--property", "bounded-3", "--method", "rmilp"], "evidence"),
        (vec!["ltl", fig, "--formula", "G (z <= 2)", "--timeout", "5"], "unknown"),
        (vec!["cegar", counter], "proven"),
        (vec!["cegar", counter_unsafe, "--method", "bmc"], "refuted"),
    ];
    for (args, want) in runs {
        let mut argv = args.clone();
        argv.push("--json");
        let r = trestle(&argv);
        let j = r.json();
        let what = args.join(" ");
        check_result(&j, r.code, &what);
        assert_eq!(j["status"], want, "{what}: {}", r.stderr);
    }
    // `verify`: one result per property, each in the schema; the exit code is the worst.
    let r = trestle(&["verify", fig, "--json", "--timeout", "60"]);
    let j = r.json();
    let results = j["results"].as_array().expect("verify prints its results");
    assert!(results.len() >= 2, "{j}");
    for row in results {
        assert_eq!(row["command"], "verify");
        let code = match row["status"].as_str() {
            Some("proven") => 0,
            Some("refuted") => 1,
            _ => 3,
        };
        check_result(row, code, &format!("verify {}", row["property"]));
    }
}
