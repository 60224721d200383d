//! The generator's input: one arena, its regions, and families of instances.
//!
//! ```toml
//! [maze]
//! name = "maze-ci"
//! seed = 1
//! dt = 0.1                          # x' = x + dt * a (times the noise factor c if non-deterministic)
//! init = [[0.3, 0.4], [0.6, 0.7]]   # a box: [lo, hi] per axis (x, y)
//! safe = [[0.22, 0.98], [0.54, 0.98]]
//! obstacles = [[[0.5, 0.6], [0.8, 0.9]]]          # boxes taken out of safe (optional)
//! candidate = [[[0.25, 0.95], [0.55, 0.95]]]      # a union of boxes
//! goal = [0.6, 0.75]
//! samples = 24                      # training grid per axis over the candidate's hull
//! epochs = 60
//!
//! [[family]]
//! dynamics = "det"                  # or "nondet" with noise = [0.5, 1.0]
//! shapes = ["2x16", "4x32"]         # hidden layers x width
//! defects = ["none", "bumpy"]       # none | overshoot | bumpy | undertrained | drift
//! disturbance = [-0.005, 0.005]     # optional: x' = ... + dx, y' = ... + dy
//! activation = "tanh"               # hidden layers: relu (default), tanh or sigmoid
//! ```
//!
//! Numbers are written back into the system files by their shortest round-trip decimal, which is
//! the literal as written for every literal of at most 15 significant digits, so the systems say
//! exactly what the spec says.

use serde::Deserialize;
use std::path::Path;

use crate::MazeError;

type Box2 = [[f64; 2]; 2];

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub maze: Arena,
    #[serde(default)]
    pub family: Vec<Family>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arena {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub seed: u64,
    pub dt: f64,
    pub init: Box2,
    pub safe: Box2,
    #[serde(default)]
    pub obstacles: Vec<Box2>,
    pub candidate: Vec<Box2>,
    pub goal: [f64; 2],
    #[serde(default = "default_samples")]
    pub samples: usize,
    #[serde(default = "default_epochs")]
    pub epochs: usize,
    /// Seconds the independent proof attempt (check, then certify) may take per instance.
    #[serde(default = "default_proof_timeout")]
    pub proof_timeout: f64,
}

fn default_samples() -> usize {
    24
}
fn default_epochs() -> usize {
    60
}
fn default_proof_timeout() -> f64 {
    60.0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dynamics {
    Det,
    Nondet,
}

/// What is wrong with a controller on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Defect {
    /// Imitates the saturated feedback law toward the goal.
    None,
    /// A gain so high that dt * gain > 2: the unsaturated law overshoots the goal.
    Overshoot,
    /// The law plus a bumpy field (a product of sines): pushes outward in places.
    Bumpy,
    /// Two epochs only.
    Undertrained,
    /// The goal moved past the safe region's upper corner: runs from Init leave Safe.
    Drift,
}

impl Defect {
    pub fn as_str(self) -> &'static str {
        match self {
            Defect::None => "none",
            Defect::Overshoot => "overshoot",
            Defect::Bumpy => "bumpy",
            Defect::Undertrained => "undertrained",
            Defect::Drift => "drift",
        }
    }
}

/// The activation of a family's hidden layers (the output layer is linear).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HiddenActivation {
    #[default]
    Relu,
    Tanh,
    Sigmoid,
}

