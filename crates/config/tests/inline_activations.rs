//! Inline `[networks]` layers with the activations beyond ReLU: each spelling loads to its IR
//! activation (parameters exact, canonical), parameters that are not f64 values or belong to
//! another activation are errors naming the key, and random activation specs never panic.

use proptest::prelude::*;
use trestle_config::{Overrides, load_system_from_str};
use trestle_ir::network::{Activation, Layer};
use trestle_testkit::scratch;

/// A one-variable system whose controller runs the inline network: the first layer's activation
/// spelled `spec` (the text after `activation = `).
fn system(spec: &str) -> String {
    format!(
        r#"
init = "0 <= x <= 1"
[state]
x = {{ type = "real" }}
[networks.policy]
layers = [
  {{ weights = [[1.0], [-2.0]], bias = [0.0, 0.5], activation = {spec} }},
  {{ weights = [[1.0, 1.0]], bias = [0.0], activation = "identity" }},
]
[controller]
network = "policy"
actions = ["a"]
[step]
x = "x + 0.1*a"
"#
    )
}

fn load(spec: &str) -> Result<Activation, String> {
    let (_dir, path) = scratch("inline.toml", "");
    let sys = load_system_from_str(&system(spec), &path, &Overrides::default()).map_err(|e| e.to_string())?;
    Ok(sys.networks[0].network.layers[0].activation())
}

#[test]
fn every_spelling_loads_to_its_activation() {
    let cases = [
        ("\"relu\"", Activation::Relu),
        ("\"identity\"", Activation::Identity),
        ("\"tanh\"", Activation::Tanh),
        ("\"sigmoid\"", Activation::Sigmoid),
        ("\"leaky_relu\", alpha = 0.25", Activation::LeakyRelu { alpha: 0.25 }),
        ("\"leaky_relu\", alpha = \"-3/8\"", Activation::LeakyRelu { alpha: -0.375 }),
        ("\"leaky_relu\", alpha = 2", Activation::LeakyRelu { alpha: 2.0 }),
        ("\"leaky_relu\", alpha = 0", Activation::Relu),
        ("\"leaky_relu\", alpha = 1", Activation::Identity),
        ("\"clip\", min = -1, max = 1", Activation::Clip { lo: -1.0, hi: 1.0 }),
        ("\"clip\", min = 0, max = 6", Activation::Clip { lo: 0.0, hi: 6.0 }),
        ("\"clip\", max = 0.5", Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.5 }),
        ("\"clip\", min = -0.5", Activation::Clip { lo: -0.5, hi: f64::INFINITY }),
        ("\"clip\", min = 0", Activation::Relu),
        ("\"clip\", min = 2, max = 2", Activation::Clip { lo: 2.0, hi: 2.0 }),
    ];
    for (spec, want) in cases {
        assert_eq!(load(spec).unwrap_or_else(|e| panic!("{spec}: {e}")), want, "{spec}");
    }
}

#[test]
fn bad_parameters_are_errors_naming_the_key() {
    let cases: [(&str, &[&str]); 9] = [
        (
            "\"leaky_relu\", alpha = 0.01",
            &["layers[0].alpha", "0.01 is not exactly an f64", "0.01000000000000000020816681711721685"],
        ),
        ("\"leaky_relu\", alpha = \"1/3\"", &["layers[0].alpha", "1/3 is not exactly an f64"]),
        ("\"leaky_relu\"", &["layers[0].activation", "leaky_relu needs `alpha`"]),
        ("\"clip\"", &["layers[0].activation", "clip needs `min`, `max` or both"]),
        ("\"clip\", min = 1, max = -1", &["layers[0]", "above the upper bound"]),
        ("\"clip\", min = 0.1", &["layers[0].min", "not exactly an f64"]),
        ("\"relu\", alpha = 0.5", &["layers[0].alpha", "`alpha` is a parameter of leaky_relu, not of relu"]),
        ("\"tanh\", max = 1", &["layers[0].max", "`max` is a parameter of clip, not of tanh"]),
        ("\"softplus\"", &["unknown activation 'softplus'", "leaky_relu, clip, tanh or sigmoid"]),
    ];
    for (spec, parts) in cases {
        let msg = load(spec).expect_err(spec);
        assert!(msg.contains("inline.toml"), "{msg}");
        for p in parts {
            assert!(msg.contains(p), "{spec}: {msg:?} does not say {p:?}");
        }
    }
}

#[test]
fn inline_networks_evaluate_their_activations() {
    let (_dir, path) = scratch("inline.toml", "");
    let sys = load_system_from_str(&system("\"clip\", min = -0.5, max = 0.25"), &path, &Overrides::default()).unwrap();
    let net = &sys.networks[0].network;
    // x = 1: clip(1) + clip(-1.5) = 0.25 - 0.5; x = 0: clip(0) + clip(0.5) = 0 + 0.25.
    assert_eq!(net.eval(&[1.0]).unwrap(), vec![-0.25]);
    assert_eq!(net.eval(&[0.0]).unwrap(), vec![0.25]);
    let Layer::Dense(d) = &net.layers[0] else { panic!() };
    assert_eq!(d.activation, Activation::Clip { lo: -0.5, hi: 0.25 });
}

const NAMES: &[&str] = &[
    "\"relu\"",
    "\"identity\"",
    "\"linear\"",
    "\"tanh\"",
    "\"sigmoid\"",
    "\"leaky_relu\"",
    "\"clip\"",
    "\"Clip\"",
    "\"\"",
    "3",
    "[\"relu\"]",
];
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "0.5",
    "0.1",
    "\"1/3\"",
    "\"-7/16\"",
    "1e308",
    "1e400",
    "1e-400",
    "-0.0",
    "\"x\"",
    "true",
    "[]",
    "1.00000000000000000001",
    "4.9406564584124654e-324",
    "\"1/0\"",
    "99999999999999999999",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random activation specs load (to a valid, canonical activation) or fail with an error that
    /// names the file; none panics.
    #[test]
    fn random_activation_specs_never_panic(
        name in prop::sample::select(NAMES),
        alpha in prop::option::of(prop::sample::select(NUMBERS)),
        min in prop::option::of(prop::sample::select(NUMBERS)),
        max in prop::option::of(prop::sample::select(NUMBERS)),
    ) {
        let mut spec = name.to_string();
        for (key, v) in [("alpha", alpha), ("min", min), ("max", max)] {
            if let Some(v) = v {
                spec += &format!(", {key} = {v}");
            }
        }
        match load(&spec) {
            Ok(act) => {
                prop_assert!(act.validate().is_ok(), "{spec}: {act}");
                prop_assert_eq!(act, act.canonical());
            }
            Err(msg) => prop_assert!(msg.contains("inline.toml") && !msg.contains("panicked"), "{}", msg),
        }
    }
}
