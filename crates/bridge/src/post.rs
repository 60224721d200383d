//! Postconditions of the controllers on a state box: psi in Algorithm 1.
//!
//! The networks see observations, not the state. When every observation is a distinct state
//! variable the network's linear bounds are already linear bounds in the state (columns permuted);
//! otherwise the observations must be affine in the state, `u = M s + m` with exact rational `M`,
//! and the bounds are composed with outward rounding: the coefficient of `s_j` is known only as an
//! interval `[b_lo, b_hi]`, so the midpoint is used and the half-width times `max |s_j|` over the box
//! moves into the constant. An argmax action gets the hull of the indices that may win on the box
//! under the lowest-index rule ([`crate::argmax`]). Controllers whose observations read
//! non-deterministic inputs, or whose networks are recurrent, are outside what the bridge engine
//! handles (an error says so).

use crate::error::BridgeError;
use trestle_bounds::{InputBox, Method};
use trestle_ir::interval::Interval;
use trestle_ir::linear::AffineMap;
use trestle_ir::round::{add_down, add_up, mul_up, sub_up};
use trestle_ir::system::{ControllerOutput, Policy, System};
use trestle_ir::{FBox, Matrix, VarRef};
use trestle_smt::{LinearPost, Postcondition};

/// Relative widening of every postcondition (see [`PostEngine::compute`]).
const PAD: f64 = 1e-12;

/// How each network input is computed from the state.
#[derive(Clone, Debug)]
enum Observation {
    /// Input k is state variable `vars[k]` (all distinct).
    Vars(Vec<usize>),
    /// Input k is `sum_j m[k][j] s_j + offset[k]`, enclosed in intervals.
    Affine { m: Vec<Vec<Interval>>, offset: Vec<Interval> },
}

/// Computes psi for state boxes of one system with one bounding method.
#[derive(Clone, Debug)]
pub struct PostEngine<'s> {
    sys: &'s System,
    method: Method,
    linear: bool,
    observations: Vec<Observation>,
}

