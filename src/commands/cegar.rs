//! `trestle cegar`: safety of a discrete neural policy (guarded commands over bounded integers,
//! an argmax network over the labels) by policy predicate abstraction with CEGAR, or by the
//! bounded-model-checking and explicit-state baselines over the same IR.

use crate::args::SystemArgs;
use crate::output::print_json;
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use serde_json::json;
use trestle_cegar::bmc::{BmcOptions, check_bmc};
use trestle_cegar::explicit::{ExplicitOptions, check_explicit};
use trestle_cegar::{CegarError, CegarOptions, Discrete, PolicyEncoding, Refine, Verdict, check_cegar};
use trestle_core::{RunResult, Status};
use trestle_ir::num::to_f64_nearest;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// Policy predicate abstraction refined by CEGAR (proves and refutes).
    Cegar,
    /// Bounded model checking: the network copied per step, loop-free paths (complete once no
    /// loop-free path of the current length exists).
    Bmc,
    /// Breadth-first search of the concrete states reachable under the policy (the oracle).
    Explicit,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefineArg {
    /// Witness splitting: separate the spurious state from the abstract edge's witness.
    Ws,
    /// Concretisation exclusion: separate the spurious state from every other state.
    Ce,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodingArg {
    /// Z3 decides the linear part; the network runs exactly on Z3's proposals, and boxes where a
    /// label provably loses (outward-rounded CROWN bounds) are excluded.
    Lazy,
    /// The network inside every Z3 query, ReLUs as `ite` (the paper's encoding; slow).
    Z3,
}

#[derive(clap::Args, Debug)]
pub struct CegarArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    #[arg(long, value_enum, default_value_t = MethodArg::Cegar)]
    pub method: MethodArg,
    /// How policy spuriousness is refined (CEGAR).
    #[arg(long, value_enum, default_value_t = RefineArg::Ws)]
    pub refine: RefineArg,
    /// Breadth-first abstract search instead of greedy best-first by the Hamming heuristic.
    #[arg(long)]
    pub no_heuristic: bool,
    /// Recompute every abstract transition in every iteration (no reuse of edges and witnesses).
    #[arg(long)]
    pub no_incremental: bool,
    /// How the queries of CEGAR and BMC treat the network.
    #[arg(long, value_enum, default_value_t = EncodingArg::Lazy)]
    pub encoding: EncodingArg,
    /// The deepest unrolling of --method bmc.
    #[arg(long, default_value_t = 100)]
    pub depth: usize,
    /// Wall-clock limit, in seconds (verdict unknown when reached).
    #[arg(long)]
    pub timeout: Option<f64>,
}

fn cli_error(e: CegarError) -> CliError {
    match e {
        CegarError::Unsupported(_) | CegarError::NoSafe | CegarError::TooLarge(_) => CliError::Input(e.into()),
        CegarError::Smt(_) | CegarError::Internal(_) => CliError::Internal(e.into()),
    }
}

