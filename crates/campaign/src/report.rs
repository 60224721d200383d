//! `campaign report`: a run's tables (Markdown and CSV) and plots, from the store alone.
//!
//! A campaign file's `[report]` section chooses the tables; without it there is one table with
//! each run's verdict and time (plus `columns`):
//!
//! ```toml
//! [report]
//! columns = ["splits", "smt_queries"]      # extra values per run in the default table
//!
//! [[report.tables]]
//! title = "Table 1"
//! note = "Times in seconds."
//! columns = [
//!   { header = "verdict", run = "compositional", value = "verdict" },
//!   { header = "monolithic (s)", run = "monolithic", value = "wall" },
//!   { header = "splits", run = "compositional", value = "splits" },
//! ]
//! ```
//!
//! A value is `verdict`, `status`, `wall` (the runner's wall-clock seconds of the whole child),
//! or any statistic the jobs report (`seconds`, `splits`, `smt_queries`, `bound_queries`, ...).

use crate::error::{CampaignError, Result};
use crate::plots;
use crate::runner::count_statuses;
use crate::store::{JobRow, RunRow, Store};
use crate::table::{Cell, Table, cell, instances, runs};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    #[serde(default)]
    pub columns: Vec<String>,
    #[serde(default)]
    pub tables: Vec<TableSpec>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    pub title: String,
    #[serde(default)]
    pub note: String,
    pub columns: Vec<ColumnSpec>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    pub header: String,
    pub run: String,
    pub value: String,
}

