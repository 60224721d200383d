//! Metamorphic tests: transformations of a system that cannot change its answer must not change
//! the verdict. On the shipped example mazes and the peer mazes of ../shared/models (skipped when
//! absent): renaming the state variables, declaring them in the other order (the network's input
//! columns permuted to match), scaling the coordinates (u = x/2, the first layer's weights doubled:
//! exact in f64), adding a state variable nobody reads, splitting the invariant's box in two, and 1
//! vs 2 threads (same verdict and the same counts). Every system is rewritten with its network
//! inline (the f64 weights printed exactly), and the unchanged rewrite must agree with the file.

mod common;

use common::exact::{StepWitness, check_step_witness};
use common::{Run, parallel_map, run, strings, workers};
use serde_json::Value;
use std::path::{Path, PathBuf};
use trestle_ir::network::{Activation, Layer};
use trestle_ir::num::display_rational;
use trestle_ir::{Network, Rational, System};
use trestle_testkit::{example, peer, repo, shared_models};

const BIN: &str = env!("CARGO_BIN_EXE_trestle");

/// A 2-D maze: `x' = x + 0.1*[c*]a0`, `y' = y + 0.1*[c*]a1`, boxes for Init, Safe and Inv.
#[derive(Clone)]
struct Maze {
    name: String,
    network: Network,
    nondet: bool,
    init: [(Rational, Rational); 2],
    safe: [(Rational, Rational); 2],
    inv: [(Rational, Rational); 2],
}

fn one_box(sys: &System, p: &trestle_ir::Pred) -> [(Rational, Rational); 2] {
    let boxes = p.to_box_union(2, 4).expect("a box");
    assert_eq!(boxes.len(), 1, "{}: one box", sys.name);
    let b = &boxes[0];
    let end = |i: usize| (b.lo[i].clone().expect("bounded"), b.hi[i].clone().expect("bounded"));
    [end(0), end(1)]
}

impl Maze {
    /// The maze of a loaded system, after checking the system has exactly this shape.
    fn of(name: &str, sys: &System) -> Maze {
        let names = trestle_ir::print::Names::of(sys);
        let nondet = !sys.nondet.is_empty();
        let c = if nondet { "c*" } else { "" };
        assert_eq!(sys.state_names(), ["x", "y"], "{name}");
        let updates: Vec<String> = sys.step.branches[0].updates.iter().map(|e| names.expr(e)).collect();
        assert_eq!(updates, [format!("x + 0.1*{c}a0"), format!("y + 0.1*{c}a1")], "{name}: the maze step");
        Maze {
            name: name.into(),
            network: sys.networks[0].network.clone(),
            nondet,
            init: one_box(sys, &sys.init),
            safe: one_box(sys, sys.safe.as_ref().expect("a safe region")),
            inv: one_box(sys, sys.invariant.as_ref().expect("a candidate")),
        }
    }
}

