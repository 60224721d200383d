//! Running a plan: the pending jobs of a run (or a shard of it), `--jobs N` children at a time,
//! each finished job committed to the store at once.

use crate::error::Result;
use crate::exec::{probe_system, run_child_until};
use crate::job::Job;
use crate::outcome::{ALL_STATUSES, ChildExit, JobStatus, classify};
use crate::plan::Plan;
use crate::shard::Shard;
use crate::store::{JobRow, Store, SystemFacts};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::Instant;

/// How to run a plan.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The trestle binary the children run (the CLI passes its own executable).
    pub program: PathBuf,
    /// Children at a time (at least 1).
    pub jobs: usize,
    /// Continue the latest run of the same plan and shard, skipping its finished jobs.
    pub resume: bool,
    pub shard: Option<Shard>,
    /// Draw a progress bar and print a line per finished job on stderr.
    pub progress: bool,
    /// The whole run's time limit: no job starts after it, and the jobs running then are killed
    /// and left unfinished (not recorded: `--resume` runs them). The jobs finished are kept.
    pub deadline: Option<Instant>,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub run_id: i64,
    /// Jobs of the run (the shard's slice, or the whole plan).
    pub planned: usize,
    /// Finished before this call (resumed).
    pub skipped: usize,
    /// Finished in this call.
    pub ran: usize,
    /// Jobs of the run by status, this call's and the skipped ones.
    pub counts: Vec<(JobStatus, usize)>,
    pub seconds: f64,
    pub store: PathBuf,
    pub complete: bool,
    /// Why the run ended before its jobs did (the run's time limit), if it did.
    pub stopped: Option<trestle_core::Stop>,
}

/// Runs the plan's pending jobs into the store.
pub fn run_plan(plan: &Plan, store: &mut Store, opts: &RunOptions) -> Result<RunSummary> {
    let start = Instant::now();
    let host = crate::clock::hostname();
    let selected: Vec<&Job> = match opts.shard {
        Some(s) => s.select(&plan.jobs),
        None => plan.jobs.iter().collect(),
    };
    let shard = opts.shard.map(|s| s.to_string());
    let resumed = if opts.resume { store.find_run(&plan.hash(), shard.as_deref())? } else { None };
    let run_id = match resumed {
        Some(id) => id,
        None => store.begin_run(plan, shard, selected.len(), &host)?,
    };
    let done = store.done_jobs(run_id)?;
    let pending: Vec<&Job> = selected.iter().copied().filter(|j| !done.contains(&j.id)).collect();
    let facts: Mutex<HashMap<FactsKey, Option<SystemFacts>>> = Mutex::new(HashMap::new());
    let bar = progress_bar(opts.progress, pending.len());
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Option<SystemFacts>, ChildExit, String, String)>();
    let mut ran = 0;
    let mut failure = None;
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.max(1).min(pending.len().max(1)) {
            let tx = tx.clone();
            let (next, stop, pending, facts) = (&next, &stop, &pending, &facts);
            scope.spawn(move || {
                while !stop.load(Ordering::SeqCst) && opts.deadline.is_none_or(|d| Instant::now() < d) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = pending.get(i) else { break };
                    let system = cached_probe(facts, &opts.program, job);
                    let started = crate::clock::now();
                    let Some(exit) = run_child_until(&opts.program, job, opts.deadline) else { break };
                    if tx.send((i, system, exit, started, crate::clock::now())).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, system, exit, started, finished) in rx {
            let job = pending[i];
            let outcome = classify(&exit);
            let row = JobRow::new(job, system.as_ref(), &outcome, (started, finished), &host);
            if let Err(e) = store.record(run_id, &row, &plan.version) {
                stop.store(true, Ordering::SeqCst);
                failure.get_or_insert(e);
                continue;
            }
            ran += 1;
            if let Some(b) = &bar {
                report_line(b, &row, done.len() + ran, selected.len());
                b.inc(1);
            }
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let rows = store.jobs(run_id)?;
    let complete = selected.iter().all(|j| rows.iter().any(|r| r.job_id == j.id));
    if complete {
        store.finish_run(run_id)?;
    }
    Ok(RunSummary {
        run_id,
        planned: selected.len(),
        skipped: done.len(),
        ran,
        counts: count_statuses(&rows),
        seconds: start.elapsed().as_secs_f64(),
        store: store.path().to_path_buf(),
        complete,
        stopped: (!complete && opts.deadline.is_some_and(|d| Instant::now() >= d))
            .then_some(trestle_core::Stop::TimeLimit),
    })
}

type FactsKey = (PathBuf, Vec<(String, String)>);

fn facts_key(job: &Job) -> FactsKey {
    (job.cwd.join(&job.system), job.overrides.clone())
}

/// Reads each distinct system (file and overrides) once per run.
fn cached_probe(
    cache: &Mutex<HashMap<FactsKey, Option<SystemFacts>>>,
    program: &Path,
    job: &Job,
) -> Option<SystemFacts> {
    let key = facts_key(job);
    if let Some(known) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return known;
    }
    let facts = probe_system(program, job);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, facts.clone());
    }
    facts
}

fn progress_bar(show: bool, len: usize) -> Option<ProgressBar> {
    if !show {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} jobs, ETA {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    Some(bar)
}

/// One line per finished job: above the bar on a terminal, plain lines in a log.
fn report_line(bar: &ProgressBar, row: &JobRow, k: usize, n: usize) {
    let what = match (&row.verdict, row.status.as_str()) {
        (Some(v), s) => format!("{v} ({s})"),
        (None, s) => match &row.reason {
            Some(r) => format!("{s}: {}", r.lines().next().unwrap_or_default()),
            None => s.to_string(),
        },
    };
    let line = format!("[{k}/{n}] {} · {}: {what}, {:.2} s", row.instance, row.run_name, row.wall_seconds);
    if bar.is_hidden() { eprintln!("{line}") } else { bar.println(line) }
}

/// Jobs by status, in the order of [`ALL_STATUSES`], without zeros.
pub fn count_statuses(rows: &[JobRow]) -> Vec<(JobStatus, usize)> {
    ALL_STATUSES
        .into_iter()
        .map(|s| (s, rows.iter().filter(|r| r.status() == s).count()))
        .filter(|(_, n)| *n > 0)
        .collect()
}
