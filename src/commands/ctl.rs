//! `trestle ctl`: bounded CTL (a property of the file or a formula) with the compositional or
//! monolithic MILP engine or the explicit exact engine.

use crate::args::SystemArgs;
use crate::output::print_json;
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::sync::Arc;
use trestle_core::{RunResult, Status};
use trestle_ctl::{CtlError, CtlOptions, CtlResult, CtlVerdict, Method, check_ctl};
use trestle_ir::System;
use trestle_ir::formula::Ctl;
use trestle_ir::num::display_rational;
use trestle_ir::parse::parse_ctl;
use trestle_ir::system::PropertyFormula;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// A set of small MILPs built lazily depth first, pruned by bounds, solved in parallel.
    Compositional,
    /// One MILP for the whole formula.
    Monolithic,
    /// Exact explicit-state evaluation (finitely many initial states, finite inputs).
    Explicit,
}

#[derive(clap::Args, Debug)]
pub struct CtlArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// A property of the system file (a `[[property]]` with `ctl = ..`).
    #[arg(long, conflicts_with = "formula", required_unless_present = "formula")]
    pub property: Option<String>,
    /// A formula, e.g. "AX^3 (h > 100 or h < -100)"; it may use `k` when --k is given.
    #[arg(long)]
    pub formula: Option<String>,
    /// The horizon `k` of a property defined with one (or of --formula).
    #[arg(long)]
    pub k: Option<u32>,
    /// compositional (default), monolithic or explicit.
    #[arg(long, value_enum, default_value_t = MethodArg::Compositional)]
    pub method: MethodArg,
    /// Worker threads solving MILPs (compositional). Default: all cores.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Wall-clock limit, in seconds (verdict unknown when reached).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Sub-boxes per network input box for the big-M bounds (tighter with more, each bounded
    /// with CROWN; default 16 monolithic, 1 compositional).
    #[arg(long)]
    pub pieces: Option<usize>,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

pub(crate) fn cli_error(e: CtlError) -> CliError {
    if e.is_input() { CliError::Input(e.into()) } else { CliError::Internal(e.into()) }
}

/// The formula to check, its name and text, and the horizon it was read with.
fn formula(a: &CtlArgs) -> Result<(System, Ctl, String, String), CliError> {
    fn pick(f: &PropertyFormula) -> Option<&Ctl> {
        match f {
            PropertyFormula::Ctl(phi) => Some(phi),
            _ => None,
        }
    }
    super::temporal_formula(
        &a.system,
        a.property.as_deref(),
        a.formula.as_deref(),
        a.k,
        |text, scope| parse_ctl(text, scope),
        pick,
        "a CTL formula (`ctl = ..`)",
    )
}

pub fn run(a: &CtlArgs) -> CliResult {
    let (sys, phi, name, text) = formula(a)?;
    let mut opts = CtlOptions {
        method: match a.method {
            MethodArg::Compositional => Method::Compositional,
            MethodArg::Monolithic => Method::Monolithic,
            MethodArg::Explicit => Method::Explicit,
        },
        ..CtlOptions::default()
    };
    if let Some(p) = a.pieces {
        if p == 0 {
            return Err(CliError::input("--pieces must be at least 1"));
        }
        opts.pieces = Some(p);
    }
    if let Some(j) = a.jobs {
        opts.threads = super::threads_flag(j, "--jobs")?;
    }
    if let Some(t) = a.timeout {
        opts.timeout = Some(super::seconds(t, "--timeout")?);
    }
    let bar = (!a.quiet && !a.system.json).then(|| {
        let b = ProgressBar::new_spinner();
        b.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        b
    });
    if let Some(b) = &bar {
        let b = b.clone();
        opts.progress = Some(Arc::new(move |s: &trestle_ctl::CtlStats| {
            b.set_message(format!(
                "{:.0} s: {} MILPs built, {} solved, {} pruned",
                s.seconds, s.milps_built, s.milps_solved, s.milps_pruned
            ));
            b.tick();
        }));
    }
    let result = check_ctl(&sys, &phi, &opts);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let result = result.map_err(cli_error)?;
    let method = opts.method.name();
    if a.system.json {
        print_json(
            &serde_json::to_value(result_json(&sys, &name, &text, method, &result))
                .map_err(|e| CliError::Internal(anyhow!(e)))?,
        );
    } else {
        print_text(&sys, &name, &text, method, &result);
    }
    Ok(match &result.verdict {
        CtlVerdict::True { exact: true, .. } => Outcome::Done,
        CtlVerdict::False { .. } => Outcome::Refuted,
        CtlVerdict::True { exact: false, .. } | CtlVerdict::Unknown { .. } => Outcome::Unknown,
    })
}

