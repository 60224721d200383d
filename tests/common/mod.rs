//! Helpers shared by the planted-truth and metamorphic suites: running the `trestle` binary with
//! a watchdog, and checking what it prints against the IR's exact semantics; `cli` for the
//! command-line regression and fuzz tests.
#![allow(dead_code)]

pub mod certs;
pub mod cli;
pub mod exact;
pub mod help;
pub mod limited;
pub mod onnx;
pub mod sampling;
pub mod truths;

use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Seconds given to every run as `--timeout` and `--smt-timeout`, so a slow engine ends with
/// `unknown` instead of holding up the suite.
pub const RUN_SECONDS: &str = "5";

/// Wall-clock limit after which the harness kills a run (its own time-outs should end it first;
/// a run killed here is reported as a hang).
pub const WATCHDOG: Duration = Duration::from_secs(60);

/// One finished (or killed) run of the binary.
#[derive(Clone, Debug)]
pub struct Run {
    /// The exit code, `None` when a signal ended the process (or the watchdog killed it).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    pub seconds: f64,
}

impl Run {
    /// The one JSON object on stdout (every `--json` run prints one, errors included).
    pub fn json(&self) -> Result<Value, String> {
        serde_json::from_str(&self.stdout).map_err(|e| format!("stdout is not one JSON object ({e}): {}", self.head()))
    }

    /// The verdict field of the JSON object, or "" when absent.
    pub fn verdict(&self) -> String {
        self.json().ok().and_then(|j| j["verdict"].as_str().map(str::to_string)).unwrap_or_default()
    }

    /// The error message of an error object, or the start of stderr.
    pub fn error_message(&self) -> String {
        match self.json().ok().and_then(|j| j["error"]["message"].as_str().map(str::to_string)) {
            Some(m) => m,
            None => self.stderr.lines().next().unwrap_or("").to_string(),
        }
    }

    fn head(&self) -> String {
        self.stdout.chars().take(200).collect()
    }
}

/// Runs `bin ARGS` (the `trestle` binary, or a wrapper such as `prlimit`) in `dir`, killing it after
/// `limit`; both pipes are drained while it runs, so a large output never blocks it.
pub fn run_with_limit(bin: &str, args: &[String], dir: &Path, limit: Duration) -> Run {
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the trestle binary starts");
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).ok();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).ok();
        s
    });
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break status;
        }
        if start.elapsed() > limit {
            timed_out = true;
            child.kill().ok();
            break child.wait().expect("the killed child is reaped");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        code: if timed_out { None } else { status.code() },
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        timed_out,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// Runs `trestle ARGS` with the default watchdog.
pub fn run(bin: &str, args: &[String], dir: &Path) -> Run {
    run_with_limit(bin, args, dir, WATCHDOG)
}

/// Strings from string slices.
pub fn strings(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

/// Runs `jobs` on `workers` threads and returns their results in the jobs' order.
pub fn parallel_map<J: Sync, R: Send>(jobs: &[J], workers: usize, f: impl Fn(&J) -> R + Sync) -> Vec<R> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..workers.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= jobs.len() {
                        break;
                    }
                    let r = f(&jobs[i]);
                    results.lock().expect("no worker panicked holding the lock")[i] = Some(r);
                }
            });
        }
    });
    results.into_inner().expect("no worker panicked").into_iter().map(|r| r.expect("every job ran")).collect()
}

/// Worker threads for a suite: the machine's cores (every run uses one thread unless told).
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}