pub fn run(a: &CegarArgs) -> CliResult {
    let sys = super::load(&a.system)?;
    let d = Discrete::new(&sys).map_err(cli_error)?;
    let timeout = a.timeout.map(|t| super::seconds(t, "--timeout")).transpose()?;
    if a.depth == 0 || a.depth > 100_000 {
        return Err(CliError::input("--depth must be between 1 and 100000"));
    }
    let encoding = match a.encoding {
        EncodingArg::Lazy => PolicyEncoding::Lazy,
        EncodingArg::Z3 => PolicyEncoding::Z3,
    };
    let (method, outcome) = match a.method {
        MethodArg::Cegar => {
            let opts = CegarOptions {
                refine: match a.refine {
                    RefineArg::Ws => Refine::WitnessSplit,
                    RefineArg::Ce => Refine::ConcretisationExclusion,
                },
                heuristic: !a.no_heuristic,
                incremental: !a.no_incremental,
                timeout,
                encoding,
            };
            ("cegar", check_cegar(&d, &opts))
        }
        MethodArg::Bmc => ("bmc", check_bmc(&d, &BmcOptions { max_depth: a.depth, timeout, encoding })),
        MethodArg::Explicit => {
            ("explicit", check_explicit(&d, &ExplicitOptions { timeout, ..ExplicitOptions::default() }))
        }
    };
    let o = outcome.map_err(cli_error)?;
    // A proof by abstraction is re-checked from scratch before it is reported.
    let recheck_start = std::time::Instant::now();
    if let Some(inv) = &o.invariant {
        trestle_cegar::cegar::recheck(&d, inv, None)
            .map_err(cli_error)?
            .map_err(|why| CliError::Internal(anyhow!("the abstraction's invariant does not re-check: {why}")))?;
    }
    let recheck_seconds = recheck_start.elapsed().as_secs_f64();
    let status = match &o.verdict {
        Verdict::Safe => Status::Proven,
        Verdict::Unsafe(_) => Status::Refuted,
        Verdict::Unknown(_) => Status::Unknown,
    };
    let mut out = RunResult::new("cegar", &sys.name, method, o.verdict.name(), status);
    out.config.insert("refine".into(), json!(format!("{:?}", a.refine).to_lowercase()));
    out.config.insert("heuristic".into(), json!(!a.no_heuristic));
    out.config.insert("incremental".into(), json!(!a.no_incremental));
    out.config.insert("encoding".into(), json!(format!("{:?}", a.encoding).to_lowercase()));
    match &o.verdict {
        Verdict::Safe => {
            out.evidence = Some(match method {
                "cegar" => "no abstract state that meets the unsafety condition is reachable in the policy predicate \
                    abstraction over the final predicates (abstract transitions decided by Z3 with the network's exact \
                    weights); the reachable abstract states, an inductive invariant, were re-checked from scratch"
                    .into(),
                "bmc" => "no loop-free run of the final depth exists, and none shorter reaches an unsafe state (Z3, \
                    exact weights)"
                    .into(),
                _ => "every state reachable under the policy was visited (exact arithmetic)".into(),
            });
            if let Some(inv) = &o.invariant {
                out.details.insert("predicates".into(), json!(o.predicates));
                out.details.insert("invariant_states".into(), json!(inv.states.len()));
                out.details.insert("rechecked".into(), json!(true));
            }
        }
        Verdict::Unsafe(trace) => out.trace = Some(trace.to_json(&sys)),
        Verdict::Unknown(u) => out.reason = Some(u.to_string()),
    }
    out.stat("predicates", o.stats.predicates)
        .stat("iterations", o.stats.iterations)
        .stat("policy_refinements", o.stats.policy_refinements)
        .stat("smt_calls", o.stats.smt_calls)
        .stat("reused_edges", o.stats.reused_edges)
        .stat("refuted_states", o.stats.refuted_states)
        .stat("bound_calls", o.stats.bound_calls)
        .stat("states", o.stats.states)
        .stat("depth", o.stats.depth)
        .stat("seconds", o.stats.seconds)
        .stat("recheck_seconds", recheck_seconds);
    if a.system.json {
        print_json(&serde_json::to_value(&out).map_err(|e| CliError::Internal(anyhow!(e)))?);
    } else {
        print_text(&sys, method, &o, &out);
    }
    Ok(match status {
        Status::Proven => Outcome::Done,
        Status::Refuted => Outcome::Refuted,
        _ => Outcome::Unknown,
    })
}

fn print_text(sys: &trestle_ir::System, method: &str, o: &trestle_cegar::Outcome, out: &RunResult) {
    println!("system:   {}", sys.name);
    println!("method:   {method}");
    match &o.verdict {
        Verdict::Safe => {
            println!("verdict:  safe");
            println!("  {}", out.evidence.as_deref().unwrap_or(""));
            if !o.predicates.is_empty() {
                println!("  predicates ({}):", o.predicates.len());
                for p in &o.predicates {
                    println!("    {p}");
                }
            }
        }
        Verdict::Unsafe(trace) => {
            println!("verdict:  unsafe (a run from the start condition, replayed in exact rational arithmetic)");
            for (k, s) in trace.states.iter().enumerate() {
                let values: Vec<String> =
                    sys.state.iter().zip(s).map(|(v, x)| format!("{} = {}", v.name, to_f64_nearest(x))).collect();
                let step = trace.steps.get(k).map(|st| format!("  -> {}", sys.step.branches[st.branch].name));
                println!("  s{k}: {}{}", values.join(", "), step.unwrap_or_default());
            }
        }
        Verdict::Unknown(u) => println!("verdict:  unknown: {u}"),
    }
    let s = &o.stats;
    println!(
        "stats:    |P| = {}, iterations {}, policy refinements {}, SMT calls {}, reused edges {}, states {}, depth {}",
        s.predicates, s.iterations, s.policy_refinements, s.smt_calls, s.reused_edges, s.states, s.depth
    );
    if s.bound_calls > 0 {
        println!(
            "policy:   {} proposed states refuted by the exact policy, {} boxes bounded",
            s.refuted_states, s.bound_calls
        );
    }
    println!("time:     {:.3} s", s.seconds);
}
