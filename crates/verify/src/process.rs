//! What a command-line front end of the driver guarantees of its process: it stops cleanly on
//! SIGINT (Ctrl-C), SIGTERM and SIGHUP, ends near its time limit even when an engine does not
//! ([`backstop`]), prints exactly one JSON object under `--json` ([`OUTPUT`]), and reports a
//! panic as an internal error, or as "out of memory" when a resource ran out ([`panic_hook`],
//! [`panic_report`]). The CLI installs all of it; the Python package uses [`panic_report`].
//!
//! No signal handler runs any code of ours: the signals are blocked in the main thread before any
//! other thread exists (every thread inherits the mask, Z3's and rayon's included), and one
//! thread takes them synchronously with `sigwait`. It is an ordinary thread, so it may lock and
//! print: it waits until no result file is being written (`atomic_output::stop_writes`, which
//! also blocks every later write), reports the interruption (one JSON error object with `--json`,
//! unless the run's own object is already out), and ends the process with `_exit(128 + signal)`,
//! without running exit handlers that could race with threads still inside Z3 or the thread
//! pool. Z3 queries need no interrupt: the process ends, and Z3's own SIGINT handling is off
//! (`trestle-smt` sets `ctrl_c=false`; it raced between threads and could jump through a stale
//! pointer).

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Held while stdout gets the run's result; `true` once the one JSON object has been printed.
pub static OUTPUT: Mutex<bool> = Mutex::new(false);

/// What an interruption leaves, when the command says more than "stopped without a verdict" (a
/// campaign: where its finished jobs are and how to run the rest).
static STOPPED: Mutex<Option<String>> = Mutex::new(None);

/// Sets what the interruption message says the run leaves (see [`STOPPED`]).
pub fn set_stopped(what: String) {
    if let Ok(mut s) = STOPPED.lock() {
        *s = Some(what);
    }
}

/// How long the interrupt waits for a result being printed to finish before it gives up on its
/// own message (the printer may be blocked on a full pipe).
const PRINT_WAIT: Duration = Duration::from_secs(2);

/// Blocks the stop signals in this thread (call it before any other thread is started) and starts
/// the thread that handles them. `json`: report as one JSON error object on stdout.
pub fn install(json: bool) {
    let set = stop_signals();
    // SAFETY: `set` is an initialised signal set; the call changes this thread's mask only.
    let blocked = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) } == 0;
    if !blocked {
        return; // The default actions stay in place: the process still stops.
    }
    let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
        loop {
            let mut signal = 0;
            // SAFETY: `set` and `signal` are valid for the call.
            if unsafe { libc::sigwait(&set, &mut signal) } == 0 {
                stop(signal, json);
            }
        }
    });
    if spawned.is_err() {
        // Without the thread the signals must not stay blocked.
        // SAFETY: as above.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
    }
}

fn stop_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set before sigaddset reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

fn stop(signal: i32, json: bool) -> ! {
    atomic_output::stop_writes();
    let name = match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    };
    let stopped = STOPPED.try_lock().ok().and_then(|s| s.clone());
    let message = format!("interrupted by {name}: {}", stopped.as_deref().unwrap_or("stopped without a verdict"));
    if json && let Some(mut printed) = wait_for_output() {
        if !*printed {
            print_error_json("interrupted", &message);
            *printed = true;
        }
        eprintln!("\nerror: {message}");
        // SAFETY: ends the process at once; the output lock stays held, so nothing else prints.
        unsafe { libc::_exit(128 + signal) }
    }
    // Text output is not waited for: an interrupted report may stop mid-way.
    eprintln!("\nerror: {message}");
    // SAFETY: as above.
    unsafe { libc::_exit(128 + signal) }
}

/// The output lock, unless it stays taken for [`PRINT_WAIT`].
fn wait_for_output() -> Option<std::sync::MutexGuard<'static, bool>> {
    let start = std::time::Instant::now();
    loop {
        match OUTPUT.try_lock() {
            Ok(g) => return Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if start.elapsed() < PRINT_WAIT => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        }
    }
}

