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

/// The n-dimensional maze `x_i' = x_i + 0.1 a_i` (candidate `[0.25, 0.95]^n`, Init
/// `[0.55, 0.65]^n`, Safe `[0.2, 1.0]^n`) with `net` as its controller, written as ONNX into a
/// scratch directory and loaded as users load systems. With [`trestle_ir::network::synthetic_centering`]
/// controllers it is the benchmark family of growing width, depth and dimension.
pub fn maze_nd(net: &trestle_ir::Network) -> System {
    let dims = net.input_dim();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = dir.path().join("controller.onnx");
    trestle_nn::write_onnx(net, &model).expect("the controller is written");
    let vars: Vec<String> = (1..=dims).map(|i| format!("x{i}")).collect();
    let region =
        |lo: &str, hi: &str| vars.iter().map(|v| format!("{lo} <= {v} <= {hi}")).collect::<Vec<_>>().join(" and ");
    let list = |prefix: &str| (1..=dims).map(|i| format!("\"{prefix}{i}\"")).collect::<Vec<_>>().join(", ");
    let mut text = format!(
        "init = \"{}\"\nsafe = \"{}\"\ninvariant = \"{}\"\n[system]\nname = \"maze-{dims}d\"\n[state]\n",
        region("0.55", "0.65"),
        region("0.2", "1.0"),
        region("0.25", "0.95")
    );
    for v in &vars {
        text += &format!("{v} = {{ type = \"real\" }}\n");
    }
    text += &format!(
        "[controller]\nmodel = \"controller.onnx\"\ninputs = [{}]\nactions = [{}]\n[step]\n",
        list("x"),
        list("a")
    );
    for i in 1..=dims {
        text += &format!("x{i} = \"x{i} + 0.1*a{i}\"\n");
    }
    let path = dir.path().join("system.toml");
    std::fs::write(&path, text).expect("the system file is written");
    load(&path, &[])
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

/// A finite system for bounded CTL: x, an int in [0, 10] starting at 5; the controller's action a = x (an identity network);
/// the environment adds 1 or subtracts 1 (two branches), clamped to the domain.
pub const WALK: &str = r#"
init = "x == 5"
[system]
name = "walk"
[state]
x = { type = "int", domain = [0, 10] }
[networks.id]
layers = [{ weights = [[1.0]], bias = [0.0], activation = "identity" }]
[controller]
network = "id"
inputs = ["x"]
actions = ["a"]
[[branch]]
name = "up"
update = { x = "min(a + 1, 10)" }
[[branch]]
name = "down"
update = { x = "max(a - 1, 0)" }
"#;

/// x: a real in [0, 1] at the start; a = x; x' = x + a (doubling) or x' = x / 2.
pub const SCALE: &str = r#"
init = "0 <= x <= 1"
[system]
name = "scale"
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
[[branch]]
name = "double"
update = { x = "x + a" }
[[branch]]
name = "halve"
update = { x = "x / 2" }
"#;

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

/// The second reproducer of issue 9 (verbatim): a constant network a = 1 and x' = x + a, Init
/// [0, 0.5], Safe = Inv = [0, 1]. Truth: x = 0.5 is initial and steps to 1.5, outside Safe: unsafe.
pub const FORGE_BUG: &str = r#"
init = "0 <= x <= 0.5"
safe = "0 <= x <= 1"
invariant = "0 <= x <= 1"
[system]
name = "forge-bug"
[state]
x = { type = "real" }
[networks.one]
layers = [ { weights = [[0.0]], bias = [1.0], activation = "identity" } ]
[controller]
network = "one"
inputs = ["x"]
actions = ["a"]
[step]
x = "x + a"
"#;

/// The forged certificate of [`FORGE_BUG`] (verbatim), once accepted by `certify`: its constant
/// rows assume `a >= 1000` next to `a <= 100`, so every environment condition held vacuously.
pub const FORGE_BUG_FORGED: &str = r#"{"format":"trestle-bridge-certificate/1","system":"forge-bug","state_vars":["x"],"action_vars":["a"],"nondet_vars":[],
 "invariant":[{"lo":[0.0],"hi":[1.0]}],
 "clauses":[{"box":{"lo":[0.0],"hi":[1.0]},"post":{"lo":[-100.0],"hi":[100.0]},
  "linear":{"lower":{"A":[[0.0]],"c":[1000.0]},"upper":{"A":[[0.0]],"c":[1000.0]}}}]}"#;

