//! The JSON shapes engine details take inside a `trestle-result/1` result: boxes, witnesses,
//! side conditions. Decimals for reading, exact rationals (`"3/10"`) for re-checking.

use serde_json::{Value, json};
use trestle_bridge::Condition;
use trestle_bridge::witness::approx;
use trestle_ir::num::display_rational;
use trestle_ir::{FBox, Rational, System};
use trestle_smt::Witness;

pub fn box_json(b: &FBox) -> Value {
    json!({ "lo": b.lo, "hi": b.hi })
}

pub fn boxes_json(bs: &[FBox]) -> Value {
    Value::Array(bs.iter().map(box_json).collect())
}

pub fn exact(vals: &[Rational]) -> Value {
    json!(vals.iter().map(display_rational).collect::<Vec<_>>())
}

fn named(names: Vec<String>, vals: &[Rational]) -> Value {
    Value::Object(names.into_iter().zip(approx(vals)).map(|(n, v)| (n, json!(v))).collect())
}

/// A one-step witness (or a single state): named decimals and exact values.
pub fn witness_json(sys: &System, w: &Witness) -> Value {
    let mut o = json!({ "state": named(sys.state_names(), &w.state), "state_exact": exact(&w.state) });
    if !w.next.is_empty() {
        o["action"] = named(sys.action_names(), &w.actions);
        o["action_exact"] = exact(&w.actions);
        o["nondet"] = named(sys.nondet_names(), &w.nondet);
        o["nondet_exact"] = exact(&w.nondet);
        o["branch"] = json!(sys.step.branches[w.branch].name);
        o["next"] = named(sys.state_names(), &w.next);
        o["next_exact"] = exact(&w.next);
        o["replayed"] = json!("exact rational arithmetic");
    }
    o
}

/// A side condition's answer (`None`: not checked).
pub fn condition_json(sys: &System, c: Option<&Condition>) -> Value {
    match c {
        None => json!({ "result": "not checked" }),
        Some(Condition::Proven) => json!({ "result": "proven" }),
        Some(Condition::Fails(w)) => json!({ "result": "fails", "witness": witness_json(sys, w) }),
        Some(Condition::Unknown(r)) => json!({ "result": "unknown", "reason": r.to_string() }),
    }
}
