//! The picture flags of `check`, `synth` and `ltl` (`--plot`, `--plot-vars`, `--plot-size`); the
//! pictures themselves are the driver's (`trestle_verify::picture`).

use std::path::{Path, PathBuf};
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
