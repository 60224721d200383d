//! Constants computed from constants: exporters write `Transpose(W)` before a `MatMul`, or reshape
//! a bias, instead of storing the tensor in the layout it is used in. Such a node (`Transpose`,
//! `Identity`, `Reshape`, `Flatten`, `Squeeze`, `Unsqueeze` whose data input is a constant and
//! whose other inputs are constants) is taken off the chain and its output becomes a constant,
//! computed here when a node uses it. These operators only move values: the folded constant has
//! exactly the file's values.

use super::{
    ConstSource, Ctx, decode_floats, describe_attribute, int_constant, node_label, normalise_axes, reshape_target,
};
use crate::error::LoadError;
use std::collections::{HashMap, HashSet};
use tract_onnx::pb::{GraphProto, attribute_proto::AttributeType};

/// Operators folded when their inputs are constants.
const FOLDABLE: [&str; 6] = ["Transpose", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"];

/// Deepest chain of folded nodes decoded (a guard against hostile files; exporters use one).
const MAX_DEPTH: usize = 64;

/// Adds the outputs of foldable nodes with constant inputs to `consts` (repeatedly, so a
/// transposed reshaped initializer folds too) and returns those nodes' indices.
pub(super) fn fold_constants<'a>(
    graph: &'a GraphProto,
    consts: &mut HashMap<String, ConstSource<'a>>,
) -> HashSet<usize> {
    let mut folded = HashSet::new();
    loop {
        let before = folded.len();
        for (i, n) in graph.node.iter().enumerate() {
            let foldable = matches!(n.domain.as_str(), "" | "ai.onnx") && FOLDABLE.contains(&n.op_type.as_str());
            let inputs_constant =
                !n.input.is_empty() && n.input.iter().filter(|v| !v.is_empty()).all(|v| consts.contains_key(v));
            let [output] = n.output.as_slice() else { continue };
            if foldable && inputs_constant && !folded.contains(&i) && !consts.contains_key(output) {
                consts.insert(output.clone(), ConstSource::Folded(i, n));
                folded.insert(i);
            }
        }
        if folded.len() == before {
            return folded;
        }
    }
}

/// A floating-point constant: `name`'s tensor, decoded (and computed, for a folded node).
pub(super) fn float_constant(
    consts: &HashMap<String, ConstSource>,
    file: &str,
    name: &str,
    depth: usize,
) -> Result<super::Const, LoadError> {
    match consts.get(name) {
        Some(ConstSource::Initializer(t)) => decode_floats(t, file, name),
        Some(ConstSource::Node(i, n)) => {
            super::constant_node_floats(&Ctx { file, node: n, label: node_label(*i, n) }, name)
        }
        Some(ConstSource::Folded(i, n)) => {
            let c = Ctx { file, node: n, label: node_label(*i, n) };
            if depth >= MAX_DEPTH {
                return Err(c.err(format!("constants folded through more than {MAX_DEPTH} nodes")));
            }
            let data = float_constant(consts, file, &n.input[0], depth + 1)?;
            fold(consts, &c, data)
        }
        None => Err(LoadError::Initializer {
            file: file.to_string(),
            name: name.to_string(),
            problem: "is not a constant (initializer, Constant node or a node of constants)".into(),
        }),
    }
}

