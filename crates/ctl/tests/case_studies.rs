//! The paper's case studies on the real third-party networks (../shared/models; skipped when
//! absent, a failure under CI=true): FrozenLake (the MILP engines agree with the explicit engine on
//! every cell, safe TRUE and succ FALSE for k = 1..10) and VerticalCAS (the notes' known answers).

mod common;

use common::decided;
use std::cell::Cell;
use trestle_core::Trace;
use trestle_core::{Budget, Verdict};
use trestle_ctl::encode::{Encoder, Expansion, Flow, LOOKAHEAD_ENTRIES, Mode};
use trestle_ctl::{CtlError, CtlOptions, Method, Normal, check_ctl};
use trestle_ir::System;
use trestle_ir::num::{parse_rational, to_f64_nearest};
use trestle_ir::parse::{SimpleScope, parse_ctl};
use trestle_ir::system::PropertyFormula;
use trestle_milp::StepOptions;
use trestle_testkit::{load, repo, shared_models};

fn system(file: &str, set: &[String]) -> System {
    load(&repo().join("configs/systems").join(file), set)
}

/// Decides the property `name` of `sys`; every false verdict's runs must replay.
fn decide(sys: &System, name: &str, method: Method) -> Verdict {
    let p = sys.properties.iter().find(|p| p.name == name).expect("the property exists");
    let PropertyFormula::Ctl(phi) = &p.formula else { panic!("{name} is not CTL") };
    decided(sys, phi, method, name)
}

#[test]
fn frozenlake_safe_holds_and_succ_fails_for_every_horizon_in_every_engine() {
    if shared_models().is_none() {
        return;
    }
    for k in 1..=10 {
        let set = [format!("property.0.k={k}"), format!("property.1.k={k}")];
        let sys = system("frozenlake.toml", &set);
        for (name, expected) in [("safe", true), ("succ", false)] {
            let oracle = decide(&sys, name, Method::Explicit);
            assert_eq!(oracle.holds(), Some(expected), "{name} k = {k} (explicit): {oracle:?}");
            for method in [Method::Monolithic, Method::Compositional] {
                let v = decide(&sys, name, method);
                assert_eq!(v.holds(), oracle.holds(), "{name} k = {k}: {method:?} says {v:?}");
            }
        }
    }
}

#[test]
fn frozenlake_succ_fails_on_a_replayed_run_into_a_hole_or_away_from_the_goal() {
    if shared_models().is_none() {
        return;
    }
    let sys = system("frozenlake.toml", &["property.1.k=4".into()]);
    let Verdict::Refuted { trace, others } = decide(&sys, "succ", Method::Compositional) else { panic!("succ holds") };
    let traces: Vec<Trace> = std::iter::once(trace).chain(others).collect();
    let hole_or_not_goal = |t: &Trace| {
        t.states.iter().skip(1).any(|s| {
            let (r, c) = (to_f64_nearest(&s[0]), to_f64_nearest(&s[1]));
            (r, c) == (1.0, 3.0) || (r, c) == (3.0, 1.0)
        }) || t.len() == 4 && t.last().iter().map(to_f64_nearest).collect::<Vec<_>>() != [3.0, 3.0]
    };
    assert!(traces.iter().any(hole_or_not_goal), "{traces:?}");
}

fn vcas(hdot0: &str, k: u32) -> System {
    system("vcas.toml", &[format!("init.hdot0={hdot0}"), format!("property.0.k={k}")])
}

#[test]
fn vcas_minus_19_5_is_separated_for_k_up_to_4() {
    if shared_models().is_none() {
        return;
    }
    for k in 1..=4 {
        let v = decide(&vcas("-19.5", k), "sep", Method::Monolithic);
        assert_eq!(v.holds(), Some(true), "k = {k}: {v:?}");
    }
    for k in 1..=3 {
        let v = decide(&vcas("-19.5", k), "sep", Method::Compositional);
        assert_eq!(v.holds(), Some(true), "k = {k} compositional: {v:?}");
    }
}

