//! `trestle check`: the compositional inductive-invariant check (and its baselines).

use crate::args::{CheckArgs, CheckMethodArg, value_name};
use crate::output::{assignments, box_text, print_json};
use crate::{CliError, CliResult, Outcome};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use std::time::Duration;
use trestle_bridge::config::method_name;
use trestle_bridge::witness::approx;
use trestle_bridge::{Condition, Config, Confirmation, Inductiveness, MilpSummary, Report, Verdict};
use trestle_ir::System;
use trestle_ir::num::display_rational;
use trestle_smt::Witness;

/// The engine configuration from the flags (defaults: the best measured configuration).
pub fn config(a: &CheckArgs) -> Result<Config, CliError> {
    let mut c = if a.paper { Config::paper() } else { Config::default() };
    if let Some(p) = a.post {
        c.post = p.method();
    }
    if a.no_linear_bridge {
        c.linear_bridge = false;
    } else if a.linear_bridge {
        c.linear_bridge = true;
    }
    if let Some(s) = a.split {
        c.split = s.into();
    }
    if let Some(q) = a.queue {
        c.queue = q.into();
    }
    if let Some(t) = a.threads {
        c.threads = super::threads(t)?;
    }
    if let Some(m) = a.max_splits {
        c.max_splits = m;
    }
    if let Some(t) = a.timeout {
        c.timeout = Some(super::seconds(t, "--timeout")?);
    }
    if let Some(t) = a.smt_timeout {
        c.smt_timeout = super::seconds(t, "--smt-timeout")?;
    }
    if let Some(w) = a.min_width {
        if !(w > 0.0 && w < 1.0) {
            return Err(CliError::input("--min-width must be in (0, 1)"));
        }
        c.min_width = w;
    }
    if a.no_fast_path {
        c.fast_path = false;
    }
    if a.no_search {
        c.search = false;
    }
    if a.exact_after.is_some() {
        c.exact_after = a.exact_after;
    }
    if a.no_exact_leaf {
        c.exact_after = None;
    }
    c.dump_smt = a.dump_smt.clone();
    Ok(c)
}

