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
