//! The results store: one SQLite file per results directory, holding every run made into it.
//!
//! Invariants (the schema enforces the first two):
//! - a job appears at most once per run (`PRIMARY KEY (run_id, job_id)`);
//! - every job row refers to its run and its configuration (foreign keys);
//! - a job row is written only when the job has finished, in one transaction of its own, so a
//!   killed runner leaves only whole rows, and `--resume` reruns exactly the jobs without one;
//! - a run's `finished` is set only once every job of its plan (or shard) has a row.
//!
//! The default rollback journal (not WAL) keeps the file usable on network file systems, where
//! Slurm shards write their stores.

use crate::error::{CampaignError, Result};
use crate::job::Job;
use crate::outcome::{JobStatus, Outcome, stat_f64};
use crate::plan::Plan;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The store's file name inside a results directory.
pub const STORE_FILE: &str = "results.sqlite";
/// Version 2 added `jobs.expect_status`; a version 1 store is upgraded when opened.
const SCHEMA_VERSION: i64 = 2;
/// The lock file beside the store, held by the one process that writes runs into it.
pub const LOCK_FILE: &str = "results.sqlite.lock";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    spec_path TEXT NOT NULL,
    spec_text TEXT NOT NULL,
    plan_hash TEXT NOT NULL,
    shard TEXT,
    jobs_planned INTEGER NOT NULL,
    jobs_total INTEGER NOT NULL,
    tool_version TEXT NOT NULL,
    host TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    merged_from TEXT
);
CREATE TABLE IF NOT EXISTS configurations (
    config_hash TEXT PRIMARY KEY,
    command TEXT NOT NULL,
    options TEXT NOT NULL,
    tool_version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    run_id INTEGER NOT NULL REFERENCES runs(run_id),
    job_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    instance TEXT NOT NULL,
    run_name TEXT NOT NULL,
    command TEXT NOT NULL,
    system_file TEXT NOT NULL,
    system_hash TEXT NOT NULL,
    system_name TEXT,
    neurons INTEGER,
    overrides TEXT NOT NULL,
    options TEXT NOT NULL,
    config_hash TEXT NOT NULL REFERENCES configurations(config_hash),
    repetition INTEGER NOT NULL,
    timeout_seconds REAL NOT NULL,
    memory_bytes INTEGER,
    expect TEXT,
    reference TEXT NOT NULL,
    status TEXT NOT NULL,
    verdict TEXT,
    method TEXT,
    reason TEXT,
    exit_code INTEGER,
    signal INTEGER,
    wall_seconds REAL NOT NULL,
    seconds REAL,
    splits INTEGER,
    smt_queries INTEGER,
    bound_queries INTEGER,
    stats TEXT NOT NULL,
    result TEXT,
    stderr_tail TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT NOT NULL,
    host TEXT NOT NULL,
    expect_status TEXT,
    PRIMARY KEY (run_id, job_id)
);
";

/// What the runner knows of a system before running it (the CLI reads it from the file).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SystemFacts {
    pub name: String,
    /// Hidden (ReLU) neurons over all the system's networks: the size axis of the plots.
    pub neurons: u64,
}

/// One run as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    pub run_id: i64,
    pub kind: String,
    pub name: String,
    pub spec_path: String,
    pub spec_text: String,
    pub plan_hash: String,
    pub shard: Option<String>,
    pub jobs_planned: i64,
    pub jobs_total: i64,
    pub tool_version: String,
    pub host: String,
    pub started: String,
    pub finished: Option<String>,
    pub merged_from: Option<String>,
}

/// One finished job as stored (JSON columns as text).
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    pub job_id: String,
    pub ordinal: i64,
    pub instance: String,
    pub run_name: String,
    pub command: String,
    pub system_file: String,
    pub system_hash: String,
    pub system_name: Option<String>,
    pub neurons: Option<i64>,
    pub overrides: String,
    pub options: String,
    pub config_hash: String,
    pub repetition: i64,
    pub timeout_seconds: f64,
    pub memory_bytes: Option<i64>,
    pub expect: Option<String>,
    pub reference: String,
    pub status: String,
    pub verdict: Option<String>,
    pub method: Option<String>,
    pub reason: Option<String>,
    pub exit_code: Option<i64>,
    pub signal: Option<i64>,
    pub wall_seconds: f64,
    pub seconds: Option<f64>,
    pub splits: Option<i64>,
    pub smt_queries: Option<i64>,
    pub bound_queries: Option<i64>,
    pub stats: String,
    pub result: Option<String>,
    pub stderr_tail: String,
    pub started: String,
    pub finished: String,
    pub host: String,
    /// A suite's expected status of its expected verdict (`proven`, `evidence`), if any.
    pub expect_status: Option<String>,
}

