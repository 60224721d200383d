//! The 24 ONNX controllers of the ARCH-COMP AINNCS benchmarks (16 benchmarks; VCAS has nine
//! networks) in `../shared/models/archcomp`: every one loads, and on 1000 random inputs in a box
//! that makes sense for it (below) our f64 forward pass, which `trestle eval` prints, agrees with
//! independent evaluations of the file:
//!
//! * tract, on the model widened to float64 (every float32 tensor converted exactly, `Gemm`
//!   written as `MatMul` + `Add` and `Sigmoid` as `1 / (1 + exp(-x))`, which tract evaluates in
//!   float64): within 1e-9 relative;
//! * tract on the file as it is (float32 arithmetic): within 1e-5 relative (float32 rounding);
//! * when Python has the `onnx` package, its reference evaluator on the float64 model
//!   (`scripts/onnx_reference_check.py`): within 1e-9 relative. Skipped, saying so, when Python
//!   or `onnx` is missing.
//!
//! "Relative" is `|ours - theirs| / max(1, |theirs|)` per output; the worst is printed.

use prost::Message;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use tract_onnx::pb;
use tract_onnx::prelude::*;
use trestle_nn::{cross_check_with_tract, load_onnx};

/// A controller and the box its inputs are drawn from (from the benchmark's specification: the
/// region its closed loop visits, widened; the networks' own input scaling is inside them).
struct Controller {
    file: &'static str,
    lo: Vec<f64>,
    hi: Vec<f64>,
}

fn uniform(n: usize, lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    (vec![lo; n], vec![hi; n])
}

fn controllers() -> Vec<Controller> {
    let c = |file, (lo, hi): (Vec<f64>, Vec<f64>)| Controller { file, lo, hi };
    let mut all = vec![
        // (v_set, T_gap, v_ego, d_rel, v_rel): v_set = 30 and T_gap = 1.4 in the benchmark.
        c("ACC/controller_5_20.onnx", (vec![30.0, 1.4, 20.0, 0.0, -10.0], vec![30.0, 1.4, 40.0, 120.0, 10.0])),
        c("Airplane/controller_airplane.onnx", uniform(12, -1.0, 1.0)),
        c("Attitude-Control/model.onnx", uniform(6, -0.5, 0.5)),
        c("Attitude-Control/attitude_control_3_64_torch.onnx", uniform(6, -0.5, 0.5)),
        // (x, y, theta, v) around the path from [9.5, -4.5, 2.1, 1.5] to the goal near 0.
        c("Benchmark10-Unicycle/controllerB.onnx", (vec![-1.0, -5.0, -1.0, -1.0], vec![10.0, 1.0, 3.0, 2.0])),
        c("Benchmark9-Tora/controllerTora.onnx", uniform(4, -2.0, 2.0)),
        c("CartPole/model.onnx", uniform(4, -1.0, 1.0)),
        // (x, y, vx, vy): positions within 110 m, velocities within 1 m/s.
        c("Docking/model.onnx", (vec![-110.0, -110.0, -1.0, -1.0], vec![110.0, 110.0, 1.0, 1.0])),
        c("Double_Pendulum/controller_double_pendulum_less_robust.onnx", uniform(4, -2.0, 2.0)),
        c("Double_Pendulum/controller_double_pendulum_more_robust.onnx", uniform(4, -2.0, 2.0)),
        // (x, y, theta, v).
        c("NAV/networks/nn-nav-point.onnx", (vec![-1.0, -1.0, -3.2, -2.0], vec![4.0, 4.0, 3.2, 2.0])),
        c("NAV/networks/nn-nav-set.onnx", (vec![-1.0, -1.0, -3.2, -2.0], vec![4.0, 4.0, 3.2, 2.0])),
        c("QUAD/model.onnx", uniform(12, -1.0, 1.0)),
        c("QUAD/quad_controller_3_64_torch.onnx", uniform(12, -1.0, 1.0)),
        c("Single_Pendulum/controller_single_pendulum.onnx", uniform(2, -2.0, 2.0)),
    ];
    // VCAS, as the competition feeds it: (h / 16000, hdot0 / 5000, (tau - 20) / 40) for
    // |h| <= 8000 ft, |hdot0| <= 150 ft/s, tau in [0, 40] s.
    const VCAS: [&str; 9] = [
        "VCAS/onnx_networks/VertCAS_noResp_pra01_v9_20HU_200.onnx",
        "VCAS/onnx_networks/VertCAS_noResp_pra02_v9_20HU_200.onnx",
        "VCAS/onnx_networks/VertCAS_noResp_pra03_v9_20HU_200.onnx",
        "VCAS/onnx_networks/VertCAS_noResp_pra04_v9_20HU_200.onnx",
        "VCAS/onnx_networks/VertCAS_noResp_pra05_v9_20HU_200.onnx",
        "VCAS/onnx_networks/VertCAS_noResp_pra06_v9_20HU_200.onnx",
        "VCAS/onnx_networks/VertCAS_noResp_pra07_v9_20HU_200.onnx",
        "VCAS/onnx_networks/VertCAS_noResp_pra08_v9_20HU_200.onnx",
        "VCAS/onnx_networks/VertCAS_noResp_pra09_v9_20HU_200.onnx",
    ];
    all.extend(VCAS.iter().map(|f| c(f, (vec![-0.5, -0.03, -0.5], vec![0.5, 0.03, 0.5]))));
    all
}

