//! Shared helpers of the synthesis tests.
#![allow(dead_code)]

pub use trestle_testkit::*;

pub fn quiet(_: trestle_synth::SynthProgress) {}