impl ReportSpec {
    /// Every column names a run of the campaign.
    pub(crate) fn check(&self, path: &Path, run_names: &[String]) -> Result<()> {
        for (t, table) in self.tables.iter().enumerate() {
            for (c, col) in table.columns.iter().enumerate() {
                if !run_names.contains(&col.run) {
                    return Err(CampaignError::input(
                        path,
                        Some(format!("report.tables[{t}].columns[{c}].run")),
                        format!("'{}' is not a run of this campaign ({})", col.run, run_names.join(", ")),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The report section of a stored campaign file (a suite's, or an unreadable one, has none).
    pub fn from_stored(run: &RunRow) -> ReportSpec {
        if run.kind != "campaign" {
            return ReportSpec::default();
        }
        toml::from_str::<toml::Table>(&run.spec_text)
            .ok()
            .and_then(|mut doc| doc.remove("report"))
            .and_then(|r| r.try_into::<ReportSpec>().ok())
            .unwrap_or_default()
    }
}

/// The tables of a run: the configured ones, or the default one.
pub fn tables(spec: &ReportSpec, rows: &[JobRow]) -> Vec<Table> {
    let instances = instances(rows);
    if spec.tables.is_empty() {
        let mut header = vec!["instance".to_string()];
        let mut columns = Vec::new();
        for run in runs(rows) {
            for value in ["verdict", "wall"].iter().map(|s| s.to_string()).chain(spec.columns.iter().cloned()) {
                let label = if value == "wall" { "time (s)".to_string() } else { value.replace('_', " ") };
                header.push(format!("{run}: {label}"));
                columns.push((run.clone(), value));
            }
        }
        let rows = instances
            .iter()
            .map(|i| std::iter::once(Cell::text(i)).chain(columns.iter().map(|(r, v)| cell(rows, i, r, v))).collect())
            .collect();
        return vec![Table { title: "Results".into(), note: String::new(), header, rows }];
    }
    spec.tables
        .iter()
        .map(|t| Table {
            title: t.title.clone(),
            note: t.note.clone(),
            header: std::iter::once("instance".to_string()).chain(t.columns.iter().map(|c| c.header.clone())).collect(),
            rows: instances
                .iter()
                .map(|i| {
                    std::iter::once(Cell::text(i))
                        .chain(t.columns.iter().map(|c| cell(rows, i, &c.run, &c.value)))
                        .collect()
                })
                .collect(),
        })
        .collect()
}

/// Per run: jobs, solved, statuses, total wall time.
pub fn summary(rows: &[JobRow]) -> Table {
    let header = ["run", "jobs", "solved", "statuses", "total wall time (s)"].map(String::from).to_vec();
    let body = runs(rows)
        .iter()
        .map(|run| {
            let mine: Vec<JobRow> = rows.iter().filter(|r| &r.run_name == run).cloned().collect();
            let statuses =
                count_statuses(&mine).iter().map(|(s, n)| format!("{n} {}", s.as_str())).collect::<Vec<_>>().join(", ");
            let solved = mine.iter().filter(|r| r.status().solved()).count();
            let wall: f64 = mine.iter().map(|r| r.wall_seconds).sum();
            vec![
                Cell::text(run),
                Cell::text(mine.len().to_string()),
                Cell::text(solved.to_string()),
                Cell::text(statuses),
                Cell { text: format!("{wall:.1}"), raw: wall.to_string() },
            ]
        })
        .collect();
    Table { title: "Summary".into(), note: String::new(), header, rows: body }
}

/// Writes `report.md`, one CSV per table and the plots into `out`; returns the files written.
pub fn write_report(store: &Store, run: &RunRow, out: &Path) -> Result<Vec<PathBuf>> {
    let rows = store.jobs(run.run_id)?;
    if rows.is_empty() {
        return Err(CampaignError::usage(format!(
            "run {} of {} has no finished job",
            run.run_id,
            store.path().display()
        )));
    }
    let spec = ReportSpec::from_stored(run);
    let mut written = Vec::new();
    let mut md = header_markdown(run, &rows);
    let all = std::iter::once(summary(&rows)).chain(tables(&spec, &rows));
    for (k, t) in all.enumerate() {
        let csv = out.join(format!("{}.csv", if k == 0 { "summary".to_string() } else { slug(&t.title) }));
        write_file(&csv, t.csv().as_bytes())?;
        md.push_str(&format!("\n## {}\n\n", t.title));
        if !t.note.is_empty() {
            md.push_str(&format!("{}\n\n", t.note));
        }
        md.push_str(&t.markdown());
        md.push_str(&format!("\n(CSV: [{0}]({0}))\n", csv.file_name().and_then(|n| n.to_str()).unwrap_or_default()));
        written.push(csv);
    }
    let drawn = plots::draw_all(&rows, out)?;
    if !drawn.is_empty() {
        md.push_str("\n## Plots\n\n");
        for (title, svg, png) in &drawn {
            let name = |p: &PathBuf| p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            md.push_str(&format!("![{title}]({}) ([PNG]({}))\n\n", name(svg), name(png)));
            written.extend([svg.clone(), png.clone()]);
        }
    }
    let path = out.join("report.md");
    write_file(&path, md.as_bytes())?;
    written.push(path);
    Ok(written)
}

fn header_markdown(run: &RunRow, rows: &[JobRow]) -> String {
    let mut md = format!("# {} {}: run {}\n\n", run.kind, run.name, run.run_id);
    let limits: Vec<String> = {
        let mut l: Vec<String> = rows.iter().map(|r| format!("{} s", r.timeout_seconds)).collect();
        l.sort();
        l.dedup();
        l
    };
    md.push_str(&format!(
        "- file: `{}` (plan {}{})\n- trestle {} on {}, started {}, {}\n- {} of {} jobs recorded; time limit per job: {}\n",
        run.spec_path,
        run.plan_hash,
        run.shard.as_ref().map(|s| format!(", shard {s}")).unwrap_or_default(),
        run.tool_version,
        run.host,
        run.started,
        run.finished.as_ref().map(|f| format!("finished {f}")).unwrap_or_else(|| "not finished".into()),
        rows.len(),
        run.jobs_planned,
        limits.join(", "),
    ));
    md.push_str("- times are the runner's wall-clock seconds of each child process (start, loading, checking)\n");
    md
}

/// `Table 1: peer maze` as `table-1-peer-maze`.
fn slug(title: &str) -> String {
    let s: String = title.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let parts: Vec<&str> = s.split('-').filter(|p| !p.is_empty()).collect();
    if parts.is_empty() { "table".into() } else { parts.join("-") }
}

/// Writes a file the user asked for (a report, an export, a script) with the one atomic writer
/// (`atomic_output`: symbolic links written through, special files and directories refused, no
/// temporary file left behind). A failure is about the path the user gave (a directory, a FIFO,
/// no permission, a full disk): an input error, exit 2.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic_output::write(path, bytes).map_err(|e| write_error(path, e))
}

/// Like [`write_file`], for a script: the file gets the permissions `rwxr-xr-x`.
pub(crate) fn write_script(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic_output::write_with_mode(path, bytes, 0o755).map_err(|e| write_error(path, e))
}

fn write_error(path: &Path, e: std::io::Error) -> CampaignError {
    CampaignError::usage(format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("Table 1: peer maze"), "table-1-peer-maze");
        assert_eq!(slug("!!"), "table");
    }
}
