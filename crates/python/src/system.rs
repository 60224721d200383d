//! `trestle._native.NativeSystem`: a loaded system and the questions asked of it. Each question
//! builds the driver's options from its keyword arguments ([`crate::options`]), runs the driver
//! on a thread of its own ([`crate::run`]) and answers with the result's `trestle-result/1` JSON,
//! its text (`trestle_verify::render`) and, where the run has one, its certificate file's JSON.
//! The Python layer (`python/trestle`) turns these into objects.

use crate::errors::{driver_error, input};
use crate::run::interruptible;
use pyo3::prelude::*;
use serde_json::json;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use trestle_config::Overrides;
use trestle_core::{Budget, RunResult, Status, Unknown};
use trestle_ir::System;
use trestle_verify::formula::{Asked, Logic};
use trestle_verify::options::{
    CegarRequest, CheckRequest, CtlRequest, Limits, LtlRequest, Spelling, SynthRequest, VerifyRequest,
};
use trestle_verify::picture::View;
use trestle_verify::temporal::Named;
use trestle_verify::{DriverError, Silent};

/// Where a system was read from, to read it again with other overrides (a property's horizon).
#[derive(Clone, Debug)]
enum Source {
    File(PathBuf),
    /// The text, and the path model files are found relative to (and errors name).
    Text(String, PathBuf),
}

/// A result: its JSON, its text, its certificate file's JSON.
type Answer = (String, String, Option<String>);

fn answer(r: &RunResult, certificate: Option<serde_json::Value>) -> Answer {
    (
        serde_json::to_string(r).expect("results serialise"),
        trestle_verify::render::text(r),
        certificate.map(|c| c.to_string()),
    )
}

/// The answer of a run the backstop left behind ([`crate::run`]): unknown for the time limit,
/// with `note`, as the CLI's backstop prints it.
fn timed_out(command: &'static str, system: &str) -> impl FnOnce(&str) -> Answer + use<> {
    let system = system.to_string();
    move |note| {
        let mut r = RunResult::new(command, &system, "none", "unknown", Status::Unknown);
        r.set_unknown(&Unknown::Timeout);
        r.details.insert("note".into(), note.into());
        answer(&r, None)
    }
}

/// Where to draw a run's picture (`plot=`, `plot_vars=`, `plot_size=`, as the CLI's `--plot`
/// flags), checked before any work is done: an unwritable path or unknown variables are input
/// errors.
fn picture_target(
    sys: &System,
    plot: Option<PathBuf>,
    vars: Option<&str>,
    size: Option<&str>,
) -> PyResult<Option<(PathBuf, View)>> {
    let Some(path) = plot else { return Ok(None) };
    atomic_output::check_target(&path).map_err(|e| input(format!("plot {}: {e}", path.display())))?;
    Ok(Some((path, View::parse(sys, vars, size, false).map_err(driver_error)?)))
}

/// `r` with the picture's path among its artifacts, once drawn.
fn with_plot(mut r: RunResult, drawn: Option<&PathBuf>) -> RunResult {
    if let Some(path) = drawn {
        r.artifacts.insert("plot".into(), path.display().to_string().into());
    }
    r
}

/// A system read from a file (or a text) with `set` overrides.
#[pyclass(frozen, module = "trestle._native")]
pub struct NativeSystem {
    /// Shared with the runs, which own what they read (see [`crate::run`]).
    sys: Arc<System>,
    source: Source,
    set: Vec<String>,
}

fn read(source: &Source, set: &[String]) -> Result<System, DriverError> {
    let overrides = Overrides::parse(set).map_err(DriverError::input)?;
    match source {
        Source::File(path) => trestle_config::load_system(path, &overrides),
        Source::Text(text, path) => trestle_config::load_system_from_str(text, path, &overrides),
    }
    .map_err(DriverError::input)
}

impl NativeSystem {
    fn open(py: Python<'_>, source: Source, set: Vec<String>) -> PyResult<NativeSystem> {
        let sys = py.detach(|| read(&source, &set)).map_err(driver_error)?;
        Ok(NativeSystem { sys: Arc::new(sys), source, set })
    }

