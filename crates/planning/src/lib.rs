//! Discrete planning benchmarks for the CEGAR engine (policy predicate abstraction), generated.
//!
//! The CEGAR paper's domains (its networks and instances are not published, so the project builds
//! its own, deterministically from a seed): Blocksworld with 4 and 5 blocks, the 8-puzzle and a
//! Transport task (see [`domains`]). Every domain is a set of guarded commands over bounded
//! integer variables with linear guards and updates; a successor outside a variable's domain does
//! not exist (`on_domain_exit = "drop"`); the policy is the argmax of a ReLU network over the
//! labels (ties to the lowest index), and a label whose commands are all disabled ends the run.
//!
//! For each task:
//! - the state space under every operator is built from the goal states ([`graph::Space`]) and an
//!   optimal planner's distances to the goal computed over it; the expert picks the lowest-index
//!   label of an optimal move (in the goal, the domain's stop label, which is disabled there);
//! - the start set (the system's `init`, a disjunction of states) is drawn from the seed among
//!   the states a few moves from the goal;
//! - policies (two hidden ReLU layers of each of [`WIDTHS`] units) imitate the expert on the
//!   training states (all states of the space, or for the 8-puzzle those near the goal), trained
//!   by `trestle-train` with a seed derived from the generator's;
//! - the exact explicit-state search of [`search`] explores every state reachable under the
//!   policy from the start states; the unsafety condition is then picked from the task's family
//!   (too many blocks on the table, too heavy a truck on the bridge, a tile in a cell) so that the
//!   instance has its planned verdict ([`planned_truth`]: 7 safe, 5 unsafe) where the family
//!   allows it: a safe instance's unsafe states are reachable by some operator sequence from the
//!   start states (as close as possible to the policy's states) but not under the policy, an
//!   unsafe instance's are reached under the policy (the deepest shortest counterexample) but are
//!   no start state;
//! - the system file is written, loaded back, and searched again: the verdict recorded (in the
//!   file's header and in [`Generated::expected`]) is that search's.
//!
//! Same seed, same bytes: the trainer is bit-reproducible, the file texts are fixed and nothing
//! depends on the machine or the thread count.

pub mod domains;
pub mod graph;
pub mod model;
pub mod search;

use graph::Space;
use model::{Atom, Domain, Op, State};
use num_traits::ToPrimitive;
use std::path::{Path, PathBuf};
use trestle_ir::{Env, Rational};
use trestle_train::rng::TrainRng;
use trestle_train::{Architecture, Dataset, Optimizer, TrainConfig, train};

/// Widths of the two hidden layers of the policies (one instance per width and task).
pub const WIDTHS: [usize; 3] = [16, 32, 64];

/// At most this many states in a task's space and in a policy's reachable set.
const STATE_LIMIT: usize = 200_000;

/// The planning tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Task {
    /// Blocksworld, 4 blocks (73 states).
    Blocks4,
    /// Blocksworld, 5 blocks (501 states).
    Blocks5,
    /// The 8-puzzle (181440 states reachable from the goal).
    Puzzle8,
    /// One truck, three packages, a road of five locations with a bridge in the middle.
    Transport,
}

impl Task {
    pub const ALL: [Task; 4] = [Task::Blocks4, Task::Blocks5, Task::Puzzle8, Task::Transport];

    /// The name instances start with (`blocks4-h16`).
    pub fn name(self) -> &'static str {
        match self {
            Task::Blocks4 => "blocks4",
            Task::Blocks5 => "blocks5",
            Task::Puzzle8 => "puzzle8",
            Task::Transport => "transport",
        }
    }

    fn index(self) -> u64 {
        Task::ALL.iter().position(|&t| t == self).expect("every task is in ALL") as u64
    }
}

/// The name of an instance: `TASK-hWIDTH`.
pub fn instance_name(task: Task, width: usize) -> String {
    format!("{}-h{width}", task.name())
}

/// The truth of an instance (established by exact explicit-state search, never by an engine
/// under test): whether a state violating `safe` is reachable under the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Truth {
    Safe,
    Unsafe,
}

impl Truth {
    pub fn as_str(self) -> &'static str {
        match self {
            Truth::Safe => "safe",
            Truth::Unsafe => "unsafe",
        }
    }
}

