//! `trestle verify`: every property of a system (or the named ones), each with the engine its
//! kind calls for, one [`RunResult`] each.
//!
//! - `invariant = P` (and, in a file without `[[property]]`, the system's `safe` as the implicit
//!   property `safe`): P holds in every reachable state. The bridge engine checks the file's
//!   candidate invariant against P when there is one; when there is none, or it is not proven,
//!   synthesis looks for another invariant inside P or a run from Init that leaves P. A refuted
//!   candidate is not a refuted property: only a run from Init is.
//! - `ctl = ..`: the bounded-CTL engine (`--method auto`: explicit when few states, else the MILP
//!   engines raced).
//! - `ltl = ..`: the LTL engine (bound propagation through time, then the recursive MILP).
//!
//! The exit code is 1 when any property is refuted, 3 when any other is not proven (evidence
//! or unknown), 0 when all are proven.

use crate::args::SystemArgs;
use crate::output::print_json;
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use serde_json::json;
use std::time::{Duration, Instant};
use trestle_bridge::Verdict;
use trestle_core::{RunResult, Status};
use trestle_ctl::{CtlOptions, check_ctl};
use trestle_ir::system::PropertyFormula;
use trestle_ir::{Pred, System};
use trestle_synth::{SynthConfig, SynthVerdict};

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// Verify only this property (repeatable). Default: every `[[property]]` of the file.
    #[arg(long = "property", value_name = "NAME")]
    pub properties: Vec<String>,
    /// Wall-clock limit per property, in seconds (that property is unknown when reached).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Worker threads of each engine (results do not depend on it). Default: all cores.
    #[arg(long)]
    pub threads: Option<usize>,
}

/// The name of the implicit property of a file without `[[property]]`: its `safe`.
const IMPLICIT: &str = "safe";

/// One property to verify: its name, how it is written, and what it asks.
struct Task<'s> {
    name: String,
    text: String,
    formula: Formula<'s>,
}

enum Formula<'s> {
    Invariant(&'s Pred),
    Ctl(&'s trestle_ir::formula::Ctl),
    Ltl(&'s trestle_ir::formula::Ltl),
}

fn tasks<'s>(sys: &'s System, wanted: &[String]) -> Result<Vec<Task<'s>>, CliError> {
    let mut all: Vec<Task<'s>> = sys
        .properties
        .iter()
        .map(|p| Task {
            name: p.name.clone(),
            text: super::property_text(p),
            formula: match &p.formula {
                PropertyFormula::Invariant(pred) => Formula::Invariant(pred),
                PropertyFormula::Ctl(phi) => Formula::Ctl(phi),
                PropertyFormula::Ltl(phi) => Formula::Ltl(phi),
            },
        })
        .collect();
    if all.is_empty()
        && let Some(safe) = &sys.safe
    {
        all.push(Task {
            name: IMPLICIT.into(),
            text: "G safe (the system's [safe])".into(),
            formula: Formula::Invariant(safe),
        });
    }
    if all.is_empty() {
        return Err(CliError::input(format!(
            "system '{}' has no [[property]] and no [safe]: nothing to verify",
            sys.name
        )));
    }
    if wanted.is_empty() {
        return Ok(all);
    }
    let names: Vec<String> = all.iter().map(|t| t.name.clone()).collect();
    for w in wanted {
        if !names.contains(w) {
            return Err(CliError::input(format!("no property '{w}' (the system has: {})", names.join(", "))));
        }
    }
    all.retain(|t| wanted.contains(&t.name));
    Ok(all)
}

