//! SMT-LIB dumps: one file per Z3 query, numbered per checker, runnable with the `z3` binary with
//! the same sat/unsat as the API (skipped when `z3` is not installed).

mod common;

use common::*;
use std::path::Path;
use trestle_smt::{
    Answer, BridgeQuery, Checker, CheckerConfig, EnvChecker, InductivenessChecker, Postcondition, Target,
};

fn run_z3(bin: &Path, file: &Path) -> String {
    let out = std::process::Command::new(bin).arg(file).output().unwrap();
    String::from_utf8(out.stdout).unwrap().lines().next().unwrap_or("").trim().to_string()
}

#[test]
fn dumped_queries_replay_with_the_z3_binary() {
    let dir = tempfile::tempdir().unwrap();
    let inv = pred(INV);
    let mut expected = Vec::new();
    for (k, sys) in [det_maze(), nondet_maze()].iter().enumerate() {
        let cfg =
            CheckerConfig::default().with_fast_path(false).with_dump_dir(dir.path()).with_dump_prefix(format!("w{k}-"));
        let mut checker = Checker::new(sys, cfg).unwrap();
        let p = fbox(&[0.5, 0.6], &[0.6, 0.7]);
        let small = Postcondition::Box(fbox(&[-0.4, -0.4], &[0.4, 0.4]));
        let half = Postcondition::Box(fbox(&[-0.5, -0.5], &[0.5, 0.5]));
        let answers = [
            checker.check_bridge(&BridgeQuery::new(&p, &small, Target::StaysIn(&inv))).unwrap(),
            // Invalid by 2.2e-17: the dump must carry the exact constants to agree.
            checker.check_bridge(&BridgeQuery::new(&p, &half, Target::StaysIn(&inv))).unwrap(),
            checker.check_bridge(&BridgeQuery::new(&p, &half, Target::Leaves(&inv))).unwrap(),
            checker.check_implication(&pred("x <= 0.95"), &pred("x < 0.95")).unwrap(),
            checker.check_inductive(&inv).unwrap(),
        ];
        let kinds: Vec<&str> = answers.iter().map(|a| if a.is_valid() { "unsat" } else { "sat" }).collect();
        assert_eq!(kinds, ["unsat", "sat", "sat", "sat", "unsat"], "{answers:?}");
        for (i, kind) in kinds.iter().enumerate() {
            expected.push((dir.path().join(format!("w{k}-query-{:06}.smt2", i + 1)), *kind));
        }
        assert!(answers.iter().all(|a| !matches!(a, Answer::Unknown(_))));
    }
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names.len(), 10, "{names:?} (no temporary files left behind)");
    for (path, _) in &expected {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("(check-sat)") && text.contains("declare-fun"), "{}", path.display());
    }
    let Some(bin) = z3_binary() else {
        eprintln!("skipping the z3 binary check: z3 not on PATH");
        return;
    };
    for (path, kind) in &expected {
        assert_eq!(run_z3(&bin, path), *kind, "{}", path.display());
    }
}
