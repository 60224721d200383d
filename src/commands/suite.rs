//! `trestle suite run`: a suite's instances through the campaign runner, judged against their
//! expected verdicts and, optionally, a baseline run.

use super::campaign::{VERSION, cli_error, jobs_flag, program, validate};
use crate::args::{SuiteCommand, SuiteRunArgs};
use crate::output::print_json;
use crate::{CliResult, Outcome};
use trestle_campaign::{RunOptions, Store, default_out};

pub fn run(c: SuiteCommand) -> CliResult {
    match c {
        SuiteCommand::Run(a) => run_suite(&a),
    }
}

fn run_suite(a: &SuiteRunArgs) -> CliResult {
    let suite = trestle_campaign::load_suite(&a.suite, &validate).map_err(cli_error)?;
    let mut plan = suite.plan(VERSION).map_err(cli_error)?;
    plan.tolerance = plan.tolerance.with_slowdown(a.slowdown).map_err(cli_error)?;
    let opts = RunOptions {
        program: program()?,
        jobs: jobs_flag(a.jobs)?,
        resume: false,
        shard: None,
        progress: !a.quiet && !a.batch.json,
        deadline: a.batch.deadline()?,
    };
    let out = a.out.clone().unwrap_or_else(|| default_out("suites", &plan.name));
    let mut store = Store::create(&out).map_err(cli_error)?;
    trestle_verify::process::set_stopped(format!(
        "the suite stopped without a judgement; its finished jobs are in {} (a suite run starts afresh: run it again)",
        store.path().display()
    ));
    // Read before this run is stored: "the latest run" of the output directory is the previous one.
    let baseline = a.baseline.as_deref().map(|b| trestle_campaign::baseline(&store, b, &plan.name));
    let baseline = baseline.transpose().map_err(cli_error)?;
    let summary = trestle_campaign::run_plan(&plan, &mut store, &opts).map_err(cli_error)?;
    let rows = store.jobs(summary.run_id).map_err(cli_error)?;
    let judged =
        trestle_campaign::judge(&rows, baseline.as_ref().map(|(n, r)| (n.as_str(), r.as_slice())), plan.tolerance);
    let (md, report) = judged.write(&plan.name, &out, summary.run_id).map_err(cli_error)?;
    let report = report.display().to_string();
    // A suite cut by its time limit is not judged: its unfinished instances say nothing.
    let verdict = match (summary.stopped, judged.passed()) {
        (Some(_), _) => None,
        (None, passed) => Some(if passed { "passed" } else { "failed" }),
    };
    if a.batch.json {
        let details = serde_json::json!({ "suite": verdict, "report": report });
        print_json(&summary.to_json("suite run", &plan.name, VERSION, details));
    } else {
        print!("{md}");
        println!();
        print!("{}", summary.text(&format!("suite {}", plan.name)));
        if let Some(stop) = summary.stopped {
            println!(
                "unknown: {stop}: {} of {} instances' jobs finished; the suite is not judged",
                summary.ran, summary.planned
            );
        }
        println!("report: {report}");
    }
    Ok(match verdict {
        None => Outcome::Unknown,
        Some("passed") => Outcome::Done,
        Some(_) => Outcome::Refuted,
    })
}