#[test]
fn vcas_minus_22_5_fails_at_3_and_holds_at_1_2_4() {
    if shared_models().is_none() {
        return;
    }
    for method in [Method::Monolithic, Method::Compositional] {
        match decide(&vcas("-22.5", 3), "sep", method) {
            Verdict::Refuted { trace, .. } => {
                let t = &trace;
                assert_eq!(t.len(), 3);
                let h = to_f64_nearest(&t.last()[0]);
                assert!((-100.0..=100.0).contains(&h), "{method:?}: final h = {h}");
            }
            v => panic!("{method:?}: {v:?}"),
        }
    }
    for k in [1, 2, 4] {
        let v = decide(&vcas("-22.5", k), "sep", Method::Monolithic);
        assert_eq!(v.holds(), Some(true), "k = {k}: {v:?}");
    }
}

#[test]
fn vcas_the_notes_counterexample_replays() {
    if shared_models().is_none() {
        return;
    }
    // hdot0 = -22.5 from h0 = -129: CL1500 at every step, the pilot accelerating at g/4.
    let sys = vcas("-22.5", 3);
    let q = |s: &str| parse_rational(s).unwrap();
    let start = vec![q("-129"), q("-22.5"), q("25"), q("0")];
    let accel0 = sys.step.branches.iter().position(|b| b.name == "accel-0").unwrap();
    let t = Trace::simulate(&sys, start, (0..3).map(|_| (Vec::new(), accel0))).unwrap();
    t.replay(&sys).unwrap();
    let expected = [("-110.525", "-14.45"), ("-100.1", "-6.4"), ("-97.725", "1.65")];
    for (i, (h, hdot)) in expected.iter().enumerate() {
        assert_eq!(t.states[i + 1][0], q(h), "h after step {}", i + 1);
        assert_eq!(t.states[i + 1][1], q(hdot), "hdot0 after step {}", i + 1);
        assert_eq!(t.steps[i].actions[0], q("4"), "CL1500 at step {}", i + 1);
    }
}

#[test]
fn vcas_presolve_infeasibility_is_confirmed() {
    if shared_models().is_none() {
        return;
    }
    // With 16 sub-boxes per network bound, HiGHS's presolve declared the monolithic model of this
    // cell infeasible, a "true" on the notes' known counterexample; the MILP layer now confirms
    // every infeasibility without presolve. Every grid must find the counterexample.
    let sys = vcas("-22.5", 3);
    let PropertyFormula::Ctl(phi) = &sys.properties[0].formula else { panic!() };
    for pieces in [1, 2, 16, 64, 256] {
        let opts = CtlOptions { method: Method::Monolithic, pieces: Some(pieces), ..CtlOptions::default() };
        let v = check_ctl(&sys, phi, &opts, &Budget::unlimited()).unwrap().verdict;
        assert!(matches!(v, Verdict::Refuted { .. }), "pieces {pieces}: {v:?}");
    }
}

#[test]
fn vcas_monolithic_and_compositional_agree_on_every_climb_rate() {
    if shared_models().is_none() {
        return;
    }
    let rates =
        ["-19.5", "-22.5", "-25.5", "-28.5", "-31.5", "-34.5", "-37.5", "-40.5", "-43.5", "-39", "-39.5", "-40"];
    for h in rates {
        for k in 1..=4 {
            let sys = vcas(h, k);
            let mono = decide(&sys, "sep", Method::Monolithic).holds();
            let comp = decide(&sys, "sep", Method::Compositional).holds();
            assert!(mono.is_some() && mono == comp, "hdot0 {h} k {k}: monolithic {mono:?}, compositional {comp:?}");
        }
    }
}

