//! Shared helpers of the bridge engine's tests.
#![allow(dead_code, unused_imports)]

pub use trestle_testkit::*;

pub fn quiet(_: trestle_bridge::Progress) {}
