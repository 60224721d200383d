//! One job as a child process of the trestle binary, under hard limits.
//!
//! The child runs in a process group of its own, so at the time limit the whole group is killed
//! (SIGKILL), solver threads and any grandchildren with it. Its address space is limited with
//! `RLIMIT_AS` and its core dumps are switched off before it starts (`pre_exec`). On Linux it
//! also gets `PR_SET_PDEATHSIG = SIGKILL`: when the runner dies (killed, interrupted), its
//! children die with it instead of running on unobserved; the store then lacks exactly their
//! rows, and `--resume` reruns them.
//!
//! Under a memory limit the child gets `MALLOC_ARENA_MAX=2` (unless the environment sets it):
//! glibc reserves 64 MiB of address space for each thread's arena, unused but counted by
//! `RLIMIT_AS`, so that with a few threads a job needed 700 MiB for a check that uses 100 MiB,
//! and the least limit that worked varied from run to run. With two arenas the limit measures what
//! the job uses. Measured on the shipped examples (2 cores, 6 runs per limit, `prlimit --as`
//! with `MALLOC_ARENA_MAX=2`), the least limit at which every run gave its verdict: `check
//! examples/maze-det.toml` 270 MiB with its default two threads and 240 MiB with `threads = 1`
//! (re-measured in 10 MiB steps for issue 39: 6 of 6 runs safe from those limits up, none at 210
//! to 250 MiB, and a few at 190-200 MiB, where the mappings happen to fit; Z3 wants 64 MiB free
//! before each context, see `trestle_smt::memory`), `cegar blocks4-h16` 200 MiB, `verify
//! frozenlake` 200 MiB, `synth maze-det` and `ctl frozenlake` 100 MiB, `ltl pi-tuned` 80 MiB;
//! without the variable `check` needed 700 MiB. Below that a job ends `memout` (the child's "out of memory", exit 3, or an
//! allocation or thread creation that failed), and below about 64 MiB the binary cannot even be
//! loaded (exit 127, also `memout`). A `memory` of 1 GiB leaves room for every shipped example.
//!
//! The child's stderr is kept as its last 4 KiB, every line cut to 300 characters and every
//! character that is not printable escaped (a child quoting a binary file cannot fill the store
//! or a terminal that shows it).

use crate::job::{Job, Limits};
use crate::outcome::ChildExit;
use crate::store::SystemFacts;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How much of a child's stderr is kept.
const STDERR_TAIL: usize = 4096;
/// How much of a child's stdout is read (a result larger than this is an error).
const STDOUT_CAP: u64 = 256 << 20;

/// Runs one job with `program` (the trestle binary) and waits for it, at most its time limit.
pub fn run_child(program: &Path, job: &Job) -> ChildExit {
    run_child_until(program, job, None).expect("no deadline cuts the job")
}

/// [`run_child`], and the child is killed at `deadline` too (the whole run's time limit): then
/// `None`, the job left unfinished (it is not the job's own outcome, and a resumed run does it).
pub fn run_child_until(program: &Path, job: &Job, deadline: Option<Instant>) -> Option<ChildExit> {
    let start = Instant::now();
    let mut exit = ChildExit {
        code: None,
        signal: None,
        timed_out: false,
        stdout: Vec::new(),
        stderr_tail: String::new(),
        wall_seconds: 0.0,
        timeout: job.limits.timeout,
        memory: job.limits.memory,
    };
    let mut cmd = Command::new(program);
    cmd.args(job.argv()).current_dir(&job.cwd).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.process_group(0);
    let memory = job.limits.memory;
    if memory.is_some() && std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        cmd.env("MALLOC_ARENA_MAX", "2");
    }
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe functions
    // (setrlimit, prctl, getppid, _exit) on values copied before the fork.
    unsafe {
        cmd.pre_exec(move || child_setup(memory, parent));
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            exit.stderr_tail = format!("cannot start {}: {e}", program.display());
            exit.wall_seconds = start.elapsed().as_secs_f64();
            return Some(exit);
        }
    };
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.take(STDOUT_CAP).read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || read_tail(stderr));
    let pid = child.id() as libc::pid_t;
    let mut cut = false;
    loop {
        if has_exited(pid) {
            break;
        }
        if start.elapsed() >= job.limits.timeout {
            exit.timed_out = !has_exited(pid);
            break;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            cut = !has_exited(pid);
            break;
        }
        let wait = poll_interval(start.elapsed());
        std::thread::sleep(deadline.map_or(wait, |d| wait.min(d.saturating_duration_since(now))));
    }
    // Kill the group: the child at its time limit, and any grandchildren left holding the pipes.
    // The child is not reaped yet, so the group id cannot have been reused by another process.
    // SAFETY: plain syscall on the child's process group (its id is the child's pid).
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
    let status = child.wait().ok();
    exit.wall_seconds = start.elapsed().as_secs_f64();
    if let Some(s) = status {
        exit.code = s.code();
        exit.signal = s.signal();
    }
    exit.stdout = out_reader.join().unwrap_or_default();
    exit.stderr_tail = err_reader.join().unwrap_or_default();
    (!cut).then_some(exit)
}