const SAMPLES: usize = 1000;

fn samples(ctrl: &Controller, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..SAMPLES)
        .map(|_| {
            ctrl.lo.iter().zip(&ctrl.hi).map(|(&l, &h)| if l == h { l } else { rng.random_range(l..=h) }).collect()
        })
        .collect()
}

/// The worst `|a - b| / max(1, |b|)` over all outputs.
fn worst_relative(ours: &[Vec<f64>], theirs: &[Vec<f64>]) -> f64 {
    ours.iter()
        .zip(theirs)
        .flat_map(|(a, b)| {
            assert_eq!(a.len(), b.len());
            a.iter().zip(b).map(|(x, y)| (x - y).abs() / y.abs().max(1.0))
        })
        .fold(0.0, f64::max)
}

/// The float32 values of a tensor, exactly, or `None` for other types.
fn floats(t: &pb::TensorProto) -> Option<Vec<f64>> {
    if t.data_type != 1 {
        return None;
    }
    Some(if t.raw_data.is_empty() {
        t.float_data.iter().map(|&v| f64::from(v)).collect()
    } else {
        t.raw_data.chunks_exact(4).map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))).collect()
    })
}

/// The same model in float64: float32 tensors converted exactly, float types of values switched,
/// and `Gemm` (alpha = beta = 1) written as `MatMul` by the transposed constant plus `Add`, which
/// tract evaluates in float64.
fn widened(model: &pb::ModelProto) -> pb::ModelProto {
    let mut m = model.clone();
    let graph = m.graph.as_mut().expect("a graph");
    let to_double = |t: &mut pb::TensorProto| {
        if let Some(v) = floats(t) {
            t.data_type = 11;
            t.float_data.clear();
            t.raw_data = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        }
    };
    graph.initializer.iter_mut().for_each(to_double);
    for n in &mut graph.node {
        for a in &mut n.attribute {
            if let Some(t) = a.t.as_mut() {
                to_double(t);
            }
        }
    }
    for v in graph.input.iter_mut().chain(graph.output.iter_mut()).chain(graph.value_info.iter_mut()) {
        if let Some(pb::type_proto::Value::TensorType(t)) = v.r#type.as_mut().and_then(|t| t.value.as_mut())
            && t.elem_type == 1
        {
            t.elem_type = 11;
        }
    }
    let mut nodes = Vec::new();
    let mut extra = vec![pb::TensorProto {
        name: "widened.one".into(),
        data_type: 11,
        raw_data: 1f64.to_le_bytes().to_vec(),
        ..Default::default()
    }];
    let step = |name: String, op: &str, input: Vec<String>, output: String| pb::NodeProto {
        name,
        op_type: op.into(),
        input,
        output: vec![output],
        ..Default::default()
    };
    for n in std::mem::take(&mut graph.node) {
        if n.op_type == "Sigmoid" {
            // tract has no float64 Sigmoid: 1 / (1 + exp(-x)), each step in float64.
            let v = |s: &str| format!("{}.{s}", n.name);
            nodes.push(step(v("neg"), "Neg", vec![n.input[0].clone()], v("neg")));
            nodes.push(step(v("exp"), "Exp", vec![v("neg")], v("exp")));
            nodes.push(step(v("add"), "Add", vec![v("exp"), "widened.one".into()], v("add")));
            nodes.push(step(v("rec"), "Reciprocal", vec![v("add")], n.output[0].clone()));
            continue;
        }
        if n.op_type != "Gemm" {
            nodes.push(n);
            continue;
        }
        let attr = |name: &str| n.attribute.iter().find(|a| a.name == name);
        assert!(attr("alpha").is_none_or(|a| a.f == 1.0) && attr("beta").is_none_or(|a| a.f == 1.0));
        assert!(attr("transA").is_none_or(|a| a.i == 0), "{}", n.name);
        let trans_b = attr("transB").is_some_and(|a| a.i == 1);
        let w = graph.initializer.iter().find(|t| t.name == n.input[1]).expect("a constant B").clone();
        let (rows, cols) = (w.dims[0] as usize, w.dims[1] as usize);
        let values: Vec<f64> = w.raw_data.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
        // MatMul needs B as [k, n]: transpose when the file stores [n, k].
        let (dims, data) = if trans_b {
            let t: Vec<f64> =
                (0..cols).flat_map(|c| (0..rows).map(move |r| (r, c))).map(|(r, c)| values[r * cols + c]).collect();
            (vec![cols as i64, rows as i64], t)
        } else {
            (vec![rows as i64, cols as i64], values)
        };
        let name = format!("{}.B_kn", n.name);
        extra.push(pb::TensorProto {
            name: name.clone(),
            dims,
            data_type: 11,
            raw_data: data.iter().flat_map(|x| x.to_le_bytes()).collect(),
            ..Default::default()
        });
        // A feature vector of any rank: flatten to [1, k] first (MatMul broadcasts leading dims).
        let product = format!("{}.product", n.name);
        nodes.push(pb::NodeProto {
            name: format!("{}.matmul", n.name),
            op_type: "MatMul".into(),
            input: vec![n.input[0].clone(), name],
            output: vec![product.clone()],
            ..Default::default()
        });
        let mut inputs = vec![product];
        if let Some(c) = n.input.get(2) {
            inputs.push(c.clone());
        }
        let op = if inputs.len() == 2 { "Add" } else { "Identity" };
        nodes.push(pb::NodeProto {
            name: format!("{}.add", n.name),
            op_type: op.into(),
            input: inputs,
            output: n.output.clone(),
            ..Default::default()
        });
    }
    graph.node = nodes;
    graph.initializer.extend(extra);
    // The legacy `broadcast` attribute of Sub (opset 6) keeps its meaning under opset 7 numpy
    // broadcasting for the equal shapes these files use; drop it so a newer opset accepts the model.
    for n in &mut graph.node {
        n.attribute.retain(|a| a.name != "broadcast");
    }
    for o in &mut m.opset_import {
        if matches!(o.domain.as_str(), "" | "ai.onnx") && o.version < 7 {
            o.version = 7;
        }
    }
    m
}

