//! Command-line arguments (clap). Raw flags only; commands resolve them into engine configs.

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use trestle_verify::options::{self, Choice};

#[derive(Parser, Debug)]
#[command(
    name = "trestle",
    version,
    about = "Proves neural-network-controlled systems safe forever, or finds real counterexamples"
)]
#[command(
    after_help = "Exit codes: 0 proven/done, 1 refuted, 2 input error, 3 unknown or floating-point evidence only \
                  (check --method milp: safe-by-milp-evidence), 4 internal error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show what was parsed: variables, networks, controllers, step, predicates, properties.
    Info(InfoArgs),
    /// Run the closed loop concretely, non-determinism resolved at random or as chosen.
    Simulate(SimulateArgs),
    /// Evaluate a model file on one input.
    Eval(EvalArgs),
    /// Sound bounds of a network's outputs over an input box (output box and linear bounds).
    Bounds(BoundsArgs),
    /// Prove the candidate invariant (Init => Inv, Inv => Safe, inductiveness) or refute it.
    Check(CheckArgs),
    /// Bounded CTL: a property of the file or --formula, decided by MILP (compositional or
    /// monolithic; "true" is floating-point evidence, exit code 3, unless bounds alone decide) or
    /// exactly (explicit). "false" comes with runs replayed exactly.
    Ctl(crate::commands::ctl::CtlArgs),
    /// Bounded LTL on every path from Init (recurrent controllers included): bound propagation
    /// through time (exact when it decides), then one MILP over the unrolled path ("true" is
    /// floating-point evidence, exit code 3); "false" comes with a path replayed exactly.
    Ltl(crate::commands::ltl::LtlArgs),
    /// Safety of a discrete neural policy (guarded commands over bounded integers, an argmax
    /// network over the labels): policy predicate abstraction with CEGAR ("safe" is a proof;
    /// "unsafe" comes with a run replayed exactly), or the BMC / explicit-state baselines.
    Cegar(crate::commands::cegar::CegarArgs),
    /// Re-check a certificate written by `check --certificate` (or `synth`, or `ltl`) against the system,
    /// without trusting the run that made it.
    Certify(CertifyArgs),
    /// Find an inductive invariant (a union of boxes between Init and Safe) and prove it, or a
    /// replayed run from Init that leaves Safe. The system's candidate invariant is not used.
    Synth(crate::commands::synth::SynthArgs),
    /// Every property of the file (or the named ones), each with the engine its kind calls for:
    /// invariants by the bridge engine and synthesis, bounded CTL by MILP; one result each.
    Verify(crate::commands::verify::VerifyArgs),
    /// Experiment campaigns: systems × commands × overrides × repetitions, each job a child
    /// process with limits, results in a store; reports, export, shards, merge, Slurm.
    #[command(subcommand)]
    Campaign(CampaignCommand),
    /// Regression suites: instances with expected verdicts, optionally against a baseline run.
    #[command(subcommand)]
    Suite(SuiteCommand),
    /// Generated 2-D maze suites: trained controllers, systems, independently established verdicts.
    #[command(subcommand)]
    Maze(MazeCommand),
    /// Generated n-dimensional arena suites (xi' = xi + dt*ai): more state dimensions, trained
    /// go-to-goal controllers, box candidates, independently established verdicts.
    #[command(subcommand)]
    Arena(ArenaCommand),
    /// Generated Simple-Spread multi-agent benchmarks for `trestle ltl`: recurrent policies
    /// trained from a seed, the system file with its bounded stability and liveness properties.
    #[command(subcommand)]
    Spread(SpreadCommand),
    /// Generated planning benchmarks for `trestle cegar` (Blocksworld 4/5, the 8-puzzle,
    /// Transport): argmax policies trained from a seed, system files with their verdicts.
    #[command(subcommand)]
    Planning(PlanningCommand),
}