/// What the runner records of a job's system (its name, and its hidden neurons as the size axis of
/// the plots), read by `trestle info --json` in the job's directory with the job's overrides, so
/// relative paths resolve as they do for the job. `None` when it cannot be read: the job itself
/// then reports why.
pub fn probe_system(program: &Path, job: &Job) -> Option<SystemFacts> {
    let probe = Job {
        command: "info".into(),
        options: Vec::new(),
        limits: Limits { timeout: Duration::from_secs(60), memory: job.limits.memory },
        ..job.clone()
    };
    let exit = run_child(program, &probe);
    if exit.code != Some(0) {
        return None;
    }
    let info: serde_json::Value = serde_json::from_slice(&exit.stdout).ok()?;
    let name = info.get("name")?.as_str()?.to_string();
    let networks = info.get("networks")?.as_array()?;
    let neurons = networks.iter().filter_map(|n| n.get("relus").and_then(serde_json::Value::as_u64)).sum();
    Some(SystemFacts { name, neurons })
}

/// Whether the child has exited, without reaping it (`WNOWAIT`): until it is reaped, its pid and
/// process group id stay taken.
fn has_exited(pid: libc::pid_t) -> bool {
    // SAFETY: waitid writes into a zeroed siginfo_t owned here; si_pid is read after success.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT);
        r != 0 || info.si_pid() != 0
    }
}

/// Short polls at first (most jobs are quick), then at most 50 ms.
fn poll_interval(elapsed: Duration) -> Duration {
    if elapsed < Duration::from_millis(200) { Duration::from_millis(5) } else { Duration::from_millis(50) }
}

/// Reads a stream to its end, keeping its last [`STDERR_TAIL`] bytes.
fn read_tail(mut r: impl Read) -> String {
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 2 * STDERR_TAIL {
            tail.drain(..tail.len() - STDERR_TAIL);
        }
    }
    if tail.len() > STDERR_TAIL {
        tail.drain(..tail.len() - STDERR_TAIL);
    }
    atomic_output::input::printable_lines(&String::from_utf8_lossy(&tail), STDERR_LINE)
}

/// Characters kept of each line of a child's stderr.
const STDERR_LINE: usize = 300;

/// In the child, before exec: limits, and death with the runner.
fn child_setup(memory: Option<u64>, parent: libc::pid_t) -> std::io::Result<()> {
    let set = |resource, limit: u64| {
        let rl = libc::rlimit { rlim_cur: limit as libc::rlim_t, rlim_max: limit as libc::rlim_t };
        // SAFETY: setrlimit with a valid pointer to a local struct.
        if unsafe { libc::setrlimit(resource, &rl) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    set(libc::RLIMIT_CORE, 0)?;
    if let Some(bytes) = memory {
        set(libc::RLIMIT_AS, bytes)?;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: prctl and getppid are async-signal-safe syscalls; _exit never returns.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // The runner may have died before the line above: then the child must not run on.
        if libc::getppid() != parent {
            libc::_exit(137);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_end() {
        let text: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let tail = read_tail(text.as_bytes());
        assert!(tail.len() <= STDERR_TAIL);
        assert!(tail.ends_with("line 4999\n"));
        assert_eq!(read_tail(&b"short"[..]), "short");
        // Issue 39, item 15: what a child prints of a file it could not parse is stored printable
        // and cut.
        let hostile = format!("error: at \"{}\x1b[2J\"\n", "x".repeat(10_000));
        let tail = read_tail(hostile.as_bytes());
        assert!(tail.starts_with("…") || tail.len() < 400, "{}", tail.len());
        assert!(!tail.contains('\x1b') && tail.lines().all(|l| l.chars().count() <= 301), "{tail}");
    }
}
