//! `trestle maze generate`: a maze suite from a spec (see `trestle_maze`); the summary that it
//! and `arena generate` print.

use crate::args::{MazeCommand, SuiteGenerateArgs};
use crate::{CliError, CliResult, Outcome};
use serde_json::json;
use std::path::Path;
use trestle_maze::truth::Truth;
use trestle_maze::{MazeError, Spec};

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
    let generated = trestle_maze::generate(&spec, &a.out_dir, a.suite.as_deref(), deadline, &|i| {
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
    };
    generation.finish(a.batch.json, Some(("unsafe controllers", unsafe_runs)))
}

/// A generated suite's summary (`maze generate`, `arena generate`).
pub struct Generation<'a> {
    pub command: &'static str,
    pub kind: &'static str,
    pub name: &'a str,
    /// The instances the spec asks for; fewer finished when the run's `--timeout` cut it.
    pub planned: usize,
    /// The truth of every instance finished.
    pub truths: Vec<&'a Truth>,
    pub suite: &'a Path,
    pub seconds: f64,
}

impl Generation<'_> {
    /// Prints the summary (one result object with `--json`: `verdict` `complete` or `incomplete`,
    /// `status` `done`, or `unknown` with the time limit as its reason when the run's `--timeout`
    /// cut it, exit 3) and ends the command. `extra`: one more count of the text's parenthesis.
    pub fn finish(&self, json: bool, extra: Option<(&str, usize)>) -> CliResult {
        let count = |want: Option<&str>| self.truths.iter().filter(|t| t.expect() == want).count();
        let counts = [
            ("safe", count(Some("safe"))),
            ("not-inductive", count(Some("not-inductive"))),
            ("not judged", count(None)),
        ];
        let stopped = self.truths.len() < self.planned;
        if json {
            let mut out = json!({
                "format": trestle_core::RESULT_FORMAT,
                "version": super::campaign::VERSION,
                "command": self.command,
                "system": self.name,
                "verdict": if stopped { "incomplete" } else { "complete" },
                "status": if stopped { "unknown" } else { "done" },
                "stats": { "instances": self.planned, "generated": self.truths.len(), "seconds": self.seconds },
                "details": { "suite": self.suite.display().to_string() },
            });
            for (name, n) in counts {
                out["stats"]["by_truth"][name] = n.into();
            }
            if let Some((name, n)) = extra {
                out["stats"][name.replace(' ', "_")] = n.into();
            }
            if stopped {
                let why = trestle_core::Unknown::Timeout;
                out["reason"] = why.to_string().into();
                out["reason_kind"] = why.kind().into();
            }
            crate::output::print_json(&out);
        } else {
            let extra = extra.map(|(name, n)| format!("; {n} {name}")).unwrap_or_default();
            println!(
                "{} suite '{}': {} instances ({} safe, {} not-inductive, {} not judged{extra}) in {:.1} s",
                self.kind,
                self.name,
                self.truths.len(),
                counts[0].1,
                counts[1].1,
                counts[2].1,
                self.seconds
            );
            println!("suite: {}", self.suite.display());
            if stopped {
                println!(
                    "unknown: {}: {} of {} instances finished",
                    trestle_core::Unknown::Timeout,
                    self.truths.len(),
                    self.planned
                );
            }
        }
        Ok(if stopped { Outcome::Unknown } else { Outcome::Done })
    }
}

fn maze_error(e: MazeError) -> CliError {
    match e {
        MazeError::Input(m) => CliError::input(m),
        MazeError::Internal(m) => CliError::Internal(anyhow::anyhow!(m)),
    }
}
