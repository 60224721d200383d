//! `campaign export`: every job of a store (or of one run) as CSV or JSON Lines, or as ARCH-COMP's
//! `results.csv` (benchmark, instance, result, time: [`arch_row`]).

use crate::error::{CampaignError, Result};
use crate::store::{JobRow, RunRow, Store};
use crate::table::csv_line;
use serde_json::{Value, json};
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Csv,
    Jsonl,
    /// ARCH-COMP's `results.csv`: `benchmark,instance,result,time`.
    Arch,
}

impl ExportFormat {
    pub fn parse(text: &str) -> Result<ExportFormat> {
        match text {
            "csv" => Ok(ExportFormat::Csv),
            "jsonl" | "json-lines" => Ok(ExportFormat::Jsonl),
            "arch" => Ok(ExportFormat::Arch),
            other => Err(CampaignError::usage(format!("--format {other}: expected csv, jsonl or arch"))),
        }
    }
}

/// The CSV columns: the run's identity, then the job's (its full result only in JSON Lines).
const CSV_COLUMNS: [&str; 33] = [
    "run_id",
    "run_kind",
    "run_started",
    "job_id",
    "ordinal",
    "instance",
    "run_name",
    "command",
    "system_file",
    "system_name",
    "neurons",
    "overrides",
    "options",
    "config_hash",
    "repetition",
    "timeout_seconds",
    "memory_bytes",
    "expect",
    "status",
    "verdict",
    "method",
    "reason",
    "exit_code",
    "signal",
    "wall_seconds",
    "seconds",
    "splits",
    "smt_queries",
    "bound_queries",
    "stats",
    "started",
    "finished",
    "host",
];

/// Writes the jobs of every run (or of `run_id`) in plan order; returns how many.
pub fn export(store: &Store, run_id: Option<i64>, format: ExportFormat, out: &mut dyn Write) -> Result<usize> {
    let runs: Vec<RunRow> = store.runs()?.into_iter().filter(|r| run_id.is_none_or(|id| r.run_id == id)).collect();
    if let Some(id) = run_id
        && runs.is_empty()
    {
        return Err(CampaignError::usage(format!("{} has no run {id}", store.path().display())));
    }
    let io = |e: std::io::Error| CampaignError::internal(format!("export: {e}"));
    match format {
        ExportFormat::Csv => out.write_all(csv_line(CSV_COLUMNS.into_iter()).as_bytes()).map_err(io)?,
        ExportFormat::Arch => out.write_all(csv_line(ARCH_COLUMNS.into_iter()).as_bytes()).map_err(io)?,
        ExportFormat::Jsonl => {}
    }
    let mut n = 0;
    for run in &runs {
        for job in store.jobs(run.run_id)? {
            let line = match format {
                ExportFormat::Csv => csv_row(run, &job),
                ExportFormat::Jsonl => format!("{}\n", json_row(run, &job)),
                ExportFormat::Arch => csv_line(arch_row(&job).iter().map(String::as_str)),
            };
            out.write_all(line.as_bytes()).map_err(io)?;
            n += 1;
        }
    }
    Ok(n)
}

/// The columns of ARCH-COMP's `results.csv`.
const ARCH_COLUMNS: [&str; 4] = ["benchmark", "instance", "result", "time"];

/// One job as a row of ARCH-COMP's `results.csv`: the benchmark is the instance's name without its
/// matrix values (`vcas-middle` of `vcas-middle[hdot0=-19.5]`), the instance those values
/// (`hdot0=-19.5`) or, without any, the run's name; the result `verified` for a proof, `violated`
/// for a refutation (a replayed or validated run), `unknown` for anything else (floating-point
/// evidence, unknown, time or memory out, errors: the competition's table has no place for
/// evidence that is not a proof); the time the job's wall-clock seconds.
pub fn arch_row(j: &JobRow) -> [String; 4] {
    let (benchmark, instance) = match j.instance.split_once('[') {
        Some((name, values)) if values.ends_with(']') => (name, &values[..values.len() - 1]),
        _ => (j.instance.as_str(), j.run_name.as_str()),
    };
    let result = match j.status.as_str() {
        "proven" => "verified",
        "refuted" => "violated",
        _ => "unknown",
    };
    [benchmark.to_string(), instance.to_string(), result.to_string(), format!("{:.2}", j.wall_seconds)]
}

fn csv_row(run: &RunRow, j: &JobRow) -> String {
    let opt = |x: Option<String>| x.unwrap_or_default();
    let cells = [
        run.run_id.to_string(),
        run.kind.clone(),
        run.started.clone(),
        j.job_id.clone(),
        j.ordinal.to_string(),
        j.instance.clone(),
        j.run_name.clone(),
        j.command.clone(),
        j.system_file.clone(),
        opt(j.system_name.clone()),
        opt(j.neurons.map(|x| x.to_string())),
        j.overrides.clone(),
        j.options.clone(),
        j.config_hash.clone(),
        j.repetition.to_string(),
        j.timeout_seconds.to_string(),
        opt(j.memory_bytes.map(|x| x.to_string())),
        opt(j.expect.clone()),
        j.status.clone(),
        opt(j.verdict.clone()),
        opt(j.method.clone()),
        opt(j.reason.clone()),
        opt(j.exit_code.map(|x| x.to_string())),
        opt(j.signal.map(|x| x.to_string())),
        j.wall_seconds.to_string(),
        opt(j.seconds.map(|x| x.to_string())),
        opt(j.splits.map(|x| x.to_string())),
        opt(j.smt_queries.map(|x| x.to_string())),
        opt(j.bound_queries.map(|x| x.to_string())),
        j.stats.clone(),
        j.started.clone(),
        j.finished.clone(),
        j.host.clone(),
    ];
    csv_line(cells.iter().map(String::as_str))
}

/// One job as a JSON object, its JSON columns as JSON.
pub fn json_row(run: &RunRow, j: &JobRow) -> Value {
    let parsed = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    json!({
        "run": { "run_id": run.run_id, "kind": run.kind, "name": run.name, "plan_hash": run.plan_hash,
                 "shard": run.shard, "started": run.started, "finished": run.finished, "tool_version": run.tool_version },
        "job_id": j.job_id, "ordinal": j.ordinal, "instance": j.instance, "run_name": j.run_name,
        "command": j.command, "system_file": j.system_file, "system_hash": j.system_hash,
        "system_name": j.system_name, "neurons": j.neurons, "overrides": parsed(&j.overrides),
        "options": parsed(&j.options), "config_hash": j.config_hash, "repetition": j.repetition,
        "timeout_seconds": j.timeout_seconds, "memory_bytes": j.memory_bytes, "expect": j.expect,
        "reference": parsed(&j.reference), "status": j.status, "verdict": j.verdict, "method": j.method,
        "reason": j.reason, "exit_code": j.exit_code, "signal": j.signal, "wall_seconds": j.wall_seconds,
        "stats": parsed(&j.stats), "result": j.result.as_deref().map(parsed),
        "stderr_tail": j.stderr_tail, "started": j.started, "finished": j.finished, "host": j.host,
    })
}
