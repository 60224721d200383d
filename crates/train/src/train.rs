//! The training loop: epochs of shuffled mini-batches, a loss history, early stopping, and the
//! best parameters kept.

use crate::TrainError;
use crate::data::{Dataset, Targets};
use crate::loss::{self, BatchLoss};
use crate::model::{Architecture, Init, Model};
use crate::optim::{Optimizer, OptimizerState, clip_global_norm};
use crate::pass::{self, BatchShape};
use crate::rng::TrainRng;
use std::fmt;

/// Stop when the monitored loss (validation if given, else training) has not improved by more
/// than `min_delta` for `patience` epochs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EarlyStopping {
    pub patience: usize,
    pub min_delta: f64,
}

/// Everything that decides a training run. Same configuration and data, same bits out.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    /// Seeds the weight initialisation and the order of the samples in every epoch.
    pub seed: u64,
    /// At most this many passes over the data.
    pub epochs: usize,
    /// Sequences per mini-batch (the last batch of an epoch may be smaller).
    pub batch_size: usize,
    pub optimizer: Optimizer,
    pub init: Init,
    /// The learning rate is multiplied by this after every epoch (1 = constant).
    pub lr_decay: f64,
    /// Rescale each batch's gradient to at most this Euclidean norm (useful for recurrent layers).
    pub clip_norm: Option<f64>,
    pub early_stopping: Option<EarlyStopping>,
    /// Stop as soon as the monitored loss is at most this.
    pub target_loss: Option<f64>,
    /// Return the parameters of the epoch with the lowest monitored loss rather than the last.
    pub keep_best: bool,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            seed: 0,
            epochs: 100,
            batch_size: 64,
            optimizer: Optimizer::adam(1e-3),
            init: Init::He,
            lr_decay: 1.0,
            clip_norm: None,
            early_stopping: None,
            target_loss: None,
            keep_best: true,
        }
    }
}

/// Why training ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    EpochLimit,
    EarlyStopping,
    TargetLoss,
}

/// Loss (mean over rows; per-row MSE is the mean over the outputs) and the metric of the task.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metrics {
    pub loss: f64,
    /// Regression: mean |y - t| over all outputs of all rows.
    pub mean_abs_error: Option<f64>,
    /// Classification: fraction of rows whose largest output (first on ties) is the label.
    pub accuracy: Option<f64>,
}

/// One epoch: the mean training loss over its batches (as the parameters moved) and the
/// validation loss after it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochLoss {
    pub epoch: usize,
    pub train: f64,
    pub validation: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TrainReport {
    pub history: Vec<EpochLoss>,
    /// The epoch whose parameters were returned (the last one unless `keep_best`).
    pub returned_epoch: usize,
    pub stop: StopReason,
    /// The returned model evaluated on the training and validation data.
    pub train: Metrics,
    pub validation: Option<Metrics>,
}

/// A trained model and how it got there.
#[derive(Clone, Debug)]
pub struct Trained {
    pub model: Model,
    pub report: TrainReport,
}

fn check_inputs(arch: &Architecture, data: &Dataset, config: &TrainConfig) -> Result<(), TrainError> {
    arch.check()?;
    config.optimizer.check().map_err(TrainError::Config)?;
    if config.batch_size == 0 || config.epochs == 0 {
        return Err(TrainError::Config("batch_size and epochs must be positive".into()));
    }
    if !(config.lr_decay > 0.0 && config.lr_decay <= 1.0) || config.clip_norm.is_some_and(|c| c.is_nan() || c <= 0.0) {
        return Err(TrainError::Config("lr_decay must be in (0, 1] and clip_norm positive".into()));
    }
    fit(arch, data, "training")
}

fn fit(arch: &Architecture, data: &Dataset, name: &str) -> Result<(), TrainError> {
    if data.input_width() != arch.input || data.output_width() != arch.output() {
        return Err(TrainError::Data(format!(
            "the {name} data maps {} inputs to {} outputs, the architecture {:?} does not",
            data.input_width(),
            data.output_width(),
            arch.sizes()
        )));
    }
    Ok(())
}

