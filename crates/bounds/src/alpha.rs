//! alpha-CROWN: the relaxation slopes of the final backward pass optimised per bound.
//!
//! Intermediate bounds are CROWN's; only the slopes of the last backward pass are optimised, one
//! slope vector per row of the query (each output's upper bound and, as the upper bound of its
//! negation, its lower bound). Per neuron there are two slopes, the lower line's and the upper
//! line's, each in the range its operator gives (`relax/`; ReLU: the lower slope in `[0, 1]`,
//! the upper chord fixed). The objective (the concretised bound) and its gradient are computed
//! in plain f64 without error terms: they only steer the search. The slopes found are then used in
//! the rigorous backward pass, which recomputes each line's intercept soundly for its slope, so
//! every slope gives a sound bound there. Steps are projected Adam steps (auto_LiRPA's optimiser:
//! Adam, learning rate decayed by 0.98 per step, slopes clipped to their ranges), starting from
//! CROWN's slopes; the best iterate per row is kept, and the caller keeps CROWN's row where it is
//! still better, so the result is never looser.

use crate::fp::{axpy, dot};
use crate::graph::Graph;
use crate::ibp::Bounds;
use crate::relax::{Relaxation, StageRelaxation};
use trestle_ir::network::Matrix;

/// Settings of the slope optimisation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AlphaConfig {
    /// Gradient steps (the starting point, CROWN's slopes, is evaluated too).
    pub iterations: usize,
    /// Adam learning rate of the slopes.
    pub step_size: f64,
}

impl Default for AlphaConfig {
    fn default() -> AlphaConfig {
        AlphaConfig { iterations: 20, step_size: 0.5 }
    }
}

const LR_DECAY: f64 = 0.98;
const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const ADAM_EPSILON: f64 = 1e-8;

/// The queried rows `out_coeffs_i . y + in_coeffs_i . x` to be bounded above over the box.
pub(crate) struct AlphaProblem<'a> {
    pub graph: &'a Graph<'a>,
    pub bounds: &'a Bounds,
    pub out_coeffs: &'a Matrix,
    pub in_coeffs: Option<&'a Matrix>,
}

/// One evaluation of the (unrounded) backward pass: the objective per row, and the coefficients
/// reached at every level (`lambdas[t]` over level t), which the gradient needs.
struct Evaluation {
    objective: Vec<f64>,
    lambdas: Vec<Matrix>,
    final_coeffs: Matrix,
}

