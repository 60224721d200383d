//! The planted ONNX models, written byte by byte (protobuf wire format), so the files under
//! tests/planted are reproducible from this code: `y = W2 * relu(W1 * x + B1) + B2` with one input
//! and one output, every tensor float32.

fn varint(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn key(field: u64, wire: u64, out: &mut Vec<u8>) {
    varint((field << 3) | wire, out);
}

fn int_field(field: u64, n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    key(field, 0, &mut out);
    varint(n, &mut out);
    out
}

fn bytes_field(field: u64, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    key(field, 2, &mut out);
    varint(bytes.len() as u64, &mut out);
    out.extend_from_slice(bytes);
    out
}

fn text_field(field: u64, text: &str) -> Vec<u8> {
    bytes_field(field, text.as_bytes())
}

/// TensorProto: dims (1), data_type (2) = FLOAT, float_data (4, packed), name (8).
fn tensor(name: &str, dims: &[u64], values: &[f32]) -> Vec<u8> {
    let mut t: Vec<u8> = dims.iter().flat_map(|&d| int_field(1, d)).collect();
    t.extend(int_field(2, 1));
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    t.extend(bytes_field(4, &data));
    t.extend(text_field(8, name));
    t
}

/// NodeProto: input (1), output (2), name (3), op_type (4).
fn node(inputs: &[&str], output: &str, name: &str, op: &str) -> Vec<u8> {
    let mut n: Vec<u8> = inputs.iter().flat_map(|i| text_field(1, i)).collect();
    n.extend(text_field(2, output));
    n.extend(text_field(3, name));
    n.extend(text_field(4, op));
    n
}

/// ValueInfoProto of a float tensor: name (1), type (2) = TypeProto{tensor_type{elem_type, shape}}.
fn value_info(name: &str, dims: &[u64]) -> Vec<u8> {
    let shape: Vec<u8> = dims.iter().flat_map(|&d| bytes_field(1, &int_field(1, d))).collect();
    let mut tensor_type = int_field(1, 1);
    tensor_type.extend(bytes_field(2, &shape));
    let mut v = text_field(1, name);
    v.extend(bytes_field(2, &bytes_field(1, &tensor_type)));
    v
}

/// The model `y = relu(w * x)` (second layer weight 1, biases 0), float32 weight `w`.
pub fn relu_gain_model(w: f32) -> Vec<u8> {
    let mut graph = bytes_field(1, &node(&["x", "W1", "B1"], "h", "gemm1", "Gemm"));
    graph.extend(bytes_field(1, &node(&["h"], "r", "relu1", "Relu")));
    graph.extend(bytes_field(1, &node(&["r", "W2", "B2"], "y", "gemm2", "Gemm")));
    graph.extend(text_field(2, "planted"));
    graph.extend(bytes_field(5, &tensor("W1", &[1, 1], &[w])));
    graph.extend(bytes_field(5, &tensor("B1", &[1], &[0.0])));
    graph.extend(bytes_field(5, &tensor("W2", &[1, 1], &[1.0])));
    graph.extend(bytes_field(5, &tensor("B2", &[1], &[0.0])));
    graph.extend(bytes_field(11, &value_info("x", &[1, 1])));
    graph.extend(bytes_field(12, &value_info("y", &[1, 1])));
    let mut model = int_field(1, 7); // ir_version
    model.extend(text_field(2, "trestle-planted")); // producer_name
    model.extend(bytes_field(7, &graph));
    let mut opset = text_field(1, "");
    opset.extend(int_field(2, 13));
    model.extend(bytes_field(8, &opset));
    model
}

/// The planted ONNX files: (file name under tests/planted, float32 weight).
pub const PLANTED: [(&str, f32); 2] = [("f32-tenth.onnx", 0.1), ("f32-nine-tenths.onnx", 0.9)];

/// AttributeProto: name (1), f (2, fixed32), i (3), ints (8), type (20).
pub enum Attr<'a> {
    Int(&'a str, i64),
    Float(&'a str, f32),
    Ints(&'a str, &'a [i64]),
}

fn attribute(a: &Attr<'_>) -> Vec<u8> {
    match *a {
        Attr::Int(name, i) => {
            let mut v = text_field(1, name);
            v.extend(int_field(3, i as u64));
            v.extend(int_field(20, 2));
            v
        }
        Attr::Float(name, f) => {
            let mut v = text_field(1, name);
            key(2, 5, &mut v);
            v.extend(f.to_le_bytes());
            v.extend(int_field(20, 1));
            v
        }
        Attr::Ints(name, ints) => {
            let mut v = text_field(1, name);
            for &i in ints {
                v.extend(int_field(8, i as u64));
            }
            v.extend(int_field(20, 7));
            v
        }
    }
}

/// One node of [`model`]: inputs, output, name, operator, attributes.
pub struct Node<'a>(pub &'a [&'a str], pub &'a str, pub &'a str, pub &'a str, pub Vec<Attr<'a>>);

/// A float32 model: input `x` and output `y` of the given shapes, the nodes in order, the
/// initializers `(name, dims, values)`, opset `opset`.
pub fn model(x: &[u64], y: &[u64], nodes: &[Node<'_>], inits: &[(&str, &[u64], &[f32])], opset: u64) -> Vec<u8> {
    let mut graph = Vec::new();
    for Node(inputs, output, name, op, attrs) in nodes {
        let mut n = node(inputs, output, name, op);
        for a in attrs {
            n.extend(bytes_field(5, &attribute(a)));
        }
        graph.extend(bytes_field(1, &n));
    }
    graph.extend(text_field(2, "g"));
    for (name, dims, values) in inits {
        graph.extend(bytes_field(5, &tensor(name, dims, values)));
    }
    graph.extend(bytes_field(11, &value_info("x", x)));
    graph.extend(bytes_field(12, &value_info("y", y)));
    let mut model = int_field(1, 7);
    model.extend(text_field(2, "trestle-tests"));
    model.extend(bytes_field(7, &graph));
    let mut op = text_field(1, "");
    op.extend(int_field(2, opset));
    model.extend(bytes_field(8, &op));
    model
}
