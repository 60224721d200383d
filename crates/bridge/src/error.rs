/// Why a run could not be carried out at all (input problems and internal failures; a limit being
/// reached is not an error but an `Unknown` verdict).
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error("the system has no candidate invariant (give `invariant = ...` or use `trestle synth`)")]
    NoInvariant,
    #[error("the system has no safe region (`safe = ...`)")]
    NoSafe,
    #[error("the invariant must be a bounded union of boxes with non-strict bounds: {0}")]
    InvariantShape(String),
    #[error("unsupported by the bridge engine: {0}")]
    Unsupported(String),
    #[error("bound computation failed: {0}")]
    Bounds(String),
    #[error(transparent)]
    Check(#[from] trestle_smt::CheckError),
    #[error("certificate: {0}")]
    Certificate(String),
    #[error("internal error: {0}")]
    Internal(String),
}
