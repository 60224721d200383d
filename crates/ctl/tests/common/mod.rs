//! What both test files of the crate check on every verdict.

use trestle_core::{Budget, Verdict};
use trestle_ctl::{CtlOptions, Method, check_ctl};
use trestle_ir::System;
use trestle_ir::formula::Ctl;

/// Decides `phi` with `method` on two threads; a false verdict must carry runs, each replaying
/// exactly. `what` names the case in failure messages.
pub fn decided(sys: &System, phi: &Ctl, method: Method, what: &str) -> Verdict {
    let opts = CtlOptions { method, threads: 2, ..CtlOptions::default() };
    let r = check_ctl(sys, phi, &opts, &Budget::unlimited()).unwrap_or_else(|e| panic!("{what} ({method:?}): {e}"));
    if let Verdict::Refuted { trace, others } = &r.verdict {
        for t in std::iter::once(trace).chain(others) {
            t.replay(sys).unwrap_or_else(|e| panic!("{what}: a witness does not replay: {e}"));
        }
    }
    r.verdict
}
