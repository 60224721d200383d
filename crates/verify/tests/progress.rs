//! Issue 34.9: the runs that showed nothing on a terminal report their progress. `ltl` tells its
//! stages through the engine's `StageReport` (the CLI forwards them to its bar, the driver's
//! `Progress`), and `check --method monolithic` says what it runs through `Progress`.

use std::sync::{Arc, Mutex};
use trestle_core::Budget;
use trestle_testkit::{load, repo};
use trestle_verify::options::{Limits, LtlRequest, Spelling};
use trestle_verify::temporal::Named;
use trestle_verify::{CheckMethod, CheckOptions, Progress, Silent};

/// Every stage and message a run reported, in order.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Progress for Recorder {
    fn stage(&self, name: &str) {
        self.0.lock().unwrap().push(format!("stage {name}"));
    }
    fn update(&self, _fraction: Option<f64>, message: &str) {
        self.0.lock().unwrap().push(message.to_string());
    }
}

#[test]
fn ltl_reports_each_stage_it_runs() {
    let sys = load(&repo().join("configs/systems/pi-tuned.toml"), &[]);
    let scope = trestle_verify::temporal::formula_scope(&sys, None).unwrap();
    let text = "G<=5 (x <= 0.5 and x >= -0.5)";
    let phi = trestle_ir::parse::parse_ltl(text, &scope).unwrap();
    let request =
        LtlRequest { method: "auto".into(), bpt: "interval".into(), depth: 10, adaptive: true, tighten: "race".into() };
    let mut opts = request.options(&Limits::default(), Spelling::Cli).unwrap();
    let stages = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = stages.clone();
    opts.progress = Some(trestle_ltl::StageReport(Arc::new(move |s: &str| seen.lock().unwrap().push(s.into()))));
    let named = Named { name: "formula".into(), text: text.into() };
    let run = trestle_verify::temporal::ltl(&sys, &phi, &named, &opts, 1, &Budget::unlimited(), &Silent).unwrap();
    let stages = stages.lock().unwrap();
    assert!(
        stages.iter().any(|s| s.starts_with("bound propagation (intervals), Init box 1 of")),
        "{stages:?} ({:?})",
        run.result
    );
}

#[test]
fn the_monolithic_check_says_what_it_runs() {
    let sys = load(&repo().join("examples/maze-det.toml"), &[]);
    let opts = CheckOptions {
        method: CheckMethod::Monolithic,
        bridge: trestle_bridge::Config::default(),
        synthesize_on_failure: false,
        flow: Default::default(),
    };
    let recorder = Recorder::default();
    trestle_verify::check(&sys, &opts, &Budget::unlimited(), &recorder).unwrap();
    let seen = recorder.0.lock().unwrap();
    assert_eq!(
        seen[..2],
        ["stage proof".to_string(), "the whole network in Z3, one query per condition".to_string()],
        "{seen:?}"
    );
}
