//! The maze systems of the compositional-invariant paper: the monolithic MILP baseline's verdicts on
//! the small controllers (the large ones are timed by the ignored `maze_baseline_times`).

use std::time::{Duration, Instant};
use trestle_config::{Overrides, load_system};
use trestle_ir::System;
use trestle_ir::num::{parse_rational, to_f64_nearest};
use trestle_milp::{MilpAnswer, MilpCheck, MilpOptions, check_inductive_milp};
use trestle_testkit::{peer, repo, shared_models};

fn run(sys: &System, time_limit: Duration) -> MilpCheck {
    let opts = MilpOptions::default().with_time_limit(time_limit).with_total_time_limit(time_limit * 4);
    let inv = sys.invariant.clone().unwrap();
    let start = Instant::now();
    let result = check_inductive_milp(sys, &inv, &opts).unwrap();
    eprintln!(
        "{}: {} in {:.2?} ({} MILPs, {} decided by bounds, max {} binaries, solve {:.2?})",
        sys.name,
        result.answer,
        start.elapsed(),
        result.stats.milps,
        result.stats.decided_by_bounds,
        result.stats.max_binaries,
        result.stats.solve_time
    );
    result
}

#[test]
fn example_maze_with_the_hand_set_controller_is_inductive() {
    for file in ["examples/maze-det.toml", "examples/maze-nondet.toml"] {
        let sys = load_system(&repo().join(file), &Overrides::default()).unwrap();
        let result = run(&sys, Duration::from_secs(20));
        assert!(result.answer.is_evidence(), "{file}: {}", result.answer);
    }
}

#[test]
fn peer_det_32_is_inductive() {
    if shared_models().is_none() {
        return;
    }
    let result = run(&peer("det", 32), Duration::from_secs(20));
    assert!(matches!(result.answer, MilpAnswer::Evidence { margin } if margin > 0.0), "{}", result.answer);
}

#[test]
fn peer_nondet_32_is_inductive() {
    if shared_models().is_none() {
        return;
    }
    let result = run(&peer("nondet", 32), Duration::from_secs(20));
    assert!(result.answer.is_evidence(), "{}", result.answer);
    // Both ends of c in [0.5, 1] were checked.
    assert!(result.stats.records.iter().any(|r| r.label.contains("inputs [0.5]")));
    assert!(result.stats.records.iter().any(|r| r.label.contains("inputs [1]")));
}

#[test]
fn peer_det_128_is_not_inductive() {
    if shared_models().is_none() {
        return;
    }
    let sys = peer("det", 128);
    let result = run(&sys, Duration::from_secs(30));
    let w = result.answer.witness().unwrap_or_else(|| panic!("expected a counterexample, got {}", result.answer));
    trestle_core::replay_inductive(&sys, sys.invariant.as_ref().unwrap(), w).unwrap();
    let (x, y, y_next) = (to_f64_nearest(&w.state[0]), to_f64_nearest(&w.state[1]), to_f64_nearest(&w.next[1]));
    eprintln!("witness: {w}");
    assert!(w.next[1] > parse_rational("0.95").unwrap(), "the known violation leaves through y' > 0.95: {w}");
    assert!((0.9..=0.95).contains(&x) && (0.65..=0.8).contains(&y), "({x}, {y}) -> y' = {y_next}");
}

/// The paper's monolithic baseline on every controller size: run with
/// `cargo test --release -p trestle-milp --test maze -- --ignored --nocapture`
/// (`TRESTLE_MILP_LIMIT` = seconds per MILP, default 120; `TRESTLE_MILP_PEER_SIZES` = `32,64`;
/// `TRESTLE_MILP_KINDS` = `det` or `nondet`).
#[test]
#[ignore]
fn maze_baseline_times() {
    if shared_models().is_none() {
        return;
    }
    let limit = std::env::var("TRESTLE_MILP_LIMIT").ok().and_then(|s| s.parse().ok()).unwrap_or(120);
    let sizes = std::env::var("TRESTLE_MILP_PEER_SIZES").unwrap_or_else(|_| "32,40,48,56,64,128,256,512".into());
    let kinds = std::env::var("TRESTLE_MILP_KINDS").unwrap_or_else(|_| "det,nondet".into());
    for kind in kinds.split(',').map(str::trim) {
        for size in sizes.split(',').map(|s| s.trim().parse::<usize>().unwrap()) {
            let sys = peer(kind, size);
            let inv = sys.invariant.clone().unwrap();
            let opts = MilpOptions::default().with_time_limit(Duration::from_secs(limit));
            let start = Instant::now();
            let r = check_inductive_milp(&sys, &inv, &opts).unwrap();
            let verdict = match &r.answer {
                MilpAnswer::Evidence { margin } => format!("evidence (margin {margin:.3e})"),
                MilpAnswer::Invalid(w) => format!("invalid: {w}"),
                MilpAnswer::Unknown(reason) => format!("unknown: {reason}"),
            };
            println!(
                "{kind} {size}x{size}: {verdict}; total {:.2?}, solve {:.2?}, build {:.2?}, {} MILPs, max {} binaries, max {} constraints",
                start.elapsed(),
                r.stats.solve_time,
                r.stats.build_time,
                r.stats.milps,
                r.stats.max_binaries,
                r.stats.max_constraints
            );
            for rec in &r.stats.records {
                println!(
                    "    {}: {} bound {:?} primal {:?} {:.2?} ({} binaries)",
                    rec.label, rec.status, rec.bound, rec.primal, rec.time, rec.binaries
                );
            }
        }
    }
}

/// FrozenLake's agent (9 -> 32 -> 32 -> 4, one-hot observation by `ite`, argmax, `lookup` and
/// `clamp` in three slip branches): the grid is inductive (moves are clamped), with integer
/// successors making the faces exact.
#[test]
fn frozenlake_grid_is_inductive() {
    if shared_models().is_none() {
        return;
    }
    let sys = load_system(&repo().join("configs/systems/frozenlake.toml"), &Overrides::default()).unwrap();
    let inv = trestle_ir::parse::parse_pred(
        "1 <= row <= 3 and 1 <= col <= 3",
        &trestle_ir::parse::SimpleScope::with_state(&["row", "col"]),
    )
    .unwrap();
    let result =
        check_inductive_milp(&sys, &inv, &MilpOptions::default().with_time_limit(Duration::from_secs(20))).unwrap();
    assert!(
        matches!(result.answer, MilpAnswer::Evidence { margin } if (margin - 1.0).abs() < 1e-6),
        "{}",
        result.answer
    );
    // Leaving a column out is not inductive (the agent or a slip moves into it), and the
    // counterexample replays.
    let inv = trestle_ir::parse::parse_pred(
        "1 <= row <= 3 and 1 <= col <= 2",
        &trestle_ir::parse::SimpleScope::with_state(&["row", "col"]),
    )
    .unwrap();
    let result =
        check_inductive_milp(&sys, &inv, &MilpOptions::default().with_time_limit(Duration::from_secs(20))).unwrap();
    let w = result.answer.witness().unwrap_or_else(|| panic!("expected a counterexample, got {}", result.answer));
    trestle_core::replay_inductive(&sys, &inv, w).unwrap();
    assert_eq!(w.next[1], trestle_ir::num::rational_from_i64(3));
}