impl HiddenActivation {
    pub fn as_str(self) -> &'static str {
        match self {
            HiddenActivation::Relu => "relu",
            HiddenActivation::Tanh => "tanh",
            HiddenActivation::Sigmoid => "sigmoid",
        }
    }

    /// The IR's activation of the hidden layers.
    pub fn activation(self) -> trestle_ir::network::Activation {
        use trestle_ir::network::Activation;
        match self {
            HiddenActivation::Relu => Activation::Relu,
            HiddenActivation::Tanh => Activation::Tanh,
            HiddenActivation::Sigmoid => Activation::Sigmoid,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    pub dynamics: Dynamics,
    /// The noise factor's interval for non-deterministic dynamics.
    #[serde(default)]
    pub noise: Option<[f64; 2]>,
    /// An additive disturbance `[lo, hi]` on each coordinate (`x' = ... + dx`), any dynamics.
    #[serde(default)]
    pub disturbance: Option<[f64; 2]>,
    pub shapes: Vec<String>,
    pub defects: Vec<Defect>,
    /// The hidden layers' activation (ReLU by default).
    #[serde(default)]
    pub activation: HiddenActivation,
}

/// `"4x32"`: 4 hidden layers of 32.
pub fn parse_shape(s: &str) -> Result<(usize, usize), String> {
    let (depth, width) = s.split_once('x').ok_or_else(|| format!("shape '{s}': expected DEPTHxWIDTH such as 2x64"))?;
    let parse = |t: &str| t.trim().parse::<usize>().ok().filter(|&n| n > 0);
    match (parse(depth), parse(width)) {
        (Some(d), Some(w)) if d <= 16 && w <= 4096 => Ok((d, w)),
        _ => Err(format!("shape '{s}': expected DEPTHxWIDTH with 1..16 layers of 1..4096 neurons")),
    }
}

fn check_box(b: &Box2, what: &str) -> Result<(), String> {
    for (axis, [lo, hi]) in b.iter().enumerate() {
        if !lo.is_finite() || !hi.is_finite() || lo > hi {
            return Err(format!("{what}: axis {axis} is [{lo}, {hi}], not a finite interval with lo <= hi"));
        }
    }
    Ok(())
}

impl Spec {
    /// Reads a spec file: a regular file of bounded size only (a FIFO or `/dev/zero` is refused
    /// at once); a syntax error quotes at most a short, printable excerpt of its line.
    pub fn read(path: &Path) -> Result<Spec, MazeError> {
        let text = atomic_output::input::read_text(path, atomic_output::input::SPEC_FILE)
            .map_err(|e| MazeError::Input(format!("{}: {e}", path.display())))?;
        Spec::parse_file(&text, path).map_err(|e| MazeError::Input(format!("{}: {e}", path.display())))
    }

    /// A spec given as text (tests, generated specs).
    pub fn parse(text: &str) -> Result<Spec, String> {
        Spec::parse_file(text, Path::new("spec.toml"))
    }

    fn parse_file(text: &str, path: &Path) -> Result<Spec, String> {
        let spec: Spec = toml::from_str(text).map_err(|e| syntax_error(&e, text, path))?;
        spec.validate()?;
        Ok(spec)
    }

    fn validate(&self) -> Result<(), String> {
        let m = &self.maze;
        if m.name.is_empty() || !m.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!("maze.name '{}': letters, digits, '-' and '_' only", m.name));
        }
        if !(m.dt.is_finite() && m.dt > 0.0) {
            return Err(format!("maze.dt = {}: must be a positive number", m.dt));
        }
        check_box(&m.init, "maze.init")?;
        check_box(&m.safe, "maze.safe")?;
        for (i, o) in m.obstacles.iter().enumerate() {
            check_box(o, &format!("maze.obstacles[{i}]"))?;
        }
        if m.candidate.is_empty() {
            return Err("maze.candidate: at least one box".into());
        }
        for (i, c) in m.candidate.iter().enumerate() {
            check_box(c, &format!("maze.candidate[{i}]"))?;
        }
        if !m.goal.iter().all(|g| g.is_finite()) {
            return Err("maze.goal: two finite numbers".into());
        }
        if !(2..=256).contains(&m.samples) || !(1..=10_000).contains(&m.epochs) {
            return Err("maze.samples must be 2..256 and maze.epochs 1..10000".into());
        }
        if !(m.proof_timeout.is_finite() && m.proof_timeout > 0.0) {
            return Err("maze.proof_timeout: a positive number of seconds".into());
        }
        let mut seen = std::collections::HashSet::new();
        for f in &self.family {
            for shape in &f.shapes {
                for d in &f.defects {
                    let bits = |v: Option<[f64; 2]>| v.map(|n| n.map(f64::to_bits));
                    let key = (f.dynamics, bits(f.noise), bits(f.disturbance), f.activation, shape.clone(), *d);
                    if !seen.insert(key) {
                        return Err(format!("instance {shape}/{} is listed twice", d.as_str()));
                    }
                }
            }
        }
        if self.family.is_empty() {
            return Err("at least one [[family]]".into());
        }
        for (i, f) in self.family.iter().enumerate() {
            match (f.dynamics, f.noise) {
                (Dynamics::Nondet, Some([lo, hi])) if lo.is_finite() && hi.is_finite() && lo <= hi => {}
                (Dynamics::Nondet, _) => return Err(format!("family[{i}]: nondet dynamics need noise = [lo, hi]")),
                (Dynamics::Det, Some(_)) => return Err(format!("family[{i}]: noise is for nondet dynamics only")),
                (Dynamics::Det, None) => {}
            }
            if let Some([lo, hi]) = f.disturbance
                && !(lo.is_finite() && hi.is_finite() && lo <= hi)
            {
                return Err(format!("family[{i}]: disturbance = [lo, hi] with finite lo <= hi"));
            }
            if f.shapes.is_empty() || f.defects.is_empty() {
                return Err(format!("family[{i}]: at least one shape and one defect"));
            }
            for s in &f.shapes {
                parse_shape(s).map_err(|e| format!("family[{i}]: {e}"))?;
            }
        }
        Ok(())
    }
}

/// A spec file's TOML error: toml's message cut to a printable excerpt, at its position in the
/// file (shared by the maze and arena spec readers).
pub fn syntax_error(e: &toml::de::Error, text: &str, path: &Path) -> String {
    let message = atomic_output::input::printable(e.message().trim(), 300);
    match e.span() {
        Some(s) => {
            format!(
                "at {}: {message}",
                atomic_output::input::position(path, text, s.start, atomic_output::input::SPEC_FILE)
            )
        }
        None => message,
    }
}