/// How a maze is rewritten.
#[derive(Clone, Copy)]
struct Variant {
    label: &'static str,
    /// Names of the x and y coordinates.
    names: [&'static str; 2],
    /// Declare y before x, and feed the network (y, x) with its input columns swapped.
    swap: bool,
    /// State u = x/2 (bounds halved, step halved, first-layer weights doubled).
    halve: bool,
    /// A state variable `unused` (declared first) that nothing reads: unused' = unused/2.
    extra: bool,
    /// The invariant as two boxes split at the middle of x.
    split: bool,
}

const SAME: Variant =
    Variant { label: "unchanged", names: ["x", "y"], swap: false, halve: false, extra: false, split: false };

const VARIANTS: [Variant; 6] = [
    SAME,
    Variant { label: "renamed", names: ["east", "north"], ..SAME },
    Variant { label: "permuted", swap: true, ..SAME },
    Variant { label: "scaled", halve: true, ..SAME },
    Variant { label: "unused variable", extra: true, ..SAME },
    Variant { label: "invariant split", split: true, ..SAME },
];

fn num(q: &Rational) -> String {
    display_rational(q)
}

fn inline_network(net: &Network, swap: bool, gain: f64) -> String {
    let mut layers = Vec::new();
    for (k, layer) in net.layers.iter().enumerate() {
        let Layer::Dense(d) = layer else { panic!("a maze controller is dense") };
        let rows: Vec<String> = (0..d.weights.rows)
            .map(|r| {
                let mut row = d.weights.row(r).to_vec();
                if k == 0 {
                    if swap {
                        row.swap(0, 1);
                    }
                    row.iter_mut().for_each(|w| *w *= gain);
                }
                format!("[{}]", row.iter().map(|w| format!("{w:?}")).collect::<Vec<_>>().join(", "))
            })
            .collect();
        let bias: Vec<String> = d.bias.iter().map(|b| format!("{b:?}")).collect();
        let act = match d.activation {
            Activation::Relu => "relu",
            Activation::Identity => "identity",
            other => panic!("the maze controllers have no {other} layers"),
        };
        layers.push(format!(
            "  {{ weights = [{}], bias = [{}], activation = \"{act}\" }},",
            rows.join(", "),
            bias.join(", ")
        ));
    }
    format!("[networks.controller]\nlayers = [\n{}\n]\n", layers.join("\n"))
}

/// The system file of a maze under a variant.
fn render(m: &Maze, v: &Variant) -> String {
    let k = if v.halve { Rational::from_integer(2.into()) } else { Rational::from_integer(1.into()) };
    let range = |b: &[(Rational, Rational); 2], i: usize| {
        format!("{} <= {} <= {}", num(&(&b[i].0 / &k)), v.names[i], num(&(&b[i].1 / &k)))
    };
    let region = |b: &[(Rational, Rational); 2], extra: &str| {
        let mut parts = vec![range(b, 0), range(b, 1)];
        if v.extra {
            parts.push(extra.to_string());
        }
        parts.join(" and ")
    };
    let inv = if v.split {
        let (lo, hi) = (&m.inv[0].0 / &k, &m.inv[0].1 / &k);
        let mid = (&lo + &hi) / Rational::from_integer(2.into());
        let x = v.names[0];
        let parts = [
            format!("({} <= {x} <= {} or {} <= {x} <= {})", num(&lo), num(&mid), num(&mid), num(&hi)),
            range(&m.inv, 1),
        ];
        let mut text = parts.join(" and ");
        if v.extra {
            text.push_str(" and 0 <= unused <= 1");
        }
        text
    } else {
        region(&m.inv, "0 <= unused <= 1")
    };
    let order = if v.swap { [v.names[1], v.names[0]] } else { v.names };
    let mut out = format!(
        "init = \"{}\"\nsafe = \"{}\"\ninvariant = \"{inv}\"\n\n[system]\nname = \"{}\"\n\n[state]\n",
        region(&m.init, "0 <= unused <= 0.5"),
        region(&m.safe, "0 <= unused <= 1"),
        m.name
    );
    if v.extra {
        out.push_str("unused = { type = \"real\" }\n");
    }
    for n in order {
        out.push_str(&format!("{n} = {{ type = \"real\" }}\n"));
    }
    if m.nondet {
        out.push_str("\n[nondet]\nc = { interval = [0.5, 1.0] }\n");
    }
    out.push('\n');
    out.push_str(&inline_network(&m.network, v.swap, if v.halve { 2.0 } else { 1.0 }));
    out.push_str(&format!(
        "\n[controller]\nnetwork = \"controller\"\ninputs = [\"{}\", \"{}\"]\nactions = [\"a0\", \"a1\"]\n\n[step]\n",
        order[0], order[1]
    ));
    let c = if m.nondet { "c*" } else { "" };
    for (i, n) in v.names.iter().enumerate() {
        let update = if v.halve { format!("(2*{n} + 0.1*{c}a{i})/2") } else { format!("{n} + 0.1*{c}a{i}") };
        out.push_str(&format!("{n} = \"{update}\"\n"));
    }
    if v.extra {
        out.push_str("unused = \"0.5*unused\"\n");
    }
    out
}

/// The mazes: the shipped examples, a refuted variant of the example, and peer mazes when present.
fn mazes() -> Vec<Maze> {
    let det = Maze::of("example-det", &example("maze-det.toml"));
    let mut tight = det.clone();
    tight.name = "example-det-tight".into();
    tight.inv[1] = (Rational::new(6.into(), 10.into()), Rational::new(7.into(), 10.into()));
    let mut out = vec![det, Maze::of("example-nondet", &example("maze-nondet.toml")), tight];
    if shared_models().is_some() {
        out.push(Maze::of("peer-det-32", &peer("det", 32)));
        out.push(Maze::of("peer-det-128", &peer("det", 128)));
        out.push(Maze::of("peer-nondet-128", &peer("nondet", 128)));
    }
    out
}

fn check_args(path: &Path, threads: &str) -> Vec<String> {
    strings(&["check", &path.to_string_lossy(), "--json", "--threads", threads, "--timeout", "120"])
}

/// What must not change: the verdict, and with it whether the counterexample replays.
fn outcome(r: &Run, path: &Path) -> Result<String, String> {
    let j: Value = r.json()?;
    let verdict = j["verdict"].as_str().ok_or_else(|| format!("no verdict: {}", r.error_message()))?.to_string();
    if verdict == "not-inductive" {
        let sys = trestle_testkit::load(path, &[]);
        StepWitness::from_json(&j["details"]["counterexample"])
            .and_then(|w| check_step_witness(&sys, &w, None))
            .map_err(|e| format!("bad counterexample: {e}"))?;
    }
    Ok(verdict)
}

struct Job {
    maze: usize,
    variant: usize,
    synth: bool,
}

/// Runs every variant of every maze (check; synth on the examples) and reports every change.
#[test]
fn transformations_that_cannot_matter_do_not_change_the_verdict() {
    let mazes = mazes();
    let dir = tempfile::tempdir().expect("a scratch directory");
    let mut files: Vec<Vec<PathBuf>> = Vec::new();
    for (i, m) in mazes.iter().enumerate() {
        files.push(
            VARIANTS
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let path = dir.path().join(format!("{i}-{k}.toml"));
                    std::fs::write(&path, render(m, v)).expect("the variant is written");
                    path
                })
                .collect(),
        );
    }
    let mut jobs = Vec::new();
    for (i, m) in mazes.iter().enumerate() {
        for k in 0..VARIANTS.len() {
            jobs.push(Job { maze: i, variant: k, synth: false });
            if m.name.starts_with("example") {
                jobs.push(Job { maze: i, variant: k, synth: true });
            }
        }
    }
    let answers = parallel_map(&jobs, workers(), |j| {
        let path = &files[j.maze][j.variant];
        let args = if j.synth {
            strings(&["synth", &path.to_string_lossy(), "--json", "--threads", "1", "--timeout", "120"])
        } else {
            check_args(path, "1")
        };
        outcome(&run(BIN, &args, &repo()), path)
    });
    for (j, a) in jobs.iter().zip(&answers) {
        let command = if j.synth { "synth" } else { "check" };
        eprintln!("{:<18} {command:<5} {:<16} {a:?}", mazes[j.maze].name, VARIANTS[j.variant].label);
    }
    let mut failures = Vec::new();
    for (i, m) in mazes.iter().enumerate() {
        for synth in [false, true] {
            let of =
                |k: usize| jobs.iter().zip(&answers).find(|(j, _)| j.maze == i && j.variant == k && j.synth == synth);
            let Some((_, base)) = of(0) else { continue };
            let command = if synth { "synth" } else { "check" };
            let base = match base {
                Ok(v) if v != "unknown" => v.clone(),
                other => {
                    failures
                        .push(format!("{} {command}, unchanged rewrite: no verdict to compare ({other:?})", m.name));
                    continue;
                }
            };
            for (k, v) in VARIANTS.iter().enumerate().skip(1) {
                match of(k).map(|(_, a)| a) {
                    Some(Ok(verdict)) if *verdict == base => {}
                    Some(other) => {
                        failures.push(format!("{} {command}, {}: {other:?}, unchanged: {base}", m.name, v.label))
                    }
                    None => {}
                }
            }
        }
    }
    assert!(failures.is_empty(), "verdicts changed under transformations that cannot matter:\n{}", failures.join("\n"));
}

