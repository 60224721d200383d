//! Systems built programmatically from the IR for the tests: the 2-D maze (deterministic and with
//! one shared `c in [0.5, 1]`), hand-set ReLU networks, and a reader for the maze `.nnet` files.
#![allow(dead_code)]

use std::path::PathBuf;
use trestle_ir::expr::VarRef;
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};
use trestle_ir::num::{parse_rational, rational_from_f64};
use trestle_ir::parse::{SimpleScope, Symbol, parse_expr, parse_pred};
use trestle_ir::system::{
    ActionKind, ActionVar, Branch, Controller, ControllerOutput, Domain, DomainExit, NamedNetwork, NondetDomain,
    NondetVar, Policy, StateVar, Step, System, VarKind,
};
use trestle_ir::{Expr, FBox, Pred, Rational};

pub fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

pub fn f(x: f64) -> Rational {
    rational_from_f64(x)
}

/// Names of the maze: state x, y; actions a0, a1; input c.
pub fn scope() -> SimpleScope {
    let mut s = SimpleScope::with_state(&["x", "y"]);
    s.add("a0", Symbol::Var(VarRef::Action(0)));
    s.add("a1", Symbol::Var(VarRef::Action(1)));
    s.add("c", Symbol::Var(VarRef::Nondet(0)));
    s
}

pub fn pred(text: &str) -> Pred {
    parse_pred(text, &scope()).unwrap()
}

pub fn expr(text: &str) -> Expr {
    parse_expr(text, &scope()).unwrap()
}

pub const INV: &str = "0.25 <= x <= 0.95 and 0.55 <= y <= 0.95";

pub fn dense(rows: &[Vec<f64>], bias: Vec<f64>, activation: Activation) -> Layer {
    Layer::Dense(DenseLayer { weights: Matrix::from_rows(rows), bias, activation })
}

/// 2-4-2: `a0 = 0.5 - x`, `a1 = 0.75 - y` through four ReLUs (it steers to the centre).
pub fn centring_net() -> Network {
    steering_net([-1.0, 1.0])
}

/// 2-4-2 with first output `k0 * relu(x - 0.5) + k1 * relu(0.5 - x)` and `a1 = 0.75 - y`.
pub fn steering_net(k: [f64; 2]) -> Network {
    Network::new(
        "inline:steering",
        vec![
            dense(
                &[vec![1.0, 0.0], vec![-1.0, 0.0], vec![0.0, 1.0], vec![0.0, -1.0]],
                vec![-0.5, 0.5, -0.75, 0.75],
                Activation::Relu,
            ),
            dense(&[vec![k[0], k[1], 0.0, 0.0], vec![0.0, 0.0, -1.0, 1.0]], vec![0.0, 0.0], Activation::Identity),
        ],
    )
    .unwrap()
}

/// The maze: `x' = x + 0.1*a0`, `y' = y + 0.1*a1`, or with `c` when `nondet`.
pub fn maze(nondet: bool, net: Network) -> System {
    let updates = if nondet { ["x + 0.1*c*a0", "y + 0.1*c*a1"] } else { ["x + 0.1*a0", "y + 0.1*a1"] };
    System {
        name: if nondet { "maze-nondet" } else { "maze-det" }.into(),
        description: String::new(),
        state: ["x", "y"]
            .iter()
            .map(|n| StateVar { name: n.to_string(), kind: VarKind::Real, domain: Domain::default() })
            .collect(),
        nondet: if nondet {
            vec![NondetVar { name: "c".into(), domain: NondetDomain::Interval(q("0.5"), q("1")) }]
        } else {
            vec![]
        },
        actions: ["a0", "a1"]
            .iter()
            .map(|n| ActionVar { name: n.to_string(), kind: ActionKind::Real, controller: 0 })
            .collect(),
        constants: vec![],
        networks: vec![NamedNetwork { name: "policy".into(), network: net }],
        controllers: vec![Controller {
            name: "nn".into(),
            policy: Policy::Network(0),
            inputs: vec![expr("x"), expr("y")],
            output: ControllerOutput::Actions(vec![0, 1]),
        }],
        step: Step {
            branches: vec![Branch {
                name: "move".into(),
                guard: None,
                label: None,
                updates: updates.iter().map(|u| expr(u)).collect(),
            }],
        },
        init: pred("0.3 <= x <= 0.4 and 0.6 <= y <= 0.7"),
        safe: Some(pred("0.22 <= x <= 0.98 and 0.54 <= y <= 0.98")),
        invariant: Some(pred(INV)),
        properties: vec![],
        domain_exit: DomainExit::Error,
    }
}

pub fn det_maze() -> System {
    maze(false, centring_net())
}

pub fn nondet_maze() -> System {
    maze(true, centring_net())
}