const EVIDENCE: &str = "HiGHS found every MILP of the negated property infeasible, or its dual bound on the relaxation \
    of the atoms above the threshold (floating-point evidence with this margin, not an exact proof)";

fn evidence_text(exact: bool, method: &str) -> String {
    if method == "explicit" {
        "every initial state evaluated in exact rational arithmetic".into()
    } else if exact {
        "outward-rounded bounds rule out every counterexample job without a solver (exact)".into()
    } else {
        EVIDENCE.into()
    }
}

pub(crate) fn result_json(sys: &System, name: &str, text: &str, method: &str, r: &CtlResult) -> RunResult {
    let (verdict, status) = match &r.verdict {
        CtlVerdict::True { exact: true, .. } => ("true", Status::Proven),
        CtlVerdict::True { exact: false, .. } => ("true", Status::Evidence),
        CtlVerdict::False { .. } => ("false", Status::Refuted),
        CtlVerdict::Unknown { .. } => ("unknown", Status::Unknown),
    };
    let mut out = RunResult::new("ctl", &sys.name, method, verdict, status);
    out.property = Some(name.to_string());
    out.details.insert("formula".into(), json!(text));
    match &r.verdict {
        CtlVerdict::True { exact, margin } => {
            out.evidence = Some(evidence_text(*exact, method));
            out.margin = *margin;
        }
        CtlVerdict::False { state, traces } => {
            out.trace = traces.first().map(|t| t.to_json(sys));
            out.details.insert("initial_state".into(), json!(state.iter().map(display_rational).collect::<Vec<_>>()));
            out.details.insert("traces".into(), json!(traces.iter().map(|t| t.to_json(sys)).collect::<Vec<_>>()));
        }
        CtlVerdict::Unknown { reason } => out.reason = Some(reason.clone()),
    }
    let s = &r.stats;
    out.stat("milps_built", s.milps_built)
        .stat("milps_solved", s.milps_solved)
        .stat("milps_pruned", s.milps_pruned)
        .stat("binaries", s.binaries)
        .stat("states_expanded", s.states_expanded)
        .stat("candidates", s.candidates)
        .stat("seconds", s.seconds);
    out
}

fn print_text(sys: &System, name: &str, text: &str, method: &str, r: &CtlResult) {
    println!("system:   {}", sys.name);
    println!("property: {name}: {text}");
    println!("method:   {method}");
    match &r.verdict {
        CtlVerdict::True { exact, margin } => {
            let kind = if *exact { "proven" } else { "floating-point evidence" };
            println!("verdict:  true ({kind})");
            println!("  {}", evidence_text(*exact, method));
            if let Some(m) = margin {
                let at_least = if *m >= trestle_ctl::encode::MAX_SLACK { "at least " } else { "" };
                println!("  margin: {at_least}{m:.3e}");
            }
        }
        CtlVerdict::False { state, traces } => {
            println!("verdict:  false (counterexample replayed in exact rational arithmetic)");
            let assign: Vec<String> =
                sys.state.iter().zip(state).map(|(v, x)| format!("{} = {}", v.name, display_rational(x))).collect();
            println!("  initial state: {}", assign.join(", "));
            for (i, t) in traces.iter().enumerate() {
                println!("  run {} of {}:", i + 1, traces.len());
                for (k, s) in t.states.iter().enumerate() {
                    let values: Vec<String> = sys
                        .state
                        .iter()
                        .zip(s)
                        .map(|(v, x)| format!("{} = {}", v.name, trestle_ir::num::to_f64_nearest(x)))
                        .collect();
                    let step = t.steps.get(k).map(|st| {
                        let acts: Vec<String> = sys
                            .actions
                            .iter()
                            .enumerate()
                            .map(|(j, act)| {
                                let label = trestle_ir::sim::action_label(sys, j, &st.actions[j]);
                                format!("{} = {}", act.name, label.unwrap_or_else(|| display_rational(&st.actions[j])))
                            })
                            .collect();
                        format!("  -> {}, branch {}", acts.join(", "), sys.step.branches[st.branch].name)
                    });
                    println!("    s{k}: {}{}", values.join(", "), step.unwrap_or_default());
                }
            }
        }
        CtlVerdict::Unknown { reason } => println!("verdict:  unknown ({reason})"),
    }
    let s = &r.stats;
    println!(
        "stats:    {} MILPs built, {} solved, {} pruned by bounds, largest {} binaries, {} states expanded exactly, {:.2} s",
        s.milps_built, s.milps_solved, s.milps_pruned, s.binaries, s.states_expanded, s.seconds
    );
}
