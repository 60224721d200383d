//! Shared helpers of the synthesis tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use trestle_config::{Overrides, load_system};
use trestle_ir::System;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether ../shared/models is present; its absence fails the test under CI=true.
pub fn shared_models() -> bool {
    let present = repo().join("../shared/models").is_dir();
    if !present {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "../shared/models is missing under CI=true");
        eprintln!("skipped: ../shared/models is absent");
    }
    present
}

pub fn example(name: &str) -> System {
    load_system(&repo().join("examples").join(name), &Overrides::default()).unwrap()
}

/// A peer maze system (`det` or `nondet`) with the 2xH controller.
pub fn peer(kind: &str, h: usize) -> System {
    let model = repo().join(format!("../shared/models/maze/{kind}/maze_2d_{h}x{h}.onnx"));
    let set = Overrides::parse(&[format!("controller.model={}", model.display())]).unwrap();
    load_system(&repo().join(format!("configs/systems/peer-maze-{kind}.toml")), &set).unwrap()
}

pub const SIZES: [usize; 8] = [32, 40, 48, 56, 64, 128, 256, 512];

pub fn quiet(_: trestle_synth::SynthProgress) {}
