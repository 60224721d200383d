//! Generates the planning benchmarks: `cargo run --release -p trestle-planning --example generate
//! [-- SEED [OUT_DIR]]` (defaults: seed 1, the repository's `configs/systems`, where the shipped
//! instances live), and prints one line per instance.

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = match args.next() {
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("generate: '{s}' is not a seed (an unsigned integer)");
            std::process::exit(2)
        }),
        None => 1,
    };
    let out = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/systems")));
    let start = std::time::Instant::now();
    match trestle_planning::generate_all(seed, &out) {
        Ok(all) => {
            println!(
                "{:<14} {:>6} {:>9} {:>8} {:>9}  {:<8} unsafe condition",
                "instance", "starts", "reachable", "training", "accuracy", "verdict"
            );
            for g in &all {
                let detail = match (g.counterexample_steps, g.unsafe_distance) {
                    (Some(k), _) => format!("shortest counterexample: {k} step(s)"),
                    (_, Some(k)) => format!("{k} operator(s) from the policy's states"),
                    _ => String::new(),
                };
                println!(
                    "{:<14} {:>6} {:>9} {:>8} {:>9.4}  {:<8} {} ({detail})",
                    g.name,
                    g.start_states,
                    g.reachable,
                    g.training_states,
                    g.accuracy,
                    g.expected.as_str(),
                    g.unsafe_condition
                );
            }
            println!(
                "generated {} instances into {} in {:.1} s",
                all.len(),
                out.display(),
                start.elapsed().as_secs_f64()
            );
        }
        Err(e) => {
            eprintln!("generate: {e}");
            std::process::exit(match e {
                trestle_planning::PlanningError::Input(_) => 2,
                trestle_planning::PlanningError::Internal(_) => 4,
            })
        }
    }
}