impl JobRow {
    /// The row of a finished job.
    pub fn new(job: &Job, facts: Option<&SystemFacts>, o: &Outcome, times: (String, String), host: &str) -> JobRow {
        let int = |name: &str| stat_f64(&o.stats, name).map(|x| x as i64);
        JobRow {
            job_id: job.id.clone(),
            ordinal: job.ordinal as i64,
            instance: job.instance.clone(),
            run_name: job.run.clone(),
            command: job.command.clone(),
            system_file: job.system.display().to_string(),
            system_hash: job.system_hash.clone(),
            system_name: o.system_name.clone().or_else(|| facts.map(|f| f.name.clone())),
            neurons: facts.map(|f| f.neurons as i64),
            overrides: json!(job.overrides).to_string(),
            options: json!(job.options).to_string(),
            config_hash: job.config_hash.clone(),
            repetition: i64::from(job.repetition),
            timeout_seconds: job.limits.timeout.as_secs_f64(),
            memory_bytes: job.limits.memory.map(|m| m as i64),
            expect: job.expect.clone(),
            reference: json!(
                job.reference.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>()
            )
            .to_string(),
            status: o.status.as_str().to_string(),
            verdict: o.verdict.clone(),
            method: o.method.clone(),
            reason: o.reason.clone(),
            exit_code: o.exit_code.map(i64::from),
            signal: o.signal.map(i64::from),
            wall_seconds: o.wall_seconds,
            seconds: stat_f64(&o.stats, "seconds"),
            splits: int("splits"),
            smt_queries: int("smt_queries"),
            bound_queries: int("bound_queries"),
            stats: Value::Object(o.stats.clone()).to_string(),
            result: o.result.as_ref().map(Value::to_string),
            stderr_tail: o.stderr_tail.clone(),
            started: times.0,
            finished: times.1,
            host: host.to_string(),
            expect_status: job.expect_status.clone(),
        }
    }

    pub fn status(&self) -> JobStatus {
        JobStatus::parse(&self.status).unwrap_or(JobStatus::Error)
    }

    /// A statistic by name: the extracted columns, or any key of `stats`.
    pub fn stat(&self, name: &str) -> Option<f64> {
        match name {
            "wall" | "wall_seconds" => Some(self.wall_seconds),
            "neurons" => self.neurons.map(|n| n as f64),
            _ => serde_json::from_str::<Value>(&self.stats).ok().and_then(|v| v.get(name).and_then(Value::as_f64)),
        }
    }

    /// The verdict, or the status when the job gave none (`timeout`, `error`); a verdict that
    /// rests on floating-point evidence says so (`true (evidence)`), so that tables and
    /// comparisons never show it as the proof the same word means otherwise.
    pub fn verdict_or_status(&self) -> String {
        match (&self.verdict, self.status()) {
            (Some(v), JobStatus::Evidence) if !v.contains("evidence") => format!("{v} (evidence)"),
            (Some(v), _) => v.clone(),
            (None, _) => self.status.clone(),
        }
    }

    /// What decides whether two runs of the job agree (merge refuses rows that differ in it).
    pub fn outcome_key(&self) -> (&str, Option<&str>) {
        (&self.status, self.verdict.as_deref())
    }
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Held by a store opened to write runs into ([`Store::create`]).
    _lock: Option<atomic_output::lock::Lock>,
}

pub(crate) fn store_err(path: &Path) -> impl Fn(rusqlite::Error) -> CampaignError + '_ {
    move |e| CampaignError::internal(format!("results store {}: {e}", path.display()))
}

impl Store {
    /// Opens the store of a results directory to write runs into it, creating both when
    /// missing. One process at a time: the lock file beside the store is held until the store is
    /// dropped, and a second writer (another `campaign run --resume` of the same store, a suite
    /// run, a merge into it) is refused at once with a message naming the directory, rather than
    /// made to wait: a run can take hours, a silent wait looks like a hang, and the second run
    /// would redo or race for the first's jobs. (`flock DIR/results.sqlite.lock trestle ...`
    /// waits, for scripts that want to.)
    pub fn create(dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(dir)
            .map_err(|e| CampaignError::usage(format!("cannot create the results directory {}: {e}", dir.display())))?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = atomic_output::lock::try_lock(&lock_path)
            .map_err(|e| CampaignError::usage(format!("cannot lock the results store {}: {e}", lock_path.display())))?
            .ok_or_else(|| {
                CampaignError::usage(format!(
                    "another trestle process is writing to the results store in {} (it holds {LOCK_FILE}): wait \
                     for it to finish, or give another --out",
                    dir.display()
                ))
            })?;
        let mut store = Store::connect(&dir.join(STORE_FILE))?;
        store._lock = Some(lock);
        Ok(store)
    }

