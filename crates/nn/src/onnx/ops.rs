//! The operators beyond affine maps and ReLU: the other activations (`Tanh`, `Sigmoid`,
//! `LeakyRelu`, `PRelu`, `Clip`), `BatchNormalization` (inference form), `Conv` whose kernel
//! covers its whole input (a dense layer), `Transpose` of the network value (shape only), and
//! the trailing `Softmax` / `LogSoftmax` that the loader leaves out (see the crate docs for what
//! each becomes and what is exact).

use super::{Const, Converter, Ctx, describe_attribute, is_vector, node_label, normalise_axes};
use crate::affine::{Affine, Linear, exact_add, exact_mul};
use crate::error::LoadError;
use tract_onnx::pb::{NodeProto, attribute_proto::AttributeType};
use trestle_ir::network::{Activation, Matrix};

/// The operators that end the graph and are left out for an argmax controller.
pub(super) fn is_trailing_softmax(node: &NodeProto) -> bool {
    matches!(node.domain.as_str(), "" | "ai.onnx") && matches!(node.op_type.as_str(), "Softmax" | "LogSoftmax")
}

impl Converter<'_> {
    /// An activation node: one input (the network value), the attributes it takes.
    pub(super) fn activation(&mut self, c: &Ctx, act: Activation) -> Result<(), LoadError> {
        c.inputs(1, 1)?;
        self.chain.activation(act).map_err(|p| c.err(p))
    }

    /// `LeakyRelu`: `alpha` (float, default 0.01 as float32, widened exactly).
    pub(super) fn leaky_relu(&mut self, c: &Ctx) -> Result<(), LoadError> {
        c.only_attributes(&["alpha"])?;
        let alpha = c.float_attr("alpha", 0.01)?;
        self.activation(c, Activation::LeakyRelu { alpha })
    }

    /// `PRelu(x, slope)`: a leaky ReLU when every entry of the constant slope is the same (the
    /// IR has one slope per layer).
    pub(super) fn prelu(&mut self, c: &Ctx) -> Result<(), LoadError> {
        c.only_attributes(&[])?;
        let inputs = c.inputs(2, 2)?;
        if inputs[0] != self.cur {
            return Err(c.err(format!("input X must be the network value {:?}", self.cur)));
        }
        let slope = self.float_const(c, inputs[1])?;
        let Some(&alpha) = slope.data.first() else { return Err(c.err("the slope is empty")) };
        if slope.data.iter().any(|&s| s != alpha) {
            return Err(c.err(format!(
                "slope {:?} has several values: a leaky ReLU with one slope per neuron is not supported (one \
                 slope per layer)",
                inputs[1]
            )));
        }
        self.chain.activation(Activation::LeakyRelu { alpha }).map_err(|p| c.err(p))
    }

    /// `Clip`: bounds from the `min` / `max` attributes before opset 11 (defaults: the lowest and
    /// highest float32, as the operator defines them), from optional scalar inputs from opset 11
    /// (an absent input leaves that side unbounded).
    pub(super) fn clip(&mut self, c: &Ctx) -> Result<(), LoadError> {
        let (lo, hi) = if self.opset < 11 {
            c.only_attributes(&["min", "max"])?;
            c.inputs(1, 1)?;
            let lowest = f32::MIN;
            (c.float_attr("min", lowest)?, c.float_attr("max", f32::MAX)?)
        } else {
            c.only_attributes(&[])?;
            let inputs: Vec<&str> = c.node.input.iter().map(String::as_str).collect();
            if inputs.is_empty() || inputs.len() > 3 || inputs[0] != self.cur {
                return Err(c.err(format!(
                    "expected the network value {:?} and optional min and max inputs, found {:?}",
                    self.cur, c.node.input
                )));
            }
            let bound = |k: usize, absent: f64| -> Result<f64, LoadError> {
                match inputs.get(k).filter(|s| !s.is_empty()) {
                    None => Ok(absent),
                    Some(name) => {
                        let v = self.float_const(c, name)?;
                        match v.data.as_slice() {
                            [x] => Ok(*x),
                            _ => Err(c.err(format!(
                                "{} {name:?} must be a scalar, it has shape {:?}",
                                ["", "min", "max"][k],
                                v.dims
                            ))),
                        }
                    }
                }
            };
            (bound(1, f64::NEG_INFINITY)?, bound(2, f64::INFINITY)?)
        };
        let act = Activation::Clip { lo, hi };
        act.validate().map_err(|p| c.err(p))?;
        self.chain.activation(act).map_err(|p| c.err(p))
    }

    /// `Transpose` of the network value: the value is a feature vector (at most one dimension
    /// other than 1), so any permutation keeps the feature order and only the shape changes.
    pub(super) fn transpose(&mut self, c: &Ctx) -> Result<(), LoadError> {
        c.only_attributes(&["perm"])?;
        c.inputs(1, 1)?;
        let rank = self.shape.len();
        let perm: Vec<usize> = match c.attribute("perm", AttributeType::Ints)? {
            Some(a) => normalise_axes(&a.ints, rank)
                .filter(|p| p.len() == rank)
                .ok_or_else(|| c.unsupported(a, describe_attribute(a), "not a permutation of the value's axes"))?,
            None => (0..rank).rev().collect(),
        };
        debug_assert!(is_vector(&self.shape));
        self.shape = perm.iter().map(|&p| self.shape[p]).collect();
        Ok(())
    }

    /// `BatchNormalization` in inference form, `y = scale (x - mean) / sqrt(var + epsilon) + B`
    /// per channel (axis 1): the diagonal map `y = s x + t` with `s = scale / sqrt(var + epsilon)`
    /// and `t = B - mean s`, each operation an IEEE f64 operation (correctly rounded). When one
    /// of them rounds (in general: `sqrt` of a non-square is irrational), the network verified
    /// has these f64 coefficients, and a note on the network says so.
    pub(super) fn batch_norm(&mut self, c: &Ctx) -> Result<(), LoadError> {
        c.only_attributes(&["epsilon", "momentum", "spatial", "training_mode", "is_test"])?;
        if let Some(a) = c.attribute("training_mode", AttributeType::Int)?.filter(|a| a.i != 0) {
            return Err(c.unsupported(a, a.i.to_string(), "only inference (training_mode = 0) is a fixed affine map"));
        }
        if let Some(a) = c.attribute("is_test", AttributeType::Int)?.filter(|a| a.i != 1) {
            return Err(c.unsupported(a, a.i.to_string(), "only inference (is_test = 1) is a fixed affine map"));
        }
        if c.node.output.iter().skip(1).any(|o| !o.is_empty()) {
            return Err(c.err("has running statistics outputs, which only training computes"));
        }
        let inputs = c.inputs(5, 5)?;
        if inputs[0] != self.cur {
            return Err(c.err(format!("input X must be the network value {:?}", self.cur)));
        }
        let epsilon = c.float_attr("epsilon", 1e-5)?;
        if self.shape.len() < 2 || self.shape[0] != 1 {
            return Err(c.err(format!("input X has shape {:?}, expected [1, channels, ...]", self.shape)));
        }
        let channels = self.shape[1];
        if let Some(a) = c.attribute("spatial", AttributeType::Int)?.filter(|a| a.i != 1)
            && self.shape[2..].iter().any(|&d| d != 1)
        {
            return Err(c.unsupported(a, a.i.to_string(), "per-activation statistics on a spatial input"));
        }
        let param = |k: usize, what: &str| -> Result<Vec<f64>, LoadError> {
            let v = self.float_const(c, inputs[k])?;
            if v.data.len() != channels {
                return Err(c.err(format!(
                    "{what} {:?} has {} values for {channels} channels",
                    inputs[k],
                    v.data.len()
                )));
            }
            Ok(v.data)
        };
        let (scale, bias, mean, var) = (param(1, "scale")?, param(2, "B")?, param(3, "mean")?, param(4, "var")?);
        let mut exact = true;
        let mut s = Vec::with_capacity(channels);
        let mut t = Vec::with_capacity(channels);
        for ch in 0..channels {
            let v = var[ch] + epsilon;
            if v.is_nan() || v <= 0.0 || v.is_infinite() {
                return Err(c.err(format!("channel {ch}: var + epsilon = {v} is not a positive number")));
            }
            let r = v.sqrt();
            let sc = scale[ch] / r;
            let m = mean[ch] * sc;
            let tc = bias[ch] - m;
            exact &= exact_add(var[ch], epsilon) == Some(v)
                && r.mul_add(r, -v) == 0.0
                && sc.mul_add(r, -scale[ch]) == 0.0
                && exact_mul(mean[ch], sc) == Some(m)
                && exact_add(bias[ch], -m) == Some(tc);
            if !sc.is_finite() || !tc.is_finite() {
                return Err(c.err(format!("channel {ch}: the folded coefficients {sc}, {tc} are not finite")));
            }
            s.push(sc);
            t.push(tc);
        }
        let inner: usize = self.shape[2..].iter().product();
        let n = self.chain.width();
        let per_feature = |v: &[f64]| (0..n).map(|f| v[(f / inner) % channels]).collect::<Vec<f64>>();
        if !exact {
            self.notes.push(format!(
                "BatchNormalization node {}: folded as y = s x + t with s = scale / sqrt(var + epsilon) and t = B - mean s \
                 computed in f64 (each operation correctly rounded, so s and t are within a few units in the last \
                 place of the real coefficients, which are irrational in general); the network verified has these \
                 f64 coefficients",
                c.label
            ));
        }
        self.push(c, Affine::new(Linear::Diagonal(per_feature(&s)), per_feature(&t)))
    }

    /// `Conv` whose kernel covers its whole input, so its output is one value per output channel:
    /// a dense layer (MATLAB exports dense layers as 1x1 convolutions on a 1x1 image). The input
    /// is `[1, C, spatial..]`; no padding; each spatial kernel extent `(k - 1) d + 1` (dilation
    /// `d`) equals the input's extent, so there is one output position whatever the strides;
    /// groups split the channels (the matrix has zeros between groups). Anything else is refused,
    /// saying which condition fails.
    pub(super) fn conv(&mut self, c: &Ctx) -> Result<(), LoadError> {
        c.only_attributes(&["auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"])?;
        let inputs = c.inputs(2, 3)?;
        if inputs[0] != self.cur {
            return Err(c.err(format!("input X must be the network value {:?}", self.cur)));
        }
        let shape = self.shape.clone();
        if shape.len() < 3 || shape[0] != 1 {
            return Err(c.err(format!("input X has shape {shape:?}, expected [1, channels, spatial dimensions]")));
        }
        let (channels, spatial) = (shape[1], &shape[2..]);
        let w = self.float_const(c, inputs[1])?;
        if w.dims.len() != shape.len() {
            return Err(c.err(format!(
                "weights {:?} have shape {:?}, expected rank {}",
                inputs[1],
                w.dims,
                shape.len()
            )));
        }
        let (out_channels, group_channels, kernel) = (w.dims[0], w.dims[1], &w.dims[2..]);
        let group = usize::try_from(c.int_attr("group", 1)?).ok().filter(|&g| g >= 1);
        let group = group.ok_or_else(|| c.err("group must be a positive integer"))?;
        if channels % group != 0 || out_channels % group != 0 || group_channels * group != channels {
            return Err(c.err(format!(
                "weights of shape {:?} with group {group} do not fit an input of {channels} channels",
                w.dims
            )));
        }
        let ints = |name: &str, default: i64| -> Result<Vec<i64>, LoadError> {
            Ok(c.attribute(name, AttributeType::Ints)?.map_or_else(|| vec![default; spatial.len()], |a| a.ints.clone()))
        };
        if let Some(a) = c.attribute("auto_pad", AttributeType::String)? {
            let mode = String::from_utf8_lossy(&a.s);
            if mode != "NOTSET" && mode != "VALID" {
                return Err(c.unsupported(
                    a,
                    describe_attribute(a),
                    "only NOTSET or VALID (no padding) is a dense layer",
                ));
            }
        }
        let (dilations, strides) = (ints("dilations", 1)?, ints("strides", 1)?);
        let pads =
            c.attribute("pads", AttributeType::Ints)?.map_or_else(|| vec![0; 2 * spatial.len()], |a| a.ints.clone());
        if let Some(a) = c.attribute("kernel_shape", AttributeType::Ints)?
            && a.ints.iter().map(|&k| usize::try_from(k).ok()).collect::<Option<Vec<_>>>().as_deref() != Some(kernel)
        {
            return Err(c.unsupported(a, describe_attribute(a), &format!("the weights' kernel is {kernel:?}")));
        }
        if dilations.len() != spatial.len() || strides.len() != spatial.len() || pads.len() != 2 * spatial.len() {
            return Err(
                c.err(format!("dilations, strides or pads do not have one entry per spatial axis of {shape:?}"))
            );
        }
        if pads.iter().any(|&p| p != 0) {
            return Err(
                c.err(format!("pads {pads:?}: padding makes more than one output position (not a dense layer)"))
            );
        }
        if strides.iter().any(|&s| s < 1) || dilations.iter().any(|&d| d < 1) {
            return Err(c.err(format!("strides {strides:?} and dilations {dilations:?} must be positive")));
        }
        for (axis, ((&k, &d), &n)) in kernel.iter().zip(&dilations).zip(spatial).enumerate() {
            let extent = (k as i64 - 1).saturating_mul(d).saturating_add(1);
            if extent != n as i64 {
                return Err(c.err(format!(
                    "kernel {kernel:?} with dilations {dilations:?} spans {extent} on spatial axis {axis}, the input \
                     {n}: only a kernel covering its whole input (one output position) is a dense layer"
                )));
            }
        }
        let bias = match inputs.get(2) {
            Some(name) => {
                let b = self.float_const(c, name)?;
                if b.data.len() != out_channels {
                    return Err(c.err(format!("bias {name:?} has {} values for {out_channels} outputs", b.data.len())));
                }
                b.data
            }
            None => vec![0.0; out_channels],
        };
        let matrix = conv_matrix(&w, channels, group, spatial, &dilations);
        self.push(c, Affine::new(Linear::Full(matrix), vec![0.0; out_channels]))?;
        self.push(c, Affine::new(Linear::Identity(out_channels), bias))?;
        let mut out_shape = vec![1, out_channels];
        out_shape.extend(std::iter::repeat_n(1, spatial.len()));
        self.shape = out_shape;
        Ok(())
    }

    /// The trailing `Softmax` / `LogSoftmax`: checks that it normalises over every feature (so
    /// that it is strictly increasing in each output and keeps their order) and records it on
    /// the network, which leaves it out.
    pub(super) fn trailing_softmax(&mut self, index: usize, node: &NodeProto) -> Result<(), LoadError> {
        let c = Ctx { file: self.file, node, label: node_label(index, node) };
        c.only_attributes(&["axis"])?;
        let inputs = c.inputs(1, 1)?;
        if inputs[0] != self.cur {
            return Err(c.err(format!("input must be the network value {:?}", self.cur)));
        }
        let rank = self.shape.len() as i64;
        let axis = c.int_attr("axis", if self.opset < 13 { 1 } else { -1 })?;
        let axis = if axis < 0 { axis + rank } else { axis };
        let axis = usize::try_from(axis).ok().filter(|&a| a < self.shape.len().max(1));
        let axis = axis.ok_or_else(|| c.err(format!("axis is out of range for shape {:?}", self.shape)))?;
        let n = self.chain.width();
        // Before opset 13 the value is seen as [prod(dims < axis), prod(dims >= axis)] and each row
        // normalised; from 13 the normalisation runs along `axis` alone.
        let normalised = if self.opset < 13 {
            self.shape[axis..].iter().product::<usize>()
        } else {
            self.shape.get(axis).copied().unwrap_or(1)
        };
        if normalised != n && n > 1 {
            return Err(c.err(format!(
                "normalises groups of {normalised} of the {n} outputs (axis {axis} of shape {:?}): only a softmax \
                 over all outputs keeps their order, so that the argmax is the same without it",
                self.shape
            )));
        }
        self.trailing_softmax = Some(format!("node {} ({})", c.label, node.op_type));
        Ok(())
    }
}

