//! Suite files: a list of instances, each a system (with overrides) run by one command, with the
//! verdict it must give and optional reference figures.
//!
//! ```toml
//! [suite]
//! name = "peer-maze"
//! command = "check"          # the default command of an instance
//! timeout = 120              # seconds per job (hard kill); default 600
//! memory = "4GiB"            # address-space limit per job; default none
//! slowdown = 2.0             # against a baseline: slower than 2x ...
//! slack = 0.5                # ... and by more than 0.5 s is a regression
//!
//! [options.check]            # flags of every `check` instance
//! threads = 1
//!
//! [[instance]]
//! name = "det-2x32"
//! system = "../systems/peer-maze-det.toml"        # relative to this file
//! set = { "controller.model" = "../../../shared/models/maze/det/maze_2d_32x32.onnx" }
//! expect = "safe"             # leave out when the truth is not established
//! reference = { splits = 2 }  # optional figures shown beside the measured ones
//!
//! [[instance]]
//! name = "pi-g20"
//! command = "ltl"
//! system = "../systems/pi-tuned.toml"
//! options = { formula = "G<=20 (-0.5 <= x <= 0.5)" }
//! expect = "true"
//! expect_status = "evidence"  # optional: "proven" or "evidence" (a MILP's floating-point answer)
//! ```
//!
//! The name is a plain name (letters, digits, `-`, `_`): it names the results directory.
//! `expect` is one of the command's verdicts ([`verdicts`]): `check` says `safe`,
//! `safe-by-milp-evidence`, `not-inductive`, `unsafe-candidate` or `unknown`; `synth` and `cegar`
//! `safe`, `unsafe` or `unknown`; `ctl`, `ltl` and `verify` `true`, `false` or `unknown`. Without
//! `expect_status`, a verdict that holds passes on a proof and on floating-point evidence alike.

