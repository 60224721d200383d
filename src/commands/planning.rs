//! `trestle planning generate`: the planning benchmarks of `trestle cegar` (see `trestle_planning`).

use crate::args::{PlanningCommand, PlanningGenerateArgs};
use crate::{CliError, CliResult, Outcome};
use trestle_planning::PlanningError;

pub fn run(c: PlanningCommand) -> CliResult {
    match c {
        PlanningCommand::Generate(a) => generate(&a),
    }
}

fn generate(a: &PlanningGenerateArgs) -> CliResult {
    let start = std::time::Instant::now();
    let all = trestle_planning::generate_all(a.seed, &a.out_dir).map_err(|e| match e {
        PlanningError::Input(m) => CliError::input(m),
        PlanningError::Internal(m) => CliError::Internal(anyhow::anyhow!(m)),
    })?;
    for g in &all {
        println!("{}", g.text());
    }
    println!("{} instances in {:.1} s", all.len(), start.elapsed().as_secs_f64());
    Ok(Outcome::Done)
}
