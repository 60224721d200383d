//! Forward pass and backpropagation (through time, for recurrent layers) over a batch.
//!
//! A batch of `batch` sequences of `steps` steps is stored step-major: row `t * batch + s` is step
//! `t` of sequence `s`, so the rows of one step are contiguous (one matrix product per step for
//! the recurrence) and a dense layer treats all steps at once (one product for the batch).
//! Every reduction goes through [`gemm_acc`] or a loop in a fixed order: the gradients are the
//! same bits on every machine.

use crate::detmath;
use crate::gemm::{MatRef, gemm_acc};
use crate::model::{LayerShape, Model};
use trestle_ir::network::Activation;

/// Rows and layout of a batch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BatchShape {
    pub batch: usize,
    pub steps: usize,
}

impl BatchShape {
    pub fn rows(&self) -> usize {
        self.batch * self.steps
    }
}

/// `out[row] = b` for every row.
fn broadcast_bias(b: &[f32], rows: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows * b.len());
    for _ in 0..rows {
        out.extend_from_slice(b);
    }
    out
}

fn relu_in_place(v: &mut [f32]) {
    for x in v {
        *x = x.max(0.0);
    }
}

/// `tanh(z) = 1 - 2 / (e^(2z) + 1)` through [`detmath::exp`] (not the platform's libm, whose
/// last bits differ between machines), rounded once to f32.
fn tanh_in_place(v: &mut [f32]) {
    for x in v {
        *x = (1.0 - 2.0 / (detmath::exp(2.0 * f64::from(*x)) + 1.0)) as f32;
    }
}

/// `sigmoid(z) = 1 / (1 + e^-z)` through [`detmath::exp`], rounded once to f32.
fn sigmoid_in_place(v: &mut [f32]) {
    for x in v {
        *x = (1.0 / (1.0 + detmath::exp(-f64::from(*x)))) as f32;
    }
}

/// The outputs of every layer, input first: `acts[0]` is the batch input, `acts[l + 1]` the
/// output of layer `l` (after its activation), each `rows x width`.
pub(crate) fn forward(model: &Model, input: Vec<f32>, shape: BatchShape) -> Vec<Vec<f32>> {
    let mut acts = Vec::with_capacity(model.shapes.len() + 1);
    acts.push(input);
    for s in &model.shapes {
        let x = acts.last().expect("the input is pushed first");
        let out = layer_forward(model, s, x, shape);
        acts.push(out);
    }
    acts
}

fn layer_forward(model: &Model, s: &LayerShape, x: &[f32], shape: BatchShape) -> Vec<f32> {
    let p = &model.params;
    let rows = shape.rows();
    let mut out = broadcast_bias(&p[s.b..s.end()], rows);
    let w = MatRef::new(&p[s.w..s.w + s.output * s.input], s.output, s.input);
    gemm_acc(MatRef::new(x, rows, s.input), w.t(), &mut out);
    if s.is_recurrent() {
        let r = MatRef::new(&p[s.r..s.b], s.output, s.output);
        let block = shape.batch * s.output;
        for t in 0..shape.steps {
            let (done, rest) = out.split_at_mut(t * block);
            if t > 0 {
                let prev = MatRef::new(&done[(t - 1) * block..], shape.batch, s.output);
                gemm_acc(prev, r.t(), &mut rest[..block]);
            }
            relu_in_place(&mut rest[..block]);
        }
    } else {
        match s.activation() {
            Activation::Relu => relu_in_place(&mut out),
            Activation::Tanh => tanh_in_place(&mut out),
            Activation::Sigmoid => sigmoid_in_place(&mut out),
            // `Architecture::check` admits no other activation.
            _ => {}
        }
    }
    out
}

