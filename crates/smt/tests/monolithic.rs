//! The monolithic inductiveness check `Inv /\ Next => Inv'` with small hand-set networks.

mod common;

use common::*;
use std::time::Duration;
use trestle_ir::network::{Activation, Network};
use trestle_ir::parse::{SimpleScope, Symbol, parse_expr, parse_pred};
use trestle_ir::system::{
    ActionKind, ActionVar, Branch, Controller, ControllerOutput, Domain, NamedNetwork, Policy, StateVar, Step, System,
    VarKind,
};
use trestle_ir::{Rational, expr::VarRef};
use trestle_smt::{Answer, Checker, CheckerConfig, InductivenessChecker, Unknown, Z3Backend, replay_inductive};

/// The steering net's outputs computed by hand: a0 = k0 relu(x - 1/2) + k1 relu(1/2 - x),
/// a1 = 3/4 - y (all weights dyadic, so exact).
fn steering_by_hand(k: [f64; 2], x: &Rational, y: &Rational) -> [Rational; 2] {
    let relu = |v: Rational| if v < q("0") { q("0") } else { v };
    [f(k[0]) * relu(x - q("0.5")) + f(k[1]) * relu(q("0.5") - x), q("0.75") - y]
}

#[test]
fn centring_network_keeps_the_invariant() {
    // a0 = 0.5 - x, a1 = 0.75 - y: x' = 0.9x + 0.05 in [0.275, 0.905], y' = 0.9y + 0.075 in
    // [0.57, 0.93]: inside Inv. With c in [0.5, 1], x' lies between x and 0.9x + 0.05: inside too.
    for sys in [det_maze(), nondet_maze()] {
        let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
        assert_eq!(z3.check_inductive(&pred(INV)).unwrap(), Answer::Valid, "{}", sys.name);
    }
}

#[test]
fn repelling_network_is_refuted_with_an_exact_witness() {
    // a0 = 5 relu(x - 0.5) - 5 relu(0.5 - x) = 5(x - 0.5): x' = 1.5x - 0.25 exceeds 0.95 for
    // x > 0.8 (and drops below 0.25 for x < 1/3).
    let k = [5.0, -5.0];
    for nondet in [false, true] {
        let sys = maze(nondet, steering_net(k));
        let mut checker = Checker::new(&sys, CheckerConfig::default()).unwrap();
        let a = checker.check_inductive(&pred(INV)).unwrap();
        let w = a.witness().unwrap_or_else(|| panic!("expected Invalid, got {a:?}"));
        replay_inductive(&sys, &pred(INV), w).unwrap();
        // Independently: the actions are the network's, the step is the maze's, next leaves Inv.
        assert_eq!(w.actions, steering_by_hand(k, &w.state[0], &w.state[1]).to_vec());
        let c = if nondet { w.nondet[0].clone() } else { q("1") };
        assert_eq!(w.next[0], &w.state[0] + q("0.1") * &c * &w.actions[0]);
        assert!(w.next[0] > q("0.95") || w.next[0] < q("0.25"), "{w}");
        // The network's exact forward pass agrees with the hand formula.
        let out = sys.networks[0].network.forward_exact(&w.state, &mut []).unwrap();
        assert_eq!(out, w.actions);
    }
}

