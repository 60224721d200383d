//! Typed errors: bad input is reported, never turned into a bound or a panic.

use trestle_ir::network::NetworkError;

#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum BoundsError {
    #[error(transparent)]
    Network(#[from] NetworkError),
    #[error("{what}: lo has {lo} entries but hi has {hi}")]
    BoxLengths { what: String, lo: usize, hi: usize },
    #[error("{what} has {found} dimensions, expected {expected}")]
    Dimension { what: String, found: usize, expected: usize },
    #[error("{what}: dimension {index} is [{lo}, {hi}]: bounds must be finite numbers")]
    NotFinite { what: String, index: usize, lo: f64, hi: f64 },
    #[error("{what}: dimension {index} is empty: lo {lo} > hi {hi}")]
    Inverted { what: String, index: usize, lo: f64, hi: f64 },
    #[error("network {network} is recurrent: bound one step with bound_recurrent_step or several with bound_unrolled")]
    Recurrent { network: String },
    #[error("network {network} has no recurrent layer: use bound")]
    NotRecurrent { network: String },
    #[error("{what} is {found}x{found_cols}, expected {expected}x{expected_cols}")]
    CoefficientShape { what: &'static str, found: usize, found_cols: usize, expected: usize, expected_cols: usize },
    #[error("alpha-CROWN step size must be a positive finite number, got {0}")]
    StepSize(f64),
    #[error("bounds overflowed at {at}: the box or the weights are too large for f64")]
    Overflow { at: String },
    #[error("unknown bounding method {0:?}: expected ibp, crown, alpha-crown or forward")]
    UnknownMethod(String),
    /// A method with no rule for an activation (see `support.rs`): an input error.
    #[error("network {network}: layer {layer}: the {method} bounds do not handle {activation} yet ({supported_by})")]
    Unsupported { network: String, layer: usize, activation: String, method: &'static str, supported_by: String },
}
