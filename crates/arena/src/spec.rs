//! The generator's input (format in the crate documentation).

use serde::Deserialize;
use std::path::Path;

use crate::ArenaError;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub arena: Arena,
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
    pub goal: f64,
    pub init: [f64; 2],
    pub candidate: [f64; 2],
    pub safe: [f64; 2],
    #[serde(default = "default_gain")]
    pub gain: f64,
    #[serde(default = "default_samples")]
    pub samples: usize,
    #[serde(default = "default_epochs")]
    pub epochs: usize,
    #[serde(default = "default_proof_timeout")]
    pub proof_timeout: f64,
    /// Proofs with more clauses are not certified (the instance is not judged): `certify` has no
    /// time limit, and took more than 200 s and 13 GB on 563 clauses in 6-D.
    #[serde(default = "default_certify_max_clauses")]
    pub certify_max_clauses: usize,
}

fn default_gain() -> f64 {
    3.0
}
fn default_samples() -> usize {
    2048
}
fn default_epochs() -> usize {
    40
}
fn default_proof_timeout() -> f64 {
    120.0
}
fn default_certify_max_clauses() -> usize {
    256
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dynamics {
    Det,
    /// With a disturbance `di` in `[lo, hi]` on every axis.
    Nondet,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Defect {
    /// Imitates the saturated go-to-goal law.
    None,
    /// The goal moved past Safe's upper corner: the candidate's upper faces are left.
    Drift,
}

impl Defect {
    pub fn as_str(self) -> &'static str {
        match self {
            Defect::None => "none",
            Defect::Drift => "drift",
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    pub dims: Vec<usize>,
    pub dynamics: Dynamics,
    #[serde(default)]
    pub disturbance: Option<[f64; 2]>,
    pub shapes: Vec<String>,
    pub defects: Vec<Defect>,
}

/// Shapes as the maze specs write them: `"4x32"` is 4 hidden layers of 32.
pub use trestle_maze::parse_shape;

fn interval(v: [f64; 2], what: &str) -> Result<(), String> {
    if v.iter().all(|x| x.is_finite()) && v[0] <= v[1] {
        Ok(())
    } else {
        Err(format!("{what} = [{}, {}]: a finite interval with lo <= hi", v[0], v[1]))
    }
}

impl Spec {
    /// Reads a spec file: a regular file of bounded size only (a FIFO or `/dev/zero` is refused
    /// at once); a syntax error quotes at most a short, printable excerpt of its line.
    pub fn read(path: &Path) -> Result<Spec, ArenaError> {
        let text = atomic_output::input::read_text(path, atomic_output::input::SPEC_FILE)
            .map_err(|e| ArenaError::Input(format!("{}: {e}", path.display())))?;
        Spec::parse_file(&text, path).map_err(|e| ArenaError::Input(format!("{}: {e}", path.display())))
    }

    /// A spec given as text (tests, generated specs).
    pub fn parse(text: &str) -> Result<Spec, String> {
        Spec::parse_file(text, Path::new("spec.toml"))
    }

    fn parse_file(text: &str, path: &Path) -> Result<Spec, String> {
        let spec: Spec = toml::from_str(text).map_err(|e| trestle_maze::spec_syntax_error(&e, text, path))?;
        spec.validate()?;
        Ok(spec)
    }

    fn validate(&self) -> Result<(), String> {
        let a = &self.arena;
        if a.name.is_empty() || !a.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!("arena.name '{}': letters, digits, '-' and '_' only", a.name));
        }
        for (v, what) in [(a.dt, "arena.dt"), (a.gain, "arena.gain"), (a.proof_timeout, "arena.proof_timeout")] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{what} = {v}: must be a positive number"));
            }
        }
        interval(a.init, "arena.init")?;
        interval(a.candidate, "arena.candidate")?;
        interval(a.safe, "arena.safe")?;
        // Init inside the candidate, the candidate strictly inside Safe, the goal inside Init.
        if !(a.candidate[0] <= a.init[0] && a.init[1] <= a.candidate[1]) {
            return Err("arena.init must lie in arena.candidate".into());
        }
        if !(a.safe[0] < a.candidate[0] && a.candidate[1] < a.safe[1]) {
            return Err("arena.candidate must lie strictly inside arena.safe".into());
        }
        if !(a.goal.is_finite() && a.candidate[0] < a.goal && a.goal < a.candidate[1]) {
            return Err("arena.goal must lie strictly inside arena.candidate".into());
        }
        if !(16..=1_000_000).contains(&a.samples) || !(1..=10_000).contains(&a.epochs) {
            return Err("arena.samples must be 16..1000000 and arena.epochs 1..10000".into());
        }
        if self.family.is_empty() {
            return Err("at least one [[family]]".into());
        }
        let mut seen = std::collections::HashSet::new();
        for (i, f) in self.family.iter().enumerate() {
            match (f.dynamics, f.disturbance) {
                (Dynamics::Nondet, Some(d)) => interval(d, &format!("family[{i}].disturbance"))?,
                (Dynamics::Nondet, None) => return Err(format!("family[{i}]: nondet dynamics need disturbance")),
                (Dynamics::Det, Some(_)) => return Err(format!("family[{i}]: disturbance is for nondet dynamics")),
                (Dynamics::Det, None) => {}
            }
            if f.dims.is_empty() || f.shapes.is_empty() || f.defects.is_empty() {
                return Err(format!("family[{i}]: at least one dimension, shape and defect"));
            }
            if let Some(d) = f.dims.iter().find(|&&d| !(1..=16).contains(&d)) {
                return Err(format!("family[{i}]: dimension {d}: 1..16"));
            }
            for s in &f.shapes {
                parse_shape(s).map_err(|e| format!("family[{i}]: {e}"))?;
            }
        }
        for p in crate::generate::plans(self) {
            if !seen.insert(p.name.clone()) {
                return Err(format!("instance {} is listed twice", p.name));
            }
        }
        Ok(())
    }
}
