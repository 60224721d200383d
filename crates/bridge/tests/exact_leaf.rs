//! The exact leaf decision (issue 9, items 5 and 6): candidates with no margin are proven, and
//! counterexamples that exist only in exact arithmetic are found, by deciding boxes with Z3 and
//! the networks encoded exactly on them. Each system's truth is argued in its comment.

mod common;
use common::*;
use trestle_bridge::certificate::{CertificateJson, ExactClauseJson, FORMAT, FORMAT_EXACT, certify, from_report};
use trestle_bridge::{Config, Inductiveness, Report, check};
use trestle_core::Budget;
use trestle_ir::num::{parse_rational, rational_from_f64};
use trestle_ir::{Env, Rational, System};
use trestle_smt::Witness;

/// The 1-D identity network `a = relu(x) - relu(-x)` (or its negation).
fn line_net(sign: f64) -> String {
    format!(
        r#"[networks.net]
layers = [
  {{ weights = [[1.0], [-1.0]], bias = [0.0, 0.0], activation = "relu" }},
  {{ weights = [[{sign}, {minus}]], bias = [0.0], activation = "identity" }},
]
[controller]
network = "net"
inputs = ["x"]
actions = ["a"]
"#,
        minus = -sign
    )
}

/// A system on one real state `x`, Inv = Safe = [lo, hi], Init = [lo, mid], the given network and
/// step (a `[step]` table or `[[branch]]` tables).
fn line_system(name: &str, lo: &str, hi: &str, net: &str, step: &str) -> (tempfile::TempDir, System) {
    let text = format!(
        "init = \"{lo} <= x <= 0\"\nsafe = \"{lo} <= x <= {hi}\"\ninvariant = \"{lo} <= x <= {hi}\"\n\
         [system]\nname = \"{name}\"\n[state]\nx = {{ type = \"real\" }}\n{net}{step}"
    );
    let (dir, path) = scratch(&format!("{name}.toml"), &text);
    let sys = load(&path, &[]);
    (dir, sys)
}

fn q(s: &str) -> Rational {
    parse_rational(s).unwrap()
}

/// Safe, with a proof certificate that `certify` accepts; returns the report.
fn assert_proven(sys: &System, cfg: &Config) -> Report {
    let r = check(sys, cfg, &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "safe", "{}: {:?}", sys.name, r.inductive.outcome);
    let cert = from_report(sys, &r);
    let CertificateJson::Proof(p) = &cert else { panic!("{}: a proof certificate", sys.name) };
    assert_eq!(p.exact_clauses.len(), r.inductive.exact_clauses.len());
    let c = certify(&cert, sys).unwrap();
    assert!(c.valid, "{}: {:?}", sys.name, c.checks);
    r
}

/// Not inductive, with a witness that replays exactly (state in Inv, successor outside) and a
/// refutation certificate `certify` accepts; returns the witness.
fn assert_refuted(sys: &System, cfg: &Config) -> Witness {
    let r = check(sys, cfg, &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "not-inductive", "{}: {:?}", sys.name, r.inductive.outcome);
    let Inductiveness::Refuted(refutation) = &r.inductive.outcome else { unreachable!() };
    let w = refutation.witness.clone();
    let inv = sys.invariant.as_ref().unwrap();
    assert!(inv.eval_exact(&Env::new(&w.state, &[], &[])).unwrap(), "{w}");
    assert!(!inv.eval_exact(&Env::new(&w.next, &[], &[])).unwrap(), "{w}");
    let net = &sys.networks[0].network;
    assert_eq!(net.forward_exact(&w.state, &mut []).unwrap(), w.actions, "the network's exact action");
    assert!(trestle_bridge::witness::replay_exact(sys, inv, &w.state, std::slice::from_ref(&w.nondet)).is_some());
    assert!(certify(&from_report(sys, &r), sys).unwrap().valid, "{}", sys.name);
    w
}

fn without_exact_leaf() -> Config {
    Config { exact_after: None, ..Config::default() }
}