/// The inline rewrite of each maze gives the file's own verdict, and 2 threads give the same
/// verdict and the same counts as 1 (results do not depend on the thread count).
#[test]
fn the_inline_rewrite_and_the_thread_count_do_not_change_the_answer() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let mut originals: Vec<(String, PathBuf, Vec<String>)> = vec![
        ("example-det".into(), repo().join("examples/maze-det.toml"), vec![]),
        ("example-nondet".into(), repo().join("examples/maze-nondet.toml"), vec![]),
    ];
    if shared_models().is_some() {
        for (kind, h) in [("det", 32), ("det", 128), ("nondet", 128)] {
            let model = repo().join(format!("../shared/models/maze/{kind}/maze_2d_{h}x{h}.onnx"));
            originals.push((
                format!("peer-{kind}-{h}"),
                repo().join(format!("configs/systems/peer-maze-{kind}.toml")),
                vec!["--set".into(), format!("controller.model={}", model.display())],
            ));
        }
    }
    let mazes = mazes();
    let inline: Vec<PathBuf> = originals
        .iter()
        .map(|(name, _, _)| {
            let m = mazes.iter().find(|m| &m.name == name).expect("the maze of the file");
            let path = dir.path().join(format!("{name}.toml"));
            std::fs::write(&path, render(m, &SAME)).expect("the rewrite is written");
            path
        })
        .collect();
    let jobs: Vec<(usize, bool, &str)> =
        (0..originals.len()).flat_map(|i| [(i, true, "1"), (i, false, "1"), (i, false, "2")]).collect();
    let runs = parallel_map(&jobs, workers(), |&(i, from_file, threads)| {
        let (_, path, set) = &originals[i];
        if from_file {
            let mut args = check_args(path, threads);
            args.extend(set.iter().cloned());
            return run(BIN, &args, &repo());
        }
        run(BIN, &check_args(&inline[i], threads), &repo())
    });
    let mut failures = Vec::new();
    for (i, (name, _, _)) in originals.iter().enumerate() {
        let [file, one, two] = [0, 1, 2].map(|k| runs[3 * i + k].json().unwrap_or_default());
        if file["verdict"] != one["verdict"] || file["verdict"].is_null() {
            failures.push(format!("{name}: file {} vs inline rewrite {}", file["verdict"], one["verdict"]));
        }
        for key in ["splits", "clauses", "smt_queries", "bound_queries", "undecided"] {
            if one["stats"][key] != two["stats"][key] || one["verdict"] != two["verdict"] {
                failures.push(format!(
                    "{name}: 1 thread {} {key}={}, 2 threads {} {key}={}",
                    one["verdict"], one["stats"][key], two["verdict"], two["stats"][key]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
