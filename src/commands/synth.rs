//! `trestle synth`: find an inductive invariant (a union of boxes inside Safe containing Init)
//! and prove it with the bridge engine, or a run from Init that leaves Safe.

use crate::args::SystemArgs;
use crate::output::{assignments, box_text, fmt_f64, print_json};
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use trestle_bridge::certificate::{CertificateJson, FORMAT, OutcomeJson, witness_jsons};
use trestle_bridge::{Condition, Inductiveness};
use trestle_ir::num::display_rational;
use trestle_ir::{FBox, Rational, System};
use trestle_synth::{SynthConfig, SynthError, SynthProgress, SynthReport, SynthVerdict, Trajectory};

#[derive(clap::Args, Debug)]
pub struct SynthArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// Cells per dimension of the initial grid over Safe (default 8, fewer in high dimension;
    /// cells are refined where needed).
    #[arg(long)]
    pub resolution: Option<usize>,
    /// Most boxes the partition may hold (default 50000).
    #[arg(long)]
    pub max_boxes: Option<usize>,
    /// Smallest cell width, as a fraction of Safe's extent, that is still split (default 1/4096).
    #[arg(long)]
    pub min_width: Option<f64>,
    /// Wall-clock limit of the whole run, in seconds.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Search forward from Init (reachable boxes until closure) instead of the greatest fixed
    /// point inside Safe.
    #[arg(long, conflicts_with = "full")]
    pub forward: bool,
    /// Compute the greatest fixed point over all of Safe (the largest invariant of boxes), not
    /// only over what Init reaches.
    #[arg(long)]
    pub full: bool,
    /// Worker threads (results do not depend on it). Default: all cores.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Steps simulated from Init when searching for a run that leaves Safe (default 200).
    #[arg(long)]
    pub attack_steps: Option<usize>,
    /// Per-query Z3 time limit of the proof, in seconds.
    #[arg(long)]
    pub smt_timeout: Option<f64>,
    /// Write the proof certificate (re-check it with `trestle certify`), or the outcome.
    #[arg(long, value_name = "FILE")]
    pub certificate: Option<PathBuf>,
    /// Draw the invariant, the dropped boxes and the unsafe run (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// The synthesis configuration from the flags.
pub fn config(a: &SynthArgs) -> Result<SynthConfig, CliError> {
    let mut c = SynthConfig::default();
    if let Some(r) = a.resolution {
        if r == 0 {
            return Err(CliError::input("--resolution must be at least 1"));
        }
        c.resolution = Some(r);
    }
    if let Some(m) = a.max_boxes {
        if m == 0 {
            return Err(CliError::input("--max-boxes must be at least 1"));
        }
        c.max_boxes = m;
    }
    if let Some(w) = a.min_width {
        if !(w > 0.0 && w < 1.0) {
            return Err(CliError::input("--min-width must be in (0, 1)"));
        }
        c.min_width = w;
    }
    if let Some(t) = a.timeout {
        c.timeout = Some(super::seconds(t, "--timeout")?);
    }
    if let Some(t) = a.smt_timeout {
        c.bridge.smt_timeout = super::seconds(t, "--smt-timeout")?;
    }
    if let Some(t) = a.threads {
        let t = super::threads(t)?;
        c.threads = t;
        c.bridge.threads = t;
    }
    if let Some(s) = a.attack_steps {
        c.attack_steps = s;
    }
    c.forward = a.forward;
    c.full = a.full;
    Ok(c)
}

pub(crate) fn cli_error(e: SynthError) -> CliError {
    match e {
        SynthError::Internal(m) => CliError::Internal(anyhow!(m)),
        SynthError::Bridge(e) => super::bridge_error(e),
        other => CliError::Input(other.into()),
    }
}

fn outcome(v: SynthVerdict) -> Outcome {
    match v {
        SynthVerdict::Safe => Outcome::Done,
        SynthVerdict::Unsafe => Outcome::Refuted,
        SynthVerdict::Unknown => Outcome::Unknown,
    }
}