/// How long past its `--timeout` a run may go on before [`backstop`] ends it: the engines poll
/// the run's budget and stop within a solver's reaction time, so only a run stuck where nothing
/// polls gets this far.
pub const LIMIT_GRACE: Duration = Duration::from_secs(2);

/// Set once the run has its answer and only prints it ([`answered`]).
static ANSWERED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that the run has its answer and only prints it now: the [`backstop`] stands down (the
/// printing of a long answer, such as simulate's exact runs, is not the run overrunning).
pub fn answered() {
    ANSWERED.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// The system a [`backstop`] result names (set once the system file is read).
static SYSTEM: Mutex<Option<String>> = Mutex::new(None);

/// Records the name of the system being run, for a [`backstop`] result.
pub fn set_system(name: &str) {
    if let Ok(mut s) = SYSTEM.lock() {
        *s = Some(name.to_string());
    }
}

/// `verify`'s rows, one per property asked: unknown (time limit) until the property is decided
/// ([`decided`]). Set, the [`backstop`] prints them in `verify`'s shape.
static ROWS: Mutex<Option<Vec<trestle_core::RunResult>>> = Mutex::new(None);

/// Sets the rows a [`backstop`] prints for `verify`: every property asked, not yet decided.
pub fn set_rows(rows: Vec<trestle_core::RunResult>) {
    if let Ok(mut r) = ROWS.lock() {
        *r = Some(rows);
    }
}

/// A property of `verify` is decided: its row replaces the undecided one (see [`set_rows`]).
pub fn decided(result: &trestle_core::RunResult) {
    if let Ok(mut rows) = ROWS.lock()
        && let Some(row) = rows.iter_mut().flatten().find(|r| r.property == result.property)
    {
        *row = result.clone();
    }
}

/// What a [`backstop`] prints, and its exit code: the command's own shape with every question
/// still open unknown for the time limit (with `note`).
fn backstop_output(command: &str, json: bool, note: &str) -> (String, i32) {
    let system = SYSTEM.lock().ok().and_then(|s| s.clone()).unwrap_or_default();
    let rows = ROWS.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(mut rows) = rows {
        for r in rows.iter_mut().filter(|r| r.reason_kind.as_deref() == Some("time-limit") && r.method == "none") {
            r.details.insert("note".into(), note.into());
        }
        let code = match crate::properties::Verification::worst(&rows) {
            trestle_core::Status::Refuted => 1,
            trestle_core::Status::Proven => 0,
            _ => 3,
        };
        let text = if json {
            let doc = serde_json::json!({ "system": system, "results": rows });
            format!("{}\n", serde_json::to_string_pretty(&doc).expect("results serialise"))
        } else {
            crate::render::verification(&system, &rows)
        };
        return (text, code);
    }
    let mut r = trestle_core::RunResult::new(command, &system, "none", "unknown", trestle_core::Status::Unknown);
    r.set_unknown(&trestle_core::Unknown::Timeout);
    r.details.insert("note".into(), note.into());
    let text = if json {
        format!("{}\n", serde_json::to_string_pretty(&r).expect("results serialise"))
    } else {
        crate::render::text(&r)
    };
    (text, 3)
}

/// Ends the process [`LIMIT_GRACE`] after `timeout` seconds from now, unless it has ended by
/// itself: the result is `unknown`, "time limit reached", exit 3, as the engines' own answer
/// to the limit would be, in the shape of the command's own output (`verify`: its rows, the
/// properties decided by then with their results, exit code by `verify`'s rule). The guarantee
/// that a run ends near its limit cannot rest on every engine loop alone: Z3's non-linear arithmetic does not always act on an interrupt
/// (`check --timeout 30` on configs/systems/arch-attitude-sigmoid.toml sat in one query for
/// minutes after its watchdog had interrupted it at the deadline). Like the signals, it waits
/// for a result file being written; once the run's own result is printed it does nothing.
pub fn backstop(timeout: Option<f64>, json: bool, command: &'static str) {
    let Some(end) = timeout
        .and_then(|t| Duration::try_from_secs_f64(t).ok())
        .and_then(|t| Instant::now().checked_add(t + LIMIT_GRACE))
    else {
        return; // No limit, or one the command refuses (its own error says why) or never reaches.
    };
    let _ = std::thread::Builder::new().name("time-limit".into()).spawn(move || {
        loop {
            let now = Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep(end - now);
        }
        let printed = wait_for_output();
        if ANSWERED.load(std::sync::atomic::Ordering::SeqCst) || printed.as_ref().is_some_and(|p| **p) {
            return; // The run's result is decided or out: it ends with its own exit code.
        }
        atomic_output::stop_writes();
        let note = format!(
            "the run did not stop by itself within {} s of its time limit and was ended",
            LIMIT_GRACE.as_secs()
        );
        let (text, code) = backstop_output(command, json, &note);
        if let Some(mut printed) = printed {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "{text}");
            let _ = out.flush();
            *printed = true;
        }
        eprintln!("note: {note}");
        // SAFETY: ends the process at once, as `stop` does: threads may still be inside Z3.
        unsafe { libc::_exit(code) }
    });
}

/// The one JSON object of a run that ended in an error. (Also printed by the interrupt, which
/// holds the output lock itself.)
pub fn print_error_json(kind: &str, message: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::json!({ "error": { "kind": kind, "message": message } }));
    let _ = out.flush();
}

