//! Campaign files: systems (files, globs or suite files) × runs (a command with its options) ×
//! override matrices × repetitions, with limits and the report's tables.
//!
//! ```toml
//! [campaign]
//! name = "paper-table1"
//! timeout = 60              # seconds per job (hard kill); default 600
//! memory = "8GiB"           # address-space limit per job; default none
//! repetitions = 1           # at most 1000; the campaign at most 100,000 jobs in all
//!
//! [[systems]]
//! suite = "../suites/peer-maze.toml"   # its instances (system + overrides), not its commands
//! [[systems]]
//! glob = "../../examples/*.toml"       # or file = "...", with an optional name = "..."
//! matrix = { "init.x" = [0.3, 0.35] }  # every value, crossed with the other keys
//! set = { "safe" = "x <= 2" }          # fixed overrides of this entry
//! runs = ["monolithic"]                # only these runs (default: every run)
//!
//! [matrix]                             # crossed with every system's own matrix
//! "controller.model" = { glob = "../models/*.onnx" }
//!
//! [[runs]]
//! name = "monolithic"
//! command = "check"
//! options = { method = "monolithic", threads = 1 }
//! timeout = 60                         # this run's jobs only
//! ```
//!
//! The name is a plain name (letters, digits, `-`, `_`): it names the results directory. Each
//! instance (a system with its overrides) has a name of its own: a file's stem or its `name`, a
//! suite's instance name, with its matrix values (`maze[x=0.3]`); two different instances under
//! one name are refused.
//!
//! Paths are relative to the file that writes them. A job's child runs in the directory of the
//! file that named its system (the campaign's, or the suite's for suite instances); a value of a
//! campaign's `set` or `matrix` that names an existing file relative to the campaign is rewritten
//! relative to that directory.

