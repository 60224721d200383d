//! The generator: same spec, same bytes; verdicts established as claimed; bad specs refused.

use std::collections::BTreeMap;
use std::path::Path;
use trestle_ir::expr::Env;
use trestle_maze::truth::Truth;
use trestle_maze::{MazeError, Spec, generate};

const SPEC: &str = r#"
[maze]
name = "tiny"
seed = 7
dt = 0.1
init = [[0.3, 0.4], [0.6, 0.7]]
safe = [[0.22, 0.98], [0.54, 0.98]]
candidate = [[[0.25, 0.95], [0.55, 0.95]]]
goal = [0.6, 0.75]
samples = 24
epochs = 60

[[family]]
dynamics = "det"
shapes = ["2x16"]
defects = ["none", "drift"]

[[family]]
dynamics = "nondet"
noise = [0.5, 1.0]
disturbance = [-0.002, 0.002]
shapes = ["1x8"]
defects = ["undertrained"]
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
    // `--only` keeps an instance's place in the whole spec: the last instance alone is the same
    // controller and system as in the full run, and its suite file lists it alone.
    let c = tempfile::tempdir().unwrap();
    let last = "nondet0.5to1-dist-0.002to0.002-1x8-undertrained";
    let alone = generate(&spec, c.path(), None, None, &["-dist".into()], &|_| {}).unwrap();
    assert_eq!(alone.instances.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), [last]);
    let fc = files(c.path());
    for f in [format!("models/{last}.onnx"), format!("systems/{last}.toml")] {
        assert_eq!(fc[&f], fa[&f], "{f} differs when generated alone");
    }
    assert_eq!(String::from_utf8(fc["suite.toml"].clone()).unwrap().matches("[[instance]]").count(), 1);

    let by_name = |n: &str| first.instances.iter().find(|i| i.name == n).unwrap();
    // The law toward a goal inside the candidate is contracting: a certified proof.
    assert!(matches!(by_name("det-2x16-none").truth, Truth::Safe { .. }), "{:?}", by_name("det-2x16-none"));
    // The goal beyond Safe's corner: runs leave, and the one-step counterexample replays.
    let drift = by_name("det-2x16-drift");
    assert!(drift.unsafe_run.is_some());
    let Truth::NotInductive { state, next } = &drift.truth else { panic!("{drift:?}") };
    let sys = trestle_config::load_system(&a.path().join("systems/det-2x16-drift.toml"), &Default::default()).unwrap();
    let inv = sys.invariant.as_ref().unwrap();
    assert!(inv.eval_exact(&Env::new(state, &[], &[])).unwrap());
    assert!(!inv.eval_exact(&Env::new(next, &[], &[])).unwrap());
    assert_eq!(trestle_maze::truth::exact_violation(&sys, inv, state).as_ref(), Some(next));
    // The disturbance is an input of its own on each coordinate.
    let disturbed =
        String::from_utf8(fa["systems/nondet0.5to1-dist-0.002to0.002-1x8-undertrained.toml"].clone()).unwrap();
    assert!(
        disturbed.contains("x = \"x + 0.1*c*a0 + dx\"") && disturbed.contains("dy = { interval = [-0.002, 0.002] }"),
        "{disturbed}"
    );
    // The suite file lists every instance with its expectation.
    let suite = String::from_utf8(fa["suite.toml"].clone()).unwrap();
    assert!(suite.contains("name = \"det-2x16-drift\"") && suite.contains("expect = \"not-inductive\""), "{suite}");
    assert!(suite.contains("system = \"systems/det-2x16-none.toml\""), "{suite}");
}

