//! `trestle campaign ...`: glue between the flags and `trestle-campaign`.

use crate::args::{CampaignCommand, CampaignExportArgs, CampaignMergeArgs, CampaignReportArgs};
use crate::args::{CampaignRunArgs, CampaignSlurmArgs, Cli, ExportFormatArg};
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use clap::Parser;
use std::path::{Path, PathBuf};
use trestle_campaign::{CampaignError, ExportFormat, RunOptions, Shard, SlurmOptions, Store, default_out, shell_quote};

/// The version every job id includes.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The whole-run limit and the output of the commands that run many jobs (`campaign run`,
/// `suite run`, `maze generate`, `arena generate`); each job keeps its own limit from the file.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct BatchArgs {
    /// Wall-clock limit of the whole run, in seconds: no job starts after it; campaign and suite
    /// jobs still running are killed and left unfinished (not recorded), generated instances
    /// already started finish (each within its spec's limits). What finished is kept (the store,
    /// the suite file). The run then ends "unknown: time limit reached" (exit 3), saying what was
    /// done.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Print one JSON object on stdout: the result envelope of every command (`status`,
    /// `reason`, `reason_kind`, `stats`, `details`), the run's counts in `stats`. No progress.
    #[arg(long)]
    pub json: bool,
}

impl BatchArgs {
    /// The run's deadline, counted from now.
    pub fn deadline(&self) -> Result<Option<std::time::Instant>, CliError> {
        let t = self.timeout.map(|t| trestle_verify::options::seconds(t, "--timeout")).transpose();
        Ok(trestle_core::deadline_after(t.map_err(crate::output::driver_error)?))
    }
}

pub fn run(c: CampaignCommand) -> CliResult {
    match c {
        CampaignCommand::Explain(a) => {
            print!("{}", load(&a.file)?.explain(shard(a.shard.as_deref())?));
            Ok(Outcome::Done)
        }
        CampaignCommand::Run(a) => run_campaign(&a),
        CampaignCommand::Report(a) => report(&a),
        CampaignCommand::Export(a) => export(&a),
        CampaignCommand::Merge(a) => merge(&a),
        CampaignCommand::Slurm(a) => slurm(&a),
    }
}

/// A runner error with its exit code: the user's files and flags 2, the runner's own failures 4.
pub fn cli_error(e: CampaignError) -> CliError {
    if e.is_input() { CliError::Input(anyhow!(e)) } else { CliError::Internal(anyhow!(e)) }
}

/// Checks a job's command line as this binary will parse it (unknown flags, bad values).
pub fn validate(argv: &[String]) -> Result<(), String> {
    let words = std::iter::once("trestle".to_string()).chain(argv.iter().cloned());
    Cli::try_parse_from(words).map(|_| ()).map_err(|e| {
        let text = e.to_string();
        text.lines().next().unwrap_or_default().trim_start_matches("error: ").to_string()
    })
}

/// This binary, which every job runs.
pub fn program() -> Result<PathBuf, CliError> {
    std::env::current_exe().map_err(|e| CliError::Internal(anyhow!("cannot locate the trestle binary: {e}")))
}

/// A `--jobs` value ([`trestle_campaign::jobs_cap`] on this machine's cores; its warning printed).
pub fn jobs_flag(jobs: usize) -> Result<usize, CliError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (jobs, warning) = trestle_campaign::jobs_cap(jobs, cores).map_err(cli_error)?;
    if let Some(w) = warning {
        eprintln!("warning: {w}");
    }
    Ok(jobs)
}

fn load(file: &Path) -> Result<trestle_campaign::Plan, CliError> {
    trestle_campaign::load_campaign(file, &validate, VERSION).map_err(cli_error)
}

fn shard(text: Option<&str>) -> Result<Option<Shard>, CliError> {
    text.map(Shard::parse).transpose().map_err(cli_error)
}

