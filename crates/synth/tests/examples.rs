//! The project's own examples.

mod common;
use common::*;
use trestle_bridge::certificate::{CertificateJson, certify};
use trestle_core::Budget;
use trestle_synth::{SynthConfig, synthesize};

#[test]
fn the_example_mazes_are_safe_with_accepted_certificates() {
    for name in ["maze-det.toml", "maze-nondet.toml"] {
        let sys = example(name);
        for forward in [false, true] {
            let r =
                synthesize(&sys, &SynthConfig { forward, ..Default::default() }, &Budget::unlimited(), &quiet).unwrap();
            assert_eq!(r.word(), "safe", "{name} (forward {forward}): {}", r.reason);
            assert!(r.stats.invariant_boxes <= r.stats.invariant_cells && r.stats.invariant_boxes > 0);
            let c = certify(&CertificateJson::Proof(r.proof().unwrap()), &sys).unwrap();
            assert!(c.valid, "{name}: {:?}", c.checks);
        }
    }
}
