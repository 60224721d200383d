//! Running an engine from Python: on a thread of its own with the GIL released, so other Python
//! threads run meanwhile, while the calling thread wakes every [`POLL`] to let Python run its
//! signal handlers. Ctrl-C (or any exception a handler raises) cancels the run's budget: the
//! engines poll its token and stop with nothing claimed; the exception is raised once the run has
//! stopped.
//!
//! The backstop, as the CLI's (`trestle_verify::process::backstop`): the engines poll their
//! budget, but Z3's non-linear arithmetic does not always act on an interrupt, so a run may sit in
//! one query for minutes past its limit. A run still going [`LIMIT_GRACE`] after its `timeout=`
//! answers unknown for the time limit (the value `stuck` builds, in the call's own shape), and one
//! still going that long after Ctrl-C raises the exception. The CLI ends its process there; a
//! Python caller's process goes on, so the run's thread is left to finish in the background (a
//! thread cannot be stopped from outside), its result dropped. That is why the run owns what it
//! reads (`'static`).

use crate::errors::{InternalError, driver_error};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use trestle_core::Budget;
use trestle_verify::DriverError;
use trestle_verify::process::{LIMIT_GRACE, PanicReport};

/// How often the waiting thread checks Python's signals.
const POLL: Duration = Duration::from_millis(50);

/// The engine thread's stack: the CLI runs its engines on the main thread (8 MiB by default);
/// deep formulas and networks recurse, so the run gets more than a spawned thread's 2 MiB.
const STACK: usize = 64 << 20;

/// What a run left behind by the backstop says of itself (`stuck`'s argument).
pub fn stuck_note() -> String {
    format!(
        "the run did not stop by itself within {} s of its time limit; its thread was left to finish in the background",
        LIMIT_GRACE.as_secs()
    )
}

/// Runs `f` under `budget` (a copy sharing its cancellation) as described in the module doc; its
/// driver error becomes the Python exception. `stuck` is the answer of a run still going
/// [`LIMIT_GRACE`] after `budget`'s deadline.
pub fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    budget: &Budget,
    stuck: impl FnOnce(&str) -> T,
    f: impl FnOnce(&Budget) -> Result<T, DriverError> + Send + 'static,
) -> PyResult<T> {
    let (done, finished) = mpsc::channel::<()>();
    let run_budget = budget.clone();
    let handle = std::thread::Builder::new()
        .name("trestle-run".into())
        .stack_size(STACK)
        .spawn(move || {
            let out = f(&run_budget);
            hang_for_tests();
            let _ = done.send(());
            out
        })
        .map_err(|e| PyMemoryError::new_err(format!("out of memory: could not start a thread: {e}")))?;
    let backstop = budget.deadline().and_then(|d| d.checked_add(LIMIT_GRACE));
    let mut interrupted: Option<(PyErr, Instant)> = None;
    let mut finished = finished;
    loop {
        // A panicking run drops its sender: disconnected means finished too.
        let (rx, waited) = py.detach(move || {
            let waited = finished.recv_timeout(POLL);
            (finished, waited)
        });
        finished = rx;
        if !matches!(waited, Err(mpsc::RecvTimeoutError::Timeout)) {
            break;
        }
        let now = Instant::now();
        match &interrupted {
            Some((_, at)) if now.duration_since(*at) >= LIMIT_GRACE => {
                return Err(interrupted.expect("matched").0);
            }
            Some(_) => {}
            None if backstop.is_some_and(|b| now >= b) => return Ok(stuck(&stuck_note())),
            None => {
                if let Err(e) = py.check_signals() {
                    budget.cancel();
                    interrupted = Some((e, now));
                }
            }
        }
    }
    let joined = py.detach(|| handle.join());
    if let Some((e, _)) = interrupted {
        return Err(e);
    }
    match joined {
        Ok(out) => out.map_err(driver_error),
        Err(panic) => Err(panic_error(panic)),
    }
}

/// Fault injection for the package's own tests (crates/python/tests/test_results.py): with
/// `TRESTLE_TEST_HANG_SECONDS` set, a run goes on for that long after its answer, deaf to its
/// budget, as a Z3 query that ignores its interrupt does; no real case is stuck that cheaply.
const HANG_FOR_TESTS: &str = "TRESTLE_TEST_HANG_SECONDS";

fn hang_for_tests() {
    if let Some(s) = std::env::var(HANG_FOR_TESTS).ok().and_then(|s| s.parse::<f64>().ok()) {
        std::thread::sleep(Duration::from_secs_f64(s));
    }
}

/// A panic of the run: a resource that ran out (a Z3 context or a thread that could not be
/// created) is a `MemoryError`, anything else a bug (`trestle_verify::process::panic_report`, as
/// the CLI reports it).
fn panic_error(panic: Box<dyn std::any::Any + Send>) -> PyErr {
    match trestle_verify::process::panic_report(&*panic) {
        PanicReport::OutOfMemory(message) => PyMemoryError::new_err(message),
        PanicReport::Internal(message) => InternalError::new_err(message),
    }
}
