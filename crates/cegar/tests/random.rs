//! Cross-check on random small discrete systems: CEGAR in every configuration, BMC and the
//! explicit search must agree, and every counterexample must replay. The networks have small
//! integer weights, so argmax ties (lowest index wins) happen often; updates leave the domains
//! (those successors are dropped) often too.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_cegar::bmc::{BmcOptions, check_bmc};
use trestle_cegar::cegar::recheck;
use trestle_cegar::explicit::{ExplicitOptions, check_explicit};
use trestle_cegar::{CegarOptions, Discrete, PolicyEncoding, Refine, check_cegar};
use trestle_config::load_system_from_str;
use trestle_core::{Budget, Verdict};

fn affine(rng: &mut ChaCha8Rng, vars: &[&str]) -> String {
    let mut terms = Vec::new();
    for v in vars {
        let c: i32 = rng.random_range(-1..=1);
        if c != 0 {
            terms.push(format!("{c}*{v}"));
        }
    }
    terms.push(rng.random_range(-2..=2).to_string());
    terms.join(" + ")
}

/// A random system; with `halving`, some commands halve a variable (`x := (x + d)/2`), an update
/// that is non-integral at half the states (those successors are dropped).
fn system(seed: u64, halving: bool) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let vars = ["x", "y"];
    let labels = ["l0", "l1", "l2"];
    let hidden = 3;
    let w = |rng: &mut ChaCha8Rng| f64::from(rng.random_range(-2..=2)) / 2.0;
    let row = |rng: &mut ChaCha8Rng, n: usize| (0..n).map(|_| format!("{:.1}", w(rng))).collect::<Vec<_>>().join(", ");
    let l1: Vec<String> = (0..hidden).map(|_| format!("[{}]", row(&mut rng, 2))).collect();
    let b1 = row(&mut rng, hidden);
    let l2: Vec<String> = (0..labels.len()).map(|_| format!("[{}]", row(&mut rng, hidden))).collect();
    let b2 = row(&mut rng, labels.len());
    let mut text = format!(
        "init = \"x <= {} and y <= {}\"\nsafe = \"{} <= {}\"\n\n[system]\nname = \"random-{seed}\"\non_domain_exit = \"drop\"\n\n\
         [state]\nx = {{ type = \"int\", domain = [0, 5] }}\ny = {{ type = \"int\", domain = [0, 5] }}\n\n\
         [networks.policy]\nlayers = [\n  {{ weights = [{}], bias = [{b1}], activation = \"relu\" }},\n  \
         {{ weights = [{}], bias = [{b2}], activation = \"identity\" }},\n]\n\n\
         [controller]\nnetwork = \"policy\"\ninputs = [\"x\", \"y\"]\nargmax = \"a\"\nlabels = [\"l0\", \"l1\", \"l2\"]\n",
        rng.random_range(0..=2),
        rng.random_range(0..=2),
        affine(&mut rng, &vars),
        rng.random_range(1..=4),
        l1.join(", "),
        l2.join(", "),
    );
    for (i, l) in labels.iter().enumerate() {
        for k in 0..rng.random_range(1..=2) {
            let dx = rng.random_range(-1..=2);
            let dy = rng.random_range(-1..=1);
            let x = if halving && rng.random_bool(0.5) { format!("(x + {dx})/2") } else { format!("x + {dx}") };
            text.push_str(&format!(
                "\n[[command]]\nlabel = \"{l}\"\nname = \"c{i}{k}\"\nguard = \"{} >= 0\"\nupdate = {{ x = \"{x}\", y = \"y + {dy}\" }}\n",
                affine(&mut rng, &vars)
            ));
        }
    }
    text
}

fn load(seed: u64, text: &str) -> trestle_ir::System {
    load_system_from_str(text, std::path::Path::new("random.toml"), &Default::default())
        .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"))
}

/// The truth, by the explicit search (the oracle).
fn explicitly_safe(d: &Discrete<'_>) -> bool {
    let truth = check_explicit(d, &ExplicitOptions::default(), &Budget::unlimited()).unwrap().verdict;
    matches!(truth, Verdict::Proven { .. })
}