/// The verdict the unsafety condition of an instance is chosen for (when the task's family of
/// conditions allows it; otherwise the other one): 7 safe and 5 unsafe instances over
/// [`Task::ALL`] x [`WIDTHS`].
pub fn planned_truth(task: Task, width: usize) -> Truth {
    use Truth::{Safe, Unsafe};
    match (task, width) {
        (Task::Blocks4, 16) | (Task::Blocks5, 32) | (Task::Puzzle8, 16) | (Task::Transport, 16 | 64) => Unsafe,
        _ => Safe,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PlanningError {
    /// The request is wrong (exit 2).
    #[error("{0}")]
    Input(String),
    /// Building, training, writing or checking failed (exit 4).
    #[error("{0}")]
    Internal(String),
}

/// One generated instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub name: String,
    pub task: Task,
    pub width: usize,
    /// `out_dir/NAME.toml`.
    pub system: PathBuf,
    /// `out_dir/networks/NAME.onnx`.
    pub model: PathBuf,
    /// Agreement of the policy with the expert on the training states.
    pub accuracy: f64,
    pub training_states: usize,
    pub start_states: usize,
    /// States reachable under the policy from the start states (start states included).
    pub reachable: usize,
    /// The unsafety condition (`safe` is its negation).
    pub unsafe_condition: String,
    /// The verdict of the exact explicit-state search.
    pub expected: Truth,
    /// Unsafe instances: the number of steps of a shortest counterexample.
    pub counterexample_steps: Option<usize>,
    /// Safe instances: the fewest operators that lead from a state reachable under the policy to
    /// an unsafe state (the unsafety condition is reachable, only not under the policy).
    pub unsafe_distance: Option<u32>,
}

impl Generated {
    /// One line for `trestle planning generate`: the file, the state counts, the policy's
    /// accuracy and the verdict of the exact search.
    pub fn text(&self) -> String {
        format!(
            "{}: {} ({} start states, {} reachable under the policy, accuracy {:.1}%, {}: {})",
            self.name,
            self.system.display(),
            self.start_states,
            self.reachable,
            100.0 * self.accuracy,
            self.expected.as_str(),
            self.unsafe_condition
        )
    }
}

fn internal(what: impl std::fmt::Display) -> impl Fn(String) -> PlanningError {
    move |e| PlanningError::Internal(format!("{what}: {e}"))
}

/// A directory or file of the output that cannot be made (a path that is a file or a directory
/// where the other is needed, a FIFO, no permission, a full disk) is about the path the user
/// gave: an input error, exit 2.
fn output_error(path: &std::path::Path, e: std::io::Error) -> PlanningError {
    PlanningError::Input(format!("cannot write {}: {e}", path.display()))
}

/// A task made ready for its policies: the domain, its state space, the start states, the
/// training data and the family of unsafety conditions.
struct Prepared {
    task: Task,
    seed: u64,
    domain: Domain,
    space: Space,
    /// Indices into the space, in space order.
    starts: Vec<usize>,
    /// Indices into the space of the training states, in space order.
    training: Vec<usize>,
    /// Conjunctions, in order of preference.
    candidates: Vec<Vec<Atom>>,
}

/// What each task draws its start states from and trains on.
struct Shape {
    domain: Domain,
    roots: Vec<State>,
    starts: usize,
    /// Distances to the goal the start states are drawn from.
    start_dist: (u32, u32),
    /// A further condition on start states.
    start_filter: fn(&[i64]) -> bool,
    /// Start states must be ones from which the expert's runs avoid the first (most severe)
    /// candidate, so that a faithful policy can be safe for it.
    expert_avoids_first: bool,
    /// The training states: those at most this far from the goal (`None`: every state).
    training_radius: Option<u32>,
    candidates: Vec<Vec<Atom>>,
}

fn shape(task: Task) -> Shape {
    let any = |_: &[i64]| true;
    match task {
        Task::Blocks4 | Task::Blocks5 => {
            let n = if task == Task::Blocks4 { 4 } else { 5 };
            let domain = domains::blocks(n);
            let goal: State = (1..=n).map(|b| if b < n { b as i64 + 1 } else { 0 }).chain([1]).collect();
            let candidates = (1..=n as i64).rev().map(|l| vec![Atom::new(n, Op::Ge, l)]).collect();
            let (starts, start_dist) = if n == 4 { (6, (2, 4)) } else { (8, (3, 6)) };
            Shape {
                domain,
                roots: vec![goal],
                starts,
                start_dist,
                // At most n - 2 blocks on the table (`table` is the last variable).
                start_filter: |s| s[s.len() - 1] <= s.len() as i64 - 3,
                expert_avoids_first: true,
                training_radius: None,
                candidates,
            }
        }
        Task::Puzzle8 => {
            let domain = domains::puzzle8();
            let goal: State = (0..domains::CELLS).map(|c| ((c + 1) % domains::CELLS) as i64).collect();
            let candidates =
                (1..=8).flat_map(|t| (0..domains::CELLS).map(move |c| vec![Atom::new(c, Op::Eq, t)])).collect();
            Shape {
                domain,
                roots: vec![goal],
                starts: 6,
                start_dist: (6, 10),
                start_filter: any,
                expert_avoids_first: false,
                training_radius: Some(14),
                candidates,
            }
        }
        Task::Transport => {
            let domain = domains::transport();
            let (truck, load) = (0, domains::DESTINATIONS.len() + 1);
            let roots = (0..domains::LOCATIONS)
                .map(|t| [t].into_iter().chain(domains::DESTINATIONS).chain([0]).collect())
                .collect();
            let candidates = (1..=domains::CAPACITY)
                .rev()
                .map(|l| vec![Atom::new(truck, Op::Eq, domains::BRIDGE), Atom::new(load, Op::Ge, l)])
                .collect();
            Shape {
                domain,
                roots,
                starts: 8,
                start_dist: (7, 14),
                start_filter: |s| s[domains::DESTINATIONS.len() + 1] == 0,
                expert_avoids_first: true,
                training_radius: None,
                candidates,
            }
        }
    }
}

fn prepare(task: Task, seed: u64) -> Result<Prepared, PlanningError> {
    let Shape { domain, roots, starts, start_dist, start_filter, expert_avoids_first, training_radius, mut candidates } =
        shape(task);
    let space = Space::explore(&domain, &roots, STATE_LIMIT).map_err(internal(task.name()))?;
    // The goal is safe: no condition that holds in a goal state is a candidate.
    candidates.retain(|c| !space.states.iter().any(|s| domain.is_goal(s) && model::all_hold(c, s)));
    let mut pool: Vec<usize> = (0..space.states.len())
        .filter(|&i| space.dist[i].is_some_and(|d| start_dist.0 <= d && d <= start_dist.1))
        .filter(|&i| start_filter(&space.states[i]))
        .filter(|&i| {
            !expert_avoids_first
                || candidates
                    .first()
                    .is_none_or(|c| space.expert_run(&domain, i).iter().all(|&j| !model::all_hold(c, &space.states[j])))
        })
        .collect();
    if pool.len() < starts {
        return Err(PlanningError::Internal(format!("{}: only {} candidate start states", task.name(), pool.len())));
    }
    let mut rng = TrainRng::new(seed.wrapping_mul(1000).wrapping_add(task.index()));
    rng.shuffle(&mut pool);
    let mut chosen = pool[..starts].to_vec();
    chosen.sort_unstable();
    let training = (0..space.states.len())
        .filter(|&i| training_radius.is_none_or(|r| space.dist[i].is_some_and(|d| d <= r)))
        .collect();
    Ok(Prepared { task, seed, domain, space, starts: chosen, training, candidates })
}

/// Generates every instance ([`Task::ALL`] x [`WIDTHS`], in that order) from `seed` into
/// `out_dir` (`NAME.toml` and `networks/NAME.onnx`). Instances are built in parallel, one per
/// thread; the files do not depend on the number of threads.
pub fn generate_all(seed: u64, out_dir: &Path) -> Result<Vec<Generated>, PlanningError> {
    let prepared = Task::ALL.iter().map(|&t| prepare(t, seed)).collect::<Result<Vec<_>, _>>()?;
    let jobs: Vec<(&Prepared, usize)> = prepared.iter().flat_map(|p| WIDTHS.map(|w| (p, w))).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<Generated, PlanningError>>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(p, w)) = jobs.get(k) else { break };
                    let r = build(p, w, out_dir);
                    *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                }
            });
        }
    });
    results.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every job ran")).collect()
}

