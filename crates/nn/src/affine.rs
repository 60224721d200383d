//! Building a chain of dense layers from a sequence of affine maps and activations, shared by both
//! formats.
//!
//! Consecutive affine maps are merged into one layer only when the merged weights and biases are
//! *exactly* the composition: every product and sum is checked to be exact in f64 (fused
//! multiply-add residual for products, two-sum error term for sums). Two full matrices are never
//! multiplied. When a merge would round, the first map is emitted as its own `Identity` layer.

use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, RecurrentLayer};

/// Widest identity or diagonal map materialised as a dense matrix (`n * n` weights, 512 MiB at
/// this width). Wider maps only arise from absurd or hostile inputs; they are an error rather than
/// an allocation failure.
pub const MAX_DIAGONAL_WIDTH: usize = 8192;

fn check_expandable(linear: &Linear) -> Result<(), String> {
    let n = match linear {
        Linear::Identity(n) => *n,
        Linear::Diagonal(d) => d.len(),
        Linear::Full(_) => return Ok(()),
    };
    if n > MAX_DIAGONAL_WIDTH {
        return Err(format!(
            "a diagonal layer of width {n} would be stored as a dense {n} x {n} matrix; widths above \
             {MAX_DIAGONAL_WIDTH} are not supported"
        ));
    }
    Ok(())
}

/// The linear part of an affine map, kept structured so exact merges are cheap to check.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Linear {
    Identity(usize),
    Diagonal(Vec<f64>),
    /// `rows` outputs by `cols` inputs.
    Full(Matrix),
}

/// `y = L x + bias`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Affine {
    pub linear: Linear,
    pub bias: Vec<f64>,
}

impl Affine {
    pub fn new(linear: Linear, bias: Vec<f64>) -> Affine {
        Affine { linear, bias }
    }

    pub fn in_dim(&self) -> usize {
        match &self.linear {
            Linear::Identity(n) => *n,
            Linear::Diagonal(d) => d.len(),
            Linear::Full(m) => m.cols,
        }
    }

    pub fn out_dim(&self) -> usize {
        match &self.linear {
            Linear::Identity(n) => *n,
            Linear::Diagonal(d) => d.len(),
            Linear::Full(m) => m.rows,
        }
    }

    fn into_layer(self, activation: Activation) -> Layer {
        let weights = match self.linear {
            Linear::Identity(n) => Matrix::identity(n),
            Linear::Diagonal(d) => Matrix::diagonal(&d),
            Linear::Full(m) => m,
        };
        Layer::Dense(DenseLayer { weights, bias: self.bias, activation })
    }
}

/// `a * b` if it is exactly representable in f64 (and not in the subnormal range, where the
/// residual test could be fooled by underflow).
pub(crate) fn exact_mul(a: f64, b: f64) -> Option<f64> {
    let p = a * b;
    if a == 0.0 || b == 0.0 {
        return Some(p);
    }
    if !p.is_finite() || p.abs() < f64::MIN_POSITIVE || a.mul_add(b, -p) != 0.0 {
        return None;
    }
    Some(p)
}

/// `a + b` if it is exactly representable in f64 (Knuth's two-sum error term is zero).
pub(crate) fn exact_add(a: f64, b: f64) -> Option<f64> {
    let s = a + b;
    if !s.is_finite() {
        return None;
    }
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (err == 0.0).then_some(s)
}

fn scale_rows(d: &[f64], m: &Matrix) -> Option<Matrix> {
    let mut data = Vec::with_capacity(m.data.len());
    for (r, &scale) in d.iter().enumerate().take(m.rows) {
        for &w in m.row(r) {
            data.push(exact_mul(scale, w)?);
        }
    }
    Some(Matrix::new(m.rows, m.cols, data))
}

fn scale_cols(m: &Matrix, d: &[f64]) -> Option<Matrix> {
    let mut data = Vec::with_capacity(m.data.len());
    for r in 0..m.rows {
        for (&w, &s) in m.row(r).iter().zip(d) {
            data.push(exact_mul(w, s)?);
        }
    }
    Some(Matrix::new(m.rows, m.cols, data))
}

