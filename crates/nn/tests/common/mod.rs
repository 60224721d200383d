//! Helpers shared by the integration tests.
#![allow(dead_code)]

/// Index of the largest value (first one on ties).
pub fn argmax(v: &[f64]) -> usize {
    v.iter().enumerate().fold(0, |best, (i, &x)| if x > v[best] { i } else { best })
}

/// Largest absolute difference between two equally long vectors.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "output lengths differ");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// Builders for small hand-made ONNX models (encoded with prost, as any exporter would).
pub mod build {
    use prost::Message;
    use std::path::{Path, PathBuf};
    use tract_onnx::pb;

    pub fn tensor_f32(name: &str, dims: &[i64], data: &[f32]) -> pb::TensorProto {
        pb::TensorProto {
            name: name.into(),
            dims: dims.to_vec(),
            data_type: 1,
            float_data: data.to_vec(),
            ..Default::default()
        }
    }

    /// Same values as [`tensor_f32`], stored little-endian in `raw_data`.
    pub fn tensor_f32_raw(name: &str, dims: &[i64], data: &[f32]) -> pb::TensorProto {
        let raw = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        pb::TensorProto { name: name.into(), dims: dims.to_vec(), data_type: 1, raw_data: raw, ..Default::default() }
    }

    pub fn tensor_f64_raw(name: &str, dims: &[i64], data: &[f64]) -> pb::TensorProto {
        let raw = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        pb::TensorProto { name: name.into(), dims: dims.to_vec(), data_type: 11, raw_data: raw, ..Default::default() }
    }

    pub fn tensor_i64(name: &str, data: &[i64]) -> pb::TensorProto {
        pb::TensorProto {
            name: name.into(),
            dims: vec![data.len() as i64],
            data_type: 7,
            int64_data: data.to_vec(),
            ..Default::default()
        }
    }

    pub fn attr_f(name: &str, f: f32) -> pb::AttributeProto {
        pb::AttributeProto { name: name.into(), r#type: 1, f, ..Default::default() }
    }

    pub fn attr_i(name: &str, i: i64) -> pb::AttributeProto {
        pb::AttributeProto { name: name.into(), r#type: 2, i, ..Default::default() }
    }

    pub fn attr_ints(name: &str, ints: &[i64]) -> pb::AttributeProto {
        pb::AttributeProto { name: name.into(), r#type: 7, ints: ints.to_vec(), ..Default::default() }
    }

    pub fn attr_s(name: &str, s: &str) -> pb::AttributeProto {
        pb::AttributeProto { name: name.into(), r#type: 3, s: s.as_bytes().to_vec(), ..Default::default() }
    }

    pub fn attr_strings(name: &str, strings: &[&str]) -> pb::AttributeProto {
        let strings = strings.iter().map(|s| s.as_bytes().to_vec()).collect();
        pb::AttributeProto { name: name.into(), r#type: 8, strings, ..Default::default() }
    }

    /// A node with several outputs (an empty name is an absent optional output).
    pub fn node_multi(
        name: &str,
        op: &str,
        inputs: &[&str],
        outputs: &[&str],
        attrs: Vec<pb::AttributeProto>,
    ) -> pb::NodeProto {
        pb::NodeProto {
            output: outputs.iter().map(|s| s.to_string()).collect(),
            ..node(name, op, inputs, outputs[0], attrs)
        }
    }

    /// A model with the given graph inputs and outputs (value infos), opset `opset`.
    pub fn graph_model(
        opset: i64,
        inputs: Vec<pb::ValueInfoProto>,
        outputs: Vec<pb::ValueInfoProto>,
        nodes: Vec<pb::NodeProto>,
        inits: Vec<pb::TensorProto>,
    ) -> pb::ModelProto {
        let graph = pb::GraphProto {
            name: "g".into(),
            node: nodes,
            initializer: inits,
            input: inputs,
            output: outputs,
            ..Default::default()
        };
        pb::ModelProto {
            ir_version: 7,
            opset_import: vec![pb::OperatorSetIdProto { domain: String::new(), version: opset }],
            producer_name: "trestle-nn tests".into(),
            graph: Some(graph),
            ..Default::default()
        }
    }

    pub fn attr_t(name: &str, t: pb::TensorProto) -> pb::AttributeProto {
        pb::AttributeProto { name: name.into(), r#type: 4, t: Some(t), ..Default::default() }
    }

    pub fn node(name: &str, op: &str, inputs: &[&str], output: &str, attrs: Vec<pb::AttributeProto>) -> pb::NodeProto {
        pb::NodeProto {
            name: name.into(),
            op_type: op.into(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.into()],
            attribute: attrs,
            ..Default::default()
        }
    }

    pub fn value_info(name: &str, elem_type: i32, dims: &[i64]) -> pb::ValueInfoProto {
        use pb::tensor_shape_proto::{Dimension, dimension::Value};
        let dim = dims.iter().map(|&d| Dimension { value: Some(Value::DimValue(d)), ..Default::default() }).collect();
        let tensor = pb::type_proto::Tensor { elem_type, shape: Some(pb::TensorShapeProto { dim }) };
        let ty = pb::TypeProto { value: Some(pb::type_proto::Value::TensorType(tensor)), ..Default::default() };
        pb::ValueInfoProto { name: name.into(), r#type: Some(ty), ..Default::default() }
    }

    /// A model with input `x` and output `y` (float32 unless `elem_type` says otherwise), opset 13.
    pub fn model(
        elem_type: i32,
        in_dims: &[i64],
        out_dims: &[i64],
        nodes: Vec<pb::NodeProto>,
        inits: Vec<pb::TensorProto>,
    ) -> pb::ModelProto {
        let (input, output) = (value_info("x", elem_type, in_dims), value_info("y", elem_type, out_dims));
        graph_model(13, vec![input], vec![output], nodes, inits)
    }

    pub fn write(dir: &Path, file: &str, model: &pb::ModelProto) -> PathBuf {
        let path = dir.join(file);
        std::fs::write(&path, model.encode_to_vec()).expect("write test model");
        path
    }
}
