//! `trestle arena generate`: an n-dimensional arena suite from a spec (see `trestle_arena`).

use crate::args::{ArenaCommand, ArenaGenerateArgs};
use crate::{CliError, CliResult, Outcome};
use trestle_arena::{ArenaError, Spec};

pub fn run(c: ArenaCommand) -> CliResult {
    match c {
        ArenaCommand::Generate(a) => generate(&a),
    }
}

fn generate(a: &ArenaGenerateArgs) -> CliResult {
    let spec = Spec::read(&a.spec).map_err(arena_error)?;
    let quiet = a.quiet;
    let start = std::time::Instant::now();
    let generated = trestle_arena::generate(&spec, &a.out_dir, a.suite.as_deref(), &|i| {
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
    let count = |want: Option<&str>| generated.instances.iter().filter(|i| i.truth.expect() == want).count();
    println!(
        "arena suite '{}': {} instances ({} safe, {} not-inductive, {} not judged) in {:.1} s",
        spec.arena.name,
        generated.instances.len(),
        count(Some("safe")),
        count(Some("not-inductive")),
        count(None),
        start.elapsed().as_secs_f64()
    );
    println!("suite: {}", generated.suite.display());
    Ok(Outcome::Done)
}

fn arena_error(e: ArenaError) -> CliError {
    match e {
        ArenaError::Input(m) => CliError::input(m),
        ArenaError::Internal(m) => CliError::Internal(anyhow::anyhow!(m)),
    }
}
