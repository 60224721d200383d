//! Simple-Spread-style multi-agent benchmarks for the LTL engine, generated.
//!
//! The environment of the memoryful-agents paper (its networks and environments are not
//! published, so the project builds its own, deterministically from a seed): `n` = 2 or 4 agents
//! on the plane, landmarks at (±1/2, 0) for two agents and (±1/2, ±1/2) for four, every agent
//! starting anywhere in [-1, 1]^2. Each agent observes the positions of all agents (positions
//! only) and picks one of five moves by the argmax of its recurrent policy (two Elman ReLU layers
//! of 8 units, then a linear layer; R2x8 in the paper): left, up, right, down by [`STEP`], or stay.
//! Moves are simultaneous and exact (`x' = x + 1/10 * dx`).
//!
//! Each policy imitates an expert that goes to the nearest free landmark: agents claim landmarks
//! in index order, each the nearest (L1) landmark not claimed before it; the expert stays when it
//! is within [`NEAR`] (L1) of its landmark and otherwise moves along the axis of the larger
//! distance. The training sequences are expert runs from random starts with a fifth of the moves
//! random (so that the data covers states off the expert's path), labelled with the expert's
//! choice at every step.
//!
//! The system file carries the paper's properties of "agent 1 within 1/10 (L1) of some landmark":
//! `stable` = F<=k G<=k near and `live` = G<=k F<=k near, with `k` a parameter (`--k t`).
//!
//! Same seed, same bytes: the trainer is bit-reproducible and the files have fixed text.

use std::path::{Path, PathBuf};
use trestle_train::rng::TrainRng;
use trestle_train::{Architecture, Dataset, Optimizer, TrainConfig, train};

/// The length of one move.
pub const STEP: f64 = 0.1;
/// "Near a landmark": within this L1 distance.
pub const NEAR: f64 = 0.1;
/// The moves, in the order of the policy's outputs.
pub const MOVES: [&str; 5] = ["left", "up", "right", "down", "stay"];
const DX: [f64; 5] = [-1.0, 0.0, 1.0, 0.0, 0.0];
const DY: [f64; 5] = [0.0, 1.0, 0.0, -1.0, 0.0];
const STAY: usize = 4;
/// Widths of the two recurrent layers (R2x8).
pub const HIDDEN: [usize; 2] = [8, 8];

const SEQUENCES: usize = 1500;
const SEQUENCE_STEPS: usize = 10;
const RANDOM_MOVE_CHANCE: f64 = 0.2;

#[derive(Debug, thiserror::Error)]
pub enum SpreadError {
    /// The request is wrong (exit 2).
    #[error("{0}")]
    Input(String),
    /// Writing, training or checking failed (exit 4).
    #[error("{0}")]
    Internal(String),
}

/// The landmarks of the `agents`-agent task.
pub fn landmarks(agents: usize) -> Result<Vec<[f64; 2]>, SpreadError> {
    match agents {
        2 => Ok(vec![[-0.5, 0.0], [0.5, 0.0]]),
        4 => Ok(vec![[-0.5, -0.5], [-0.5, 0.5], [0.5, -0.5], [0.5, 0.5]]),
        n => Err(SpreadError::Input(format!("spread: {n} agents; the task is defined for 2 or 4"))),
    }
}

fn l1(p: [f64; 2], q: [f64; 2]) -> f64 {
    (p[0] - q[0]).abs() + (p[1] - q[1]).abs()
}

/// The landmark each agent goes to: in agent order, the nearest one not claimed yet (ties: the
/// lowest landmark index).
pub fn assignment(positions: &[[f64; 2]], marks: &[[f64; 2]]) -> Vec<usize> {
    let mut free = vec![true; marks.len()];
    positions
        .iter()
        .map(|&p| {
            let mut best: Option<usize> = None;
            for (j, &m) in marks.iter().enumerate() {
                if free[j] && best.is_none_or(|b| l1(p, m) < l1(p, marks[b])) {
                    best = Some(j);
                }
            }
            let j = best.expect("as many landmarks as agents");
            free[j] = false;
            j
        })
        .collect()
}

