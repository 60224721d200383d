//! Keyword arguments into the driver's and the engines' own option types: `ctl`, `ltl`, `cegar`
//! and `synth` fill the driver's requests (`trestle_verify::options`, which the CLI fills from its
//! flags); `check`'s bridge tuning is read here with the driver's checks. A keyword is a flag's
//! name with `_` for `-` (`no_fast_path=True` is `--no-fast-path`), a string value is the flag's
//! value name.

use crate::errors::driver_error;
use pyo3::PyResult;
use std::time::Duration;
use trestle_bridge::config::{Queue, Split};
use trestle_verify::options as driver;

/// A string value among `names`, as `flag`.
pub fn pick<T: Copy>(flag: &str, value: &str, names: &[(&str, T)]) -> PyResult<T> {
    driver::pick(flag, value, names).map_err(driver_error)
}

/// Seconds as a duration (non-negative and finite).
pub fn seconds(v: f64, flag: &str) -> PyResult<Duration> {
    driver::seconds(v, flag).map_err(driver_error)
}

/// An optional limit in seconds.
pub fn limit(v: Option<f64>, flag: &str) -> PyResult<Option<Duration>> {
    v.map(|t| seconds(t, flag)).transpose()
}

/// A worker count: 1 to the driver's `MAX_THREADS`; all cores when not given.
pub fn threads(t: Option<usize>, flag: &str) -> PyResult<usize> {
    t.map_or_else(|| Ok(driver::cores()), |t| driver::threads(t, flag).map_err(driver_error))
}

/// A fraction of an extent in (0, 1).
pub fn width(w: f64, flag: &str) -> PyResult<f64> {
    driver::width(w, flag).map_err(driver_error)
}

pub fn bound_method(name: &str) -> PyResult<trestle_bounds::Method> {
    Ok(match pick("post", name, &[("crown", 0), ("alpha-crown", 1), ("ibp", 2), ("forward", 3)])? {
        0 => trestle_bounds::Method::Crown,
        1 => trestle_bounds::Method::AlphaCrown(Default::default()),
        2 => trestle_bounds::Method::Ibp,
        _ => trestle_bounds::Method::Forward,
    })
}

pub fn split(name: &str) -> PyResult<Split> {
    pick("split", name, &[("influence", Split::Influence), ("widest", Split::Widest), ("all", Split::All)])
}

pub fn queue(name: &str) -> PyResult<Queue> {
    pick("queue", name, &[("fifo", Queue::Fifo), ("dfs", Queue::Dfs), ("priority", Queue::Priority)])
}
