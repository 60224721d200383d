//! `trestle._native`: the Python package's extension module, over the driver (`trestle-verify`)
//! and the config crate, never over the CLI's text.
//!
//! - [`system::NativeSystem`]: a system loaded from a file or a TOML text with overrides; one
//!   method per question (`check`, `synth`, `verify`, `ctl`, `ltl`, `cegar`, `simulate`,
//!   `certify`), keyword arguments mirroring the CLI's flags, turned into options by
//!   `trestle_verify::options` as the CLI's are;
//! - runs on a thread of their own with the GIL released, Ctrl-C cancelling the run's budget
//!   ([`run`]);
//! - answers as `trestle-result/1` JSON text, the result's rendering and the certificate's JSON,
//!   which `python/trestle` wraps in objects (exact values become `fractions.Fraction`);
//! - errors as `trestle.InputError` (the CLI's message, exit 2) and `trestle.InternalError`
//!   (exit 4) ([`errors`]).

mod errors;
mod run;
mod system;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<system::NativeSystem>()?;
    m.add_function(wrap_pyfunction!(system::write_json, m)?)?;
    m.add_function(wrap_pyfunction!(system::versions, m)?)?;
    m.add("Error", py.get_type::<errors::Error>())?;
    m.add("InputError", py.get_type::<errors::InputError>())?;
    m.add("InternalError", py.get_type::<errors::InternalError>())?;
    Ok(())
}
