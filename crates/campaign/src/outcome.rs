//! What a finished child process means: its verdict and status, read from the one JSON object it
//! printed and checked against its exit code, or the runner's own finding (time-out, out of
//! memory, crash).

use serde_json::{Map, Value};
use std::time::Duration;
use trestle_core::{RunResult, Status};

/// A job's status in the store: the engine's [`Status`] when it gave a verdict, otherwise what
/// stopped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobStatus {
    Proven,
    Evidence,
    Refuted,
    Unknown,
    /// Killed at the job's wall-clock limit.
    Timeout,
    /// Ran out of memory: an allocation failed at the job's limit (or the child said "out of
    /// memory", exit 3, kind `out-of-memory`).
    Memout,
    /// Exit 2: the system, its overrides or the options are wrong.
    InputError,
    /// Exit 4, a crash (signal), an unexpected exit code, or output that contradicts the exit code.
    Error,
    /// Exit 130: interrupted by a signal the child handled.
    Interrupted,
}

pub const ALL_STATUSES: [JobStatus; 9] = [
    JobStatus::Proven,
    JobStatus::Evidence,
    JobStatus::Refuted,
    JobStatus::Unknown,
    JobStatus::Timeout,
    JobStatus::Memout,
    JobStatus::InputError,
    JobStatus::Error,
    JobStatus::Interrupted,
];

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Proven => "proven",
            JobStatus::Evidence => "evidence",
            JobStatus::Refuted => "refuted",
            JobStatus::Unknown => "unknown",
            JobStatus::Timeout => "timeout",
            JobStatus::Memout => "memout",
            JobStatus::InputError => "input-error",
            JobStatus::Error => "error",
            JobStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(text: &str) -> Option<JobStatus> {
        ALL_STATUSES.into_iter().find(|s| s.as_str() == text)
    }

    fn from_engine(s: Status) -> JobStatus {
        match s {
            Status::Proven => JobStatus::Proven,
            Status::Evidence => JobStatus::Evidence,
            Status::Refuted => JobStatus::Refuted,
            Status::Unknown => JobStatus::Unknown,
        }
    }

    /// A verdict that claims something (proven, evidence or refuted).
    pub fn solved(self) -> bool {
        matches!(self, JobStatus::Proven | JobStatus::Evidence | JobStatus::Refuted)
    }

    /// The job did not run to an answer through no limit of its own: a suite fails on these.
    pub fn failed(self) -> bool {
        matches!(self, JobStatus::InputError | JobStatus::Error | JobStatus::Interrupted)
    }
}

/// A finished child, as the executor saw it.
#[derive(Clone, Debug)]
pub struct ChildExit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr_tail: String,
    pub wall_seconds: f64,
    pub timeout: Duration,
    pub memory: Option<u64>,
}

/// What a job gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub status: JobStatus,
    /// The engine's word (`safe`, `not-inductive`, ...); none when it gave no verdict.
    pub verdict: Option<String>,
    pub method: Option<String>,
    /// The system's name as the child reported it.
    pub system_name: Option<String>,
    /// Why nothing is claimed, or what went wrong.
    pub reason: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Wall-clock time of the child, measured by the runner.
    pub wall_seconds: f64,
    pub stats: Map<String, Value>,
    /// The child's JSON object as printed.
    pub result: Option<Value>,
    pub stderr_tail: String,
}

