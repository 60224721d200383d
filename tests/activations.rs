//! The command line with the activations beyond ReLU: malformed ONNX files are input errors (exit
//! 2) naming the node and the reason; a trailing softmax is accepted for argmax controllers only;
//! `trestle info` shows every layer's activation and the loader's notes; `trestle eval` evaluates
//! tanh, sigmoid, leaky ReLU and clip networks.

mod common;

use common::cli::{s, trestle};
use common::onnx::{Attr, Node, model};

const W: [f32; 6] = [1.0, -0.5, 0.25, 2.0, -1.5, 0.75];

#[test]
fn malformed_models_are_input_errors_naming_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>, &str, Vec<&str>)> = vec![
        (
            "conv.onnx",
            // A 1x2 kernel over a 1x3 image: two output positions, not a dense layer.
            model(
                &[1, 1, 1, 3],
                &[1, 2],
                &[
                    Node(&["x", "K"], "c", "narrow", "Conv", vec![]),
                    Node(&["c"], "y", "flat", "Flatten", vec![Attr::Int("axis", 1)]),
                ],
                &[("K", &[2, 1, 1, 2], &[1.0, 2.0, 3.0, 4.0])],
                13,
            ),
            "0,0,0",
            vec!["node #0 \"narrow\" (Conv)", "covering its whole input"],
        ),
        (
            "leaky.onnx",
            model(&[1, 3], &[1, 3], &[Node(&["x"], "y", "leak", "LeakyRelu", vec![Attr::Int("alpha", 2)])], &[], 13),
            "0,0,0",
            vec!["node #0 \"leak\" (LeakyRelu)", "attribute alpha"],
        ),
        (
            "softmax_mid.onnx",
            model(
                &[1, 3],
                &[1, 3],
                &[Node(&["x"], "p", "sm", "Softmax", vec![]), Node(&["p"], "y", "r", "Relu", vec![])],
                &[],
                13,
            ),
            "0,0,0",
            vec!["node #0 \"sm\" (Softmax)", "only as the graph's last node"],
        ),
        (
            "clip.onnx",
            model(
                &[1, 3],
                &[1, 3],
                &[Node(&["x"], "y", "clamp", "Clip", vec![Attr::Float("min", 1.0), Attr::Float("max", 0.0)])],
                &[],
                6,
            ),
            "0,0,0",
            vec!["node #0 \"clamp\" (Clip)", "above the upper bound"],
        ),
    ];
    for (file, bytes, input, says) in cases {
        let path = dir.path().join(file);
        std::fs::write(&path, bytes).unwrap();
        trestle(&["eval", s(&path), "--input", input]).expect_input_error(&says);
    }
}

fn softmax_model() -> Vec<u8> {
    model(
        &[1, 2],
        &[1, 3],
        &[
            Node(&["x", "W"], "z", "fc", "Gemm", vec![Attr::Int("transB", 1)]),
            Node(&["z"], "y", "probs", "Softmax", vec![Attr::Int("axis", 1)]),
        ],
        &[("W", &[3, 2], &W)],
        13,
    )
}