    /// The file's name in messages, as the CLI names it.
    fn file(&self) -> String {
        match &self.source {
            Source::File(p) | Source::Text(_, p) => p.display().to_string(),
        }
    }

    /// The temporal formula asked: `formula` read in the system's scope, or the property `name`
    /// (read again with horizon `k` when given), as `trestle ctl|ltl --formula|--property`
    /// (`trestle_verify::formula::asked`).
    fn temporal<F: Logic + Send>(
        &self,
        py: Python<'_>,
        formula: Option<&str>,
        property: Option<&str>,
        k: Option<u32>,
    ) -> PyResult<(System, F, Named)> {
        let reload = |horizon: String| {
            let mut set = self.set.clone();
            set.push(horizon);
            read(&self.source, &set)
        };
        let asked = Asked { formula, property, k };
        py.detach(|| trestle_verify::formula::asked(&self.sys, &self.file(), asked, reload, Spelling::Python))
            .map_err(driver_error)
    }
}

#[pymethods]
impl NativeSystem {
    /// Reads a system file (paths in it relative to it) with `KEY=VALUE` overrides.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf, set: Vec<String>) -> PyResult<NativeSystem> {
        NativeSystem::open(py, Source::File(path), set)
    }

    /// Reads a system from its TOML text; model paths are relative to `base_dir`.
    #[staticmethod]
    fn from_toml(py: Python<'_>, text: String, base_dir: PathBuf, set: Vec<String>) -> PyResult<NativeSystem> {
        NativeSystem::open(py, Source::Text(text, base_dir.join("<from_toml>")), set)
    }

    #[getter]
    fn name(&self) -> String {
        self.sys.name.clone()
    }

    /// The lint warnings of the system (the CLI prints them on stderr).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        trestle_ir::lint::warnings(&self.sys)
    }

    /// What the file was read as (`trestle info --json`).
    fn info(&self) -> String {
        trestle_verify::describe::describe(&self.sys).to_string()
    }

    /// What the file was read as, as text (`trestle info`).
    fn info_text(&self) -> String {
        trestle_verify::describe::text(&self.sys)
    }

    #[pyo3(signature = (*, method="bridge", paper=false, post=None, linear_bridge=false, no_linear_bridge=false,
        split=None, queue=None, threads=None, max_splits=None, timeout=None, smt_timeout=None, min_width=None,
        no_fast_path=false, no_search=false, exact_after=None, no_exact_leaf=false, dump_smt=None,
        synthesize_on_failure=false, plot=None, plot_vars=None, plot_size=None))]
    #[allow(clippy::too_many_arguments)]
    fn check(
        &self,
        py: Python<'_>,
        method: &str,
        paper: bool,
        post: Option<&str>,
        linear_bridge: bool,
        no_linear_bridge: bool,
        split: Option<&str>,
        queue: Option<&str>,
        threads: Option<usize>,
        max_splits: Option<usize>,
        timeout: Option<f64>,
        smt_timeout: Option<f64>,
        min_width: Option<f64>,
        no_fast_path: bool,
        no_search: bool,
        exact_after: Option<usize>,
        no_exact_leaf: bool,
        dump_smt: Option<PathBuf>,
        synthesize_on_failure: bool,
        plot: Option<PathBuf>,
        plot_vars: Option<&str>,
        plot_size: Option<&str>,
    ) -> PyResult<Answer> {
        let limits = Limits { timeout, threads, threads_flag: "threads" };
        let budget = limits.budget(Spelling::Python).map_err(driver_error)?;
        let request = CheckRequest {
            method: method.into(),
            paper,
            post: post.map(Into::into),
            linear_bridge,
            no_linear_bridge,
            split: split.map(Into::into),
            queue: queue.map(Into::into),
            max_splits,
            smt_timeout,
            min_width,
            no_fast_path,
            no_search,
            exact_after,
            no_exact_leaf,
            dump_smt,
            synthesize_on_failure,
            ..CheckRequest::default()
        };
        let opts = request.options(&limits, Spelling::Python).map_err(driver_error)?;
        let sys = Arc::clone(&self.sys);
        let picture = picture_target(&sys, plot, plot_vars, plot_size)?;
        interruptible(py, &budget, timed_out("check", &sys.name), move |budget| {
            let run = trestle_verify::check(&sys, &opts, budget, &Silent)?;
            if let Some((path, view)) = &picture {
                trestle_verify::picture::draw_check(&sys, &run, view, path)?;
            }
            let result = with_plot(run.result.clone(), picture.as_ref().map(|p| &p.0));
            Ok(answer(&result, Some(run.certificate_file(&sys))))
        })
    }

    #[pyo3(signature = (*, resolution=None, max_boxes=None, min_width=None, timeout=None, forward=false,
        full=false, threads=None, attack_steps=None, smt_timeout=None, plot=None, plot_vars=None, plot_size=None))]
    #[allow(clippy::too_many_arguments)]
    fn synth(
        &self,
        py: Python<'_>,
        resolution: Option<usize>,
        max_boxes: Option<usize>,
        min_width: Option<f64>,
        timeout: Option<f64>,
        forward: bool,
        full: bool,
        threads: Option<usize>,
        attack_steps: Option<usize>,
        smt_timeout: Option<f64>,
        plot: Option<PathBuf>,
        plot_vars: Option<&str>,
        plot_size: Option<&str>,
    ) -> PyResult<Answer> {
        let limits = Limits { timeout, threads, threads_flag: "threads" };
        let budget = limits.budget(Spelling::Python).map_err(driver_error)?;
        let request = SynthRequest {
            resolution,
            max_boxes,
            min_width,
            forward,
            full,
            attack_steps,
            smt_timeout,
            ..SynthRequest::default()
        };
        let c = request.config(&limits, Spelling::Python).map_err(driver_error)?;
        let sys = Arc::clone(&self.sys);
        let picture = picture_target(&sys, plot, plot_vars, plot_size)?;
        interruptible(py, &budget, timed_out("synth", &sys.name), move |budget| {
            let run = trestle_verify::synthesize(&sys, &c, budget, &Silent)?;
            if let Some((path, view)) = &picture {
                trestle_verify::picture::draw_synth(&sys, &run, view, path)?;
            }
            let result = with_plot(run.result.clone(), picture.as_ref().map(|p| &p.0));
            Ok(answer(&result, Some(run.certificate_file(&sys))))
        })
    }

    /// Every property (or the named ones): the system's name and one result per property (JSON,
    /// text), the table of them all, and the internal errors met.
    #[pyo3(signature = (*, properties=Vec::new(), timeout=None, property_timeout=None, threads=None))]
    fn verify(
        &self,
        py: Python<'_>,
        properties: Vec<String>,
        timeout: Option<f64>,
        property_timeout: Option<f64>,
        threads: Option<usize>,
    ) -> PyResult<(Vec<Answer>, String, Vec<String>)> {
        let limits = Limits { timeout, threads, threads_flag: "threads" };
        let budget = limits.budget(Spelling::Python).map_err(driver_error)?;
        let request = VerifyRequest { properties, property_timeout };
        let opts = request.options(&limits, Spelling::Python).map_err(driver_error)?;
        let sys = Arc::clone(&self.sys);
        // The rows so far, for a run the backstop leaves behind: every property unknown for the
        // time limit until decided (as the CLI's backstop prints them).
        let asked = trestle_verify::properties::asked(&sys, &opts.properties).map_err(driver_error)?;
        let rows: Vec<RunResult> =
            asked.iter().map(|p| trestle_verify::properties::undecided(&sys.name, p, &Unknown::Timeout)).collect();
        let recorder = Recorder(Arc::new(Mutex::new(rows)));
        let so_far = Arc::clone(&recorder.0);
        let name = sys.name.clone();
        let stuck = move |note: &str| {
            let mut rows = so_far.lock().unwrap_or_else(|p| p.into_inner()).clone();
            for r in rows.iter_mut().filter(|r| r.method == "none" && r.reason_kind.as_deref() == Some("time-limit")) {
                r.details.insert("note".into(), note.into());
            }
            let table = trestle_verify::render::verification(&name, &rows);
            (rows.iter().map(|r| answer(r, None)).collect(), table, Vec::new())
        };
        interruptible(py, &budget, stuck, move |budget| {
            let v = trestle_verify::properties::verify(&sys, &opts, budget, &recorder)?;
            let table = trestle_verify::render::verification(&v.system, &v.results);
            Ok((v.results.iter().map(|r| answer(r, None)).collect(), table, v.internal_errors))
        })
    }

    #[pyo3(signature = (formula=None, *, property=None, k=None, method="auto", jobs=None, timeout=None, pieces=None))]
    #[allow(clippy::too_many_arguments)]
    fn ctl(
        &self,
        py: Python<'_>,
        formula: Option<&str>,
        property: Option<&str>,
        k: Option<u32>,
        method: &str,
        jobs: Option<usize>,
        timeout: Option<f64>,
        pieces: Option<usize>,
    ) -> PyResult<Answer> {
        let limits = Limits { timeout, threads: jobs, threads_flag: "jobs" };
        let budget = limits.budget(Spelling::Python).map_err(driver_error)?;
        let (sys, phi, named) = self.temporal::<trestle_ir::formula::Ctl>(py, formula, property, k)?;
        let request = CtlRequest { method: method.into(), pieces };
        let opts = request.options(&limits, Spelling::Python).map_err(driver_error)?;
        interruptible(py, &budget, timed_out("ctl", &sys.name), move |budget| {
            let run = trestle_verify::temporal::ctl(&sys, &phi, &named, &opts, budget, &Silent)?;
            Ok(answer(&run.result, None))
        })
    }

    #[pyo3(signature = (formula=None, *, property=None, k=None, method="auto", bpt="interval", depth=10,
        timeout=None, no_adaptive=false, tighten="race", threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn ltl(
        &self,
        py: Python<'_>,
        formula: Option<&str>,
        property: Option<&str>,
        k: Option<u32>,
        method: &str,
        bpt: &str,
        depth: usize,
        timeout: Option<f64>,
        no_adaptive: bool,
        tighten: &str,
        threads: Option<usize>,
    ) -> PyResult<Answer> {
        let limits = Limits { timeout, threads, threads_flag: "threads" };
        let request = LtlRequest {
            method: method.into(),
            bpt: bpt.into(),
            depth,
            adaptive: !no_adaptive,
            tighten: tighten.into(),
        };
        let opts = request.options(&limits, Spelling::Python).map_err(driver_error)?;
        let budget = limits.budget(Spelling::Python).map_err(driver_error)?;
        let (sys, phi, named) = self.temporal::<trestle_ir::formula::Ltl>(py, formula, property, k)?;
        let threads = limits.threads_or_cores(Spelling::Python).map_err(driver_error)?;
        interruptible(py, &budget, timed_out("ltl", &sys.name), move |budget| {
            let run = trestle_verify::temporal::ltl(&sys, &phi, &named, &opts, threads, budget, &Silent)?;
            Ok(answer(&run.result, run.certificate))
        })
    }

    #[pyo3(signature = (*, method="cegar", refine="ws", no_heuristic=false, no_incremental=false,
        encoding="lazy", depth=100, timeout=None))]
    #[allow(clippy::too_many_arguments)]
    fn cegar(
        &self,
        py: Python<'_>,
        method: &str,
        refine: &str,
        no_heuristic: bool,
        no_incremental: bool,
        encoding: &str,
        depth: usize,
        timeout: Option<f64>,
    ) -> PyResult<Answer> {
        let budget = Limits { timeout, ..Limits::default() }.budget(Spelling::Python).map_err(driver_error)?;
        let request = CegarRequest {
            method: method.into(),
            refine: refine.into(),
            heuristic: !no_heuristic,
            incremental: !no_incremental,
            encoding: encoding.into(),
            depth,
        };
        let method = request.method(Spelling::Python).map_err(driver_error)?;
        let sys = Arc::clone(&self.sys);
        interruptible(py, &budget, timed_out("cegar", &sys.name), move |budget| {
            let run = trestle_verify::cegar::cegar(&sys, &method, budget)?;
            Ok(answer(&run.result, None))
        })
    }

    /// Concrete runs (`trestle simulate --json`). Values are exact decimals or `p/q`.
    #[pyo3(signature = (*, steps=20, runs=1, seed=0, start=Vec::new(), nondet=Vec::new(), branch=None, float=false))]
    #[allow(clippy::too_many_arguments)]
    fn simulate(
        &self,
        py: Python<'_>,
        steps: usize,
        runs: usize,
        seed: u64,
        start: Vec<(String, String)>,
        nondet: Vec<(String, Vec<String>)>,
        branch: Option<Vec<String>>,
        float: bool,
    ) -> PyResult<String> {
        let exact = |text: &str, what: &str| trestle_verify::simulate::exact(text, what).map_err(driver_error);
        let opts = trestle_verify::simulate::SimulateOptions {
            steps,
            runs,
            seed,
            from: start.iter().map(|(k, v)| Ok((k.clone(), exact(v, "start")?))).collect::<PyResult<_>>()?,
            nondet: nondet
                .iter()
                .map(|(k, vs)| Ok((k.clone(), vs.iter().map(|v| exact(v, "nondet")).collect::<PyResult<_>>()?)))
                .collect::<PyResult<_>>()?,
            branches: branch,
            float,
            // The package loads discrete-time systems only (`load_system` refuses `[flow]`).
            plant: None,
            budget: Budget::unlimited(),
        };
        let sys = Arc::clone(&self.sys);
        let budget = opts.budget.clone();
        // No time limit here (the package has no `timeout=` for simulate), so never stuck past one.
        interruptible(
            py,
            &budget,
            |_| String::new(),
            move |_| {
                let runs = trestle_verify::simulate::simulate(&sys, &opts)?;
                Ok(trestle_verify::simulate::to_json(&sys, &opts, &runs).to_string())
            },
        )
    }

    /// Re-checks a certificate (its JSON text; `label` names it in messages, as the CLI names the
    /// file): the re-check's JSON.
    #[pyo3(signature = (certificate, label=None))]
    fn certify(&self, py: Python<'_>, certificate: String, label: Option<String>) -> PyResult<String> {
        let sys = Arc::clone(&self.sys);
        let label = label.map(|l| format!("{l}: ")).unwrap_or_default();
        // No time limit: never stuck past one.
        interruptible(
            py,
            &Budget::unlimited(),
            |_| String::new(),
            move |_| {
                let certified = trestle_verify::certify::certify_text(&certificate, &sys).map_err(|e| match e {
                    trestle_verify::DriverError::Input(m) => trestle_verify::DriverError::Input(format!("{label}{m}")),
                    internal => internal,
                })?;
                Ok(certified.to_json().to_string())
            },
        )
    }
}

/// Writes a JSON document atomically (a certificate's `.save(path)`), as the CLI writes it.
#[pyfunction]
pub fn write_json(path: PathBuf, text: &str) -> PyResult<()> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| input(format!("not JSON: {e}")))?;
    trestle_verify::write_json(&path, &doc).map_err(crate::errors::driver_error)
}

/// The package's version and the result format it writes.
#[pyfunction]
pub fn versions() -> String {
    json!({ "version": env!("CARGO_PKG_VERSION"), "result_format": trestle_core::RESULT_FORMAT }).to_string()
}

/// `verify`'s progress, recording each property's row as it is decided (for the backstop's answer).
struct Recorder(Arc<Mutex<Vec<RunResult>>>);

impl trestle_verify::Progress for Recorder {
    fn decided(&self, result: &RunResult) {
        let mut rows = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(row) = rows.iter_mut().find(|r| r.property == result.property) {
            *row = result.clone();
        }
    }
}
