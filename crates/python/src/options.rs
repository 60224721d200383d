//! Keyword arguments into the driver's and the engines' own option types, with the values and
//! the checks of the CLI's flags (`src/commands/*.rs`): a keyword is a flag's name with `_` for
//! `-` (`no_fast_path=True` is `--no-fast-path`), a string value is the flag's value name.

use crate::errors::input;
use pyo3::PyResult;
use std::time::Duration;
use trestle_bridge::config::{Queue, Split};

/// Most worker threads a run may ask for (the CLI's `MAX_THREADS`: a typo is an error, not
/// minutes spent starting threads).
const MAX_THREADS: usize = 1024;

/// A string value among `names`, as `which`.
pub fn pick<T: Copy>(flag: &str, value: &str, names: &[(&str, T)]) -> PyResult<T> {
    names.iter().find(|(n, _)| *n == value).map(|(_, v)| *v).ok_or_else(|| {
        let all: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
        input(format!("{flag}='{value}': expected one of {}", all.join(", ")))
    })
}

/// Seconds as a duration (non-negative and finite).
pub fn seconds(v: f64, flag: &str) -> PyResult<Duration> {
    Duration::try_from_secs_f64(v).map_err(|_| input(format!("{flag} must be a non-negative number of seconds")))
}

/// An optional limit in seconds.
pub fn limit(v: Option<f64>, flag: &str) -> PyResult<Option<Duration>> {
    v.map(|t| seconds(t, flag)).transpose()
}

/// A worker count: 1 to [`MAX_THREADS`]; all cores when not given.
pub fn threads(t: Option<usize>, flag: &str) -> PyResult<usize> {
    match t {
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        Some(0) => Err(input(format!("{flag} must be at least 1"))),
        Some(t) if t > MAX_THREADS => Err(input(format!("{flag}={t} is too many: at most {MAX_THREADS}"))),
        Some(t) => Ok(t),
    }
}

/// A fraction of an extent in (0, 1).
pub fn width(w: f64, flag: &str) -> PyResult<f64> {
    if w > 0.0 && w < 1.0 { Ok(w) } else { Err(input(format!("{flag} must be in (0, 1)"))) }
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
