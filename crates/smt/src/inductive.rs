//! The inductiveness query with the networks inside: `(p /\ Inv /\ a = f(s) /\ Next) => Inv'`,
//! over the whole invariant (the paper's monolithic baseline) or over one box `p` of it (the bridge
//! engine's exact leaf decision, for boxes its postconditions cannot decide).
//!
//! On a small box most ReLUs have a fixed sign. When the caller knows it from sound (outward
//! rounded) pre-activation bounds on `p`, a [`Phase`] per neuron lets the encoding use `y = z` or
//! `y = 0` instead of `ite(z >= 0, z, 0)`: the same relation on every state of `p`, so the query
//! means the same, with fewer case splits for Z3. The other piecewise-linear activations have
//! phases too: a leaky ReLU's two pieces (`y = z`, `y = alpha z`), a clip's three (`y = lo`,
//! `y = z`, `y = hi`).

use crate::error::CheckError;
use crate::query::{Postcondition, check_dim, state_only, validate_box};
use trestle_ir::network::{Activation, Layer, Network};
use trestle_ir::system::{Policy, System};
use trestle_ir::{FBox, Pred};

/// Which piece of its activation one neuron follows on every state of the query's box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The identity piece: `y = z` (a ReLU or leaky ReLU with `z >= 0` everywhere, a clip with
    /// `lo <= z <= hi` everywhere).
    Active,
    /// The piece below the first kink: `y = 0` for a ReLU, `y = alpha z` for a leaky ReLU (`z <= 0`
    /// everywhere), `y = lo` for a clip (`z <= lo` everywhere).
    Inactive,
    /// A clip above its upper bound everywhere: `y = hi`.
    Saturated,
    /// Several pieces (or unknown): encoded exactly with `ite`s.
    Unstable,
}

/// The phases of one network's neurons, per layer (`[layer][neuron]`; entries of identity, tanh
/// and sigmoid layers are ignored).
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkPhases(pub Vec<Vec<Phase>>);

impl NetworkPhases {
    /// The phases sound enclosures `[lo, hi]` of `net`'s pre-activations (one pair of vectors per
    /// layer) imply for its activations.
    pub fn of_bounds(net: &Network, layers: &[(Vec<f64>, Vec<f64>)]) -> NetworkPhases {
        let phase = |act: Activation, l: f64, h: f64| match act {
            Activation::Relu | Activation::LeakyRelu { .. } if l >= 0.0 => Phase::Active,
            Activation::Relu | Activation::LeakyRelu { .. } if h <= 0.0 => Phase::Inactive,
            Activation::Clip { lo, .. } if h <= lo => Phase::Inactive,
            Activation::Clip { hi, .. } if l >= hi => Phase::Saturated,
            Activation::Clip { lo, hi } if l >= lo && h <= hi => Phase::Active,
            Activation::Identity => Phase::Active,
            _ => Phase::Unstable,
        };
        NetworkPhases(
            layers
                .iter()
                .zip(&net.layers)
                .map(|((lo, hi), layer)| lo.iter().zip(hi).map(|(&l, &h)| phase(layer.activation(), l, h)).collect())
                .collect(),
        )
    }

    /// How many neurons keep the `ite` encoding.
    pub fn unstable(&self) -> usize {
        self.0.iter().flatten().filter(|&&p| p == Phase::Unstable).count()
    }
}

