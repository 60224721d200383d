//! `trestle ltl`: a bounded LTL property of the file (or a formula) on every path from Init, by
//! bound propagation through time (exact when it decides) and the recursive MILP (floating-point
//! evidence when no path violates it, a replayed path when one does).

use crate::args::SystemArgs;
use crate::output::print_json;
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use serde_json::json;
use trestle_core::{Budget, RunResult, Status, Verdict};
use trestle_ir::System;
use trestle_ir::formula::Ltl;
use trestle_ir::num::to_f64_nearest;
use trestle_ir::parse::parse_ltl;
use trestle_ir::system::PropertyFormula;
use trestle_ltl::{LtlError, LtlOptions, LtlResult, Method, Tightening, check_ltl};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// Bound propagation first, then the recursive MILP for what it leaves open.
    Auto,
    /// Bound propagation through time alone (exact, incomplete).
    Bpt,
    /// The recursive MILP alone.
    Rmilp,
    /// The lasso search alone (refutes unbounded F p and p U q).
    Lasso,
    /// Invariants alone (prove unbounded G p).
    Invariant,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BptArg {
    /// Interval arithmetic through the networks (the notes' BPT).
    Interval,
    /// Intervals met with CROWN's bounds of every layer (tighter, costlier).
    Crown,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TightenArg {
    /// Both encodings at once on two threads; the first to decide cancels the other.
    Race,
    /// Every step's bounds narrowed by the LP relaxation of the steps before it.
    On,
    /// Bounds propagated one step at a time only.
    Off,
}

#[derive(clap::Args, Debug)]
pub struct LtlArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// A property of the system file (a `[[property]]` with `ltl = ..`).
    #[arg(long, conflicts_with = "formula", required_unless_present = "formula")]
    pub property: Option<String>,
    /// A formula, e.g. "X^3 (z <= 2)" or "G<=10 F<=3 (x >= 0)"; it may use `k` when --k is given.
    #[arg(long)]
    pub formula: Option<String>,
    /// The horizon `k` of a property defined with one (or of --formula).
    #[arg(long)]
    pub k: Option<u32>,
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// The domain of --method bpt (auto tries interval, then crown).
    #[arg(long, value_enum, default_value_t = BptArg::Interval)]
    pub bpt: BptArg,
    /// For unbounded F, G and U: the horizon of the bounded checks and the longest lasso (the
    /// invariant search iterates up to 16 times this).
    #[arg(long, default_value_t = 10)]
    pub depth: usize,
    /// Wall-clock limit, in seconds (verdict unknown when reached).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// The MILPs without adaptive splitting: interval bounds as big-M constants and a binary for
    /// every ReLU (the paper's RMILP-only baseline, for measuring what the splitting buys).
    #[arg(long)]
    pub no_adaptive: bool,
    /// With adaptive splitting: whether each step's values are bounded by the LP relaxation of
    /// the steps before it (neither encoding is always faster; `race` runs both).
    #[arg(long, value_enum, default_value_t = TightenArg::Race)]
    pub tighten: TightenArg,
    /// Write the certificate of an exact proof: a bounded formula proven by bound propagation
    /// (its enclosures), or a `G p` proven by an invariant (re-check it with `trestle certify
    /// CERT SYSTEM`); other verdicts write none (a note on stderr says so).
    #[arg(long)]
    pub certificate: Option<std::path::PathBuf>,
}

pub(crate) fn cli_error(e: LtlError) -> CliError {
    if e.is_input() { CliError::Input(e.into()) } else { CliError::Internal(e.into()) }
}

fn formula(a: &LtlArgs) -> Result<(System, Ltl, String, String), CliError> {
    fn pick(f: &PropertyFormula) -> Option<&Ltl> {
        match f {
            PropertyFormula::Ltl(phi) => Some(phi),
            _ => None,
        }
    }
    super::temporal_formula(
        &a.system,
        a.property.as_deref(),
        a.formula.as_deref(),
        a.k,
        |text, scope| parse_ltl(text, scope),
        pick,
        "an LTL formula (`ltl = ..`)",
    )
}