impl Command {
    /// `--json`, and the name and `--timeout` of a command that decides a question (for the
    /// process's time-limit backstop, `trestle_verify::process::backstop`).
    pub fn output_and_limit(&self) -> (bool, Option<(&'static str, Option<f64>)>) {
        match self {
            Command::Info(a) => (a.system.json, None),
            Command::Simulate(a) => (a.system.json, Some(("simulate", a.limits.timeout))),
            Command::Eval(a) => (a.json, None),
            Command::Bounds(a) => (a.json, None),
            Command::Check(a) => (a.system.json, Some(("check", a.limits.timeout))),
            Command::Ctl(a) => (a.system.json, Some(("ctl", a.limits.timeout))),
            Command::Ltl(a) => (a.system.json, Some(("ltl", a.limits.timeout))),
            Command::Cegar(a) => (a.system.json, Some(("cegar", a.limits.timeout))),
            Command::Certify(a) => (a.system.json, None),
            Command::Synth(a) => (a.system.json, Some(("synth", a.limits.timeout))),
            Command::Verify(a) => (a.system.json, Some(("verify", a.limits.timeout))),
            Command::Campaign(CampaignCommand::Run(a)) => (a.batch.json, None),
            Command::Suite(SuiteCommand::Run(a)) => (a.batch.json, None),
            Command::Maze(MazeCommand::Generate(a)) | Command::Arena(ArenaCommand::Generate(a)) => (a.batch.json, None),
            Command::Campaign(_) | Command::Spread(_) | Command::Planning(_) => (false, None),
        }
    }
}

/// A system file with its overrides.
#[derive(Args, Debug, Clone)]
pub struct SystemArgs {
    /// The system file (TOML).
    pub system: PathBuf,
    /// Override any value of the file: KEY=VALUE (e.g. init.hdot0=-22.5, controller.model=PATH).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress and no warnings on stderr (progress is off under --json and when stderr is not
    /// a terminal).
    #[arg(long)]
    pub quiet: bool,
    /// Refuse a system with warnings (a state variable never updated, an action or input never
    /// read): exit 2 instead of running.
    #[arg(long)]
    pub deny_warnings: bool,
}

impl SystemArgs {
    /// Whether stderr stays free of progress (`--json` or `--quiet`).
    pub fn silent(&self) -> bool {
        self.json || self.quiet
    }
}

/// The limits every command that decides a question takes, the same everywhere (README,
/// "Commands").
#[derive(Args, Debug, Clone, Copy)]
pub struct LimitArgs {
    /// Wall-clock limit of the whole run, in seconds: a question still open then is answered
    /// unknown ("time limit reached", exit 3).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Most worker threads (results do not depend on it; an engine that runs on one thread uses
    /// one). Default: all cores.
    #[arg(long, conflicts_with = "jobs")]
    pub threads: Option<usize>,
    /// The same as --threads.
    #[arg(long)]
    pub jobs: Option<usize>,
}

impl LimitArgs {
    pub fn limits(&self) -> trestle_verify::options::Limits {
        trestle_verify::options::Limits {
            timeout: self.timeout,
            threads: self.threads.or(self.jobs),
            threads_flag: if self.jobs.is_some() { "jobs" } else { "threads" },
        }
    }
}

#[derive(Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    pub system: SystemArgs,
}

