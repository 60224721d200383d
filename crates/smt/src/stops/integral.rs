//! Which updates of `int` and `bool` variables are integers at every state of a stop query, decided
//! by their form before Z3 is asked (issue 34.5).
//!
//! Z3's mixed integer-real arithmetic can spend its whole time limit on "`x + 1` is an integer"
//! for integers near 2^53 (branch and bound over a range of 2^53 values), which left the planted
//! truth `int-beyond-f64-safe` unknown. An update that is integral by its form
//! ([`trestle_ir::stops::integral_by_form`]: an integer-coefficient affine form of integer
//! variables plus an integer constant, `min`/`max`/`abs` of such forms, lookups with integer
//! entries) is an integer on every integral state, so its non-integrality term is left out of the
//! query. Under [`StopActions::Networks`], a network whose every neuron has a known phase on the
//! query's box is an affine map of its observation there; its real actions are replaced by that
//! map's exact rational form before the test, so an identity network's `a + 1` counts as integral
//! when the map's coefficients and constant are integers and the observation is integral.
//! Everything else keeps Z3's term: leaving a term out only where the value is an integer in every
//! run of the system never hides a stop.

use super::StopActions;
use crate::inductive::{NetworkPhases, Phase};
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::network::{Activation, Layer, Network};
use trestle_ir::num::rational_from_f64;
use trestle_ir::system::{ControllerOutput, Policy, VarKind};
use trestle_ir::{Rational, System};

/// Most multiply-adds spent composing one network's layers into its affine map (beyond it the
/// network's actions stay opaque and Z3 decides integrality).
const MAX_COMPOSE_WORK: usize = 1 << 20;

/// `integral[b][i]`: the update of state variable `i` in branch `b` is an integer at every state
/// of the query (always `false` for real variables, which need no such test).
pub(super) fn integral_updates(sys: &System, actions: &StopActions<'_>) -> Vec<Vec<bool>> {
    let affine = match actions {
        StopActions::Networks(phases) => affine_actions(sys, phases),
        StopActions::Post(_) => vec![None; sys.actions.len()],
    };
    let substitute = |v: VarRef| match v {
        VarRef::Action(a) => affine[a].clone(),
        _ => None,
    };
    sys.step
        .branches
        .iter()
        .map(|b| {
            sys.state
                .iter()
                .zip(&b.updates)
                .map(|(v, u)| {
                    v.kind != VarKind::Real && trestle_ir::stops::integral_by_form(sys, &u.substitute(&substitute))
                })
                .collect()
        })
        .collect()
}

/// Each real action of a feed-forward network controller whose neurons all have a known phase
/// (`phases[c][0]` for controller `c`): the network's output as an exact affine expression of the
/// controller's observation. `None` for the others.
fn affine_actions(sys: &System, phases: &[Vec<Option<NetworkPhases>>]) -> Vec<Option<Expr>> {
    let mut out = vec![None; sys.actions.len()];
    for (c, ctrl) in sys.controllers.iter().enumerate() {
        let (Policy::Network(n), ControllerOutput::Actions(ids)) = (&ctrl.policy, &ctrl.output) else { continue };
        let Some(p) = phases.get(c).and_then(|p| p.first()).and_then(Option::as_ref) else { continue };
        let Some(map) = affine_map(&sys.networks[*n].network, p, ctrl.inputs.len()) else { continue };
        for (&a, (coeffs, constant)) in ids.iter().zip(map) {
            let mut e = Expr::Const(constant);
            for (k, input) in coeffs.into_iter().zip(&ctrl.inputs) {
                if k != Rational::from_integer(0.into()) {
                    e = Expr::Add(Box::new(e), Box::new(Expr::Mul(Box::new(Expr::Const(k)), Box::new(input.clone()))));
                }
            }
            out[a] = Some(e);
        }
    }
    out
}

/// An affine form over the network's inputs: coefficients and constant.
type Form = (Vec<Rational>, Rational);

