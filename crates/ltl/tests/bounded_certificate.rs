//! Certificates of bounded formulas proven by bound propagation through time
//! (`trestle_ltl::certificate`): written with every BPT proof, re-checked by Z3 from the system
//! alone, rejected when an enclosure, the formula or Init no longer fits, and their enclosures
//! contain every exactly simulated run (state and hidden state).

use trestle_bridge::certificate::Certification;
use trestle_core::Trace;
use trestle_core::{Budget, Unknown, Verdict};
use trestle_ir::formula::Ltl;
use trestle_ir::lift::lift_hidden_state;
use trestle_ir::num::{cmp_f64_rational, rational_from_f64};
use trestle_ir::parse::{SimpleScope, parse_ltl};
use trestle_ir::{Pred, Rational, System, sim};
use trestle_ltl::bpt::Domain;
use trestle_ltl::certificate::{BoundedJson, FORMAT, certify_bounded, stop_free};
use trestle_ltl::{LtlOptions, Method, check_ltl};
use trestle_testkit::{load, repo, system_from_text};

fn system(name: &str, set: &[&str]) -> System {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(&repo().join(format!("configs/systems/{name}.toml")), &set)
}

fn formula(sys: &System, text: &str) -> Ltl {
    let names: Vec<&str> = sys.state.iter().map(|v| v.name.as_str()).collect();
    parse_ltl(text, &SimpleScope::with_state(&names)).unwrap()
}

/// The bounded certificate a proof carries.
fn bounded_certificate(v: &Verdict) -> Option<BoundedJson> {
    serde_json::from_value(v.certificate()?.0.clone()).ok()
}

/// BPT's proof of `text` with its certificate, which must re-check.
fn proven(sys: &System, text: &str, domain: Domain) -> BoundedJson {
    let opts = LtlOptions { method: Method::Bpt, bpt: domain, ..LtlOptions::default() };
    let r = check_ltl(sys, &formula(sys, text), &opts, &Budget::unlimited()).unwrap();
    assert!(r.verdict.is_proven(), "{text}: {:?}", r.verdict);
    let cert = bounded_certificate(&r.verdict).unwrap_or_else(|| panic!("{text}: {:?}", r.verdict));
    let c = recheck(sys, &cert);
    assert!(c.valid, "{text}: {:?}", c.checks);
    cert
}

fn recheck(sys: &System, cert: &BoundedJson) -> Certification {
    certify_bounded(cert, sys, &formula(sys, &cert.ltl)).unwrap()
}

fn failed(c: &Certification) -> Vec<&str> {
    c.checks.iter().filter(|(_, ok, _)| !ok).map(|(name, _, _)| name.as_str()).collect()
}

#[test]
fn figure1_proofs_carry_certificates_that_recheck() {
    let sys = system("rnn-figure1", &[]);
    let cert = proven(&sys, "X^2 (z <= 2)", Domain::Interval);
    assert_eq!(cert.state_vars, ["z", "controller_h0_0"]);
    // The notes' enclosures: z and the hidden unit in [0, t] at step t.
    for (t, b) in cert.chains[0].iter().enumerate() {
        assert_eq!((b.lo.clone(), b.hi.clone()), (vec![0.0, 0.0], vec![t as f64, t as f64]), "step {t}");
    }
    let crown = proven(&sys, "X^10 (z <= 2)", Domain::Crown);
    assert_eq!(crown.chains[0].len(), 11);
    // An unbounded F proven by its bounded instance carries that instance's certificate.
    let r = check_ltl(&sys, &formula(&sys, "F (z <= 0)"), &LtlOptions::default(), &Budget::unlimited()).unwrap();
    let cert = bounded_certificate(&r.verdict).unwrap_or_else(|| panic!("{:?}", r.verdict));
    assert_eq!(cert.ltl, "F<=10 (z <= 0)");
    assert!(recheck(&sys, &cert).valid);
}

