mod common;
use common::*;
use trestle_synth::{SynthConfig, synthesize};

#[test]
#[ignore]
fn explore() {
    let res: Option<usize> = std::env::var("RES").ok().and_then(|s| s.parse().ok());
    let forward = std::env::var("FWD").is_ok();
    let threads: usize = std::env::var("THREADS").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let only = std::env::var("ONLY").ok();
    let t = std::time::Instant::now();
    for kind in ["det", "nondet"] {
        for h in SIZES {
            if let Some(o) = &only { if *o != format!("{kind}{h}") { continue; } }
            let sys = peer(kind, h);
            let mut cfg = SynthConfig { resolution: res, forward, threads, full: std::env::var("FULL").is_ok(), ..SynthConfig::default() };
            cfg.bridge.threads = threads;
            let r = synthesize(&sys, &cfg, &quiet).unwrap();
            let s = &r.stats;
            eprintln!("{kind:6} {h:3}: {:7} cells0 {:4} cells {:5} images {:5} rounds {:3} splits {:4} dropped {:4} inv {:4}/{:3} smt {:4} z3 {:3} bq {:4} psplits {} t {:.3} (search {:.3} proof {:.3} attack {:.3}) {}",
                r.verdict.as_str(), s.initial_cells, s.cells, s.images, s.rounds, s.splits, s.dropped, s.invariant_cells, s.invariant_boxes, s.smt_queries, s.z3_queries, s.bound_queries, s.proof_splits, s.seconds, s.search_seconds, s.proof_seconds, s.attack_seconds, r.reason);
        }
    }
    eprintln!("total {:.3}", t.elapsed().as_secs_f64());
}