/// Generates the instance of `task` with hidden layers of `width` units (one of [`WIDTHS`]) from
/// `seed` into `out_dir` (`NAME.toml` and `networks/NAME.onnx`); the same files as
/// [`generate_all`] writes for it.
pub fn generate(task: Task, width: usize, seed: u64, out_dir: &Path) -> Result<Generated, PlanningError> {
    if !WIDTHS.contains(&width) {
        return Err(PlanningError::Input(format!(
            "planning: hidden width {width}; the instances have widths {}",
            WIDTHS.map(|w| w.to_string()).join(", ")
        )));
    }
    build(&prepare(task, seed)?, width, out_dir)
}

/// The unsafety condition picked for a policy, and what the native exploration says of it.
struct Pick {
    candidate: usize,
    verdict: Truth,
    /// Safe: the fewest operators from the policy's states to an unsafe state.
    distance: Option<u32>,
}

/// Picks the unsafety condition: the planned verdict if some candidate gives it non-trivially,
/// else the other verdict, else (every candidate that the policy reaches holds in a start state)
/// the first candidate that holds in a start state.
fn pick(p: &Prepared, reached: &[(usize, usize)], want: Truth) -> Result<Pick, PlanningError> {
    let states = &p.space.states;
    let sources: Vec<usize> = reached.iter().map(|&(i, _)| i).collect();
    let from_policy = p.space.distances_from(&sources);
    let mut safe_best: Option<(u32, usize)> = None;
    let mut unsafe_best: Option<(usize, usize)> = None;
    let mut trivial = None;
    for (c, atoms) in p.candidates.iter().enumerate() {
        let at_start = p.starts.iter().any(|&i| model::all_hold(atoms, &states[i]));
        let first_hit = reached.iter().filter(|&&(i, _)| model::all_hold(atoms, &states[i])).map(|&(_, d)| d).min();
        match first_hit {
            None => {
                let nearest = (0..states.len())
                    .filter(|&i| model::all_hold(atoms, &states[i]))
                    .filter_map(|i| from_policy[i])
                    .min();
                if let Some(d) = nearest
                    && safe_best.is_none_or(|(best, _)| d < best)
                {
                    safe_best = Some((d, c));
                }
            }
            Some(_) if at_start => {
                trivial.get_or_insert(c);
            }
            Some(d) => {
                if unsafe_best.is_none_or(|(best, _)| d > best) {
                    unsafe_best = Some((d, c));
                }
            }
        }
    }
    let safe = safe_best.map(|(d, c)| Pick { candidate: c, verdict: Truth::Safe, distance: Some(d) });
    let unsafe_ = unsafe_best.map(|(_, c)| Pick { candidate: c, verdict: Truth::Unsafe, distance: None });
    let (first, second) = match want {
        Truth::Safe => (safe, unsafe_),
        Truth::Unsafe => (unsafe_, safe),
    };
    first.or(second).or(trivial.map(|c| Pick { candidate: c, verdict: Truth::Unsafe, distance: None })).ok_or_else(
        || PlanningError::Internal(format!("{}: no unsafety condition of the family applies", p.task.name())),
    )
}