/// tract's float64 evaluation of the widened model on each input.
fn tract_f64(model: &pb::ModelProto, shape: &[usize], inputs: &[Vec<f64>]) -> TractResult<Vec<Vec<f64>>> {
    let plan = tract_onnx::onnx()
        .model_for_proto_model(model)?
        .with_input_fact(0, InferenceFact::dt_shape(f64::datum_type(), shape.to_vec()))?
        .into_optimized()?
        .into_runnable()?;
    inputs
        .iter()
        .map(|x| {
            let t = Tensor::from_shape(shape, x)?;
            let out = plan.run(tvec!(t.into_tvalue()))?;
            Ok(out[0].to_plain_array_view::<f64>()?.iter().copied().collect())
        })
        .collect()
}

/// The declared input shape, a symbolic batch taken as 1.
fn input_shape(model: &pb::ModelProto) -> Vec<usize> {
    let graph = model.graph.as_ref().unwrap();
    let inits: Vec<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
    let input = graph.input.iter().find(|v| !inits.contains(&v.name.as_str())).unwrap();
    let Some(pb::type_proto::Value::TensorType(t)) = input.r#type.as_ref().and_then(|t| t.value.as_ref()) else {
        panic!("no tensor type")
    };
    t.shape
        .as_ref()
        .unwrap()
        .dim
        .iter()
        .map(|d| match d.value {
            Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) => v as usize,
            _ => 1,
        })
        .collect()
}

fn read_model(path: &Path) -> pb::ModelProto {
    pb::ModelProto::decode(std::fs::read(path).unwrap().as_slice()).unwrap()
}

