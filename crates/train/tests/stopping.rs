//! Early stopping returns the best epoch's parameters; bad data and settings are errors, and a
//! run that blows up says so instead of returning non-finite weights.

use trestle_train::rng::TrainRng;
use trestle_train::{Architecture, Dataset, EarlyStopping, Optimizer, StopReason, TrainConfig, TrainError, train};

fn noisy_line(n: usize, seed: u64) -> Dataset {
    // Targets with noise the network cannot fit, so the validation loss stops improving.
    let mut rng = TrainRng::new(seed);
    let xs: Vec<Vec<f64>> = (0..n).map(|_| vec![rng.symmetric(1.0)]).collect();
    let ys: Vec<Vec<f64>> = xs.iter().map(|x| vec![x[0] + rng.symmetric(0.5)]).collect();
    Dataset::regression(&xs, &ys).unwrap()
}

#[test]
fn early_stopping_returns_the_parameters_of_the_best_epoch() {
    let (data, validation) = (noisy_line(200, 1), noisy_line(200, 2));
    let config = TrainConfig {
        seed: 4,
        epochs: 500,
        batch_size: 8,
        optimizer: Optimizer::adam(3e-2),
        early_stopping: Some(EarlyStopping { patience: 5, min_delta: 0.0 }),
        ..TrainConfig::default()
    };
    let trained = train(&Architecture::mlp(1, &[32, 32], 1), &data, Some(&validation), &config).unwrap();
    let r = &trained.report;
    assert_eq!(r.stop, StopReason::EarlyStopping, "{r}");
    let losses: Vec<f64> = r.history.iter().map(|e| e.validation.unwrap()).collect();
    let best = losses.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(losses[r.returned_epoch - 1], best, "{r}");
    assert_eq!(r.history.len(), r.returned_epoch + 5, "stopped 5 epochs after the best: {r}");
    assert_eq!(r.validation.unwrap().loss, best, "the returned model is the best epoch's");

    let last = train(
        &Architecture::mlp(1, &[32, 32], 1),
        &data,
        Some(&validation),
        &TrainConfig { keep_best: false, ..config },
    )
    .unwrap();
    assert_eq!(last.report.returned_epoch, last.report.history.len());
    assert_eq!(last.report.validation.unwrap().loss, last.report.history.last().unwrap().validation.unwrap());
}

#[test]
fn bad_data_and_settings_are_errors() {
    let data = noisy_line(10, 1);
    let mlp = Architecture::mlp(1, &[4], 1);
    let run = |arch: &Architecture, data: &Dataset, config: TrainConfig| train(arch, data, None, &config).unwrap_err();
    let data_err = |e: TrainError| matches!(e, TrainError::Data(_));
    assert!(data_err(run(&Architecture::mlp(2, &[4], 1), &data, TrainConfig::default())));
    assert!(matches!(run(&mlp, &data, TrainConfig { batch_size: 0, ..TrainConfig::default() }), TrainError::Config(_)));
    let bad_lr = TrainConfig { optimizer: Optimizer::adam(-1.0), ..TrainConfig::default() };
    assert!(matches!(run(&mlp, &data, bad_lr), TrainError::Config(_)));
    assert!(matches!(run(&Architecture::mlp(1, &[0], 1), &data, TrainConfig::default()), TrainError::Architecture(_)));
    assert!(Dataset::regression(&[vec![f64::NAN]], &[vec![0.0]]).is_err());
    assert!(Dataset::regression(&[vec![1.0], vec![1.0, 2.0]], &[vec![0.0], vec![0.0]]).is_err());
    assert!(Dataset::regression(&[vec![1.0]], &[]).is_err());
    assert!(Dataset::classification(&[vec![1.0]], &[3], 3).is_err());
    assert!(
        Dataset::sequences(&[vec![vec![1.0]], vec![vec![1.0], vec![2.0]]], &[vec![vec![0.0]], vec![vec![0.0]; 2]])
            .is_err()
    );
    let classes = Dataset::classification(&[vec![1.0], vec![-1.0]], &[0, 1], 2).unwrap();
    let e = train(&Architecture::mlp(1, &[4], 2), &classes, Some(&noisy_line(4, 3)), &TrainConfig::default());
    assert!(e.is_err_and(data_err), "regression validation for a classifier");
}

#[test]
fn divergence_is_reported_not_returned() {
    let data = noisy_line(50, 1);
    let config = TrainConfig { epochs: 50, optimizer: Optimizer::sgd(1e6, 0.9), ..TrainConfig::default() };
    let e = train(&Architecture::mlp(1, &[16, 16], 1), &data, None, &config).unwrap_err();
    assert!(matches!(e, TrainError::Diverged { .. }), "{e}");
}
