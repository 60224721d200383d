//! Running an engine from Python: on a thread of its own with the GIL released, so other Python
//! threads run meanwhile, while the calling thread wakes every [`POLL`] to let Python run its
//! signal handlers. Ctrl-C (or any exception a handler raises) cancels the run's budget: the
//! engines poll its token and stop with nothing claimed; the exception is raised once the run has
//! stopped.

use crate::errors::{InternalError, driver_error};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;
use std::sync::mpsc;
use std::time::Duration;
use trestle_core::Budget;
use trestle_verify::DriverError;
use trestle_verify::process::PanicReport;

/// How often the waiting thread checks Python's signals.
const POLL: Duration = Duration::from_millis(50);

/// The engine thread's stack: the CLI runs its engines on the main thread (8 MiB by default);
/// deep formulas and networks recurse, so the run gets more than a spawned thread's 2 MiB.
const STACK: usize = 64 << 20;

/// Runs `f` as described in the module doc; its driver error becomes the Python exception.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    budget: &Budget,
    f: impl FnOnce() -> Result<T, DriverError> + Send,
) -> PyResult<T> {
    std::thread::scope(|scope| {
        let (done, finished) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("trestle-run".into())
            .stack_size(STACK)
            .spawn_scoped(scope, move || {
                let out = f();
                let _ = done.send(());
                out
            })
            .map_err(|e| PyMemoryError::new_err(format!("out of memory: could not start a thread: {e}")))?;
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
            if let Err(e) = py.check_signals() {
                budget.cancel();
                let _ = py.detach(|| handle.join());
                return Err(e);
            }
        }
        match py.detach(|| handle.join()) {
            Ok(out) => out.map_err(driver_error),
            Err(panic) => Err(panic_error(panic)),
        }
    })
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
