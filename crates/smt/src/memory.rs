//! Z3 contexts under a memory limit.
//!
//! The `z3` crate creates contexts with `Z3_mk_context_rc(..).unwrap()`: when the address space
//! is exhausted (`prlimit --as=300MiB`, a campaign's `memory`), Z3 returns no context and the
//! crate panics with "called `Option::unwrap()` on a `None` value", which the CLI reported as an
//! internal error (a bug). Every context this crate uses is created by [`isolated`] or
//! [`ensure_thread_context`], which turn that failure into a panic whose payload is
//! [`OutOfMemory`]: there is no way to go on without a context, and unwinding is how a worker
//! thread deep inside an engine stops the run. The CLI's panic handling recognises the payload
//! (in whichever thread it was raised) and reports "out of memory", exit 3 ("unknown: a limit
//! was reached"), never a verdict and never an internal error.

use std::panic::{AssertUnwindSafe, catch_unwind, panic_any, resume_unwind};
use std::sync::{Condvar, Mutex};

/// The payload of the panic that ends a run which could not get memory for a Z3 context (or a
/// thread: [`threads_unavailable`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutOfMemory(pub String);

impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn out_of_memory(what: &str) -> ! {
    panic_any(OutOfMemory(format!(
        "out of memory: Z3 could not create {what} (the process's memory or address-space limit is too low)"
    )))
}

/// Ends the run with [`OutOfMemory`] when a pool of worker threads cannot be started: a local
/// pool fails only when a thread cannot be created (EAGAIN: its stack could not be mapped under
/// the memory limit, or the thread limit is reached), which is not a bug of the engine.
pub fn threads_unavailable(e: impl std::fmt::Display) -> ! {
    panic_any(OutOfMemory(format!(
        "out of memory: cannot start worker threads: {e} (the process's memory, address-space or thread limit is too low)"
    )))
}

/// Address space that must be free before a Z3 context is created: Z3 4.8 does not survive
/// every allocation failure inside `Z3_mk_context_rc` (it frees an invalid pointer, or its
/// `out_of_memory_error` escapes and aborts the process), so the run stops cleanly before Z3
/// could run short. A context takes about 16 MiB of address space; a thread's first allocations
/// may also need a new glibc arena. Contexts are created one at a time ([`CREATING`]), so the
/// space one creation found free is not taken by another thread's creation meanwhile (with two
/// workers creating at once, about 1 run in 300 at 180-210 MiB still died inside Z3). Measured
/// with `prlimit --as` on `check examples/maze-det.toml` (10 runs per limit, 80 to 700 MiB):
/// without the probe, runs at 100-120 MiB died of SIGSEGV or SIGABRT inside Z3; with 64 MiB,
/// none of 240 runs crashed (each ended "out of memory", exit 3, or proved the system), and
/// 128 MiB raised the least limit that always proves it by 50 MiB.
const CONTEXT_HEADROOM: usize = 64 << 20;

/// Whether a context is being created (by [`Creating::begin`]); others wait on the condvar.
static CREATING: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// One context creation at a time, released by [`Creating::end`] (not by a guard object: the
/// release happens inside `with_z3_config`'s closure, which must be `Send`).
struct Creating;

impl Creating {
    fn begin() -> Creating {
        let (busy, freed) = &CREATING;
        let mut b = busy.lock().unwrap_or_else(|p| p.into_inner());
        while *b {
            b = freed.wait(b).unwrap_or_else(|p| p.into_inner());
        }
        *b = true;
        Creating
    }

    fn end(self) {
        let (busy, freed) = &CREATING;
        *busy.lock().unwrap_or_else(|p| p.into_inner()) = false;
        freed.notify_one();
    }
}

/// Whether `bytes` of address space can be reserved now (reserved and released at once, no page
/// touched).
fn address_space_free(bytes: usize) -> bool {
    // SAFETY: an anonymous private mapping with no fixed address, unmapped before returning; no
    // memory of the program is touched.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return false;
        }
        libc::munmap(p, bytes);
        true
    }
}

/// Makes sure this thread's default Z3 context exists (solvers and terms outside [`isolated`]
/// use it), or ends the run with [`OutOfMemory`].
pub(crate) fn ensure_thread_context() {
    let creating = Creating::begin();
    let ok = address_space_free(CONTEXT_HEADROOM) && catch_unwind(|| drop(z3::Context::thread_local())).is_ok();
    creating.end();
    if !ok {
        out_of_memory("its context");
    }
}

/// Runs one query in a Z3 context of its own, so an interrupt (time limit) or any state a query
/// leaves behind cannot reach the next one. A context that cannot be created ends the run with
/// [`OutOfMemory`]; a panic inside `f` is passed on as it is.
pub(crate) fn isolated<R: Send + Sync>(f: impl FnOnce() -> R + Send + Sync) -> R {
    ensure_thread_context();
    let creating = Creating::begin();
    if !address_space_free(CONTEXT_HEADROOM) {
        creating.end();
        out_of_memory("a context");
    }
    // `with_z3_config` creates the context, then calls `f`: a panic before `f` starts is the
    // context's creation failing.
    let mut creating = Some(creating);
    let pending = &mut creating;
    let result = catch_unwind(AssertUnwindSafe(|| {
        z3::with_z3_config(&z3::Config::new(), || {
            if let Some(c) = pending.take() {
                c.end();
            }
            f()
        })
    }));
    match result {
        Ok(r) => r,
        Err(payload) => match creating.take() {
            Some(c) => {
                c.end();
                out_of_memory("a context")
            }
            None => resume_unwind(payload),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_inside_a_query_pass_through_unchanged() {
        let caught = catch_unwind(|| isolated(|| panic!("a bug in the query")));
        let payload = caught.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"a bug in the query"));
        assert_eq!(isolated(|| 41 + 1), 42);
    }
}