/// Adds the gradient of the loss to `grads` (laid out as the model's parameters), given the
/// activations of [`forward`] and the gradient with respect to the network output.
pub(crate) fn backward(model: &Model, acts: &[Vec<f32>], d_out: Vec<f32>, shape: BatchShape, grads: &mut [f32]) {
    let mut d = d_out;
    for (l, s) in model.shapes.iter().enumerate().rev() {
        let (x, a) = (&acts[l], &acts[l + 1]);
        if s.is_recurrent() {
            recurrent_deltas(model, s, a, &mut d, shape);
        } else {
            match s.activation() {
                Activation::Relu => mask_by_activity(&mut d, a),
                // The derivatives from the outputs: tanh' = 1 - a^2, sigmoid' = a (1 - a).
                Activation::Tanh => d.iter_mut().zip(a).for_each(|(g, &v)| *g *= 1.0 - v * v),
                Activation::Sigmoid => d.iter_mut().zip(a).for_each(|(g, &v)| *g *= v * (1.0 - v)),
                _ => {}
            }
        }
        // d now holds dL/dz for every row.
        let rows = shape.rows();
        let dz = MatRef::new(&d, rows, s.output);
        gemm_acc(dz.t(), MatRef::new(x, rows, s.input), &mut grads[s.w..s.w + s.output * s.input]);
        if s.is_recurrent() && shape.steps > 1 {
            let later = (shape.steps - 1) * shape.batch;
            let dz_later = MatRef::new(&d[shape.batch * s.output..], later, s.output);
            let h_earlier = MatRef::new(&a[..later * s.output], later, s.output);
            gemm_acc(dz_later.t(), h_earlier, &mut grads[s.r..s.b]);
        }
        column_sums_into(&d, s.output, &mut grads[s.b..s.end()]);
        if l > 0 {
            let mut dx = vec![0.0f32; rows * s.input];
            let w = MatRef::new(&model.params[s.w..s.w + s.output * s.input], s.output, s.input);
            gemm_acc(dz, w, &mut dx);
            d = dx;
        }
    }
}

/// Zeroes the gradient where the ReLU was inactive (`a = relu(z) > 0` exactly when `z > 0`).
fn mask_by_activity(d: &mut [f32], a: &[f32]) {
    for (g, &v) in d.iter_mut().zip(a) {
        if v <= 0.0 {
            *g = 0.0;
        }
    }
}

/// Backpropagation through time: on entry `d` holds dL/dh_t from the layer above for every step;
/// on exit dL/dz_t, including what flows back through `h_t = relu(... + R h_{t-1})`.
fn recurrent_deltas(model: &Model, s: &LayerShape, a: &[f32], d: &mut [f32], shape: BatchShape) {
    let r = MatRef::new(&model.params[s.r..s.b], s.output, s.output);
    let block = shape.batch * s.output;
    for t in (0..shape.steps).rev() {
        let (upto, later) = d.split_at_mut((t + 1) * block);
        let current = &mut upto[t * block..];
        if t + 1 < shape.steps {
            gemm_acc(MatRef::new(&later[..block], shape.batch, s.output), r, current);
        }
        mask_by_activity(current, &a[t * block..(t + 1) * block]);
    }
}