/// `net` on its inputs as exact affine forms, one per output, when every neuron follows one known
/// piece (identity layers, or a fixed phase of a piecewise-linear activation); `None` otherwise
/// (an unstable neuron, tanh or sigmoid, a recurrent layer, or more work than
/// [`MAX_COMPOSE_WORK`]).
fn affine_map(net: &Network, phases: &NetworkPhases, inputs: usize) -> Option<Vec<Form>> {
    let zero = || Rational::from_integer(0.into());
    let mut forms: Vec<Form> = (0..inputs)
        .map(|i| {
            let mut e = vec![zero(); inputs];
            e[i] = Rational::from_integer(1.into());
            (e, zero())
        })
        .collect();
    let mut work = 0usize;
    for (l, layer) in net.layers.iter().enumerate() {
        let Layer::Dense(d) = layer else { return None };
        work = work.saturating_add(d.weights.rows.saturating_mul(d.weights.cols).saturating_mul(inputs + 1));
        if work > MAX_COMPOSE_WORK || d.weights.cols != forms.len() {
            return None;
        }
        let mut next = Vec::with_capacity(d.weights.rows);
        for k in 0..d.weights.rows {
            let mut z: Form = (vec![zero(); inputs], rational_from_f64(d.bias[k]));
            for (&w, (coeffs, constant)) in d.weights.row(k).iter().zip(&forms) {
                if w == 0.0 {
                    continue;
                }
                let w = rational_from_f64(w);
                for (zi, ci) in z.0.iter_mut().zip(coeffs) {
                    *zi += &w * ci;
                }
                z.1 += &w * constant;
            }
            let phase = phases.0.get(l).and_then(|p| p.get(k)).copied().unwrap_or(Phase::Unstable);
            let constant = |c: f64| c.is_finite().then(|| (vec![zero(); inputs], rational_from_f64(c)));
            next.push(match (d.activation, phase) {
                (Activation::Identity, _) => z,
                (Activation::Tanh | Activation::Sigmoid, _) | (_, Phase::Unstable) => return None,
                (_, Phase::Active) => z,
                (Activation::Relu, Phase::Inactive) => (vec![zero(); inputs], zero()),
                (Activation::LeakyRelu { alpha }, Phase::Inactive) => {
                    let alpha = rational_from_f64(alpha);
                    (z.0.iter().map(|c| &alpha * c).collect(), &alpha * &z.1)
                }
                (Activation::Clip { lo, .. }, Phase::Inactive) => constant(lo)?,
                (Activation::Clip { hi, .. }, Phase::Saturated) => constant(hi)?,
                _ => return None,
            });
        }
        forms = next;
    }
    Some(forms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::network::{DenseLayer, Matrix};

    fn dense(rows: usize, cols: usize, w: &[f64], b: &[f64], activation: Activation) -> Layer {
        Layer::Dense(DenseLayer { weights: Matrix::new(rows, cols, w.to_vec()), bias: b.to_vec(), activation })
    }

    fn network(layers: Vec<Layer>) -> Network {
        Network::new("inline:test", layers).expect("a valid network")
    }

    fn int(k: i64) -> Rational {
        Rational::from_integer(k.into())
    }

    #[test]
    fn an_identity_relu_network_with_fixed_phases_is_the_identity_map() {
        // relu(x) - relu(-x) on x >= 0: the first neuron active, the second inactive.
        let net = network(vec![
            dense(2, 1, &[1.0, -1.0], &[0.0, 0.0], Activation::Relu),
            dense(1, 2, &[1.0, -1.0], &[0.0], Activation::Identity),
        ]);
        let phases = NetworkPhases(vec![vec![Phase::Active, Phase::Inactive], vec![Phase::Active]]);
        assert_eq!(affine_map(&net, &phases, 1), Some(vec![(vec![int(1)], int(0))]));
        let unstable = NetworkPhases(vec![vec![Phase::Active, Phase::Unstable], vec![Phase::Active]]);
        assert_eq!(affine_map(&net, &unstable, 1), None);
    }

    #[test]
    fn halving_weights_compose_exactly() {
        // 0.5 x + 0.25, then times 4 minus 1: 2 x (integral coefficients only after composing).
        let net = network(vec![
            dense(1, 1, &[0.5], &[0.25], Activation::Identity),
            dense(1, 1, &[4.0], &[-1.0], Activation::Identity),
        ]);
        let phases = NetworkPhases(vec![vec![Phase::Active], vec![Phase::Active]]);
        assert_eq!(affine_map(&net, &phases, 1), Some(vec![(vec![int(2)], int(0))]));
        let leaky = network(vec![dense(1, 1, &[2.0], &[0.0], Activation::LeakyRelu { alpha: 0.5 })]);
        let inactive = NetworkPhases(vec![vec![Phase::Inactive]]);
        assert_eq!(affine_map(&leaky, &inactive, 1), Some(vec![(vec![int(1)], int(0))]));
    }
}
