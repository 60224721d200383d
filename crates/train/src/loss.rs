//! Losses, their gradients, and the metrics reported with them. Sums are taken in f64, in row
//! order; softmax uses [`crate::detmath`] so the result does not depend on the platform's libm.

use crate::detmath;

/// Loss, gradient and metric sums of one batch.
pub(crate) struct BatchLoss {
    /// Sum over rows of the per-row loss (divide by the row count for the mean).
    pub loss_sum: f64,
    /// Sum of |y - t| over all entries (regression) or of correct predictions (classification).
    pub metric_sum: f64,
    /// dL/dy of the *mean* loss over the batch's rows, `rows x width`.
    pub grad: Vec<f32>,
}

/// Mean squared error per row (the mean over the row's `width` entries); its gradient for the
/// mean over `rows` rows.
pub(crate) fn mse(y: &[f32], t: &[f32], width: usize) -> BatchLoss {
    let rows = y.len() / width;
    let scale = 2.0 / (rows * width) as f64;
    let (mut loss_sum, mut abs_sum) = (0.0f64, 0.0f64);
    let mut grad = Vec::with_capacity(y.len());
    for (yr, tr) in y.chunks_exact(width).zip(t.chunks_exact(width)) {
        let mut row = 0.0f64;
        for (&yv, &tv) in yr.iter().zip(tr) {
            let e = f64::from(yv) - f64::from(tv);
            row += e * e;
            abs_sum += e.abs();
            grad.push((scale * e) as f32);
        }
        loss_sum += row / width as f64;
    }
    BatchLoss { loss_sum, metric_sum: abs_sum, grad }
}

/// Softmax cross-entropy per row; `metric_sum` counts rows whose first largest logit is the label.
pub(crate) fn cross_entropy(y: &[f32], labels: &[u32], classes: usize) -> BatchLoss {
    let rows = y.len() / classes;
    let scale = 1.0 / rows as f64;
    let (mut loss_sum, mut correct) = (0.0f64, 0.0f64);
    let mut grad = Vec::with_capacity(y.len());
    let mut exps = vec![0.0f64; classes];
    for (yr, &label) in y.chunks_exact(classes).zip(labels) {
        let label = label as usize;
        let (best, max) = yr.iter().enumerate().fold((0, f64::from(yr[0])), |(bi, bv), (i, &v)| {
            if f64::from(v) > bv { (i, f64::from(v)) } else { (bi, bv) }
        });
        if best == label {
            correct += 1.0;
        }
        let mut sum = 0.0f64;
        for (e, &v) in exps.iter_mut().zip(yr) {
            *e = detmath::exp(f64::from(v) - max);
            sum += *e;
        }
        loss_sum += detmath::ln(sum) + max - f64::from(yr[label]);
        for (i, &e) in exps.iter().enumerate() {
            let p = e / sum;
            let g = if i == label { p - 1.0 } else { p };
            grad.push((scale * g) as f32);
        }
    }
    BatchLoss { loss_sum, metric_sum: correct, grad }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mse_value_and_gradient() {
        let l = mse(&[1.0, 2.0, 0.0, 0.0], &[0.0, 0.0, 0.0, 1.0], 2);
        assert_eq!(l.loss_sum, (1.0 + 4.0) / 2.0 + 1.0 / 2.0);
        assert_eq!(l.metric_sum, 4.0);
        assert_eq!(l.grad, vec![0.5, 1.0, 0.0, -0.5]); // 2 e / (2 rows * 2)
    }

    #[test]
    fn cross_entropy_matches_the_definition_and_finite_differences() {
        let y = [0.3f32, -1.2, 2.0, 0.5, 0.5, -0.1];
        let labels = [2u32, 0];
        let l = cross_entropy(&y, &labels, 3);
        let direct = |y: &[f32]| -> f64 {
            y.chunks(3)
                .zip(&labels)
                .map(|(r, &c)| {
                    let s: f64 = r.iter().map(|&v| f64::from(v).exp()).sum();
                    -(f64::from(r[c as usize]).exp() / s).ln()
                })
                .sum::<f64>()
        };
        assert!((l.loss_sum - direct(&y)).abs() < 1e-12);
        assert_eq!(l.metric_sum, 2.0); // row 0: argmax 2 = label; row 1: tie 0.5/0.5, first wins = 0
        for i in 0..y.len() {
            let mut yp = y;
            yp[i] += 1e-3;
            let mut ym = y;
            ym[i] -= 1e-3;
            let numeric = (direct(&yp) - direct(&ym)) / 2e-3 / 2.0; // mean over 2 rows
            assert!((f64::from(l.grad[i]) - numeric).abs() < 1e-4, "entry {i}");
        }
    }
}
