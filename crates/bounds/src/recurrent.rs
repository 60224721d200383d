//! Recurrent (Elman) networks as feed-forward graphs over `[inputs; previous hidden states]`.
//!
//! A step `h_t = act(W_in z + W_rec h_{t-1} + b)` is an ordinary stage once `h_{t-1}` sits right after
//! `z` in the stage input: its block is `[W_in | W_rec]`. Everything else a step needs later travels
//! as exact copies: the previous hidden states of recurrent layers not reached yet, the inputs of
//! later steps (when unrolling), and the new hidden states already computed. Between values the
//! layout is kept canonical, `[current; pending hidden (by layer); later inputs (by step); new
//! hidden (by layer)]`, so a recurrent layer always finds its previous state right after its input.
//!
//! Graph input, one step: `[x; h^1; ...; h^m]`; unrolled over T steps: `[x_1; ...; x_T; h_0^1; ...;
//! h_0^m]`. Graph output: `[y; h_new^1; ...; h_new^m]` of the (last) step.

use crate::InputBox;
use crate::error::BoundsError;
use crate::graph::{Graph, Stage, check_shapes};
use crate::ibp::Level;
use std::borrow::Cow;
use trestle_ir::network::{Layer, Matrix, Network};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// The value the next layer reads.
    Current,
    /// Previous hidden state of recurrent layer j, not consumed yet.
    Hidden(usize),
    /// Input of a later step.
    Input(usize),
    /// New hidden state of recurrent layer j.
    Saved(usize),
}

type Layout = Vec<(Slot, usize)>;

fn offset_of(layout: &Layout, slot: Slot) -> usize {
    let mut offset = 0;
    for &(s, len) in layout {
        if s == slot {
            return offset;
        }
        offset += len;
    }
    unreachable!("slot {slot:?} missing from layout {layout:?}")
}

fn width(layout: &Layout) -> usize {
    layout.iter().map(|&(_, len)| len).sum()
}

/// Copy sources that produce `wanted` (each entry: the slot it becomes and the slot it is read from).
fn copies_for(from: &Layout, wanted: &[(Slot, Slot, usize)]) -> Vec<usize> {
    wanted
        .iter()
        .flat_map(|&(_, src, len)| (0..len).map(move |k| (src, k)))
        .map(|(src, k)| offset_of(from, src) + k)
        .collect()
}

/// Number of graph inputs of one step: the network input followed by every recurrent layer's
/// previous hidden state.
pub fn step_inputs(net: &Network) -> usize {
    net.input_dim() + net.hidden_dims().iter().sum::<usize>()
}