/// A safe system observed through the affine map `x / 3 + 1/7` (not a state variable, so linear
/// bounds over the network's input must be composed with the map): a = u exactly (the ReLU pair is
/// the identity), x' = x/2 + a/10 = 8x/15 + 1/70, in [-0.52, 0.55] for x in [-1, 1]: inductive.
/// `certify` once refused the tool's own certificates for it.
pub const AFFINE_OBSERVATION: &str = r#"
init = "-0.5 <= x <= 0.5"
safe = "-1 <= x <= 1"
invariant = "-1 <= x <= 1"
[system]
name = "affine-1d"
[state]
x = { type = "real" }
[networks.id]
layers = [
  { weights = [[1.0], [-1.0]], bias = [0.0, 0.0], activation = "relu" },
  { weights = [[1.0, -1.0]], bias = [0.0], activation = "identity" },
]
[controller]
network = "id"
inputs = ["x / 3 + 1/7"]
actions = ["a"]
[step]
x = "x / 2 + a / 10"
"#;

/// A system file with `--set` overrides.
pub fn load(path: &Path, set: &[String]) -> System {
    let overrides = Overrides::parse(set).unwrap_or_else(|e| panic!("overrides {set:?}: {e}"));
    load_system(path, &overrides).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A 2-D box `[x0, x1] x [y0, y1]` with ends in millionths (`0.25` is `250_000`), over the state
/// variables `vars`.
#[derive(Clone, Copy, Debug)]
pub struct Millionths {
    pub vars: (&'static str, &'static str),
    pub x: (i64, i64),
    pub y: (i64, i64),
}

fn decimal(v: i64) -> String {
    let (sign, v) = if v < 0 { ("-", -v) } else { ("", v) };
    let s = format!("{sign}{}.{:06}", v / 1_000_000, v % 1_000_000);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn union_text(m: &Millionths, boxes: &[(i64, i64, i64, i64)]) -> String {
    let (x, y) = m.vars;
    boxes
        .iter()
        .map(|&(a, b, c, d)| {
            format!("({} <= {x} <= {} and {} <= {y} <= {})", decimal(a), decimal(b), decimal(c), decimal(d))
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// `n + 1` cuts of `[lo, hi]`, as even as millionths allow (`jitter` moves the inner ones by up
/// to 40% of a step, from `rng`).
fn cuts(lo: i64, hi: i64, n: usize, mut jitter: Option<&mut dyn FnMut() -> f64>) -> Vec<i64> {
    let step = (hi - lo) as f64 / n as f64;
    let mut out = vec![lo];
    for k in 1..n {
        let shift = jitter.as_mut().map_or(0.0, |r| (r() - 0.5) * 0.8);
        out.push(lo + ((k as f64 + shift) * step).round() as i64);
    }
    out.push(hi);
    out
}

/// The box of `m` tiled into `nx * ny` boxes sharing their faces, as a candidate invariant text
/// (`(a <= x <= b and c <= y <= d) or ...`): the same set as the box (scripts/union-candidate.py
/// writes the same kind of candidate into a system file).
pub fn tiled_union(m: &Millionths, nx: usize, ny: usize) -> String {
    let (xs, ys) = (cuts(m.x.0, m.x.1, nx, None), cuts(m.y.0, m.y.1, ny, None));
    let mut boxes = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            boxes.push((xs[i], xs[i + 1], ys[j], ys[j + 1]));
        }
    }
    union_text(m, &boxes)
}

/// The box of `m` as about `n` boxes of different sizes that overlap (rows of random heights cut
/// at random places, every box widened by a random amount, clipped to the box): still exactly the
/// box's set. Deterministic in `seed`.
pub fn ragged_union(m: &Millionths, n: usize, seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rng = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    };
    let rows = ((n as f64).sqrt().round() as usize).max(1);
    let ys = cuts(m.y.0, m.y.1, rows, Some(&mut rng));
    let row_h = (m.y.1 - m.y.0) / rows as i64;
    let mut boxes = Vec::new();
    let mut left = n;
    for j in 0..rows {
        let k = (left / (rows - j)).max(1);
        left = left.saturating_sub(k);
        let xs = cuts(m.x.0, m.x.1, k, Some(&mut rng));
        for i in 0..k {
            let w = ((xs[i + 1] - xs[i]) as f64 * rng() * 0.5) as i64;
            let a = (xs[i] - (w as f64 * rng()) as i64).max(m.x.0);
            let b = (xs[i + 1] + (w as f64 * rng()) as i64).min(m.x.1);
            let c = (ys[j] - (row_h as f64 * 0.3 * rng()) as i64).max(m.y.0);
            let d = (ys[j + 1] + (row_h as f64 * 0.3 * rng()) as i64).min(m.y.1);
            boxes.push((a, b, c, d));
        }
    }
    union_text(m, &boxes)
}

/// The peer maze's candidate `0.25 <= x <= 0.95 and 0.55 <= y <= 0.95`.
pub const PEER_MAZE_INVARIANT: Millionths =
    Millionths { vars: ("x", "y"), x: (250_000, 950_000), y: (550_000, 950_000) };

/// The non-linear parts of [`planted_nonlinear`]: a tanh controller (`u = tanh(x)`, `x' = u + c`)
/// or a `sin` in the step (`x' = sin(x) + u + c`, `u = 0` by a ReLU network).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nonlinear {
    TanhController,
    SinStep,
}

impl Nonlinear {
    /// `1 - f(1)` to 100 decimals, truncated (`f` = tanh or sin; checked against mpmath where
    /// present by the tests): with `c` this minus `delta`, the largest successor of the candidate
    /// `0 <= x <= 1` (at `x = 1`, `f` increasing on it) is `1 - delta` up to 1e-100.
    pub fn gap(self) -> &'static str {
        match self {
            Nonlinear::TanhController => {
                "0.2384058440442351118805417173952064095872314027420634484031894998780467554233615165410524783263232855"
            }
            Nonlinear::SinStep => {
                "0.1585290151921034933474976783697010003774369392016289343272482900080895956087603310513602564569473041"
            }
        }
    }
}