    /// Opens the store of an existing results directory.
    pub fn open(dir: &Path) -> Result<Store> {
        let path = dir.join(STORE_FILE);
        if !path.is_file() {
            return Err(CampaignError::usage(format!("{} holds no results store ({STORE_FILE})", dir.display())));
        }
        Store::connect(&path)
    }

    fn connect(path: &Path) -> Result<Store> {
        let bad = |e: rusqlite::Error| CampaignError::usage(format!("results store {}: {e}", path.display()));
        // SQLite would open a FIFO or a device in the store's place (and a link's target): only a
        // regular file, or none yet.
        match std::fs::symlink_metadata(path) {
            Ok(m) if !m.is_file() => {
                return Err(CampaignError::usage(format!(
                    "results store {}: not a regular file; give a results directory that holds a store or none",
                    path.display()
                )));
            }
            _ => {}
        }
        let conn = Connection::open(path).map_err(bad)?;
        conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(bad)?;
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;").map_err(bad)?;
        conn.execute_batch(SCHEMA).map_err(bad)?;
        let version: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0))
            .optional()
            .map_err(bad)?;
        match version {
            None => {
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)",
                    [SCHEMA_VERSION.to_string()],
                )
                .map_err(bad)?;
            }
            Some(v) if v == SCHEMA_VERSION.to_string() => {}
            Some(v) if v == "1" => upgrade_from_1(&conn).map_err(bad)?,
            Some(v) => {
                return Err(CampaignError::usage(format!(
                    "results store {}: schema version {v}, this trestle reads {SCHEMA_VERSION}",
                    path.display()
                )));
            }
        }
        Ok(Store { conn, path: path.to_path_buf(), _lock: None })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts a run of `plan` (or of one shard of it) holding `jobs_planned` jobs.
    pub fn begin_run(&mut self, plan: &Plan, shard: Option<String>, jobs_planned: usize, host: &str) -> Result<i64> {
        self.conn
            .execute(
                "INSERT INTO runs (kind, name, spec_path, spec_text, plan_hash, shard, jobs_planned, jobs_total, \
                 tool_version, host, started) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    plan.kind.as_str(),
                    plan.name,
                    plan.path.display().to_string(),
                    plan.text,
                    plan.hash(),
                    shard,
                    jobs_planned as i64,
                    plan.jobs.len() as i64,
                    plan.version,
                    host,
                    crate::clock::now()
                ],
            )
            .map_err(store_err(&self.path))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The latest run of this plan and shard, to resume.
    pub fn find_run(&self, plan_hash: &str, shard: Option<&str>) -> Result<Option<i64>> {
        self.conn
            .query_row(
                "SELECT run_id FROM runs WHERE plan_hash = ?1 AND shard IS ?2 ORDER BY run_id DESC LIMIT 1",
                params![plan_hash, shard],
                |r| r.get(0),
            )
            .optional()
            .map_err(store_err(&self.path))
    }

    /// The ids of the jobs a run has finished.
    pub fn done_jobs(&self, run_id: i64) -> Result<HashSet<String>> {
        let mut st = self.conn.prepare("SELECT job_id FROM jobs WHERE run_id = ?1").map_err(store_err(&self.path))?;
        let ids = st.query_map([run_id], |r| r.get(0)).map_err(store_err(&self.path))?;
        ids.collect::<rusqlite::Result<_>>().map_err(store_err(&self.path))
    }

    /// Records one finished job in a transaction of its own (with its configuration).
    pub fn record(&mut self, run_id: i64, row: &JobRow, version: &str) -> Result<()> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(store_err(&path))?;
        insert_configuration(&tx, row, version).map_err(store_err(&path))?;
        insert_job(&tx, run_id, row).map_err(store_err(&path))?;
        tx.commit().map_err(store_err(&path))
    }

    /// Marks a run finished.
    pub fn finish_run(&mut self, run_id: i64) -> Result<()> {
        self.conn
            .execute("UPDATE runs SET finished = ?1 WHERE run_id = ?2", params![crate::clock::now(), run_id])
            .map_err(store_err(&self.path))?;
        Ok(())
    }

    pub fn runs(&self) -> Result<Vec<RunRow>> {
        runs_of(&self.conn).map_err(store_err(&self.path))
    }

    pub fn run(&self, run_id: i64) -> Result<Option<RunRow>> {
        Ok(self.runs()?.into_iter().find(|r| r.run_id == run_id))
    }

    /// Run `run_id`, or the latest run when none is given.
    pub fn run_or_latest(&self, run_id: Option<i64>) -> Result<Option<RunRow>> {
        run_id.map_or_else(|| self.latest_run(None, None, false), |id| self.run(id))
    }

    /// The latest run (optionally of a kind and name); finished runs first when `finished_only`.
    pub fn latest_run(&self, kind: Option<&str>, name: Option<&str>, finished_only: bool) -> Result<Option<RunRow>> {
        Ok(self
            .runs()?
            .into_iter()
            .rev()
            .filter(|r| kind.is_none_or(|k| r.kind == k) && name.is_none_or(|n| r.name == n))
            .find(|r| !finished_only || r.finished.is_some()))
    }

    /// A run's jobs in plan order.
    pub fn jobs(&self, run_id: i64) -> Result<Vec<JobRow>> {
        jobs_of(&self.conn, run_id).map_err(store_err(&self.path))
    }

    /// Runs `f` in one transaction (merges: all or nothing).
    pub(crate) fn atomically<T>(&mut self, f: impl FnOnce(&rusqlite::Transaction) -> Result<T>) -> Result<T> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(store_err(&path))?;
        let out = f(&tx)?;
        tx.commit().map_err(store_err(&path))?;
        Ok(out)
    }
}