#[test]
fn tampered_certificates_are_rejected() {
    let sys = system("rnn-figure1", &[]);
    let cert = proven(&sys, "X^2 (z <= 2)", Domain::Interval);
    // R_2 shrunk below the runs: from z = h = 1 in R_1 with x = 0 the next z is 1; Z3's
    // counterexample is replayed exactly.
    let mut shrunk = cert.clone();
    shrunk.chains[0][2].hi = vec![0.5, 0.5];
    let c = recheck(&sys, &shrunk);
    assert_eq!(failed(&c), ["R_t /\\ Next => R_{t+1}' (bounds or Z3)"], "{:?}", c.checks);
    let step = c.checks.iter().find(|(name, ..)| name.starts_with("R_t")).unwrap();
    assert!(step.2.contains("step 1 -> 2: a successor leaves"), "{step:?}");
    // R_0 moved off Init (z = 0 with the hidden unit 0).
    let mut moved = cert.clone();
    moved.chains[0][0] = trestle_bridge::certificate::BoxJson { lo: vec![0.5, 0.0], hi: vec![0.5, 0.0] };
    assert!(failed(&recheck(&sys, &moved)).contains(&"Init => R_0 (Z3)"));
    // A formula the enclosures do not decide.
    let tight = BoundedJson { ltl: "X^2 (z <= 1)".into(), ..cert.clone() };
    assert_eq!(failed(&recheck(&sys, &tight)), ["'X^2 (z <= 1)' holds on the enclosures (outward-rounded atoms)"]);
    // Not a certificate of this system and formula: an error, not a verdict.
    let deeper = BoundedJson { ltl: "X^3 (z <= 2)".into(), ..cert.clone() };
    assert!(certify_bounded(&deeper, &sys, &formula(&sys, &deeper.ltl)).is_err());
    let unbounded = BoundedJson { ltl: "F (z <= 2)".into(), ..cert.clone() };
    assert!(certify_bounded(&unbounded, &sys, &formula(&sys, &unbounded.ltl)).is_err());
    let other = BoundedJson { system: "other".into(), ..cert.clone() };
    assert!(certify_bounded(&other, &sys, &formula(&sys, &other.ltl)).is_err());
    let mut flat = cert.clone();
    flat.chains[0][1].lo.pop();
    assert!(certify_bounded(&flat, &sys, &formula(&sys, &flat.ltl)).is_err());
    let mut inverted = cert.clone();
    inverted.chains[0][1].lo[0] = 3.0;
    assert!(certify_bounded(&inverted, &sys, &formula(&sys, &inverted.ltl)).is_err());
}

/// Figure 1's truth, z = 0 at every step, holds on no enclosure bound propagation computes, but a
/// certificate with the exact reachable sets re-checks: the transition's query with the networks
/// encoded exactly proves what the bounds of one step cannot.
#[test]
fn exact_transitions_prove_the_figure1_truth() {
    let sys = system("rnn-figure1", &[]);
    let mut cert = proven(&sys, "X^2 (z <= 2)", Domain::Interval);
    cert.ltl = "X^2 (z <= 0)".into();
    let zero = trestle_bridge::certificate::BoxJson { lo: vec![0.0, 0.0], hi: vec![0.0, 0.0] };
    cert.chains = vec![vec![zero.clone(), zero.clone(), zero]];
    let c = recheck(&sys, &cert);
    assert!(c.valid, "{:?}", c.checks);
}

/// One chain per Init box; a chain left out leaves part of Init uncovered.
#[test]
fn every_init_box_has_its_chain() {
    let mut sys = system("pi-tuned", &[]);
    let x = || trestle_ir::Expr::var(trestle_ir::VarRef::State(0));
    let q = |t: &str| trestle_ir::Expr::constant(trestle_ir::num::parse_rational(t).unwrap());
    let between = |lo: &str, hi: &str| {
        Pred::and(vec![Pred::Cmp(q(lo), trestle_ir::CmpOp::Le, x()), Pred::Cmp(x(), trestle_ir::CmpOp::Le, q(hi))])
    };
    sys.init = Pred::or(vec![between("-1/4", "0"), between("1/8", "1/4")]);
    let cert = proven(&sys, "G<=20 (x <= 0.5 and x >= -0.5)", Domain::Crown);
    assert_eq!(cert.chains.len(), 2);
    let one = BoundedJson { chains: vec![cert.chains[0].clone()], ..cert.clone() };
    assert_eq!(failed(&recheck(&sys, &one)), ["Init => R_0 (Z3)"]);
}

