//! Training times of the maze controller shapes (issue 14): run with
//! `cargo test --release -p trestle-train --test speed -- --ignored --nocapture`.
//! Reports only; tests never assert timings.

use std::time::Instant;
use trestle_train::rng::TrainRng;
use trestle_train::{Architecture, Dataset, TrainConfig, train};

#[test]
#[ignore = "a measurement (about a minute), not a check"]
fn training_times_of_the_maze_controller_shapes() {
    let (samples, epochs, batch_size) = (4096, 20, 64);
    let mut rng = TrainRng::new(1);
    let xs: Vec<Vec<f64>> = (0..samples).map(|_| vec![rng.unit(), rng.unit()]).collect();
    let ys: Vec<Vec<f64>> =
        xs.iter().map(|x| vec![(4.0 * (0.7 - x[0])).clamp(-1.0, 1.0), (4.0 * (0.3 - x[1])).clamp(-1.0, 1.0)]).collect();
    let data = Dataset::regression(&xs, &ys).unwrap();
    println!("{samples} samples, {epochs} epochs, batch {batch_size}, Adam, one thread");
    println!("{:>8} {:>10} {:>10} {:>12} {:>12}", "shape", "params", "seconds", "s / epoch", "final MSE");
    for (name, hidden) in [
        ("2x64", vec![64; 2]),
        ("2x256", vec![256; 2]),
        ("2x1024", vec![1024; 2]),
        ("4x256", vec![256; 4]),
        ("6x128", vec![128; 6]),
    ] {
        let arch = Architecture::mlp(2, &hidden, 2);
        let config = TrainConfig { seed: 1, epochs, batch_size, ..TrainConfig::default() };
        let start = Instant::now();
        let trained = train(&arch, &data, None, &config).unwrap();
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name:>8} {:>10} {secs:>10.2} {:>12.3} {:>12.2e}",
            trained.model.parameter_count(),
            secs / epochs as f64,
            trained.report.train.loss
        );
    }
}