#[derive(Args, Debug)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// Number of steps per run.
    #[arg(long, default_value_t = 20)]
    pub steps: usize,
    /// Number of runs.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
    /// Start state, e.g. "h=-129,hdot0=-22.5,tau=25,adv=0" (exact decimals); variables not given
    /// are drawn from Init.
    #[arg(long)]
    pub from: Option<String>,
    /// Seed of the random choices (initial state, non-deterministic inputs, branches).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Fix non-deterministic inputs, e.g. "c=0.5" (every step) or "c=0.5;0.7;1" (per step).
    #[arg(long)]
    pub nondet: Option<String>,
    /// Fix the branch taken: a name or index for every step, or a comma list per step.
    #[arg(long)]
    pub branch: Option<String>,
    /// Use f64 arithmetic instead of exact rationals (faster; argmax ties may differ).
    #[arg(long)]
    pub float: bool,
    /// --timeout: the steps done by then are printed, with status unknown (exit 3). One thread.
    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// A model file (.onnx or .nnet).
    pub model: PathBuf,
    /// Comma-separated input values.
    #[arg(long, allow_hyphen_values = true)]
    pub input: String,
    /// NNet header normalisation: header (standard NNet semantics) or none (raw weights).
    #[arg(long, value_enum, default_value_t = NnetNormalizationArg::Header)]
    pub nnet_normalization: NnetNormalizationArg,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// bridge (compositional, default), monolithic (whole network in Z3) or milp (big-M MILP in
    /// HiGHS: its "no violation" is floating-point evidence, confirmed by the exact bridge engine;
    /// unconfirmed, the verdict is safe-by-milp-evidence with exit code 3).
    #[arg(long, value_parser = choices(options::CHECK_METHODS), default_value = "bridge")]
    pub method: String,
    /// Start from the original tool's configuration (forward bounds, box psi, all-dims split, FIFO,
    /// no fast path, no search); later flags override it.
    #[arg(long)]
    pub paper: bool,
    /// Postcondition (default crown).
    #[arg(long, value_parser = choices(options::BOUND_METHODS))]
    pub post: Option<String>,
    /// Use the linear bounds in psi (a bridge over state and action; the default).
    #[arg(long, overrides_with = "no_linear_bridge")]
    pub linear_bridge: bool,
    /// Use only the output box as psi (as the paper).
    #[arg(long)]
    pub no_linear_bridge: bool,
    /// Split strategy (default influence).
    #[arg(long, value_parser = choices(options::SPLITS))]
    pub split: Option<String>,
    /// Queue order (default fifo).
    #[arg(long, value_parser = choices(options::QUEUES))]
    pub queue: Option<String>,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Stop with verdict unknown after this many splits.
    #[arg(long)]
    pub max_splits: Option<usize>,
    /// Smallest box width, as a fraction of the invariant's extent, that is still split.
    #[arg(long)]
    pub min_width: Option<f64>,
    /// Send every environment query to Z3 (no closed-form fast path).
    #[arg(long)]
    pub no_fast_path: bool,
    /// Do not search undecided boxes for concrete counterexamples.
    #[arg(long)]
    pub no_search: bool,
    /// Decide a box exactly (Z3 with the networks encoded on it) once it is still undecided after
    /// this many halvings of its invariant box per two state dimensions (default 12: six per side;
    /// 0: at once), and at the minimum width.
    #[arg(long, value_name = "HALVINGS", conflicts_with = "no_exact_leaf")]
    pub exact_after: Option<usize>,
    /// Never decide boxes exactly: undecided boxes are split down to the minimum width.
    #[arg(long)]
    pub no_exact_leaf: bool,
    /// Write every Z3 query as SMT-LIB 2 into this directory.
    #[arg(long, value_name = "DIR")]
    pub dump_smt: Option<PathBuf>,
    #[command(flatten)]
    pub proof: crate::picture::ProofArgs,
    /// When the candidate cannot be proven, look for another invariant (as `trestle synth`) before
    /// reporting; the verdict and exit code are then the synthesis's.
    #[arg(long)]
    pub synthesize_on_failure: bool,
    #[command(flatten)]
    pub flow: FlowArgs,
}

/// The validated flow enclosure's flags (`check`, `synth` on `[flow]` systems).
#[derive(Args, Debug)]
pub struct FlowArgs {
    /// Continuous-time systems ([flow]): the Taylor order of the flow's validated enclosure
    /// (default: from --flow-tolerance).
    #[arg(long, value_name = "N")]
    pub flow_order: Option<usize>,
    /// Continuous-time systems: this many equal sub-steps per period (default: adaptive).
    #[arg(long, value_name = "N")]
    pub flow_substeps: Option<usize>,
    /// Continuous-time systems: the largest truncation remainder of an adaptive sub-step,
    /// relative to max(1, |x|) (default 1e-12).
    #[arg(long, value_name = "TOL")]
    pub flow_tolerance: Option<f64>,
}

#[derive(Args, Debug)]
pub struct CertifyArgs {
    /// The certificate (JSON).
    pub certificate: PathBuf,
    #[command(flatten)]
    pub system: SystemArgs,
}

