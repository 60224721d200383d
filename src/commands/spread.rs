//! `trestle spread generate`: a Simple-Spread benchmark (see `trestle_spread`).

use crate::args::{SpreadCommand, SpreadGenerateArgs};
use crate::{CliError, CliResult, Outcome};
use trestle_spread::SpreadError;

pub fn run(c: SpreadCommand) -> CliResult {
    match c {
        SpreadCommand::Generate(a) => generate(&a),
    }
}

fn generate(a: &SpreadGenerateArgs) -> CliResult {
    let start = std::time::Instant::now();
    let generated = trestle_spread::generate(a.agents, a.seed, &a.out_dir).map_err(|e| match e {
        SpreadError::Input(m) => CliError::input(m),
        SpreadError::Internal(m) => CliError::Internal(anyhow::anyhow!(m)),
    })?;
    for p in &generated.policies {
        println!("{}", p.text());
    }
    println!("system: {} ({:.1} s)", generated.system.display(), start.elapsed().as_secs_f64());
    Ok(Outcome::Done)
}
