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
    let model = Model::init(arch, config.init, &mut rng)?;
    let mut run = Run {
        config,
        data,
        state: OptimizerState::new(config.optimizer, model.params.len()),
        grads: vec![0.0f32; model.params.len()],
        model,
        rng,
        order: (0..data.len()).collect(),
        lr_factor: 1.0,
    };
    let mut watch = Watch::new(&run.model);
    let (mut history, mut stop) = (Vec::new(), StopReason::EpochLimit);
    for epoch in 1..=config.epochs {
        let train_loss = run.epoch(epoch)?;
        let validation_loss = validation.map(|v| evaluate(&run.model, v).loss);
        history.push(EpochLoss { epoch, train: train_loss, validation: validation_loss });
        if let Some(reason) = watch.observe(validation_loss.unwrap_or(train_loss), epoch, &run.model, config) {
            stop = reason;
            break;
        }
    }
    let mut model = run.model;
    let mut returned_epoch = history.len();
    if config.keep_best && watch.best_epoch > 0 {
        model.params = watch.best_params;
        returned_epoch = watch.best_epoch;
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

/// The state of a training run between epochs.
struct Run<'a> {
    config: &'a TrainConfig,
    data: &'a Dataset,
    model: Model,
    state: OptimizerState,
    grads: Vec<f32>,
    rng: TrainRng,
    order: Vec<usize>,
    lr_factor: f64,
}

impl Run<'_> {
    /// One pass over the shuffled data; returns the mean training loss over its batches.
    fn epoch(&mut self, epoch: usize) -> Result<f64, TrainError> {
        let (data, config) = (self.data, self.config);
        self.rng.shuffle(&mut self.order);
        let mut loss_sum = 0.0f64;
        for batch in self.order.chunks(config.batch_size) {
            self.grads.iter_mut().for_each(|g| *g = 0.0);
            let (input, shape) = gather_inputs(data, batch);
            let acts = pass::forward(&self.model, input, shape);
            let l = batch_loss(acts.last().expect("at least one layer"), data, batch, shape.steps);
            if !l.loss_sum.is_finite() {
                return Err(TrainError::Diverged { epoch });
            }
            loss_sum += l.loss_sum;
            pass::backward(&self.model, &acts, l.grad, shape, &mut self.grads);
            if let Some(max) = config.clip_norm {
                clip_global_norm(&mut self.grads, max);
            }
            self.state.step(&mut self.model.params, &self.grads, self.lr_factor);
        }
        if self.model.params.iter().any(|p| !p.is_finite()) {
            return Err(TrainError::Diverged { epoch });
        }
        self.lr_factor *= config.lr_decay;
        Ok(loss_sum / (data.len() * data.steps()) as f64)
    }
}

/// The best parameters so far and the early-stopping count.
struct Watch {
    best_loss: f64,
    best_epoch: usize,
    best_params: Vec<f32>,
    /// Early stopping counts the epochs since the monitored loss last beat this mark by `min_delta`.
    patience_mark: f64,
    since_mark: usize,
}

impl Watch {
    fn new(model: &Model) -> Watch {
        Watch {
            best_loss: f64::INFINITY,
            best_epoch: 0,
            best_params: model.params.clone(),
            patience_mark: f64::INFINITY,
            since_mark: 0,
        }
    }

    /// Records the epoch's monitored loss; says whether to stop.
    fn observe(&mut self, monitored: f64, epoch: usize, model: &Model, config: &TrainConfig) -> Option<StopReason> {
        let min_delta = config.early_stopping.map_or(0.0, |e| e.min_delta);
        if monitored < self.patience_mark - min_delta {
            (self.patience_mark, self.since_mark) = (monitored, 0);
        } else {
            self.since_mark += 1;
        }
        if monitored < self.best_loss {
            (self.best_loss, self.best_epoch) = (monitored, epoch);
            self.best_params.clone_from(&model.params);
        }
        if config.target_loss.is_some_and(|t| monitored <= t) {
            return Some(StopReason::TargetLoss);
        }
        config.early_stopping.is_some_and(|e| self.since_mark >= e.patience).then_some(StopReason::EarlyStopping)
    }
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
