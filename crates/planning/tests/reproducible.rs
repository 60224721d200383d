//! The shipped planning benchmarks are what the generator writes from seed 1, byte for byte
//! (system files and ONNX networks); they load, and the verdict each records is the one an exact
//! explicit-state search under its policy finds.

use std::path::Path;
use trestle_planning::{PlanningError, Task, Truth, WIDTHS, instance_name, search};

fn shipped() -> std::path::PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("configs/systems")
}

#[test]
fn shipped_benchmarks_regenerate_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let all = trestle_planning::generate_all(1, dir.path()).unwrap();
    assert_eq!(all.len(), Task::ALL.len() * WIDTHS.len());
    for g in &all {
        for f in [&g.system, &g.model] {
            let rel = f.strip_prefix(dir.path()).unwrap();
            let (ours, theirs) = (std::fs::read(f).unwrap(), std::fs::read(shipped().join(rel)));
            assert_eq!(Some(ours), theirs.ok(), "{} differs from the shipped file", rel.display());
        }
        assert!(g.accuracy > 0.6, "{g:?}");
        assert!((2..=20).contains(&g.start_states) && g.reachable <= 5000, "{g:?}");
        // A safe instance's unsafe states are reachable, only not under the policy.
        assert_eq!(g.expected == Truth::Safe, g.unsafe_distance.is_some(), "{g:?}");
        assert_eq!(g.expected == Truth::Unsafe, g.counterexample_steps.is_some_and(|k| k >= 1), "{g:?}");
    }
    let safe = all.iter().filter(|g| g.expected == Truth::Safe).count();
    assert_eq!((safe, all.len() - safe), (7, 5), "the planned mix of verdicts");
    // One instance alone is the same instance.
    let one = trestle_planning::generate(Task::Transport, 32, 1, &dir.path().join("one")).unwrap();
    let again = all.iter().find(|g| g.name == one.name).unwrap();
    assert_eq!(std::fs::read(&one.model).unwrap(), std::fs::read(&again.model).unwrap());
    assert_eq!((one.expected, one.reachable), (again.expected, again.reachable));
}

/// The verdict the header of a generated system file records.
fn recorded_verdict(text: &str) -> Option<Truth> {
    let line = text.lines().find(|l| l.starts_with("# Verdict"))?;
    match line.rsplit(": ").next()? {
        "safe." => Some(Truth::Safe),
        "unsafe." => Some(Truth::Unsafe),
        _ => None,
    }
}

#[test]
fn shipped_systems_load_and_record_the_verdict_of_the_explicit_search() {
    for task in Task::ALL {
        for width in WIDTHS {
            let path = shipped().join(format!("{}.toml", instance_name(task, width)));
            let text = std::fs::read_to_string(&path).unwrap();
            let recorded = recorded_verdict(&text).unwrap_or_else(|| panic!("{}: no verdict line", path.display()));
            let sys = trestle_config::load_system(&path, &Default::default()).unwrap();
            let starts = search::initial_states(&sys, 1_000_000).unwrap();
            assert!((2..=20).contains(&starts.len()), "{}", path.display());
            let e = search::explore(&sys, &starts, 100_000).unwrap();
            assert_eq!(e.verdict, recorded, "{}", path.display());
            let reachable = format!("# {} states are reachable under the policy", e.reachable.len());
            assert!(text.contains(&reachable), "{}: {reachable}", path.display());
            // Every guard and update is linear.
            for b in &sys.step.branches {
                assert!(b.guard.as_ref().is_none_or(|g| g.is_linear()), "{}: {}", path.display(), b.name);
                assert!(b.updates.iter().all(|u| u.as_linear().is_some()), "{}: {}", path.display(), b.name);
            }
        }
    }
}

#[test]
fn a_width_outside_the_table_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = trestle_planning::generate(Task::Blocks4, 8, 1, &dir.path().join("out")).unwrap_err();
    assert!(matches!(e, PlanningError::Input(_)), "{e}");
    assert!(!dir.path().join("out").exists(), "nothing is written for a bad request");
}