#[test]
fn vcas_compositional_refutation_does_not_depend_on_the_thread_count() {
    if shared_models().is_none() {
        return;
    }
    let sys = vcas("-40", 6);
    let PropertyFormula::Ctl(phi) = &sys.properties[0].formula else { panic!() };
    let run = |threads| {
        let opts = CtlOptions { method: Method::Compositional, threads, ..CtlOptions::default() };
        check_ctl(&sys, phi, &opts, &Budget::unlimited()).unwrap().verdict
    };
    let one = run(1);
    assert!(matches!(one, Verdict::Refuted { .. }), "{one:?}");
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

#[test]
fn vcas_look_ahead_and_subtree_models_keep_every_verdict() {
    if shared_models().is_none() {
        return;
    }
    // The compositional engine's look-ahead (subtrees dropped when the monolithic encoding of
    // their rest is ruled out by the bounds) and its subtree models (one MILP for a whole subtree)
    // against the plain expansion: the same verdict on cells of both kinds around the slow
    // column, every refutation replayed, and the look-ahead drops whole subtrees (fewer jobs).
    let plain = CtlOptions { method: Method::Compositional, lookahead: 0, subtree_depth: 0, ..CtlOptions::default() };
    let ahead = CtlOptions { lookahead: 3, ..plain.clone() };
    let both = CtlOptions { lookahead: 3, subtree_depth: 5, ..plain.clone() };
    for (h, k) in [("-19.5", 6), ("-22.5", 3), ("-34.5", 7), ("-37.5", 6), ("-37.5", 8), ("-40.5", 7), ("-43.5", 7)] {
        let sys = vcas(h, k);
        let PropertyFormula::Ctl(phi) = &sys.properties[0].formula else { panic!() };
        let run = |opts: &CtlOptions| {
            let r = check_ctl(&sys, phi, opts, &Budget::unlimited()).unwrap();
            if let Verdict::Refuted { trace, others } = &r.verdict {
                for t in std::iter::once(trace).chain(others) {
                    t.replay(&sys).unwrap_or_else(|e| panic!("hdot0 {h} k {k}: a witness does not replay: {e}"));
                }
            }
            r
        };
        let (p, a, b) = (run(&plain), run(&ahead), run(&both));
        assert!(p.verdict.holds().is_some(), "hdot0 {h} k {k}: {:?}", p.verdict);
        assert_eq!(a.verdict.holds(), p.verdict.holds(), "hdot0 {h} k {k}: look-ahead {:?}", a.verdict);
        assert_eq!(b.verdict.holds(), p.verdict.holds(), "hdot0 {h} k {k}: subtree models {:?}", b.verdict);
        if h == "-19.5" {
            // Every job is ruled out by the bounds: exact, and the look-ahead needs far fewer.
            assert!(matches!(a.verdict, Verdict::Proven { .. }), "{:?}", a.verdict);
            let jobs = |r: &trestle_ctl::CtlResult| r.stats.milps_pruned + r.stats.milps_built;
            assert!(jobs(&a) * 10 < jobs(&p), "look-ahead {:?}, plain {:?}", a.stats, p.stats);
        }
    }
}

/// The measurements behind the VerticalCAS table (docs/temporal.md): per cell and engine, the
/// verdict, seconds (total and inside HiGHS), MILPs built and pruned, and the largest MILP's
/// binaries, rows and kinks (ReLU phases) per step `[fixed active, fixed inactive, binary]`. Not
/// an assertion of anything (times vary); run it with
/// `VCAS_CELLS="-40.5:10 -43.5:9" cargo test --release --workspace --test case_studies -- --ignored vcas_measure --nocapture`.
#[test]
#[ignore]
fn vcas_measure() {
    if shared_models().is_none() {
        return;
    }
    let cells = std::env::var("VCAS_CELLS").unwrap_or_else(|_| "-40.5:9 -43.5:9".into());
    for cell in cells.split_whitespace() {
        let (h, k) = cell.split_once(':').expect("cells are hdot0:k");
        let sys = vcas(h, k.parse().expect("k is a number"));
        let PropertyFormula::Ctl(phi) = &sys.properties[0].formula else { panic!() };
        for method in [Method::Monolithic, Method::Compositional] {
            let opts = CtlOptions { method, threads: 1, ..CtlOptions::default() };
            let r = check_ctl(&sys, phi, &opts, &Budget::new(Some(std::time::Duration::from_secs(120)))).unwrap();
            let s = &r.stats;
            println!(
                "hdot0 {h} k {k} {method:?}: {} in {:.2} s ({:.2} s in HiGHS), {} MILPs built, {} pruned; largest: {} \
                 binaries, {} rows, kinks per step {:?}",
                r.verdict.status().as_str(),
                s.seconds,
                s.solver_seconds,
                s.milps_built,
                s.milps_pruned,
                s.binaries,
                s.rows,
                s.kinks
            );
        }
    }
}

/// Issue 38: on a deep formula the compositional look-ahead encoded the monolithic model of each
/// obligation's whole rest up to the job size limit (4M matrix entries, swallowed as "decides
/// nothing") at every level: `AX^100000` took over 120 s where the per-path size check ends the
/// expansion in seconds. Now a look-ahead gives up at `LOOKAHEAD_ENTRIES` and no later one looks
/// that far again: counted in matrix entries, not time, over the first two steps of the
/// expansion (the first look-ahead alone was the slow part).
#[test]
fn vcas_deep_formula_look_ahead_is_capped() {
    if shared_models().is_none() {
        return;
    }
    let (sys, normal, choices) = deep_vcas();
    // Not a timing assertion: a guard so that an uncapped look-ahead (500 s under load) fails
    // the test as `Stopped` instead of running on; the capped one takes about a second.
    let mut step = StepOptions::default();
    step.bounds.budget = Budget::new(Some(std::time::Duration::from_secs(60)));
    let enc = Encoder::new(&sys, &normal, &choices, step, Mode::Compositional);
    let init = sys.init.to_box_union(sys.state.len(), 16).unwrap();
    let steps = Cell::new(0);
    let mut ctx = Expansion::stopped_by(|| {
        steps.set(steps.get() + 1);
        steps.get() > 2
    });
    let flow = enc.expand(enc.start(&init[0]).unwrap().unwrap(), None, &mut ctx, &mut |_| Ok(Flow::Continue));
    assert!(matches!(flow, Ok(Flow::Stop)), "{:?}", flow.err());
    // It looked ahead, and stopped at the first encoding past the cap (one step more at most):
    // 100 000 entries, where the uncapped look-ahead reached the job limit (4 000 000).
    assert_eq!(LOOKAHEAD_ENTRIES, 50_000);
    assert!(0 < ctx.looked_ahead && ctx.looked_ahead <= 100_000, "looked ahead {}", ctx.looked_ahead);
}

/// The same expansion run to its end: the per-path size check ends it, with one capped look-ahead
/// in all. About 4 s alone on 2 cores (more under load), so not in every run:
/// `cargo test --release --workspace --test case_studies -- --ignored vcas_deep_formula_ends`.
#[test]
#[ignore]
fn vcas_deep_formula_ends_at_the_path_limit() {
    if shared_models().is_none() {
        return;
    }
    let (sys, normal, choices) = deep_vcas();
    let enc = Encoder::new(&sys, &normal, &choices, StepOptions::default(), Mode::Compositional);
    let init = sys.init.to_box_union(sys.state.len(), 16).unwrap();
    let mut ctx = Expansion::default();
    let flow = enc.expand(enc.start(&init[0]).unwrap().unwrap(), None, &mut ctx, &mut |_| Ok(Flow::Continue));
    match flow {
        Err(CtlError::Limit(why)) => assert!(why.contains("jobs of one path"), "{why}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(ctx.looked_ahead <= 100_000, "looked ahead {}", ctx.looked_ahead);
}

/// VerticalCAS with `AX^100000 (h > 100 or h < -100)`: its normal form and the choices.
fn deep_vcas() -> (System, Normal, Vec<trestle_ctl::Choice>) {
    let sys = vcas("-19.5", 1);
    let scope = SimpleScope::with_state(&["h", "hdot0", "tau", "adv"]);
    let phi = parse_ctl("AX^100000 (h > 100 or h < -100)", &scope).unwrap();
    let normal = Normal::negation(&phi, &Budget::unlimited()).unwrap();
    let choices = trestle_ctl::choices(&sys).unwrap();
    (sys, normal, choices)
}
