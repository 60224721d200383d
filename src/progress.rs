//! The driver's progress on a terminal: a spinner (or a percentage when the stage knows its
//! fraction) on stderr, nothing under `--json` or `--quiet` or when stderr is not a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

pub struct Bar {
    bar: Option<ProgressBar>,
    stage: Mutex<String>,
}

impl Bar {
    /// A spinner on stderr, unless `silent` or stderr is not a terminal.
    pub fn new(silent: bool) -> Bar {
        let bar = (!silent && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            b.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("valid template"));
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Bar { bar, stage: Mutex::new(String::new()) }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl trestle_verify::Progress for Bar {
    fn stage(&self, name: &str) {
        if let Ok(mut s) = self.stage.lock() {
            *s = name.to_string();
        }
        if let Some(b) = &self.bar {
            b.set_message(name.to_string());
        }
    }

    fn decided(&self, result: &trestle_core::RunResult) {
        trestle_verify::process::decided(result);
    }

    fn update(&self, fraction: Option<f64>, message: &str) {
        let Some(b) = &self.bar else { return };
        let stage = self.stage.lock().map(|s| s.clone()).unwrap_or_default();
        let percent = fraction.map(|f| format!(" {:.0}%", (f * 100.0).clamp(0.0, 100.0))).unwrap_or_default();
        b.set_message(format!("{stage}{percent}: {message}"));
    }
}
