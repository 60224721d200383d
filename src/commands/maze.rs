//! `trestle maze generate`: a maze suite from a spec (see `trestle_maze`).

use crate::args::{MazeCommand, MazeGenerateArgs};
use crate::{CliError, CliResult, Outcome};
use trestle_maze::{MazeError, Spec};

pub fn run(c: MazeCommand) -> CliResult {
    match c {
        MazeCommand::Generate(a) => generate(&a),
    }
}

fn generate(a: &MazeGenerateArgs) -> CliResult {
    let spec = Spec::read(&a.spec).map_err(maze_error)?;
    let quiet = a.quiet;
    let start = std::time::Instant::now();
    let generated = trestle_maze::generate(&spec, &a.out_dir, a.suite.as_deref(), &|i| {
        if !quiet {
            eprintln!("[{:7.1} s] {:<28} {}", start.elapsed().as_secs_f64(), i.name, i.truth.describe());
        }
    })
    .map_err(maze_error)?;
    let count = |want: Option<&str>| generated.instances.iter().filter(|i| i.truth.expect() == want).count();
    let unsafe_runs = generated.instances.iter().filter(|i| i.unsafe_run.is_some()).count();
    println!(
        "maze suite '{}': {} instances ({} safe, {} not-inductive, {} not judged; {} unsafe controllers) in {:.1} s",
        spec.maze.name,
        generated.instances.len(),
        count(Some("safe")),
        count(Some("not-inductive")),
        count(None),
        unsafe_runs,
        start.elapsed().as_secs_f64()
    );
    println!("suite: {}", generated.suite.display());
    Ok(Outcome::Done)
}

fn maze_error(e: MazeError) -> CliError {
    match e {
        MazeError::Input(m) => CliError::input(m),
        MazeError::Internal(m) => CliError::Internal(anyhow::anyhow!(m)),
    }
}