/// Reads a finished child.
pub fn classify(exit: &ChildExit) -> Outcome {
    let json: Option<Value> = serde_json::from_slice(&exit.stdout).ok().filter(Value::is_object);
    let mut out = Outcome {
        status: JobStatus::Error,
        verdict: None,
        method: None,
        system_name: None,
        reason: None,
        exit_code: exit.code,
        signal: exit.signal,
        wall_seconds: exit.wall_seconds,
        stats: Map::new(),
        result: json.clone(),
        stderr_tail: exit.stderr_tail.clone(),
    };
    if exit.timed_out {
        out.status = JobStatus::Timeout;
        out.reason = Some(format!("killed at the time limit of {} s", exit.timeout.as_secs_f64()));
        return out;
    }
    let message = json
        .as_ref()
        .and_then(|v| v.pointer("/error/message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| last_line(&exit.stderr_tail));
    let out_of_memory = exit.memory.is_some() && mentions_memory(&exit.stderr_tail, message.as_deref());
    let error_kind = json.as_ref().and_then(|v| v.pointer("/error/kind")).and_then(Value::as_str);
    match (exit.code, exit.signal) {
        (_, Some(sig)) if out_of_memory => memout(&mut out, exit, sig),
        (_, Some(sig)) => out.reason = Some(format!("killed by signal {sig}{}", signal_name(sig))),
        // The child's own report that it ran out of memory (a Z3 context or a thread it could
        // not create): exit 3, no verdict.
        (Some(3), _) if error_kind == Some("out-of-memory") => {
            out.status = JobStatus::Memout;
            out.reason = message;
        }
        (Some(c @ (0 | 1 | 3)), _) => verdict(&mut out, c, json),
        // A thread or an allocation that failed at the limit, reported by the child as an error
        // of its own (a thread pool it could not build is "unsupported", exit 2, in `ctl`).
        (Some(2 | 4 | 127), _) if out_of_memory => memout(&mut out, exit, 0),
        (Some(2), _) => {
            out.status = JobStatus::InputError;
            out.reason = message;
        }
        (Some(4), _) => out.reason = message.map(|m| format!("internal error: {m}")),
        (Some(130), _) => {
            out.status = JobStatus::Interrupted;
            out.reason = Some("interrupted".into());
        }
        (Some(c), _) => out.reason = Some(format!("unexpected exit code {c}")),
        (None, None) => out.reason = Some("no exit status".into()),
    }
    out
}

fn memout(out: &mut Outcome, exit: &ChildExit, sig: i32) {
    out.status = JobStatus::Memout;
    let limit = exit.memory.map(crate::options::memory_text).unwrap_or_default();
    let how = if sig != 0 { format!(" (signal {sig}{})", signal_name(sig)) } else { String::new() };
    out.reason = Some(format!("out of memory at the limit of {limit}{how}"));
}

/// A verdict exit (0, 1, 3): the printed result must agree with the exit code.
fn verdict(out: &mut Outcome, code: i32, json: Option<Value>) {
    let Some(v) = json else {
        out.reason = Some(format!("exit code {code} but no JSON result on stdout"));
        return;
    };
    let r = match result_of(v) {
        Ok(r) => r,
        Err(why) => {
            out.reason = Some(why);
            return;
        }
    };
    out.method = Some(r.method.clone());
    out.system_name = Some(r.system.clone());
    out.reason = r.reason.clone();
    out.stats = r.stats.into_iter().collect();
    let (status, verdict) = (JobStatus::from_engine(r.status), Some(r.verdict));
    // The README's exit codes: 0 proven, 1 refuted, 3 unknown or only floating-point evidence.
    let agrees = match status {
        JobStatus::Proven => code == 0,
        JobStatus::Evidence | JobStatus::Unknown => code == 3,
        JobStatus::Refuted => code == 1,
        _ => false,
    };
    match verdict {
        Some(word) if agrees => {
            out.status = status;
            out.verdict = Some(word);
        }
        Some(word) => {
            out.reason =
                Some(format!("exit code {code} contradicts the printed verdict '{word}' ({})", status.as_str()));
        }
        None => out.reason = Some(format!("exit code {code} but the printed result has no verdict")),
    }
}

/// The one `trestle-result/1` object a job printed: the object itself, or the one result of a
/// `verify` (`{"system", "results": [..]}`; a job is one question, so `verify` jobs name one
/// property).
fn result_of(v: Value) -> Result<RunResult, String> {
    let v = match v.get("results").and_then(Value::as_array) {
        Some(rs) if rs.len() == 1 => rs[0].clone(),
        Some(rs) => {
            return Err(format!(
                "the job printed {} results; a job answers one question (give `verify` one --property)",
                rs.len()
            ));
        }
        None => v,
    };
    serde_json::from_value::<RunResult>(v)
        .map_err(|e| format!("the printed result is not a trestle-result/1 object: {e}"))
}

/// How an allocation that failed at the address-space limit shows: Rust's allocator, C++'s
/// `bad_alloc` and Z3's `out_of_memory_error` escaping (SIGABRT), the dynamic loader (exit 127)
/// and thread creation (its stack is an allocation too: EAGAIN). Only read when the job had a
/// memory limit.
const OUT_OF_MEMORY: [&str; 9] = [
    "memory allocation of",
    "out of memory",
    "out_of_memory",
    "cannot allocate memory",
    "bad_alloc",
    "failed to map segment",
    "failed to spawn thread",
    "cannot create thread",
    // EAGAIN from a thread's creation (its stack could not be mapped).
    "resource temporarily unavailable",
];

fn mentions_memory(stderr: &str, message: Option<&str>) -> bool {
    let hit = |s: &str| {
        let s = s.to_lowercase();
        OUT_OF_MEMORY.iter().any(|m| s.contains(m))
    };
    hit(stderr) || message.is_some_and(hit)
}

fn last_line(text: &str) -> Option<String> {
    text.lines().rev().map(str::trim).find(|l| !l.is_empty()).map(|l| l.trim_start_matches("error: ").to_string())
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGINT => " (SIGINT)",
        libc::SIGBUS => " (SIGBUS)",
        _ => "",
    }
}

/// A statistic as a number (`seconds`, `splits`, ...), if the job reported it.
pub fn stat_f64(stats: &Map<String, Value>, name: &str) -> Option<f64> {
    stats.get(name).and_then(Value::as_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exit(code: Option<i32>, stdout: Value) -> ChildExit {
        ChildExit {
            code,
            signal: None,
            timed_out: false,
            stdout: stdout.to_string().into_bytes(),
            stderr_tail: String::new(),
            wall_seconds: 0.5,
            timeout: Duration::from_secs(10),
            memory: None,
        }
    }

    fn run_result(verdict: &str, status: Status) -> Value {
        let mut r = RunResult::new("check", "maze", "bridge", verdict, status);
        r.stat("splits", 6).stat("seconds", 0.25);
        serde_json::to_value(r).unwrap()
    }

    #[test]
    fn run_results_are_read_and_checked_against_the_exit_code() {
        let o = classify(&exit(Some(0), run_result("safe", Status::Proven)));
        assert_eq!((o.status, o.verdict.as_deref()), (JobStatus::Proven, Some("safe")));
        assert_eq!(stat_f64(&o.stats, "splits"), Some(6.0));
        // Evidence exits 3 (issue 34, item 2: it was recorded as an error).
        let o = classify(&exit(Some(3), run_result("true", Status::Evidence)));
        assert_eq!((o.status, o.verdict.as_deref()), (JobStatus::Evidence, Some("true")));
        let o = classify(&exit(Some(0), run_result("true", Status::Evidence)));
        assert_eq!(o.status, JobStatus::Error, "evidence is not a proof: exit 0 contradicts it");
        let o = classify(&exit(Some(1), run_result("not-inductive", Status::Refuted)));
        assert_eq!(o.status, JobStatus::Refuted);
        // A "safe" that exits 1, or an "unknown" that exits 0, is a bug in the child: an error,
        // never a verdict.
        let o = classify(&exit(Some(1), run_result("safe", Status::Proven)));
        assert_eq!((o.status, o.verdict.as_deref()), (JobStatus::Error, None));
        assert!(o.reason.unwrap().contains("contradicts"));
        let o = classify(&exit(Some(0), run_result("unknown", Status::Unknown)));
        assert_eq!(o.status, JobStatus::Error);
        let o = classify(&exit(Some(0), json!("not an object")));
        assert_eq!(o.status, JobStatus::Error);
    }

    #[test]
    fn only_run_results_are_read() {
        // The per-command JSON of old versions is no result any more.
        let legacy = json!({ "verdict": "safe", "method": "bridge", "stats": { "splits": 2, "seconds": 0.1 } });
        let o = classify(&exit(Some(0), legacy));
        assert_eq!(o.status, JobStatus::Error);
        assert!(o.reason.unwrap().contains("trestle-result/1"));
        // `verify` of one property: its one result.
        let one = json!({ "system": "maze", "results": [run_result("true", Status::Evidence)] });
        assert_eq!(classify(&exit(Some(3), one)).status, JobStatus::Evidence);
        let two = json!({ "system": "maze", "results": [run_result("safe", Status::Proven), run_result("safe", Status::Proven)] });
        let o = classify(&exit(Some(0), two));
        assert_eq!(o.status, JobStatus::Error);
        assert!(o.reason.unwrap().contains("one --property"));
    }

    #[test]
    fn failures_are_classified() {
        let err = json!({ "error": { "kind": "input", "message": "no such file" } });
        let o = classify(&exit(Some(2), err));
        assert_eq!((o.status, o.reason.as_deref()), (JobStatus::InputError, Some("no such file")));
        let err = json!({ "error": { "kind": "internal", "message": "boom" } });
        assert_eq!(classify(&exit(Some(4), err)).status, JobStatus::Error);
        assert_eq!(classify(&exit(Some(130), Value::Null)).status, JobStatus::Interrupted);
        assert_eq!(classify(&exit(Some(77), Value::Null)).status, JobStatus::Error);
        let mut e = exit(None, Value::Null);
        e.signal = Some(libc::SIGABRT);
        e.stderr_tail = "memory allocation of 4096 bytes failed\n".into();
        assert_eq!(classify(&e).status, JobStatus::Error, "no memory limit: a crash");
        e.memory = Some(1 << 30);
        assert_eq!(classify(&e).status, JobStatus::Memout);
        // At a memory limit, a failed thread spawn (exit 4) or a loader that cannot map a library
        // (exit 127) is a memout; without one, the same exits are errors.
        let mut e = exit(Some(4), Value::Null);
        e.stderr_tail = "error: internal error: failed to spawn thread: Os { code: 11 }\n".into();
        assert_eq!(classify(&e).status, JobStatus::Error);
        e.memory = Some(400 << 20);
        assert_eq!(classify(&e).status, JobStatus::Memout);
        assert_eq!(classify(&e).reason.as_deref(), Some("out of memory at the limit of 400 MiB"));
        let mut e = exit(Some(2), Value::Null);
        e.stderr_tail = "error: unsupported: thread pool: Resource temporarily unavailable (os error 11)\n".into();
        assert_eq!(classify(&e).status, JobStatus::InputError, "no memory limit: the child's word");
        e.memory = Some(100 << 20);
        assert_eq!(classify(&e).status, JobStatus::Memout);
        let mut e = exit(Some(127), Value::Null);
        e.stderr_tail = "trestle: error while loading shared libraries: libstdc++.so.6: failed to map segment\n".into();
        e.memory = Some(40 << 20);
        assert_eq!(classify(&e).status, JobStatus::Memout);
        // The child's own "out of memory" (issue 39, item 7: a Z3 context it could not create),
        // with or without a limit of the runner's.
        let oom =
            json!({ "error": { "kind": "out-of-memory", "message": "out of memory: Z3 could not create a context" } });
        let o = classify(&exit(Some(3), oom));
        assert_eq!(
            (o.status, o.reason.as_deref()),
            (JobStatus::Memout, Some("out of memory: Z3 could not create a context"))
        );
        let mut e = exit(None, Value::Null);
        e.signal = Some(libc::SIGABRT);
        e.memory = Some(300 << 20);
        e.stderr_tail = "terminate called after throwing an instance of '19out_of_memory_error'\n".into();
        assert_eq!(classify(&e).status, JobStatus::Memout);
        let mut e = exit(None, Value::Null);
        e.timed_out = true;
        e.signal = Some(libc::SIGKILL);
        assert_eq!(classify(&e).status, JobStatus::Timeout);
    }
}
