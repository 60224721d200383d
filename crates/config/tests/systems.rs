//! The shipped system files load, and bad files fail with the file, the key and the problem.

use trestle_config::{Overrides, load_system, load_system_from_str};
use trestle_ir::system::{ActionKind, Policy};
use trestle_testkit::{repo, scratch, shared_models};

fn set(args: &[&str]) -> Overrides {
    Overrides::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

#[test]
fn examples_load() {
    for f in ["examples/maze-det.toml", "examples/maze-nondet.toml"] {
        let sys = load_system(&repo().join(f), &Overrides::default()).unwrap();
        assert_eq!(sys.state_names(), vec!["x", "y"]);
        assert_eq!(sys.action_names(), vec!["a0", "a1"]);
        assert_eq!(sys.networks[0].network.sizes(), vec![2, 8, 8, 2]);
        assert!(sys.invariant.is_some() && sys.safe.is_some());
    }
}

#[test]
fn shared_systems_load() {
    if shared_models().is_none() {
        return;
    }
    let det = load_system(&repo().join("configs/systems/peer-maze-det.toml"), &Overrides::default()).unwrap();
    assert_eq!(det.networks[0].network.sizes(), vec![2, 32, 32, 2]);
    let vcas = load_system(&repo().join("configs/systems/vcas.toml"), &set(&["init.hdot0=-22.5"])).unwrap();
    assert!(matches!(&vcas.controllers[0].policy, Policy::Select { networks, .. } if networks.len() == 9));
    assert_eq!(vcas.step.branches.len(), 4);
    assert!(matches!(&vcas.actions[0].kind, ActionKind::Index { labels } if labels[4] == "CL1500"));
    let fl = load_system(&repo().join("configs/systems/frozenlake.toml"), &Overrides::default()).unwrap();
    assert_eq!(fl.networks[0].network.sizes(), vec![9, 32, 32, 4]);
    assert_eq!(fl.properties.len(), 2);
    let rnn = load_system(&repo().join("configs/systems/rnn-figure1.toml"), &Overrides::default()).unwrap();
    assert!(rnn.networks[0].network.is_recurrent());
}

#[test]
fn set_overrides_model_relative_to_working_directory() {
    if shared_models().is_none() {
        return;
    }
    let model = repo().join("../shared/models/maze/det/maze_2d_64x64.onnx");
    let arg = format!("controller.model={}", model.display());
    let sys = load_system(&repo().join("configs/systems/peer-maze-det.toml"), &set(&[&arg])).unwrap();
    assert_eq!(sys.networks[0].network.sizes(), vec![2, 64, 64, 2]);
}

/// Loads a system text placed in a scratch directory beside a copy of the example network.
fn load_text(text: &str) -> Result<trestle_ir::System, String> {
    let (_dir, path) = scratch("sys.toml", text);
    load_system_from_str(text, &path, &Overrides::default()).map_err(|e| e.to_string())
}

const GOOD: &str = r#"
init = "0.3 <= x <= 0.4"
[state]
x = { type = "real" }
y = { type = "real" }
[controller]
model = "net.nnet"
actions = ["a0", "a1"]
[step]
x = "x + 0.1*a0"
y = "y + 0.1*a1"
"#;

#[test]
fn a_good_file_loads() {
    let sys = load_text(GOOD).unwrap();
    assert_eq!(sys.name, "sys");
}

fn expect_error(text: &str, fragments: &[&str]) {
    let msg = load_text(text).expect_err("must be rejected");
    assert!(msg.contains("sys.toml"), "message must name the file: {msg}");
    for f in fragments {
        assert!(msg.contains(f), "expected '{f}' in: {msg}");
    }
}

#[test]
fn bad_input_names_file_key_and_problem() {
    expect_error("[state\nx = 1", &["malformed TOML"]);
    expect_error(&GOOD.replace("x + 0.1*a0", "x + 0.1*b0"), &["step.x", "unknown name 'b0'"]);
    expect_error(&GOOD.replace("x + 0.1*a0", "x + 0.1*"), &["step.x", "cannot parse"]);
    expect_error(&GOOD.replace("[step]\nx =", "[step]\nz ="), &["step.z", "unknown state variable 'z'"]);
    // `init` written below a table header belongs to that table (TOML): the message says so.
    let late_init = format!("{}init = \"0 <= x <= 1\"\n", GOOD.replace("init = \"0.3 <= x <= 0.4\"\n", ""));
    expect_error(&late_init, &["step.init", "unknown state variable 'init'", "before the first [table] header"]);
    expect_error(&GOOD.replace("net.nnet", "missing.onnx"), &["controller.model", "missing.onnx"]);
    expect_error(
        &GOOD.replace("actions = [\"a0\", \"a1\"]", "actions = [\"a0\"]").replace("y + 0.1*a1", "y"),
        &["controller", "2 outputs but 1"],
    );
    expect_error(
        &GOOD.replace("model = \"net.nnet\"", "model = \"net.nnet\"\ninputs = [\"x\"]"),
        &["takes 2 inputs but 1"],
    );
    expect_error(&GOOD.replace("[state]", "[state]\nq = { type = \"complex\" }"), &["state.q.type", "unknown type"]);
    expect_error(&GOOD.replace("[step]", "[stepp]"), &["stepp"]);
    expect_error(&GOOD.replace("init = \"0.3 <= x <= 0.4\"", "init = \"a0 <= 1\""), &["init", "unknown name 'a0'"]);
    expect_error(&GOOD.replace("0.1*a0", "a0/y"), &["only by a constant"]);
}

#[test]
fn nan_weights_in_inline_networks_are_rejected() {
    // TOML has `nan`; an inline network with it must be refused, naming the network.
    let text = GOOD.replace(
        "[controller]\nmodel = \"net.nnet\"",
        "[networks.n]\nlayers = [{ weights = [[nan, 1.0], [0.0, 1.0]], activation = \"identity\" }]\n[controller]\nnetwork = \"n\"",
    );
    expect_error(&text, &["networks.n", "finite"]);
}

#[test]
fn toml_floats_mean_the_decimal_written() {
    let sys = load_text(&GOOD.replace("[state]", "[constants]\nK = 0.1\nH = \"1/3\"\n[state]")).unwrap();
    assert_eq!(sys.constants[0].1, trestle_ir::num::parse_rational("1/10").unwrap());
    assert_eq!(sys.constants[1].1, trestle_ir::num::parse_rational("1/3").unwrap());
}