/// Simple Spread from a 0.02-wide box, 6 steps of two recurrent agents (36 lifted dimensions):
/// the certificate re-checks, and every exactly simulated run from the box's corners and centre
/// lies in its enclosures, hidden units included.
#[test]
fn spread_enclosures_contain_every_simulated_run() {
    let sys = system(
        "spread-2",
        &["init.x1=[0.9, 0.92]", "init.y1=[0.9, 0.92]", "init.x2=[-0.92, -0.9]", "init.y2=[0.3, 0.32]"],
    );
    let cert = proven(&sys, "G<=6 (x1 <= 1.15 and x1 >= -1.15)", Domain::Crown);
    let lifted = lift_hidden_state(&sys).unwrap();
    assert_eq!(cert.state_vars.len(), lifted.system.state.len());
    let chain = &cert.chains[0];
    let (lo, hi) = ([0.9, 0.9, -0.92, 0.3], [0.92, 0.92, -0.9, 0.32]);
    let mut starts: Vec<Vec<f64>> =
        (0..16).map(|bits| (0..4).map(|i| if bits >> i & 1 == 0 { lo[i] } else { hi[i] }).collect()).collect();
    starts.push((0..4).map(|i| (lo[i] + hi[i]) / 2.0).collect());
    for start in starts {
        let trace = run(&sys, start.iter().map(|&v| rational_from_f64(v)).collect(), chain.len() - 1);
        for (t, (state, memory)) in trace.states.iter().zip(&trace.hidden).enumerate() {
            let inside = |i: usize, v: &Rational| {
                cmp_f64_rational(chain[t].lo[i], v).is_le() && cmp_f64_rational(chain[t].hi[i], v).is_ge()
            };
            assert!(state.iter().enumerate().all(|(i, v)| inside(i, v)), "step {t} from {start:?}");
            for h in &lifted.hidden {
                let v = &memory[h.controller][h.layer][h.unit];
                assert!(inside(h.state, v), "step {t} from {start:?}: {}", cert.state_vars[h.state]);
            }
        }
    }
}

/// The run of `k` steps from `start` taking the first enabled branch (no inputs), exactly.
fn run(sys: &System, start: Vec<Rational>, k: usize) -> Trace {
    let mut choices = Vec::new();
    for _ in 0..k {
        let prefix = Trace::simulate(sys, start.clone(), choices.clone()).unwrap();
        let mut memory = prefix.hidden.last().cloned().unwrap();
        let actions = sim::controller_actions(sys, prefix.last(), &[], &mut memory).unwrap();
        let branch = sim::enabled_branches(sys, prefix.last(), &actions, &[]).unwrap()[0];
        choices.push((Vec::new(), branch));
    }
    Trace::simulate(sys, start, choices).unwrap()
}