/// tanh and sigmoid families: the same verdicts, established through validated enclosures (the
/// controllers have no rational values), and ReLU instances keep their names.
#[test]
fn tanh_and_sigmoid_controllers_are_trained_and_judged_by_validated_replay() {
    let text = SPEC.replace(
        "[[family]]\ndynamics = \"nondet\"",
        "[[family]]\ndynamics = \"det\"\nactivation = \"tanh\"\nshapes = [\"2x16\"]\ndefects = [\"none\", \"drift\"]\n\n\
         [[family]]\ndynamics = \"det\"\nactivation = \"sigmoid\"\nshapes = [\"2x16\"]\ndefects = [\"none\"]\n\n\
         [[family]]\ndynamics = \"nondet\"",
    );
    let spec = Spec::parse(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let generated = generate(&spec, dir.path(), None, None, &[], &|_| {}).unwrap();
    let by_name = |n: &str| generated.instances.iter().find(|i| i.name == n).unwrap_or_else(|| panic!("{n}"));
    assert!(matches!(by_name("det-2x16-none").truth, Truth::Safe { .. }));
    for name in ["det-tanh-2x16-none", "det-sigmoid-2x16-none"] {
        assert!(matches!(by_name(name).truth, Truth::Safe { .. }), "{:?}", by_name(name));
        let net = trestle_nn::load_onnx(&dir.path().join(format!("models/{name}.onnx"))).unwrap();
        let act = if name.contains("tanh") { "tanh" } else { "sigmoid" };
        assert_eq!(net.layers[0].activation().name(), act, "{name}");
    }
    let drift = by_name("det-tanh-2x16-drift");
    assert!(drift.unsafe_run.is_some(), "{drift:?}");
    let Truth::NotInductiveValidated { state, next, precision_bits } = &drift.truth else { panic!("{drift:?}") };
    assert_eq!(*precision_bits, 256);
    let sys =
        trestle_config::load_system(&dir.path().join("systems/det-tanh-2x16-drift.toml"), &Default::default()).unwrap();
    let inv = sys.invariant.as_ref().unwrap();
    assert!(inv.eval_exact(&Env::new(state, &[], &[])).unwrap());
    // The successor's enclosure lies outside the candidate box on some axis, strictly.
    let outside = |i: usize, lo: &str, hi: &str| {
        let q = |t: &str| trestle_ir::num::parse_rational(t).unwrap();
        next[i].hi < q(lo) || next[i].lo > q(hi)
    };
    assert!(outside(0, "0.25", "0.95") || outside(1, "0.55", "0.95"), "{next:?}");
    let suite = std::fs::read_to_string(dir.path().join("suite.toml")).unwrap();
    assert!(suite.contains("leaves Safe after") && suite.contains("(validated)"), "{suite}");
}

#[test]
fn bad_specs_are_input_errors() {
    let cases = [
        ("not toml [", "expected"),
        (&SPEC.replace("\"2x16\"", "\"2y16\""), "DEPTHxWIDTH"),
        (&SPEC.replace("noise = [0.5, 1.0]\n", ""), "noise"),
        (&SPEC.replace("disturbance = [-0.002, 0.002]", "disturbance = [0.1, -0.1]"), "disturbance"),
        (&SPEC.replace("dt = 0.1", "dt = -1"), "dt"),
        (&SPEC.replace("init = [[0.3, 0.4]", "init = [[0.4, 0.3]"), "maze.init"),
        (&SPEC.replace("seed = 7", "seed = 7\nextra = 1"), "unknown field"),
        (&SPEC.replace("\"drift\"", "\"wobbly\""), "unknown variant"),
        (&SPEC.replace("shapes = [\"2x16\"]", "activation = \"softplus\"\nshapes = [\"2x16\"]"), "unknown variant"),
        (&SPEC.replace("defects = [\"none\", \"drift\"]", "defects = [\"none\", \"none\"]"), "listed twice"),
    ];
    for (text, needle) in cases {
        let e = Spec::parse(text).unwrap_err();
        assert!(e.contains(needle), "{needle:?} not in {e:?}");
    }
    // A candidate box around an obstacle (all four corners safe) is refused.
    let spec = Spec::parse(
        &SPEC.replace("goal = [0.6, 0.75]", "goal = [0.6, 0.75]\nobstacles = [[[0.8, 0.85], [0.6, 0.65]]]"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    match generate(&spec, dir.path(), None, None, &[], &|_| {}) {
        Err(MazeError::Input(m)) => assert!(m.contains("obstacles"), "{m}"),
        other => panic!("{other:?}"),
    }
    // A candidate that does not contain Init is refused when the first system is judged.
    let spec = Spec::parse(&SPEC.replace("candidate = [[[0.25, 0.95]", "candidate = [[[0.35, 0.95]")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    match generate(&spec, dir.path(), None, None, &[], &|_| {}) {
        Err(MazeError::Input(m)) => assert!(m.contains("contain init"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// The f64 vertices that rank candidates lie in the declared interval even where the nearest f64
/// of an end does not (the nearest f64 of -0.005 is below -1/200, that of 0.005 above 1/200): the
/// f64 step refuses an input outside its domain, and a ranking at such a vertex fails.
#[test]
fn f64_vertices_lie_inside_the_disturbance_interval() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/maze-nondet.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace("[0.5, 1.0]", "[-0.005, 0.005]");
    let sys = trestle_config::load_system_from_str(&text, &path, &Default::default()).unwrap();
    let q = |t: &str| trestle_ir::num::parse_rational(t).unwrap();
    let verts = trestle_maze::truth::f64_vertices(&sys);
    assert_eq!(verts.len(), 2);
    for v in verts.iter().flatten() {
        let x = trestle_ir::num::rational_from_f64(*v);
        assert!(q("-0.005") <= x && x <= q("0.005"), "{v:e} outside [-0.005, 0.005]");
        assert!(v.abs() > 0.00499, "{v:e} is not an end");
    }
}
