//! Regressions found by the flag fuzzer (`fuzz_flags`, issue 39): each test is named after the
//! defect it pins and runs its reproducer, shrunk, through the command line.

mod common;

use common::cli::{s, trestle};

/// A small maze spec and a small arena spec (one instance each; they fail before training here).
const MAZE_SPEC: &str = "[maze]\nname = \"m\"\nseed = 1\ndt = 0.1\ninit = [[0.3, 0.4], [0.6, 0.7]]\n\
    safe = [[0.22, 0.98], [0.54, 0.98]]\ncandidate = [[[0.25, 0.95], [0.55, 0.95]]]\ngoal = [0.6, 0.75]\n\
    samples = 8\nepochs = 2\nproof_timeout = 2\n[[family]]\ndynamics = \"det\"\nshapes = [\"2x16\"]\n\
    defects = [\"none\"]\n";
const ARENA_SPEC: &str = "[arena]\nname = \"a\"\nseed = 1\ndt = 0.1\ngoal = 0.5\ninit = [0.45, 0.55]\n\
    candidate = [0.2, 0.8]\nsafe = [0.15, 0.85]\ngain = 1.0\nsamples = 16\nepochs = 2\nproof_timeout = 2\n\
    [[family]]\ndims = [3]\ndynamics = \"det\"\nshapes = [\"2x16\"]\ndefects = [\"none\"]\n";

/// `maze|arena|spread|planning generate SPEC OUT_DIR` with OUT_DIR an existing regular file (or a
/// `--suite` that is a directory) exited 4, "internal error", with "Not a directory": the output
/// path is the user's, its failure an input error.
#[test]
fn a_generator_whose_output_directory_is_a_file_is_an_input_error() {
    let d = tempfile::tempdir().unwrap();
    let taken = d.path().join("taken");
    std::fs::write(&taken, "").unwrap();
    let maze = d.path().join("maze.toml");
    std::fs::write(&maze, MAZE_SPEC).unwrap();
    let arena = d.path().join("arena.toml");
    std::fs::write(&arena, ARENA_SPEC).unwrap();
    let runs: [(&[&str], &str); 4] = [
        (&["maze", "generate", s(&maze), s(&taken)], "taken/models"),
        (&["arena", "generate", s(&arena), s(&taken)], "taken/models"),
        (&["spread", "generate", s(&taken)], "taken/networks"),
        (&["planning", "generate", s(&taken)], "taken/networks"),
    ];
    for (args, path) in runs {
        let r = trestle(args);
        r.expect_input_error(&["cannot write", path, "Not a directory"]);
    }
    assert_eq!(std::fs::read(&taken).unwrap(), b"", "the file is left as it was");
}

/// A generator's output *model* path that is an existing directory (`OUT/models/NAME.onnx/`)
/// was found only by the write after the training, in `write_onnx_checked`: exit 4, "internal
/// error". The path is the user's: exit 2, naming it, before any training.
#[test]
fn a_generator_whose_model_path_is_a_directory_is_an_input_error() {
    let d = tempfile::tempdir().unwrap();
    let maze = d.path().join("maze.toml");
    std::fs::write(&maze, MAZE_SPEC).unwrap();
    let arena = d.path().join("arena.toml");
    std::fs::write(&arena, ARENA_SPEC).unwrap();
    let out: Vec<std::path::PathBuf> = ["maze", "arena", "spread", "planning"].map(|n| d.path().join(n)).into();
    let planning: Vec<String> = ["blocks4", "blocks5", "puzzle8", "transport"]
        .iter()
        .flat_map(|t| [16, 32, 64].map(|w| format!("networks/{t}-h{w}.onnx")))
        .collect();
    let runs: [(&[&str], Vec<String>); 4] = [
        (&["maze", "generate", s(&maze), s(&out[0])], vec!["models/det-2x16-none.onnx".into()]),
        (&["arena", "generate", s(&arena), s(&out[1])], vec!["models/det-3d-2x16-none.onnx".into()]),
        (&["spread", "generate", s(&out[2])], vec!["networks/spread-2-agent1.onnx".into()]),
        (&["planning", "generate", s(&out[3])], planning),
    ];
    for ((args, models), dir) in runs.into_iter().zip(&out) {
        for m in &models {
            std::fs::create_dir_all(dir.join(m)).unwrap();
        }
        let r = trestle(args);
        r.expect_input_error(&["cannot write", ".onnx", "is a directory"]);
        for m in &models {
            assert!(dir.join(m).is_dir(), "{args:?}: {m} is left as it was");
        }
    }
}

/// `--timeout 9223372036854775808` (2^63 s, a valid f64 and Duration) overflowed
/// `Instant + Duration` and panicked: exit 4, "internal error". A limit past what the clock can
/// hold is no limit: each run ends as it does without one.
#[test]
fn a_timeout_past_the_clock_is_no_limit() {
    let runs: [(&[&str], i32); 6] = [
        (&["check", "examples/maze-det.toml"], 0),
        (&["cegar", "configs/systems/blocks4-h16.toml"], 1),
        (&["verify", "examples/maze-det.toml"], 0),
        (&["ctl", "configs/systems/spread-2.toml", "--formula", "AX^2 (x1 <= 100)"], 0),
        (&["ltl", "configs/systems/pi-tuned.toml", "--property", "stays"], 0),
        (&["synth", "examples/maze-det.toml"], 0),
    ];
    for (args, code) in runs {
        for t in ["9223372036854775808", "1e19", "1.8e19"] {
            let mut with = args.to_vec();
            with.extend(["--timeout", t, "--quiet"]);
            let r = trestle(&with);
            assert_eq!(r.code, code, "{with:?}: {}", r.stderr);
            r.expect_no_internals();
        }
    }
}

/// A maze spec's `proof_timeout = 1e308` passed the spec's check (finite, positive), and the judge's
/// `Duration::from_secs_f64` panicked on it once a controller reached the proof: exit 4. A limit
/// past what a duration holds is no limit.
#[test]
fn a_maze_proof_timeout_past_a_duration_is_no_limit() {
    let d = tempfile::tempdir().unwrap();
    let spec = d.path().join("maze.toml");
    let text = MAZE_SPEC
        .replace("samples = 8\nepochs = 2\nproof_timeout = 2", "samples = 24\nepochs = 60\nproof_timeout = 1e308");
    std::fs::write(&spec, text).unwrap();
    let r = trestle(&["maze", "generate", s(&spec), s(&d.path().join("out")), "--quiet"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.expect_no_internals();
    assert!(r.stdout.contains("1 instances (1 safe"), "the proof was reached and judged: {}", r.stdout);
}

/// `simulate --runs 9223372036854775807` exited 4 ("capacity overflow"), `--runs 4294967296`
/// aborted asking for 481 GB, `--steps 2^63` ran without end filling memory: every run is kept
/// until printed, so steps times runs is bounded, and more is refused before any work.
#[test]
fn simulate_refuses_more_states_than_it_can_hold() {
    for (steps, runs) in
        [("20", "9223372036854775807"), ("20", "4294967296"), ("18446744073709551615", "1"), ("1000", "1000")]
    {
        let r = trestle(&["simulate", "examples/maze-det.toml", "--steps", steps, "--runs", runs, "--json"]);
        assert_eq!(r.code, 2, "{steps} x {runs}: {}", r.stderr);
        r.expect_no_internals();
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(message.contains("at most 1000000 states"), "{message}");
    }
    // Below the bound, runs are simulated as before.
    let r =
        trestle(&["simulate", "examples/double-integrator.toml", "--steps", "99", "--runs", "10", "--float", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}