/// A system whose runs stop (here: an int successor of the wrong kind under "error") makes every
/// transition out of the stopping states vacuous, so any later enclosure would pass: such
/// systems get no certificate, a crafted one is rejected, and the engine reports the stop. `X^2 (x == 7)` and `X^2 (x == 8)`
/// would both "hold" on these boxes.
#[test]
fn systems_whose_runs_stop_get_no_certificate() {
    let halves = |step: &str, exit: &str, kind: &str| {
        system_from_text(&format!(
            r#"
init = "x == 0"
[system]
name = "halves"
on_domain_exit = "{exit}"
[state]
x = {{ type = "{kind}", domain = [0, 10] }}
[networks.id]
layers = [{{ weights = [[1.0]], bias = [0.0], activation = "identity" }}]
[controller]
network = "id"
inputs = ["x"]
actions = ["a"]
[[branch]]
name = "step"
{step}
"#
        ))
    };
    let sys = halves(r#"update = { x = "a + 1/2" }"#, "error", "int");
    assert!(stop_free(&sys).unwrap_err().contains("not an integer"));
    // The engine's enclosures hold `X^2 (x <= 100)`, but every run stops at its first step: an
    // error of the system, not a vacuous proof.
    let err =
        check_ltl(&sys, &formula(&sys, "X^2 (x <= 100)"), &LtlOptions::default(), &Budget::unlimited()).unwrap_err();
    assert!(err.is_input() && err.to_string().contains("a run from Init stops"), "{err}");
    let boxed = |v: f64| trestle_bridge::certificate::BoxJson { lo: vec![v], hi: vec![v] };
    for claim in ["7", "8"] {
        let cert = BoundedJson {
            format: FORMAT.into(),
            system: "halves".into(),
            ltl: format!("X^2 (x == {claim})"),
            state_vars: vec!["x".into()],
            chains: vec![vec![boxed(0.0), boxed(0.5), boxed(claim.parse().unwrap())]],
        };
        let c = recheck(&sys, &cert);
        assert_eq!(failed(&c), ["no run stops before the horizon"], "{claim}: {:?}", c.checks);
    }
    // The other ways a run stops, each named.
    for (sys, why) in [
        (halves("guard = \"x <= 5\"\nupdate = { x = \"a\" }", "error", "real"), "no branch is enabled"),
        (halves("update = { x = \"a + 1\" }", "drop", "real"), "outside its domain"),
        (halves("update = { x = \"lookup(x, [1, 2])\" }", "error", "real"), "lookup"),
    ] {
        assert!(stop_free(&sys).unwrap_err().contains(why), "{why}: {:?}", stop_free(&sys));
    }
    assert_eq!(stop_free(&halves("update = { x = \"a\" }", "ignore", "real")), Ok(()));
    assert_eq!(stop_free(&halves("update = { x = \"a\" }", "drop", "real")), Ok(()), "a = x stays in [0, 10]");
    assert_eq!(stop_free(&halves("update = { x = \"min(max(x + 1, 0), 10)\" }", "error", "int")), Ok(()));
    // A deadlock at x = 1 (Init 0..1): the MILP's unrolling leaves that path out and answered
    // `G<=1 (x <= 0)` "true" on evidence, bound propagation `X^2 (x <= 100)` "true": the states
    // runs reach are expanded and the stop is the system's error, for every method and shape.
    let deadlock = halves("guard = \"x <= 0\"\nupdate = { x = \"a\" }", "error", "int");
    let deadlock = System { init: formula(&deadlock, "x >= 0 and x <= 1").state_pred().unwrap(), ..deadlock };
    for text in ["G<=1 (x <= 0)", "X^2 (x <= 100)", "G (x <= 100)", "F (x <= 0)"] {
        let err =
            check_ltl(&deadlock, &formula(&deadlock, text), &LtlOptions::default(), &Budget::unlimited()).unwrap_err();
        assert!(err.to_string().contains("x = 1 has no successor"), "{text}: {err}");
    }
    // Real states from an interval cannot be expanded: a system that may stop gets no "true".
    // (With the guard `x <= 5` the runs' enclosure, x in [0, 3], stays where it holds: stop-free
    // there, so proven; `x <= 1.5` fails at x in (1.5, 2] after one step.)
    let real = halves("guard = \"x <= 1.5\"\nupdate = { x = \"a + 1\" }", "ignore", "real");
    let real = System { init: formula(&real, "x >= 0 and x <= 1").state_pred().unwrap(), ..real };
    let r = check_ltl(&real, &formula(&real, "X^2 (x <= 100)"), &LtlOptions::default(), &Budget::unlimited()).unwrap();
    assert!(matches!(&r.verdict, Verdict::Unknown(Unknown::RunsMayStop(_))), "{:?}", r.verdict);
    // The engine's proof on a system that may stop comes without a certificate.
    let sys = halves(r#"update = { x = "2 * a" }"#, "drop", "real");
    let r = check_ltl(&sys, &formula(&sys, "X^2 (x <= 0)"), &LtlOptions::default(), &Budget::unlimited()).unwrap();
    assert_eq!(r.verdict, Verdict::proven());
}
