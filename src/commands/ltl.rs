//! `trestle ltl`: a bounded LTL property of the file (or a formula) on every path from Init, by
//! bound propagation through time (exact when it decides) and the recursive MILP (floating-point
//! evidence when no path violates it, a replayed path when one does).

use crate::args::SystemArgs;
use crate::output::{driver_error, finish};
use crate::progress::Bar;
use crate::{CliError, CliResult};
use trestle_core::{Budget, Verdict};
use trestle_ir::System;
use trestle_ir::formula::Ltl;
use trestle_ir::parse::parse_ltl;
use trestle_ir::system::PropertyFormula;
use trestle_ltl::{LtlOptions, Method, Tightening};
use trestle_verify::temporal::{LtlRun, Named};

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
    /// `--plot FILE` draws bound propagation's enclosure of every step with runs simulated from
    /// Init: one variable against the step (`--plot-vars x`) or two in the state plane.
    #[command(flatten)]
    pub plot: crate::picture::PlotArgs,
}

fn formula(a: &LtlArgs) -> Result<(System, Ltl, Named), CliError> {
    fn pick(f: &PropertyFormula) -> Option<&Ltl> {
        match f {
            PropertyFormula::Ltl(phi) => Some(phi),
            _ => None,
        }
    }
    let (sys, phi, name, text) = super::temporal_formula(
        &a.system,
        a.property.as_deref(),
        a.formula.as_deref(),
        a.k,
        |text, scope| parse_ltl(text, scope),
        pick,
        "an LTL formula (`ltl = ..`)",
    )?;
    Ok((sys, phi, Named { name, text }))
}

pub fn run(a: &LtlArgs) -> CliResult {
    if a.depth == 0 || a.depth > 10_000 {
        return Err(CliError::input("--depth must be between 1 and 10000"));
    }
    let budget = Budget::new(a.timeout.map(|t| super::seconds(t, "--timeout")).transpose()?);
    crate::output::check_output("--certificate", a.certificate.as_deref())?;
    crate::output::check_output("--plot", a.plot.plot.as_deref())?;
    let (sys, phi, property) = formula(a)?;
    let picture = a.plot.target(&sys, true).map_err(driver_error)?;
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
    opts.rmilp.adaptive = !a.no_adaptive;
    opts.rmilp.tightening = match a.tighten {
        TightenArg::Race => Tightening::Race,
        TightenArg::On => Tightening::On,
        TightenArg::Off => Tightening::Off,
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bar = Bar::new(a.system.silent());
    let run =
        trestle_verify::temporal::ltl(&sys, &phi, &property, &opts, threads, &budget, &bar).map_err(driver_error)?;
    drop(bar);
    if let Some(path) = &a.certificate {
        match &run.certificate {
            Some(cert) => trestle_verify::write_json(path, cert).map_err(driver_error)?,
            None => eprintln!("no certificate written: {}", no_certificate(&sys, &run)),
        }
    }
    let mut result = run.result.clone();
    if let Some((path, view)) = picture {
        let title = format!("{} {}: {}", sys.name, property.name, result.verdict);
        if trestle_verify::picture::draw_ltl(&sys, &run, &title, &view, path).map_err(driver_error)? {
            result.artifacts.insert("plot".into(), path.display().to_string().into());
        } else {
            eprintln!("no picture drawn: bound propagation ran no enclosures (method {})", run.ltl.method);
        }
    }
    finish(a.system.json, &result)
}

/// Why a run wrote no certificate.
fn no_certificate(sys: &System, run: &LtlRun) -> String {
    let method = run.ltl.method;
    match &run.ltl.verdict {
        Verdict::Evidence { .. } => {
            "a MILP's \"true\" is floating-point evidence, which no certificate re-checks".into()
        }
        Verdict::Proven { .. } if method == "invariant" => {
            "the bridge engine did not re-prove the invariant on the system with its hidden states lifted within its \
             time"
                .into()
        }
        Verdict::Proven { .. } if method.starts_with("bpt") => format!(
            "the enclosures' check covers systems whose runs cannot stop, and {}",
            trestle_ltl::certificate::stop_free(sys)
                .err()
                .unwrap_or_else(|| "the hidden state could not be lifted".into())
        ),
        Verdict::Proven { .. } => format!("{method} writes none"),
        _ => "only a proven formula has one".into(),
    }
}
