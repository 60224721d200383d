//! The project's own examples.

mod common;
use common::*;
use trestle_bridge::certificate::{CertificateJson, certify};
use trestle_synth::{SynthConfig, SynthVerdict, synthesize};

#[test]
fn the_example_mazes_are_safe_with_accepted_certificates() {
    for name in ["maze-det.toml", "maze-nondet.toml"] {
        let sys = example(name);
        for forward in [false, true] {
            let r = synthesize(&sys, &SynthConfig { forward, ..Default::default() }, &quiet).unwrap();
            assert_eq!(r.verdict, SynthVerdict::Safe, "{name} (forward {forward}): {}", r.reason);
            assert!(r.stats.invariant_boxes <= r.stats.invariant_cells && r.stats.invariant_boxes > 0);
            let c = certify(&CertificateJson::Proof(r.certificate.unwrap()), &sys).unwrap();
            assert!(c.valid, "{name}: {:?}", c.checks);
        }
    }
}