/// Runs synthesis with a progress bar on stderr (unless `quiet`).
fn synthesize(sys: &System, cfg: &SynthConfig, quiet: bool) -> Result<SynthReport, CliError> {
    let bar = (!quiet).then(|| {
        let b = ProgressBar::new_spinner();
        b.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        b.enable_steady_tick(Duration::from_millis(200));
        b
    });
    let progress = |p: SynthProgress| {
        if let Some(b) = &bar {
            b.set_message(match p {
                SynthProgress::Search { round, cells, kept, images } => {
                    format!("search: round {round}, {cells} cells ({kept} kept), {images} images")
                }
                SynthProgress::Proof(p) => format!("proof: {:.0}% proven, {} queued", p.proven * 100.0, p.queued),
                SynthProgress::Attack { .. } => "looking for a run from Init that leaves Safe".into(),
            });
        }
    };
    let report = trestle_synth::synthesize(sys, cfg, &progress).map_err(cli_error);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    report
}

pub fn run(a: &SynthArgs) -> CliResult {
    let sys = super::load(&a.system)?;
    let cfg = config(a)?;
    crate::output::check_output("--certificate", a.certificate.as_deref())?;
    crate::output::check_output("--plot", a.plot.as_deref())?;
    let report = synthesize(&sys, &cfg, a.system.json)?;
    if let Some(path) = &a.certificate {
        write_certificate(&sys, &report, path)?;
    }
    if let Some(path) = &a.plot {
        draw(&sys, &report, path)?;
    }
    if a.system.json {
        let mut o = report_json(&sys, &report, &cfg);
        if let Some(p) = &a.certificate {
            o["certificate"] = json!(p.display().to_string());
        }
        if let Some(p) = &a.plot {
            o["plot"] = json!(p.display().to_string());
        }
        print_json(&o);
    } else {
        print_report(&sys, &report, &cfg);
        if let Some(p) = &a.certificate {
            println!("certificate: {}", p.display());
        }
        if let Some(p) = &a.plot {
            println!("plot: {}", p.display());
        }
    }
    Ok(outcome(report.verdict))
}

/// `check --synthesize-on-failure`: when the candidate invariant could not be proven, look for
/// one (with the check's bridge configuration). With `json` nothing is printed and the object to
/// put under `"synthesis"` is returned; otherwise the result is printed as text. A proven
/// invariant's certificate replaces the check's at `certificate`. The outcome is the synthesis
/// verdict's: safe (proven after all), unsafe (a replayed run leaves Safe) or unknown. The
/// synthesis gets the time the check left (`bridge.timeout`, already reduced by the caller).
pub fn synthesize_after_failure(
    sys: &System,
    bridge: &trestle_bridge::Config,
    json: bool,
    certificate: Option<&Path>,
) -> Result<(Outcome, Option<Value>), CliError> {
    let cfg = SynthConfig {
        threads: bridge.threads,
        timeout: bridge.timeout,
        bridge: bridge.clone(),
        ..SynthConfig::default()
    };
    let report = synthesize(sys, &cfg, json)?;
    if let (Some(path), SynthVerdict::Safe) = (certificate, report.verdict) {
        write_certificate(sys, &report, path)?;
    }
    if json {
        return Ok((outcome(report.verdict), Some(report_json(sys, &report, &cfg))));
    }
    println!("synthesis (the candidate failed; looking for another invariant):");
    print_report(sys, &report, &cfg);
    Ok((outcome(report.verdict), None))
}

/// The proof certificate when safe; otherwise the outcome (with the run's last step when unsafe).
fn certificate_json(sys: &System, r: &SynthReport) -> CertificateJson {
    if let Some(p) = &r.certificate {
        return CertificateJson::Proof(p.clone());
    }
    let mut out = OutcomeJson {
        format: FORMAT.into(),
        system: sys.name.clone(),
        verdict: r.verdict.as_str().into(),
        witness: None,
        witness_exact: None,
        region: None,
        reason: Some(r.reason.clone()),
    };
    if let Some(step) = r.trajectory.as_ref().and_then(|t| t.exact.as_ref()).and_then(|e| e.last_step()) {
        let (approx, exact) = witness_jsons(sys, &step);
        out.witness = Some(approx);
        out.witness_exact = Some(exact);
        out.reason = Some(format!("{}; this is its last step (the whole run is in `trestle synth --json`)", r.reason));
    }
    CertificateJson::Outcome(out)
}

fn write_certificate(sys: &System, r: &SynthReport, path: &Path) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(&certificate_json(sys, r)).expect("JSON");
    crate::output::write_atomic(path, text.as_bytes()).map_err(CliError::Input)
}