fn to_ints(state: &[Rational]) -> Result<State, PlanningError> {
    state
        .iter()
        .map(|q| {
            q.is_integer()
                .then(|| q.to_integer().to_i64())
                .flatten()
                .ok_or_else(|| PlanningError::Internal(format!("explicit search: the non-integer value {q}")))
        })
        .collect()
}

/// The policy's reachable set as space indices with depths, after checking every transition the
/// exact search took against the domain's own commands and every observation against the
/// domain's (the network saw in the search what it was trained on).
fn check_against_domain(
    p: &Prepared,
    sys: &trestle_ir::System,
    e: &search::Exploration,
    name: &str,
) -> Result<Vec<(usize, usize)>, PlanningError> {
    let fail = |msg: String| PlanningError::Internal(format!("{name}: {msg}"));
    let mut out = Vec::with_capacity(e.reachable.len());
    for r in &e.reachable {
        let s = to_ints(&r.state)?;
        let i = *p
            .space
            .index
            .get(&s)
            .ok_or_else(|| fail(format!("the policy reaches {s:?}, outside the task's space")))?;
        let label = r.actions[0].to_usize().ok_or_else(|| fail("the policy's action is no label".into()))?;
        let want: Vec<State> = p.domain.successors(&s).into_iter().filter(|t| t.0 == label).map(|t| t.2).collect();
        let got = r.next.iter().map(|&k| to_ints(&e.reachable[k].state)).collect::<Result<Vec<_>, _>>()?;
        if want != got {
            return Err(fail(format!(
                "at {s:?} under {}: the system gives {got:?}, the domain {want:?}",
                p.domain.labels[label]
            )));
        }
        let env = Env::new(&r.state, &[], &[]);
        for (k, (e, want)) in sys.controllers[0].inputs.iter().zip(p.domain.observe(&s)).enumerate() {
            let got = e.eval_exact(&env).map_err(|e| fail(e.to_string()))?;
            if got.to_f64() != Some(want) {
                return Err(fail(format!("input {k} at {s:?} is {got} in the system, {want} in the training data")));
            }
        }
        out.push((i, r.depth));
    }
    Ok(out)
}