/// The output of the folded node of `c` on its data input `data`.
fn fold(consts: &HashMap<String, ConstSource>, c: &Ctx, data: super::Const) -> Result<super::Const, LoadError> {
    let rank = data.dims.len();
    let shape_err = |what: String| c.err(format!("{what} (constant of shape {:?})", data.dims));
    let dims = match c.node.op_type.as_str() {
        "Identity" => {
            c.only_attributes(&[])?;
            return Ok(data);
        }
        "Transpose" => {
            c.only_attributes(&["perm"])?;
            let perm: Vec<usize> = match c.attribute("perm", AttributeType::Ints)? {
                Some(a) => normalise_axes(&a.ints, rank)
                    .filter(|p| p.len() == rank)
                    .ok_or_else(|| c.unsupported(a, describe_attribute(a), "not a permutation of the axes"))?,
                None => (0..rank).rev().collect(),
            };
            return Ok(transpose(&data, &perm));
        }
        "Reshape" => {
            c.only_attributes(&["allowzero"])?;
            let allow_zero = c.flag_attr("allowzero")?;
            let target = shape_input(consts, c, 1)?.ok_or_else(|| c.err("has no shape input"))?;
            reshape_target(&data.dims, &target, allow_zero)
                .ok_or_else(|| shape_err(format!("cannot reshape to {target:?}")))?
        }
        "Flatten" => {
            c.only_attributes(&["axis"])?;
            let axis = c.int_attr("axis", 1)?;
            let axis = if axis < 0 { axis + rank as i64 } else { axis };
            let axis =
                usize::try_from(axis).ok().filter(|&a| a <= rank).ok_or_else(|| shape_err(format!("axis {axis}")))?;
            vec![data.dims[..axis].iter().product(), data.dims[axis..].iter().product()]
        }
        "Squeeze" | "Unsqueeze" => {
            c.only_attributes(&["axes"])?;
            let axes = match (shape_input(consts, c, 1)?, c.attribute("axes", AttributeType::Ints)?) {
                (Some(axes), None) => Some(axes),
                (None, Some(a)) => Some(a.ints.clone()),
                (None, None) => None,
                (Some(_), Some(_)) => return Err(c.err("axes are given both as an attribute and as an input")),
            };
            if c.node.op_type == "Squeeze" {
                match axes {
                    None => data.dims.iter().copied().filter(|&d| d != 1).collect(),
                    Some(axes) => {
                        let axes = normalise_axes(&axes, rank)
                            .filter(|a| a.iter().all(|&k| data.dims[k] == 1))
                            .ok_or_else(|| shape_err(format!("cannot squeeze axes {axes:?}")))?;
                        data.dims.iter().enumerate().filter(|(k, _)| !axes.contains(k)).map(|(_, &d)| d).collect()
                    }
                }
            } else {
                let axes = axes.ok_or_else(|| c.err("has no axes"))?;
                let out_rank = rank + axes.len();
                let axes = normalise_axes(&axes, out_rank)
                    .ok_or_else(|| shape_err(format!("cannot unsqueeze at {axes:?}")))?;
                let mut rest = data.dims.iter();
                (0..out_rank).map(|k| if axes.contains(&k) { 1 } else { *rest.next().unwrap_or(&1) }).collect()
            }
        }
        other => return Err(c.err(format!("{other} is not folded"))),
    };
    Ok(super::Const { dims, data: data.data })
}

/// The integer input `k` of the folded node, when present.
fn shape_input(consts: &HashMap<String, ConstSource>, c: &Ctx, k: usize) -> Result<Option<Vec<i64>>, LoadError> {
    match c.node.input.get(k).filter(|s| !s.is_empty()) {
        Some(name) => int_constant(consts, c, name).map(Some),
        None => Ok(None),
    }
}

/// `out[i_0, .., i_r] = data[j]` with `j` the index whose axis `perm[k]` is `i_k`.
pub(super) fn transpose(data: &super::Const, perm: &[usize]) -> super::Const {
    let dims: Vec<usize> = perm.iter().map(|&p| data.dims[p]).collect();
    let rank = dims.len();
    // Row-major strides of the input, read in the output's axis order.
    let mut strides = vec![1usize; rank];
    for k in (0..rank.saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * data.dims[k + 1];
    }
    let permuted: Vec<usize> = perm.iter().map(|&p| strides[p]).collect();
    let total: usize = dims.iter().product();
    let mut out = Vec::with_capacity(total);
    let mut index = vec![0usize; rank];
    for _ in 0..total {
        out.push(data.data[index.iter().zip(&permuted).map(|(i, s)| i * s).sum::<usize>()]);
        for k in (0..rank).rev() {
            index[k] += 1;
            if index[k] < dims[k] {
                break;
            }
            index[k] = 0;
        }
    }
    super::Const { dims, data: out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onnx::Const;

    #[test]
    fn transposes_move_every_entry_to_its_place() {
        let m = Const { dims: vec![2, 3], data: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0] };
        let t = transpose(&m, &[1, 0]);
        assert_eq!(t.dims, vec![3, 2]);
        assert_eq!(t.data, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        let cube = Const { dims: vec![2, 2, 2], data: (0..8).map(f64::from).collect() };
        let t = transpose(&cube, &[2, 0, 1]);
        // out[i, j, k] = in[j, k, i]
        for i in 0..2 {
            for j in 0..2 {
                for k in 0..2 {
                    assert_eq!(t.data[i * 4 + j * 2 + k], cube.data[j * 4 + k * 2 + i]);
                }
            }
        }
        assert_eq!(transpose(&cube, &[0, 1, 2]).data, cube.data);
    }
}