#[test]
fn cegar_bmc_and_explicit_agree_on_random_systems() {
    let (mut safe, mut unsafe_) = (0, 0);
    for seed in 0..40 {
        let text = system(seed, false);
        let sys = load(seed, &text);
        let d = Discrete::new(&sys).unwrap();
        let is_safe = explicitly_safe(&d);
        *if is_safe { &mut safe } else { &mut unsafe_ } += 1;
        let z3 = BmcOptions { encoding: PolicyEncoding::Z3, ..BmcOptions::default() };
        let mut runs = vec![
            ("bmc", check_bmc(&d, &BmcOptions::default(), &Budget::unlimited()).unwrap().verdict),
            ("bmc-z3", check_bmc(&d, &z3, &Budget::unlimited()).unwrap().verdict),
        ];
        for (name, opts) in [
            ("ws", CegarOptions::default()),
            ("ce", CegarOptions { refine: Refine::ConcretisationExclusion, ..CegarOptions::default() }),
            ("no-heuristic", CegarOptions { heuristic: false, ..CegarOptions::default() }),
            ("no-incremental", CegarOptions { incremental: false, ..CegarOptions::default() }),
            ("z3-encoding", CegarOptions { encoding: PolicyEncoding::Z3, ..CegarOptions::default() }),
        ] {
            let o = check_cegar(&d, &opts, &Budget::unlimited())
                .unwrap_or_else(|e| panic!("seed {seed}: {name}: {e}\n{text}"));
            if let Some(inv) = &o.invariant {
                recheck(&d, inv, &Budget::unlimited())
                    .unwrap()
                    .unwrap_or_else(|e| panic!("seed {seed}: {name}: the proof fails: {e}"));
            }
            runs.push((name, o.verdict));
        }
        for (name, v) in runs {
            match v {
                Verdict::Proven { .. } => {
                    assert!(is_safe, "seed {seed}: {name} says safe, explicit search finds a run\n{text}")
                }
                Verdict::Refuted { trace: t, .. } => {
                    assert!(!is_safe, "seed {seed}: {name} says unsafe, explicit search proves safe\n{text}");
                    t.replay(&sys).unwrap();
                }
                Verdict::Unknown(u) => panic!("seed {seed}: {name} unknown: {u}"),
                Verdict::Evidence { .. } => panic!("seed {seed}: {name} answered on floating-point evidence"),
                Verdict::RefutedValidated { .. } => panic!("seed {seed}: {name}: a validated run on a rational system"),
            }
        }
    }
    // The generator must exercise both answers.
    assert!(safe >= 5 && unsafe_ >= 5, "{safe} safe, {unsafe_} unsafe");
}

/// Updates that may be non-integral (issue 34.6): CEGAR refuses the system with an input error
/// naming the methods that take it (never a crash, never a verdict), and BMC agrees with the
/// explicit search, whose dropped successors are the non-integral ones.
#[test]
fn non_integral_updates_are_refused_by_cegar_and_decided_by_bmc() {
    let (mut refused, mut safe, mut unsafe_) = (0, 0, 0);
    for seed in 100..130 {
        let text = system(seed, true);
        let sys = load(seed, &text);
        let d = Discrete::new(&sys).unwrap();
        let is_safe = explicitly_safe(&d);
        *if is_safe { &mut safe } else { &mut unsafe_ } += 1;
        match check_cegar(&d, &CegarOptions::default(), &Budget::unlimited()) {
            Err(e) if d.non_integral_update().is_some() => {
                let message = e.to_string();
                assert!(message.contains("bmc") && message.contains("explicit"), "seed {seed}: {message}");
                refused += 1;
            }
            Err(e) => panic!("seed {seed}: CEGAR failed on an integral system: {e}"),
            Ok(o) => {
                assert!(d.non_integral_update().is_none(), "seed {seed}: CEGAR answered on a non-integral update");
                assert_eq!(matches!(o.verdict, Verdict::Proven { .. }), is_safe, "seed {seed}: CEGAR vs explicit");
            }
        }
        match check_bmc(&d, &BmcOptions::default(), &Budget::unlimited()).unwrap().verdict {
            Verdict::Proven { .. } => assert!(is_safe, "seed {seed}: bmc says safe, explicit finds a run\n{text}"),
            Verdict::Refuted { trace, .. } => {
                assert!(!is_safe, "seed {seed}: bmc says unsafe, explicit proves safe\n{text}");
                trace.replay(&sys).unwrap_or_else(|e| panic!("seed {seed}: the run does not replay: {e}"));
            }
            other => panic!("seed {seed}: bmc: {other:?}"),
        }
    }
    assert!(refused >= 10 && safe >= 3 && unsafe_ >= 3, "{refused} refused, {safe} safe, {unsafe_} unsafe");
}