pub fn run(a: &LtlArgs) -> CliResult {
    let (sys, phi, name, text) = formula(a)?;
    let mut opts = LtlOptions {
        method: match a.method {
            MethodArg::Auto => Method::Auto,
            MethodArg::Bpt => Method::Bpt,
            MethodArg::Rmilp => Method::Rmilp,
            MethodArg::Lasso => Method::Lasso,
            MethodArg::Invariant => Method::Invariant,
        },
        depth: a.depth,
        bpt: match a.bpt {
            BptArg::Interval => trestle_ltl::bpt::Domain::Interval,
            BptArg::Crown => trestle_ltl::bpt::Domain::Crown,
        },
        ..LtlOptions::default()
    };
    if a.depth == 0 || a.depth > 10_000 {
        return Err(CliError::input("--depth must be between 1 and 10000"));
    }
    let timeout = a.timeout.map(|t| super::seconds(t, "--timeout")).transpose()?;
    let budget = Budget::new(timeout);
    opts.rmilp.adaptive = !a.no_adaptive;
    opts.rmilp.tightening = match a.tighten {
        TightenArg::Race => Tightening::Race,
        TightenArg::On => Tightening::On,
        TightenArg::Off => Tightening::Off,
    };
    crate::output::check_output("--certificate", a.certificate.as_deref())?;
    let start = std::time::Instant::now();
    let result = check_ltl(&sys, &phi, &opts, &budget).map_err(cli_error)?;
    if let Some(path) = &a.certificate {
        match result.verdict.certificate() {
            Some(cert) => {
                crate::output::write_atomic(path, cert.to_pretty_json().as_bytes()).map_err(CliError::Input)?;
            }
            None => {
                let why = match &result.verdict {
                    Verdict::Evidence { .. } => {
                        "a MILP's \"true\" is floating-point evidence, which no certificate re-checks".to_string()
                    }
                    Verdict::Proven { .. } if result.method == "invariant" => "the bridge engine did not re-prove the \
                         invariant on the system with its hidden states lifted within its time"
                        .to_string(),
                    Verdict::Proven { .. } if result.method.starts_with("bpt") => {
                        let why = trestle_ltl::certificate::stop_free(&sys).err();
                        format!(
                            "the enclosures' check covers systems whose runs cannot stop, and {}",
                            why.unwrap_or_else(|| "the hidden state could not be lifted".into())
                        )
                    }
                    Verdict::Proven { .. } => format!("{} writes none", result.method),
                    _ => "only a proven formula has one".to_string(),
                };
                eprintln!("no certificate written: {why}");
            }
        }
    }
    let mut out = result_json(&sys, &name, &text, &result);
    if matches!(opts.method, Method::Auto | Method::Invariant) {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        if let Some(r) = invariant_by_synthesis(&sys, &phi, &result, &budget, threads)? {
            out = r;
            out.property = Some(name.clone());
            out.details.insert("formula".into(), json!(text));
            out.stat("seconds", start.elapsed().as_secs_f64());
        }
    }
    if a.system.json {
        print_json(&serde_json::to_value(&out).map_err(|e| CliError::Internal(anyhow!(e)))?);
    } else if out.method == result.method {
        print_text(&sys, &name, &text, &result, &out);
    } else {
        println!("system:   {}\nproperty: {name}: {text}\nmethod:   {}", sys.name, out.method);
        println!(
            "verdict:  {} ({})",
            out.verdict,
            out.evidence.as_deref().unwrap_or("a run from Init, replayed exactly")
        );
    }
    Ok(match out.status {
        Status::Proven => Outcome::Done,
        Status::Refuted => Outcome::Refuted,
        _ => Outcome::Unknown,
    })
}

/// `G p` (p a state predicate) that the LTL engine left open on a system whose controllers keep no
/// hidden state is the question `invariant = p`: the bridge engine with the file's candidate,
/// then synthesis with p as Safe (continuous state, unions of boxes), as `verify` asks it. Their
/// answer when they decide; `None` otherwise.
pub(crate) fn invariant_by_synthesis(
    sys: &System,
    phi: &Ltl,
    result: &LtlResult,
    budget: &Budget,
    threads: usize,
) -> Result<Option<RunResult>, CliError> {
    let memoryless = sys.is_memoryless();
    let Ltl::G(None, inner) = phi else { return Ok(None) };
    let (Verdict::Unknown(reason), true, Some(p)) = (&result.verdict, memoryless, trestle_ltl::state_pred(inner))
    else {
        return Ok(None);
    };
    if budget.is_over() {
        return Ok(None);
    }
    // Synthesis needs a bounded Safe: p within bounds of the variables p leaves free (domains,
    // the file's safe, an inductive box around Init); none, and the engine's unknown stands.
    let inits = sys.init.to_box_union(sys.state.len(), 1024).unwrap_or_default();
    let Some(within) = trestle_ltl::synthesis::bounded_safe(sys, &p, &inits, budget).map_err(cli_error)? else {
        return Ok(None);
    };
    let mut r = super::verify::invariant(sys, &within, budget.remaining(), threads)?;
    match r.status {
        Status::Unknown => return Ok(None),
        // A run leaving the bounds added to p refutes nothing: only one leaving p does.
        Status::Refuted => {
            let leaves_p = r.trace.as_ref().and_then(|t| t.states_exact.last()).is_some_and(|s| {
                let state: Option<Vec<trestle_ir::Rational>> =
                    s.iter().map(|x| trestle_ir::num::parse_rational(x)).collect();
                state.is_some_and(|s| !p.eval_exact(&trestle_ir::Env::new(&s[..], &[], &[])).unwrap_or(true))
            });
            if !leaves_p {
                return Ok(None);
            }
        }
        _ => {}
    }
    r.command = "ltl".into();
    r.details.insert("ltl_engine".into(), json!(reason.to_string()));
    Ok(Some(r))
}

