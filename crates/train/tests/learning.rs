//! Training learns: known regression, classification and memory problems, each checked on
//! held-out data through the IR network the trainer returns (f64 forward pass, not the trainer's).

use trestle_ir::network::Network;
use trestle_train::rng::TrainRng;
use trestle_train::{Architecture, Dataset, EarlyStopping, Optimizer, StopReason, TrainConfig, train};

/// The saturated feedback law toward a goal: `u = clip(4 (g - x), -1, 1)` per coordinate.
fn feedback(x: &[f64]) -> Vec<f64> {
    let goal = [0.7, 0.3];
    x.iter().zip(goal).map(|(&xi, g)| (4.0 * (g - xi)).clamp(-1.0, 1.0)).collect()
}

/// Adam at `lr`, batches of 32.
fn adam(seed: u64, epochs: usize, lr: f64) -> TrainConfig {
    TrainConfig { seed, epochs, batch_size: 32, optimizer: Optimizer::adam(lr), ..TrainConfig::default() }
}

fn uniform_points(n: usize, seed: u64, lo: f64, hi: f64) -> Vec<Vec<f64>> {
    let mut rng = TrainRng::new(seed);
    (0..n).map(|_| vec![lo + (hi - lo) * rng.unit(), lo + (hi - lo) * rng.unit()]).collect()
}

fn grid(n: usize, lo: f64, hi: f64) -> Vec<Vec<f64>> {
    let at = |i: usize| lo + (hi - lo) * i as f64 / (n - 1) as f64;
    (0..n).flat_map(|i| (0..n).map(move |j| vec![at(i), at(j)])).collect()
}

#[test]
fn fits_a_saturated_feedback_law_on_the_unit_square() {
    let xs = uniform_points(2000, 1, 0.0, 1.0);
    let ys: Vec<Vec<f64>> = xs.iter().map(|x| feedback(x)).collect();
    let data = Dataset::regression(&xs, &ys).unwrap();
    let config = TrainConfig { lr_decay: 0.98, ..adam(5, 150, 1e-3) };
    let trained = train(&Architecture::mlp(2, &[32, 32], 2), &data, None, &config).unwrap();
    let net = trained.model.to_network("inline:feedback");
    let test = grid(41, 0.0, 1.0);
    let mean_error: f64 = test
        .iter()
        .map(|x| {
            let y = net.eval(x).unwrap();
            y.iter().zip(feedback(x)).map(|(a, b)| (a - b).abs()).sum::<f64>() / 2.0
        })
        .sum::<f64>()
        / test.len() as f64;
    assert!(mean_error < 0.02, "mean |error| {mean_error} on the grid\n{}", trained.report);
    let first = trained.report.history[0].train;
    assert!(trained.report.train.loss < first / 50.0, "the loss did not drop: {}", trained.report);
}

/// Four classes: the nearest of four centres (piecewise-linear boundaries).
fn nearest_centre(x: &[f64]) -> usize {
    let centres = [[0.5, 0.5], [-0.5, 0.4], [-0.3, -0.6], [0.6, -0.4]];
    let d = |c: &[f64; 2]| (x[0] - c[0]).powi(2) + (x[1] - c[1]).powi(2);
    (0..4).min_by(|&a, &b| d(&centres[a]).total_cmp(&d(&centres[b]))).unwrap()
}

fn argmax(v: &[f64]) -> usize {
    v.iter().enumerate().fold(0, |best, (i, &x)| if x > v[best] { i } else { best })
}

#[test]
fn classifies_four_classes() {
    let xs = uniform_points(2000, 2, -1.0, 1.0);
    let labels: Vec<usize> = xs.iter().map(|x| nearest_centre(x)).collect();
    let data = Dataset::classification(&xs, &labels, 4).unwrap();
    let held_out = uniform_points(1000, 3, -1.0, 1.0);
    let held_labels: Vec<usize> = held_out.iter().map(|x| nearest_centre(x)).collect();
    let validation = Dataset::classification(&held_out, &held_labels, 4).unwrap();
    let config =
        TrainConfig { early_stopping: Some(EarlyStopping { patience: 15, min_delta: 1e-4 }), ..adam(9, 200, 3e-3) };
    let trained = train(&Architecture::mlp(2, &[16, 16], 4), &data, Some(&validation), &config).unwrap();
    let net = trained.model.to_network("inline:classes");
    let correct = held_out.iter().zip(&held_labels).filter(|&(x, &l)| argmax(&net.eval(x).unwrap()) == l).count();
    let accuracy = correct as f64 / held_out.len() as f64;
    assert!(accuracy > 0.95, "held-out accuracy {accuracy}\n{}", trained.report);
    let reported = trained.report.validation.unwrap().accuracy.unwrap();
    assert_eq!(reported, accuracy, "the trainer's f32 evaluation and the IR's argmax disagree");
}