/// x' = -x maps [-1, 1] onto itself, the ends onto each other: inductive with no margin, which
/// no widened postcondition can show on a box touching an end.
#[test]
fn negation_on_its_interval_is_proven() {
    let (_dir, sys) = line_system("negate", "-1", "1", &line_net(-1.0), "[step]\nx = \"a\"\n");
    let r = assert_proven(&sys, &Config::default());
    assert!(!r.inductive.exact_clauses.is_empty() && r.inductive.stats.exact_queries > 0);
    let cert = from_report(&sys, &r);
    let CertificateJson::Proof(p) = cert else { unreachable!() };
    assert_eq!(p.format, FORMAT_EXACT);
    // Without the exact leaf the boxes at the ends stay undecided down to the minimum width.
    let without = check(&sys, &without_exact_leaf(), &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(without.word(), "unknown");
}

/// Inv = [0, 1]; x <= 0.5 moves to x + 0.5 (at most 1, reached exactly at the guard's end),
/// x > 0.5 resets to 0: inductive with no margin where the guard touches the boundary.
#[test]
fn a_guard_touching_the_boundary_is_proven() {
    let step = "[[branch]]\nname = \"move\"\nguard = \"x <= 0.5\"\nupdate = { x = \"a + 0.5\" }\n\
                [[branch]]\nname = \"reset\"\nguard = \"x > 0.5\"\nupdate = { x = \"0\" }\n";
    let (_dir, sys) = line_system("guard-at-boundary", "0", "1", &line_net(1.0), step);
    let r = assert_proven(&sys, &Config::default());
    assert!(!r.inductive.exact_clauses.is_empty());
    assert_eq!(check(&sys, &without_exact_leaf(), &Budget::unlimited(), &quiet).unwrap().word(), "unknown");
}

/// The example maze with an all-zero 2x8 network: a = 0, x' = x, every state is a fixed point,
/// so the candidate is inductive with no margin on all four sides. Before the exact leaf this ran
/// for minutes (every box along the boundary split down to the minimum width); now the first box
/// is a near miss and is decided at once.
#[test]
fn the_all_zero_network_maze_is_proven_at_once() {
    let zeros = |r: usize, c: usize| format!("[{}]", vec![format!("[{}]", vec!["0.0"; c].join(", ")); r].join(", "));
    let text = format!(
        "init = \"0.3 <= x <= 0.4 and 0.6 <= y <= 0.7\"\nsafe = \"0.22 <= x <= 0.98 and 0.54 <= y <= 0.98\"\n\
         invariant = \"0.25 <= x <= 0.95 and 0.55 <= y <= 0.95\"\n[system]\nname = \"zero-maze\"\n\
         [state]\nx = {{ type = \"real\" }}\ny = {{ type = \"real\" }}\n[networks.zero]\nlayers = [\n\
         {{ weights = {}, bias = [{}], activation = \"relu\" }},\n\
         {{ weights = {}, bias = [0.0, 0.0], activation = \"identity\" }},\n]\n\
         [controller]\nnetwork = \"zero\"\ninputs = [\"x\", \"y\"]\nactions = [\"a0\", \"a1\"]\n\
         [step]\nx = \"x + 0.1*a0\"\ny = \"y + 0.1*a1\"\n",
        zeros(8, 2),
        ["0.0"; 8].join(", "),
        zeros(2, 8)
    );
    let (_dir, path) = scratch("zero-maze.toml", &text);
    let sys = load(&path, &[]);
    let r = assert_proven(&sys, &Config::default());
    let s = &r.inductive.stats;
    assert!(s.boxes <= 4 && s.exact_queries >= 1 && s.exact_queries <= 4, "{s:?}");
    // The same answer, clauses and counts on one thread and on two.
    for threads in [1, 2] {
        let again = check(&sys, &Config { threads, ..Config::default() }, &Budget::unlimited(), &quiet).unwrap();
        assert_eq!(again.inductive.exact_clauses, r.inductive.exact_clauses);
        assert_eq!((again.inductive.stats.boxes, again.inductive.stats.exact_queries), (s.boxes, s.exact_queries));
    }
}

/// x' = a + 5e-17 with a = x on Inv = [0, 1]: x = 1 goes to 1 + 5e-17, outside by less than
/// half an ulp of 1 (in f64 the step rounds back to 1).
#[test]
fn a_violation_of_5e_17_is_found() {
    let (_dir, sys) = line_system("tiny-violation", "0", "1", &line_net(1.0), "[step]\nx = \"a + 5e-17\"\n");
    let w = assert_refuted(&sys, &Config::default());
    assert!(w.next[0] > q("1") && w.next[0] <= q("1") + q("5e-17"), "{w}");
    // The counterexample search judges its candidates exactly, so it finds this one too.
    assert_refuted(&sys, &without_exact_leaf());
}

/// Inv = [0, 1]; x < 0.4 and x > 0.4 step to 0.25 + x/2 (in [0.25, 0.75]: a margin), x == 0.4
/// jumps to 2: the one bad state is x = 2/5 exactly, which is not an f64 (no float sample can hit
/// it). The counterexample search proposes the guards' thresholds, so it finds the point at once;
/// the exact leaf, asked at once, finds it too.
#[test]
fn a_single_bad_point_is_found() {
    let step = "[[branch]]\nname = \"below\"\nguard = \"x < 0.4\"\nupdate = { x = \"0.25 + 0.5*a\" }\n\
                [[branch]]\nname = \"at\"\nguard = \"x == 0.4\"\nupdate = { x = \"2\" }\n\
                [[branch]]\nname = \"above\"\nguard = \"x > 0.4\"\nupdate = { x = \"0.25 + 0.5*a\" }\n";
    let (_dir, sys) = line_system("single-point", "0", "1", &line_net(1.0), step);
    let cfg = Config::default();
    let w = assert_refuted(&sys, &cfg);
    assert_eq!(w.state, vec![q("2/5")]);
    assert_eq!(w.next, vec![q("2")]);
    let early = check(&sys, &Config { exact_after: Some(0), ..cfg }, &Budget::unlimited(), &quiet).unwrap();
    assert_eq!((early.word(), early.inductive.stats.splits), ("not-inductive", 0));
    let w = assert_refuted(&sys, &without_exact_leaf());
    assert_eq!(w.state, vec![q("2/5")]);
}

/// Inv = [0, 1]; states in the window 0.5 < x < 0.5 + 1e-15 step to 1 + 1e-20, the rest keep x.
/// The window holds a handful of floats, and from none of them does the f64 step leave [0, 1]
/// (1 + 1e-20 rounds to 1).
#[test]
fn a_violation_in_a_window_of_1e_15_is_found() {
    let step = "[[branch]]\nname = \"window\"\nguard = \"0.5 < x and x < 0.500000000000001\"\n\
                update = { x = \"1 + 1e-20\" }\n\
                [[branch]]\nname = \"rest\"\nguard = \"x <= 0.5 or x >= 0.500000000000001\"\nupdate = { x = \"a\" }\n";
    let (_dir, sys) = line_system("window", "0", "1", &line_net(1.0), step);
    let w = assert_refuted(&sys, &Config::default());
    assert!(w.state[0] > q("0.5") && w.state[0] < q("0.500000000000001"), "{w}");
    assert_eq!(w.next, vec![q("1") + q("1e-20")]);
}

/// a = x + b with the network's output bias b = 1e-30 (as an f64: a positive dyadic near 1e-30),
/// x' = a on Inv = [0, 1]: x = 1 steps to 1 + b, outside, though 1 + b is 1 in f64.
#[test]
fn a_constant_of_1e_30_in_the_network_is_found() {
    let net =
        line_net(1.0).replace("bias = [0.0], activation = \"identity\"", "bias = [1e-30], activation = \"identity\"");
    let (_dir, sys) = line_system("bias-1e-30", "0", "1", &net, "[step]\nx = \"a\"\n");
    let w = assert_refuted(&sys, &Config::default());
    let b = rational_from_f64(1e-30);
    assert_eq!(w.next[0], &w.state[0] + &b, "{w}");
    assert!(w.next[0] > q("1"), "{w}");
}

/// Exact queries limited to nothing (a resource limit of 1): they stay undecided, the verdict is
/// unknown, never safe, and the retries (every 4 halvings, and at the minimum width) end.
#[test]
fn undecided_exact_queries_are_never_proofs() {
    let (_dir, sys) = line_system("negate", "-1", "1", &line_net(-1.0), "[step]\nx = \"a\"\n");
    let cfg = Config { exact_rlimit: Some(1), min_width: 1e-3, ..Config::default() };
    let r = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
    assert_eq!(r.word(), "unknown", "{:?}", r.inductive.outcome);
    let s = &r.inductive.stats;
    assert!(r.inductive.exact_clauses.is_empty() && !r.inductive.undecided.is_empty(), "{s:?}");
    // The whole interval at 0 halvings, then the box at each end at 4 and 8 (the minimum width
    // is 10 halvings deep, closer than 4 to the last try): the tries are few.
    assert!(s.exact_queries >= 3 && s.exact_queries <= 8, "{s:?}");
}

/// Exact clauses are re-checked by their query, trusting nothing from the certificate: one over a
/// box that is not inductive is rejected, as is one missing (coverage) or an exact clause in the
/// older format.
#[test]
fn forged_exact_clauses_are_rejected() {
    let (_dir, sys) = line_system("negate", "-1", "1", &line_net(-1.0), "[step]\nx = \"a\"\n");
    let r = check(&sys, &Config::default(), &Budget::unlimited(), &quiet).unwrap();
    let CertificateJson::Proof(good) = from_report(&sys, &r) else { panic!() };
    assert!(!good.exact_clauses.is_empty());
    // Dropping an exact clause leaves part of the invariant uncovered.
    let mut missing = good.clone();
    missing.exact_clauses.pop();
    let c = certify(&CertificateJson::Proof(missing), &sys).unwrap();
    assert!(!c.valid && !c.checks[0].1, "{:?}", c.checks);
    // The older format cannot carry exact clauses.
    let mut old = good.clone();
    old.format = FORMAT.into();
    assert!(certify(&CertificateJson::Proof(old), &sys).is_err());
    // The same certificate for x' = a + 5e-17 (not inductive at x = 1): the exact clause over the
    // whole invariant is refuted by its own query.
    let (_dir2, tiny) = line_system("negate", "-1", "1", &line_net(1.0), "[step]\nx = \"a + 5e-17\"\n");
    let mut forged = good;
    forged.clauses.clear();
    forged.exact_clauses = vec![ExactClauseJson { region: forged.invariant[0].clone() }];
    let c = certify(&CertificateJson::Proof(forged), &tiny).unwrap();
    assert!(!c.valid, "{:?}", c.checks);
    let exact = c.checks.iter().find(|ch| ch.0.contains("exact clause")).expect("an exact clause check");
    assert!(!exact.1 && exact.2.contains("leaves the invariant"), "{exact:?}");
}