/// The expert's move (an index into [`MOVES`]) for `agent`.
pub fn expert_move(positions: &[[f64; 2]], marks: &[[f64; 2]], agent: usize) -> usize {
    let goal = marks[assignment(positions, marks)[agent]];
    let p = positions[agent];
    let (ex, ey) = (goal[0] - p[0], goal[1] - p[1]);
    if ex.abs() + ey.abs() <= NEAR {
        STAY
    } else if ex.abs() >= ey.abs() {
        if ex > 0.0 { 2 } else { 0 }
    } else if ey > 0.0 {
        1
    } else {
        3
    }
}

/// Sequences of observations, and per agent sequences of moves.
type Runs = (Vec<Vec<Vec<f64>>>, Vec<Vec<Vec<usize>>>);

/// Expert runs from random starts: the observations (all positions) of every sequence and, per
/// agent, the expert's move at every step.
fn expert_runs(agents: usize, marks: &[[f64; 2]], seed: u64) -> Runs {
    let mut rng = TrainRng::new(seed);
    let mut inputs = Vec::with_capacity(SEQUENCES);
    let mut labels = vec![Vec::with_capacity(SEQUENCES); agents];
    for _ in 0..SEQUENCES {
        let mut pos: Vec<[f64; 2]> = (0..agents).map(|_| [rng.symmetric(1.0), rng.symmetric(1.0)]).collect();
        let mut seq = Vec::with_capacity(SEQUENCE_STEPS);
        let mut seq_labels = vec![Vec::with_capacity(SEQUENCE_STEPS); agents];
        for _ in 0..SEQUENCE_STEPS {
            seq.push(pos.iter().flatten().copied().collect());
            let moves: Vec<usize> = (0..agents).map(|i| expert_move(&pos, marks, i)).collect();
            for (i, &m) in moves.iter().enumerate() {
                seq_labels[i].push(m);
            }
            for (p, &m) in pos.iter_mut().zip(&moves) {
                let m = if rng.unit() < RANDOM_MOVE_CHANCE { rng.below(MOVES.len()) } else { m };
                *p = [p[0] + STEP * DX[m], p[1] + STEP * DY[m]];
            }
        }
        inputs.push(seq);
        for (all, one) in labels.iter_mut().zip(seq_labels) {
            all.push(one);
        }
    }
    (inputs, labels)
}

/// One generated policy.
#[derive(Clone, Debug)]
pub struct Policy {
    pub agent: usize,
    pub model: PathBuf,
    /// Agreement with the expert on the training sequences (every step).
    pub accuracy: f64,
}

impl Policy {
    /// One line for `trestle spread generate`: the model and its agreement with the expert.
    pub fn text(&self) -> String {
        format!(
            "agent {}: {} (agrees with the expert on {:.1}% of the training steps)",
            self.agent,
            self.model.display(),
            100.0 * self.accuracy
        )
    }
}

#[derive(Clone, Debug)]
pub struct Generated {
    pub system: PathBuf,
    pub policies: Vec<Policy>,
}

fn internal(what: impl std::fmt::Display) -> impl Fn(String) -> SpreadError {
    move |e| SpreadError::Internal(format!("{what}: {e}"))
}

/// A directory or file of the output that cannot be made (a path that is a file or a directory
/// where the other is needed, a FIFO, no permission, a full disk) is about the path the user
/// gave: an input error, exit 2.
fn output_error(path: &std::path::Path, e: std::io::Error) -> SpreadError {
    SpreadError::Input(format!("cannot write {}: {e}", path.display()))
}

