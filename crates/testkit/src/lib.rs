//! Helpers for the tests and benches of every crate: where the repository and the shared
//! third-party models are, the shipped systems loaded from their TOML files, and regression systems
//! (`systems/`).
//!
//! The models in `../shared/models` are not part of the repository. A test that needs them calls
//! [`shared_models`] and returns early on `None`; under `CI=true` their absence is a failure.

use std::path::{Path, PathBuf};
use trestle_config::{Overrides, load_system};
use trestle_ir::System;

/// The hidden sizes of the 16 peer maze controllers (2xH, deterministic and non-deterministic).
pub const PEER_SIZES: [usize; 8] = [32, 40, 48, 56, 64, 128, 256, 512];

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `../shared/models` beside the repository, or `None` (after saying so) when it is absent.
///
/// # Panics
/// When it is absent and `CI=true`: CI must run the tests that need it.
pub fn shared_models() -> Option<PathBuf> {
    let dir = repo().join("../shared/models");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{} is missing under CI=true", dir.display());
    eprintln!("skipped: {} is absent", dir.display());
    None
}

/// A shipped example system (`examples/NAME`).
pub fn example(name: &str) -> System {
    load(&repo().join("examples").join(name), &[])
}

/// A regression system of the test kit (`crates/testkit/systems/NAME`): small systems whose truth
/// is stated in the file, each once answered wrongly.
pub fn regression_path(name: &str) -> PathBuf {
    repo().join("crates/testkit/systems").join(name)
}

/// A peer maze system (`det` or `nondet`) with the 2xH controller of `../shared/models/maze`.
pub fn peer(kind: &str, h: usize) -> System {
    let model = repo().join(format!("../shared/models/maze/{kind}/maze_2d_{h}x{h}.onnx"));
    load(
        &repo().join(format!("configs/systems/peer-maze-{kind}.toml")),
        &[format!("controller.model={}", model.display())],
    )
}

/// A scratch directory holding the system text as `name` and a copy of the project's hand-set
/// 2x8 maze controller as `net.nnet`, for system files written by a test.
pub fn scratch(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("the system file is written");
    std::fs::copy(repo().join("examples/networks/maze-2x8.nnet"), dir.path().join("net.nnet"))
        .expect("the example network is copied");
    (dir, path)
}

/// The text of a one-variable system: `head` (top-level regions, then any tables), the state
/// variable `x = STATE`, an inline identity network giving the action `a = x`, and `x' = STEP`.
pub fn one_var_system(head: &str, state: &str, step: &str) -> String {
    format!(
        r#"{head}
[state]
x = {state}
[networks.id]
layers = [{{ weights = [[1.0]], bias = [0.0], activation = "identity" }}]
[controller]
network = "id"
actions = ["a"]
[step]
x = "{step}"
"#
    )
}

/// A system from its TOML text, written to a [`scratch`] directory first (so `net.nnet` is
/// beside it).
pub fn system_from_text(text: &str) -> System {
    let (_dir, path) = scratch("system.toml", text);
    load(&path, &[])
}

/// The first reproducer of issue 9 (verbatim), once answered "not-inductive" and "unsafe" from
/// x = 0.5. Truth: x is an int in [0, 1], so x is 0 or 1; the guard `0 < x < 1` holds for
/// neither, so x' = a = relu(x) - relu(-x) = x: both are fixed points, [0, 1] is an inductive
/// invariant and the system is safe.
pub const INT_BUG: &str = r#"
init = "0 <= x <= 1"
safe = "0 <= x <= 1"
invariant = "0 <= x <= 1"
[system]
name = "int-bug"
[state]
x = { type = "int" }
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
x = "if x > 0 and x < 1 then 100 else a"
"#;

/// A system file with `--set` overrides.
pub fn load(path: &Path, set: &[String]) -> System {
    let overrides = Overrides::parse(set).unwrap_or_else(|e| panic!("overrides {set:?}: {e}"));
    load_system(path, &overrides).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