fn softmax_system(dir: &std::path::Path, output: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("policy.onnx"), softmax_model()).unwrap();
    let text = format!(
        "init = \"0 <= x <= 1 and 0 <= y <= 1\"\n[state]\nx = {{ type = \"real\" }}\ny = {{ type = \"real\" }}\n\
         [controller]\nmodel = \"policy.onnx\"\n{output}\n[step]\nx = \"x\"\ny = \"y\"\n"
    );
    let path = dir.join(format!("sys{}.toml", output.len()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_trailing_softmax_is_for_argmax_controllers_only() {
    let dir = tempfile::tempdir().unwrap();
    let argmax = softmax_system(dir.path(), "argmax = \"a\"");
    let run = trestle(&["info", s(&argmax)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("node #1 \"probs\" (Softmax), is left out"), "{}", run.stdout);
    let real = softmax_system(dir.path(), "actions = [\"a\", \"b\", \"c\"]");
    trestle(&["info", s(&real)]).expect_input_error(&["ends in a softmax", "node #1 \"probs\"", "argmax"]);
    // eval prints the softmax's inputs and says so.
    let path = dir.path().join("policy.onnx");
    let run = trestle(&["eval", s(&path), "--input", "1,0"]);
    assert_eq!((run.code, run.stdout.trim()), (0, "1, 0.25, -1.5"), "{}", run.stderr);
    assert!(run.stderr.contains("is left out"), "{}", run.stderr);
}

#[test]
fn info_shows_activations_and_eval_computes_them() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
init = "0 <= x <= 1"
[state]
x = { type = "real" }
[networks.policy]
layers = [
  { weights = [[1.0], [-2.0]], bias = [0.0, 0.5], activation = "tanh" },
  { weights = [[1.0, 1.0], [0.5, -1.0]], bias = [0.0, 0.0], activation = "leaky_relu", alpha = 0.125 },
  { weights = [[1.0, 1.0]], bias = [0.0], activation = "clip", min = -1, max = 0.75 },
]
[controller]
network = "policy"
actions = ["a"]
[step]
x = "x + 0.1*a"
"#;
    let path = dir.path().join("act.toml");
    std::fs::write(&path, text).unwrap();
    let run = trestle(&["info", s(&path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("(1 clip, 2 leaky_relu, 2 tanh)"), "{}", run.stdout);
    assert!(
        run.stdout.contains("layer activations: tanh, leaky_relu(alpha = 0.125), clip[-1, 0.75]"),
        "{}",
        run.stdout
    );
    let run = trestle(&["info", s(&path), "--json"]);
    let json = run.json();
    assert_eq!(json["networks"][0]["activations"][1], "leaky_relu(alpha = 0.125)");
    assert_eq!(json["networks"][0]["neurons"]["tanh"], 2);
    // eval on a tanh / sigmoid model file: the standard library's values.
    for (op, f) in [("Tanh", f64::tanh as fn(f64) -> f64), ("Sigmoid", |z: f64| 1.0 / (1.0 + (-z).exp()))] {
        let file = dir.path().join(format!("{op}.onnx"));
        std::fs::write(&file, model(&[1, 2], &[1, 2], &[Node(&["x"], "y", "act", op, vec![])], &[], 13)).unwrap();
        let run = trestle(&["eval", s(&file), "--input", "0.5,-2", "--json"]);
        let out: Vec<f64> = run.json()["output"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(out, vec![f(0.5), f(-2.0)], "{op}");
    }
}

/// A network an engine cannot handle is refused with exit 2 and who can, never a verdict; the
/// bridge engine bounds tanh and clip networks (CROWN) and proves what their bounds prove.
#[test]
fn engines_refuse_what_they_cannot_handle() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
init = "0 <= x <= 0.1"
safe = "-1 <= x <= 1"
invariant = "-0.5 <= x <= 0.5"
[state]
x = { type = "real" }
[networks.policy]
layers = [
  { weights = [[1.0]], bias = [0.0], activation = "ACT" },
  { weights = [[-0.5]], bias = [0.0], activation = "identity" },
]
[controller]
network = "policy"
actions = ["a"]
[step]
x = "x + 0.1*a"
"#;
    let tanh = dir.path().join("tanh.toml");
    std::fs::write(&tanh, text.replace("ACT", "tanh")).unwrap();
    // The MILP engines encode networks exactly: tanh has no exact encoding, so they refuse it.
    trestle(&["check", s(&tanh), "--method", "milp"]).expect_input_error(&[
        "the activation tanh",
        "check --method milp",
        "`check` (the bridge engine)",
    ]);
    // The bridge engine proves it from CROWN's rigorous tanh bounds alone: |x| <= 0.5 shrinks
    // under x' = x - 0.05 tanh(x).
    let run = trestle(&["check", s(&tanh), "--json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(run.json()["verdict"], "safe", "{}", run.stdout);
    let clip = dir.path().join("clip.toml");
    std::fs::write(&clip, text.replace("\"ACT\"", "\"clip\", min = -0.25, max = 0.25")).unwrap();
    // Both with CROWN (the default) and IBP: |x| <= 0.5 shrinks under x' = x - 0.05 clip(x).
    for post in ["crown", "ibp"] {
        let run = trestle(&["check", s(&clip), "--post", post, "--json"]);
        assert_eq!(run.code, 0, "{post}: {}\n{}", run.stdout, run.stderr);
        assert_eq!(run.json()["verdict"], "safe", "{post}: {}", run.stdout);
    }
}
