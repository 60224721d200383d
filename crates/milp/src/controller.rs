//! The controllers of one step: each reads its observation, runs its network (a fresh copy; the
//! one its selector picks) and sets its actions, real outputs or the argmax index by the
//! lowest-index rule ([`crate::argmax`]).
//!
//! A selector whose enclosure holds one integer value picks its network outright (the inductive
//! check splits regions so that it does). Otherwise each possible network is encoded on the same
//! observation and one binary per value picks it: `selector = sum v s_v`, real actions equal the
//! picked network's outputs by big-M, and the argmax one-hot is `o_k = sum_v (s_v and o_{v,k})`.
//! Selector values that pick no network have no successor and are excluded.

use crate::argmax::{encode_argmax, score_gaps_step};
use crate::error::MilpError;
use crate::expr::{Bounded, Lit, VarMap, encode_expr, select};
use crate::model::{MilpModel, constant};
use crate::network::{box_of, encode_network_step};
use crate::state::Hidden;
use crate::step::StepOptions;
use good_lp::Expression;
use trestle_bounds::InputBox;
use trestle_ir::Interval;
use trestle_ir::system::{Controller, ControllerOutput, Policy, System};

/// What the controllers of a step set, besides the actions in the variable map.
pub struct Controllers {
    /// The one-hot choice of each argmax action (by action index).
    pub onehots: Vec<Option<Vec<Expression>>>,
    pub hidden: Hidden,
    pub ties_possible: bool,
}

/// What one network copy gives a controller.
enum NetworkOutput {
    Real(Vec<Bounded>),
    Argmax { onehot: Vec<Expression>, index: Bounded, ties_possible: bool },
}

/// Encodes every controller in order, setting `vars.action`. `None` when a controller's selector
/// can pick no network.
pub fn encode_controllers(
    model: &mut MilpModel,
    sys: &System,
    vars: &mut VarMap,
    hidden: &Hidden,
    opts: &StepOptions,
) -> Result<Option<Controllers>, MilpError> {
    let mut out = Controllers { onehots: vec![None; sys.actions.len()], hidden: Vec::new(), ties_possible: false };
    for (ci, c) in sys.controllers.iter().enumerate() {
        let Some(picks) = networks_of(model, c, vars)? else { return Ok(None) };
        let inputs: Vec<Bounded> = c.inputs.iter().map(|e| encode_expr(model, e, vars)).collect::<Result<_, _>>()?;
        let mut outputs = Vec::with_capacity(picks.len());
        // A selector never picks among recurrent networks (validated): only a single network
        // has hidden states to carry.
        let mut new_hidden = Vec::new();
        for (net, _) in &picks {
            let (output, h) = run_network(model, sys, *net, c, &inputs, &hidden[ci], opts)?;
            outputs.push(output);
            new_hidden = h;
        }
        let lits: Vec<Lit> = picks.into_iter().map(|(_, lit)| lit).collect();
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    let choices: Vec<(Lit, Bounded)> = lits
                        .iter()
                        .zip(&outputs)
                        .map(|(lit, o)| match o {
                            NetworkOutput::Real(values) => (lit.clone(), values[k].clone()),
                            NetworkOutput::Argmax { .. } => unreachable!("the controller's outputs are real"),
                        })
                        .collect();
                    vars.action[a] = select(model, &choices, "output of the selected network")?;
                }
            }
            ControllerOutput::Argmax(a) => {
                let (onehot, index, ties) = combine_argmax(model, &lits, outputs);
                out.ties_possible |= ties;
                vars.action[*a] = index;
                out.onehots[*a] = Some(onehot);
            }
        }
        out.hidden.push(new_hidden);
    }
    Ok(Some(out))
}