/// Steps of one run of `net` from the zero state.
fn run(net: &Network, steps: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut h = net.initial_hidden();
    steps.iter().map(|x| net.forward(x, &mut h).unwrap()).collect()
}

type Sequences = Vec<Vec<Vec<f64>>>;

/// `n` sequences of inputs in [-1, 1] and, at each step, the sum of the inputs so far.
fn running_sum_data(n: usize, steps: usize, seed: u64) -> (Sequences, Sequences) {
    let mut rng = TrainRng::new(seed);
    let inputs: Vec<Vec<Vec<f64>>> = (0..n).map(|_| (0..steps).map(|_| vec![rng.symmetric(1.0)]).collect()).collect();
    let targets = inputs
        .iter()
        .map(|seq| {
            let mut s = 0.0;
            seq.iter()
                .map(|x| {
                    s += x[0];
                    vec![s]
                })
                .collect()
        })
        .collect();
    (inputs, targets)
}

#[test]
fn a_recurrent_network_learns_a_running_sum() {
    let steps = 6;
    let (inputs, targets) = running_sum_data(1000, steps, 4);
    let data = Dataset::sequences(&inputs, &targets).unwrap();
    let config = TrainConfig { clip_norm: Some(1.0), lr_decay: 0.98, ..adam(3, 150, 3e-3) };
    let trained = train(&Architecture::rnn(1, &[8, 8], 1), &data, None, &config).unwrap();
    let net = trained.model.to_network("inline:sum");
    assert_eq!(net.hidden_dims(), vec![8, 8]);
    // A memoryless predictor can do no better than mean((t - 1) / 3) = 0.83 here.
    let (test_in, test_out) = running_sum_data(200, steps, 5);
    let mse: f64 = test_in
        .iter()
        .zip(&test_out)
        .flat_map(|(x, t)| run(&net, x).into_iter().zip(t.clone()).map(|(y, t)| (y[0] - t[0]).powi(2)))
        .sum::<f64>()
        / (200 * steps) as f64;
    assert!(mse < 0.01, "held-out MSE {mse}\n{}", trained.report);
}

#[test]
fn a_recurrent_classifier_remembers_the_first_sign() {
    // Class at every step: the sign of the first input; later inputs are noise of larger size.
    let (steps, n) = (5, 600);
    let mut rng = TrainRng::new(8);
    let mut inputs = Vec::new();
    let mut labels = Vec::new();
    for _ in 0..n {
        let first = if rng.unit() < 0.5 { -1.0 } else { 1.0 } * (0.2 + 0.8 * rng.unit());
        let seq: Vec<Vec<f64>> =
            (0..steps).map(|t| vec![if t == 0 { first } else { rng.symmetric(2.0) }, f64::from(t == 0)]).collect();
        labels.push(vec![usize::from(first > 0.0); steps]);
        inputs.push(seq);
    }
    let data = Dataset::class_sequences(&inputs, &labels, 2).unwrap();
    let config = TrainConfig { clip_norm: Some(1.0), target_loss: Some(0.01), ..adam(1, 100, 3e-3) };
    let trained = train(&Architecture::rnn(2, &[8], 2), &data, None, &config).unwrap();
    let net = trained.model.to_network("inline:sign");
    let correct: usize = inputs
        .iter()
        .zip(&labels)
        .map(|(x, l)| run(&net, x).iter().zip(l).filter(|&(y, &c)| argmax(y) == c).count())
        .sum();
    let accuracy = correct as f64 / (n * steps) as f64;
    assert!(accuracy > 0.98, "accuracy {accuracy}\n{}", trained.report);
    assert_eq!(trained.report.stop, StopReason::TargetLoss, "{}", trained.report);
}
