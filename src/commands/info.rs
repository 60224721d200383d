use crate::args::InfoArgs;
use crate::output::print_json;
use crate::{CliResult, Outcome};
use trestle_ir::num::display_rational;
use trestle_ir::print::Names;
use trestle_ir::system::{ActionKind, ControllerOutput, NondetDomain, Policy, System};

pub fn run(a: &InfoArgs) -> CliResult {
    let sys = super::load(&a.system)?;
    let info = trestle_verify::describe::describe(&sys);
    if a.system.json {
        print_json(&info);
    } else {
        print_text(&sys);
    }
    Ok(Outcome::Done)
}

fn print_text(sys: &System) {
    let names = Names::of(sys);
    println!(
        "system {}{}",
        sys.name,
        if sys.description.is_empty() { String::new() } else { format!(": {}", sys.description) }
    );
    println!("state:");
    for v in &sys.state {
        println!("  {:<10} {:<5} {}", v.name, v.kind.name(), v.domain.describe());
    }
    if !sys.nondet.is_empty() {
        println!("non-deterministic inputs (fresh every step):");
        for v in &sys.nondet {
            let d = match &v.domain {
                NondetDomain::Interval(l, h) => format!("[{}, {}]", display_rational(l), display_rational(h)),
                NondetDomain::Set(s) => {
                    format!("{{{}}}", s.iter().map(display_rational).collect::<Vec<_>>().join(", "))
                }
            };
            println!("  {:<10} {d}", v.name);
        }
    }
    println!("networks:");
    for n in &sys.networks {
        let sizes: Vec<String> = n.network.sizes().iter().map(|s| s.to_string()).collect();
        let counts: Vec<String> = n.network.neuron_counts().iter().map(|(a, k)| format!("{k} {a}")).collect();
        println!(
            "  {:<14} {}  ({}{})  from {}",
            n.name,
            sizes.join(" -> "),
            if counts.is_empty() { "affine".to_string() } else { counts.join(", ") },
            if n.network.is_recurrent() { ", recurrent" } else { "" },
            n.network.source
        );
        let acts: Vec<String> = n.network.layers.iter().map(|l| l.activation().to_string()).collect();
        println!("  {:<14} layer activations: {}", "", acts.join(", "));
        if let Some(softmax) = &n.network.trailing_softmax {
            println!("  {:<14} note: the file's last node, {softmax}, is left out (argmax controllers only)", "");
        }
        for note in &n.network.notes {
            println!("  {:<14} note: {note}", "");
        }
    }
    for c in &sys.controllers {
        let nets: Vec<String> = sys.controller_networks(c).iter().map(|&i| sys.networks[i].name.clone()).collect();
        let how = match &c.policy {
            Policy::Network(_) => nets.join(""),
            Policy::Select { by, .. } => format!("one of [{}] selected by {}", nets.join(", "), sys.state[*by].name),
        };
        println!("controller {}: {}", c.name, how);
        println!("  inputs:  {}", c.inputs.iter().map(|e| names.expr(e)).collect::<Vec<_>>().join(", "));
        match &c.output {
            ControllerOutput::Actions(ids) => {
                println!(
                    "  outputs: {}",
                    ids.iter().map(|&i| sys.actions[i].name.as_str()).collect::<Vec<_>>().join(", ")
                )
            }
            ControllerOutput::Argmax(i) => {
                let ActionKind::Index { labels } = &sys.actions[*i].kind else { unreachable!("validated") };
                println!("  output:  {} = argmax over [{}]", sys.actions[*i].name, labels.join(", "));
            }
        }
    }
    println!("step ({} branch{}):", sys.step.branches.len(), if sys.step.branches.len() == 1 { "" } else { "es" });
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
        println!("  {}{when}:", b.name);
        for (v, e) in sys.state.iter().zip(&b.updates) {
            println!("    {}' = {}", v.name, names.expr(e));
        }
    }
    println!("init:      {}", names.pred(&sys.init));
    if let Some(s) = &sys.safe {
        println!("safe:      {}", names.pred(s));
    }
    if let Some(i) = &sys.invariant {
        println!("invariant: {}", names.pred(i));
    }
    for p in &sys.properties {
        println!("property {}: {}", p.name, p.text.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    for w in trestle_ir::lint::warnings(sys) {
        println!("warning: {w}");
    }
}
