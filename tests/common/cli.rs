//! Running the `trestle` binary for the command-line tests (`input_regressions`, `fuzz_cli`): a
//! run's exit code must be a number (a signal is a failure), its JSON one object.

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use trestle_testkit::repo;

/// How a run of the binary ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!("stdout is not one JSON object ({e}):\n{}\nstderr: {}", self.stdout, self.stderr)
        })
    }

    /// No panic, no internal error, no Rust type name in what the user reads. The scratch
    /// directories' paths are left out: their random names may spell one (`/tmp/.tmpRawHQj`).
    pub fn expect_no_internals(&self) {
        let words: Vec<&str> = self.stderr.split_whitespace().filter(|w| !w.contains("/.tmp")).collect();
        let text = words.join(" ");
        for bad in ["panicked", "internal error", "Raw", "untagged enum", "CertificateJson"] {
            assert!(!text.contains(bad), "'{bad}' in: {}", self.stderr);
        }
    }

    /// An input error: exit 2, the fragments in the message, no panic, no internal name.
    pub fn expect_input_error(&self, fragments: &[&str]) {
        assert_eq!(self.code, 2, "exit code; stderr: {}", self.stderr);
        self.expect_no_internals();
        for f in fragments {
            assert!(self.stderr.contains(f), "expected '{f}' in: {}", self.stderr);
        }
    }
}

/// Runs `trestle ARGS` in the repository's root.
pub fn trestle(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_trestle")).args(args).current_dir(repo()).output().expect("runs");
    Run {
        code: out.status.code().unwrap_or_else(|| panic!("killed by a signal: {:?}", out.status)),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 paths in tests")
}
