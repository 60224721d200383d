//! Running the `trestle` binary under resource limits, for the flag fuzzer (`fuzz_flags`): an
//! address-space limit set in the child before `exec` (as `prlimit --as` does), its own process
//! group (so a wall-clock kill also ends the jobs a campaign or suite started), and its peak
//! resident memory from `wait4`.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a limited run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
    /// The wall-clock limit passed and the process group was killed.
    Killed,
}

/// One limited run: how it ended, what it printed (the first `KEEP` bytes of each stream), how
/// long it took and its peak resident set.
#[derive(Clone, Debug)]
pub struct LimitedRun {
    pub ended: Ended,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
    pub max_rss_mib: u64,
}

/// Bytes of each stream kept; the rest is read and dropped, so a command that prints without
/// end neither blocks on a full pipe nor fills the test's memory.
const KEEP: usize = 1 << 20;

fn drain(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 1 << 16];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            let room = KEEP.saturating_sub(kept.len()).min(n);
            kept.extend_from_slice(&buf[..room]);
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// Runs `trestle ARGS` in `dir` with at most `address_space` bytes of virtual memory (glibc held
/// to two malloc arenas, as the campaign runner holds its jobs, so the figure does not grow with
/// the machine's cores), killing its whole process group after `wall`.
pub fn run_limited(args: &[String], dir: &Path, address_space: u64, wall: Duration) -> LimitedRun {
    let start = Instant::now();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trestle"));
    cmd.args(args)
        .current_dir(dir)
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setpgid and setrlimit are async-signal-safe; the limit is copied in before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let rl = libc::rlimit { rlim_cur: address_space, rlim_max: address_space };
            if libc::setpgid(0, 0) != 0 || libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("the trestle binary starts");
    let pid = child.id() as libc::pid_t;
    let out = drain(child.stdout.take().expect("piped stdout"));
    let err = drain(child.stderr.take().expect("piped stderr"));
    let mut status = 0;
    // SAFETY: rusage is plain data, filled in by wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut killed = false;
    loop {
        // SAFETY: waits for our own child only; `status` and `usage` outlive the call.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4: {}", std::io::Error::last_os_error());
        if !killed && start.elapsed() > wall {
            killed = true;
            // SAFETY: signals the process group the child leads.
            unsafe { libc::killpg(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Whatever the run left behind in its group (a campaign's jobs) ends with it.
    // SAFETY: as above; the group is ours (ESRCH when it is already empty).
    unsafe { libc::killpg(pid, libc::SIGKILL) };
    let ended = if killed {
        Ended::Killed
    } else if libc::WIFEXITED(status) {
        Ended::Code(libc::WEXITSTATUS(status))
    } else {
        Ended::Signal(libc::WTERMSIG(status))
    };
    LimitedRun {
        ended,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        seconds: start.elapsed().as_secs_f64(),
        // ru_maxrss is in KiB on Linux.
        max_rss_mib: (usage.ru_maxrss as u64) >> 10,
    }
}