const EVIDENCE: &str = "HiGHS found no path violating the formula: the MILP of the negation over one unrolled path is \
    infeasible, or its bound on the atoms' relaxation is above the threshold (floating-point evidence with this \
    margin, not an exact proof)";

const EXACT: &str = "bound propagation through time: the formula holds on the outward-rounded enclosures of every step";

const INVARIANT: &str = "an inductive box of the full state (environment and hidden states) contains Init and lies \
    inside the predicate (outward-rounded enclosures)";

const SYNTHESIS: &str = "a union of boxes over the state and the recurrent controllers' kept hidden units contains \
    Init, lies inside the predicate and is inductive: found by synthesis over the system with its hidden states lifted \
    into the state, proven by the bridge engine (outward-rounded network bounds, the step checked by Z3 exactly)";

/// The `trestle-result/1` form of a result (`ltl` and `verify` print it).
pub(crate) fn result_json(sys: &System, name: &str, text: &str, r: &LtlResult) -> RunResult {
    let word = match r.verdict.holds() {
        Some(true) => "true",
        Some(false) => "false",
        None => "unknown",
    };
    let mut out = RunResult::of_verdict("ltl", sys, r.method, word, &r.verdict);
    out.property = Some(name.to_string());
    out.details.insert("formula".into(), json!(text));
    out.details.insert("depth".into(), json!(r.depth));
    match &r.verdict {
        Verdict::Proven { .. } if r.method == "invariant" => out.evidence = Some(INVARIANT.into()),
        Verdict::Proven { .. } if r.method == "synthesis" => out.evidence = Some(SYNTHESIS.into()),
        Verdict::Proven { .. } => out.evidence = Some(EXACT.into()),
        Verdict::Evidence { .. } => out.evidence = Some(EVIDENCE.into()),
        Verdict::Refuted { trace, .. } => {
            if let Some(j) = trace.loop_back {
                // The loop is also in the trace (`loop_back`); this names the shape for readers.
                out.details.insert("lasso".into(), json!({ "stem": j, "loop": trace.len() - j }));
            }
        }
        Verdict::Unknown(_) => {}
    }
    if !r.stats.bpt_enclosures.is_empty() {
        out.details.insert("bpt_enclosures".into(), json!(r.stats.bpt_enclosures));
    }
    out.stat("init_boxes", r.stats.init_boxes)
        .stat("milps", r.stats.rmilp.milps)
        .stat("binaries", r.stats.rmilp.binaries)
        .stat("variables", r.stats.rmilp.variables)
        .stat("tightened_wins", r.stats.rmilp.tightened_wins)
        .stat("plain_wins", r.stats.rmilp.plain_wins)
        .stat("invariant_boxes", r.stats.invariant_boxes)
        .stat("invariant_dims", r.stats.invariant_dims)
        .stat("seconds", r.stats.seconds);
    out
}

fn print_text(sys: &System, name: &str, text: &str, r: &LtlResult, out: &RunResult) {
    println!("system:   {}", sys.name);
    println!("property: {name}: {text}");
    println!("method:   {} (depth {})", r.method, r.depth);
    match &r.verdict {
        Verdict::Proven { .. } => {
            println!("verdict:  true (proven)");
            println!("  {}", out.evidence.as_deref().unwrap_or(""));
        }
        Verdict::Evidence { margin } => {
            println!("verdict:  true (floating-point evidence)");
            println!("  {}", out.evidence.as_deref().unwrap_or(""));
            // HiGHS's bound on the slack, or the cutoff it proved: either way a lower bound.
            println!("  margin: at least {margin:.3e}");
        }
        Verdict::Refuted { trace, .. } => {
            match trace.loop_back {
                Some(j) => {
                    println!("verdict:  false (a lasso replayed in exact rational arithmetic; s{} = s{j})", trace.len())
                }
                None => println!("verdict:  false (a path replayed in exact rational arithmetic)"),
            }
            for (k, s) in trace.states.iter().enumerate() {
                let values: Vec<String> =
                    sys.state.iter().zip(s).map(|(v, x)| format!("{} = {}", v.name, to_f64_nearest(x))).collect();
                println!("  s{k}: {}", values.join(", "));
            }
        }
        Verdict::Unknown(reason) => println!("verdict:  unknown: {reason}"),
    }
    println!("time:     {:.3} s", r.stats.seconds);
}
