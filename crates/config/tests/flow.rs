//! Continuous-time systems: `[flow]` with the control period and a rate per state variable.

use trestle_config::{Overrides, load_sampled_system, load_system};
use trestle_ir::num::parse_rational;
use trestle_testkit::scratch;

const PENDULUM: &str = r#"
init = "0.3 <= th <= 0.4 and w == 0"
[state]
th = { type = "real" }
w = { type = "real" }
[controller]
model = "net.nnet"
actions = ["a0", "a1"]
[let]
g = "9.81"
[flow]
period = 0.05
th = "w"
w = "-g * sin(th) + a0 - a1"
"#;

fn load(text: &str) -> Result<(trestle_ir::System, Option<trestle_ir::plant::SampledPlant>), String> {
    let (_dir, path) = scratch("sys.toml", text);
    load_sampled_system(&path, &Overrides::default()).map_err(|e| e.to_string())
}

#[test]
fn a_flow_system_loads_with_its_plant() {
    let (sys, plant) = load(PENDULUM).unwrap();
    let plant = plant.expect("[flow] gives a plant");
    assert_eq!(plant.period, parse_rational("1/20").unwrap());
    assert_eq!(plant.rates.len(), 2);
    assert_eq!(plant.rates[0].vars(), vec![trestle_ir::VarRef::State(1)]);
    // The step is the identity: the flow replaces it.
    assert_eq!(sys.step.branches.len(), 1);
    assert_eq!(sys.step.branches[0].updates[0], trestle_ir::Expr::Var(trestle_ir::VarRef::State(0)));
    // A discrete system has no plant.
    let discrete = PENDULUM.replace("[flow]\nperiod = 0.05", "[step]").replace("th = \"w\"", "th = \"th + 0.05*w\"");
    assert!(load(&discrete).unwrap().1.is_none());
}

#[test]
fn engines_loading_a_flow_system_are_refused() {
    let (_dir, path) = scratch("sys.toml", PENDULUM);
    let msg = load_system(&path, &Overrides::default()).unwrap_err().to_string();
    assert!(msg.contains("flow") && msg.contains("trestle simulate"), "{msg}");
}

#[test]
fn bad_flows_name_the_key_and_the_problem() {
    let expect = |text: &str, fragments: &[&str]| {
        let msg = load(text).expect_err("must be rejected");
        for f in fragments {
            assert!(msg.contains(f), "expected '{f}' in: {msg}");
        }
    };
    expect(&PENDULUM.replace("period = 0.05\n", ""), &["flow.period", "needs the control period"]);
    expect(&PENDULUM.replace("period = 0.05", "period = 0"), &["flow.period", "positive"]);
    expect(&PENDULUM.replace("period = 0.05", "period = \"fast\""), &["flow.period", "not a number"]);
    expect(&PENDULUM.replace("th = \"w\"\n", ""), &["flow.th", "needs its rate"]);
    expect(&PENDULUM.replace("th = \"w\"", "z = \"w\""), &["flow.z", "unknown state variable 'z'"]);
    expect(&PENDULUM.replace("th = \"w\"", "th = \"w +\""), &["flow.th", "cannot parse"]);
    expect(&PENDULUM.replace("th = \"w\"", "th = \"q\""), &["flow.th", "unknown name 'q'"]);
    expect(&PENDULUM.replace("[let]", "[step]\nth = \"th\"\n[let]"), &["flow", "not supported yet"]);
    expect(
        &PENDULUM
            .replace("w = { type = \"real\" }", "w = { type = \"real\" }\nk = { type = \"int\", domain = [0, 3] }")
            .replace("period = 0.05", "period = 0.05\nk = 0"),
        &["flow.k", "only real variables"],
    );
    expect(&PENDULUM.replace("th = \"w\"", "th = true"), &["flow.th", "rate"]);
}
