//! Warnings about a system that is valid but probably not what its author meant: the silent
//! defaults that can hide a modelling error. A state variable no branch changes keeps its
//! initial value (the file may simply have forgotten its update), and an action or a
//! non-deterministic input nothing reads has no effect on any run (a typo in an update, or a
//! controller output wired to nothing). Front ends print them (`trestle info`, stderr) and can
//! refuse to go on (`--deny-warnings`).

use crate::expr::{Expr, VarRef};
use crate::system::System;

/// The system's warnings, each one sentence.
pub fn warnings(sys: &System) -> Vec<String> {
    let mut out = Vec::new();
    for (i, v) in sys.state.iter().enumerate() {
        let held = sys.step.branches.iter().all(|b| b.updates.get(i) == Some(&Expr::Var(VarRef::State(i))));
        if held && !sys.step.branches.is_empty() {
            out.push(format!(
                "state variable '{}' is never updated: it keeps its initial value on every run (fine for a \
                 parameter; otherwise give it an update in the step)",
                v.name
            ));
        }
    }
    let mut read = Vec::new();
    for b in &sys.step.branches {
        b.updates.iter().for_each(|u| u.visit_vars(&mut |v| read.push(v)));
        if let Some(g) = &b.guard {
            g.visit_vars(&mut |v| read.push(v));
        }
    }
    for c in &sys.controllers {
        c.inputs.iter().for_each(|e| e.visit_vars(&mut |v| read.push(v)));
    }
    for (k, a) in sys.actions.iter().enumerate() {
        let labelled = sys.step.branches.iter().any(|b| b.label.is_some_and(|(action, _)| action == k));
        if !labelled && !read.contains(&VarRef::Action(k)) {
            out.push(format!("action '{}' is never read: no update or guard uses it, so it changes no run", a.name));
        }
    }
    for (k, n) in sys.nondet.iter().enumerate() {
        if !read.contains(&VarRef::Nondet(k)) {
            out.push(format!(
                "non-deterministic input '{}' is never read: no update, guard or observation uses it",
                n.name
            ));
        }
    }
    out
}
