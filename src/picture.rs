//! The picture flags of `check`, `synth` and `ltl` (`--plot`, `--plot-vars`, `--plot-size`), and
//! the flags `check` and `synth` share for their proof and its files; the pictures and the
//! certificates themselves are the driver's (`trestle_verify::picture`, `certificate_file`).

use std::path::{Path, PathBuf};
use trestle_core::RunResult;
use trestle_ir::system::System;
use trestle_verify::DriverError;
use trestle_verify::picture::View;

/// The picture flags.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// Draw the state space (.svg or .png): the boxes by outcome, Init, Safe, the counterexample
    /// and a few runs from Init.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// The two state variables to draw, as x,y (default: the first two).
    #[arg(long, value_name = "X,Y", requires = "plot")]
    pub plot_vars: Option<String>,
    /// The image size in pixels, as WIDTHxHEIGHT (default 800x600).
    #[arg(long, value_name = "WxH", requires = "plot")]
    pub plot_size: Option<String>,
}

impl PlotArgs {
    /// Where to draw, and how, once the system is known (bad flags are input errors before any
    /// work is done); `over_time` allows one variable, drawn against the step.
    pub fn target(&self, sys: &System, over_time: bool) -> Result<Option<(&Path, View)>, DriverError> {
        let Some(path) = &self.plot else { return Ok(None) };
        Ok(Some((path, View::parse(sys, self.plot_vars.as_deref(), self.plot_size.as_deref(), over_time)?)))
    }
}

/// The flags of `check` and `synth` for their proof: the solver's per-query limit, the
/// certificate and the picture.
#[derive(clap::Args, Debug)]
pub struct ProofArgs {
    /// Per-query Z3 time limit of the proof, in seconds.
    #[arg(long)]
    pub smt_timeout: Option<f64>,
    /// Write the certificate as JSON: the proof (re-check it with `trestle certify`), or the
    /// refutation (its witness) or other outcome.
    #[arg(long, value_name = "FILE")]
    pub certificate: Option<PathBuf>,
    #[command(flatten)]
    pub plot: PlotArgs,
}

impl ProofArgs {
    /// Refuses output paths the atomic writer would refuse, before the run.
    pub fn check_outputs(&self) -> Result<(), crate::CliError> {
        crate::output::check_output("--certificate", self.certificate.as_deref())?;
        crate::output::check_output("--plot", self.plot.plot.as_deref())
    }

    /// Writes the run's certificate and picture where asked; `result` with their paths among its
    /// artifacts.
    pub fn write(
        &self,
        mut result: RunResult,
        certificate: impl FnOnce() -> serde_json::Value,
        picture: Option<(&Path, View)>,
        draw: impl FnOnce(&Path, &View) -> Result<(), DriverError>,
    ) -> Result<RunResult, crate::CliError> {
        if let Some(path) = &self.certificate {
            trestle_verify::write_json(path, &certificate()).map_err(crate::output::driver_error)?;
            result.artifacts.insert("certificate".into(), path.display().to_string().into());
        }
        if let Some((path, view)) = picture {
            draw(path, &view).map_err(crate::output::driver_error)?;
            result.artifacts.insert("plot".into(), path.display().to_string().into());
        }
        Ok(result)
    }
}