/// A planted-truth system over one real `x` with candidate `0 <= x <= 1`, Init `0 <= x <= 1/2`,
/// Safe `x <= 1`, whose step adds the exact decimal `c` (see [`Nonlinear`]): inductive iff
/// `f(1) + c <= 1`.
pub fn planted_nonlinear(kind: Nonlinear, name: &str, c: &str) -> String {
    let head = format!(
        "init = \"0 <= x <= 0.5\"\nsafe = \"x <= 1\"\ninvariant = \"0 <= x <= 1\"\n[system]\nname = \"{name}\"\n[state]\nx = {{ type = \"real\" }}\n"
    );
    match kind {
        Nonlinear::TanhController => format!(
            "{head}[networks.squash]\nlayers = [{{ type = \"dense\", weights = [[1.0]], bias = [0.0], activation = \"tanh\" }}]\n\
             [controller]\nnetwork = \"squash\"\ninputs = [\"x\"]\nactions = [\"u\"]\n[step]\nx = \"u + {c}\"\n"
        ),
        Nonlinear::SinStep => format!(
            "{head}[networks.zero]\nlayers = [{{ type = \"dense\", weights = [[0.0]], bias = [0.0], activation = \"relu\" }}]\n\
             [controller]\nnetwork = \"zero\"\ninputs = [\"x\"]\nactions = [\"u\"]\n[step]\nx = \"sin(x) + u + {c}\"\n"
        ),
    }
}
