//! The shipped Simple-Spread benchmarks are what the generator writes from their seed, byte for
//! byte (system files and ONNX networks), and they load.

use std::path::Path;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn shipped_benchmarks_regenerate_byte_for_byte() {
    let shipped = repo().join("configs/systems");
    for agents in [2, 4] {
        let dir = tempfile::tempdir().unwrap();
        let g = trestle_spread::generate(agents, 1, dir.path()).unwrap();
        assert_eq!(g.policies.len(), agents);
        let mut files = vec![g.system.clone()];
        files.extend(g.policies.iter().map(|p| p.model.clone()));
        for f in files {
            let rel = f.strip_prefix(dir.path()).unwrap();
            let (ours, theirs) = (std::fs::read(&f).unwrap(), std::fs::read(shipped.join(rel)));
            assert_eq!(Some(ours), theirs.ok(), "{} differs from the shipped file", rel.display());
        }
        // The policies imitate the expert (most of the time; the table does not depend on it).
        assert!(g.policies.iter().all(|p| p.accuracy > 0.6), "{:?}", g.policies);
    }
}

#[test]
fn the_task_is_defined_for_two_and_four_agents() {
    let dir = tempfile::tempdir().unwrap();
    let e = trestle_spread::generate(3, 1, &dir.path().join("out")).unwrap_err();
    assert!(matches!(e, trestle_spread::SpreadError::Input(_)), "{e}");
    assert!(!dir.path().join("out").exists(), "nothing is written for a bad request");
}
