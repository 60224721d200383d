//! Property tests of the network readers (issue 9, fuzzing): NNet text with mutated numbers and
//! lines, ONNX files with mutated bytes, and ONNX models with mutated fields all load or fail
//! with an error naming the file; none panics, hangs or allocates what the file does not back up.
//! A network that loads evaluates to finite outputs or a clear error.

mod common;

use common::build::{attr_i, model, node, tensor_f32, tensor_f32_raw, tensor_i64};
use proptest::prelude::*;
use prost::Message;
use tract_onnx::pb;
use trestle_ir::network::Network;
use trestle_nn::{LoadError, NnetNormalization, convert_onnx, load_onnx, parse_nnet};

/// A small NNet file with a non-trivial header (clip, normalisation, de-normalisation).
const NNET: &str = "// fuzz seed\n2,2,1,3,\n2,3,1,\n0,\n-1.0,0.0,\n1.0,10.0,\n0.5,4.0,1.0,\n2.0,8.0,3.0,\n\
    1.0,-1.0,\n0.5,0.25,\n-2.0,1.0,\n0.0,\n1.0,\n-1.0,\n1.0,1.0,-1.0,\n0.5,\n";

/// What a mutated number may become: other numbers, huge and tiny ones, non-numbers, separators.
const REPLACEMENTS: &[&str] = &[
    "",
    "0",
    "-0",
    "1",
    "-1",
    "3",
    "7",
    "1e309",
    "-1e309",
    "1e-400",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999",
    "18446744073709551615",
    "4294967297",
    "2147483648",
    "100000000",
    "0x10",
    "1,2",
    "1,,2",
    ",",
    "\n",
    "//",
    "abc",
    "1.5.2",
    " ",
    "\u{feff}",
    "é",
];

fn maze_nnet() -> String {
    std::fs::read_to_string(trestle_testkit::repo().join("examples/networks/maze-2x8.nnet")).unwrap()
}

/// One edit of NNet text.
#[derive(Clone, Debug)]
enum Edit {
    /// Replace the n-th number (counted modulo how many there are).
    Number(usize, &'static str),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), prop::sample::select(REPLACEMENTS)).prop_map(|(n, r)| Edit::Number(n, r)),
        1 => any::<usize>().prop_map(Edit::DeleteLine),
        1 => any::<usize>().prop_map(Edit::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(text: &str, e: &Edit) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match *e {
        Edit::Number(k, r) => {
            // Numbers are the comma-separated fields outside comment lines.
            let spans: Vec<(usize, usize, usize)> = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| !l.starts_with("//"))
                .flat_map(|(i, l)| {
                    let mut at = 0;
                    l.split(',')
                        .map(|f| {
                            let span = (i, at, at + f.len());
                            at += f.len() + 1;
                            span
                        })
                        .filter(|s| s.2 > s.1)
                        .collect::<Vec<_>>()
                })
                .collect();
            if let Some(&(i, a, b)) = spans.get(k % spans.len().max(1)) {
                lines[i].replace_range(a..b, r);
            }
        }
        Edit::DeleteLine(i) if !lines.is_empty() => {
            lines.remove(i % n);
        }
        Edit::DuplicateLine(i) if !lines.is_empty() => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Edit::SwapLines(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
        Edit::Truncate(i) => lines.truncate(i % n),
        _ => {}
    }
    lines.join("\n") + "\n"
}

/// A loaded network evaluates to finite values or an error; never a panic.
fn exercise(net: &Network) {
    let x = vec![0.25; net.input_dim()];
    if let Ok(y) = net.eval(&x) {
        assert_eq!(y.len(), net.output_dim());
    }
}

fn check_nnet(text: &str) {
    for normalization in [NnetNormalization::None, NnetNormalization::Header] {
        match parse_nnet(text, "fuzz.nnet", normalization) {
            Ok(net) => exercise(&net),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("fuzz.nnet"), "the file is not named: {msg}");
            }
        }
    }
}

/// A hand-made two-layer ONNX model: Gemm (transB), Relu, MatMul, Add, with a Reshape target.
fn onnx_seed() -> pb::ModelProto {
    let nodes = vec![
        node("g", "Gemm", &["x", "W", "b"], "h", vec![attr_i("transB", 1)]),
        node("r", "Relu", &["h"], "hr", vec![]),
        node("m", "MatMul", &["hr", "V"], "o", vec![]),
        node("a", "Add", &["o", "c"], "o2", vec![]),
        node("s", "Reshape", &["o2", "shape"], "y", vec![]),
    ];
    let inits = vec![
        tensor_f32("W", &[3, 2], &[1.0, -1.0, 0.5, 0.25, -2.0, 1.0]),
        tensor_f32_raw("b", &[3], &[0.0, 1.0, -1.0]),
        tensor_f32("V", &[3, 1], &[1.0, 1.0, -1.0]),
        tensor_f32("c", &[1], &[0.5]),
        tensor_i64("shape", &[1, 1]),
    ];
    model(1, &[1, 2], &[1, 1], nodes, inits)
}

