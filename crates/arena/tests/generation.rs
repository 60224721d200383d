//! The generator: same spec, same bytes; the small instances' verdicts established as claimed
//! (through the library); bad specs refused.

use std::collections::BTreeMap;
use std::path::Path;
use trestle_arena::{Spec, generate};
use trestle_ir::expr::Env;
use trestle_maze::truth::{Truth, exact_violation};

const SPEC: &str = r#"
[arena]
name = "tiny"
seed = 11
dt = 0.1
goal = 0.5
init = [0.45, 0.55]
candidate = [0.2, 0.8]
safe = [0.15, 0.85]
samples = 1024
epochs = 30
proof_timeout = 60

[[family]]
dims = [3]
dynamics = "det"
shapes = ["2x32"]
defects = ["none", "drift"]

[[family]]
dims = [2]
dynamics = "nondet"
disturbance = [-0.01, 0.01]
shapes = ["1x16"]
defects = ["none"]
"#;

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn generation_is_byte_identical_and_verdicts_are_established() {
    let spec = Spec::parse(SPEC).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = generate(&spec, a.path(), None, None, &[], &|_| {}).unwrap();
    generate(&spec, b.path(), None, None, &[], &|_| {}).unwrap();
    let (fa, fb) = (files(a.path()), files(b.path()));
    assert_eq!(fa.len(), 3 * 2 + 1, "{:?}", fa.keys().collect::<Vec<_>>());
    assert_eq!(fa, fb, "two generations from one spec differ");

    let by_name = |n: &str| first.instances.iter().find(|i| i.name == n).unwrap();
    // The go-to-goal law contracts every coordinate toward a goal inside the box: certified.
    for name in ["det-3d-2x32-none", "nondet-0.01to0.01-2d-1x16-none"] {
        assert!(matches!(by_name(name).truth, Truth::Safe { .. }), "{:?}", by_name(name));
    }
    // The goal beyond Safe's corner: the one-step counterexample replays exactly.
    let drift = by_name("det-3d-2x32-drift");
    let Truth::NotInductive { state, next } = &drift.truth else { panic!("{drift:?}") };
    let sys =
        trestle_config::load_system(&a.path().join("systems/det-3d-2x32-drift.toml"), &Default::default()).unwrap();
    assert_eq!(sys.state.len(), 3);
    let inv = sys.invariant.as_ref().unwrap();
    assert!(inv.eval_exact(&Env::new(state, &[], &[])).unwrap());
    assert!(!inv.eval_exact(&Env::new(next, &[], &[])).unwrap());
    assert_eq!(exact_violation(&sys, inv, state).as_ref(), Some(next));
    // The disturbance is an input of its own on each axis.
    let disturbed = String::from_utf8(fa["systems/nondet-0.01to0.01-2d-1x16-none.toml"].clone()).unwrap();
    assert!(
        disturbed.contains("x2 = \"x2 + 0.1*a2 + d2\"") && disturbed.contains("d1 = { interval = [-0.01, 0.01] }"),
        "{disturbed}"
    );
    // The suite file lists every instance with its expectation.
    let suite = String::from_utf8(fa["suite.toml"].clone()).unwrap();
    assert_eq!(suite.matches("expect = \"safe\"").count(), 2, "{suite}");
    assert_eq!(suite.matches("expect = \"not-inductive\"").count(), 1, "{suite}");
}

#[test]
fn bad_specs_are_refused() {
    let bad = |from: &str, to: &str| {
        let text = SPEC.replacen(from, to, 1);
        assert_ne!(text, SPEC, "{from}");
        Spec::parse(&text).expect_err(to)
    };
    assert!(bad("candidate = [0.2, 0.8]", "candidate = [0.1, 0.8]").contains("strictly inside arena.safe"));
    assert!(bad("init = [0.45, 0.55]", "init = [0.1, 0.55]").contains("init must lie"));
    assert!(bad("goal = 0.5", "goal = 0.9").contains("goal"));
    assert!(bad("dims = [3]", "dims = [0]").contains("dimension 0"));
    assert!(bad("disturbance = [-0.01, 0.01]\n", "").contains("need disturbance"));
    assert!(bad("shapes = [\"2x32\"]", "shapes = [\"2x32\", \"2x32\"]").contains("twice"));
    assert!(bad("epochs = 30", "epochs = 30\nlearning = 1").contains("unknown field"));
}
