//! Results as text for people: the one renderer of a `trestle-result/1` result, shared by the
//! CLI, `verify`'s per-property sections and the Python package's `str()`. Everything shown is
//! in the result (decimals for reading; the exact values are in its JSON).

use serde_json::Value;
use std::fmt::Write;
use trestle_core::{RunResult, Status, TraceJson};

/// Most boxes listed from an invariant or a set of dropped cells.
const SHOWN: usize = 8;

/// The result as a few lines of text.
pub fn text(r: &RunResult) -> String {
    let mut out = String::new();
    let what = r.property.as_ref().map(|p| format!(" {p}")).unwrap_or_default();
    let _ = writeln!(out, "{}{what}: {} ({}, by {})", r.system, r.verdict.to_uppercase(), r.status.as_str(), r.method);
    match r.status {
        Status::Proven => line(&mut out, r.evidence.as_deref()),
        Status::Evidence => {
            let margin = r.margin.map(|m| format!(" (margin {m:.3e})")).unwrap_or_default();
            let _ = writeln!(out, "  floating-point evidence{margin}, NOT a proof");
            line(&mut out, r.evidence.as_deref());
        }
        Status::Refuted => {}
        Status::Unknown => line(&mut out, r.reason.as_deref().map(|w| format!("unknown: {w}")).as_deref()),
    }
    if let Some(Value::String(s)) = r.details.get("summary")
        && !r.evidence.as_deref().is_some_and(|e| e.starts_with(s.as_str()))
    {
        let _ = writeln!(out, "  {s}");
    }
    if let Some(c) = r.details.get("conditions") {
        conditions(&mut out, c);
    }
    if let Some(t) = &r.trace {
        trace(&mut out, t, r.details.get("formula").and_then(Value::as_str));
    }
    boxes(&mut out, r.details.get("invariant"), "invariant");
    boxes(&mut out, r.details.get("dropped_init"), "cells of Init that had to be dropped");
    if let Some(Value::Array(preds)) = r.details.get("predicates") {
        let _ = writeln!(out, "  predicates ({}):", preds.len());
        for p in preds.iter().filter_map(Value::as_str) {
            let _ = writeln!(out, "    {p}");
        }
    }
    let stats: Vec<String> = r
        .stats
        .iter()
        .filter(|(k, v)| !k.ends_with("seconds") && !v.is_null() && *v != &Value::from(0))
        .map(|(k, v)| format!("{} {}", k.replace('_', " "), plain(v)))
        .collect();
    if !stats.is_empty() {
        let _ = writeln!(out, "  stats: {}", stats.join(", "));
    }
    if let Some(s) = r.stats.get("seconds").and_then(Value::as_f64) {
        let _ = writeln!(out, "  time: {s:.3} s");
    }
    for (kind, path) in &r.artifacts {
        let _ = writeln!(out, "  {kind}: {}", plain(path));
    }
    out
}

/// The results of `verify` as text: a table of every property, then each result not proven in
/// full (the CLI's `verify`, the Python package's `str()` of a verification).
pub fn verification(system: &str, results: &[RunResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "system: {system}");
    let _ = writeln!(out, "{:<16} {:<8} {:<9} {:<13} {:>9}", "property", "verdict", "status", "method", "seconds");
    for r in results {
        let seconds = r.stats.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
        let status =
            r.reason_kind.as_deref().filter(|k| matches!(*k, "unsupported" | "error")).unwrap_or(r.status.as_str());
        let _ = writeln!(
            out,
            "{:<16} {:<8} {:<9} {:<13} {:>9.3}",
            r.property.as_deref().unwrap_or(""),
            r.verdict,
            status,
            r.method,
            seconds
        );
    }
    for r in results.iter().filter(|r| r.status != Status::Proven) {
        out.push('\n');
        out.push_str(&text(r));
    }
    out
}

fn line(out: &mut String, text: Option<&str>) {
    if let Some(t) = text.filter(|t| !t.is_empty()) {
        let _ = writeln!(out, "  {t}");
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => decimal(x),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// A run of `trestle simulate` as an aligned table: the step, the state, the inputs, the actions
/// (by label where the controller names them) and the branch, with a last row for the final state.
pub fn run_table(run: &crate::simulate::Run, sys: &trestle_ir::System) -> String {
    let mut header = vec!["t".to_string()];
    header.extend(sys.state_names());
    header.extend(sys.nondet_names());
    header.extend(sys.action_names());
    let branched = sys.step.branches.len() > 1;
    if branched {
        header.push("branch".into());
    }
    let show = |x: &trestle_ir::num::Rational| decimal(trestle_ir::num::to_f64_nearest(x));
    let mut rows = Vec::new();
    for (t, tr) in run.steps.iter().enumerate() {
        let mut r = vec![t.to_string()];
        r.extend(tr.state.iter().map(show));
        r.extend(tr.nondet.iter().map(show));
        r.extend(
            tr.actions
                .iter()
                .enumerate()
                .map(|(i, v)| trestle_ir::sim::action_label(sys, i, v).unwrap_or_else(|| show(v))),
        );
        if branched {
            r.push(sys.step.branches[tr.branch].name.clone());
        }
        rows.push(r);
    }
    let mut last = vec![run.steps.len().to_string()];
    last.extend(run.last.iter().map(show));
    last.resize(header.len(), String::new());
    rows.push(last);
    let mut out = String::new();
    if !run.start_in_init {
        out.push_str("note: the start state is outside Init\n");
    }
    out.push_str(&table(&header, &rows));
    out
}

/// An aligned text table, right-justified.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.len());
        }
    }
    let line = |cells: &[String]| {
        cells.iter().enumerate().map(|(i, c)| format!("{c:>w$}", w = widths[i])).collect::<Vec<_>>().join("  ")
    };
    let mut out = line(header);
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
        out.push('\n');
    }
    out
}

