//! `trestle arena generate`: an n-dimensional arena suite from a spec (see `trestle_arena`).

use super::maze::finish;
use crate::args::{ArenaCommand, SuiteGenerateArgs};
use crate::{CliError, CliResult};
use trestle_arena::{ArenaError, Spec};
use trestle_maze::Generation;

pub fn run(c: ArenaCommand) -> CliResult {
    match c {
        ArenaCommand::Generate(a) => generate(&a),
    }
}

fn generate(a: &SuiteGenerateArgs) -> CliResult {
    let deadline = a.batch.deadline()?;
    let spec = Spec::read(&a.spec).map_err(arena_error)?;
    let quiet = a.quiet || a.batch.json;
    let start = std::time::Instant::now();
    let generated = trestle_arena::generate(&spec, &a.out_dir, a.suite.as_deref(), deadline, &a.only, &|i| {
        if !quiet {
            eprintln!(
                "[{:7.1} s] {:<28} {} (trained in {:.1} s, loss {:.2e}; judged in {:.1} s)",
                start.elapsed().as_secs_f64(),
                i.name,
                i.truth.describe(),
                i.train_seconds,
                i.loss,
                i.judge_seconds
            );
        }
    })
    .map_err(arena_error)?;
    let generation = Generation {
        command: "arena generate",
        kind: "arena",
        name: &spec.arena.name,
        planned: generated.planned,
        truths: generated.instances.iter().map(|i| &i.truth).collect(),
        suite: &generated.suite,
        seconds: start.elapsed().as_secs_f64(),
        extra: None,
    };
    finish(&generation, a.batch.json)
}

fn arena_error(e: ArenaError) -> CliError {
    match e {
        ArenaError::Input(m) => CliError::input(m),
        ArenaError::Internal(m) => CliError::Internal(anyhow::anyhow!(m)),
    }
}