impl<'s> PostEngine<'s> {
    pub fn new(sys: &'s System, method: Method, linear: bool) -> Result<PostEngine<'s>, BridgeError> {
        let mut observations = Vec::new();
        for c in &sys.controllers {
            if sys.controller_networks(c).iter().any(|&n| sys.networks[n].network.is_recurrent()) {
                return Err(BridgeError::Unsupported(format!(
                    "controller '{}' is recurrent (memoryful): the bridge engine needs feed-forward controllers; use the LTL engine",
                    c.name
                )));
            }
            observations.push(observation(sys, c)?);
            for &n in &sys.controller_networks(c) {
                // Refused here, before any box: a network the method cannot bound (an activation
                // it has no rule for) would fail on every one.
                trestle_bounds::check_supported(&sys.networks[n].network, &method)
                    .map_err(|e| BridgeError::Bounds(format!("network '{}': {e}", sys.networks[n].name)))?;
            }
        }
        // IBP gives no linear bounds: the bridge is then over boxes only.
        let linear = linear && method != Method::Ibp;
        Ok(PostEngine { sys, method, linear, observations })
    }

    /// For controller `ci` whose observations are distinct state variables: the state variable of
    /// each network input. `None` for affine observations.
    pub fn input_vars(&self, ci: usize) -> Option<&[usize]> {
        match &self.observations[ci] {
            Observation::Vars(v) => Some(v),
            Observation::Affine { .. } => None,
        }
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    pub fn is_linear(&self) -> bool {
        self.linear
    }

    /// psi on `p`: a box over all actions, with linear bounds in the state when configured.
    pub fn compute(&self, p: &FBox) -> Result<Postcondition, BridgeError> {
        let n_actions = self.sys.actions.len();
        let n_state = self.sys.state.len();
        let mut lo = vec![0.0; n_actions];
        let mut hi = vec![0.0; n_actions];
        let mut lower = Matrix::new(n_actions, n_state, vec![0.0; n_actions * n_state]);
        let mut upper = lower.clone();
        let mut lower_off = vec![0.0; n_actions];
        let mut upper_off = vec![0.0; n_actions];
        for (ci, c) in self.sys.controllers.iter().enumerate() {
            let input = self.input_box(ci, p);
            let nets = self.networks_on(c, p);
            let mut bounds = Vec::new();
            for &n in &nets {
                let net = &self.sys.networks[n].network;
                let b = trestle_bounds::bound(net, &input, &self.method)
                    .map_err(|e| BridgeError::Bounds(format!("network '{}': {e}", self.sys.networks[n].name)))?;
                bounds.push(b);
            }
            match &c.output {
                ControllerOutput::Actions(ids) => {
                    for (k, &a) in ids.iter().enumerate() {
                        lo[a] = bounds.iter().map(|b| b.lo[k]).fold(f64::INFINITY, f64::min);
                        hi[a] = bounds.iter().map(|b| b.hi[k]).fold(f64::NEG_INFINITY, f64::max);
                        lower_off[a] = lo[a];
                        upper_off[a] = hi[a];
                    }
                    if self.linear
                        && bounds.len() == 1
                        && let Some(lin) = &bounds[0].linear
                    {
                        self.compose(ci, p, lin, ids, (&mut lower, &mut lower_off), (&mut upper, &mut upper_off));
                    }
                }
                ControllerOutput::Argmax(a) => {
                    let networks: Vec<_> = nets.iter().map(|&n| &self.sys.networks[n].network).collect();
                    let (first, last) = crate::argmax::winner_hull(&networks, &input, &bounds, &self.method)?;
                    lo[*a] = first as f64;
                    hi[*a] = last as f64;
                    lower_off[*a] = lo[*a];
                    upper_off[*a] = hi[*a];
                }
            }
        }
        // Widen psi by a hair (1e-12 relative) before it is used: still a postcondition, and the
        // slack lets an independent re-bounding (certificate check), which rounds differently,
        // confirm it even where the bound is attained exactly.
        let pad = |v: f64| add_up(mul_up(v.abs(), PAD), PAD);
        for a in 0..n_actions {
            lo[a] = add_down(lo[a], -pad(lo[a]));
            hi[a] = add_up(hi[a], pad(hi[a]));
            lower_off[a] = add_down(lower_off[a], -pad(lower_off[a]));
            upper_off[a] = add_up(upper_off[a], pad(upper_off[a]));
        }
        let bounds = FBox::new(lo, hi);
        if !self.linear {
            return Ok(Postcondition::Box(bounds));
        }
        Ok(Postcondition::Linear(LinearPost {
            lower: AffineMap { a: lower, c: lower_off },
            upper: AffineMap { a: upper, c: upper_off },
            bounds,
        }))
    }

    /// The networks a controller may run on `p` (a selector may range over several).
    pub fn networks_on(&self, c: &trestle_ir::system::Controller, p: &FBox) -> Vec<usize> {
        match &c.policy {
            Policy::Network(n) => vec![*n],
            Policy::Select { by, networks } => {
                let lo = p.lo[*by].ceil().max(0.0) as usize;
                let hi = (p.hi[*by].floor().max(0.0) as usize).min(networks.len() - 1);
                networks[lo..=hi.max(lo).min(networks.len() - 1)].to_vec()
            }
        }
    }

    /// The network input box of controller `ci` over the state box.
    pub fn input_box(&self, ci: usize, p: &FBox) -> InputBox {
        match &self.observations[ci] {
            Observation::Vars(vars) => {
                InputBox::new(vars.iter().map(|&j| p.lo[j]).collect(), vars.iter().map(|&j| p.hi[j]).collect())
            }
            Observation::Affine { m, offset } => {
                let iv = p.intervals();
                let vals: Vec<Interval> = m
                    .iter()
                    .zip(offset)
                    .map(|(row, off)| row.iter().zip(&iv).fold(*off, |acc, (c, s)| acc.add(&c.mul(s))))
                    .collect();
                InputBox::new(vals.iter().map(|v| v.lo).collect(), vals.iter().map(|v| v.hi).collect())
            }
        }
    }

    /// Writes the linear bounds of controller `ci` (over its network inputs) as bounds over the
    /// state into the rows of its actions.
    fn compose(
        &self,
        ci: usize,
        p: &FBox,
        lin: &trestle_bounds::LinearBounds,
        ids: &[usize],
        lower: (&mut Matrix, &mut Vec<f64>),
        upper: (&mut Matrix, &mut Vec<f64>),
    ) {
        let n_state = self.sys.state.len();
        for (k, &a) in ids.iter().enumerate() {
            let (coeffs, c) = self.state_row(ci, p, lin.lower.a.row(k), lin.lower.c[k], false);
            lower.0.data[a * n_state..(a + 1) * n_state].copy_from_slice(&coeffs);
            lower.1[a] = c;
            let (coeffs, c) = self.state_row(ci, p, lin.upper.a.row(k), lin.upper.c[k], true);
            upper.0.data[a * n_state..(a + 1) * n_state].copy_from_slice(&coeffs);
            upper.1[a] = c;
        }
    }

    /// A linear bound `w . u + c` of one output of controller `ci` over its network inputs `u`,
    /// valid on the input box of `p`, as a bound `coeffs . s + offset` over the states of `p`
    /// (a lower bound when `!is_upper`). Distinct state variables as inputs: the same numbers,
    /// columns permuted. Affine observations `u = M s + m`: the coefficient of `s_j`, `w . M_j`,
    /// is known only as an interval `[b_lo, b_hi]`; its midpoint is used and the half-width times
    /// `max |s_j|` over `p` moves into the offset, all rounded outward.
    pub fn state_row(&self, ci: usize, p: &FBox, w: &[f64], c: f64, is_upper: bool) -> (Vec<f64>, f64) {
        let n_state = self.sys.state.len();
        match &self.observations[ci] {
            Observation::Vars(vars) => {
                let mut coeffs = vec![0.0; n_state];
                for (&wk, &j) in w.iter().zip(vars) {
                    coeffs[j] = wk;
                }
                (coeffs, c)
            }
            Observation::Affine { m, offset } => {
                let mut constant = Interval::point(c);
                let mut slack = 0.0;
                let coeffs: Vec<f64> = (0..n_state)
                    .map(|j| {
                        let exact = w
                            .iter()
                            .zip(m)
                            .fold(Interval::point(0.0), |acc, (&wk, mk)| acc.add(&Interval::point(wk).mul(&mk[j])));
                        let mid = exact.mid();
                        let half = sub_up(exact.hi, mid).max(sub_up(mid, exact.lo));
                        let magnitude = p.lo[j].abs().max(p.hi[j].abs());
                        slack = add_up(slack, mul_up(half, magnitude));
                        mid
                    })
                    .collect();
                for (&wk, off) in w.iter().zip(offset) {
                    constant = constant.add(&Interval::point(wk).mul(off));
                }
                (coeffs, if is_upper { add_up(constant.hi, slack) } else { add_down(constant.lo, -slack) })
            }
        }
    }
}

fn observation(sys: &System, c: &trestle_ir::system::Controller) -> Result<Observation, BridgeError> {
    let n_state = sys.state.len();
    let mut vars = Vec::new();
    let mut m = Vec::new();
    let mut offset = Vec::new();
    for (k, e) in c.inputs.iter().enumerate() {
        if e.mentions(|v| !matches!(v, VarRef::State(_))) {
            return Err(BridgeError::Unsupported(format!(
                "controller '{}' input {k} reads a non-deterministic input; the bridge engine needs observations of the state",
                c.name
            )));
        }
        let lin = e.as_linear().ok_or_else(|| {
            BridgeError::Unsupported(format!("controller '{}' input {k} is not affine in the state", c.name))
        })?;
        let one = trestle_ir::num::rational_from_i64(1);
        if lin.coeffs.len() == 1
            && num_traits::Zero::is_zero(&lin.constant)
            && let Some((VarRef::State(j), q)) = lin.coeffs.iter().next()
            && *q == one
            && !vars.contains(j)
        {
            vars.push(*j);
        }
        m.push((0..n_state).map(|j| Interval::of_rational(&lin.coeff(VarRef::State(j)))).collect());
        offset.push(Interval::of_rational(&lin.constant));
    }
    Ok(if vars.len() == c.inputs.len() { Observation::Vars(vars) } else { Observation::Affine { m, offset } })
}