impl AlphaProblem<'_> {
    fn rows(&self) -> usize {
        self.out_coeffs.rows
    }

    /// Optimised slopes per stage (rows x 2 block neurons: the lower slopes, then the upper ones),
    /// or `None` when no neuron has a slope to choose.
    pub fn optimise(&self, config: &AlphaConfig) -> Option<Vec<Matrix>> {
        let relax: Vec<&StageRelaxation> = self.bounds.stages.iter().map(|s| s.relax()).collect();
        if relax.iter().all(|r| r.optimisable_count() == 0) {
            return None;
        }
        let k = self.rows();
        let mut alphas: Vec<Matrix> = relax
            .iter()
            .map(|r| {
                let (lower, upper): (Vec<f64>, Vec<f64>) = r.neurons.iter().map(Relaxation::initial_slopes).unzip();
                let row = [lower, upper].concat();
                Matrix::new(k, row.len(), row.repeat(k))
            })
            .collect();
        let mut best = alphas.clone();
        let mut best_objective = vec![f64::INFINITY; k];
        let mut first_moment: Vec<Matrix> = alphas.iter().map(zeros_like).collect();
        let mut second_moment = first_moment.clone();
        let mut lr = config.step_size;
        for step in 0..=config.iterations {
            let eval = self.evaluate(&alphas);
            for (i, (best_i, &value)) in best_objective.iter_mut().zip(&eval.objective).enumerate() {
                if value < *best_i {
                    *best_i = value;
                    for (b, a) in best.iter_mut().zip(&alphas) {
                        let n = a.cols;
                        b.data[i * n..(i + 1) * n].copy_from_slice(a.row(i));
                    }
                }
            }
            if step == config.iterations {
                break;
            }
            let grads = self.gradient(&alphas, &eval);
            let t = (step + 1) as i32;
            let (c1, c2) = (1.0 - BETA1.powi(t), 1.0 - BETA2.powi(t));
            for (t_stage, grad) in grads.iter().enumerate() {
                let stage_relax = &relax[t_stage];
                let (width, n) = (grad.cols, stage_relax.neurons.len());
                for i in 0..k {
                    for (r, relaxation) in stage_relax.neurons.iter().enumerate() {
                        let Some((lower, upper)) = relaxation.ranges() else { continue };
                        for (col, range) in [(r, lower), (n + r, upper)] {
                            if range.0 >= range.1 {
                                continue;
                            }
                            let idx = i * width + col;
                            let g = grad.data[idx];
                            let m = &mut first_moment[t_stage].data[idx];
                            *m = BETA1 * *m + (1.0 - BETA1) * g;
                            let v = &mut second_moment[t_stage].data[idx];
                            *v = BETA2 * *v + (1.0 - BETA2) * g * g;
                            let update = lr * (*m / c1) / ((*v / c2).sqrt() + ADAM_EPSILON);
                            let a = &mut alphas[t_stage].data[idx];
                            *a = (*a - update).clamp(range.0, range.1);
                        }
                    }
                }
            }
            lr *= LR_DECAY;
        }
        Some(best)
    }

    fn evaluate(&self, alphas: &[Matrix]) -> Evaluation {
        let stages = &self.graph.stages;
        let k = self.rows();
        let mut constant = vec![0.0; k];
        let mut lambdas: Vec<Matrix> = Vec::with_capacity(stages.len() + 1);
        let mut lambda = self.out_coeffs.clone();
        for t in (0..stages.len()).rev() {
            let stage = &stages[t];
            let relax = self.bounds.stages[t].relax();
            let (rows, cols, n_z) = (stage.rows(), stage.cols(), stage.input_dim);
            let n = relax.neurons.len();
            let mut next = Matrix::new(k, n_z, vec![0.0; k * n_z]);
            for (i, c) in constant.iter_mut().enumerate() {
                let l_row = lambda.row(i);
                let out = &mut next.data[i * n_z..(i + 1) * n_z];
                for (r, relaxation) in relax.neurons.iter().enumerate() {
                    let (slope, intercept, _) = relaxation.search_line(
                        relax.activation,
                        l_row[r],
                        alphas[t].get(i, r),
                        alphas[t].get(i, n + r),
                    );
                    let d = l_row[r] * slope;
                    if d != 0.0 {
                        axpy(d, stage.weights.row(r), &mut out[..cols]);
                        *c += d * stage.bias[r];
                    }
                    *c += l_row[r] * intercept;
                }
                for (kk, &src) in stage.copies.iter().enumerate() {
                    out[src] += l_row[rows + kk];
                }
            }
            lambdas.push(std::mem::replace(&mut lambda, next));
        }
        lambdas.push(lambda);
        lambdas.reverse();
        let mut final_coeffs = lambdas[0].clone();
        if let Some(extra) = self.in_coeffs {
            for (a, b) in final_coeffs.data.iter_mut().zip(&extra.data) {
                *a += b;
            }
        }
        let input = &self.bounds.levels[0];
        let objective = (0..k)
            .map(|i| {
                let row = final_coeffs.row(i);
                constant[i]
                    + row
                        .iter()
                        .zip(input.lo.iter().zip(&input.hi))
                        .map(|(&a, (&l, &h))| (a * l).max(a * h))
                        .sum::<f64>()
            })
            .collect();
        Evaluation { objective, lambdas, final_coeffs }
    }

    /// d objective / d slope for every optimisable neuron, by reverse-mode differentiation of
    /// [`Self::evaluate`] (the choice between upper and lower relaxation is held fixed). A line of
    /// slope `s` has the intercept `t(s)` of the extremum of `act(p) - s p`, whose derivative is
    /// minus the extremum's location `z` (envelope theorem), so the line's value at the
    /// concretising pre-activation `p*` moves by `p* - z` (ReLU's lower line: `z = 0`).
    fn gradient(&self, alphas: &[Matrix], eval: &Evaluation) -> Vec<Matrix> {
        let stages = &self.graph.stages;
        let k = self.rows();
        let input = &self.bounds.levels[0];
        let mut grads: Vec<Matrix> = alphas.iter().map(zeros_like).collect();
        let top = match self.bounds.stages.iter().rposition(|s| s.relax().optimisable_count() > 0) {
            Some(t) => t,
            None => return grads,
        };
        // d objective / d lambda at level 0.
        let n0 = self.graph.input_dim;
        let mut g = Matrix::new(k, n0, vec![0.0; k * n0]);
        for i in 0..k {
            for (j, &a) in eval.final_coeffs.row(i).iter().enumerate() {
                g.data[i * n0 + j] = if a >= 0.0 { input.hi[j] } else { input.lo[j] };
            }
        }
        for t in 0..=top {
            let stage = &stages[t];
            let relax = self.bounds.stages[t].relax();
            let lambda = &eval.lambdas[t + 1];
            let (rows, cols) = (stage.rows(), stage.cols());
            let (n, grad_width) = (relax.neurons.len(), grads[t].cols);
            let width = stage.output_dim();
            let mut g_next = Matrix::new(k, width, vec![0.0; k * width]);
            for i in 0..k {
                let g_row = g.row(i);
                let l_row = lambda.row(i);
                let out = &mut g_next.data[i * width..(i + 1) * width];
                for (r, relaxation) in relax.neurons.iter().enumerate() {
                    if *relaxation == Relaxation::Zero {
                        continue;
                    }
                    let d_grad = dot(stage.weights.row(r), &g_row[..cols]) + stage.bias[r];
                    let (slope, intercept, touch) = relaxation.search_line(
                        relax.activation,
                        l_row[r],
                        alphas[t].get(i, r),
                        alphas[t].get(i, n + r),
                    );
                    if let Some((lower, upper)) = relaxation.ranges() {
                        let (col, range) = if l_row[r] >= 0.0 { (n + r, upper) } else { (r, lower) };
                        if range.0 < range.1 {
                            grads[t].data[i * grad_width + col] = (d_grad - touch) * l_row[r];
                        }
                    }
                    out[r] = d_grad * slope + intercept;
                }
                for (kk, &src) in stage.copies.iter().enumerate() {
                    out[rows + kk] = g_row[src];
                }
            }
            g = g_next;
        }
        grads
    }
}

fn zeros_like(m: &Matrix) -> Matrix {
    Matrix::new(m.rows, m.cols, vec![0.0; m.data.len()])
}