/// `--timeout` bounds the whole run: loading, the check, and the synthesis after a failure get
/// what the earlier stages left (the engines cap every Z3 query by it).
pub fn run(a: &CheckArgs) -> CliResult {
    let cfg = config(a)?;
    crate::output::check_output("--certificate", a.certificate.as_deref())?;
    crate::output::check_output("--plot", a.plot.as_deref())?;
    let deadline = cfg.deadline();
    let sys = super::load(&a.system)?;
    if a.method != CheckMethodArg::Bridge {
        return run_baseline(a, &sys, &cfg, &cfg.until(deadline));
    }
    let bar = (!a.system.json).then(|| {
        let b = ProgressBar::new(1000);
        b.set_style(
            ProgressStyle::with_template("{spinner} proven {percent:>3}% of the invariant  {msg}")
                .expect("valid template"),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    });
    let progress = |p: trestle_bridge::Progress| {
        if let Some(b) = &bar {
            b.set_position((p.proven * 1000.0) as u64);
            b.set_message(format!("{} boxes done, {} queued", p.processed, p.queued));
        }
    };
    let report = trestle_bridge::check(&sys, &cfg.until(deadline), &progress).map_err(super::bridge_error)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if let Some(path) = &a.certificate {
        let cert = trestle_bridge::certificate::from_report(&sys, &report, &cfg);
        crate::output::write_atomic(path, serde_json::to_string_pretty(&cert).expect("JSON").as_bytes())
            .map_err(CliError::Input)?;
    }
    if let Some(path) = &a.plot {
        let step = match &report.inductive.outcome {
            Inductiveness::Refuted(r) => Some((approx(&r.witness.state), approx(&r.witness.next))),
            _ => None,
        };
        let regions: Vec<_> = report.inductive.clauses.iter().map(|c| c.region.clone()).collect();
        let layers = crate::picture::Layers {
            proven: &regions,
            falsified: &report.inductive.falsified,
            undecided: &report.inductive.undecided,
            invariant: &report.cover,
            step,
        };
        crate::picture::draw(&sys, &format!("{}: {}", sys.name, report.verdict.as_str()), &layers, path)
            .map_err(CliError::Input)?;
    }
    if !a.system.json {
        print_report(&sys, &report, &cfg, a);
    }
    let mut outcome = verdict_outcome(report.verdict);
    let mut synthesis = None;
    if a.synthesize_on_failure && report.verdict != Verdict::Safe {
        let rest = cfg.until(deadline);
        let (o, json) = super::synth::synthesize_after_failure(&sys, &rest, a.system.json, a.certificate.as_deref())?;
        outcome = o;
        synthesis = json;
    }
    if a.system.json {
        let mut o = report_json(&sys, &report, &cfg, a);
        if let Some(s) = synthesis {
            o["synthesis"] = s;
        }
        print_json(&o);
    }
    Ok(outcome)
}

fn verdict_outcome(v: Verdict) -> Outcome {
    match v {
        Verdict::Safe => Outcome::Done,
        Verdict::NotInductive | Verdict::UnsafeCandidate => Outcome::Refuted,
        // Floating-point evidence is not a proof: exit code 3, like unknown.
        Verdict::SafeByMilpEvidence | Verdict::Unknown => Outcome::Unknown,
    }
}

/// The monolithic (Z3) and MILP baselines: one query over the whole network. `run` is `cfg` with
/// the time left.
fn run_baseline(a: &CheckArgs, sys: &System, cfg: &Config, run: &Config) -> CliResult {
    if a.synthesize_on_failure {
        return Err(CliError::input("--synthesize-on-failure works with --method bridge only"));
    }
    let report = match a.method {
        CheckMethodArg::Monolithic => trestle_bridge::check_monolithic(sys, run),
        CheckMethodArg::Milp => trestle_bridge::check_milp(sys, run),
        CheckMethodArg::Bridge => unreachable!("the bridge engine is not a baseline"),
    }
    .map_err(super::bridge_error)?;
    if let Some(path) = &a.certificate {
        let cert = trestle_bridge::certificate::from_report(sys, &report, cfg);
        crate::output::write_atomic(path, serde_json::to_string_pretty(&cert).expect("JSON").as_bytes())
            .map_err(CliError::Input)?;
    }
    if a.system.json {
        let mut o = report_json(sys, &report, cfg, a);
        o["method"] = json!(value_name(&a.method));
        print_json(&o);
    } else {
        println!("method: {} baseline", value_name(&a.method));
        print_report(sys, &report, cfg, a);
    }
    Ok(verdict_outcome(report.verdict))
}

pub fn witness_json(sys: &System, w: &Witness) -> Value {
    let named = |names: Vec<String>, vals: &[trestle_ir::Rational]| -> Value {
        Value::Object(names.into_iter().zip(approx(vals)).map(|(n, v)| (n, json!(v))).collect())
    };
    let exact =
        |vals: &[trestle_ir::Rational]| -> Value { json!(vals.iter().map(display_rational).collect::<Vec<_>>()) };
    let mut o = json!({ "state": named(sys.state_names(), &w.state), "state_exact": exact(&w.state) });
    if !w.next.is_empty() {
        o["action"] = named(sys.action_names(), &w.actions);
        o["action_exact"] = exact(&w.actions);
        o["nondet"] = named(sys.nondet_names(), &w.nondet);
        o["nondet_exact"] = exact(&w.nondet);
        o["branch"] = json!(sys.step.branches[w.branch].name);
        o["next"] = named(sys.state_names(), &w.next);
        o["next_exact"] = exact(&w.next);
        o["replayed"] = json!("exact rational arithmetic");
    }
    o
}

fn condition_json(sys: &System, c: &Condition) -> Value {
    match c {
        Condition::Proven => json!({ "result": "proven" }),
        Condition::Fails(w) => json!({ "result": "fails", "witness": witness_json(sys, w) }),
        Condition::Unknown(r) => json!({ "result": "unknown", "reason": r }),
    }
}

fn config_json(cfg: &Config) -> Value {
    json!({
        "post": method_name(&cfg.post),
        "linear_bridge": cfg.linear_bridge,
        "split": cfg.split.name(),
        "queue": cfg.queue.name(),
        "threads": cfg.threads,
        "max_splits": cfg.max_splits,
        "min_width": cfg.min_width,
        "timeout": cfg.timeout.map(|t| t.as_secs_f64()),
        "smt_timeout": cfg.smt_timeout.as_secs_f64(),
        "fast_path": cfg.fast_path,
        "search": cfg.search,
        "exact_after": cfg.exact_after,
    })
}

fn report_json(sys: &System, r: &Report, cfg: &Config, a: &CheckArgs) -> Value {
    let s = &r.inductive.stats;
    let mut o = json!({
        "verdict": r.verdict.as_str(),
        "system": sys.name,
        "version": env!("CARGO_PKG_VERSION"),
        "method": "bridge",
        "config": config_json(cfg),
        "conditions": {
            "init_implies_inv": condition_json(sys, &r.init),
            "inv_implies_safe": condition_json(sys, &r.safe),
            "inductive": match &r.inductive.outcome {
                Inductiveness::Proven => json!({ "result": "proven" }),
                Inductiveness::Refuted(_) => json!({ "result": "refuted" }),
                Inductiveness::Unknown { reason } => json!({ "result": "unknown", "reason": reason }),
            },
        },
        "stats": {
            "splits": s.splits, "smt_queries": s.smt_queries, "bound_queries": s.bound_queries,
            "z3_queries": s.z3_queries, "fast_path_decided": s.fast_path_decided, "boxes": s.boxes,
            "clauses": r.inductive.clauses.len(), "undecided": r.inductive.undecided.len(), "max_depth": s.max_depth,
            "counterexample_searches": s.searches,
            "exact_queries": s.exact_queries, "exact_clauses": r.inductive.exact_clauses.len(), "exact_seconds": s.exact_seconds,
            "seconds": s.seconds, "bounds_seconds": s.bounds_seconds, "smt_seconds": s.smt_seconds, "search_seconds": s.search_seconds,
        },
    });
    if let Some(e) = &r.evidence {
        o["evidence"] = json!(e);
    }
    if let Some(m) = &r.milp {
        o["milp"] = milp_json(m);
    }
    // The refutation in the shape every command prints (`trestle_core::TraceJson`): the failing
    // side condition's state, or the step that leaves the invariant.
    let refutation = match (&r.init, &r.safe, &r.inductive.outcome) {
        (Condition::Fails(w), _, _) | (_, Condition::Fails(w), _) => Some(w),
        (_, _, Inductiveness::Refuted(refutation)) => Some(&refutation.witness),
        _ => None,
    };
    if let Some(w) = refutation {
        o["trace"] = json!(w.to_trace(sys).to_json(sys));
    }
    if let Inductiveness::Refuted(refutation) = &r.inductive.outcome {
        o["counterexample"] = witness_json(sys, &refutation.witness);
        if let Some(b) = &refutation.region {
            o["falsifying_region"] = json!({ "lo": b.lo, "hi": b.hi });
        }
    }
    if let Some(p) = &a.certificate {
        o["certificate"] = json!(p.display().to_string());
    }
    if let Some(p) = &a.plot {
        o["plot"] = json!(p.display().to_string());
    }
    o
}

/// What the MILP baseline found: its answer, the floating-point margin against the threshold, and
/// the exact confirmation.
fn milp_json(m: &MilpSummary) -> Value {
    json!({
        "answer": m.answer,
        "margin": m.margin.filter(|x| x.is_finite()),
        "threshold": m.threshold,
        "exact": false,
        "milps": m.milps,
        "decided_by_bounds": m.decided_by_bounds,
        "moved_coefficients": m.moved_coefficients,
        "seconds": m.seconds,
        "confirmation": m.confirmation.as_ref().map(|c| match c {
            Confirmation::Undecided(why) => json!({ "result": c.as_str(), "reason": why }),
            _ => json!({ "result": c.as_str(), "by": "the bridge engine (exact)" }),
        }),
    })
}

fn print_milp(m: &MilpSummary) {
    let margin = match m.margin {
        Some(x) if x.is_finite() => format!(", margin {x:.3e} (needed > {:.1e})", m.threshold),
        Some(_) => ", no MILP had a feasible point".to_string(),
        None => String::new(),
    };
    println!(
        "milp:   {} ({} MILPs, {} decided by interval bounds, {} tiny coefficients as interval slacks{margin}), {:.3} s",
        m.answer, m.milps, m.decided_by_bounds, m.moved_coefficients, m.seconds
    );
    match &m.confirmation {
        Some(Confirmation::Undecided(why)) => println!(
            "        floating-point evidence only, NOT a proof: the exact confirmation stayed undecided ({why})"
        ),
        Some(c) => println!("        exact confirmation by the bridge engine: {}", c.as_str()),
        None => {}
    }
}

/// A witness in decimals (the nearest f64 of each exact value; the exact rationals are in the
/// JSON output and the certificate).
fn print_witness(sys: &System, w: &Witness) {
    let show = |names: Vec<String>, vals: &[trestle_ir::Rational]| assignments(&names, &approx(vals));
    println!("    state   {}", show(sys.state_names(), &w.state));
    if !w.next.is_empty() {
        println!("    action  {}", show(sys.action_names(), &w.actions));
        if !sys.nondet.is_empty() {
            println!("    nondet  {}", show(sys.nondet_names(), &w.nondet));
        }
        if sys.step.branches.len() > 1 {
            println!("    branch  {}", sys.step.branches[w.branch].name);
        }
        println!("    next    {}", show(sys.state_names(), &w.next));
        println!("    (replayed in exact rational arithmetic; exact values with --json)");
    }
}

fn print_condition(sys: &System, name: &str, c: &Condition) {
    match c {
        Condition::Proven => println!("  {name:<22} proven"),
        Condition::Fails(w) => {
            println!("  {name:<22} FAILS, e.g.");
            print_witness(sys, w);
        }
        Condition::Unknown(r) => println!("  {name:<22} unknown ({r})"),
    }
}

fn print_report(sys: &System, r: &Report, cfg: &Config, a: &CheckArgs) {
    let s = &r.inductive.stats;
    println!("{}: {}", sys.name, r.verdict.as_str().to_uppercase());
    print_condition(sys, "Init => Inv", &r.init);
    print_condition(sys, "Inv => Safe", &r.safe);
    match &r.inductive.outcome {
        Inductiveness::Proven if r.inductive.clauses.is_empty() && r.inductive.exact_clauses.is_empty() => {
            println!("  {:<22} proven ({})", "Inv /\\ Next => Inv'", r.evidence.as_deref().unwrap_or("no bridge"))
        }
        Inductiveness::Proven => {
            let exact = match r.inductive.exact_clauses.len() {
                0 => String::new(),
                n => format!(", {n} decided exactly"),
            };
            println!("  {:<22} proven ({} bridge clauses{exact})", "Inv /\\ Next => Inv'", r.inductive.clauses.len())
        }
        Inductiveness::Refuted(refutation) => {
            println!("  {:<22} REFUTED, counterexample:", "Inv /\\ Next => Inv'");
            print_witness(sys, &refutation.witness);
            if let Some(b) = &refutation.region {
                let region = box_text(&sys.state_names(), &b.lo, &b.hi);
                println!("    every state of the box {region} leaves the invariant");
            }
        }
        Inductiveness::Unknown { reason } => println!("  {:<22} unknown: {reason}", "Inv /\\ Next => Inv'"),
    }
    if a.method != CheckMethodArg::Bridge {
        if let Some(m) = &r.milp {
            print_milp(m);
        }
        println!("time: {:.3} s", s.seconds);
        return;
    }
    println!(
        "config: post {}{}, split {}, queue {}, {} thread(s)",
        method_name(&cfg.post),
        if cfg.linear_bridge { " (linear bridge)" } else { " (box psi)" },
        cfg.split.name(),
        cfg.queue.name(),
        cfg.threads
    );
    println!(
        "stats:  {} splits, {} SMT queries ({} by Z3, {} by the fast path), {} bound queries, {:.3} s \
         (bounds {:.3} s, env checks {:.3} s, search {:.3} s)",
        s.splits,
        s.smt_queries,
        s.z3_queries,
        s.fast_path_decided,
        s.bound_queries,
        s.seconds,
        s.bounds_seconds,
        s.smt_seconds,
        s.search_seconds
    );
    if s.exact_queries > 0 {
        println!(
            "exact:  {} exact leaf queries (networks in Z3 on the box), {} boxes proven exactly, {:.3} s",
            s.exact_queries, s.exact_proven, s.exact_seconds
        );
    }
    if let Some(p) = &a.certificate {
        println!("certificate: {}", p.display());
    }
    if let Some(p) = &a.plot {
        println!("plot: {}", p.display());
    }
}