#[derive(Args, Debug)]
pub struct BoundsArgs {
    /// A model file (.onnx or .nnet).
    pub model: PathBuf,
    /// Lower ends of the input box, comma-separated.
    #[arg(long, allow_hyphen_values = true)]
    pub lo: String,
    /// Upper ends of the input box, comma-separated.
    #[arg(long, allow_hyphen_values = true)]
    pub hi: String,
    /// The bound propagation method.
    #[arg(long, value_parser = choices(options::BOUND_METHODS), default_value = "crown")]
    pub method: String,
    /// NNet header normalisation: header or none.
    #[arg(long, value_enum, default_value_t = NnetNormalizationArg::Header)]
    pub nnet_normalization: NnetNormalizationArg,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum CampaignCommand {
    /// Print the jobs a campaign file expands to (and a shard's slice of them).
    Explain(CampaignExplainArgs),
    /// Run a campaign's jobs into a results directory (one SQLite store, committed per job).
    Run(CampaignRunArgs),
    /// Write a run's tables (Markdown, CSV) and plots (SVG, PNG).
    Report(CampaignReportArgs),
    /// Print every job of a results store as CSV or JSON Lines.
    Export(CampaignExportArgs),
    /// Join the stores of shards into one run per campaign in OUT.
    Merge(CampaignMergeArgs),
    /// Write sbatch scripts: the shards as a job array, then a job that merges and reports.
    Slurm(CampaignSlurmArgs),
}

#[derive(Args, Debug)]
pub struct CampaignExplainArgs {
    /// The campaign file (TOML).
    pub file: PathBuf,
    /// Show only shard K of N: K/N.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
}

#[derive(Args, Debug)]
pub struct CampaignRunArgs {
    /// The campaign file (TOML).
    pub file: PathBuf,
    /// Jobs (child processes) at a time.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// The results directory (default: results/campaigns/NAME).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Continue the latest run of this campaign (and shard) in DIR, skipping its finished jobs.
    #[arg(long)]
    pub resume: bool,
    /// Run only shard K of N (jobs whose position is K-1 modulo N).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// No progress bar and no line per job.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub batch: crate::commands::campaign::BatchArgs,
}

#[derive(Args, Debug)]
pub struct CampaignReportArgs {
    /// The results directory.
    pub dir: PathBuf,
    /// The run to report (default: the latest).
    #[arg(long)]
    pub run: Option<i64>,
    /// Where to write the report (default: DIR/report).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// A flag's parser that accepts the names of a driver's choices (`trestle_verify::options`),
/// each with its help.
pub fn choices<T>(table: &'static [Choice<T>]) -> PossibleValuesParser {
    PossibleValuesParser::new(table.iter().map(|c| match c.help {
        "" => PossibleValue::new(c.name),
        help => PossibleValue::new(c.name).help(help),
    }))
}

/// `--nnet-normalization`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum NnetNormalizationArg {
    /// The standard NNet semantics: inputs and outputs (de)normalised by the header.
    Header,
    /// Raw weights.
    None,
}

impl From<NnetNormalizationArg> for trestle_nn::NnetNormalization {
    fn from(n: NnetNormalizationArg) -> Self {
        match n {
            NnetNormalizationArg::Header => trestle_nn::NnetNormalization::Header,
            NnetNormalizationArg::None => trestle_nn::NnetNormalization::None,
        }
    }
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ExportFormatArg {
    Csv,
    Jsonl,
    /// ARCH-COMP's results.csv: benchmark, instance, result, time.
    Arch,
}

#[derive(Args, Debug)]
pub struct CampaignExportArgs {
    /// The results directory.
    pub dir: PathBuf,
    #[arg(long, value_enum, default_value = "csv")]
    pub format: ExportFormatArg,
    /// Only this run (default: every run in the store).
    #[arg(long)]
    pub run: Option<i64>,
    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CampaignMergeArgs {
    /// The results directory to merge into (created when missing).
    pub out: PathBuf,
    /// The results directories of the shards.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CampaignSlurmArgs {
    /// The campaign file (TOML).
    pub file: PathBuf,
    /// Slurm partition of every job.
    #[arg(long)]
    pub partition: Option<String>,
    /// Time limit of each array task, in Slurm's syntax (e.g. 1:00:00).
    #[arg(long)]
    pub time: Option<String>,
    /// Memory of each array task, in Slurm's syntax (e.g. 8G).
    #[arg(long)]
    pub mem: Option<String>,
    /// Array tasks (shards).
    #[arg(long, default_value_t = 4)]
    pub shards: usize,
    /// CPUs per array task (and its --jobs).
    #[arg(long, default_value_t = 1)]
    pub cpus: usize,
    /// The results directory (default: results/campaigns/NAME); the scripts go to DIR/slurm.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum SuiteCommand {
    /// Run a suite; exit 1 when an instance gives another verdict than expected, errs, or (with
    /// --baseline) changed its verdict or got slower than the slowdown factor allows.
    Run(SuiteRunArgs),
}

#[derive(Args, Debug)]
pub struct SuiteRunArgs {
    /// The suite file (TOML).
    pub suite: PathBuf,
    /// Compare with a run: a results directory (its latest finished run of this suite) or a run
    /// id in the --out store.
    #[arg(long, value_name = "RUN_OR_DIR")]
    pub baseline: Option<String>,
    /// Slower than this factor times the baseline (and by more than the suite's slack, 0.5 s by
    /// default) fails. Default: the suite's, or 2.
    #[arg(long)]
    pub slowdown: Option<f64>,
    /// Jobs (child processes) at a time.
    #[arg(long, default_value_t = 1)]
    pub jobs: usize,
    /// The results directory (default: results/suites/NAME).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// No progress bar and no line per job.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub batch: crate::commands::campaign::BatchArgs,
}

#[derive(Subcommand, Debug)]
pub enum MazeCommand {
    /// Train the controllers of a spec, write their systems and the suite file, with expected
    /// verdicts established independently (a replayed grid counterexample or a certified proof).
    Generate(SuiteGenerateArgs),
}

#[derive(Subcommand, Debug)]
pub enum ArenaCommand {
    /// Train the controllers of a spec (dimensions x shapes x defects), write their systems and
    /// the suite file, with expected verdicts established independently (a replayed grid
    /// counterexample or a certified proof).
    Generate(SuiteGenerateArgs),
}

/// `maze generate` and `arena generate`.
#[derive(Args, Debug)]
pub struct SuiteGenerateArgs {
    /// The spec (TOML): its regions, the candidate and the goal, families of shapes and defects
    /// (and, for an arena, of dimensions).
    pub spec: PathBuf,
    /// Where models/ and systems/ are written.
    pub out_dir: PathBuf,
    /// The suite file to write (default OUT_DIR/suite.toml); its paths are relative to it.
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// Only the instances whose name contains PATTERN (repeatable), each with the controller and
    /// verdict of a full run (its seed is its place in the whole spec); the suite file lists them.
    #[arg(long, value_name = "PATTERN")]
    pub only: Vec<String>,
    /// No line per instance on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// `--timeout`: no instance starts after it (those started finish, each within the spec's
    /// proof timeout); the suite file lists the instances finished.
    #[command(flatten)]
    pub batch: crate::commands::campaign::BatchArgs,
}

#[derive(Subcommand, Debug)]
pub enum PlanningCommand {
    /// Train the 12 instances' policies (2 hidden layers of 16, 32, 64; imitation of a
    /// BFS-optimal planner) and write OUT_DIR/networks/NAME.onnx and OUT_DIR/NAME.toml.
    Generate(PlanningGenerateArgs),
}

#[derive(Args, Debug)]
pub struct PlanningGenerateArgs {
    /// Where the system files and networks/ are written.
    pub out_dir: PathBuf,
    /// Seeds the start states and the training (same seed, same bytes).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

#[derive(Subcommand, Debug)]
pub enum SpreadCommand {
    /// Train the agents' R2x8 policies (imitation of go-to-the-nearest-free-landmark) and write
    /// OUT_DIR/networks/spread-N-agentI.onnx and OUT_DIR/spread-N.toml.
    Generate(SpreadGenerateArgs),
}

#[derive(Args, Debug)]
pub struct SpreadGenerateArgs {
    /// Where the system file and networks/ are written.
    pub out_dir: PathBuf,
    /// The number of agents: 2 or 4.
    #[arg(long, default_value_t = 2)]
    pub agents: usize,
    /// Seeds the training data and the training (same seed, same bytes).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}