fn build(p: &Prepared, width: usize, out_dir: &Path) -> Result<Generated, PlanningError> {
    let task = p.task;
    let name = instance_name(task, width);
    let networks = out_dir.join("networks");
    std::fs::create_dir_all(&networks).map_err(|e| output_error(&networks, e))?;
    let model = networks.join(format!("{name}.onnx"));
    // The model's path is the user's: one that cannot be written (a directory, a FIFO) is an
    // input error, found before the training rather than by the write after it.
    atomic_output::check_target(&model).map_err(|e| output_error(&model, e))?;
    let d = &p.domain;
    let inputs: Vec<Vec<f64>> = p.training.iter().map(|&i| d.observe(&p.space.states[i])).collect();
    let labels: Vec<usize> = p.training.iter().map(|&i| p.space.expert(d, i)).collect();
    let data = Dataset::classification(&inputs, &labels, d.labels.len()).map_err(|e| internal(&name)(e.to_string()))?;
    let config = TrainConfig {
        seed: p.seed.wrapping_mul(1000).wrapping_add(100 * (1 + task.index()) + width as u64),
        epochs: 300,
        batch_size: 32,
        optimizer: Optimizer::adam(1e-2),
        lr_decay: 0.99,
        ..TrainConfig::default()
    };
    let trained = train(&Architecture::mlp(d.inputs.len(), &[width, width], d.labels.len()), &data, None, &config)
        .map_err(|e| internal(&name)(e.to_string()))?;
    let accuracy = trained.report.train.accuracy.unwrap_or(f64::NAN);
    let net = trained.model.to_network(&format!("inline:{name}"));
    // The file must read back as the very network trained, and tract must agree with it.
    let probes: Vec<Vec<f64>> = inputs.iter().take(8).cloned().collect();
    trestle_nn::write_onnx_checked(&net, &model, &probes, 1e-4).map_err(internal(model.display()))?;

    // The policy's reachable set, searched exactly in the system as written (with no unsafety yet).
    let system = out_dir.join(format!("{name}.toml"));
    let info =
        Info { p, width, accuracy, unsafe_condition: None, verdict: None, reachable: 0, steps: None, distance: None };
    let draft = system_text(&info);
    let sys = trestle_config::load_system_from_str(&draft, &system, &Default::default())
        .map_err(|e| internal(system.display())(format!("the system does not load: {e}")))?;
    let starts = search::initial_states(&sys, STATE_LIMIT)?;
    let listed: Vec<&State> = p.starts.iter().map(|&i| &p.space.states[i]).collect();
    let enumerated = starts.iter().map(|s| to_ints(s)).collect::<Result<Vec<_>, _>>()?;
    if enumerated.iter().collect::<Vec<_>>() != listed {
        return Err(internal(&name)(format!("init holds the states {enumerated:?}, not the start states {listed:?}")));
    }
    let explored = search::explore(&sys, &starts, STATE_LIMIT)?;
    let reached = check_against_domain(p, &sys, &explored, &name)?;
    let chosen = pick(p, &reached, planned_truth(task, width))?;
    let unsafe_condition = model::conjunction_text(&p.candidates[chosen.candidate], &d.vars);

    // The final file, loaded back and searched again: its verdict is the one recorded.
    let predicted_steps = match chosen.verdict {
        Truth::Safe => None,
        Truth::Unsafe => reached
            .iter()
            .filter(|&&(i, _)| model::all_hold(&p.candidates[chosen.candidate], &p.space.states[i]))
            .map(|&(_, depth)| depth)
            .min(),
    };
    let info = Info {
        unsafe_condition: Some(unsafe_condition.clone()),
        verdict: Some(chosen.verdict),
        reachable: reached.len(),
        steps: predicted_steps,
        distance: chosen.distance,
        ..info
    };
    let text = system_text(&info);
    atomic_output::write(&system, text.as_bytes()).map_err(|e| output_error(&system, e))?;
    let sys = trestle_config::load_system(&system, &Default::default())
        .map_err(|e| internal(system.display())(format!("the written system does not load: {e}")))?;
    let check = search::explore(&sys, &search::initial_states(&sys, STATE_LIMIT)?, STATE_LIMIT)?;
    let steps = check.counterexample.as_ref().map(|run| run.len() - 1);
    if check.verdict != chosen.verdict || check.reachable.len() != reached.len() || steps != predicted_steps {
        return Err(internal(&name)(format!(
            "the written system's search says {} ({} states, counterexample {steps:?}), the generator {} ({} states, {predicted_steps:?})",
            check.verdict.as_str(),
            check.reachable.len(),
            chosen.verdict.as_str(),
            reached.len()
        )));
    }
    Ok(Generated {
        name,
        task,
        width,
        system,
        model,
        accuracy,
        training_states: p.training.len(),
        start_states: p.starts.len(),
        reachable: reached.len(),
        unsafe_condition,
        expected: check.verdict,
        counterexample_steps: steps,
        unsafe_distance: chosen.distance,
    })
}

