//! `campaign slurm`: sbatch scripts that run a campaign's shards as a Slurm job array and merge
//! them in a job that waits for the array.
//!
//! The scripts name absolute paths (the trestle binary, the campaign file, the results
//! directory), as written on the machine that makes them: a cluster's nodes share that file
//! system. Nothing a user chose can change what the scripts run: paths appear only as single
//! shell words (quoted), never in comments or `#SBATCH` lines (the log paths are given to
//! `sbatch` in `submit.sh`); `#SBATCH` lines hold numbers, the campaign's plain name and the
//! `--partition`, `--time` and `--mem` values, refused unless made of letters, digits and
//! `_ . : , + -`. Each array task writes its own store under `OUT/shards/K` (no two writers on one
//! SQLite file) and runs with `--resume`, so a requeued task continues where it stopped. The merge
//! job runs after the array whatever its tasks' exit (`afterany`), merges the stores that exist
//! and writes the report; `campaign merge` says how many jobs are missing, if any.

use crate::error::{CampaignError, Result};
use crate::job::shell_quote;
use crate::plan::Plan;
use crate::report::{write_file, write_script};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    /// Per array task, in Slurm's syntax (`1:00:00`).
    pub time: Option<String>,
    /// Per array task, in Slurm's syntax (`8G`).
    pub mem: Option<String>,
    pub shards: usize,
    /// CPUs per task, and the task's `--jobs`.
    pub cpus: usize,
    /// The trestle binary, absolute.
    pub program: PathBuf,
    /// The campaign file, absolute.
    pub campaign: PathBuf,
    /// The results directory, absolute: shards under `shards/K`, the merged store at its root.
    pub out: PathBuf,
    /// Where the jobs start (the working directory when the scripts were written).
    pub workdir: PathBuf,
}

/// The written scripts.
#[derive(Clone, Debug)]
pub struct SlurmScripts {
    pub array: PathBuf,
    pub merge: PathBuf,
    pub submit: PathBuf,
}

pub fn write_scripts(plan: &Plan, o: &SlurmOptions) -> Result<SlurmScripts> {
    if o.shards == 0 || o.shards > plan.jobs.len() {
        return Err(CampaignError::usage(format!(
            "--shards {}: between 1 and the campaign's {} jobs",
            o.shards,
            plan.jobs.len()
        )));
    }
    if o.cpus == 0 {
        return Err(CampaignError::usage("--cpus must be at least 1"));
    }
    let dir = o.out.join("slurm");
    let q = |p: &Path| shell_quote(&p.display().to_string());
    // The campaign's name is a plain name (letters, digits, '-', '_'), checked when it was read.
    let mut head = format!("#!/bin/bash\n#SBATCH --job-name=trestle-{}\n", plan.name);
    for (flag, value) in [("partition", &o.partition), ("time", &o.time), ("mem", &o.mem)] {
        if let Some(v) = value {
            head.push_str(&format!("#SBATCH --{flag}={}\n", sbatch_value(flag, v)?));
        }
    }
    let array = format!(
        "{head}#SBATCH --array=1-{n}\n#SBATCH --cpus-per-task={c}\n\
         # Shard K of {n} of the campaign {name} ({jobs} jobs, plan {hash}); written by `trestle campaign slurm`.\n\
         # Submit it with submit.sh, which also names the log files.\n\
         set -euo pipefail\ncd {wd}\n\
         exec {exe} campaign run {file} --out {out}/shards/\"$SLURM_ARRAY_TASK_ID\" \
         --shard \"$SLURM_ARRAY_TASK_ID/{n}\" --jobs {c} --resume\n",
        n = o.shards,
        c = o.cpus,
        name = plan.name,
        file = q(&o.campaign),
        jobs = plan.jobs.len(),
        hash = plan.hash(),
        wd = q(&o.workdir),
        exe = q(&o.program),
        out = q(&o.out),
    );
    let merge = format!(
        "{head}#SBATCH --cpus-per-task=1\n\
         # Merges the shards of the campaign {name} and writes its report.\n\
         set -euo pipefail\ncd {wd}\nshards=()\n\
         for k in $(seq 1 {n}); do\n  [ -f {out}/shards/\"$k\"/results.sqlite ] && shards+=({out}/shards/\"$k\")\ndone\n\
         {exe} campaign merge {out} \"${{shards[@]}}\"\n{exe} campaign report {out}\n",
        name = plan.name,
        wd = q(&o.workdir),
        n = o.shards,
        out = q(&o.out),
        exe = q(&o.program),
    );
    let (array_path, merge_path, submit_path) =
        (dir.join("array.sbatch"), dir.join("merge.sbatch"), dir.join("submit.sh"));
    // The log paths go on sbatch's command line, where the shell's quoting holds: in an #SBATCH
    // line Slurm reads the value itself, and a path is the user's to choose.
    let submit = format!(
        "#!/bin/bash\n# Submits the shards as a job array and the merge as a job that waits for it.\nset -euo pipefail\n\
         array=$(sbatch --parsable --output={alog} {a})\narray=${{array%%;*}}\n\
         merge=$(sbatch --parsable --dependency=afterany:\"$array\" --output={mlog} {m})\nmerge=${{merge%%;*}}\n\
         echo \"shards: job array $array ({n} tasks); merge: job $merge (after the array)\"\n",
        alog = q(&dir.join("shard-%a.log")),
        mlog = q(&dir.join("merge.log")),
        a = q(&array_path),
        m = q(&merge_path),
        n = o.shards,
    );
    write_file(&array_path, array.as_bytes())?;
    write_file(&merge_path, merge.as_bytes())?;
    write_script(&submit_path, submit.as_bytes())?;
    Ok(SlurmScripts { array: array_path, merge: merge_path, submit: submit_path })
}

/// A value for an `#SBATCH` line, where no shell quoting applies (Slurm splits the line itself):
/// only the characters partition names, times and sizes are made of, so a newline, a quote or a
/// `$(...)` can never start a line or a command of its own.
fn sbatch_value<'a>(flag: &str, value: &'a str) -> Result<&'a str> {
    let plain = !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || "_.:,+-".contains(c));
    if plain {
        Ok(value)
    } else {
        Err(CampaignError::usage(format!(
            "--{flag} '{}': a Slurm value here may hold letters, digits and _ . : , + - only",
            value.escape_debug()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbatch_values_are_tokens() {
        assert_eq!(sbatch_value("time", "1-00:00:00").unwrap(), "1-00:00:00");
        assert_eq!(sbatch_value("partition", "gpu,debug").unwrap(), "gpu,debug");
        for bad in ["debug\n#SBATCH --wrap=x", "a b", "$(touch x)", "`x`", "'x'", "\"x\"", ""] {
            let e = sbatch_value("partition", bad).unwrap_err().to_string();
            assert!(e.starts_with("--partition '") && !e.contains('\n'), "{e}");
        }
    }
}