fn draw(sys: &System, r: &SynthReport, path: &Path) -> Result<(), CliError> {
    let step = r.trajectory.as_ref().filter(|t| t.exact.is_some() && t.states.len() >= 2).map(|t| {
        let n = t.states.len();
        (t.states[n - 2].clone(), t.states[n - 1].clone())
    });
    let proven = r.verdict == SynthVerdict::Safe;
    let none: &[FBox] = &[];
    let layers = crate::picture::Layers {
        proven: if proven { &r.invariant } else { none },
        falsified: &r.dropped,
        undecided: if proven { none } else { &r.invariant },
        invariant: none,
        step,
    };
    crate::picture::draw(sys, &format!("{}: synthesis {}", sys.name, r.verdict.as_str()), &layers, path)
        .map_err(CliError::Input)
}

fn boxes_json(bs: &[FBox]) -> Value {
    json!(bs.iter().map(|b| json!({ "lo": b.lo, "hi": b.hi })).collect::<Vec<_>>())
}

fn condition_json(c: &Option<Condition>) -> Value {
    match c {
        None => json!({ "result": "not checked" }),
        Some(Condition::Proven) => json!({ "result": "proven" }),
        Some(Condition::Fails(w)) => {
            json!({ "result": "fails", "state_exact": w.state.iter().map(display_rational).collect::<Vec<_>>() })
        }
        Some(Condition::Unknown(r)) => json!({ "result": "unknown", "reason": r }),
    }
}

fn trajectory_json(sys: &System, t: &Trajectory) -> Value {
    let named = |s: &[f64]| -> Value {
        Value::Object(sys.state_names().into_iter().zip(s).map(|(n, v)| (n, json!(v))).collect())
    };
    let mut o = json!({
        "steps": t.states.len().saturating_sub(1),
        "leaves_safe": t.exact.is_some(),
        "distance_outside_safe": t.distance,
        "states": t.states.iter().map(|s| named(s)).collect::<Vec<_>>(),
    });
    if let Some(e) = &t.exact {
        let exact = |rows: &[Vec<Rational>]| -> Value {
            json!(rows.iter().map(|r| r.iter().map(display_rational).collect::<Vec<_>>()).collect::<Vec<_>>())
        };
        o["states_exact"] = exact(&e.states);
        o["actions_exact"] = exact(&e.actions);
        o["nondet_exact"] = exact(&e.nondet);
        o["branches"] = json!(e.branches.iter().map(|&b| sys.step.branches[b].name.clone()).collect::<Vec<_>>());
        o["replayed"] = json!("exact rational arithmetic");
    }
    o
}

fn config_json(cfg: &SynthConfig, sys: &System) -> Value {
    json!({
        "search": if cfg.forward { "forward" } else if cfg.full { "greatest-fixed-point (full)" } else { "greatest-fixed-point" },
        "resolution": cfg.grid_resolution(sys.state.len()),
        "max_boxes": cfg.max_boxes,
        "min_width": cfg.min_width,
        "timeout": cfg.timeout.map(|t| t.as_secs_f64()),
        "threads": cfg.threads,
        "attack_steps": cfg.attack_steps,
        "post": trestle_bridge::config::method_name(&cfg.bridge.post),
        "linear_bridge": cfg.bridge.linear_bridge,
    })
}

