//! `trestle maze generate`: a maze suite from a spec (see `trestle_maze`); the summary that it
//! and `arena generate` print (`trestle_maze::Generation`).

use crate::args::{MazeCommand, SuiteGenerateArgs};
use crate::{CliError, CliResult, Outcome};
use trestle_maze::{Generation, MazeError, Spec};

pub fn run(c: MazeCommand) -> CliResult {
    match c {
        MazeCommand::Generate(a) => generate(&a),
    }
}

fn generate(a: &SuiteGenerateArgs) -> CliResult {
    let deadline = a.batch.deadline()?;
    let spec = Spec::read(&a.spec).map_err(maze_error)?;
    let quiet = a.quiet || a.batch.json;
    let start = std::time::Instant::now();
    let generated = trestle_maze::generate(&spec, &a.out_dir, a.suite.as_deref(), deadline, &a.only, &|i| {
        if !quiet {
            eprintln!("[{:7.1} s] {:<28} {}", start.elapsed().as_secs_f64(), i.name, i.truth.describe());
        }
    })
    .map_err(maze_error)?;
    let unsafe_runs = generated.instances.iter().filter(|i| i.unsafe_run.is_some()).count();
    let generation = Generation {
        command: "maze generate",
        kind: "maze",
        name: &spec.maze.name,
        planned: generated.planned,
        truths: generated.instances.iter().map(|i| &i.truth).collect(),
        suite: &generated.suite,
        seconds: start.elapsed().as_secs_f64(),
        extra: Some(("unsafe controllers", unsafe_runs)),
    };
    finish(&generation, a.batch.json)
}

/// Prints a generated suite's summary (one result object with `--json`) and ends the command:
/// exit 3 when the run's `--timeout` cut it.
pub fn finish(generation: &Generation, json: bool) -> CliResult {
    if json {
        crate::output::print_json(&generation.to_json(super::campaign::VERSION));
    } else {
        print!("{}", generation.text());
    }
    Ok(if generation.stopped() { Outcome::Unknown } else { Outcome::Done })
}

fn maze_error(e: MazeError) -> CliError {
    match e {
        MazeError::Input(m) => CliError::input(m),
        MazeError::Internal(m) => CliError::Internal(anyhow::anyhow!(m)),
    }
}
