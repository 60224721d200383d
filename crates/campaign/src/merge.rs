//! `campaign merge OUT DIR...`: joins the stores of shards (or of any runs of one plan) into one
//! run per plan in OUT, job rows copied as they are.
//!
//! A job found twice must have the same outcome (status and verdict) both times; a duplicate
//! that agrees is kept once, one that disagrees stops the merge and nothing is written (one
//! transaction). Merging again into the same OUT adds only the jobs it lacks, so a late shard
//! can be merged when it arrives.

use crate::error::{CampaignError, Result};
use crate::store::{JobRow, RunRow, Store, insert_configuration, insert_job, insert_run, jobs_of, runs_of, store_err};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One merged run of OUT.
#[derive(Clone, Debug, PartialEq)]
pub struct MergedRun {
    pub run_id: i64,
    pub name: String,
    pub plan_hash: String,
    /// Jobs the merged run holds now.
    pub jobs: usize,
    /// Jobs of the whole plan.
    pub expected: usize,
    /// Jobs added by this merge.
    pub added: usize,
    /// Jobs found more than once with the same outcome (kept once).
    pub duplicates: usize,
}

/// The runs of the input stores, grouped by plan, with their jobs.
struct Group {
    first: RunRow,
    sources: Vec<String>,
    jobs: Vec<(String, JobRow)>,
}

pub fn merge(out: &Path, inputs: &[PathBuf]) -> Result<Vec<MergedRun>> {
    if inputs.is_empty() {
        return Err(CampaignError::usage("campaign merge needs at least one input directory"));
    }
    let out_canon = std::fs::canonicalize(out).ok();
    let mut groups: Vec<Group> = Vec::new();
    for dir in inputs {
        if out_canon.is_some() && std::fs::canonicalize(dir).ok() == out_canon {
            return Err(CampaignError::usage(format!(
                "{} is the output directory; merge other stores into it",
                dir.display()
            )));
        }
        let store = Store::open(dir)?;
        for run in store.runs()? {
            let source = format!(
                "{}#{}{}",
                dir.display(),
                run.run_id,
                run.shard.as_ref().map(|s| format!(" (shard {s})")).unwrap_or_default()
            );
            let jobs = store.jobs(run.run_id)?;
            let gi = match groups.iter().position(|g| g.first.plan_hash == run.plan_hash) {
                Some(i) => i,
                None => {
                    groups.push(Group { first: run.clone(), sources: Vec::new(), jobs: Vec::new() });
                    groups.len() - 1
                }
            };
            let g = &mut groups[gi];
            g.jobs.extend(jobs.into_iter().map(|j| (source.clone(), j)));
            g.sources.push(source);
        }
    }
    let mut store = Store::create(out)?;
    let path = store.path().to_path_buf();
    store.atomically(|tx| groups.iter().map(|g| merge_group(tx, &path, g)).collect())
}

fn merge_group(tx: &rusqlite::Connection, path: &Path, g: &Group) -> Result<MergedRun> {
    let db = store_err(path);
    let existing =
        runs_of(tx).map_err(&db)?.into_iter().rev().find(|r| r.plan_hash == g.first.plan_hash && r.shard.is_none());
    let run_id = match &existing {
        Some(r) => r.run_id,
        None => {
            let mut row = g.first.clone();
            row.shard = None;
            row.jobs_planned = row.jobs_total;
            row.host = "merged".into();
            row.finished = None;
            row.merged_from = Some(serde_json::to_string(&g.sources).expect("strings serialise"));
            insert_run(tx, &row).map_err(&db)?
        }
    };
    let mut seen: HashMap<String, (String, JobRow)> = jobs_of(tx, run_id)
        .map_err(&db)?
        .into_iter()
        .map(|j| (j.job_id.clone(), (path.display().to_string(), j)))
        .collect();
    let (mut added, mut duplicates) = (0, 0);
    for (source, job) in &g.jobs {
        if let Some((first_source, first)) = seen.get(&job.job_id) {
            if first.outcome_key() != job.outcome_key() {
                return Err(CampaignError::usage(format!(
                    "conflicting results for job {} ({} · {}): {} says {}, {} says {}; nothing was merged",
                    job.job_id,
                    job.instance,
                    job.run_name,
                    first_source,
                    describe(first),
                    source,
                    describe(job)
                )));
            }
            duplicates += 1;
            continue;
        }
        insert_configuration(tx, job, &g.first.tool_version).map_err(&db)?;
        insert_job(tx, run_id, job).map_err(&db)?;
        seen.insert(job.job_id.clone(), (source.clone(), job.clone()));
        added += 1;
    }
    let jobs = seen.len();
    if jobs as i64 == g.first.jobs_total {
        let last = g.jobs.iter().map(|(_, j)| j.finished.clone()).max().unwrap_or_else(crate::clock::now);
        tx.execute(
            "UPDATE runs SET finished = ?1 WHERE run_id = ?2 AND finished IS NULL",
            rusqlite::params![last, run_id],
        )
        .map_err(&db)?;
    }
    Ok(MergedRun {
        run_id,
        name: g.first.name.clone(),
        plan_hash: g.first.plan_hash.clone(),
        jobs,
        expected: g.first.jobs_total as usize,
        added,
        duplicates,
    })
}

fn describe(j: &JobRow) -> String {
    match &j.verdict {
        Some(v) => format!("{v} ({})", j.status),
        None => j.status.clone(),
    }
}