/// The networks the controller may run here, each with the literal that picks it (`Lit::True`
/// for a single one). `None` when none can be picked.
fn networks_of(model: &mut MilpModel, c: &Controller, vars: &VarMap) -> Result<Option<Vec<(usize, Lit)>>, MilpError> {
    let (by, networks) = match &c.policy {
        Policy::Network(k) => return Ok(Some(vec![(*k, Lit::True)])),
        Policy::Select { by, networks } => (*by, networks),
    };
    let selector = &vars.state[by];
    let lo = selector.iv.lo.ceil().max(0.0);
    let hi = selector.iv.hi.floor().min(networks.len() as f64 - 1.0);
    if !(lo.is_finite() && hi.is_finite()) || lo > hi {
        return Ok(None);
    }
    let values: Vec<usize> = (lo as usize..=hi as usize).collect();
    if let [v] = values[..] {
        return Ok(Some(vec![(networks[v], Lit::True)]));
    }
    let (mut sum, mut value) = (Expression::default(), Expression::default());
    let mut picks = Vec::with_capacity(values.len());
    for v in values {
        let s = model.binary();
        sum.add_mul(1.0, s);
        value.add_mul(v as f64, s);
        picks.push((networks[v], Lit::Expr(Expression::from(s))));
    }
    model.add(sum.eq(1.0));
    model.add((selector.expr.clone() - value).eq(0.0));
    Ok(Some(picks))
}

/// One fresh copy of network `net` on the controller's observation: its outputs (real, or the
/// argmax choice) and its new hidden states.
fn run_network(
    model: &mut MilpModel,
    sys: &System,
    net: usize,
    c: &Controller,
    inputs: &[Bounded],
    hidden: &[Vec<Bounded>],
    opts: &StepOptions,
) -> Result<(NetworkOutput, Vec<Vec<Bounded>>), MilpError> {
    let network = &sys.networks[net].network;
    let enc = encode_network_step(model, network, inputs, hidden, &opts.bounds)?;
    let output = match &c.output {
        ControllerOutput::Actions(_) => NetworkOutput::Real(
            enc.outputs.iter().zip(&enc.output_bounds).map(|(e, iv)| Bounded::new(e.clone(), *iv)).collect(),
        ),
        ControllerOutput::Argmax(_) => {
            let hidden_boxes: Vec<InputBox> = hidden.iter().map(|h| box_of(h)).collect();
            let gaps = score_gaps_step(network, &box_of(inputs), &hidden_boxes, &opts.bounds, &enc.output_bounds)?;
            let am = encode_argmax(model, &enc.outputs, &gaps, opts.strictness)?;
            NetworkOutput::Argmax {
                onehot: am.onehot,
                index: Bounded::new(am.index, am.index_bounds),
                ties_possible: am.ties_possible,
            }
        }
    };
    Ok((output, enc.hidden))
}

/// The argmax of the picked network: `o_k = sum_v (s_v and o_{v,k})`, the index `sum_k k o_k`.
fn combine_argmax(
    model: &mut MilpModel,
    lits: &[Lit],
    outputs: Vec<NetworkOutput>,
) -> (Vec<Expression>, Bounded, bool) {
    let mut parts = outputs.into_iter().map(|o| match o {
        NetworkOutput::Argmax { onehot, index, ties_possible } => (onehot, index, ties_possible),
        NetworkOutput::Real(_) => unreachable!("the controller's output is an argmax"),
    });
    if let [Lit::True] = lits {
        return parts.next().expect("one network");
    }
    let parts: Vec<_> = parts.collect();
    let n = parts[0].0.len();
    let mut onehot = vec![Expression::default(); n];
    for (lit, (o, _, _)) in lits.iter().zip(&parts) {
        for (k, sum) in onehot.iter_mut().enumerate() {
            match Lit::and(model, lit, &Lit::of(&o[k])) {
                Lit::True => sum.add_mul(1.0, constant(1.0)),
                Lit::False => {}
                Lit::Expr(e) => sum.add_mul(1.0, e),
            }
        }
    }
    let mut index = Expression::default();
    for (k, o) in onehot.iter().enumerate() {
        index.add_mul(k as f64, o.clone());
    }
    let iv = parts.iter().map(|(_, i, _)| i.iv).reduce(|a, b| a.hull(&b)).unwrap_or(Interval::point(0.0));
    let ties = parts.iter().any(|(_, _, t)| *t);
    (onehot, Bounded::new(index, iv), ties)
}