use crate::error::{CampaignError, Result};
use crate::job::{DEFAULT_TIMEOUT, Job, Limits, VERDICT_COMMANDS, config_hash, job_id};
use crate::options::{options_argv, override_text, parse_memory, parse_seconds};
use crate::plan::{Instance, Plan, PlanKind, Tolerance, base_dir, check_name, hash_system, read_toml};
use crate::report::ReportSpec;
use indexmap::IndexMap;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuiteFile {
    suite: RawSuite,
    #[serde(default)]
    options: IndexMap<String, IndexMap<String, toml::Value>>,
    #[serde(default)]
    instance: Vec<RawInstance>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: String,
    #[serde(default)]
    description: String,
    command: Option<String>,
    timeout: Option<f64>,
    memory: Option<String>,
    slowdown: Option<f64>,
    slack: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInstance {
    name: String,
    system: String,
    #[serde(default)]
    set: IndexMap<String, toml::Value>,
    command: Option<String>,
    #[serde(default)]
    options: IndexMap<String, toml::Value>,
    expect: Option<String>,
    expect_status: Option<String>,
    #[serde(default)]
    reference: IndexMap<String, f64>,
    timeout: Option<f64>,
}

/// One suite instance as read (before it becomes a job).
#[derive(Clone, Debug)]
pub struct SuiteInstance {
    pub instance: Instance,
    pub command: String,
    pub options: Vec<String>,
    pub expect: Option<String>,
    /// `proven` or `evidence`: what the expected verdict must rest on (any, when absent).
    pub expect_status: Option<String>,
    pub reference: Vec<(String, f64)>,
    pub limits: Limits,
}

/// A suite file, read and checked.
#[derive(Clone, Debug)]
pub struct Suite {
    pub path: PathBuf,
    pub text: String,
    pub name: String,
    pub description: String,
    pub tolerance: Tolerance,
    pub instances: Vec<SuiteInstance>,
}

/// Checks a command line (`COMMAND SYSTEM FLAGS...`) the way the CLI would parse it.
pub type Validate<'a> = &'a dyn Fn(&[String]) -> std::result::Result<(), String>;

/// Reads a suite file; every option set is checked by `validate`.
pub fn load_suite(path: &Path, validate: Validate) -> Result<Suite> {
    let (raw, text): (RawSuiteFile, String) = read_toml(path)?;
    let err = |key: String, msg: String| CampaignError::input(path, Some(key), msg);
    let cwd = base_dir(path)?;
    let s = &raw.suite;
    check_name(path, "suite.name", &s.name)?;
    let timeout = s.timeout.map(parse_seconds).transpose().map_err(|m| err("suite.timeout".into(), m))?;
    let memory = s.memory.as_deref().map(parse_memory).transpose().map_err(|m| err("suite.memory".into(), m))?;
    let mut tolerance = Tolerance::default();
    if let Some(f) = s.slowdown {
        if !(f >= 1.0 && f.is_finite()) {
            return Err(err("suite.slowdown".into(), "a factor of at least 1".into()));
        }
        tolerance.slowdown = f;
    }
    if let Some(slack) = s.slack {
        if !(slack >= 0.0 && slack.is_finite()) {
            return Err(err("suite.slack".into(), "a non-negative number of seconds".into()));
        }
        tolerance.slack = slack;
    }
    if raw.instance.is_empty() {
        return Err(err("instance".into(), "a suite needs at least one [[instance]]".into()));
    }
    let mut instances = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (i, r) in raw.instance.iter().enumerate() {
        let key = format!("instance[{i}]");
        if !names.insert(r.name.clone()) {
            return Err(err(format!("{key}.name"), format!("'{}' names two instances", r.name)));
        }
        let command = r.command.clone().or_else(|| s.command.clone()).unwrap_or_else(|| "check".into());
        check_command(&command).map_err(|m| err(format!("{key}.command"), m))?;
        check_expectation(&command, r.expect.as_deref(), r.expect_status.as_deref())
            .map_err(|(field, m)| err(format!("{key}.{field}"), m))?;
        let mut opts = raw.options.get(&command).cloned().unwrap_or_default();
        opts.extend(r.options.clone());
        let options = options_argv(&opts).map_err(|(k, m)| err(format!("{key}.options.{k}"), m))?;
        let system = PathBuf::from(&r.system);
        let argv: Vec<String> =
            [command.clone(), r.system.clone()].into_iter().chain(options.iter().cloned()).collect();
        validate(&argv).map_err(|m| err(format!("{key}.options"), m))?;
        let system_hash = hash_system(path, &format!("{key}.system"), &cwd, &system)?;
        let overrides = r.set.iter().map(|(k, v)| (k.clone(), override_text(v))).collect();
        let job_timeout = r.timeout.map(parse_seconds).transpose().map_err(|m| err(format!("{key}.timeout"), m))?;
        instances.push(SuiteInstance {
            instance: Instance { name: r.name.clone(), system, cwd: cwd.clone(), system_hash, overrides },
            command,
            options,
            expect: r.expect.clone(),
            expect_status: r.expect_status.clone(),
            reference: r.reference.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            limits: Limits { timeout: job_timeout.or(timeout).unwrap_or(DEFAULT_TIMEOUT), memory },
        });
    }
    Ok(Suite {
        path: path.to_path_buf(),
        text,
        name: s.name.clone(),
        description: s.description.clone(),
        tolerance,
        instances,
    })
}

/// The verdicts a command prints (its own words; the status says what each rests on).
pub fn verdicts(command: &str) -> &'static [&'static str] {
    match command {
        "check" => &["safe", "safe-by-milp-evidence", "not-inductive", "unsafe-candidate", "unknown"],
        "synth" | "cegar" => &["safe", "unsafe", "unknown"],
        "ctl" | "ltl" | "verify" => &["true", "false", "unknown"],
        _ => &[],
    }
}