/// Trains the policies of the `agents`-agent task from `seed` and writes
/// `out_dir/networks/spread-N-agentI.onnx` and `out_dir/spread-N.toml`.
pub fn generate(agents: usize, seed: u64, out_dir: &Path) -> Result<Generated, SpreadError> {
    let marks = landmarks(agents)?;
    let name = format!("spread-{agents}");
    let networks = out_dir.join("networks");
    std::fs::create_dir_all(&networks).map_err(|e| output_error(&networks, e))?;
    let (inputs, labels) = expert_runs(agents, &marks, seed);
    let mut policies = Vec::with_capacity(agents);
    for (i, agent_labels) in labels.iter().enumerate() {
        let data = Dataset::class_sequences(&inputs, agent_labels, MOVES.len())
            .map_err(|e| internal("data")(e.to_string()))?;
        let config = TrainConfig {
            seed: seed.wrapping_add(1 + i as u64),
            epochs: 200,
            batch_size: 32,
            optimizer: Optimizer::adam(1e-2),
            lr_decay: 0.985,
            clip_norm: Some(5.0),
            ..TrainConfig::default()
        };
        let agent = format!("{name}-agent{}", i + 1);
        let model = networks.join(format!("{agent}.onnx"));
        // The model's path is the user's: one that cannot be written (a directory, a FIFO) is an
        // input error, found before the training rather than by the write after it.
        atomic_output::check_target(&model).map_err(|e| output_error(&model, e))?;
        let trained = train(&Architecture::rnn(2 * agents, &HIDDEN, MOVES.len()), &data, None, &config)
            .map_err(|e| internal(&agent)(e.to_string()))?;
        let net = trained.model.to_network(&format!("inline:{agent}"));
        // The file must read back as the very network trained, and tract (the hidden state carried
        // along a training sequence) must agree.
        trestle_nn::write_onnx_checked(&net, &model, &inputs[0], 1e-4).map_err(internal(model.display()))?;
        let accuracy = trained.report.train.accuracy.unwrap_or(f64::NAN);
        policies.push(Policy { agent: i + 1, model, accuracy });
    }
    let system = out_dir.join(format!("{name}.toml"));
    let text = system_text(agents, &marks, seed, &policies);
    atomic_output::write(&system, text.as_bytes()).map_err(|e| output_error(&system, e))?;
    trestle_config::load_system(&system, &Default::default())
        .map_err(|e| internal(system.display())(format!("the written system does not load: {e}")))?;
    Ok(Generated { system, policies })
}

/// `v - c` written for a system file (`v` alone when `c` is 0).
fn offset(v: &str, c: f64) -> String {
    if c == 0.0 {
        v.to_string()
    } else if c > 0.0 {
        format!("{v} - {c}")
    } else {
        format!("{v} + {}", -c)
    }
}

/// "Agent 1 within NEAR (L1) of some landmark", as linear comparisons (|a| + |b| <= r is the
/// four comparisons ±a ±b <= r).
pub fn near_text(marks: &[[f64; 2]]) -> String {
    let near = |m: &[f64; 2]| {
        let (a, b) = (offset("x1", m[0]), offset("y1", m[1]));
        let cmp = |sa: &str, sb: &str| format!("{sa}({a}) {sb} ({b}) <= {NEAR}");
        format!("({} and {} and {} and {})", cmp("", "+"), cmp("", "-"), cmp("-", "+"), cmp("-", "-"))
    };
    marks.iter().map(near).collect::<Vec<_>>().join(" or ")
}

