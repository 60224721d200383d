//! Which method bounds which activation: the one table every entry point consults before it
//! builds anything, so an activation a method has no rule for would be an input error naming the
//! network, the layer and the methods that can, never a bound.
//!
//! Today every method has a rule for every activation of the IR: IBP by the interval rules, and
//! CROWN, alpha-CROWN and the forward mode by the linear relaxations of `relax/` (exact pieces
//! and triangles for ReLU, leaky ReLU and clip; the tangent and secant lines of auto_LiRPA for
//! tanh and sigmoid, their intercepts made sound by rigorous enclosures). The table stays the
//! place a new activation without a relaxation would be refused.

use crate::Method;
use crate::error::BoundsError;
use trestle_ir::network::{Activation, Network};

/// Whether `method` has a sound rule for `activation`.
pub fn supports(method: &Method, activation: &Activation) -> bool {
    match activation {
        Activation::Identity
        | Activation::Relu
        | Activation::LeakyRelu { .. }
        | Activation::Clip { .. }
        | Activation::Tanh
        | Activation::Sigmoid => {
            matches!(method, Method::Ibp | Method::Crown | Method::AlphaCrown(_) | Method::Forward)
        }
    }
}

/// The methods that bound `activation` (names as `--bound-method` takes them).
pub fn methods_supporting(activation: &Activation) -> Vec<&'static str> {
    let all = [Method::Ibp, Method::Crown, Method::AlphaCrown(Default::default()), Method::Forward];
    all.iter().filter(|m| supports(m, activation)).map(Method::name).collect()
}

/// Every activation of `net` has a rule in `method`, or the error for the first that has none.
pub fn check(net: &Network, method: &Method) -> Result<(), BoundsError> {
    match net.first_activation_not(|a| supports(method, a)) {
        None => Ok(()),
        Some((layer, activation)) => Err(BoundsError::Unsupported {
            network: net.source.clone(),
            layer,
            activation: activation.to_string(),
            method: method.name(),
            supported_by: match methods_supporting(&activation)[..] {
                [] => "no bounding method handles it yet".into(),
                ref some => format!("methods that do: {}", some.join(", ")),
            },
        }),
    }
}

/// `preferred` when it bounds every activation of `net`, IBP otherwise (when IBP does): for
/// callers that need some sound bounds (big-M constants, fixed phases) and only prefer a method
/// for its tightness.
pub fn method_for(net: &Network, preferred: &Method) -> Method {
    if check(net, preferred).is_err() && check(net, &Method::Ibp).is_ok() { Method::Ibp } else { *preferred }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::network::{DenseLayer, Layer, Matrix};

    #[test]
    fn every_method_bounds_every_activation() {
        let acts = [
            Activation::Identity,
            Activation::Relu,
            Activation::LeakyRelu { alpha: 0.5 },
            Activation::Clip { lo: -1.0, hi: 1.0 },
            Activation::Tanh,
            Activation::Sigmoid,
        ];
        for act in acts {
            assert_eq!(methods_supporting(&act), vec!["ibp", "crown", "alpha-crown", "forward"]);
            let layer = Layer::Dense(DenseLayer { weights: Matrix::identity(2), bias: vec![0.0; 2], activation: act });
            let net = Network::new("inline:t", vec![layer]).unwrap();
            assert!(check(&net, &Method::Crown).is_ok());
            assert_eq!(method_for(&net, &Method::Crown), Method::Crown);
        }
    }
}