pub fn run(a: &VerifyArgs) -> CliResult {
    let sys = super::load(&a.system)?;
    let tasks = tasks(&sys, &a.properties)?;
    let timeout = a.timeout.map(|t| super::seconds(t, "--timeout")).transpose()?;
    let threads = match a.threads {
        Some(t) => super::threads(t)?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut results = Vec::with_capacity(tasks.len());
    for task in &tasks {
        if !a.system.json {
            eprintln!("verifying {} ...", task.name);
        }
        let start = Instant::now();
        let mut r = match task.formula {
            Formula::Invariant(p) => invariant(&sys, p, timeout, threads)?,
            Formula::Ctl(phi) => {
                let opts = CtlOptions { threads, ..CtlOptions::default() };
                let result =
                    check_ctl(&sys, phi, &opts, &trestle_core::Budget::new(timeout)).map_err(super::ctl::cli_error)?;
                super::ctl::result_json(&sys, &task.name, &task.text, result.method, &result)
            }
            Formula::Ltl(phi) => {
                let budget = trestle_core::Budget::new(timeout);
                let opts = trestle_ltl::LtlOptions::default();
                let result = trestle_ltl::check_ltl(&sys, phi, &opts, &budget).map_err(super::ltl::cli_error)?;
                match super::ltl::invariant_by_synthesis(&sys, phi, &result, &budget, threads)? {
                    Some(r) => r,
                    None => super::ltl::result_json(&sys, &task.name, &task.text, &result),
                }
            }
        };
        r.command = "verify".into();
        r.property = Some(task.name.clone());
        r.details.insert("formula".into(), json!(task.text));
        r.stat("seconds", start.elapsed().as_secs_f64());
        results.push(r);
    }
    if a.system.json {
        print_json(&json!({ "system": sys.name, "results": results }));
    } else {
        print_table(&sys, &results);
    }
    let refuted = results.iter().any(|r| r.status == Status::Refuted);
    let open = results.iter().any(|r| r.status != Status::Proven);
    Ok(if refuted {
        Outcome::Refuted
    } else if open {
        Outcome::Unknown
    } else {
        Outcome::Done
    })
}

/// `P` in every reachable state: the candidate invariant checked against P by the bridge engine,
/// then synthesis with P as Safe when that does not prove it.
pub(crate) fn invariant(
    sys: &System,
    p: &Pred,
    timeout: Option<Duration>,
    threads: usize,
) -> Result<RunResult, CliError> {
    let mut sys = sys.clone();
    sys.safe = Some(p.clone());
    let bridge = trestle_bridge::Config { threads, timeout, ..trestle_bridge::Config::default() };
    let deadline = bridge.deadline();
    let mut tried = Vec::new();
    if sys.invariant.is_some() {
        let report = trestle_bridge::check(&sys, &bridge, &|_| {}).map_err(super::bridge_error)?;
        if report.verdict == Verdict::Safe {
            let mut r = RunResult::new("verify", &sys.name, "bridge", "true", Status::Proven);
            r.evidence = Some(
                "the file's invariant: Init => Inv, Inv => P and inductiveness proven by the bridge engine".into(),
            );
            r.stat("boxes", report.inductive.stats.boxes).stat("splits", report.inductive.stats.splits);
            return Ok(r);
        }
        tried.push(format!("the file's invariant is {}", report.verdict.as_str()));
    }
    let cfg = SynthConfig {
        threads,
        timeout: bridge.until(deadline).timeout,
        bridge: bridge.until(deadline),
        ..SynthConfig::default()
    };
    let report = trestle_synth::synthesize(&sys, &cfg, &|_| {}).map_err(super::synth::cli_error)?;
    let method = if tried.is_empty() { "synth" } else { "bridge+synth" };
    let mut r = match report.verdict {
        SynthVerdict::Safe => {
            let mut r = RunResult::new("verify", &sys.name, method, "true", Status::Proven);
            r.evidence = Some(format!(
                "an invariant of {} boxes found and proven by the bridge engine (Init => I, I => P, inductive)",
                report.invariant.len()
            ));
            r
        }
        SynthVerdict::Unsafe => {
            let run = report.trajectory.as_ref().and_then(|t| t.exact.as_ref());
            let trace = run
                .ok_or_else(|| CliError::Internal(anyhow!("synthesis answered unsafe without a run")))?
                .to_trace(&sys)
                .map_err(|e| CliError::Internal(anyhow!("the unsafe run does not replay: {e}")))?;
            let mut r = RunResult::new("verify", &sys.name, method, "false", Status::Refuted);
            r.trace = Some(trace.to_json(&sys));
            r
        }
        SynthVerdict::Unknown => {
            let mut r = RunResult::new("verify", &sys.name, method, "unknown", Status::Unknown);
            tried.push(format!("synthesis: {}", report.reason));
            r.reason = Some(tried.join("; "));
            r
        }
    };
    if !tried.is_empty() && r.status != Status::Unknown {
        r.details.insert("candidate".into(), json!(tried[0]));
    }
    Ok(r)
}

fn print_table(sys: &System, results: &[RunResult]) {
    println!("system: {}", sys.name);
    println!("{:<16} {:<8} {:<9} {:<13} {:>9}", "property", "verdict", "status", "method", "seconds");
    for r in results {
        let seconds = r.stats.get("seconds").and_then(|v| v.as_f64()).unwrap_or(0.0);
        println!(
            "{:<16} {:<8} {:<9} {:<13} {:>9.3}",
            r.property.as_deref().unwrap_or(""),
            r.verdict,
            r.status.as_str(),
            r.method,
            seconds
        );
    }
    for r in results {
        let name = r.property.as_deref().unwrap_or("");
        let formula = r.details.get("formula").and_then(|v| v.as_str()).unwrap_or("");
        match r.status {
            Status::Refuted => {
                let lasso = r.trace.as_ref().and_then(|t| t.loop_back);
                let what = match lasso {
                    Some(j) => format!("a lasso (the last state is s{j} again, hidden states included)"),
                    None => "a run".into(),
                };
                println!("\n{name}: {formula}: false; {what} replayed in exact rational arithmetic:");
                if let Some(t) = &r.trace {
                    for (i, s) in t.states.iter().enumerate() {
                        let values: Vec<String> = s.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                        println!("  s{i}: {}", values.join(", "));
                    }
                }
            }
            Status::Unknown => println!("\n{name}: {formula}: unknown: {}", r.reason.as_deref().unwrap_or("")),
            Status::Evidence => println!(
                "\n{name}: {formula}: true on floating-point evidence (margin {:.3e}), not an exact proof",
                r.margin.unwrap_or(f64::NAN)
            ),
            Status::Proven => println!("\n{name}: {formula}: true: {}", r.evidence.as_deref().unwrap_or("")),
        }
    }
}
