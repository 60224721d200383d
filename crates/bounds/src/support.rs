//! Which method bounds which activation: the one table every entry point consults before it
//! builds anything, so an activation a method has no rule for is an input error naming the
//! network, the layer and the methods that can, never a bound.
//!
//! ReLU and identity: every method. Leaky ReLU and clip: IBP (their interval rule is exact,
//! [`trestle_ir::Interval::activate`]); CROWN, alpha-CROWN and the forward mode have no linear
//! relaxation of them yet. Tanh and sigmoid: no method yet (their enclosures need the rigorous
//! elementary functions).

use crate::Method;
use crate::error::BoundsError;
use trestle_ir::network::{Activation, Network};

/// Whether `method` has a sound rule for `activation`.
pub fn supports(method: &Method, activation: &Activation) -> bool {
    match activation {
        Activation::Identity | Activation::Relu => true,
        Activation::LeakyRelu { .. } | Activation::Clip { .. } => matches!(method, Method::Ibp),
        Activation::Tanh | Activation::Sigmoid => false,
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

    fn net(activation: Activation) -> Network {
        let layer =
            |activation| Layer::Dense(DenseLayer { weights: Matrix::identity(2), bias: vec![0.0; 2], activation });
        Network::new("inline:t", vec![layer(Activation::Relu), layer(activation)]).unwrap()
    }

    #[test]
    fn refusals_name_the_layer_and_who_can() {
        let leaky = net(Activation::LeakyRelu { alpha: 0.5 });
        assert!(check(&leaky, &Method::Ibp).is_ok());
        let msg = check(&leaky, &Method::Crown).unwrap_err().to_string();
        assert!(msg.contains("layer 1") && msg.contains("crown") && msg.contains("methods that do: ibp"), "{msg}");
        let msg = check(&net(Activation::Tanh), &Method::Ibp).unwrap_err().to_string();
        assert!(msg.contains("tanh") && msg.contains("no bounding method"), "{msg}");
        assert_eq!(method_for(&leaky, &Method::Crown), Method::Ibp);
        assert_eq!(method_for(&net(Activation::Relu), &Method::Crown), Method::Crown);
        assert_eq!(method_for(&net(Activation::Sigmoid), &Method::Crown), Method::Crown);
    }
}
