//! Adam and SGD (with momentum), elementwise over the flat parameter buffer.

/// The optimiser and its hyper-parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Optimizer {
    /// Adam (Kingma & Ba), with the bias corrections of the paper (as PyTorch applies them).
    Adam { lr: f64, beta1: f64, beta2: f64, eps: f64 },
    /// Stochastic gradient descent, `v = momentum v + g; p -= lr v`.
    Sgd { lr: f64, momentum: f64 },
}

impl Optimizer {
    /// Adam with the usual defaults (beta1 0.9, beta2 0.999, eps 1e-8).
    pub fn adam(lr: f64) -> Optimizer {
        Optimizer::Adam { lr, beta1: 0.9, beta2: 0.999, eps: 1e-8 }
    }

    pub fn sgd(lr: f64, momentum: f64) -> Optimizer {
        Optimizer::Sgd { lr, momentum }
    }

    pub(crate) fn check(&self) -> Result<(), String> {
        let ok = match *self {
            Optimizer::Adam { lr, beta1, beta2, eps } => {
                lr > 0.0 && (0.0..1.0).contains(&beta1) && (0.0..1.0).contains(&beta2) && eps > 0.0
            }
            Optimizer::Sgd { lr, momentum } => lr > 0.0 && (0.0..1.0).contains(&momentum),
        };
        if ok { Ok(()) } else { Err(format!("invalid optimiser settings {self:?}")) }
    }
}

/// The optimiser's state for one parameter buffer.
pub(crate) struct OptimizerState {
    optimizer: Optimizer,
    first: Vec<f32>,
    second: Vec<f32>,
    /// `beta1^t`, `beta2^t`, by repeated multiplication (no `powi`, whose rounding is unspecified).
    beta_powers: (f64, f64),
}

impl OptimizerState {
    pub fn new(optimizer: Optimizer, parameters: usize) -> OptimizerState {
        let second = if matches!(optimizer, Optimizer::Adam { .. }) { parameters } else { 0 };
        OptimizerState { optimizer, first: vec![0.0; parameters], second: vec![0.0; second], beta_powers: (1.0, 1.0) }
    }

    /// One step on `params` with gradient `grads`; the learning rate is scaled by `lr_factor`.
    pub fn step(&mut self, params: &mut [f32], grads: &[f32], lr_factor: f64) {
        match self.optimizer {
            Optimizer::Adam { lr, beta1, beta2, eps } => {
                self.beta_powers = (self.beta_powers.0 * beta1, self.beta_powers.1 * beta2);
                let correction1 = 1.0 - self.beta_powers.0;
                let sqrt_correction2 = (1.0 - self.beta_powers.1).sqrt();
                let step = (lr * lr_factor / correction1) as f32;
                let (b1, b2) = (beta1 as f32, beta2 as f32);
                let (c1, c2) = ((1.0 - beta1) as f32, (1.0 - beta2) as f32);
                let (inv_sqrt_c2, eps) = ((1.0 / sqrt_correction2) as f32, eps as f32);
                let moments = self.first.iter_mut().zip(self.second.iter_mut());
                for ((p, &g), (m, v)) in params.iter_mut().zip(grads).zip(moments) {
                    *m = b1 * *m + c1 * g;
                    *v = b2 * *v + c2 * (g * g);
                    *p -= step * *m / (v.sqrt() * inv_sqrt_c2 + eps);
                }
            }
            Optimizer::Sgd { lr, momentum } => {
                let (lr, mu) = ((lr * lr_factor) as f32, momentum as f32);
                for ((p, &g), v) in params.iter_mut().zip(grads).zip(self.first.iter_mut()) {
                    *v = mu * *v + g;
                    *p -= lr * *v;
                }
            }
        }
    }
}

/// Scales `grads` so that their Euclidean norm is at most `max_norm` (norm summed in f64, in order).
pub(crate) fn clip_global_norm(grads: &mut [f32], max_norm: f64) {
    let norm = grads.iter().map(|&g| f64::from(g) * f64::from(g)).sum::<f64>().sqrt();
    if norm > max_norm {
        let factor = (max_norm / norm) as f32;
        grads.iter_mut().for_each(|g| *g *= factor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_first_step_moves_each_parameter_by_about_lr() {
        // With bias correction the first Adam step is lr * g / (|g| + eps') in each coordinate.
        let mut s = OptimizerState::new(Optimizer::adam(0.1), 3);
        let mut p = vec![1.0f32, 1.0, 1.0];
        s.step(&mut p, &[2.0, -0.5, 0.0], 1.0);
        assert!((p[0] - 0.9).abs() < 1e-6 && (p[1] - 1.1).abs() < 1e-6 && p[2] == 1.0, "{p:?}");
    }

    #[test]
    fn sgd_with_momentum_and_clipping() {
        let mut s = OptimizerState::new(Optimizer::sgd(0.5, 0.5), 1);
        let mut p = vec![0.0f32];
        s.step(&mut p, &[1.0], 1.0);
        s.step(&mut p, &[1.0], 1.0);
        assert_eq!(p, vec![-0.5 - 0.75]);
        let mut g = vec![3.0f32, 4.0];
        clip_global_norm(&mut g, 1.0);
        assert!((g[0] - 0.6).abs() < 1e-7 && (g[1] - 0.8).abs() < 1e-7);
        assert!(Optimizer::adam(0.0).check().is_err() && Optimizer::sgd(0.1, 1.0).check().is_err());
    }
}