/// `next ∘ first` as a single affine map, if every entry is exact; `None` otherwise.
/// Requires `next.in_dim() == first.out_dim()`.
pub(crate) fn compose_exact(first: &Affine, next: &Affine) -> Option<Affine> {
    match &next.linear {
        Linear::Identity(_) => {
            let bias = first.bias.iter().zip(&next.bias).map(|(&a, &b)| exact_add(a, b)).collect::<Option<_>>()?;
            Some(Affine::new(first.linear.clone(), bias))
        }
        Linear::Diagonal(d) => {
            let linear = match &first.linear {
                Linear::Identity(_) => Linear::Diagonal(d.clone()),
                Linear::Diagonal(e) => {
                    Linear::Diagonal(d.iter().zip(e).map(|(&x, &y)| exact_mul(x, y)).collect::<Option<_>>()?)
                }
                Linear::Full(m) => Linear::Full(scale_rows(d, m)?),
            };
            let bias = (d.iter().zip(&first.bias).zip(&next.bias))
                .map(|((&s, &b1), &b2)| exact_add(exact_mul(s, b1)?, b2))
                .collect::<Option<_>>()?;
            Some(Affine::new(linear, bias))
        }
        Linear::Full(w) => {
            if first.bias.iter().any(|&b| b != 0.0) {
                return None; // W (A x + a) needs W a: sums of products, which round.
            }
            let linear = match &first.linear {
                Linear::Identity(_) => Linear::Full(w.clone()),
                Linear::Diagonal(e) => Linear::Full(scale_cols(w, e)?),
                Linear::Full(_) => return None,
            };
            Some(Affine::new(linear, next.bias.clone()))
        }
    }
}

/// Accumulates affine maps and activations into dense layers.
#[derive(Debug)]
pub(crate) struct ChainBuilder {
    width: usize,
    layers: Vec<Layer>,
    pending: Option<Affine>,
}

impl ChainBuilder {
    /// A chain whose input has `width` features.
    pub fn new(width: usize) -> ChainBuilder {
        ChainBuilder { width, layers: Vec::new(), pending: None }
    }

    /// Current number of features.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Appends `y = map(x)`, merged into the pending map when that is exact.
    /// Errors (with a message) when the map's input size is not the current width.
    pub fn affine(&mut self, map: Affine) -> Result<(), String> {
        if map.in_dim() != self.width {
            return Err(format!("the map takes {} features but the value has {}", map.in_dim(), self.width));
        }
        if map.bias.len() != map.out_dim() {
            return Err(format!("bias has {} entries, expected {}", map.bias.len(), map.out_dim()));
        }
        check_expandable(&map.linear)?;
        self.width = map.out_dim();
        self.pending = Some(match self.pending.take() {
            None => map,
            Some(first) => match compose_exact(&first, &map) {
                Some(merged) => merged,
                None => {
                    self.layers.push(first.into_layer(Activation::Identity));
                    map
                }
            },
        });
        Ok(())
    }

    /// Appends an elementwise ReLU (see [`ChainBuilder::activation`]).
    pub fn relu(&mut self) -> Result<(), String> {
        self.activation(Activation::Relu)
    }

    /// Appends an elementwise activation (validated, and in its canonical form). The pending map
    /// becomes a layer with it; with no pending map, an idempotent activation (ReLU, clip)
    /// directly after a layer with the same one is dropped, and otherwise an identity-matrix
    /// layer carries it. The identity activation only ends the pending map's layer.
    pub fn activation(&mut self, act: Activation) -> Result<(), String> {
        act.validate()?;
        let act = act.canonical();
        if act == Activation::Identity {
            return Ok(());
        }
        let idempotent = matches!(act, Activation::Relu | Activation::Clip { .. });
        let map = match self.pending.take() {
            Some(map) => map,
            None if idempotent && self.layers.last().is_some_and(|l| l.activation() == act) => return Ok(()),
            None => self.identity()?,
        };
        self.layers.push(map.into_layer(act));
        Ok(())
    }

    /// Appends an Elman layer. A pending affine map stays a layer of its own before it (folding
    /// it into the input weights would multiply matrices, which rounds).
    pub fn recurrent(&mut self, layer: RecurrentLayer) -> Result<(), String> {
        if layer.input_weights.cols != self.width {
            return Err(format!(
                "the layer takes {} features but the value has {}",
                layer.input_weights.cols, self.width
            ));
        }
        if let Some(map) = self.pending.take() {
            self.layers.push(map.into_layer(Activation::Identity));
        }
        self.width = layer.input_weights.rows;
        self.layers.push(Layer::Recurrent(layer));
        Ok(())
    }

    fn identity(&self) -> Result<Affine, String> {
        let map = Affine::new(Linear::Identity(self.width), vec![0.0; self.width]);
        check_expandable(&map.linear)?;
        Ok(map)
    }