/// `trestle bounds`: a network's output bounds over an input box of `n_in` dimensions, found by
/// `method`, as JSON and as text. IBP has no linear relaxation: its box is the (constant) linear
/// bound.
pub fn output_bounds(b: &trestle_bounds::OutputBounds, n_in: usize, method: &str) -> (Value, String) {
    use trestle_ir::Matrix;
    let constant = |c: &Vec<f64>| (Matrix::new(c.len(), n_in, vec![0.0; c.len() * n_in]), c.clone());
    let (lower, upper) = match &b.linear {
        Some(l) => ((l.lower.a.clone(), l.lower.c.clone()), (l.upper.a.clone(), l.upper.c.clone())),
        None => (constant(&b.lo), constant(&b.hi)),
    };
    let rows = |m: &Matrix| (0..m.rows).map(|r| m.row(r).to_vec()).collect::<Vec<_>>();
    let json = serde_json::json!({
        "method": method,
        "lo": b.lo,
        "hi": b.hi,
        "linear": {
            "lower": { "A": rows(&lower.0), "c": lower.1 },
            "upper": { "A": rows(&upper.0), "c": upper.1 },
        },
    });
    let mut text = format!("output box ({method}), sound under rounding:\n");
    for i in 0..b.lo.len() {
        let _ = writeln!(text, "  y{i} in [{}, {}]", decimal(b.lo[i]), decimal(b.hi[i]));
    }
    text.push_str("linear bounds over the box:\n");
    let term = |m: &Matrix, c: &[f64], i: usize| {
        let mut t: Vec<String> =
            (0..n_in).filter(|&j| m.get(i, j) != 0.0).map(|j| format!("{}*x{j}", decimal(m.get(i, j)))).collect();
        t.push(decimal(c[i]));
        t.join(" + ")
    };
    for i in 0..b.lo.len() {
        let _ = writeln!(text, "  {} <= y{i} <= {}", term(&lower.0, &lower.1, i), term(&upper.0, &upper.1, i));
    }
    (json, text)
}

/// An f64 for reading: short, never misleading (the exact value is in the JSON).
pub fn decimal(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() >= 1e-4 && x.abs() < 1e7 {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.4e}")
    }
}

fn named(o: &Value) -> String {
    match o {
        Value::Object(m) => m.iter().map(|(k, v)| format!("{k} = {}", plain(v))).collect::<Vec<_>>().join(", "),
        _ => String::new(),
    }
}

fn conditions(out: &mut String, c: &Value) {
    let rows = [
        ("init_implies_inv", "Init => Inv"),
        ("inv_implies_safe", "Inv => Safe"),
        ("inductive", "Inv /\\ Next => Inv'"),
    ];
    for (key, name) in rows {
        let Some(cond) = c.get(key) else { continue };
        let result = cond.get("result").and_then(Value::as_str).unwrap_or("?");
        let mut text = match result {
            "fails" => "FAILS".to_string(),
            "refuted" => "REFUTED".to_string(),
            r => r.to_string(),
        };
        if let Some(why) = cond.get("reason").and_then(Value::as_str) {
            text.push_str(&format!(" ({why})"));
        }
        if let Some(w) = cond.get("witness").and_then(|w| w.get("state")) {
            text.push_str(&format!(" at {}", named(w)));
        }
        let _ = writeln!(out, "  {name:<22} {text}");
    }
}

fn trace(out: &mut String, t: &TraceJson, formula: Option<&str>) {
    let what = match (t.loop_back, t.steps.len()) {
        (Some(j), _) => format!("a lasso (the last state is s{j} again, hidden states included)"),
        (None, 0) => "a state".to_string(),
        (None, n) => format!("a run of {n} step(s)"),
    };
    let about = formula.map(|f| format!(" against {f}")).unwrap_or_default();
    let _ = writeln!(out, "  counterexample{about}: {what}, replayed in {}:", t.replayed);
    for (i, s) in t.states.iter().enumerate() {
        let values: Vec<String> = s.iter().map(|(k, v)| format!("{k} = {}", plain(v))).collect();
        let _ = writeln!(out, "    s{i}: {}", values.join(", "));
        if let Some(step) = t.steps.get(i) {
            let mut parts = Vec::new();
            if !step.actions.is_empty() {
                parts.push(named(&Value::Object(step.actions.clone().into_iter().collect())));
            }
            if !step.labels.is_empty() {
                parts.push(format!("label {}", named(&Value::Object(step.labels.clone().into_iter().collect()))));
            }
            if !step.nondet.is_empty() {
                parts.push(format!("choices {}", named(&Value::Object(step.nondet.clone().into_iter().collect()))));
            }
            parts.push(format!("branch {}", step.branch));
            let _ = writeln!(out, "        -> {}", parts.join("; "));
        }
    }
}

fn boxes(out: &mut String, v: Option<&Value>, what: &str) {
    let Some(Value::Array(bs)) = v else { return };
    if bs.is_empty() {
        return;
    }
    let _ = writeln!(out, "  {what}: {} box(es)", bs.len());
    for b in bs.iter().take(SHOWN) {
        let lo = b.get("lo").and_then(Value::as_array);
        let hi = b.get("hi").and_then(Value::as_array);
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let sides: Vec<String> = lo.iter().zip(hi).map(|(l, h)| format!("[{}, {}]", plain(l), plain(h))).collect();
            let _ = writeln!(out, "    {}", sides.join(" x "));
        }
    }
    if bs.len() > SHOWN {
        let _ = writeln!(out, "    ... ({} more)", bs.len() - SHOWN);
    }
}
