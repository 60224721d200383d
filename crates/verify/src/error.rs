//! What ends a run without a result: the input's fault (exit 2) or ours (exit 4). Limits,
//! undecided questions and unsupported features of one property are results (`unknown`), never
//! errors.

/// An error of a run.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The system, the property, the options or a file: the user can fix it.
    #[error("{0}")]
    Input(String),
    /// A bug of trestle (an engine disagreed with itself, a replay failed): never a verdict.
    #[error("internal error (a bug in trestle, please report it): {0}")]
    Internal(String),
}

impl DriverError {
    pub fn input(msg: impl std::fmt::Display) -> DriverError {
        DriverError::Input(msg.to_string())
    }

    pub fn internal(msg: impl std::fmt::Display) -> DriverError {
        DriverError::Internal(msg.to_string())
    }

    pub fn is_internal(&self) -> bool {
        matches!(self, DriverError::Internal(_))
    }
}

impl From<trestle_bridge::BridgeError> for DriverError {
    /// The engine's own bugs are internal; everything else is about the input: its shape, an
    /// unsupported feature, a path, bounds that overflow f64 (weights or boxes too large, which
    /// validation cannot rule out).
    fn from(e: trestle_bridge::BridgeError) -> DriverError {
        match e {
            trestle_bridge::BridgeError::Internal(m) => DriverError::Internal(m),
            other => DriverError::Input(other.to_string()),
        }
    }
}

impl From<trestle_synth::SynthError> for DriverError {
    fn from(e: trestle_synth::SynthError) -> DriverError {
        match e {
            trestle_synth::SynthError::Internal(m) => DriverError::Internal(m),
            trestle_synth::SynthError::Bridge(e) => e.into(),
            other => DriverError::Input(other.to_string()),
        }
    }
}

impl From<trestle_cegar::CegarError> for DriverError {
    fn from(e: trestle_cegar::CegarError) -> DriverError {
        use trestle_cegar::CegarError;
        match e {
            CegarError::Unsupported(_)
            | CegarError::NotPiecewiseLinear(_)
            | CegarError::NoSafe
            | CegarError::TooLarge(_) => DriverError::Input(e.to_string()),
            CegarError::Smt(_) | CegarError::Internal(_) => DriverError::Internal(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_bridge::BridgeError;

    /// Exit 4 is for our bugs only; everything the user can fix is exit 2.
    #[test]
    fn engine_errors_map_to_their_kind() {
        assert!(DriverError::from(BridgeError::Internal("x".into())).is_internal());
        for input in [
            BridgeError::Bounds("bounds overflowed at stage 1: the weights are too large for f64".into()),
            BridgeError::NoInvariant,
            BridgeError::NoSafe,
            BridgeError::InvariantShape("strict".into()),
            BridgeError::Unsupported("not piecewise linear".into()),
            BridgeError::Certificate("unknown field".into()),
            BridgeError::Check(trestle_smt::CheckError::NoSafe),
        ] {
            let text = input.to_string();
            assert!(!DriverError::from(input).is_internal(), "{text}");
        }
    }
}