/// One edit of an ONNX model's fields.
#[derive(Clone, Debug)]
enum ProtoEdit {
    Dim(usize, usize, i64),
    DropData(usize, usize),
    RawBytes(usize, Vec<u8>),
    DataType(usize, i32),
    OpType(usize, &'static str),
    Input(usize, usize, &'static str),
    Attribute(usize, i64),
    DropNode(usize),
}

fn proto_edit() -> impl Strategy<Value = ProtoEdit> {
    let dims =
        prop_oneof![Just(-1_i64), Just(0), Just(1), Just(2), Just(3), Just(1 << 40), Just(i64::MAX), Just(i64::MIN)];
    let ops = prop::sample::select(
        &[
            "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Flatten", "Reshape", "Identity", "Constant", "Conv",
            "",
        ][..],
    );
    let names = prop::sample::select(&["x", "W", "b", "h", "hr", "V", "o", "c", "o2", "shape", "y", "nope", ""][..]);
    prop_oneof![
        (any::<usize>(), any::<usize>(), dims).prop_map(|(t, d, v)| ProtoEdit::Dim(t, d, v)),
        (any::<usize>(), any::<usize>()).prop_map(|(t, n)| ProtoEdit::DropData(t, n)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 0..16)).prop_map(|(t, b)| ProtoEdit::RawBytes(t, b)),
        (any::<usize>(), prop_oneof![Just(0), Just(1), Just(7), Just(10), Just(11), Just(99), Just(-1)])
            .prop_map(|(t, d)| ProtoEdit::DataType(t, d)),
        (any::<usize>(), ops).prop_map(|(n, o)| ProtoEdit::OpType(n, o)),
        (any::<usize>(), any::<usize>(), names).prop_map(|(n, i, s)| ProtoEdit::Input(n, i, s)),
        (any::<usize>(), prop_oneof![Just(-1_i64), Just(0), Just(1), Just(2), Just(i64::MAX)])
            .prop_map(|(n, v)| ProtoEdit::Attribute(n, v)),
        any::<usize>().prop_map(ProtoEdit::DropNode),
    ]
}

fn apply_proto(m: &mut pb::ModelProto, e: &ProtoEdit) {
    let g = m.graph.as_mut().expect("the seed has a graph");
    let (nt, nn) = (g.initializer.len().max(1), g.node.len().max(1));
    match e {
        ProtoEdit::Dim(t, d, v) => {
            if let Some(t) = g.initializer.get_mut(t % nt) {
                let k = t.dims.len().max(1);
                match t.dims.get_mut(d % k) {
                    Some(x) => *x = *v,
                    None => t.dims.push(*v),
                }
            }
        }
        ProtoEdit::DropData(t, n) => {
            if let Some(t) = g.initializer.get_mut(t % nt) {
                let keep = n % (t.float_data.len() + 1);
                t.float_data.truncate(keep);
                t.raw_data.truncate(n % (t.raw_data.len() + 1));
            }
        }
        ProtoEdit::RawBytes(t, b) => {
            if let Some(t) = g.initializer.get_mut(t % nt) {
                t.raw_data = b.clone();
            }
        }
        ProtoEdit::DataType(t, d) => {
            if let Some(t) = g.initializer.get_mut(t % nt) {
                t.data_type = *d;
            }
        }
        ProtoEdit::OpType(n, o) => {
            if let Some(node) = g.node.get_mut(n % nn) {
                node.op_type = o.to_string();
            }
        }
        ProtoEdit::Input(n, i, s) => {
            if let Some(node) = g.node.get_mut(n % nn) {
                let k = node.input.len().max(1);
                match node.input.get_mut(i % k) {
                    Some(x) => *x = s.to_string(),
                    None => node.input.push(s.to_string()),
                }
            }
        }
        ProtoEdit::Attribute(n, v) => {
            if let Some(node) = g.node.get_mut(n % nn) {
                node.attribute.push(attr_i("transA", *v));
            }
        }
        ProtoEdit::DropNode(n) => {
            if !g.node.is_empty() {
                g.node.remove(n % nn);
            }
        }
    }
}

fn check_onnx_result(result: Result<Network, LoadError>, file: &str) {
    match result {
        Ok(net) => exercise(&net),
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with(file), "the file is not named: {msg}");
        }
    }
}

#[test]
fn the_seeds_load() {
    check_nnet(NNET);
    assert!(parse_nnet(NNET, "fuzz.nnet", NnetNormalization::Header).is_ok());
    assert!(parse_nnet(&maze_nnet(), "fuzz.nnet", NnetNormalization::Header).is_ok());
    let net = convert_onnx(&onnx_seed(), "fuzz.onnx").unwrap();
    assert_eq!(net.eval(&[1.0, 2.0]).unwrap().len(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_nnet_text_loads_or_fails_cleanly(edits in prop::collection::vec(edit(), 1..6), maze in any::<bool>()) {
        let mut text = if maze { maze_nnet() } else { NNET.to_string() };
        for e in &edits {
            text = apply(&text, e);
        }
        check_nnet(&text);
    }

    #[test]
    fn mutated_onnx_models_load_or_fail_cleanly(edits in prop::collection::vec(proto_edit(), 1..5)) {
        let mut m = onnx_seed();
        for e in &edits {
            apply_proto(&mut m, e);
        }
        check_onnx_result(convert_onnx(&m, "fuzz.onnx"), "fuzz.onnx");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Byte-level damage to the file: flipped bytes, cut or spliced data.
    #[test]
    fn mutated_onnx_bytes_load_or_fail_cleanly(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        cut in any::<Option<usize>>(),
        splice in prop::collection::vec(any::<u8>(), 0..12),
        at in any::<usize>(),
    ) {
        let mut bytes = onnx_seed().encode_to_vec();
        for (i, b) in &flips {
            let n = bytes.len();
            bytes[i % n] ^= b;
        }
        let at = at % (bytes.len() + 1);
        bytes.splice(at..at, splice);
        if let Some(c) = cut {
            bytes.truncate(c % (bytes.len() + 1));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fuzz.onnx");
        std::fs::write(&path, &bytes).unwrap();
        check_onnx_result(load_onnx(&path), &path.display().to_string());
    }
}
