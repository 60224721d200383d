//! What the commands that run many jobs (`campaign run`, `suite run`) say about a run: its one
//! result object, its text, the command that resumes it, and the defaults of their flags (the
//! results directory, the jobs at a time). The CLI only prints these.

use crate::{CampaignError, MergedRun, Plan, Result, RunSummary, Shard, SlurmScripts, shell_quote};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Children at a time per core, at most. Every job is a solver process (often several threads):
/// beyond a few per core they only contend and their times mean nothing, and `--jobs 10000`
/// started 10,000 children at once on 2 cores (4.6 GB).
pub const JOBS_PER_CORE: usize = 4;

/// A `--jobs` value on a machine of `cores`: at least 1; above [`JOBS_PER_CORE`] per core it is
/// capped there, with the warning to print (a typo should not bring the machine down, and a
/// large value on a big node is fine).
pub fn jobs_cap(jobs: usize, cores: usize) -> Result<(usize, Option<String>)> {
    let cap = JOBS_PER_CORE * cores;
    match jobs {
        0 => Err(CampaignError::usage("--jobs must be at least 1")),
        j if j > cap => Ok((
            cap,
            Some(format!(
                "--jobs {j} is more than {JOBS_PER_CORE} per core (this machine has {cores}): running {cap} at a time"
            )),
        )),
        j => Ok((j, None)),
    }
}

/// `results/KIND/NAME` under the working directory: where a run is stored by default.
pub fn default_out(kind: &str, name: &str) -> PathBuf {
    Path::new("results").join(kind).join(name)
}

/// The command line that resumes a campaign run (same file, results directory and shard).
pub fn resume_command(file: &Path, out: &Path, shard: Option<&str>) -> String {
    let q = |p: &Path| shell_quote(&p.display().to_string());
    let shard = shard.map(|s| format!(" --shard {}", shell_quote(s))).unwrap_or_default();
    format!("trestle campaign run {} --out {}{shard} --resume", q(file), q(out))
}

impl RunSummary {
    /// The run as one result object: `verdict` `complete` or `incomplete`, `status` `done`, or
    /// `unknown` when the run's time limit cut it; the counts by status in `stats`. `version`:
    /// the binary's, which every job id includes.
    pub fn to_json(&self, command: &str, name: &str, version: &str, details: serde_json::Value) -> serde_json::Value {
        let counts: serde_json::Map<String, serde_json::Value> =
            self.counts.iter().map(|(st, n)| (st.as_str().to_string(), (*n).into())).collect();
        let mut out = serde_json::json!({
            "verdict": if self.complete { "complete" } else { "incomplete" },
            "status": if self.stopped.is_some() { "unknown" } else { "done" },
            "format": trestle_core::RESULT_FORMAT,
            "version": version,
            "command": command,
            "system": name,
            "stats": {
                "jobs": self.planned, "ran": self.ran, "done_before": self.skipped, "seconds": self.seconds,
                "by_status": counts,
            },
            "details": details,
        });
        if let Some(stop) = self.stopped {
            let why = trestle_core::Unknown::from(stop);
            out["reason"] = why.to_string().into();
            out["reason_kind"] = why.kind().into();
        }
        out["details"]["run_id"] = self.run_id.into();
        out["details"]["store"] = self.store.display().to_string().into();
        out
    }

    /// The run's counts, and where it is stored (two lines); `what` names the run.
    pub fn text(&self, what: &str) -> String {
        let counts = self.counts.iter().map(|(st, n)| format!("{n} {}", st.as_str())).collect::<Vec<_>>().join(", ");
        format!(
            "{what}: run {}, {} jobs ({} run now, {} done before): {counts}; {:.1} s{}\nstore: {}\n",
            self.run_id,
            self.planned,
            self.ran,
            self.skipped,
            self.seconds,
            if self.complete { "" } else { " (incomplete)" },
            self.store.display()
        )
    }
}

impl RunSummary {
    /// `campaign run`'s text: [`RunSummary::text`], what stopped the run, how to resume it
    /// (`resume`, when incomplete) and how to see its report (`report`).
    pub fn run_text(&self, name: &str, resume: &str, report: &str) -> String {
        let mut out = self.text(&format!("campaign {name}"));
        if let Some(stop) = self.stopped {
            let done = self.skipped + self.ran;
            writeln!(out, "unknown: {stop}: {done} of {} jobs finished (this run {})", self.planned, self.ran).unwrap();
        }
        if !self.complete {
            writeln!(out, "resume: {resume}").unwrap();
        }
        writeln!(out, "report: {report}").unwrap();
        out
    }
}

impl Plan {
    /// The jobs the plan expands to (only `shard`'s slice of them when given), two lines a job.
    pub fn explain(&self, shard: Option<Shard>) -> String {
        let jobs: Vec<_> = self.jobs.iter().filter(|j| shard.is_none_or(|s| s.contains(j))).collect();
        let mut out = format!(
            "campaign {}: {} jobs{} (plan {}, trestle {})\n",
            self.name,
            self.jobs.len(),
            shard.map(|s| format!(", shard {s}: {} of them", jobs.len())).unwrap_or_default(),
            self.hash(),
            self.version
        );
        for j in jobs {
            let memory = j.limits.memory.map(|m| format!(", {}", crate::memory_text(m))).unwrap_or_default();
            out.push_str(&format!(
                "{:>4}  {}  {} · {} (repetition {}; limit {} s{memory})\n      in {}: {}\n",
                j.ordinal,
                j.id,
                j.instance,
                j.run,
                j.repetition + 1,
                j.limits.timeout.as_secs_f64(),
                j.cwd.display(),
                j.command_line()
            ));
        }
        out
    }
}

impl MergedRun {
    /// One line: the merged run and what the merge added.
    pub fn text(&self) -> String {
        format!(
            "run {} ({}, plan {}): {} of {} jobs ({} added now, {} found twice with the same outcome)",
            self.run_id, self.name, self.plan_hash, self.jobs, self.expected, self.added, self.duplicates
        )
    }

    /// The warning to print when jobs of the plan are missing (a shard did not finish?).
    pub fn missing(&self) -> Option<String> {
        (self.jobs < self.expected).then(|| {
            format!("{} jobs of {} are missing (a shard did not finish?)", self.expected - self.jobs, self.name)
        })
    }
}

impl SlurmScripts {
    /// The scripts written and how to submit them: `shards` array tasks of `plan`'s jobs, merged
    /// into `out`.
    pub fn text(&self, plan: &Plan, shards: usize, out: &Path) -> String {
        format!(
            "wrote {}\nwrote {}\nwrote {}\nsubmit: {}   ({} shards of {} jobs; results merged into {})\n",
            self.array.display(),
            self.merge.display(),
            self.submit.display(),
            self.submit.display(),
            shards,
            plan.jobs.len(),
            out.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_capped_per_core_and_zero_is_refused() {
        assert!(jobs_cap(0, 2).is_err());
        assert_eq!(jobs_cap(3, 2).unwrap(), (3, None));
        assert_eq!(jobs_cap(8, 2).unwrap(), (8, None));
        let (n, warning) = jobs_cap(10_000, 2).unwrap();
        assert_eq!(n, 8);
        assert!(warning.unwrap().contains("running 8 at a time"));
    }

    #[test]
    fn the_resume_command_quotes_paths_and_keeps_the_shard() {
        let line = resume_command(Path::new("my campaign.toml"), Path::new("out"), Some("2/4"));
        assert_eq!(line, "trestle campaign run 'my campaign.toml' --out out --shard 2/4 --resume");
    }
}