/// Version 1 to 2: `jobs.expect_status` added at the end (old rows have none). Under the write
/// lock SQLite takes for the transaction, so two processes opening one old store upgrade it once.
fn upgrade_from_1(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let version: String = conn.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0))?;
    if version == "1" {
        conn.execute_batch(
            "ALTER TABLE jobs ADD COLUMN expect_status TEXT; UPDATE meta SET value = '2' WHERE key = 'schema_version';",
        )?;
    }
    conn.execute_batch("COMMIT")
}

/// Inserts a run row as it is (merges); returns its new id.
pub(crate) fn insert_run(c: &Connection, r: &RunRow) -> rusqlite::Result<i64> {
    c.execute(
        "INSERT INTO runs (kind, name, spec_path, spec_text, plan_hash, shard, jobs_planned, jobs_total, \
         tool_version, host, started, finished, merged_from) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            r.kind,
            r.name,
            r.spec_path,
            r.spec_text,
            r.plan_hash,
            r.shard,
            r.jobs_planned,
            r.jobs_total,
            r.tool_version,
            r.host,
            r.started,
            r.finished,
            r.merged_from
        ],
    )?;
    Ok(c.last_insert_rowid())
}

/// The runs of a store, oldest first.
pub(crate) fn runs_of(c: &Connection) -> rusqlite::Result<Vec<RunRow>> {
    let mut st = c.prepare(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY run_id"))?;
    st.query_map([], run_row)?.collect()
}

/// A run's jobs in plan order.
pub(crate) fn jobs_of(c: &Connection, run_id: i64) -> rusqlite::Result<Vec<JobRow>> {
    let mut st = c.prepare(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE run_id = ?1 ORDER BY ordinal"))?;
    st.query_map([run_id], job_row)?.collect()
}

pub(crate) fn insert_configuration(c: &Connection, row: &JobRow, version: &str) -> rusqlite::Result<()> {
    c.execute(
        "INSERT OR IGNORE INTO configurations (config_hash, command, options, tool_version) VALUES (?1, ?2, ?3, ?4)",
        params![row.config_hash, row.command, row.options, version],
    )?;
    Ok(())
}

pub(crate) fn insert_job(c: &Connection, run_id: i64, r: &JobRow) -> rusqlite::Result<()> {
    let sql = format!(
        "INSERT INTO jobs (run_id, {JOB_COLUMNS}) VALUES (?1, {})",
        (2..=JOB_COLUMN_COUNT + 1).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
    );
    c.execute(
        &sql,
        params![
            run_id,
            r.job_id,
            r.ordinal,
            r.instance,
            r.run_name,
            r.command,
            r.system_file,
            r.system_hash,
            r.system_name,
            r.neurons,
            r.overrides,
            r.options,
            r.config_hash,
            r.repetition,
            r.timeout_seconds,
            r.memory_bytes,
            r.expect,
            r.reference,
            r.status,
            r.verdict,
            r.method,
            r.reason,
            r.exit_code,
            r.signal,
            r.wall_seconds,
            r.seconds,
            r.splits,
            r.smt_queries,
            r.bound_queries,
            r.stats,
            r.result,
            r.stderr_tail,
            r.started,
            r.finished,
            r.host,
            r.expect_status
        ],
    )?;
    Ok(())
}

const RUN_COLUMNS: &str = "run_id, kind, name, spec_path, spec_text, plan_hash, shard, jobs_planned, jobs_total, \
     tool_version, host, started, finished, merged_from";

fn run_row(r: &Row) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        run_id: r.get(0)?,
        kind: r.get(1)?,
        name: r.get(2)?,
        spec_path: r.get(3)?,
        spec_text: r.get(4)?,
        plan_hash: r.get(5)?,
        shard: r.get(6)?,
        jobs_planned: r.get(7)?,
        jobs_total: r.get(8)?,
        tool_version: r.get(9)?,
        host: r.get(10)?,
        started: r.get(11)?,
        finished: r.get(12)?,
        merged_from: r.get(13)?,
    })
}

