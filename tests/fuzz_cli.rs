//! Property tests at the command line (issue 9, fuzzing): damaged system files, networks and
//! certificates end with exit 0, 1 or 2 and a message in the user's words (one JSON object with
//! `--json`), never a panic, an internal error, a signal or a hang. The readers themselves are
//! fuzzed harder in their crates (`trestle-ir`, `trestle-config`, `trestle-nn`, `trestle-bridge`);
//! this checks that the binary turns every reader failure into an input error.

mod common;

use common::cli::{s, trestle};
use proptest::prelude::*;
use trestle_testkit::{WALK, repo, scratch};

/// Text spliced into a file: syntax of every format involved, numbers out of range, Unicode.
const SPLICES: &[&str] = &[
    "",
    "=",
    "[",
    "]",
    "{",
    "}",
    "\"",
    ",",
    "\n",
    "#",
    "//",
    "0",
    "-1",
    "1e400",
    "1e-400",
    "nan",
    "inf",
    "1/0",
    "99999999999999999999",
    "(((((",
    ")))))",
    "not ",
    "≤",
    "−",
    "\u{0}",
    "[state]",
    "x = 1",
    "[[branch]]",
    "\"clauses\": 3",
    "null",
    "true",
];

/// A damaged copy of `text`: `(at, cut, splice)` removes `cut` bytes at `at` and inserts a piece,
/// on character boundaries.
fn damage(text: &str, edits: &[(usize, usize, &str)]) -> String {
    let mut t = text.to_string();
    for &(at, cut, splice) in edits {
        let mut a = at % (t.len() + 1);
        while !t.is_char_boundary(a) {
            a -= 1;
        }
        let mut b = (a + cut % 8).min(t.len());
        while !t.is_char_boundary(b) {
            b -= 1;
        }
        t.replace_range(a..b, splice);
    }
    t
}

fn edits() -> impl Strategy<Value = Vec<(usize, usize, &'static str)>> {
    prop::collection::vec((any::<usize>(), any::<usize>(), prop::sample::select(SPLICES)), 1..4)
}

/// Exit 0 to 2, one JSON object on stdout, nothing internal on stderr.
fn check_run(args: &[&str], codes: &[i32]) {
    let r = trestle(args);
    assert!(codes.contains(&r.code), "{args:?}: exit {}\n{}", r.code, r.stderr);
    r.expect_no_internals();
    let j = r.json();
    if r.code == 2 {
        assert_eq!(j["error"]["kind"], "input", "{j}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn damaged_system_files_are_input_errors(e in edits()) {
        let text = std::fs::read_to_string(repo().join("examples/maze-nondet.toml")).unwrap();
        let text = damage(&text, &e).replace("networks/maze-2x8.nnet", "net.nnet");
        let (_dir, path) = scratch("sys.toml", &text);
        check_run(&["info", s(&path), "--json"], &[0, 2]);
    }

    #[test]
    fn damaged_networks_are_input_errors(e in edits()) {
        let text = std::fs::read_to_string(repo().join("examples/networks/maze-2x8.nnet")).unwrap();
        let (dir, _) = scratch("unused.toml", "");
        let path = dir.path().join("damaged.nnet");
        std::fs::write(&path, damage(&text, &e)).unwrap();
        check_run(&["eval", s(&path), "--input", "0.3,0.7", "--json"], &[0, 2]);
    }

    #[test]
    fn damaged_ctl_formulas_are_decided_or_input_errors(
        e in edits(),
        method in prop::sample::select(&["explicit", "monolithic", "compositional"][..]),
    ) {
        // A command line cannot hold a NUL byte.
        let formula = damage("A[x >= 3 U^2 (x <= 4 or x >= 6)] and not EF^k x == 7 or AX^(k-1) EX x > 2", &e).replace('\0', "");
        let (_dir, path) = scratch("walk.toml", &WALK.replace("init = \"x == 5\"", "init = \"3 <= x <= 5\""));
        check_run(&["ctl", s(&path), "--formula", &formula, "--k", "2", "--method", method, "--json"], &[0, 1, 2, 3]);
    }

    #[test]
    fn damaged_certificates_are_refused_or_rechecked(e in edits()) {
        let (dir, _) = scratch("unused.toml", "");
        let cert = dir.path().join("cert.json");
        std::fs::write(&cert, damage(&certificate(), &e)).unwrap();
        check_run(&["certify", s(&cert), "examples/maze-det.toml", "--json"], &[0, 1, 2]);
    }
}

/// The example's proof certificate, written once.
fn certificate() -> String {
    static CERT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CERT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.json");
        let r = trestle(&["check", "examples/maze-det.toml", "--certificate", s(&cert), "--json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        std::fs::read_to_string(&cert).unwrap()
    })
    .clone()
}
