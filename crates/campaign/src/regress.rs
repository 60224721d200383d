//! `suite run`'s judgement: each instance against its expected verdict and, optionally, against a
//! baseline run of the same suite (matched by instance name and command).
//!
//! An instance fails when its verdict is not the expected one (a time-out or an unknown is not
//! the expected verdict; with `expect_status`, a verdict resting on floating-point evidence is not
//! an expected proof, nor the reverse), when it errs (input error, internal error, crash), and
//! against a baseline when its verdict or its status changed (proven → evidence is named as the
//! loss of a proof) or it got slower: its wall time exceeds both `slowdown` ×
//! the baseline's and the baseline's + `slack` seconds (so noise on instances that take a few
//! milliseconds does not fail a night). Instances without an expected verdict (truth not
//! established) are reported but never fail the suite.

use crate::error::{CampaignError, Result};
use crate::outcome::JobStatus;
use crate::plan::Tolerance;
use crate::store::{JobRow, Store};
use crate::table::{Cell, Table, format_number};
use std::path::{Path, PathBuf};

/// The baseline `suite run --baseline WHICH` compares with, by its name and jobs: a run id of
/// the output store `store`, or a results directory's latest finished run of suite `suite` (its
/// latest run when none finished). Read before the new run is stored: "the latest run" of the
/// output directory is then the previous one.
pub fn baseline(store: &Store, which: &str, suite: &str) -> Result<(String, Vec<JobRow>)> {
    let missing = || CampaignError::usage(format!("--baseline {which}: no run of suite {suite} there"));
    if let Some(id) = which.parse::<i64>().ok().filter(|_| !Path::new(which).exists()) {
        let run = store.run(id)?.filter(|r| r.kind == "suite").ok_or_else(missing)?;
        return Ok((format!("run {id} of {}", store.path().display()), store.jobs(run.run_id)?));
    }
    let other = Store::open(Path::new(which))?;
    let latest = |finished| other.latest_run(Some("suite"), Some(suite), finished);
    let run = match latest(true)? {
        Some(r) => r,
        None => latest(false)?.ok_or_else(missing)?,
    };
    Ok((format!("run {} of {which}", run.run_id), other.jobs(run.run_id)?))
}

/// One instance's result beside its expectation and baseline.
#[derive(Clone, Debug)]
pub struct InstanceCheck {
    pub row: JobRow,
    pub baseline: Option<JobRow>,
    /// Why the instance fails the suite (empty: it passes).
    pub problems: Vec<String>,
    /// Differences that do not fail it (reference figures, changes of unjudged instances).
    pub notes: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct SuiteJudgement {
    pub checks: Vec<InstanceCheck>,
    /// Baseline instances this run lacks.
    pub missing: Vec<String>,
    pub tolerance: Tolerance,
    /// Where the baseline came from, if any.
    pub baseline: Option<String>,
}

impl SuiteJudgement {
    pub fn failures(&self) -> usize {
        self.checks.iter().filter(|c| !c.problems.is_empty()).count()
    }

    pub fn passed(&self) -> bool {
        self.failures() == 0
    }

    /// Writes the report ([`SuiteJudgement::markdown`]) into `out` as `suite-report.md` and as
    /// `suite-report-run-ID.md`; the report and the path of the first.
    pub fn write(&self, suite: &str, out: &Path, run_id: i64) -> Result<(String, PathBuf)> {
        let md = self.markdown(suite);
        for name in [format!("suite-report-run-{run_id}.md"), "suite-report.md".to_string()] {
            crate::write_file(&out.join(name), md.as_bytes())?;
        }
        Ok((md, out.join("suite-report.md")))
    }

    /// The report: a verdict line, the side-by-side table, and the failures spelled out.
    pub fn markdown(&self, suite: &str) -> String {
        let n = self.checks.len();
        let mut md = format!(
            "# suite {suite}: {}\n\n{n} instances, {} failed{}.\n",
            if self.passed() { "PASS" } else { "FAIL" },
            self.failures(),
            match &self.baseline {
                Some(b) => format!(
                    "; baseline {b} (slower than {}× and by more than {} s fails)",
                    self.tolerance.slowdown, self.tolerance.slack
                ),
                None => String::new(),
            }
        );
        md.push('\n');
        md.push_str(&self.table().markdown());
        let failed: Vec<&InstanceCheck> = self.checks.iter().filter(|c| !c.problems.is_empty()).collect();
        if !failed.is_empty() {
            md.push_str("\n## Failures\n\n");
            for c in failed {
                md.push_str(&format!("- {} ({}): {}\n", c.row.instance, c.row.command, c.problems.join("; ")));
            }
        }
        if !self.missing.is_empty() {
            md.push_str(&format!("\nIn the baseline but not in this run: {}.\n", self.missing.join(", ")));
        }
        md
    }