const JOB_COLUMN_COUNT: usize = 35;
const JOB_COLUMNS: &str = "job_id, ordinal, instance, run_name, command, system_file, system_hash, system_name, \
     neurons, overrides, options, config_hash, repetition, timeout_seconds, memory_bytes, expect, reference, status, \
     verdict, method, reason, exit_code, signal, wall_seconds, seconds, splits, smt_queries, bound_queries, stats, \
     result, stderr_tail, started, finished, host, expect_status";

fn job_row(r: &Row) -> rusqlite::Result<JobRow> {
    Ok(JobRow {
        job_id: r.get(0)?,
        ordinal: r.get(1)?,
        instance: r.get(2)?,
        run_name: r.get(3)?,
        command: r.get(4)?,
        system_file: r.get(5)?,
        system_hash: r.get(6)?,
        system_name: r.get(7)?,
        neurons: r.get(8)?,
        overrides: r.get(9)?,
        options: r.get(10)?,
        config_hash: r.get(11)?,
        repetition: r.get(12)?,
        timeout_seconds: r.get(13)?,
        memory_bytes: r.get(14)?,
        expect: r.get(15)?,
        reference: r.get(16)?,
        status: r.get(17)?,
        verdict: r.get(18)?,
        method: r.get(19)?,
        reason: r.get(20)?,
        exit_code: r.get(21)?,
        signal: r.get(22)?,
        wall_seconds: r.get(23)?,
        seconds: r.get(24)?,
        splits: r.get(25)?,
        smt_queries: r.get(26)?,
        bound_queries: r.get(27)?,
        stats: r.get(28)?,
        result: r.get(29)?,
        stderr_tail: r.get(30)?,
        started: r.get(31)?,
        finished: r.get(32)?,
        host: r.get(33)?,
        expect_status: r.get(34)?,
    })
}

/// A job row for unit tests: `instance` under `run_name` (command `check`), 6 splits.
#[cfg(test)]
pub(crate) fn test_row(instance: &str, run_name: &str, status: &str, verdict: Option<&str>, wall: f64) -> JobRow {
    JobRow {
        job_id: format!("id-{instance}-{run_name}"),
        ordinal: 0,
        instance: instance.into(),
        run_name: run_name.into(),
        command: "check".into(),
        system_file: "s.toml".into(),
        system_hash: "h".into(),
        system_name: None,
        neurons: None,
        overrides: "[]".into(),
        options: "[]".into(),
        config_hash: "c".into(),
        repetition: 0,
        timeout_seconds: 10.0,
        memory_bytes: None,
        expect: None,
        reference: r#"{"splits": 6}"#.into(),
        status: status.into(),
        verdict: verdict.map(String::from),
        method: None,
        reason: None,
        exit_code: Some(0),
        signal: None,
        wall_seconds: wall,
        seconds: None,
        splits: Some(6),
        smt_queries: None,
        bound_queries: None,
        stats: r#"{"splits": 6}"#.into(),
        result: None,
        stderr_tail: String::new(),
        started: String::new(),
        finished: String::new(),
        host: String::new(),
        expect_status: None,
    }
}