/// x in [0, 1]; argmax of (x, 1 - x) picks "left" (index 0, x' = `left`) when x >= 1/2 and "right"
/// (index 1, x' = `right`) when x < 1/2; at x = 1/2 the outputs tie and the rule (lowest index)
/// picks left.
fn argmax_line_with(left: &str, right: &str) -> System {
    let net =
        Network::new("inline:argmax", vec![dense(&[vec![1.0], vec![-1.0]], vec![0.0, 1.0], Activation::Identity)])
            .unwrap();
    let mut scope = SimpleScope::with_state(&["x"]);
    scope.add("dir", Symbol::Var(VarRef::Action(0)));
    let e = |t: &str| parse_expr(t, &scope).unwrap();
    System {
        name: "argmax-line".into(),
        description: String::new(),
        state: vec![StateVar { name: "x".into(), kind: VarKind::Real, domain: Domain::default() }],
        nondet: vec![],
        actions: vec![ActionVar {
            name: "dir".into(),
            kind: ActionKind::Index { labels: vec!["left".into(), "right".into()] },
            controller: 0,
        }],
        constants: vec![],
        networks: vec![NamedNetwork { name: "n".into(), network: net }],
        controllers: vec![Controller {
            name: "c".into(),
            policy: Policy::Network(0),
            inputs: vec![e("x")],
            output: ControllerOutput::Argmax(0),
        }],
        step: Step {
            branches: vec![
                Branch { name: "left".into(), guard: None, label: Some((0, 0)), updates: vec![e(left)] },
                Branch { name: "right".into(), guard: None, label: Some((0, 1)), updates: vec![e(right)] },
            ],
        },
        init: parse_pred("0.4 <= x <= 0.6", &scope).unwrap(),
        safe: None,
        invariant: None,
        properties: vec![],
        domain_exit: trestle_ir::system::DomainExit::Error,
    }
}

fn argmax_line() -> System {
    argmax_line_with("x - 0.1", "x + 0.1")
}

#[test]
fn argmax_controller_lowest_index_on_ties() {
    let sys = argmax_line();
    let scope = SimpleScope::with_state(&["x"]);
    let p = |t: &str| parse_pred(t, &scope).unwrap();
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    // [0, 1]: from x >= 1/2 left to [0.4, 0.9], from x < 1/2 right to [0.1, 0.6]: inductive.
    assert_eq!(z3.check_inductive(&p("0 <= x <= 1")).unwrap(), Answer::Valid);
    // [0.45, 0.55]: x = 0.46 goes right to 0.56: refuted, the witness is a real argmax choice.
    let inv = p("0.45 <= x <= 0.55");
    let a = z3.check_inductive(&inv).unwrap();
    let w = a.witness().expect("Invalid");
    replay_inductive(&sys, &inv, w).unwrap();
    // [0.5, 0.5]: only the tie, which goes to left (index 0), to 0.4: refuted with that choice.
    let tie = p("x == 0.5");
    let w = z3.check_inductive(&tie).unwrap().witness().cloned().expect("Invalid");
    assert_eq!((w.state[0].clone(), w.actions[0].clone()), (q("0.5"), q("0")));
    replay_inductive(&sys, &tie, &w).unwrap();
}

/// Issue 9, item 8: a system safe only under the lowest-index rule. On [0.5, 0.7], x > 1/2 picks
/// left (x' = 1/2) and the tie at x = 1/2 goes to left too; right (x' = x + 1) would leave. The
/// exact encoding proves it; an encoding that lets ties go either way "refutes" it with x = 1/2,
/// right, which the simulator never does, so the replay must reject that step.
#[test]
fn argmax_tie_safe_only_under_the_lowest_index_rule_is_proven() {
    let sys = argmax_line_with("0.5", "x + 1");
    let scope = SimpleScope::with_state(&["x"]);
    let inv = parse_pred("0.5 <= x <= 0.7", &scope).unwrap();
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    assert_eq!(z3.check_inductive(&inv).unwrap(), Answer::Valid);
    // The simulator agrees: at the tie it picks left.
    let mut memory = trestle_ir::sim::initial_memory::<Rational>(&sys);
    let actions = trestle_ir::sim::controller_actions(&sys, &[q("0.5")], &[], &mut memory).unwrap();
    assert_eq!(actions, vec![q("0")]);
    // The step the any-maximal-index reading allows is not a step of the system.
    let bogus = trestle_smt::Witness {
        state: vec![q("0.5")],
        actions: vec![q("1")],
        nondet: vec![],
        branch: 1,
        next: vec![q("1.5")],
    };
    let e = replay_inductive(&sys, &inv, &bogus).unwrap_err();
    assert!(e.0.contains("lowest index"), "{e}");
}

