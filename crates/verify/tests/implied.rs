//! `verify`: a bounded `G<=k p` is proven when the same file proves `G p` (or `invariant = p`),
//! whatever the bounded engine alone says (issue 34.8: the RMILP's evidence stood beside the
//! proof of the unbounded property).

use trestle_core::{Budget, Status};
use trestle_testkit::{load, repo, scratch};
use trestle_verify::Silent;
use trestle_verify::properties::{VerifyOptions, verify};

#[test]
fn a_bounded_always_is_implied_by_a_proven_invariant() {
    let example = repo().join("examples/maze-det.toml");
    let model = repo().join("examples/networks/maze-2x8.nnet");
    let p = "0.22 <= x and x <= 0.98 and 0.54 <= y and y <= 0.98";
    let text = std::fs::read_to_string(&example).unwrap()
        + &format!(
            "\n[[property]]\nname = \"bounded\"\nltl = \"G<=20 ({p})\"\n\n[[property]]\nname = \"forever\"\nltl = \"G ({p})\"\n\n\
             [[property]]\nname = \"other\"\nltl = \"G<=20 (x <= 0.98)\"\n"
        );
    let (_dir, file) = scratch("maze.toml", &text);
    let sys = load(&file, &[format!("controller.model={}", model.display())]);
    let opts = VerifyOptions { properties: vec![], threads: 2, per_property: None };
    let v = verify(&sys, &opts, &Budget::unlimited(), &Silent).unwrap();
    let row = |name: &str| v.results.iter().find(|r| r.property.as_deref() == Some(name)).unwrap();
    assert_eq!(row("forever").status, Status::Proven, "{:?}", row("forever"));
    let bounded = row("bounded");
    assert_eq!((bounded.status, bounded.method.as_str()), (Status::Proven, "implied"), "{bounded:?}");
    assert_eq!(bounded.details["implied_by"], "forever");
    // Another predicate is not implied: its own engine's answer stands.
    assert_ne!(row("other").method, "implied");
}
