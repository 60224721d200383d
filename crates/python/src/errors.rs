//! The package's exceptions: `trestle.InputError` for what the user can fix (the CLI's exit 2,
//! with the CLI's message) and `trestle.InternalError` for trestle's bugs (exit 4), both
//! `trestle.Error`s.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use trestle_verify::DriverError;

create_exception!(trestle, Error, PyException, "An error of trestle: its input's or its own.");
create_exception!(
    trestle,
    InputError,
    Error,
    "The system, a property, an option or a file is wrong (the CLI's exit code 2)."
);
create_exception!(
    trestle,
    InternalError,
    Error,
    "A bug of trestle (the CLI's exit code 4): never a verdict. Please report it."
);

pub fn input(msg: impl std::fmt::Display) -> PyErr {
    InputError::new_err(msg.to_string())
}

/// A driver error with the CLI's message.
pub fn driver_error(e: DriverError) -> PyErr {
    match e {
        DriverError::Input(m) => InputError::new_err(m),
        DriverError::Internal(m) => InternalError::new_err(m),
    }
}