fn system_text(agents: usize, marks: &[[f64; 2]], seed: u64, policies: &[Policy]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let marks_text = marks.iter().map(|m| format!("({}, {})", m[0], m[1])).collect::<Vec<_>>().join(", ");
    let _ = writeln!(
        s,
        "# Simple Spread, {agents} agents (generated by `trestle spread generate --agents {agents} --seed {seed}`;\n\
         # do not edit). Landmarks at {marks_text}; every agent starts anywhere in [-1, 1]^2,\n\
         # observes all positions and moves by {STEP} left, up, right or down, or stays, by the argmax of\n\
         # its R2x8 policy (imitating go-to-the-nearest-free-landmark).\n\
         #\n\
         # Properties of \"agent 1 within {NEAR} (L1) of a landmark\", k a parameter (`--k t`, t = 0..9):\n\
         # stable = F<=k G<=k near, live = G<=k F<=k near.\n"
    );
    let _ = writeln!(s, "[system]\nname = \"spread-{agents}\"");
    let _ = writeln!(s, "description = \"Simple Spread, {agents} agents, R2x8 recurrent policies (seed {seed})\"\n");
    let _ = writeln!(s, "[state]");
    for i in 1..=agents {
        let _ = writeln!(s, "x{i} = {{ type = \"real\" }}\ny{i} = {{ type = \"real\" }}");
    }
    let observation =
        (1..=agents).flat_map(|i| [format!("\"x{i}\""), format!("\"y{i}\"")]).collect::<Vec<_>>().join(", ");
    for p in policies {
        let i = p.agent;
        let model = p.model.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let labels = MOVES.iter().map(|m| format!("\"{m}{i}\"")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            s,
            "\n[[controllers]]\nname = \"agent{i}\"\nmodel = \"networks/{model}\"\ninputs = [{observation}]\n\
             argmax = \"a{i}\"\nlabels = [{labels}]"
        );
    }
    let list = |d: &[f64; 5]| d.iter().map(|v| format!("{v}")).collect::<Vec<_>>().join(", ");
    let _ = writeln!(s, "\n[step]");
    for i in 1..=agents {
        let _ = writeln!(s, "x{i} = \"x{i} + {STEP} * lookup(a{i}, [{}])\"", list(&DX));
        let _ = writeln!(s, "y{i} = \"y{i} + {STEP} * lookup(a{i}, [{}])\"", list(&DY));
    }
    let _ = writeln!(s, "\n[init]");
    for i in 1..=agents {
        let _ = writeln!(s, "x{i} = [-1, 1]\ny{i} = [-1, 1]");
    }
    let near = near_text(marks);
    for (name, shape) in [("stable", "F<=k G<=k"), ("live", "G<=k F<=k")] {
        let _ = writeln!(s, "\n[[property]]\nname = \"{name}\"\nk = 3\nltl = \"{shape} ({near})\"");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expert_reaches_its_landmark_and_stays() {
        let marks = landmarks(2).unwrap();
        let mut pos = vec![[1.0, 1.0], [-0.93, -0.41]];
        for _ in 0..40 {
            let moves: Vec<usize> = (0..2).map(|i| expert_move(&pos, &marks, i)).collect();
            for (p, &m) in pos.iter_mut().zip(&moves) {
                *p = [p[0] + STEP * DX[m], p[1] + STEP * DY[m]];
            }
        }
        assert!(l1(pos[0], marks[1]) <= NEAR + 1e-9, "{pos:?}");
        assert!(l1(pos[1], marks[0]) <= NEAR + 1e-9, "{pos:?}");
        assert_eq!(expert_move(&pos, &marks, 0), STAY);
    }

    #[test]
    fn agents_claim_distinct_landmarks_in_order() {
        let marks = landmarks(4).unwrap();
        // Both agents are nearest to (0.5, 0.5); the second takes the next nearest free one.
        let a = assignment(&[[0.6, 0.6], [0.55, 0.55], [0.0, 0.0], [0.0, 0.0]], &marks);
        assert_eq!(a, vec![3, 1, 0, 2]);
        assert!(landmarks(3).is_err());
    }

    #[test]
    fn near_is_the_l1_ball() {
        assert_eq!(
            near_text(&[[-0.5, 0.0]]),
            "((x1 + 0.5) + (y1) <= 0.1 and (x1 + 0.5) - (y1) <= 0.1 and -(x1 + 0.5) + (y1) <= 0.1 and \
             -(x1 + 0.5) - (y1) <= 0.1)"
        );
    }
}
