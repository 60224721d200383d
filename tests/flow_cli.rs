//! `trestle simulate` on a continuous-time system (`[flow]`), and the other commands refusing it.

use serde_json::Value;
use std::process::Command;
use trestle_testkit::scratch;

/// A pendulum th'' = -g sin(th) + u under the linear feedback u = -20 th - 5 w (an inline
/// network), sampled every 0.05 s, with a held disturbance d in [-0.1, 0.1].
const PENDULUM: &str = r#"
safe = "-1 <= th <= 1"

[system]
name = "pendulum-flow"

[state]
th = { type = "real" }
w = { type = "real" }

[nondet]
d = { interval = [-0.1, 0.1] }

[networks.k]
layers = [{ weights = [[-20.0, -5.0]], bias = [0.0], activation = "identity" }]

[controller]
network = "k"
inputs = ["th", "w"]
actions = ["u"]

[flow]
period = 0.05
th = "w"
w = "-9.81 * sin(th) + u + d"

[init]
th = [0.3, 0.4]
w = [0, 0]
"#;

fn trestle(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_trestle")).args(args).output().expect("runs");
    (
        out.status.code().expect("exits normally"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn state(step: &Value, name: &str) -> f64 {
    step["state"][name].as_f64().unwrap()
}

#[test]
fn simulate_integrates_the_flow_with_held_actions() {
    let (_dir, path) = scratch("pendulum.toml", PENDULUM);
    let p = path.to_str().unwrap();
    let args = ["simulate", p, "--from", "th=0.3,w=0", "--nondet", "d=0.05", "--steps", "3", "--json"];
    let (code, out, err) = trestle(&args);
    assert_eq!(code, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["period"], "0.05");
    let steps = json["runs"][0]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    // Step 0: u = -20 * 0.3 = -6 held; th'' = -9.81 sin(th) - 6 + 0.05 over 0.05 s. A fine RK4 in
    // f64 of the same ODE agrees to 1e-9 (the simulator integrates to ~1e-30).
    assert_eq!(steps[0]["actions"]["u"].as_f64().unwrap(), -6.0);
    let (mut th, mut w) = (0.3f64, 0.0f64);
    let f = |th: f64, w: f64| (w, -9.81 * th.sin() - 6.0 + 0.05);
    let h = 0.05 / 1000.0;
    for _ in 0..1000 {
        let k1 = f(th, w);
        let k2 = f(th + h / 2.0 * k1.0, w + h / 2.0 * k1.1);
        let k3 = f(th + h / 2.0 * k2.0, w + h / 2.0 * k2.1);
        let k4 = f(th + h * k3.0, w + h * k3.1);
        th += h / 6.0 * (k1.0 + 2.0 * k2.0 + 2.0 * k3.0 + k4.0);
        w += h / 6.0 * (k1.1 + 2.0 * k2.1 + 2.0 * k3.1 + k4.1);
    }
    assert!((state(&steps[1], "th") - th).abs() < 1e-9 && (state(&steps[1], "w") - w).abs() < 1e-9, "{:?}", steps[1]);
    // The next action is the controller's on the integrated state.
    let u1 = steps[1]["actions"]["u"].as_f64().unwrap();
    assert!((u1 - (-20.0 * th - 5.0 * w)).abs() < 1e-9);
    // --float agrees with the exact (128-bit) mode.
    let mut float_args = args.to_vec();
    float_args.push("--float");
    let (code, out, err) = trestle(&float_args);
    assert_eq!(code, 0, "{err}");
    let fast: Value = serde_json::from_str(&out).unwrap();
    for name in ["th", "w"] {
        let (a, b) =
            (fast["runs"][0]["final"][name].as_f64().unwrap(), json["runs"][0]["final"][name].as_f64().unwrap());
        assert!((a - b).abs() < 1e-10, "{name}: {a} vs {b}");
    }
}

#[test]
fn other_commands_refuse_a_flow_system_and_bad_flows_are_input_errors() {
    let (_dir, path) = scratch("pendulum.toml", PENDULUM);
    let p = path.to_str().unwrap();
    for args in [vec!["info", p], vec!["verify", p], vec!["cegar", p]] {
        let (code, _, err) = trestle(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("flow") && err.contains("trestle simulate") && !err.contains("panicked"), "{err}");
        assert!(err.contains("`synth`"), "the refusal names synth among the commands that read flows: {err}");
    }
    let (_dir, path) = scratch("bad.toml", &PENDULUM.replace("-9.81 * sin(th)", "-9.81 * abs(th)"));
    let (code, _, err) = trestle(&["simulate", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("abs") && err.contains("smooth"), "{err}");
}