use crate::error::{CampaignError, Result};
use crate::job::{DEFAULT_TIMEOUT, Job, Limits, config_hash, job_id};
use crate::options::{options_argv, override_text, parse_memory, parse_seconds};
use crate::plan::{
    Instance, Plan, PlanKind, Tolerance, base_dir, check_name, combinations, hash_system, read_toml, short_value,
};
use crate::report::ReportSpec;
use crate::suite::{Validate, check_command, load_suite};
use indexmap::IndexMap;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCampaignFile {
    campaign: RawMeta,
    systems: Vec<RawSystems>,
    #[serde(default)]
    set: IndexMap<String, toml::Value>,
    #[serde(default)]
    matrix: IndexMap<String, RawValues>,
    runs: Vec<RawRun>,
    #[serde(default)]
    report: ReportSpec,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeta {
    name: String,
    #[serde(default)]
    description: String,
    timeout: Option<f64>,
    memory: Option<String>,
    repetitions: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSystems {
    file: Option<String>,
    glob: Option<String>,
    suite: Option<String>,
    name: Option<String>,
    #[serde(default)]
    set: IndexMap<String, toml::Value>,
    #[serde(default)]
    matrix: IndexMap<String, RawValues>,
    /// Only these runs (by name) for this entry: systems that different commands read (the flows
    /// `ltl` decides, the selector networks `ctl` does) share one campaign.
    runs: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawValues {
    List(Vec<toml::Value>),
    Glob(RawGlob),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGlob {
    glob: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    name: String,
    command: String,
    #[serde(default)]
    options: IndexMap<String, toml::Value>,
    timeout: Option<f64>,
    memory: Option<String>,
}

/// A run (configuration) of a campaign.
struct RunSpec {
    name: String,
    command: String,
    options: Vec<String>,
    limits: Limits,
}

/// Reads and expands a campaign file. `validate` checks every run's command line as the CLI
/// would parse it; `version` enters every job id.
pub fn load_campaign(path: &Path, validate: Validate, version: &str) -> Result<Plan> {
    let (raw, text): (RawCampaignFile, String) = read_toml(path)?;
    let err = |key: String, msg: String| CampaignError::input(path, Some(key), msg);
    let dir = base_dir(path)?;
    let meta = &raw.campaign;
    check_name(path, "campaign.name", &meta.name)?;
    let timeout = meta.timeout.map(parse_seconds).transpose().map_err(|m| err("campaign.timeout".into(), m))?;
    let memory = meta.memory.as_deref().map(parse_memory).transpose().map_err(|m| err("campaign.memory".into(), m))?;
    let defaults = Limits { timeout: timeout.unwrap_or(DEFAULT_TIMEOUT), memory };
    let repetitions = meta.repetitions.unwrap_or(1);
    if !(1..=MAX_REPETITIONS).contains(&repetitions) {
        return Err(err("campaign.repetitions".into(), format!("{repetitions}: between 1 and {MAX_REPETITIONS}")));
    }
    let runs = runs(path, &raw.runs, &defaults, validate)?;
    raw.report.check(path, &runs.iter().map(|r| r.name.clone()).collect::<Vec<_>>())?;
    let global_set = values_of_set(&raw.set);
    let global_matrix = matrix(path, "matrix", &dir, &raw.matrix)?;
    let mut jobs = Vec::new();
    let mut planned: u64 = 0;
    let mut names: HashMap<String, NameOwner> = HashMap::new();
    for (i, entry) in raw.systems.iter().enumerate() {
        let key = format!("systems[{i}]");
        let mut entry_matrix = matrix(path, &format!("{key}.matrix"), &dir, &entry.matrix)?;
        entry_matrix.extend(global_matrix.iter().cloned());
        let mut fixed = global_set.clone();
        fixed.extend(values_of_set(&entry.set));
        let found = instances(path, &key, &dir, entry, validate)?;
        let entry_runs: Vec<&RunSpec> = match &entry.runs {
            None => runs.iter().collect(),
            Some(names) => {
                if names.is_empty() {
                    return Err(err(format!("{key}.runs"), "name at least one run".into()));
                }
                names
                    .iter()
                    .map(|n| {
                        runs.iter()
                            .find(|r| &r.name == n)
                            .ok_or_else(|| err(format!("{key}.runs"), format!("'{n}' is not the name of a [[runs]]")))
                    })
                    .collect::<Result<_>>()?
            }
        };
        // Counted before anything is expanded: a matrix of ten keys of ten values each is 10^10
        // jobs, which `explain` would never finish listing.
        let entry_jobs = entry_matrix
            .iter()
            .try_fold(found.len() as u64 * entry_runs.len() as u64 * u64::from(repetitions), |n, (_, v)| {
                n.checked_mul(v.len() as u64)
            })
            .and_then(|n| n.checked_add(planned))
            .filter(|n| *n <= MAX_JOBS);
        planned = entry_jobs.ok_or_else(|| {
            err(
                key.clone(),
                format!(
                    "the campaign expands to more than {MAX_JOBS} jobs (instances × matrix values × runs × \
                     repetitions); split it into several campaigns"
                ),
            )
        })?;
        let labels = matrix_labels(&entry_matrix);
        for inst in found {
            for combo in combinations(&entry_matrix) {
                let mut inst = inst.clone();
                if !combo.is_empty() {
                    let shown: Vec<String> = combo
                        .iter()
                        .map(|(k, v)| format!("{}={}", last_segment(k), labels[&(k.clone(), v.clone())]))
                        .collect();
                    inst.name = format!("{}[{}]", inst.name, shown.join(","));
                }
                for (k, v) in fixed.iter().chain(&combo) {
                    inst.overrides.push((k.clone(), relocate(&dir, &inst.cwd, v)));
                }
                check_distinct(path, &mut names, &key, &inst)?;
                for run in &entry_runs {
                    for repetition in 0..repetitions {
                        jobs.push(campaign_job(jobs.len(), &inst, run, repetition, version));
                    }
                }
            }
        }
    }
    if jobs.is_empty() {
        return Err(CampaignError::input(path, Some("systems".into()), "the campaign expands to no job"));
    }
    let plan = Plan {
        kind: PlanKind::Campaign,
        name: meta.name.clone(),
        description: meta.description.clone(),
        path: path.to_path_buf(),
        text,
        version: version.to_string(),
        jobs,
        tolerance: Tolerance::default(),
        report: raw.report,
    };
    plan.check_unique()?;
    Ok(plan)
}

/// Most repetitions of each job.
pub const MAX_REPETITIONS: u32 = 1000;
/// Most jobs a campaign may expand to: a day of jobs of a second each on 2 cores is 170,000;
/// the plan (ids, command lines) stays within tens of megabytes and `explain` within seconds.
pub const MAX_JOBS: u64 = 100_000;

/// The first instance under a name: its `[[systems]]` key, system file and overrides.
type NameOwner = (String, PathBuf, Vec<(String, String)>);

/// Refuses a second, different instance (another system file, or other overrides) under a name
/// already taken: the reports have one row per name, and merged the two (issue 39, item 2).
fn check_distinct(path: &Path, names: &mut HashMap<String, NameOwner>, key: &str, inst: &Instance) -> Result<()> {
    let system = inst.cwd.join(&inst.system);
    match names.get(&inst.name) {
        Some((first_key, first_system, first_overrides))
            if first_system != &system || first_overrides != &inst.overrides =>
        {
            let what = if first_system != &system {
                format!("{} and {}", first_system.display(), system.display())
            } else {
                "the same system with other overrides".to_string()
            };
            Err(CampaignError::input(
                path,
                Some(key.into()),
                format!(
                    "two different instances are named '{}' ({first_key} and {key}: {what}); give each entry a \
                     `name` (globs name systems by their file stems)",
                    inst.name
                ),
            ))
        }
        Some(_) => Ok(()),
        None => {
            names.insert(inst.name.clone(), (key.to_string(), system, inst.overrides.clone()));
            Ok(())
        }
    }
}

/// The label of each matrix value in instance names: its short form (a path's file stem), or the
/// whole value where two values of one key share a short form (`a/net.onnx`, `b/net.onnx`).
fn matrix_labels(matrix: &[(String, Vec<String>)]) -> HashMap<(String, String), String> {
    let mut out = HashMap::new();
    for (key, values) in matrix {
        let shorts: Vec<String> = values.iter().map(|v| short_value(v)).collect();
        let unique = shorts.iter().collect::<std::collections::HashSet<_>>().len() == shorts.len();
        for (v, short) in values.iter().zip(shorts) {
            out.insert((key.clone(), v.clone()), if unique { short } else { v.clone() });
        }
    }
    out
}

fn campaign_job(ordinal: usize, inst: &Instance, run: &RunSpec, repetition: u32, version: &str) -> Job {
    Job {
        ordinal,
        id: job_id(&inst.system_hash, &run.command, &run.options, &inst.overrides, repetition, version),
        instance: inst.name.clone(),
        run: run.name.clone(),
        command: run.command.clone(),
        system: inst.system.clone(),
        system_hash: inst.system_hash.clone(),
        overrides: inst.overrides.clone(),
        options: run.options.clone(),
        repetition,
        limits: run.limits.clone(),
        cwd: inst.cwd.clone(),
        config_hash: config_hash(&run.command, &run.options, version),
        expect: None,
        expect_status: None,
        reference: Vec::new(),
    }
}

fn runs(path: &Path, raw: &[RawRun], defaults: &Limits, validate: Validate) -> Result<Vec<RunSpec>> {
    let err = |key: String, msg: String| CampaignError::input(path, Some(key), msg);
    if raw.is_empty() {
        return Err(err("runs".into(), "a campaign needs at least one [[runs]]".into()));
    }
    let mut out: Vec<RunSpec> = Vec::new();
    for (i, r) in raw.iter().enumerate() {
        let key = format!("runs[{i}]");
        if out.iter().any(|o| o.name == r.name) {
            return Err(err(format!("{key}.name"), format!("'{}' names two runs", r.name)));
        }
        check_command(&r.command).map_err(|m| err(format!("{key}.command"), m))?;
        let options = options_argv(&r.options).map_err(|(k, m)| err(format!("{key}.options.{k}"), m))?;
        let argv: Vec<String> =
            [r.command.clone(), "SYSTEM.toml".into()].into_iter().chain(options.iter().cloned()).collect();
        validate(&argv).map_err(|m| err(format!("{key}.options"), m))?;
        let mut limits = defaults.clone();
        if let Some(t) = r.timeout {
            limits.timeout = parse_seconds(t).map_err(|m| err(format!("{key}.timeout"), m))?;
        }
        if let Some(m) = &r.memory {
            limits.memory = Some(parse_memory(m).map_err(|m| err(format!("{key}.memory"), m))?);
        }
        out.push(RunSpec { name: r.name.clone(), command: r.command.clone(), options, limits });
    }
    Ok(out)
}

/// The instances of one `[[systems]]` entry, before its matrix.
fn instances(path: &Path, key: &str, dir: &Path, e: &RawSystems, validate: Validate) -> Result<Vec<Instance>> {
    let err = |k: &str, msg: &str| CampaignError::input(path, Some(format!("{key}{k}")), msg);
    let plain = |system: PathBuf, name: String, field: &str| -> Result<Instance> {
        let system_hash = hash_system(path, &format!("{key}.{field}"), dir, &system)?;
        Ok(Instance { name, system, cwd: dir.to_path_buf(), system_hash, overrides: Vec::new() })
    };
    match (&e.file, &e.glob, &e.suite) {
        (Some(file), None, None) => {
            let system = PathBuf::from(file);
            let name = e.name.clone().unwrap_or_else(|| stem(&system));
            Ok(vec![plain(system, name, "file")?])
        }
        (None, Some(pattern), None) => {
            if e.name.is_some() {
                return Err(err(".name", "a glob names its systems by their file stems"));
            }
            let found = glob_relative(dir, pattern).map_err(|m| err(".glob", &m))?;
            found.into_iter().map(|p| plain(p.clone(), stem(&p), "glob")).collect()
        }
        (None, None, Some(suite)) => {
            if e.name.is_some() {
                return Err(err(".name", "a suite names its instances"));
            }
            let suite = load_suite(&dir.join(suite), validate)?;
            let mut out: Vec<Instance> = Vec::new();
            for si in suite.instances {
                let i = si.instance;
                // A suite may run one system with several commands; a campaign brings its own.
                if !out.iter().any(|o| o.cwd.join(&o.system) == i.cwd.join(&i.system) && o.overrides == i.overrides) {
                    out.push(i);
                }
            }
            Ok(out)
        }
        _ => Err(err("", "give exactly one of file, glob or suite")),
    }
}

/// The files a glob matches, sorted, relative to `dir` as the pattern was.
fn glob_relative(dir: &Path, pattern: &str) -> std::result::Result<Vec<PathBuf>, String> {
    let full = dir.join(pattern);
    let full = full.to_str().ok_or("the pattern is not valid UTF-8")?;
    let mut found = Vec::new();
    for entry in glob::glob(full).map_err(|e| format!("malformed glob '{pattern}': {e}"))? {
        let p = entry.map_err(|e| e.to_string())?;
        if p.is_file() {
            found.push(p.strip_prefix(dir).map(Path::to_path_buf).unwrap_or(p));
        }
    }
    if found.is_empty() {
        return Err(format!("'{pattern}' matches no file"));
    }
    found.sort();
    Ok(found)
}

fn values_of_set(set: &IndexMap<String, toml::Value>) -> Vec<(String, String)> {
    set.iter().map(|(k, v)| (k.clone(), override_text(v))).collect()
}

fn matrix(path: &Path, key: &str, dir: &Path, raw: &IndexMap<String, RawValues>) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for (k, values) in raw {
        let list: Vec<String> = match values {
            RawValues::List(items) => items.iter().map(override_text).collect(),
            RawValues::Glob(g) => glob_relative(dir, &g.glob)
                .map_err(|m| CampaignError::input(path, Some(format!("{key}.{k}.glob")), m))?
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
        };
        if list.is_empty() {
            return Err(CampaignError::input(
                path,
                Some(format!("{key}.{k}")),
                "a matrix key needs at least one value",
            ));
        }
        out.push((k.clone(), list));
    }
    Ok(out)
}

/// A value written in the campaign file, for a child that runs in `cwd`: a relative path to an
/// existing file is re-expressed from `cwd`; anything else is kept.
fn relocate(campaign_dir: &Path, cwd: &Path, value: &str) -> String {
    let p = Path::new(value);
    if campaign_dir == cwd || p.is_absolute() {
        return value.to_string();
    }
    match (campaign_dir.join(p).canonicalize(), cwd.canonicalize()) {
        (Ok(target), Ok(base)) => relative_path(&target, &base).display().to_string(),
        _ => value.to_string(),
    }
}

/// `target` relative to `base` (both absolute, lexically).
fn relative_path(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<_> = target.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    out
}

fn stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}

fn last_segment(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(relative_path(Path::new("/a/b/c.onnx"), Path::new("/a/d")), PathBuf::from("../b/c.onnx"));
        assert_eq!(relative_path(Path::new("/a/b/c.onnx"), Path::new("/a/b")), PathBuf::from("c.onnx"));
    }
}