/// `out[j] += sum over rows of m[row][j]`, rows in order.
fn column_sums_into(m: &[f32], width: usize, out: &mut [f32]) {
    for row in m.chunks_exact(width) {
        for (o, &v) in out.iter_mut().zip(row) {
            *o += v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss;
    use crate::model::{Architecture, Init, LayerSpec};
    use crate::rng::TrainRng;

    /// Mean squared error of the model on a fixed batch, in f64 from the f32 outputs.
    fn loss_of(model: &Model, input: &[f32], target: &[f32], shape: BatchShape) -> f64 {
        let acts = forward(model, input.to_vec(), shape);
        let width = model.arch.output();
        loss::mse(acts.last().unwrap(), target, width).loss_sum / shape.rows() as f64
    }

    /// Backpropagation's gradient of the mean-squared loss (2 outputs) against central finite
    /// differences, parameter by parameter; the number of non-zero gradients checked.
    fn assert_gradients_match(
        model: &Model,
        acts: &[Vec<f32>],
        input: &[f32],
        target: &[f32],
        shape: BatchShape,
    ) -> usize {
        let l = loss::mse(acts.last().unwrap(), target, 2);
        let mut grads = vec![0.0f32; model.params.len()];
        backward(model, acts, l.grad, shape, &mut grads);
        let h = 1e-3f32;
        let mut checked = 0;
        for (k, &gradient) in grads.iter().enumerate() {
            let (mut plus, mut minus) = (model.clone(), model.clone());
            plus.params[k] += h;
            minus.params[k] -= h;
            let numeric =
                (loss_of(&plus, input, target, shape) - loss_of(&minus, input, target, shape)) / f64::from(2.0 * h);
            let analytic = f64::from(gradient);
            assert!(
                (numeric - analytic).abs() <= 2e-3 + 2e-2 * analytic.abs(),
                "parameter {k}: backprop {analytic}, finite difference {numeric}"
            );
            checked += usize::from(analytic != 0.0);
        }
        checked
    }

    #[test]
    fn gradients_match_finite_differences_through_tanh_and_sigmoid() {
        let arch = Architecture {
            input: 2,
            layers: vec![
                LayerSpec::Dense { width: 4, activation: Activation::Tanh },
                LayerSpec::Dense { width: 3, activation: Activation::Sigmoid },
                LayerSpec::Dense { width: 2, activation: Activation::Identity },
            ],
        };
        let mut rng = TrainRng::new(5);
        let model = Model::init(&arch, Init::Xavier, &mut rng).unwrap();
        let shape = BatchShape { batch: 5, steps: 1 };
        let input: Vec<f32> = (0..shape.rows() * 2).map(|_| rng.symmetric(1.5) as f32).collect();
        let target: Vec<f32> = (0..shape.rows() * 2).map(|_| rng.symmetric(1.0) as f32).collect();
        let acts = forward(&model, input.clone(), shape);
        // The activations are the functions named: tanh and sigmoid of the pre-activations.
        assert!(acts[1].iter().all(|&v| v > -1.0 && v < 1.0) && acts[2].iter().all(|&v| v > 0.0 && v < 1.0));
        assert_gradients_match(&model, &acts, &input, &target, shape);
    }

    #[test]
    fn tanh_and_sigmoid_agree_with_the_standard_library_within_f32_rounding() {
        let zs: Vec<f32> = (-400..=400).map(|i| i as f32 * 0.05).collect();
        let (mut t, mut g) = (zs.clone(), zs.clone());
        tanh_in_place(&mut t);
        sigmoid_in_place(&mut g);
        for ((&z, &tv), &gv) in zs.iter().zip(&t).zip(&g) {
            assert!((f64::from(tv) - f64::from(z).tanh()).abs() <= 1e-7, "tanh({z}) = {tv}");
            assert!((f64::from(gv) - 1.0 / (1.0 + (-f64::from(z)).exp())).abs() <= 1e-7, "sigmoid({z}) = {gv}");
        }
    }

    #[test]
    fn gradients_match_finite_differences_through_time() {
        let arch = Architecture {
            input: 2,
            layers: vec![
                LayerSpec::Dense { width: 3, activation: Activation::Relu },
                LayerSpec::Recurrent { width: 4 },
                LayerSpec::Recurrent { width: 3 },
                LayerSpec::Dense { width: 2, activation: Activation::Identity },
            ],
        };
        let mut rng = TrainRng::new(11);
        let mut model = Model::init(&arch, Init::Xavier, &mut rng).unwrap();
        for b in model.shapes.iter().flat_map(|s| s.b..s.end()).collect::<Vec<_>>() {
            model.params[b] = rng.symmetric(0.5) as f32; // non-zero biases, so no ReLU sits at 0
        }
        let shape = BatchShape { batch: 3, steps: 4 };
        let input: Vec<f32> = (0..shape.rows() * 2).map(|_| rng.symmetric(1.0) as f32).collect();
        let target: Vec<f32> = (0..shape.rows() * 2).map(|_| rng.symmetric(1.0) as f32).collect();
        let acts = forward(&model, input.clone(), shape);
        let checked = assert_gradients_match(&model, &acts, &input, &target, shape);
        assert!(checked > model.params.len() / 2, "most gradients should be non-zero ({checked})");
    }
}