pub fn report_json(sys: &System, r: &SynthReport, cfg: &SynthConfig) -> Value {
    let s = &r.stats;
    let mut o = json!({
        "verdict": r.verdict.as_str(),
        "system": sys.name,
        "version": env!("CARGO_PKG_VERSION"),
        "reason": r.reason,
        "config": config_json(cfg, sys),
        "invariant_boxes": r.invariant.len(),
        "invariant": boxes_json(&r.invariant),
        "stats": {
            "initial_cells": s.initial_cells, "cells": s.cells, "images": s.images, "rounds": s.rounds,
            "splits": s.splits, "dropped": s.dropped, "invariant_cells": s.invariant_cells,
            "invariant_boxes": s.invariant_boxes, "budget_hit": s.budget_hit,
            "smt_queries": s.smt_queries, "z3_queries": s.z3_queries, "fast_path_decided": s.fast_path_decided,
            "bound_queries": s.bound_queries, "proof_splits": s.proof_splits, "exact_queries": s.exact_queries,
            "simulations": s.simulations,
            "seconds": s.seconds, "search_seconds": s.search_seconds, "proof_seconds": s.proof_seconds,
            "attack_seconds": s.attack_seconds,
        },
        "conditions": {
            "inductive": match r.proof.as_ref().map(|p| &p.outcome) {
                None => json!({ "result": "not checked" }),
                Some(Inductiveness::Proven) => json!({ "result": "proven", "clauses": r.proof.as_ref().map_or(0, |p| p.clauses.len()) }),
                Some(Inductiveness::Refuted(_)) => json!({ "result": "refuted" }),
                Some(Inductiveness::Unknown { reason }) => json!({ "result": "unknown", "reason": reason }),
            },
            "init_implies_inv": condition_json(&r.init_condition),
            "inv_implies_safe": condition_json(&r.safe_condition),
        },
        "dropped_init": boxes_json(&r.dropped_init),
    });
    if let Some(t) = &r.trajectory {
        o["trajectory"] = trajectory_json(sys, t);
        // The refutation in the shape every command prints (`trestle_core::TraceJson`).
        if let Some(trace) = t.exact.as_ref().and_then(|e| e.to_trace(sys).ok()) {
            o["trace"] = json!(trace.to_json(sys));
        }
    }
    o
}

fn describe_box(sys: &System, b: &FBox) -> String {
    box_text(&sys.state_names(), &b.lo, &b.hi)
}

fn describe_state(sys: &System, s: &[f64]) -> String {
    assignments(&sys.state_names(), s)
}

fn print_report(sys: &System, r: &SynthReport, cfg: &SynthConfig) {
    const SHOWN: usize = 8;
    let s = &r.stats;
    println!("{}: {}", sys.name, r.verdict.as_str().to_uppercase());
    println!("  {}", r.reason);
    if !r.invariant.is_empty() {
        println!("  invariant: {} boxes ({} cells)", r.invariant.len(), r.cells.len());
        for b in r.invariant.iter().take(SHOWN) {
            println!("    {}", describe_box(sys, b));
        }
        if r.invariant.len() > SHOWN {
            println!("    ... ({} more)", r.invariant.len() - SHOWN);
        }
    }
    if !r.dropped_init.is_empty() {
        println!("  {} cell(s) of Init had to be dropped, e.g.", r.dropped_init.len());
        for b in r.dropped_init.iter().take(3) {
            println!("    {}", describe_box(sys, b));
        }
    }
    if let Some(t) = &r.trajectory {
        match &t.exact {
            Some(_) => {
                println!(
                    "  run from Init leaving Safe (replayed in exact rational arithmetic; exact values with --json):"
                );
                for (k, state) in t.states.iter().enumerate() {
                    let mark = if k + 1 == t.states.len() { "  (outside Safe)" } else { "" };
                    println!("    step {k:>3}  {}{mark}", describe_state(sys, state));
                }
            }
            None => println!(
                "  closest run from Init found: {} steps, ending {} from leaving Safe at {}",
                t.states.len() - 1,
                fmt_f64(-t.distance),
                describe_state(sys, t.states.last().map_or(&[][..], |v| v.as_slice()))
            ),
        }
    }
    println!(
        "search: {}, resolution {}, {} images, {} rounds, {} splits, {} dropped{}",
        if cfg.forward { "forward from Init" } else { "greatest fixed point" },
        cfg.grid_resolution(sys.state.len()),
        s.images,
        s.rounds,
        s.splits,
        s.dropped,
        s.budget_hit.as_ref().map(|b| format!(" ({b})")).unwrap_or_default()
    );
    println!(
        "stats:  {} SMT queries ({} by Z3, {} by the fast path), {} bound queries, {} proof splits, {} exact leaf \
         queries, {:.3} s (search {:.3} s, proof {:.3} s, run search {:.3} s)",
        s.smt_queries,
        s.z3_queries,
        s.fast_path_decided,
        s.bound_queries,
        s.proof_splits,
        s.exact_queries,
        s.seconds,
        s.search_seconds,
        s.proof_seconds,
        s.attack_seconds
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_serialise_as_lo_hi() {
        let v = boxes_json(&[FBox::new(vec![0.25, 0.5], vec![0.5, 1.0])]);
        assert_eq!(v, json!([{ "lo": [0.25, 0.5], "hi": [0.5, 1.0] }]));
    }
}
