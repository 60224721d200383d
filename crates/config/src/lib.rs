//! Trestle system files: TOML in, a validated [`trestle_ir::System`] out.
//!
//! The file is read into a TOML table, `--set KEY=VALUE` overrides are applied to that table (so
//! one file serves a family of runs), serde checks its shape (unknown keys are errors, with the key
//! path), and `resolve` interprets names and expressions, loading model files on the way. Every
//! error names the file, the key and the problem.
//!
//! Paths in a file are relative to that file; paths given with `--set` are relative to the working
//! directory, like any other command-line path.
//!
//! Numbers are exact: a TOML float is read from its literal's text, digit for digit (`0.1` means
//! 1/10, `1.00000000000000000001` is not 1, `1e-400` is not 0; see `document.rs`); strings such as
//! `"1/3"` give any other rational (`"1e400"` too, beyond the f64 range TOML floats are limited
//! to). `inf` and `nan` are errors. Inline network weights are f64 by definition: each literal is
//! read as the nearest f64, as a framework would.

#![deny(missing_docs)]

mod document;
mod error;
mod overrides;
mod raw;
mod resolve;

pub use error::ConfigError;
pub use overrides::{Overrides, canonical_key};

use std::path::Path;
use trestle_ir::plant::SampledPlant;
use trestle_ir::system::{DomainExit, System};

/// Reads, overrides, checks and resolves a system file.
/// Only a regular file of at most [`atomic_output::input::SYSTEM_FILE`]'s size is read: a FIFO or
/// `/dev/zero` given as the system file is refused at once.
///
/// A continuous-time system (`[flow]`) is refused here: its step is not the environment step the
/// engines read. [`load_sampled_system`] reads it (for `simulate`, `check`, `synth`, `certify` and `ltl`,
/// the commands that take the plant's flow as the step).
pub fn load_system(path: &Path, overrides: &Overrides) -> Result<System, ConfigError> {
    let text = read(path)?;
    load_system_from_str(&text, path, overrides)
}

/// Like [`load_system`] with the file's text given (`path` locates relative model paths).
pub fn load_system_from_str(text: &str, path: &Path, overrides: &Overrides) -> Result<System, ConfigError> {
    match load_parts(text, path, overrides)? {
        (sys, None) => Ok(sys),
        (_, Some(_)) => Err(ConfigError::new(
            path,
            Some("flow".into()),
            "a continuous-time system ([flow]): only `trestle simulate`, `check`, `synth`, `certify` and `ltl` (`G<=k p` by --method bpt) read these so far",
        )),
    }
}

/// Reads a system that may be continuous-time: the system and, with `[flow]`, its plant (see
/// [`trestle_ir::plant`]). The system's step is then the identity (the plant's flow replaces
/// it), so it must not be handed to an engine as it is.
pub fn load_sampled_system(path: &Path, overrides: &Overrides) -> Result<(System, Option<SampledPlant>), ConfigError> {
    let text = read(path)?;
    load_parts(&text, path, overrides)
}

fn read(path: &Path) -> Result<String, ConfigError> {
    atomic_output::input::read_text(path, atomic_output::input::SYSTEM_FILE)
        .map_err(|e| ConfigError::new(path, None, format!("cannot read the system file: {e}")))
}

fn load_parts(text: &str, path: &Path, overrides: &Overrides) -> Result<(System, Option<SampledPlant>), ConfigError> {
    let mut doc = document::parse_table(text, path).map_err(|e| ConfigError::new(path, None, e))?;
    overrides.apply(&mut doc).map_err(|e| ConfigError::new(path, None, e))?;
    let raw: raw::RawFile = serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
        let key = e.path().to_string();
        // The message alone: the key is ours (toml's Display would repeat it as "in `key`").
        ConfigError::new(path, (key != ".").then_some(key), e.into_inner().message())
    })?;
    let keys = overrides.keys();
    let mut r = resolve::Resolver::new(path, &keys);
    r.constants(&raw.constants)?;
    r.state(&raw.state)?;
    r.nondet(&raw.nondet)?;
    r.networks(&raw.networks)?;
    let controllers = r.controllers(raw.controller.as_ref(), &raw.controllers)?;
    r.lets(&raw.lets, "let")?;
    let (plant, step) = match r.plant(&raw)? {
        Some((plant, step)) => (Some(plant), step),
        None => (None, r.step(&raw)?),
    };
    let init = match &raw.init {
        Some(i) => r.region("init", i)?,
        None => return Err(ConfigError::new(path, Some("init".into()), "the system needs an initial region `init`")),
    };
    let safe = raw.safe.as_ref().map(|s| r.region("safe", s)).transpose()?;
    let invariant = raw.invariant.as_ref().map(|s| r.region("invariant", s)).transpose()?;
    let properties = r.properties(&raw.property)?;
    let domain_exit = match raw.system.on_domain_exit.as_deref() {
        None | Some("error") => DomainExit::Error,
        Some("drop") => DomainExit::Drop,
        Some("ignore") => DomainExit::Ignore,
        Some(other) => {
            return Err(ConfigError::new(
                path,
                Some("system.on_domain_exit".into()),
                format!("unknown value '{other}' (error, drop or ignore)"),
            ));
        }
    };
    let name = raw.system.name.clone().unwrap_or_else(|| {
        path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "system".into())
    });
    let meta = (name, raw.system.description.clone(), domain_exit);
    let sys = r.finish(meta, controllers, step, (init, safe, invariant), properties);
    sys.validate().map_err(|e| ConfigError::new(path, Some(e.location), e.message))?;
    Ok((sys, plant))
}
