//! The paper's case studies on the real third-party networks (../shared/models; skipped when
//! absent, a failure under CI=true): FrozenLake (the MILP engines agree with the explicit engine on
//! every cell, safe TRUE and succ FALSE for k = 1..10) and VerticalCAS (the notes' known answers).

mod common;

use common::decided;
use trestle_core::Trace;
use trestle_core::{Budget, Verdict};
use trestle_ctl::{CtlOptions, Method, check_ctl};
use trestle_ir::System;
use trestle_ir::num::{parse_rational, to_f64_nearest};
use trestle_ir::system::PropertyFormula;
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
