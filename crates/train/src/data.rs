//! Training data: samples that are sequences of `steps` input vectors with a target per step
//! (`steps = 1` for feed-forward data). Regression targets are vectors (loss: mean squared
//! error); classification targets are class indices (loss: softmax cross-entropy).

use crate::TrainError;

/// What the network is asked to produce at each step.
#[derive(Clone, Debug, PartialEq)]
pub enum Targets {
    /// `width` values per step, flattened sample-major then step-major.
    Regression { width: usize, values: Vec<f32> },
    /// One class in `0..classes` per step.
    Classes { classes: usize, labels: Vec<u32> },
}

/// Samples stored flattened as f32 (the precision the trainer computes in).
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    pub(crate) samples: usize,
    pub(crate) steps: usize,
    pub(crate) input: usize,
    /// `samples x steps x input`.
    pub(crate) inputs: Vec<f32>,
    pub(crate) targets: Targets,
}

fn flatten(rows: &[Vec<f64>], what: &str) -> Result<(usize, Vec<f32>), TrainError> {
    let width = rows.first().map_or(0, Vec::len);
    let mut out = Vec::with_capacity(rows.len() * width);
    for (i, row) in rows.iter().enumerate() {
        if row.len() != width {
            return Err(TrainError::Data(format!("{what} {i} has {} values, the first has {width}", row.len())));
        }
        if let Some(v) = row.iter().find(|v| !v.is_finite()) {
            return Err(TrainError::Data(format!("{what} {i} holds the non-finite value {v}")));
        }
        out.extend(row.iter().map(|&v| v as f32));
    }
    Ok((width, out))
}

impl Dataset {
    /// Feed-forward regression: `inputs[i]` should map to `targets[i]`.
    pub fn regression(inputs: &[Vec<f64>], targets: &[Vec<f64>]) -> Result<Dataset, TrainError> {
        if inputs.len() != targets.len() {
            return Err(TrainError::Data(format!("{} inputs but {} targets", inputs.len(), targets.len())));
        }
        let one_step = |rows: &[Vec<f64>]| rows.iter().map(|r| vec![r.clone()]).collect::<Vec<_>>();
        Dataset::sequences(&one_step(inputs), &one_step(targets))
    }

    /// Feed-forward classification: `inputs[i]` has class `labels[i]` in `0..classes`.
    pub fn classification(inputs: &[Vec<f64>], labels: &[usize], classes: usize) -> Result<Dataset, TrainError> {
        if inputs.len() != labels.len() {
            return Err(TrainError::Data(format!("{} inputs but {} labels", inputs.len(), labels.len())));
        }
        let seq: Vec<Vec<Vec<f64>>> = inputs.iter().map(|x| vec![x.clone()]).collect();
        let lab: Vec<Vec<usize>> = labels.iter().map(|&l| vec![l]).collect();
        Dataset::class_sequences(&seq, &lab, classes)
    }

    /// Sequence regression: sample `i` is the sequence `inputs[i]` (all of one length) with a
    /// target vector per step `targets[i][t]`.
    pub fn sequences(inputs: &[Vec<Vec<f64>>], targets: &[Vec<Vec<f64>>]) -> Result<Dataset, TrainError> {
        let (samples, steps, input, flat_inputs) = flatten_sequences(inputs)?;
        if targets.len() != samples || targets.iter().any(|t| t.len() != steps) {
            return Err(TrainError::Data(format!("expected {samples} target sequences of {steps} steps")));
        }
        let rows: Vec<Vec<f64>> = targets.iter().flatten().cloned().collect();
        let (width, values) = flatten(&rows, "target")?;
        if width == 0 {
            return Err(TrainError::Data("targets are empty vectors".into()));
        }
        Ok(Dataset { samples, steps, input, inputs: flat_inputs, targets: Targets::Regression { width, values } })
    }

    /// Sequence classification: a class per step.
    pub fn class_sequences(
        inputs: &[Vec<Vec<f64>>],
        labels: &[Vec<usize>],
        classes: usize,
    ) -> Result<Dataset, TrainError> {
        let (samples, steps, input, flat_inputs) = flatten_sequences(inputs)?;
        if labels.len() != samples || labels.iter().any(|l| l.len() != steps) {
            return Err(TrainError::Data(format!("expected {samples} label sequences of {steps} steps")));
        }
        if classes < 2 {
            return Err(TrainError::Data(format!("{classes} classes: at least 2 are needed")));
        }
        if let Some(l) = labels.iter().flatten().find(|&&l| l >= classes) {
            return Err(TrainError::Data(format!("label {l} is not in 0..{classes}")));
        }
        let labels = labels.iter().flatten().map(|&l| l as u32).collect();
        Ok(Dataset { samples, steps, input, inputs: flat_inputs, targets: Targets::Classes { classes, labels } })
    }

    pub fn len(&self) -> usize {
        self.samples
    }

    pub fn is_empty(&self) -> bool {
        self.samples == 0
    }

    pub fn steps(&self) -> usize {
        self.steps
    }

    pub fn input_width(&self) -> usize {
        self.input
    }

    /// Width of the network output the targets need.
    pub fn output_width(&self) -> usize {
        match &self.targets {
            Targets::Regression { width, .. } => *width,
            Targets::Classes { classes, .. } => *classes,
        }
    }

    pub fn targets(&self) -> &Targets {
        &self.targets
    }
}

fn flatten_sequences(inputs: &[Vec<Vec<f64>>]) -> Result<(usize, usize, usize, Vec<f32>), TrainError> {
    let samples = inputs.len();
    let steps = inputs.first().map_or(0, Vec::len);
    if samples == 0 || steps == 0 {
        return Err(TrainError::Data("no samples".into()));
    }
    if let Some(i) = inputs.iter().position(|s| s.len() != steps) {
        return Err(TrainError::Data(format!("sequence {i} has {} steps, the first has {steps}", inputs[i].len())));
    }
    let rows: Vec<Vec<f64>> = inputs.iter().flatten().cloned().collect();
    let (input, flat) = flatten(&rows, "input")?;
    if input == 0 {
        return Err(TrainError::Data("inputs are empty vectors".into()));
    }
    Ok((samples, steps, input, flat))
}