#[test]
fn every_archcomp_controller_loads_and_agrees_with_independent_evaluations() {
    let Some(models) = trestle_testkit::shared_models() else { return };
    let dir = models.join("archcomp");
    let scratch = tempfile::tempdir().unwrap();
    let mut report = Vec::new();
    let (mut worst64, mut worst32) = (0.0f64, 0.0f64);
    let mut python_cases = Vec::new();
    for (k, ctrl) in controllers().iter().enumerate() {
        let path = dir.join(ctrl.file);
        let net = load_onnx(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(net.input_dim(), ctrl.lo.len(), "{}", ctrl.file);
        let inputs = samples(ctrl, 0xA2C + k as u64);
        let ours: Vec<Vec<f64>> = inputs.iter().map(|x| net.eval(x).unwrap()).collect();
        let model = read_model(&path);
        let wide = widened(&model);
        let theirs = tract_f64(&wide, &input_shape(&model), &inputs).unwrap_or_else(|e| panic!("{}: {e:#}", ctrl.file));
        let rel64 = worst_relative(&ours, &theirs);
        assert!(rel64 <= 1e-9, "{}: tract (float64) differs by {rel64:e} relative", ctrl.file);
        // tract on the file itself, in float32 arithmetic (ACC's Gemm reads its 4-D input, which
        // the ONNX specification does not allow and tract refuses; the float64 run, with the Gemm
        // rewritten as MatMul, covers it).
        let scale = ours.iter().flatten().fold(1.0f64, |m, v| m.max(v.abs()));
        let abs32 = match cross_check_with_tract(&path, &net, &inputs) {
            Err(e) if ctrl.file.starts_with("ACC/") && e.to_string().contains("Gemm") => 0.0,
            other => other.unwrap_or_else(|e| panic!("{e}")),
        };
        assert!(abs32 <= 1e-5 * scale, "{}: tract (float32) differs by {abs32:e}", ctrl.file);
        worst64 = worst64.max(rel64);
        worst32 = worst32.max(abs32 / scale);
        let acts: Vec<String> = net.activations().iter().map(|a| a.to_string()).collect();
        report.push(format!(
            "{:62} {:?} [{}]: tract f64 {rel64:.2e}, tract f32 {:.2e}",
            ctrl.file,
            net.sizes(),
            acts.join(", "),
            abs32 / scale
        ));
        let wide_path = scratch.path().join(format!("model{k}.onnx"));
        std::fs::write(&wide_path, wide.encode_to_vec()).unwrap();
        python_cases.push(serde_json::json!({
            "name": ctrl.file, "model": wide_path, "shape": input_shape(&model), "inputs": inputs, "ours": ours,
        }));
    }
    println!("{}", report.join("\n"));
    println!(
        "worst relative difference: tract float64 {worst64:.3e}, tract float32 {worst32:.3e} (of the output scale)"
    );
    reference_evaluator(scratch.path(), python_cases);
}

/// The `onnx` package's reference evaluator on the float64 models, through the script; skipped
/// (saying so) when Python or the package is missing.
fn reference_evaluator(scratch: &Path, cases: Vec<serde_json::Value>) {
    let cases_file = scratch.join("cases.json");
    std::fs::write(&cases_file, serde_json::to_vec(&cases).unwrap()).unwrap();
    let script = trestle_testkit::repo().join("scripts/onnx_reference_check.py");
    let out = match std::process::Command::new("python3").arg(&script).arg(&cases_file).output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped: the onnx reference evaluator needs python3 ({e})");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => println!("{stdout}"),
        Some(77) => eprintln!("skipped: {stdout}{stderr}"),
        _ => panic!("the onnx reference evaluator disagrees or failed:\n{stdout}\n{stderr}"),
    }
}

/// The models keep the file's weights exactly: the widened model's tensors are the float32 ones.
#[test]
fn widening_is_exact() {
    let t = pb::TensorProto { data_type: 1, dims: vec![2], float_data: vec![0.1, -3.5], ..Default::default() };
    assert_eq!(floats(&t).unwrap(), vec![f64::from(0.1f32), -3.5]);
    let model = pb::ModelProto {
        graph: Some(pb::GraphProto { initializer: vec![t], ..Default::default() }),
        ..Default::default()
    };
    let wide = widened(&model);
    let w = &wide.graph.unwrap().initializer[0];
    let back: Vec<f64> = w.raw_data.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    assert_eq!((w.data_type, back), (11, vec![f64::from(0.1f32), -3.5]));
}
