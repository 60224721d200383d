//! A plan: the deterministic job list of a campaign or a suite file, with what the reports need.

use crate::error::{CampaignError, Result};
use crate::job::{Job, sha256_hex};
use crate::report::ReportSpec;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanKind {
    Campaign,
    Suite,
}

impl PlanKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanKind::Campaign => "campaign",
            PlanKind::Suite => "suite",
        }
    }
}

/// The regression settings of a suite: how much slower than the baseline an instance may get.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Slower than `slowdown` × the baseline's time is a regression ...
    pub slowdown: f64,
    /// ... but only when it is also more than `slack` seconds slower (noise on tiny instances).
    pub slack: f64,
}

impl Tolerance {
    /// The tolerance with the slowdown factor `--slowdown` gives, if given (at least 1).
    pub fn with_slowdown(self, slowdown: Option<f64>) -> Result<Tolerance> {
        match slowdown {
            None => Ok(self),
            Some(f) if f >= 1.0 && f.is_finite() => Ok(Tolerance { slowdown: f, ..self }),
            Some(_) => Err(CampaignError::usage("--slowdown must be a factor of at least 1")),
        }
    }
}

impl Default for Tolerance {
    fn default() -> Tolerance {
        Tolerance { slowdown: 2.0, slack: 0.5 }
    }
}

/// The expanded file.
#[derive(Clone, Debug)]
pub struct Plan {
    pub kind: PlanKind,
    pub name: String,
    pub description: String,
    /// The file as given on the command line, and its text (kept in the store with every run,
    /// so reports need nothing but the results directory).
    pub path: PathBuf,
    pub text: String,
    /// The tool version every job id includes.
    pub version: String,
    pub jobs: Vec<Job>,
    pub tolerance: Tolerance,
    pub report: ReportSpec,
}

impl Plan {
    /// The plan's identity: its kind, name and every job id in order. Runs of the same plan can
    /// be resumed and merged; a changed system file, option or tool version makes a new plan.
    pub fn hash(&self) -> String {
        let mut text = format!("{}\n{}\n", self.kind.as_str(), self.name);
        for j in &self.jobs {
            text.push_str(&j.id);
            text.push('\n');
        }
        sha256_hex(text.as_bytes())[..16].to_string()
    }

    /// Refuses two jobs with one id (the same system, command, options and overrides twice).
    pub(crate) fn check_unique(&self) -> Result<()> {
        let mut seen: HashMap<&str, &Job> = HashMap::new();
        for j in &self.jobs {
            if let Some(first) = seen.insert(&j.id, j) {
                return Err(CampaignError::input(
                    &self.path,
                    None,
                    format!(
                        "the same job twice: '{}' / '{}' and '{}' / '{}' run the same command, options and \
                         overrides on the same system",
                        first.instance, first.run, j.instance, j.run
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// One system with its overrides, where its relative paths start.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    pub name: String,
    /// As written, relative to `cwd`.
    pub system: PathBuf,
    /// Absolute: the directory of the file that named the system.
    pub cwd: PathBuf,
    pub system_hash: String,
    pub overrides: Vec<(String, String)>,
}

/// Reads a campaign or suite file into `T`; unknown keys and wrong types are errors naming their
/// key path. Only a regular file of bounded size is read (a FIFO or `/dev/zero` is refused at
/// once), and a syntax error quotes at most a short, printable excerpt of its line.
pub(crate) fn read_toml<T: DeserializeOwned>(path: &Path) -> Result<(T, String)> {
    let kind = atomic_output::input::CAMPAIGN_FILE;
    let text = atomic_output::input::read_text(path, kind)
        .map_err(|e| CampaignError::input(path, None, format!("cannot read the file: {e}")))?;
    let doc: toml::Table = toml::from_str(&text).map_err(|e| {
        let start = e.span().map(|s| s.start);
        CampaignError::input(path, None, atomic_output::input::malformed_toml(path, &text, e.message(), start, kind))
    })?;
    let value: T = serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
        let key = e.path().to_string();
        CampaignError::input(path, (key != ".").then_some(key), e.into_inner().to_string())
    })?;
    Ok((value, text))
}

/// The directory of a file, canonical (relative paths inside the file start there; `..` in a
/// path as written resolves as the kernel resolves it for the child, so `explain` shows where
/// jobs really run).
pub(crate) fn base_dir(path: &Path) -> Result<PathBuf> {
    let abs = std::path::absolute(path).map_err(|e| CampaignError::input(path, None, e.to_string()))?;
    let dir = abs.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}

/// Hashes a system file named relative to `cwd`; `key` locates the name in the file naming it.
pub(crate) fn hash_system(spec: &Path, key: &str, cwd: &Path, system: &Path) -> Result<String> {
    let bytes = atomic_output::input::read(&cwd.join(system), atomic_output::input::SYSTEM_FILE).map_err(|e| {
        CampaignError::input(spec, Some(key.into()), format!("cannot read the system file {}: {e}", system.display()))
    })?;
    Ok(sha256_hex(&bytes))
}

/// A campaign's or suite's name: it names the results directory (`results/campaigns/NAME`) and
/// the Slurm jobs, so it is a plain name (letters, digits, `-` and `_`), as maze names are.
pub(crate) fn check_name(path: &Path, key: &str, name: &str) -> Result<()> {
    if !name.is_empty() && name.len() <= 100 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Ok(());
    }
    Err(CampaignError::input(
        path,
        Some(key.into()),
        format!(
            "'{}': a name of at most 100 letters, digits, '-' and '_' (it names the results directory)",
            atomic_output::input::printable(name, 100)
        ),
    ))
}

/// Every combination of the matrix's values (the last key varies fastest), each as overrides.
pub(crate) fn combinations(matrix: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut out = vec![Vec::new()];
    for (key, values) in matrix {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push((key.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    out
}

/// A short label of an override value: a path's file stem, otherwise the value.
pub(crate) fn short_value(v: &str) -> String {
    let p = Path::new(v);
    let path_like = v.contains('/')
        || p.extension().is_some_and(|e| e.len() <= 5 && e.to_string_lossy().chars().all(char::is_alphabetic));
    if path_like && let Some(stem) = p.file_stem() {
        return stem.to_string_lossy().into_owned();
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_vary_the_last_key_fastest() {
        let m = vec![
            ("a".to_string(), vec!["1".to_string(), "2".to_string()]),
            ("b".to_string(), vec!["x".to_string(), "y".to_string()]),
        ];
        let c = combinations(&m);
        let text: Vec<String> =
            c.iter().map(|c| c.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")).collect();
        assert_eq!(text, ["a=1,b=x", "a=1,b=y", "a=2,b=x", "a=2,b=y"]);
        assert_eq!(combinations(&[]), vec![Vec::new()]);
    }

    #[test]
    fn short_values() {
        assert_eq!(short_value("../shared/models/maze/det/maze_2d_32x32.onnx"), "maze_2d_32x32");
        assert_eq!(short_value("-22.5"), "-22.5");
        assert_eq!(short_value("net.nnet"), "net");
        assert_eq!(short_value("0.5"), "0.5");
    }
}