/// The mirror image: on [0.3, 0.5] the tie at x = 1/2 goes to left (x' = x + 1), which leaves;
/// refuted at exactly that state with exactly that choice, and the witness replays.
#[test]
fn argmax_tie_resolved_against_safety_is_refuted_at_the_tie() {
    let sys = argmax_line_with("x + 1", "0.4");
    let scope = SimpleScope::with_state(&["x"]);
    let inv = parse_pred("0.3 <= x <= 0.5", &scope).unwrap();
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    let w = z3.check_inductive(&inv).unwrap().witness().cloned().expect("Invalid");
    assert_eq!((w.state[0].clone(), w.actions[0].clone(), w.next[0].clone()), (q("0.5"), q("0"), q("1.5")));
    replay_inductive(&sys, &inv, &w).unwrap();
}

#[test]
fn a_timeout_is_unknown_never_valid() {
    // A 2-32-32-2 network with seeded random weights and a 1 ms limit.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut layer = |rows: usize, cols: usize, act| {
        let w: Vec<Vec<f64>> = (0..rows).map(|_| (0..cols).map(|_| rng.random_range(-1.0..1.0)).collect()).collect();
        let b: Vec<f64> = (0..rows).map(|_| rng.random_range(-0.5..0.5)).collect();
        dense(&w, b, act)
    };
    let net = Network::new(
        "inline:random",
        vec![layer(32, 2, Activation::Relu), layer(32, 32, Activation::Relu), layer(2, 32, Activation::Identity)],
    )
    .unwrap();
    let sys = maze(true, net);
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default().with_timeout(Duration::from_millis(1))).unwrap();
    let a = z3.check_inductive(&pred(INV)).unwrap();
    // The watchdog may start late on a loaded machine; Z3 may then finish with a counterexample
    // (replayed exactly by the backend), but a time-out must never read as a proof.
    let stats = z3.stats().snapshot();
    match a {
        Answer::Unknown(Unknown::Timeout) => {
            assert_eq!((stats.queries, stats.unknown, stats.timeouts, stats.valid), (1, 1, 1, 0))
        }
        Answer::Invalid(_) => assert_eq!((stats.queries, stats.valid), (1, 0)),
        other => panic!("a 1 ms limit gave {other:?}"),
    }
    // A resource limit is reported as such (deterministic).
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default().without_timeout().with_rlimit(1)).unwrap();
    assert_eq!(z3.check_inductive(&pred(INV)).unwrap(), Answer::Unknown(Unknown::ResourceLimit));
}

#[test]
fn maze_32x32_monolithic_times_out_or_proves() {
    // The paper reports 51.59 s for the monolithic det 2x32 check (inductive). With 2 s we expect a
    // timeout; whatever happens it must not be Invalid, and Unknown must carry a reason.
    let Some(path) = shared_file("models/maze/det/maze_2d_32x32.nnet") else { return };
    let sys = maze(false, read_nnet(&path));
    let cfg = CheckerConfig::default().with_timeout(Duration::from_secs(2));
    let mut z3 = Z3Backend::new(&sys, cfg).unwrap();
    let a = z3.check_inductive(&pred(INV)).unwrap();
    eprintln!("monolithic det 2x32 with a 2 s limit: {a:?}");
    assert!(matches!(a, Answer::Valid | Answer::Unknown(Unknown::Timeout)), "{a:?}");
}

#[test]
fn select_policy_picks_the_network_by_mode() {
    // mode (int, [0, 1]) selects the centring network (0) or the repelling one (1); mode stays.
    let mut scope = SimpleScope::with_state(&["x", "y", "mode"]);
    scope.add("a0", Symbol::Var(VarRef::Action(0)));
    scope.add("a1", Symbol::Var(VarRef::Action(1)));
    let e = |t: &str| parse_expr(t, &scope).unwrap();
    let pr = |t: &str| parse_pred(t, &scope).unwrap();
    let mut sys = maze(false, centring_net());
    sys.state.push(StateVar {
        name: "mode".into(),
        kind: VarKind::Int,
        domain: Domain { lo: Some(q("0")), hi: Some(q("1")) },
    });
    sys.networks.push(NamedNetwork { name: "repel".into(), network: steering_net([5.0, -5.0]) });
    sys.controllers[0].policy = Policy::Select { by: 2, networks: vec![0, 1] };
    sys.step.branches[0].updates = vec![e("x + 0.1*a0"), e("y + 0.1*a1"), e("mode")];
    sys.init = pr("0.3 <= x <= 0.4 and 0.6 <= y <= 0.7 and mode == 0");
    sys.safe = None;
    sys.invariant = None;
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    let centred = pr(&format!("{INV} and mode == 0"));
    assert_eq!(z3.check_inductive(&centred).unwrap(), Answer::Valid);
    let both = pr(&format!("{INV} and 0 <= mode <= 1"));
    let a = z3.check_inductive(&both).unwrap();
    let w = a.witness().expect("Invalid");
    assert_eq!(w.state[2], q("1"));
    replay_inductive(&sys, &both, w).unwrap();
    assert_eq!(w.actions, steering_by_hand([5.0, -5.0], &w.state[0], &w.state[1]).to_vec());
}