/// What the system file says about its instance.
struct Info<'a> {
    p: &'a Prepared,
    width: usize,
    accuracy: f64,
    /// `None` in the draft searched before the condition is picked (`safe = "true"`).
    unsafe_condition: Option<String>,
    verdict: Option<Truth>,
    reachable: usize,
    steps: Option<usize>,
    distance: Option<u32>,
}

fn title(task: Task) -> String {
    match task {
        Task::Blocks4 | Task::Blocks5 => {
            let n = if task == Task::Blocks4 { 4 } else { 5 };
            format!("Blocksworld with {n} blocks")
        }
        Task::Puzzle8 => "The 8-puzzle".into(),
        Task::Transport => "Transport".into(),
    }
}

/// The header lines that say what the domain is.
fn domain_comment(task: Task) -> String {
    match task {
        Task::Blocks4 | Task::Blocks5 => {
            let n = if task == Task::Blocks4 { 4 } else { 5 };
            let tower = (1..=n).map(|b| b.to_string()).collect::<Vec<_>>().join(" on ");
            format!(
                "# onB = what block B is on (0 = the table, j = block j); table = the number of blocks on the\n\
                 # table. move_B_to_D moves a clear block B onto the table or onto a clear block D (two commands:\n\
                 # from the table or from a block, which keeps `table`). Goal: the tower {tower} (on the table).\n"
            )
        }
        Task::Puzzle8 => {
            "# cB = the tile in cell B (cells 0..8 row by row, 0 = the blank); up/down/left/right move the\n\
             # blank (one command per blank cell). Goal: 1 2 3 / 4 5 6 / 7 8 _.\n"
                .into()
        }
        Task::Transport => {
            let dests = domains::DESTINATIONS
                .iter()
                .enumerate()
                .map(|(p, d)| format!("p{} to {d}", p + 1))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "# A truck on the road 0 - 1 - 2 - 3 - 4 with a bridge at location {}; pP = where package P is ({} = in\n\
                 # the truck); load = the packages in the truck (capacity {}). Labels drive_left, drive_right,\n\
                 # load_P (package and truck at one location), unload_P (at the truck's location).\n\
                 # Goal: {dests}.\n",
                domains::BRIDGE,
                domains::IN_TRUCK,
                domains::CAPACITY
            )
        }
    }
}