/// `(region /\ inv /\ a = f(s) /\ Next) => inv'` (or `=> target'`), valid for every state,
/// input and branch.
#[derive(Clone, Debug)]
pub struct InductiveQuery<'a> {
    pub inv: &'a Pred,
    /// Where the successors must lie, when not in `inv`: one transition of a chain of sets
    /// (`R_t /\ Next => R_{t+1}'`, the bounded LTL certificates) rather than inductiveness.
    pub target: Option<&'a Pred>,
    /// The state box `p` (exact f64 ends); `None`: all of `inv`.
    pub region: Option<&'a FBox>,
    /// `phases[c][k]`: the phases of the `k`-th network of controller `c`'s policy (its only
    /// network, or the `k`-th of a selector) on every state of `region`; `None` (or an empty
    /// `phases`) encodes every ReLU with `ite`. The caller vouches for them: they must come from
    /// sound bounds over the whole region.
    pub phases: Vec<Vec<Option<NetworkPhases>>>,
    /// A postcondition of the controllers on every state of `region` (from sound bounds), used
    /// only to cut a pinned invariant in the successor state down to the boxes the successors can
    /// reach ([`crate::Z3Backend::narrowed_by`]); `None`: the whole invariant.
    pub post: Option<&'a Postcondition>,
}

impl<'a> InductiveQuery<'a> {
    /// The whole invariant, every ReLU encoded exactly.
    pub fn whole(inv: &'a Pred) -> InductiveQuery<'a> {
        InductiveQuery { inv, target: None, region: None, phases: Vec::new(), post: None }
    }

    /// One box of the invariant.
    pub fn on_box(inv: &'a Pred, region: &'a FBox) -> InductiveQuery<'a> {
        InductiveQuery { inv, target: None, region: Some(region), phases: Vec::new(), post: None }
    }

    pub fn with_phases(mut self, phases: Vec<Vec<Option<NetworkPhases>>>) -> InductiveQuery<'a> {
        self.phases = phases;
        self
    }

    /// With the successors required in `target` instead of `inv`.
    pub fn with_target(mut self, target: &'a Pred) -> InductiveQuery<'a> {
        self.target = Some(target);
        self
    }

    /// With a postcondition of the controllers on the region (see [`InductiveQuery::post`]).
    pub fn with_post(mut self, post: &'a Postcondition) -> InductiveQuery<'a> {
        self.post = Some(post);
        self
    }

    /// The phases of network `k` of controller `c`, if given.
    pub(crate) fn phases_of(&self, c: usize, k: usize) -> Option<&NetworkPhases> {
        self.phases.get(c).and_then(|ps| ps.get(k)).and_then(Option::as_ref)
    }

    /// Dimensions of the box and of the phases against the system; the invariant reads the state.
    pub fn validate(&self, sys: &System) -> Result<(), CheckError> {
        state_only(self.inv, "invariant", sys.state.len())?;
        if let Some(t) = self.target {
            state_only(t, "target", sys.state.len())?;
        }
        if let Some(r) = self.region {
            validate_box("state box p", r, sys.state.len())?;
        }
        if let Some(p) = self.post {
            p.validate(sys.state.len(), sys.actions.len())?;
        }
        if self.phases.is_empty() {
            return Ok(());
        }
        check_dim("ReLU phases (controllers)", self.phases.len(), sys.controllers.len())?;
        for (c, ctrl) in sys.controllers.iter().enumerate() {
            let nets: Vec<usize> = match &ctrl.policy {
                Policy::Network(n) => vec![*n],
                Policy::Select { networks, .. } => networks.clone(),
            };
            check_dim(
                &format!("ReLU phases of controller '{}' (networks)", ctrl.name),
                self.phases[c].len(),
                nets.len(),
            )?;
            for (k, &n) in nets.iter().enumerate() {
                let Some(ph) = self.phases_of(c, k) else { continue };
                let net = &sys.networks[n];
                let layers = &net.network.layers;
                check_dim(&format!("ReLU phases of network '{}' (layers)", net.name), ph.0.len(), layers.len())?;
                for (l, (p, layer)) in ph.0.iter().zip(layers).enumerate() {
                    let rows = match layer {
                        Layer::Dense(d) => d.weights.rows,
                        Layer::Recurrent(r) => r.input_weights.rows,
                    };
                    check_dim(&format!("ReLU phases of network '{}' layer {l}", net.name), p.len(), rows)?;
                }
            }
        }
        Ok(())
    }
}
