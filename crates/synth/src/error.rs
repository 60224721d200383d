/// Why synthesis could not be run at all. Reaching a limit is not an error: it is an `Unknown`
/// verdict with the reason.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    #[error("the system has no safe region (`safe = ...`): synthesis looks for an invariant inside it")]
    NoSafe,
    #[error("the safe region must be a bounded union of boxes with non-strict bounds: {0}")]
    SafeShape(String),
    #[error("invalid synthesis configuration: {0}")]
    Config(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error(transparent)]
    Bridge(#[from] trestle_bridge::BridgeError),
    #[error(transparent)]
    Check(#[from] trestle_smt::CheckError),
    #[error("internal error: {0}")]
    Internal(String),
}