/// Verdicts that say the property holds: the only ones an `expect_status` may qualify.
const HOLDS: [&str; 2] = ["safe", "true"];

/// An instance's `expect` must be a verdict its command can give (`maybe` would fail the
/// instance on every run), and `expect_status` (`proven` or `evidence`) qualifies a verdict that
/// says the property holds. Errors name the field.
fn check_expectation(
    command: &str,
    expect: Option<&str>,
    status: Option<&str>,
) -> std::result::Result<(), (&'static str, String)> {
    let words = verdicts(command);
    if let Some(e) = expect
        && !words.contains(&e)
    {
        return Err(("expect", format!("'{e}' is not a verdict of {command} ({})", words.join(", "))));
    }
    match (status, expect) {
        (None, _) => Ok(()),
        (Some(s), _) if !["proven", "evidence"].contains(&s) => {
            Err(("expect_status", format!("'{s}': expected proven or evidence")))
        }
        (Some(_), Some(e)) if HOLDS.contains(&e) => Ok(()),
        (Some(_), _) => Err((
            "expect_status",
            format!("qualifies an expected verdict that holds ({}); give expect = one of them", HOLDS.join(" or ")),
        )),
    }
}

/// A command a campaign or suite may run.
pub(crate) fn check_command(command: &str) -> std::result::Result<(), String> {
    if VERDICT_COMMANDS.contains(&command) {
        Ok(())
    } else {
        Err(format!("'{command}' is not a command that gives a verdict ({})", VERDICT_COMMANDS.join(", ")))
    }
}

impl Suite {
    /// The suite's plan: one job per instance, in file order.
    pub fn plan(&self, version: &str) -> Result<Plan> {
        let jobs = self
            .instances
            .iter()
            .enumerate()
            .map(|(ordinal, si)| {
                let inst = &si.instance;
                Job {
                    ordinal,
                    id: job_id(&inst.system_hash, &si.command, &si.options, &inst.overrides, 0, version),
                    instance: inst.name.clone(),
                    run: si.command.clone(),
                    command: si.command.clone(),
                    system: inst.system.clone(),
                    system_hash: inst.system_hash.clone(),
                    overrides: inst.overrides.clone(),
                    options: si.options.clone(),
                    repetition: 0,
                    limits: si.limits.clone(),
                    cwd: inst.cwd.clone(),
                    config_hash: config_hash(&si.command, &si.options, version),
                    expect: si.expect.clone(),
                    expect_status: si.expect_status.clone(),
                    reference: si.reference.clone(),
                }
            })
            .collect();
        let plan = Plan {
            kind: PlanKind::Suite,
            name: self.name.clone(),
            description: self.description.clone(),
            path: self.path.clone(),
            text: self.text.clone(),
            version: version.to_string(),
            jobs,
            tolerance: self.tolerance,
            report: ReportSpec::default(),
        };
        plan.check_unique()?;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_are_verdicts_of_the_command() {
        assert!(check_expectation("check", Some("safe"), None).is_ok());
        assert!(check_expectation("ltl", Some("true"), Some("evidence")).is_ok());
        assert!(check_expectation("ctl", None, None).is_ok());
        let (field, m) = check_expectation("check", Some("maybe"), None).unwrap_err();
        assert_eq!(
            (field, m.as_str()),
            (
                "expect",
                "'maybe' is not a verdict of check (safe, safe-by-milp-evidence, not-inductive, unsafe-candidate, unknown)"
            )
        );
        assert_eq!(check_expectation("ltl", Some("safe"), None).unwrap_err().0, "expect");
        assert_eq!(check_expectation("ltl", Some("true"), Some("exact")).unwrap_err().0, "expect_status");
        assert_eq!(check_expectation("ltl", Some("false"), Some("proven")).unwrap_err().0, "expect_status");
        assert_eq!(check_expectation("ltl", None, Some("proven")).unwrap_err().0, "expect_status");
    }
}
