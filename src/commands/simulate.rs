//! `trestle simulate`: concrete runs of the closed loop, in exact arithmetic by default
//! (`trestle_verify::simulate`); this module reads the flags' text and prints the runs.

use crate::args::SimulateArgs;
use crate::output::{driver_error, print_json, table};
use crate::{CliError, CliResult, Outcome};
use trestle_ir::num::{Rational, parse_rational, to_f64_nearest};
use trestle_ir::sim;
use trestle_ir::system::System;
use trestle_verify::options::Spelling;
use trestle_verify::render::decimal as fmt_f64;
use trestle_verify::simulate::{Run, SimulateOptions, simulate};

pub fn run(a: &SimulateArgs) -> CliResult {
    let limits = a.limits.limits();
    let budget = limits.budget(Spelling::Cli).map_err(driver_error)?;
    limits.threads(Spelling::Cli).map_err(driver_error)?;
    let (sys, plant) = super::load_sampled(&a.system)?;
    let opts = SimulateOptions { plant, budget, ..options(a)? };
    let runs = simulate(&sys, &opts).map_err(driver_error)?;
    crate::interrupt::answered();
    let limit = trestle_verify::simulate::limit(&opts, &runs);
    if trestle_verify::simulate::is_enclosed(&sys, &opts) && !a.system.json {
        println!("{}", trestle_verify::simulate::ENCLOSED_NOTE);
    }
    if a.system.json {
        print_json(&trestle_verify::simulate::to_json(&sys, &opts, &runs));
    } else {
        for (i, r) in runs.iter().enumerate() {
            if a.runs > 1 {
                println!("run {i}:");
            }
            print!("{}", to_table(r, &sys));
            if let Some(reason) = &r.stopped {
                println!("stopped after {} steps: {reason}", r.steps.len());
            }
        }
        if let Some(stop) = limit {
            let done = trestle_verify::simulate::done(&opts, &runs);
            println!("unknown: {stop}: {done} done");
        }
    }
    Ok(if limit.is_some() { Outcome::Unknown } else { Outcome::Done })
}

fn assignments(text: &str, what: &str) -> Result<Vec<(String, String)>, CliError> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| CliError::input(format!("{what} '{kv}': expected NAME=VALUE")))
        })
        .collect()
}

fn exact(text: &str, what: &str) -> Result<Rational, CliError> {
    parse_rational(text).ok_or_else(|| CliError::input(format!("{what}: '{text}' is not a number")))
}

/// The flags' text as the driver's options.
fn options(a: &SimulateArgs) -> Result<SimulateOptions, CliError> {
    let mut opts = SimulateOptions { steps: a.steps, runs: a.runs, seed: a.seed, float: a.float, ..Default::default() };
    if let Some(text) = &a.from {
        for (k, v) in assignments(text, "--from")? {
            opts.from.push((k, exact(&v, "--from")?));
        }
    }
    if let Some(text) = &a.nondet {
        for (k, v) in assignments(text, "--nondet")? {
            let vals = v.split(';').map(|x| exact(x.trim(), "--nondet")).collect::<Result<Vec<_>, _>>()?;
            opts.nondet.push((k, vals));
        }
    }
    opts.branches = a.branch.as_ref().map(|text| text.split(',').map(|b| b.trim().to_string()).collect());
    Ok(opts)
}

fn to_table(run: &Run, sys: &System) -> String {
    let mut header = vec!["t".to_string()];
    header.extend(sys.state_names());
    header.extend(sys.nondet_names());
    header.extend(sys.action_names());
    if sys.step.branches.len() > 1 {
        header.push("branch".into());
    }
    let show = |x: &Rational| fmt_f64(to_f64_nearest(x));
    let mut rows = Vec::new();
    for (t, tr) in run.steps.iter().enumerate() {
        let mut r = vec![t.to_string()];
        r.extend(tr.state.iter().map(show));
        r.extend(tr.nondet.iter().map(show));
        r.extend(tr.actions.iter().enumerate().map(|(i, v)| sim::action_label(sys, i, v).unwrap_or_else(|| show(v))));
        if sys.step.branches.len() > 1 {
            r.push(sys.step.branches[tr.branch].name.clone());
        }
        rows.push(r);
    }
    let mut last = vec![run.steps.len().to_string()];
    last.extend(run.last.iter().map(show));
    last.resize(header.len(), String::new());
    rows.push(last);
    let mut out = String::new();
    if !run.start_in_init {
        out.push_str("note: the start state is outside Init\n");
    }
    out.push_str(&table(&header, &rows));
    out
}