    pub fn table(&self) -> Table {
        let mut header: Vec<String> =
            ["instance", "command", "expected", "verdict", "time (s)"].map(String::from).to_vec();
        if self.baseline.is_some() {
            header.extend(["baseline verdict", "baseline time (s)"].map(String::from));
        }
        header.extend(["result", "notes"].map(String::from));
        let rows = self
            .checks
            .iter()
            .map(|c| {
                let mut r = vec![
                    Cell::text(&c.row.instance),
                    Cell::text(&c.row.command),
                    Cell::text(match (&c.row.expect, &c.row.expect_status) {
                        (Some(e), Some(es)) => format!("{e} ({es})"),
                        (Some(e), None) => e.clone(),
                        (None, _) => "(not judged)".into(),
                    }),
                    Cell::text(shown_verdict(&c.row)),
                    Cell { text: format_number(c.row.wall_seconds, true), raw: c.row.wall_seconds.to_string() },
                ];
                if self.baseline.is_some() {
                    match &c.baseline {
                        Some(b) => r.extend([
                            Cell::text(shown_verdict(b)),
                            Cell { text: format_number(b.wall_seconds, true), raw: b.wall_seconds.to_string() },
                        ]),
                        None => r.extend([Cell::text("(new)"), Cell::text("")]),
                    }
                }
                let result = if c.problems.is_empty() {
                    "ok".to_string()
                } else {
                    format!("**FAIL**: {}", c.problems.join("; "))
                };
                r.extend([Cell::text(result), Cell::text(c.notes.join("; "))]);
                r
            })
            .collect();
        Table { title: "Instances".into(), note: String::new(), header, rows }
    }
}

fn shown_verdict(r: &JobRow) -> String {
    match &r.verdict {
        Some(v) => format!("{v} ({})", r.status),
        None => r.status.clone(),
    }
}

/// Judges a suite run, optionally against a baseline run's jobs.
pub fn judge(rows: &[JobRow], baseline: Option<(&str, &[JobRow])>, tolerance: Tolerance) -> SuiteJudgement {
    let checks = rows
        .iter()
        .map(|row| {
            let base =
                baseline.and_then(|(_, b)| b.iter().find(|b| b.instance == row.instance && b.command == row.command));
            check_instance(row, base, tolerance)
        })
        .collect();
    let missing = baseline
        .map(|(_, b)| {
            b.iter()
                .filter(|b| !rows.iter().any(|r| r.instance == b.instance && r.command == b.command))
                .map(|b| format!("{} ({})", b.instance, b.command))
                .collect()
        })
        .unwrap_or_default();
    SuiteJudgement { checks, missing, tolerance, baseline: baseline.map(|(name, _)| name.to_string()) }
}

fn check_instance(row: &JobRow, base: Option<&JobRow>, tol: Tolerance) -> InstanceCheck {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let status = row.status();
    let judged = row.expect.is_some();
    if status.failed() {
        let why = row.reason.clone().unwrap_or_else(|| "no message".into());
        let exit = row.exit_code.map(|c| format!(", exit {c}")).unwrap_or_default();
        problems.push(format!("{}{exit}: {}", status.as_str(), why.lines().next().unwrap_or_default()));
    } else if let Some(e) = &row.expect {
        if row.verdict.as_deref() != Some(e.as_str()) {
            problems.push(format!("verdict {}, expected {e}", shown_verdict(row)));
        } else if let Some(es) = row.expect_status.as_ref().filter(|es| **es != row.status) {
            problems.push(format!("verdict {}, expected {e} ({es})", shown_verdict(row)));
        }
    }
    if let Some(b) = base {
        let mut changes = Vec::new();
        if b.verdict == row.verdict && b.verdict.is_some() && b.status != row.status {
            let lost = b.status() == JobStatus::Proven && row.status() == JobStatus::Evidence;
            changes.push(format!(
                "status changed: {} → {}{}",
                shown_verdict(b),
                shown_verdict(row),
                if lost { ": no longer proven, only floating-point evidence" } else { "" }
            ));
        } else if b.verdict_or_status() != row.verdict_or_status() {
            changes.push(format!("verdict changed: {} → {}", shown_verdict(b), shown_verdict(row)));
        }
        let both_finished =
            !b.status().failed() && !status.failed() && b.status != "timeout" && status.as_str() != "timeout";
        let limit = (tol.slowdown * b.wall_seconds).max(b.wall_seconds + tol.slack);
        if both_finished && row.wall_seconds > limit {
            changes.push(format!(
                "slower: {} s → {} s ({:.1}×; allowed up to {} s)",
                format_number(b.wall_seconds, true),
                format_number(row.wall_seconds, true),
                row.wall_seconds / b.wall_seconds.max(1e-9),
                format_number(limit, true)
            ));
        }
        if judged { problems.extend(changes) } else { notes.extend(changes) }
    }
    for (name, reference) in reference_figures(row) {
        match row.stat(&name) {
            Some(v) if v == reference => {}
            Some(v) => notes.push(format!("{name} {} (reference {})", fmt(v), fmt(reference))),
            None => notes.push(format!("{name} not reported (reference {})", fmt(reference))),
        }
    }
    InstanceCheck { row: row.clone(), baseline: base.cloned(), problems, notes }
}

fn fmt(x: f64) -> String {
    format_number(x, false)
}

fn reference_figures(row: &JobRow) -> Vec<(String, f64)> {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&row.reference)
        .map(|m| m.into_iter().filter_map(|(k, v)| v.as_f64().map(|x| (k, x))).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(instance: &str, expect: Option<&str>, verdict: Option<&str>, status: &str, wall: f64) -> JobRow {
        let mut r = crate::store::test_row(instance, "check", status, verdict, wall);
        r.expect = expect.map(String::from);
        r
    }

    #[test]
    fn expected_verdicts_errors_and_unjudged_instances() {
        let rows = [
            row("a", Some("safe"), Some("safe"), "proven", 0.3),
            row("b", Some("not-inductive"), Some("safe"), "proven", 0.3),
            row("c", Some("safe"), None, "timeout", 10.0),
            row("d", Some("safe"), None, "error", 0.1),
            row("e", None, None, "timeout", 10.0),
        ];
        let j = judge(&rows, None, Tolerance::default());
        let failed: Vec<&str> =
            j.checks.iter().filter(|c| !c.problems.is_empty()).map(|c| c.row.instance.as_str()).collect();
        assert_eq!(failed, ["b", "c", "d"]);
        assert!(!j.passed());
        assert!(j.markdown("s").contains("verdict safe (proven), expected not-inductive"));
    }

    /// Issue 34, item 2: evidence is a verdict of its own, judged against `expect_status`, and a
    /// proof that became evidence is a regression the report names.
    #[test]
    fn expected_statuses_and_the_loss_of_a_proof() {
        let mut evidence = row("e", Some("true"), Some("true"), "evidence", 0.1);
        let j = judge(std::slice::from_ref(&evidence), None, Tolerance::default());
        assert!(j.passed(), "an expected verdict without a status passes on evidence");
        evidence.expect_status = Some("proven".into());
        let j = judge(std::slice::from_ref(&evidence), None, Tolerance::default());
        assert_eq!(j.checks[0].problems, ["verdict true (evidence), expected true (proven)"]);
        evidence.expect_status = Some("evidence".into());
        assert!(judge(std::slice::from_ref(&evidence), None, Tolerance::default()).passed());
        let proven = row("e", Some("true"), Some("true"), "proven", 0.1);
        let now = row("e", Some("true"), Some("true"), "evidence", 0.1);
        let j = judge(std::slice::from_ref(&now), Some(("run 1", std::slice::from_ref(&proven))), Tolerance::default());
        assert_eq!(
            j.checks[0].problems,
            ["status changed: true (proven) → true (evidence): no longer proven, only floating-point evidence"]
        );
        assert!(j.markdown("s").contains("| true (evidence) |"), "{}", j.markdown("s"));
    }

    #[test]
    fn baselines_catch_flips_and_slowdowns_beyond_the_slack() {
        let base = [
            row("a", Some("safe"), Some("safe"), "proven", 0.30),
            row("b", Some("safe"), Some("safe"), "proven", 1.00),
            row("c", Some("safe"), Some("safe"), "proven", 0.01),
            row("d", Some("safe"), Some("not-inductive"), "refuted", 0.30),
        ];
        let now = [
            row("a", Some("safe"), Some("safe"), "proven", 0.59),
            row("b", Some("safe"), Some("safe"), "proven", 2.10),
            row("c", Some("safe"), Some("safe"), "proven", 0.40),
            row("d", Some("safe"), Some("safe"), "proven", 0.30),
        ];
        let j = judge(&now, Some(("run 1", &base)), Tolerance::default());
        let problems: Vec<String> = j.checks.iter().map(|c| c.problems.join("; ")).collect();
        assert_eq!(problems[0], "", "2x but within the slack");
        assert!(problems[1].starts_with("slower: 1.00 s → 2.10 s"), "{}", problems[1]);
        assert_eq!(problems[2], "", "40x but within the slack");
        assert!(problems[3].contains("verdict changed: not-inductive (refuted) → safe (proven)"), "{}", problems[3]);
        let md = j.markdown("s");
        assert!(md.contains("| baseline verdict |") && md.contains("FAIL"));
        let tight = judge(&now, Some(("run 1", &base)), Tolerance { slowdown: 2.0, slack: 0.0 });
        assert!(!tight.checks[2].problems.is_empty());
    }
}