/// Trains `arch` on `data`; `validation`, when given, is what early stopping and `keep_best`
/// watch. Deterministic: the result depends on the arguments only (not on the machine or on
/// the number of threads).
pub fn train(
    arch: &Architecture,
    data: &Dataset,
    validation: Option<&Dataset>,
    config: &TrainConfig,
) -> Result<Trained, TrainError> {
    check_inputs(arch, data, config)?;
    if let Some(v) = validation {
        fit(arch, v, "validation")?;
        if std::mem::discriminant(v.targets()) != std::mem::discriminant(data.targets()) {
            return Err(TrainError::Data("validation and training targets are of different kinds".into()));
        }
    }
    let mut rng = TrainRng::new(config.seed);
    let mut model = Model::init(arch, config.init, &mut rng)?;
    let mut state = OptimizerState::new(config.optimizer, model.params.len());
    let mut grads = vec![0.0f32; model.params.len()];
    let mut order: Vec<usize> = (0..data.len()).collect();
    let (mut history, mut best) = (Vec::new(), (f64::INFINITY, 0, model.params.clone()));
    let (mut lr_factor, mut stop) = (1.0f64, StopReason::EpochLimit);
    // Early stopping counts epochs since the monitored loss last beat this mark by min_delta.
    let (mut patience_mark, mut since_best) = (f64::INFINITY, 0usize);
    for epoch in 1..=config.epochs {
        rng.shuffle(&mut order);
        let mut loss_sum = 0.0f64;
        for batch in order.chunks(config.batch_size) {
            grads.iter_mut().for_each(|g| *g = 0.0);
            let (input, shape) = gather_inputs(data, batch);
            let acts = pass::forward(&model, input, shape);
            let out = acts.last().expect("at least one layer");
            let l = batch_loss(out, data, batch, shape.steps);
            if !l.loss_sum.is_finite() {
                return Err(TrainError::Diverged { epoch });
            }
            loss_sum += l.loss_sum;
            pass::backward(&model, &acts, l.grad, shape, &mut grads);
            if let Some(max) = config.clip_norm {
                clip_global_norm(&mut grads, max);
            }
            state.step(&mut model.params, &grads, lr_factor);
        }
        if model.params.iter().any(|p| !p.is_finite()) {
            return Err(TrainError::Diverged { epoch });
        }
        lr_factor *= config.lr_decay;
        let train_loss = loss_sum / (data.len() * data.steps()) as f64;
        let validation_loss = validation.map(|v| evaluate(&model, v).loss);
        history.push(EpochLoss { epoch, train: train_loss, validation: validation_loss });
        let monitored = validation_loss.unwrap_or(train_loss);
        let min_delta = config.early_stopping.map_or(0.0, |e| e.min_delta);
        if monitored < patience_mark - min_delta {
            (patience_mark, since_best) = (monitored, 0);
        } else {
            since_best += 1;
        }
        if monitored < best.0 {
            best = (monitored, epoch, model.params.clone());
        }
        if config.target_loss.is_some_and(|t| monitored <= t) {
            stop = StopReason::TargetLoss;
            break;
        }
        if config.early_stopping.is_some_and(|e| since_best >= e.patience) {
            stop = StopReason::EarlyStopping;
            break;
        }
    }
    let mut returned_epoch = history.len();
    if config.keep_best && best.1 > 0 {
        model.params = best.2;
        returned_epoch = best.1;
    }
    let report = TrainReport {
        history,
        returned_epoch,
        stop,
        train: evaluate(&model, data),
        validation: validation.map(|v| evaluate(&model, v)),
    };
    Ok(Trained { model, report })
}

/// The batch's inputs, step-major (row `t * batch + s`).
fn gather_inputs(data: &Dataset, batch: &[usize]) -> (Vec<f32>, BatchShape) {
    let shape = BatchShape { batch: batch.len(), steps: data.steps };
    let width = data.input;
    let mut input = Vec::with_capacity(shape.rows() * width);
    for t in 0..data.steps {
        for &s in batch {
            let start = (s * data.steps + t) * width;
            input.extend_from_slice(&data.inputs[start..start + width]);
        }
    }
    (input, shape)
}

fn batch_loss(out: &[f32], data: &Dataset, batch: &[usize], steps: usize) -> BatchLoss {
    let step_major = |per_row: usize, values: &[f32]| {
        let mut v = Vec::with_capacity(batch.len() * steps * per_row);
        for t in 0..steps {
            for &s in batch {
                let start = (s * steps + t) * per_row;
                v.extend_from_slice(&values[start..start + per_row]);
            }
        }
        v
    };
    match &data.targets {
        Targets::Regression { width, values } => loss::mse(out, &step_major(*width, values), *width),
        Targets::Classes { classes, labels } => {
            let mut l = Vec::with_capacity(batch.len() * steps);
            for t in 0..steps {
                l.extend(batch.iter().map(|&s| labels[s * steps + t]));
            }
            loss::cross_entropy(out, &l, *classes)
        }
    }
}

/// Loss and metric of `model` on `data` (in chunks of sequences, in order).
pub fn evaluate(model: &Model, data: &Dataset) -> Metrics {
    const CHUNK: usize = 1024;
    let (mut loss_sum, mut metric_sum) = (0.0f64, 0.0f64);
    let all: Vec<usize> = (0..data.len()).collect();
    for batch in all.chunks(CHUNK) {
        let (input, shape) = gather_inputs(data, batch);
        let acts = pass::forward(model, input, shape);
        let l = batch_loss(acts.last().expect("at least one layer"), data, batch, shape.steps);
        loss_sum += l.loss_sum;
        metric_sum += l.metric_sum;
    }
    let rows = (data.len() * data.steps()) as f64;
    match data.targets() {
        Targets::Regression { width, .. } => {
            Metrics { loss: loss_sum / rows, mean_abs_error: Some(metric_sum / (rows * *width as f64)), accuracy: None }
        }
        Targets::Classes { .. } => {
            Metrics { loss: loss_sum / rows, mean_abs_error: None, accuracy: Some(metric_sum / rows) }
        }
    }
}

impl fmt::Display for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "loss {:.6}", self.loss)?;
        if let Some(e) = self.mean_abs_error {
            write!(f, ", mean |error| {e:.6}")?;
        }
        if let Some(a) = self.accuracy {
            write!(f, ", accuracy {:.2}%", 100.0 * a)?;
        }
        Ok(())
    }
}

impl fmt::Display for TrainReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reason = match self.stop {
            StopReason::EpochLimit => "epoch limit",
            StopReason::EarlyStopping => "early stopping",
            StopReason::TargetLoss => "target loss reached",
        };
        writeln!(f, "{} epochs ({reason}); parameters of epoch {}", self.history.len(), self.returned_epoch)?;
        for e in &self.history {
            write!(f, "  epoch {:>4}: train loss {:.6}", e.epoch, e.train)?;
            if let Some(v) = e.validation {
                write!(f, ", validation loss {v:.6}")?;
            }
            writeln!(f)?;
        }
        write!(f, "train: {}", self.train)?;
        if let Some(v) = &self.validation {
            write!(f, "; validation: {v}")?;
        }
        Ok(())
    }
}