/// The dense matrix of a convolution whose kernel covers its input (see [`Converter::conv`]):
/// row `m`, column `c * S + s` (the input's row-major feature order, `S` spatial positions) holds
/// the weight of kernel tap `kpos` where `s` is the position `kpos * dilation` reads, for the
/// input channels of `m`'s group; zero elsewhere.
fn conv_matrix(w: &Const, channels: usize, group: usize, spatial: &[usize], dilations: &[i64]) -> Matrix {
    let (out_channels, group_channels, kernel) = (w.dims[0], w.dims[1], &w.dims[2..]);
    let taps: usize = kernel.iter().product();
    let positions: usize = spatial.iter().product();
    let cols = channels * positions;
    let mut data = vec![0.0; out_channels * cols];
    let outs_per_group = out_channels / group;
    for m in 0..out_channels {
        let g = m / outs_per_group;
        for cg in 0..group_channels {
            let ch = g * group_channels + cg;
            for tap in 0..taps {
                // The tap's multi-index, and the input position it reads (row-major).
                let (mut rest, mut pos, mut stride) = (tap, 0usize, 1usize);
                for axis in (0..kernel.len()).rev() {
                    let k = rest % kernel[axis];
                    rest /= kernel[axis];
                    pos += k * dilations[axis] as usize * stride;
                    stride *= spatial[axis];
                }
                data[m * cols + ch * positions + pos] = w.data[(m * group_channels + cg) * taps + tap];
            }
        }
    }
    Matrix::new(out_channels, cols, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_by_one_convolution_is_its_weight_matrix() {
        // 3 output channels, 2 input channels, 1x1 kernel on a 1x1 image.
        let w = Const { dims: vec![3, 2, 1, 1], data: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0] };
        let m = conv_matrix(&w, 2, 1, &[1, 1], &[1, 1]);
        assert_eq!((m.rows, m.cols), (3, 2));
        assert_eq!(m.data, w.data);
    }

    #[test]
    fn a_kernel_over_a_row_reads_every_position() {
        // MATLAB's first layer: one channel, a 1x3 kernel over a 1x3 image.
        let w = Const { dims: vec![2, 1, 1, 3], data: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0] };
        let m = conv_matrix(&w, 1, 1, &[1, 3], &[1, 1]);
        assert_eq!(m.data, w.data);
        // Dilation 2 over 5 positions: taps at 0, 2, 4, zeros between.
        let m = conv_matrix(&w, 1, 1, &[1, 5], &[1, 2]);
        assert_eq!(m.data, vec![1.0, 0.0, 2.0, 0.0, 3.0, 4.0, 0.0, 5.0, 0.0, 6.0]);
    }

    #[test]
    fn groups_leave_zeros_between_them() {
        // 2 groups: outputs 0, 1 read channel 0; outputs 2, 3 read channel 1.
        let w = Const { dims: vec![4, 1, 1], data: vec![1.0, 2.0, 3.0, 4.0] };
        let m = conv_matrix(&w, 2, 2, &[1], &[1]);
        assert_eq!(m.data, vec![1.0, 0.0, 2.0, 0.0, 0.0, 3.0, 0.0, 4.0]);
    }
}