/// A maze variant exercising the interval fallback and guards: two guarded branches with
/// min / ite updates.
pub fn pwl_maze() -> System {
    let mut sys = det_maze();
    sys.name = "maze-pwl".into();
    sys.step.branches = vec![
        Branch {
            name: "left".into(),
            guard: Some(pred("x <= 0.6")),
            label: None,
            updates: vec![expr("min(x + 0.1*a0, 0.9)"), expr("if y <= 0.7 then y + 0.1*a1 else y - 0.02")],
        },
        Branch {
            name: "right".into(),
            guard: Some(pred("x >= 0.6")),
            label: None,
            updates: vec![expr("x - 0.02 + 0.1*a0"), expr("max(y + 0.1*a1, 0.56)")],
        },
    ];
    sys
}

pub fn fbox(lo: &[f64], hi: &[f64]) -> FBox {
    FBox::new(lo.to_vec(), hi.to_vec())
}

/// Where the shared model files are; `None` (test skipped) when absent, a failure under CI=true.
pub fn shared_file(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared").join(rel);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{} is missing (CI=true)", p.display());
    }
    eprintln!("skipping: {} not found", p.display());
    None
}

/// A minimal reader of the maze `.nnet` files (no normalisation; ReLU on hidden layers).
pub fn read_nnet(path: &std::path::Path) -> Network {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with("//"));
    let nums = |l: &str| -> Vec<f64> {
        l.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect()
    };
    let head = nums(lines.next().unwrap());
    let n_layers = head[0] as usize;
    let sizes: Vec<usize> = nums(lines.next().unwrap()).iter().map(|&v| v as usize).collect();
    for _ in 0..5 {
        lines.next(); // flag, mins, maxes, means, ranges
    }
    let mut layers = Vec::new();
    for l in 0..n_layers {
        let (inp, out) = (sizes[l], sizes[l + 1]);
        let rows: Vec<Vec<f64>> = (0..out).map(|_| nums(lines.next().unwrap())).collect();
        assert!(rows.iter().all(|r| r.len() == inp));
        let bias: Vec<f64> = (0..out).map(|_| nums(lines.next().unwrap())[0]).collect();
        let act = if l + 1 < n_layers { Activation::Relu } else { Activation::Identity };
        layers.push(dense(&rows, bias, act));
    }
    Network::new(path.display().to_string(), layers).unwrap()
}

/// Whether the `z3` binary is on the PATH.
pub fn z3_binary() -> Option<PathBuf> {
    let out = std::process::Command::new("which").arg("z3").output().ok()?;
    let p = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !p.is_empty()).then(|| PathBuf::from(p))
}

/// A system with int and bool state, guards and a lookup (see `kinds_and_domains.rs`).
pub mod counter {
    use super::*;

    pub fn scope() -> SimpleScope {
        let mut s = SimpleScope::with_state(&["x", "mode", "flag"]);
        s.add("a0", Symbol::Var(VarRef::Action(0)));
        s
    }

    pub fn p(text: &str) -> Pred {
        parse_pred(text, &scope()).unwrap()
    }

    /// x real in [0, 1], mode int in [0, 2], flag bool. While flag = 0: x moves by
    /// lookup(mode, [0.1 a0, 0, -0.1 a0]) and mode cycles 0 -> 1 -> 2 -> 0; while flag = 1: x and mode
    /// hold and flag becomes 0 once x >= 1/2.
    pub fn counter(exit: DomainExit) -> System {
        let e = |t: &str| parse_expr(t, &scope()).unwrap();
        let var = |n: &str, kind, lo: &str, hi: &str| StateVar {
            name: n.into(),
            kind,
            domain: Domain { lo: Some(q(lo)), hi: Some(q(hi)) },
        };
        let net =
            Network::new("inline:x", vec![dense(&[vec![1.0, 0.0, 0.0]], vec![0.0], Activation::Identity)]).unwrap();
        System {
            name: "counter".into(),
            description: String::new(),
            state: vec![
                var("x", VarKind::Real, "0", "1"),
                var("mode", VarKind::Int, "0", "2"),
                var("flag", VarKind::Bool, "0", "1"),
            ],
            nondet: vec![],
            actions: vec![ActionVar { name: "a0".into(), kind: ActionKind::Real, controller: 0 }],
            constants: vec![],
            networks: vec![NamedNetwork { name: "n".into(), network: net }],
            controllers: vec![Controller {
                name: "c".into(),
                policy: Policy::Network(0),
                inputs: vec![e("x"), e("mode"), e("flag")],
                output: ControllerOutput::Actions(vec![0]),
            }],
            step: Step {
                branches: vec![
                    Branch {
                        name: "move".into(),
                        guard: Some(p("flag == 0")),
                        label: None,
                        updates: vec![
                            e("x + lookup(mode, [0.1*a0, 0, -0.1*a0])"),
                            e("if mode == 2 then 0 else mode + 1"),
                            e("flag"),
                        ],
                    },
                    Branch {
                        name: "hold".into(),
                        guard: Some(p("flag == 1")),
                        label: None,
                        updates: vec![e("x"), e("mode"), e("if x >= 0.5 then 0 else 1")],
                    },
                ],
            },
            init: p("x == 0.5 and mode == 0 and flag == 0"),
            safe: None,
            invariant: None,
            properties: vec![],
            domain_exit: exit,
        }
    }
}
