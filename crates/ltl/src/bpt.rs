//! BPT, bound propagation through time: a box of (state, hidden state) pushed one step at a time
//! through the observations, the networks (interval arithmetic, every operation rounded outward:
//! `Network::run::<Interval>`), the argmax choices that may win and every branch that may fire,
//! re-boxed after each step. Each step's box encloses every state a run can be in then, so a
//! formula true on the boxes (atoms decided by the sign of an outward-rounded interval, for any
//! signs of the coefficients: the notes' correction of the paper's test) holds on every path.
//! Sound and incomplete: an undecided atom leaves the formula undecided.

use crate::error::LtlError;
use trestle_ir::arith::Arith;
use trestle_ir::interval::Interval;
use trestle_ir::nondet;
use trestle_ir::system::{ControllerOutput, Policy, System};
use trestle_ir::{CmpOp, Env, RBox};

/// Enclosures of the state at steps `0..=k` (one interval per state variable) from the states of
/// `start` (a bounded exact box), with the recurrent controllers' hidden states carried as boxes
/// from zero.
pub fn propagate(sys: &System, start: &RBox, k: usize) -> Result<Vec<Vec<Interval>>, LtlError> {
    let Some(outer) = start.enclosing_fbox() else {
        return Err(LtlError::Unsupported("Init must be bounded in every state variable for BPT".into()));
    };
    let mut state: Vec<Interval> = outer.lo.iter().zip(&outer.hi).map(|(&l, &h)| Interval::new(l, h)).collect();
    let inputs: Vec<Interval> = sys.nondet.iter().map(nondet::hull).collect();
    let mut memory = sys
        .controllers
        .iter()
        .map(|c| match &c.policy {
            Policy::Network(n) => {
                Ok(sys.networks[*n].network.hidden_dims().into_iter().map(|d| vec![Interval::point(0.0); d]).collect())
            }
            Policy::Select { .. } => Err(LtlError::Unsupported("network selectors are not propagated by BPT".into())),
        })
        .collect::<Result<Vec<Vec<Vec<Interval>>>, LtlError>>()?;
    let mut boxes = vec![state.clone()];
    for t in 0..k {
        let actions = actions(sys, &state, &inputs, &mut memory)?;
        let env = Env::new(&state[..], &actions[..], &inputs[..]);
        let mut next: Option<Vec<Interval>> = None;
        for b in &sys.step.branches {
            if let Some((a, value)) = b.label
                && !actions[a].contains(value as f64)
            {
                continue;
            }
            if b.guard.as_ref().is_some_and(|g| g.eval_interval(&env) == Some(false)) {
                continue;
            }
            let succ: Vec<Interval> = b.updates.iter().map(|e| e.eval_interval(&env)).collect();
            next = Some(match next {
                None => succ,
                Some(n) => n.iter().zip(&succ).map(|(a, b)| a.hull(b)).collect(),
            });
        }
        state = next.ok_or_else(|| {
            LtlError::Semantics(format!(
                "no branch of the step can fire from the enclosure of step {t}: every run deadlocks"
            ))
        })?;
        boxes.push(state.clone());
    }
    Ok(boxes)
}

/// Enclosures of every action over the state box (argmax actions as the hull of the indices that
/// may win under the lowest-index rule).
fn actions(
    sys: &System,
    state: &[Interval],
    inputs: &[Interval],
    memory: &mut [Vec<Vec<Interval>>],
) -> Result<Vec<Interval>, LtlError> {
    let mut actions = vec![Interval::ENTIRE; sys.actions.len()];
    for (ci, c) in sys.controllers.iter().enumerate() {
        let env = Env::new(state, &[], inputs);
        let input: Vec<Interval> = c.inputs.iter().map(|e| e.eval_interval(&env)).collect();
        let Policy::Network(n) = c.policy else { unreachable!("selectors are refused before") };
        let out =
            sys.networks[n].network.run(&input, &mut memory[ci]).map_err(|e| LtlError::Semantics(e.to_string()))?;
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    actions[a] = out[k];
                }
            }
            ControllerOutput::Argmax(a) => {
                // Index i may win when it may beat every lower index strictly and tie or beat
                // every higher one.
                let may_win = |i: usize| {
                    out.iter().enumerate().all(|(j, o)| {
                        j == i || out[i].compare(if j < i { CmpOp::Le } else { CmpOp::Lt }, o) != Some(true)
                    })
                };
                let winners: Vec<usize> = (0..out.len()).filter(|&i| may_win(i)).collect();
                let (lo, hi) = (winners.first().copied().unwrap_or(0), winners.last().copied().unwrap_or(0));
                actions[*a] = Interval::new(lo as f64, hi as f64);
            }
        }
    }
    Ok(actions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::Pred;

    /// The notes' Figure-1 vector: z in [0, 1], [0, 2], [0, 3] at t = 1, 2, 3 by intervals.
    #[test]
    fn figure1_enclosures_grow_by_one_per_step() {
        let sys = trestle_testkit::load(&trestle_testkit::repo().join("configs/systems/rnn-figure1.toml"), &[]);
        let start = match &sys.init {
            p @ Pred::Cmp(..) | p @ Pred::And(_) => p.to_box_union(1, 4).unwrap().remove(0),
            other => panic!("{other:?}"),
        };
        let boxes = propagate(&sys, &start, 3).unwrap();
        for (t, b) in boxes.iter().enumerate() {
            assert_eq!((b[0].lo, b[0].hi), (0.0, t as f64), "step {t}");
        }
    }
}