/// Where the last panic happened, for the internal-error report (the default hook's message and
/// backtrace are replaced by one clear line).
static PANIC_LOCATION: Mutex<Option<String>> = Mutex::new(None);

/// Set when a panic was a resource running out (a Z3 context or a thread that could not be
/// created), in whichever thread it happened: the run ends with "out of memory", exit 3. Scoped
/// threads hand their panics on as "a scoped thread panicked", so the hook, which sees the
/// original payload, is where this is known.
static OUT_OF_MEMORY: Mutex<Option<String>> = Mutex::new(None);

/// The message of a panic that is a resource running out, not a bug.
fn resource_panic(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    if let Some(oom) = payload.downcast_ref::<trestle_smt::OutOfMemory>() {
        return Some(oom.to_string());
    }
    let text =
        payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied())?;
    // A thread that could not be created (its stack could not be mapped: EAGAIN under an
    // address-space or process limit): std's spawn, or rayon's global pool, which panics with its
    // build error on first use.
    let thread = text.starts_with("failed to spawn thread")
        || (text.contains("ThreadPoolBuildError") && text.contains("IOError"));
    thread.then(|| {
        let first = text.lines().next().unwrap_or_default();
        format!("out of memory: could not start a thread: {first} (the process's memory, address-space or thread limit is too low)")
    })
}

/// Replaces the default panic hook (its message and backtrace) by one that records where the
/// panic happened and whether it was a resource running out, for [`panic_report`].
pub fn panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut slot) = PANIC_LOCATION.lock() {
            *slot = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
        }
        if let Some(message) = resource_panic(info.payload())
            && let Ok(mut slot) = OUT_OF_MEMORY.lock()
        {
            slot.get_or_insert(message);
        }
    }));
}

/// What a panic of a run was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PanicReport {
    /// A resource ran out (exit 3, "out of memory: ..."): not a bug, nothing claimed.
    OutOfMemory(String),
    /// A bug (exit 4), with the message the user sees.
    Internal(String),
}

/// The report of a run's panic, from its payload (and, when [`panic_hook`] is installed, what
/// the hook saw: the place, and a resource that ran out in another thread).
pub fn panic_report(payload: &(dyn std::any::Any + Send)) -> PanicReport {
    let recorded = OUT_OF_MEMORY.lock().ok().and_then(|m| m.clone());
    if let Some(message) = recorded.or_else(|| resource_panic(payload)) {
        return PanicReport::OutOfMemory(message);
    }
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    let at = PANIC_LOCATION.lock().ok().and_then(|l| l.clone()).map(|l| format!(" at {l}")).unwrap_or_default();
    PanicReport::Internal(format!("internal error (a bug in trestle, please report it): {msg}{at}"))
}