    /// The layers; a chain with no operation at all becomes one identity layer.
    pub fn finish(mut self) -> Result<Vec<Layer>, String> {
        if let Some(map) = self.pending.take() {
            self.layers.push(map.into_layer(Activation::Identity));
        }
        if self.layers.is_empty() {
            let map = self.identity()?;
            self.layers.push(map.into_layer(Activation::Identity));
        }
        Ok(self.layers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(l: &Layer) -> &DenseLayer {
        match l {
            Layer::Dense(d) => d,
            Layer::Recurrent(_) => panic!("not dense"),
        }
    }

    #[test]
    fn exact_arithmetic_checks() {
        assert_eq!(exact_mul(0.5, 3.0), Some(1.5));
        assert_eq!(exact_mul(0.1, 3.0), None);
        assert_eq!(exact_mul(f64::MAX, 2.0), None);
        assert_eq!(exact_mul(f64::MIN_POSITIVE, 0.5), None);
        assert_eq!(exact_add(1.0, 2.0f64.powi(-52)), Some(1.0 + 2.0f64.powi(-52)));
        assert_eq!(exact_add(1.0, 2.0f64.powi(-60)), None);
        assert_eq!(exact_add(0.1, 0.2), None);
    }

    #[test]
    fn matmul_then_bias_is_one_layer() {
        let mut c = ChainBuilder::new(2);
        let w = Matrix::from_rows(&[vec![0.1, 0.2], vec![0.3, 0.4], vec![0.5, 0.6]]);
        c.affine(Affine::new(Linear::Full(w.clone()), vec![0.0; 3])).unwrap();
        c.affine(Affine::new(Linear::Identity(3), vec![0.7, 0.8, 0.9])).unwrap();
        c.relu().unwrap();
        let layers = c.finish().unwrap();
        assert_eq!(layers.len(), 1);
        assert_eq!(dense(&layers[0]).weights, w);
        assert_eq!(dense(&layers[0]).bias, vec![0.7, 0.8, 0.9]);
        assert_eq!(layers[0].activation(), Activation::Relu);
    }

    #[test]
    fn inexact_scale_becomes_its_own_layer() {
        let mut c = ChainBuilder::new(1);
        c.affine(Affine::new(Linear::Full(Matrix::from_rows(&[vec![0.1]])), vec![0.0])).unwrap();
        c.affine(Affine::new(Linear::Diagonal(vec![0.3]), vec![0.0])).unwrap();
        let layers = c.finish().unwrap();
        assert_eq!(layers.len(), 2);
        assert_eq!(dense(&layers[1]).weights, Matrix::diagonal(&[0.3]));
    }

    #[test]
    fn power_of_two_scale_folds() {
        let mut c = ChainBuilder::new(1);
        c.affine(Affine::new(Linear::Diagonal(vec![0.5]), vec![0.0])).unwrap();
        c.affine(Affine::new(Linear::Full(Matrix::from_rows(&[vec![0.1], vec![3.0]])), vec![1.0, 2.0])).unwrap();
        c.affine(Affine::new(Linear::Diagonal(vec![4.0, 2.0]), vec![0.0, 0.0])).unwrap();
        let layers = c.finish().unwrap();
        assert_eq!(layers.len(), 1);
        assert_eq!(dense(&layers[0]).weights.data, vec![0.2, 3.0]);
        assert_eq!(dense(&layers[0]).bias, vec![4.0, 4.0]);
    }

    #[test]
    fn relu_without_pending_map() {
        let mut c = ChainBuilder::new(2);
        c.relu().unwrap();
        c.relu().unwrap();
        let layers = c.finish().unwrap();
        assert_eq!(layers.len(), 1);
        assert_eq!(dense(&layers[0]).weights, Matrix::identity(2));
        assert!(ChainBuilder::new(3).affine(Affine::new(Linear::Identity(2), vec![0.0; 2])).is_err());
        assert_eq!(ChainBuilder::new(3).finish().unwrap().len(), 1);
    }

    #[test]
    fn activations_end_the_pending_map_and_repeat_only_when_not_idempotent() {
        let mut c = ChainBuilder::new(2);
        c.affine(Affine::new(Linear::Diagonal(vec![2.0, 3.0]), vec![0.5, 0.0])).unwrap();
        c.activation(Activation::Tanh).unwrap();
        c.activation(Activation::Tanh).unwrap(); // tanh(tanh(z)) is not tanh(z): a layer of its own
        let clip = Activation::Clip { lo: -1.0, hi: 1.0 };
        c.activation(clip).unwrap();
        c.activation(clip).unwrap(); // idempotent: dropped
        c.activation(Activation::LeakyRelu { alpha: 0.0 }).unwrap(); // canonical: a ReLU
        let layers = c.finish().unwrap();
        let acts: Vec<Activation> = layers.iter().map(Layer::activation).collect();
        assert_eq!(acts, vec![Activation::Tanh, Activation::Tanh, clip, Activation::Relu]);
        assert_eq!(dense(&layers[1]).weights, Matrix::identity(2));
        let bad = ChainBuilder::new(1).activation(Activation::Clip { lo: 1.0, hi: 0.0 }).unwrap_err();
        assert!(bad.contains("above the upper bound"), "{bad}");
    }

    #[test]
    fn huge_diagonals_are_refused_not_allocated() {
        let n = MAX_DIAGONAL_WIDTH + 1;
        let msg = ChainBuilder::new(n).relu().unwrap_err();
        assert!(msg.contains("widths above 8192 are not supported"), "{msg}");
        assert!(ChainBuilder::new(n).finish().is_err());
        assert!(ChainBuilder::new(n).affine(Affine::new(Linear::Diagonal(vec![2.0; n]), vec![0.0; n])).is_err());
    }
}
