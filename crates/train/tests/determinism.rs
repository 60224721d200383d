//! Same seed, same bytes; another seed, other bytes; and what is written is what is loaded:
//! trained networks go through trestle-nn's ONNX writer and loader exactly, and tract evaluates
//! the files as the IR does.

use trestle_ir::network::Network;
use trestle_nn::{cross_check_with_tract, encode_onnx, load_onnx, write_onnx};
use trestle_train::rng::TrainRng;
use trestle_train::{Architecture, Dataset, TrainConfig, train};

fn regression_data() -> Dataset {
    let mut rng = TrainRng::new(21);
    let xs: Vec<Vec<f64>> = (0..300).map(|_| vec![rng.unit(), rng.unit()]).collect();
    let ys: Vec<Vec<f64>> = xs.iter().map(|x| vec![(x[0] - x[1]).max(0.0), x[0] * x[1]]).collect();
    Dataset::regression(&xs, &ys).unwrap()
}

fn sequence_data() -> Dataset {
    let mut rng = TrainRng::new(22);
    let xs: Vec<Vec<Vec<f64>>> =
        (0..100).map(|_| (0..4).map(|_| vec![rng.symmetric(1.0), rng.symmetric(1.0)]).collect()).collect();
    let ys: Vec<Vec<Vec<f64>>> = xs.iter().map(|s| s.iter().map(|x| vec![x[0] + x[1]]).collect()).collect();
    Dataset::sequences(&xs, &ys).unwrap()
}

fn trained(arch: &Architecture, data: &Dataset, seed: u64) -> Network {
    let config = TrainConfig { seed, epochs: 5, batch_size: 16, ..TrainConfig::default() };
    train(arch, data, None, &config).unwrap().model.to_network("inline:trained")
}

#[test]
fn the_same_seed_gives_the_same_onnx_bytes_and_another_seed_does_not() {
    let cases =
        [(Architecture::mlp(2, &[64, 64], 2), regression_data()), (Architecture::rnn(2, &[8, 8], 1), sequence_data())];
    for (arch, data) in cases {
        let a = encode_onnx(&trained(&arch, &data, 7)).unwrap();
        let b = encode_onnx(&trained(&arch, &data, 7)).unwrap();
        let c = encode_onnx(&trained(&arch, &data, 8)).unwrap();
        assert!(a == b, "{:?}: two trainings with seed 7 wrote different files", arch.sizes());
        assert!(a != c, "{:?}: seeds 7 and 8 wrote the same file", arch.sizes());
    }
}

#[test]
fn training_is_independent_of_the_thread_it_runs_on() {
    // Trainings on concurrent threads give the bits of a training on this one.
    let (arch, data) = (Architecture::mlp(2, &[32, 32], 2), regression_data());
    let here = encode_onnx(&trained(&arch, &data, 3)).unwrap();
    let elsewhere: Vec<Vec<u8>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2).map(|_| s.spawn(|| encode_onnx(&trained(&arch, &data, 3)).unwrap())).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(elsewhere.iter().all(|bytes| *bytes == here));
}

#[test]
fn trained_networks_round_trip_through_onnx_and_agree_with_tract() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("mlp.onnx", trained(&Architecture::mlp(2, &[16, 16], 2), &regression_data(), 1), 1),
        ("rnn.onnx", trained(&Architecture::rnn(2, &[8, 8], 1), &sequence_data(), 1), 12),
    ];
    let mut rng = TrainRng::new(5);
    for (file, net, steps) in cases {
        let path = dir.path().join(file);
        write_onnx(&net, &path).unwrap();
        let loaded = load_onnx(&path).unwrap();
        assert_eq!(loaded.layers, net.layers, "{file}: the loader does not read back the trained weights");
        for _ in 0..5 {
            let run: Vec<Vec<f64>> = (0..steps).map(|_| vec![rng.symmetric(1.0), rng.symmetric(1.0)]).collect();
            let d = cross_check_with_tract(&path, &loaded, &run).unwrap();
            assert!(d < 1e-5, "{file}: tract differs by {d:e}");
        }
    }
}
