//! One job: one command on one system with its options and overrides, one repetition; its stable
//! id and its configuration's hash.

use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::time::Duration;

/// The hard limits of one child process.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Wall-clock time after which the child's process group is killed.
    pub timeout: Duration,
    /// Address-space limit (`RLIMIT_AS`) in bytes, if any.
    pub memory: Option<u64>,
}

/// The default time limit of a job when a file sets none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// A job, fully expanded: everything the executor needs and everything the store records.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Its position in the whole job list (shards slice by it; reports sort by it).
    pub ordinal: usize,
    /// Stable hash of what determines the result (see [`job_id`]).
    pub id: String,
    /// The instance's name (a suite instance, a system file's stem, plus its matrix values).
    pub instance: String,
    /// The configuration's name: a campaign's `[[runs]]` name, or the command for suites.
    pub run: String,
    /// `check`, `synth`, ...
    pub command: String,
    /// The system file as written, relative to `cwd`.
    pub system: PathBuf,
    /// SHA-256 of the system file's bytes.
    pub system_hash: String,
    /// `--set` overrides, in order (values as text, paths relative to `cwd`).
    pub overrides: Vec<(String, String)>,
    /// The command's flags (`--method monolithic --threads 1`).
    pub options: Vec<String>,
    pub repetition: u32,
    pub limits: Limits,
    /// The working directory of the child: the directory of the file that wrote the paths.
    pub cwd: PathBuf,
    /// Hash of the configuration (command, options, tool version).
    pub config_hash: String,
    /// A suite's expected verdict.
    pub expect: Option<String>,
    /// A suite's expected status of that verdict (`proven` or `evidence`), if it names one.
    pub expect_status: Option<String>,
    /// A suite's reference figures (stat name to value), shown beside the measured ones.
    pub reference: Vec<(String, f64)>,
}

impl Job {
    /// The child's arguments: `COMMAND SYSTEM OPTIONS... --set K=V... --json`.
    pub fn argv(&self) -> Vec<String> {
        let mut argv = vec![self.command.clone(), self.system.display().to_string()];
        argv.extend(self.options.iter().cloned());
        for (k, v) in &self.overrides {
            argv.push("--set".into());
            argv.push(format!("{k}={v}"));
        }
        argv.push("--json".into());
        argv
    }

    /// The command line, shell-quoted where needed (for `explain` and logs).
    pub fn command_line(&self) -> String {
        std::iter::once("trestle".to_string())
            .chain(self.argv().iter().map(|a| shell_quote(a)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

/// SHA-256 of bytes, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The configuration's hash: command, options and tool version (not the system, not overrides).
pub fn config_hash(command: &str, options: &[String], version: &str) -> String {
    let canon = json!({ "command": command, "options": options, "version": version });
    sha256_hex(canon.to_string().as_bytes())[..16].to_string()
}

/// The job's id: a hash of everything that determines its result: the system file's content,
/// the command, its options, the overrides, the repetition and the tool version. The same job
/// gets the same id in every run, on every machine (paths inside overrides are as written).
pub fn job_id(
    system_hash: &str,
    command: &str,
    options: &[String],
    overrides: &[(String, String)],
    repetition: u32,
    version: &str,
) -> String {
    let canon = json!({
        "system": system_hash,
        "command": command,
        "options": options,
        "overrides": overrides,
        "repetition": repetition,
        "version": version,
    });
    sha256_hex(canon.to_string().as_bytes())[..16].to_string()
}

/// The commands that end with a verdict (the ones a campaign or suite may run).
pub const VERDICT_COMMANDS: [&str; 6] = ["check", "synth", "verify", "ctl", "ltl", "cegar"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_sensitive_to_every_part() {
        let o = vec!["--threads".to_string(), "1".to_string()];
        let s = vec![("init.x".to_string(), "0.5".to_string())];
        let id = job_id("abc", "check", &o, &s, 0, "0.1.0");
        // Pinned: a change of the hashing scheme changes every id in every store.
        assert_eq!(id, job_id("abc", "check", &o, &s, 0, "0.1.0"));
        assert_eq!(id.len(), 16);
        let others = [
            job_id("abd", "check", &o, &s, 0, "0.1.0"),
            job_id("abc", "synth", &o, &s, 0, "0.1.0"),
            job_id("abc", "check", &o[..1], &s, 0, "0.1.0"),
            job_id("abc", "check", &o, &[], 0, "0.1.0"),
            job_id("abc", "check", &o, &s, 1, "0.1.0"),
            job_id("abc", "check", &o, &s, 0, "0.2.0"),
        ];
        for other in others {
            assert_ne!(id, other);
        }
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("--set"), "--set");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