/// The graph of `steps` consecutive steps (see the module doc for its input and output layout).
pub(crate) fn unrolled_graph(net: &Network, steps: usize) -> Result<Graph<'_>, BoundsError> {
    check_shapes(net)?;
    let hidden = net.hidden_dims();
    let n_in = net.input_dim();
    let mut stages = Vec::new();
    let mut layer_stages = Vec::with_capacity(steps * net.layers.len());
    // External layout: all step inputs, then the initial hidden states.
    let mut layout: Layout = (0..steps).map(|s| (if s == 0 { Slot::Current } else { Slot::Input(s) }, n_in)).collect();
    layout.extend(hidden.iter().enumerate().map(|(j, &h)| (Slot::Hidden(j), h)));
    let canonical: Vec<(Slot, Slot, usize)> = std::iter::once((Slot::Current, Slot::Current, n_in))
        .chain(hidden.iter().enumerate().map(|(j, &h)| (Slot::Hidden(j), Slot::Hidden(j), h)))
        .chain((1..steps).map(|s| (Slot::Input(s), Slot::Input(s), n_in)))
        .collect();
    if steps > 1 && !hidden.is_empty() {
        stages.push(Stage::reorder(copies_for(&layout, &canonical), width(&layout)));
        layout = canonical.iter().map(|&(slot, _, len)| (slot, len)).collect();
    }
    for step in 0..steps {
        let mut current_is_hidden: Option<usize> = None;
        let mut recurrent_index = 0;
        for layer in &net.layers {
            let input_dim = width(&layout);
            let (weights, bias, activation, consumed): (Cow<'_, Matrix>, &[f64], _, usize) = match layer {
                Layer::Dense(d) => (Cow::Borrowed(&d.weights), &d.bias, d.activation, 1),
                Layer::Recurrent(r) => {
                    debug_assert_eq!(layout[1].0, Slot::Hidden(recurrent_index));
                    (Cow::Owned(concat_columns(&r.input_weights, &r.recurrent_weights)), &r.bias, r.activation, 2)
                }
            };
            let mut wanted: Vec<(Slot, Slot, usize)> = layout[consumed..].iter().map(|&(s, len)| (s, s, len)).collect();
            if let Some(j) = current_is_hidden {
                wanted.push((Slot::Saved(j), Slot::Current, layout[0].1));
            }
            let copies = copies_for(&layout, &wanted);
            let rows = weights.rows;
            layer_stages.push(stages.len());
            stages.push(Stage::new(weights, Cow::Borrowed(bias), activation, copies, input_dim));
            layout = std::iter::once((Slot::Current, rows))
                .chain(wanted.iter().map(|&(slot, _, len)| (slot, len)))
                .collect();
            current_is_hidden = match layer {
                Layer::Recurrent(_) => {
                    recurrent_index += 1;
                    Some(recurrent_index - 1)
                }
                Layer::Dense(_) => None,
            };
        }
        let new_hidden = |j: usize| if current_is_hidden == Some(j) { Slot::Current } else { Slot::Saved(j) };
        let next: Vec<(Slot, Slot, usize)> = if step + 1 < steps {
            std::iter::once((Slot::Current, Slot::Input(step + 1), n_in))
                .chain(hidden.iter().enumerate().map(|(j, &h)| (Slot::Hidden(j), new_hidden(j), h)))
                .chain((step + 2..steps).map(|s| (Slot::Input(s), Slot::Input(s), n_in)))
                .collect()
        } else {
            std::iter::once((Slot::Current, Slot::Current, layout[0].1))
                .chain(hidden.iter().enumerate().map(|(j, &h)| (Slot::Saved(j), new_hidden(j), h)))
                .collect()
        };
        stages.push(Stage::reorder(copies_for(&layout, &next), width(&layout)));
        layout = next.iter().map(|&(slot, _, len)| (slot, len)).collect();
    }
    let input_dim = steps * n_in + hidden.iter().sum::<usize>();
    Ok(Graph { input_dim, stages, layer_stages })
}

/// The graph of `inputs_per_step.len()` steps and its input box `[x_1; ...; x_T; h_0^1; ...]`, the
/// boxes checked against the network's dimensions.
pub(crate) fn unrolled_input<'n>(
    net: &'n Network,
    inputs_per_step: &[InputBox],
    hidden0: &[InputBox],
) -> Result<(Graph<'n>, Level), BoundsError> {
    if inputs_per_step.is_empty() {
        return Err(BoundsError::Dimension { what: "inputs per step".into(), found: 0, expected: 1 });
    }
    let graph = unrolled_graph(net, inputs_per_step.len())?;
    let hidden_dims = net.hidden_dims();
    if hidden0.len() != hidden_dims.len() {
        return Err(BoundsError::Dimension {
            what: "hidden boxes".into(),
            found: hidden0.len(),
            expected: hidden_dims.len(),
        });
    }
    let (mut lo, mut hi) = (Vec::with_capacity(graph.input_dim), Vec::with_capacity(graph.input_dim));
    for (t, b) in inputs_per_step.iter().enumerate() {
        crate::validate(b, &format!("input box of step {}", t + 1), net.input_dim())?;
        lo.extend_from_slice(&b.lo);
        hi.extend_from_slice(&b.hi);
    }
    for (j, (b, &dim)) in hidden0.iter().zip(&hidden_dims).enumerate() {
        crate::validate(b, &format!("hidden box {j}"), dim)?;
        lo.extend_from_slice(&b.lo);
        hi.extend_from_slice(&b.hi);
    }
    Ok((graph, Level::new(lo, hi)))
}

/// `[a | b]` for matrices with equal row counts.
fn concat_columns(a: &Matrix, b: &Matrix) -> Matrix {
    let mut data = Vec::with_capacity(a.rows * (a.cols + b.cols));
    for r in 0..a.rows {
        data.extend_from_slice(a.row(r));
        data.extend_from_slice(b.row(r));
    }
    Matrix::new(a.rows, a.cols + b.cols, data)
}
