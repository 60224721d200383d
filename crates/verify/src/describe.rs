//! What a system file was read as: its variables, inputs, actions, constants, networks,
//! controllers, step, regions and properties as one JSON object (`trestle info --json`, the
//! Python package's `System.info()`). Expressions are printed back with the file's names.

use serde_json::{Value, json};
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
