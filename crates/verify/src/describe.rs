//! What a system file was read as: its variables, inputs, actions, constants, networks,
//! controllers, step, regions and properties as one JSON object (`trestle info --json`, the
//! Python package's `System.info()`), and as text ([`text`]: `trestle info`, `str(system)`).
//! Expressions are printed back with the file's names.

use serde_json::{Value, json};
use std::fmt::Write as _;
use trestle_ir::num::display_rational;
use trestle_ir::print::Names;
use trestle_ir::system::{ActionKind, ControllerOutput, NondetDomain, Policy, PropertyFormula, System};

/// The system as one JSON object.
pub fn describe(sys: &System) -> Value {
    let names = Names::of(sys);
    let nondet = |d: &NondetDomain| match d {
        NondetDomain::Interval(l, h) => json!({ "interval": [display_rational(l), display_rational(h)] }),
        NondetDomain::Set(s) => json!({ "values": s.iter().map(display_rational).collect::<Vec<_>>() }),
    };
    json!({
        "name": sys.name,
        "description": sys.description,
        "state": sys.state.iter().map(|v| json!({"name": v.name, "type": v.kind.name(), "domain": v.domain.describe()})).collect::<Vec<_>>(),
        "nondet": sys.nondet.iter().map(|v| json!({"name": v.name, "domain": nondet(&v.domain)})).collect::<Vec<_>>(),
        "actions": sys.actions.iter().map(|v| match &v.kind {
            ActionKind::Real => json!({"name": v.name, "type": "real"}),
            ActionKind::Index { labels } => json!({"name": v.name, "type": "argmax", "labels": labels}),
        }).collect::<Vec<_>>(),
        "constants": sys.constants.iter().map(|(n, q)| json!({"name": n, "value": display_rational(q)})).collect::<Vec<_>>(),
        "networks": sys.networks.iter().map(|n| json!({
            "name": n.name, "source": n.network.source, "layers": n.network.sizes(),
            "relus": n.network.relu_count(), "recurrent": n.network.is_recurrent(),
            "activations": n.network.layers.iter().map(|l| l.activation().to_string()).collect::<Vec<_>>(),
            "neurons": n.network.neuron_counts(),
            "notes": n.network.notes,
            "trailing_softmax": n.network.trailing_softmax,
        })).collect::<Vec<_>>(),
        "controllers": sys.controllers.iter().map(|c| json!({
            "name": c.name,
            "networks": sys.controller_networks(c).iter().map(|&i| sys.networks[i].name.clone()).collect::<Vec<_>>(),
            "select_by": match &c.policy { Policy::Select { by, .. } => Some(sys.state[*by].name.clone()), Policy::Network(_) => None },
            "inputs": c.inputs.iter().map(|e| names.expr(e)).collect::<Vec<_>>(),
            "outputs": match &c.output {
                ControllerOutput::Actions(ids) => ids.iter().map(|&i| sys.actions[i].name.clone()).collect::<Vec<_>>(),
                ControllerOutput::Argmax(i) => vec![format!("argmax -> {}", sys.actions[*i].name)],
            },
        })).collect::<Vec<_>>(),
        "step": sys.step.branches.iter().map(|b| json!({
            "name": b.name,
            "guard": b.guard.as_ref().map(|g| names.pred(g)),
            "label": b.label.map(|(a, v)| match &sys.actions[a].kind { ActionKind::Index { labels } => format!("{} == {}", sys.actions[a].name, labels[v]), ActionKind::Real => String::new() }),
            "updates": sys.state.iter().zip(&b.updates).map(|(v, e)| json!({"var": v.name, "next": names.expr(e)})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "init": names.pred(&sys.init),
        "safe": sys.safe.as_ref().map(|p| names.pred(p)),
        "invariant": sys.invariant.as_ref().map(|p| names.pred(p)),
        "properties": sys.properties.iter().map(|p| json!({
            "name": p.name,
            "kind": match &p.formula { PropertyFormula::Ctl(_) => "ctl", PropertyFormula::Ltl(_) => "ltl", PropertyFormula::Invariant(_) => "invariant" },
            "formula": match &p.formula { PropertyFormula::Ctl(f) => names.ctl(f), PropertyFormula::Ltl(f) => names.ltl(f), PropertyFormula::Invariant(f) => names.pred(f) },
        })).collect::<Vec<_>>(),
        "warnings": trestle_ir::lint::warnings(sys),
    })
}

/// `writeln!` into a `String`, which cannot fail.
macro_rules! put {
    ($out:expr, $($arg:tt)*) => {
        writeln!($out, $($arg)*).expect("writing to a String cannot fail")
    };
}

/// The system as text (`trestle info`, the Python package's `str(system)`): what
/// [`describe`] holds, as a person reads it, and the file's warnings.
pub fn text(sys: &System) -> String {
    let mut out = String::new();
    let names = Names::of(sys);
    put!(
        out,
        "system {}{}",
        sys.name,
        if sys.description.is_empty() { String::new() } else { format!(": {}", sys.description) }
    );
    put!(out, "state:");
    for v in &sys.state {
        put!(out, "  {:<10} {:<5} {}", v.name, v.kind.name(), v.domain.describe());
    }
    if !sys.nondet.is_empty() {
        put!(out, "non-deterministic inputs (fresh every step):");
        for v in &sys.nondet {
            let d = match &v.domain {
                NondetDomain::Interval(l, h) => format!("[{}, {}]", display_rational(l), display_rational(h)),
                NondetDomain::Set(s) => {
                    format!("{{{}}}", s.iter().map(display_rational).collect::<Vec<_>>().join(", "))
                }
            };
            put!(out, "  {:<10} {d}", v.name);
        }
    }
    put!(out, "networks:");
    for n in &sys.networks {
        let sizes: Vec<String> = n.network.sizes().iter().map(|s| s.to_string()).collect();
        let counts: Vec<String> = n.network.neuron_counts().iter().map(|(a, k)| format!("{k} {a}")).collect();
        put!(
            out,
            "  {:<14} {}  ({}{})  from {}",
            n.name,
            sizes.join(" -> "),
            if counts.is_empty() { "affine".to_string() } else { counts.join(", ") },
            if n.network.is_recurrent() { ", recurrent" } else { "" },
            n.network.source
        );
        let acts: Vec<String> = n.network.layers.iter().map(|l| l.activation().to_string()).collect();
        put!(out, "  {:<14} layer activations: {}", "", acts.join(", "));
        if let Some(softmax) = &n.network.trailing_softmax {
            put!(out, "  {:<14} note: the file's last node, {softmax}, is left out (argmax controllers only)", "");
        }
        for note in &n.network.notes {
            put!(out, "  {:<14} note: {note}", "");
        }
    }
    for c in &sys.controllers {
        let nets: Vec<String> = sys.controller_networks(c).iter().map(|&i| sys.networks[i].name.clone()).collect();
        let how = match &c.policy {
            Policy::Network(_) => nets.join(""),
            Policy::Select { by, .. } => format!("one of [{}] selected by {}", nets.join(", "), sys.state[*by].name),
        };
        put!(out, "controller {}: {}", c.name, how);
        put!(out, "  inputs:  {}", c.inputs.iter().map(|e| names.expr(e)).collect::<Vec<_>>().join(", "));
        match &c.output {
            ControllerOutput::Actions(ids) => {
                put!(
                    out,
                    "  outputs: {}",
                    ids.iter().map(|&i| sys.actions[i].name.as_str()).collect::<Vec<_>>().join(", ")
                )
            }
            ControllerOutput::Argmax(i) => {
                let ActionKind::Index { labels } = &sys.actions[*i].kind else { unreachable!("validated") };
                put!(out, "  output:  {} = argmax over [{}]", sys.actions[*i].name, labels.join(", "));
            }
        }
    }
    put!(out, "step ({} branch{}):", sys.step.branches.len(), if sys.step.branches.len() == 1 { "" } else { "es" });
    for b in &sys.step.branches {
        let mut cond = Vec::new();
        if let Some((a, v)) = b.label
            && let ActionKind::Index { labels } = &sys.actions[a].kind
        {
            cond.push(format!("{} == {}", sys.actions[a].name, labels[v]));
        }
        if let Some(g) = &b.guard {
            cond.push(names.pred(g));
        }
        let when = if cond.is_empty() { String::new() } else { format!(" when {}", cond.join(" and ")) };
        put!(out, "  {}{when}:", b.name);
        for (v, e) in sys.state.iter().zip(&b.updates) {
            put!(out, "    {}' = {}", v.name, names.expr(e));
        }
    }
    put!(out, "init:      {}", names.pred(&sys.init));
    if let Some(s) = &sys.safe {
        put!(out, "safe:      {}", names.pred(s));
    }
    if let Some(i) = &sys.invariant {
        put!(out, "invariant: {}", names.pred(i));
    }
    for p in &sys.properties {
        put!(out, "property {}: {}", p.name, p.text.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    for w in trestle_ir::lint::warnings(sys) {
        put!(out, "warning: {w}");
    }
    out
}