fn run_campaign(a: &CampaignRunArgs) -> CliResult {
    let plan = load(&a.file)?;
    let opts = RunOptions {
        program: program()?,
        jobs: jobs_flag(a.jobs)?,
        resume: a.resume,
        shard: shard(a.shard.as_deref())?,
        progress: !a.quiet && !a.batch.json,
        deadline: a.batch.deadline()?,
    };
    let out = a.out.clone().unwrap_or_else(|| default_out("campaigns", &plan.name));
    let mut store = Store::create(&out).map_err(cli_error)?;
    let resume = trestle_campaign::resume_command(&a.file, &out, a.shard.as_deref());
    trestle_verify::process::set_stopped(format!(
        "the campaign stopped; its finished jobs are in {}, and `{resume}` runs the rest",
        store.path().display()
    ));
    let summary = trestle_campaign::run_plan(&plan, &mut store, &opts).map_err(cli_error)?;
    let report = format!("trestle campaign report {}", shell_quote(&out.display().to_string()));
    if a.batch.json {
        let resume = (!summary.complete).then_some(resume);
        let details = serde_json::json!({ "resume": resume, "report": report });
        crate::output::print_json(&summary.to_json("campaign run", &plan.name, VERSION, details));
    } else {
        print!("{}", summary.run_text(&plan.name, &resume, &report));
    }
    Ok(if summary.stopped.is_some() { Outcome::Unknown } else { Outcome::Done })
}

fn report(a: &CampaignReportArgs) -> CliResult {
    let store = Store::open(&a.dir).map_err(cli_error)?;
    let missing = || CliError::input(format!("{} holds no such run", a.dir.display()));
    let run = store.run_or_latest(a.run).map_err(cli_error)?.ok_or_else(missing)?;
    let out = a.out.clone().unwrap_or_else(|| a.dir.join("report"));
    let written = trestle_campaign::write_report(&store, &run, &out).map_err(cli_error)?;
    if let Some(md) = written.iter().find(|p| p.extension().is_some_and(|e| e == "md")) {
        print!("{}", std::fs::read_to_string(md).unwrap_or_default());
    }
    println!();
    for p in &written {
        println!("wrote {}", p.display());
    }
    Ok(Outcome::Done)
}

fn export(a: &CampaignExportArgs) -> CliResult {
    let store = Store::open(&a.dir).map_err(cli_error)?;
    let format = match a.format {
        ExportFormatArg::Csv => ExportFormat::Csv,
        ExportFormatArg::Jsonl => ExportFormat::Jsonl,
        ExportFormatArg::Arch => ExportFormat::Arch,
    };
    let mut buf = Vec::new();
    let n = trestle_campaign::export(&store, a.run, format, &mut buf).map_err(cli_error)?;
    match &a.output {
        Some(path) => {
            trestle_campaign::write_file(path, &buf).map_err(cli_error)?;
            eprintln!("wrote {n} jobs to {}", path.display());
        }
        None => {
            use std::io::Write;
            std::io::stdout().lock().write_all(&buf).map_err(|e| CliError::Internal(anyhow!("stdout: {e}")))?;
        }
    }
    Ok(Outcome::Done)
}

fn merge(a: &CampaignMergeArgs) -> CliResult {
    let merged = trestle_campaign::merge(&a.out, &a.dirs).map_err(cli_error)?;
    for m in &merged {
        println!("{}", m.text());
        if let Some(w) = m.missing() {
            eprintln!("warning: {w}");
        }
    }
    println!("store: {}", a.out.join(trestle_campaign::STORE_FILE).display());
    Ok(Outcome::Done)
}

fn slurm(a: &CampaignSlurmArgs) -> CliResult {
    let plan = load(&a.file)?;
    let abs = |p: &Path| std::path::absolute(p).map_err(|e| CliError::input(format!("{}: {e}", p.display())));
    let out = a.out.clone().unwrap_or_else(|| default_out("campaigns", &plan.name));
    let opts = SlurmOptions {
        partition: a.partition.clone(),
        time: a.time.clone(),
        mem: a.mem.clone(),
        shards: a.shards,
        cpus: a.cpus,
        program: program()?,
        campaign: abs(&a.file)?,
        out: abs(&out)?,
        workdir: std::env::current_dir().map_err(|e| CliError::input(format!("working directory: {e}")))?,
    };
    let scripts = trestle_campaign::write_scripts(&plan, &opts).map_err(cli_error)?;
    print!("{}", scripts.text(&plan, a.shards, &opts.out));
    Ok(Outcome::Done)
}