/// The query on one box of the invariant (the bridge engine's exact leaf), with the ReLUs whose
/// sign is fixed there encoded as the identity or zero, answers as the encoding with every ReLU an
/// `ite`; its counterexamples lie in the box and replay exactly.
#[test]
fn box_queries_with_fixed_relu_phases_agree_with_the_full_encoding() {
    use trestle_ir::FBox;
    use trestle_smt::{InductiveQuery, NetworkPhases, Phase};
    // a0 = 5 (x - 0.5): x' = 1.5x - 0.25 (det) leaves [0.25, 0.95] exactly for x < 1/3 and x > 0.8;
    // with c in [0.5, 1], x' lies between x and that, so the same boxes fail.
    let k = [5.0, -5.0];
    let cases = [([0.25, 0.3], false), ([0.36, 0.45], true), ([0.55, 0.75], true), ([0.81, 0.95], false)];
    for nondet in [false, true] {
        let sys = maze(nondet, steering_net(k));
        let inv = pred(INV);
        let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
        for (xs, inductive) in cases {
            let b = FBox::new(vec![xs[0], 0.55], vec![xs[1], 0.95]);
            // Pre-activations x - 0.5, 0.5 - x (fixed sign on these boxes), y - 0.75, 0.75 - y (not).
            let first = (vec![xs[0] - 0.5, 0.5 - xs[1], -0.2, -0.2], vec![xs[1] - 0.5, 0.5 - xs[0], 0.2, 0.2]);
            let phases = NetworkPhases::of_bounds(&sys.networks[0].network, &[first, (vec![0.0; 2], vec![0.0; 2])]);
            assert_eq!(phases.unstable(), 2);
            assert_eq!(phases.0[0][0], if xs[0] > 0.5 { Phase::Active } else { Phase::Inactive });
            let plain = z3.check_inductive_on(&InductiveQuery::on_box(&inv, &b)).unwrap();
            let phased = z3.check_inductive_on(&InductiveQuery::on_box(&inv, &b).with_phases(vec![vec![Some(phases)]]));
            let phased = phased.unwrap();
            for a in [&plain, &phased] {
                assert_eq!(a.is_valid(), inductive, "{} x in {xs:?}: {a:?}", sys.name);
                if let Some(w) = a.witness() {
                    replay_inductive(&sys, &inv, w).unwrap();
                    assert!(w.state[0] >= f(xs[0]) && w.state[0] <= f(xs[1]), "{w}");
                    assert!(w.next[0] < q("0.25") || w.next[0] > q("0.95"), "{w}");
                }
            }
        }
    }
}

/// Phases that do not match the networks' layers are an input error, never an answer.
#[test]
fn mismatched_relu_phases_are_refused() {
    use trestle_ir::FBox;
    use trestle_smt::{InductiveQuery, NetworkPhases, Phase};
    let sys = maze(false, centring_net());
    let inv = pred(INV);
    let b = FBox::new(vec![0.25, 0.55], vec![0.95, 0.95]);
    let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
    let short = NetworkPhases(vec![vec![Phase::Active; 3]]);
    assert!(z3.check_inductive_on(&InductiveQuery::on_box(&inv, &b).with_phases(vec![vec![Some(short)]])).is_err());
    assert!(z3.check_inductive_on(&InductiveQuery::on_box(&inv, &b).with_phases(vec![vec![], vec![]])).is_err());
}