fn system_text(info: &Info) -> String {
    use std::fmt::Write;
    let p = info.p;
    let d = &p.domain;
    let (task, width, seed) = (p.task, info.width, p.seed);
    let name = instance_name(task, width);
    let dists: Vec<u32> = p.starts.iter().filter_map(|&i| p.space.dist[i]).collect();
    let (dmin, dmax) = (dists.iter().min().copied().unwrap_or(0), dists.iter().max().copied().unwrap_or(0));
    let moves = if dmin == dmax { format!("{dmin}") } else { format!("{dmin} to {dmax}") };
    let training = match task {
        Task::Puzzle8 => format!("the {} states at most 14 moves from the goal", p.training.len()),
        _ => format!("all {} states reachable from the goal", p.training.len()),
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "# {} (generated by trestle-planning from seed {seed}: `cargo run --release -p trestle-planning\n\
         # --example generate`; do not edit).\n{}\
         # Start: {} states (`init`), {moves} moves from the goal. A successor outside a domain\n\
         # does not exist; a label with no enabled command ends the run.\n\
         # Policy: the argmax (ties to the lowest index) of a ReLU MLP {} -> {width} -> {width} -> {}\n\
         # imitating a BFS-optimal planner (the lowest-index label of an optimal move; `{}` in the goal),\n\
         # trained on {training}: training accuracy {:.4}.\n",
        title(task),
        domain_comment(task),
        p.starts.len(),
        d.inputs.len(),
        d.labels.len(),
        d.labels[d.stop_label],
        info.accuracy,
    );
    if let (Some(cond), Some(verdict)) = (&info.unsafe_condition, info.verdict) {
        let plural = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
        let why = match (verdict, info.steps, info.distance) {
            (Truth::Unsafe, Some(k), _) => format!("a shortest counterexample has {}", plural(k, "step")),
            (_, _, Some(k)) => {
                format!(
                    "some operator sequence reaches it, {} from the policy's states",
                    plural(k as usize, "operator")
                )
            }
            _ => String::new(),
        };
        let _ = write!(
            s,
            "# Unsafe: {cond}.\n\
             # Verdict (exact explicit-state search under the policy from every start state): {}.\n\
             # {} states are reachable under the policy; {why}.\n",
            verdict.as_str(),
            info.reachable,
        );
    }
    let starts: Vec<State> = p.starts.iter().map(|&i| p.space.states[i].clone()).collect();
    // One start state per line (a line-ending backslash joins the lines of a TOML string).
    let _ = writeln!(s, "init = \"\"\"\\\n{}\"\"\"", d.states_text(&starts).replace(") or (", ") or \\\n("));
    match &info.unsafe_condition {
        Some(cond) => _ = writeln!(s, "safe = \"not ({cond})\""),
        None => _ = writeln!(s, "safe = \"true\""),
    }
    let _ = writeln!(s, "\n[system]\nname = \"{name}\"");
    let _ = writeln!(
        s,
        "description = \"{}, {width}x{width} ReLU policy imitating an optimal planner (seed {seed})\"",
        title(task)
    );
    let _ = writeln!(s, "on_domain_exit = \"drop\"\n");
    s.push_str(&d.state_text());
    let inputs = d.inputs.iter().map(|i| format!("\"{}\"", i.text(&d.vars))).collect::<Vec<_>>().join(", ");
    let labels = d.labels.iter().map(|l| format!("\"{l}\"")).collect::<Vec<_>>().join(", ");
    let _ = writeln!(
        s,
        "\n[controller]\nmodel = \"networks/{name}.onnx\"\ninputs = [{inputs}]\nargmax = \"a\"\nlabels = [{labels}]"
    );
    s.push_str(&d.commands_text());
    s
}
