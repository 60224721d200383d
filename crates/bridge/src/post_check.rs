//! Re-checking one clause's postcondition psi against the networks, for `certify`.
//!
//! psi claims, for every state `s` of the clause box, `lo_a <= a <= hi_a` and, when it has linear
//! bounds, `A_l[a] s + c_l[a] <= a <= A_u[a] s + c_u[a]`, for every action `a`. Every one of these
//! components is re-established here from fresh bounds of the networks on the box; none is
//! skipped because of its shape (a row with no state coefficient is a constant bound like any
//! other, and its offset is checked).
//! * Real outputs: the re-bounded output box must lie inside `[lo_a, hi_a]`. A linear row is
//!   confirmed either by bounding `f_k(x) - (A x + c)` backward from exactly the stored
//!   coefficients (observations that are distinct state variables), or by composing fresh linear
//!   bounds of the network with the exact affine observation map, as [`PostEngine::state_row`]
//!   does for the engine, and showing that the stored row follows from the composed one over the
//!   box.
//! * Argmax outputs: the indices that may win on the box under the lowest-index rule
//!   ([`crate::argmax`]) must lie in `[lo_a, hi_a]` and between the linear rows everywhere on the box.
//!
//! Each component is tried with CROWN, then alpha-CROWN, then the forward mode (re-bounding with
//! the method that produced a bound reproduces it exactly); when all fail the box is halved (up to
//! a depth) and each half re-checked.
//!
//! Comparisons of rows over the box are exact ([`crate::rows`]).

use crate::argmax::winner_hull;
use crate::error::BridgeError;
use crate::post::PostEngine;
use crate::rows::{follows, row_max, row_min, rows_of};
use trestle_bounds::{InputBox, Method, OutputBounds};
use trestle_ir::num::{enclose, rational_from_f64};
use trestle_ir::system::{ControllerOutput, System};
use trestle_ir::{FBox, Matrix, Network};
use trestle_smt::{LinearPost, Postcondition};

/// Re-bounds the controllers of one system on clause boxes.
pub(crate) struct PostChecker<'s> {
    sys: &'s System,
    engine: PostEngine<'s>,
}

/// The methods tried in turn.
fn methods() -> [Method; 3] {
    [Method::Crown, "alpha-crown".parse().expect("a known method"), Method::Forward]
}

impl<'s> PostChecker<'s> {
    pub(crate) fn new(sys: &'s System) -> Result<PostChecker<'s>, BridgeError> {
        Ok(PostChecker { sys, engine: PostEngine::new(sys, Method::Crown, true)? })
    }

    /// The postcondition engine the checks bound with (its observation maps and input boxes).
    pub(crate) fn engine(&self) -> &PostEngine<'s> {
        &self.engine
    }

    /// Whether `post` holds for every state of `region`: re-bounded, with halving up to `depth`.
    pub(crate) fn holds(&self, region: &FBox, post: &Postcondition, depth: usize) -> Result<(), String> {
        match self.holds_once(region, post) {
            Ok(()) => Ok(()),
            Err(why) if depth == 0 => Err(why),
            Err(_) => {
                let w = region.widths();
                let widest = (0..region.dims()).max_by(|&a, &b| w[a].total_cmp(&w[b])).unwrap_or(0);
                let (l, r) = region.bisect(widest);
                self.holds(&l, post, depth - 1)?;
                self.holds(&r, post, depth - 1)
            }
        }
    }

    fn holds_once(&self, region: &FBox, post: &Postcondition) -> Result<(), String> {
        let linear = match post {
            Postcondition::Box(_) => None,
            Postcondition::Linear(l) => Some(l),
        };
        for (ci, c) in self.sys.controllers.iter().enumerate() {
            let input = self.engine.input_box(ci, region);
            let nets: Vec<&Network> =
                self.engine.networks_on(c, region).into_iter().map(|n| &self.sys.networks[n].network).collect();
            match &c.output {
                ControllerOutput::Actions(ids) => {
                    for net in &nets {
                        let mut fresh = Fresh::new(net, &input);
                        for (k, &a) in ids.iter().enumerate() {
                            self.real_action_holds(ci, &mut fresh, region, k, a, post.action_box(), linear)
                                .map_err(|e| format!("network '{}', action {}: {e}", net.source, self.name(a)))?;
                        }
                    }
                }
                ControllerOutput::Argmax(a) => self
                    .argmax_holds(&nets, &input, region, *a, post.action_box(), linear)
                    .map_err(|e| format!("argmax action {}: {e}", self.name(*a)))?,
            }
        }
        Ok(())
    }

    fn name(&self, a: usize) -> &str {
        &self.sys.actions[a].name
    }

    /// The box and both rows of the real action `a`, output `k` of the network in `fresh`.
    #[allow(clippy::too_many_arguments)]
    fn real_action_holds(
        &self,
        ci: usize,
        fresh: &mut Fresh<'_>,
        region: &FBox,
        k: usize,
        a: usize,
        stored: &FBox,
        linear: Option<&LinearPost>,
    ) -> Result<(), String> {
        let mut inside = false;
        for m in 0..methods().len() {
            let b = fresh.get(m)?;
            if b.lo[k] >= stored.lo[a] && b.hi[k] <= stored.hi[a] {
                inside = true;
                break;
            }
        }
        if !inside {
            let b = fresh.get(0)?;
            return Err(format!(
                "the network may leave the stored box [{}, {}] (re-bounded [{}, {}])",
                stored.lo[a], stored.hi[a], b.lo[k], b.hi[k]
            ));
        }
        let Some(l) = linear else { return Ok(()) };
        let (al, cl, au, cu) = rows_of(l, a);
        for (row, c, upper) in [(al, cl, false), (au, cu, true)] {
            if !self.real_row_holds(ci, fresh, region, k, row, c, upper)? {
                let side = if upper { "upper" } else { "lower" };
                return Err(format!("the stored {side} linear bound (offset {c}) is not re-verified"));
            }
        }
        Ok(())
    }

    /// One stored row `row . s + c` as a lower (or upper) bound of output `k`.
    #[allow(clippy::too_many_arguments)]
    fn real_row_holds(
        &self,
        ci: usize,
        fresh: &mut Fresh<'_>,
        region: &FBox,
        k: usize,
        row: &[f64],
        c: f64,
        upper: bool,
    ) -> Result<bool, String> {
        for m in 0..methods().len() {
            if let Some(vars) = self.engine.input_vars(ci)
                && backward_row_holds(fresh.net, fresh.input, vars, region, k, row, c, upper, &methods()[m])?
            {
                return Ok(true);
            }
            let Some(lin) = &fresh.get(m)?.linear else { continue };
            let map = if upper { &lin.upper } else { &lin.lower };
            let (fresh_row, fresh_c) = self.engine.state_row(ci, region, map.a.row(k), map.c[k], upper);
            if follows(row, c, &fresh_row, fresh_c, region, upper) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The argmax action `a`: the possible winners lie in the stored box and between the rows.
    fn argmax_holds(
        &self,
        nets: &[&Network],
        input: &InputBox,
        region: &FBox,
        a: usize,
        stored: &FBox,
        linear: Option<&LinearPost>,
    ) -> Result<(), String> {
        let mut last_seen = (0, 0);
        for method in methods() {
            let bounds = nets
                .iter()
                .map(|n| trestle_bounds::bound(n, input, &method))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let (first, last) = winner_hull(nets, input, &bounds, &method).map_err(|e| e.to_string())?;
            let (first_f, last_f) = (first as f64, last as f64);
            let rows_ok = linear.is_none_or(|l| {
                let (al, cl, au, cu) = rows_of(l, a);
                row_max(al, cl, region) <= rational_from_f64(first_f)
                    && row_min(au, cu, region) >= rational_from_f64(last_f)
            });
            if first_f >= stored.lo[a] && last_f <= stored.hi[a] && rows_ok {
                return Ok(());
            }
            last_seen = (first, last);
        }
        Err(format!(
            "indices {}..={} may win on the box; the stored bounds exclude some of them",
            last_seen.0, last_seen.1
        ))
    }
}

/// Bounds of one network on one input box by each of [`methods`], computed on demand.
struct Fresh<'n> {
    net: &'n Network,
    input: &'n InputBox,
    by_method: Vec<Option<OutputBounds>>,
}

impl<'n> Fresh<'n> {
    fn new(net: &'n Network, input: &'n InputBox) -> Fresh<'n> {
        Fresh { net, input, by_method: vec![None; methods().len()] }
    }

    fn get(&mut self, m: usize) -> Result<&OutputBounds, String> {
        if self.by_method[m].is_none() {
            let b = trestle_bounds::bound(self.net, self.input, &methods()[m]).map_err(|e| e.to_string())?;
            self.by_method[m] = Some(b);
        }
        Ok(self.by_method[m].as_ref().expect("just computed"))
    }
}

/// Confirms the stored row `row . s + c` for output `k` when the network's inputs are the distinct
/// state variables `vars`, by bounding `f_k(x) - (row_read . x + c')` backward from exactly those
/// coefficients. Coefficients of state variables the network does not read are moved into the
/// offset `c'` by their extreme over the box (rounded so that the check can only get harder).
#[allow(clippy::too_many_arguments)]
fn backward_row_holds(
    net: &Network,
    input: &InputBox,
    vars: &[usize],
    region: &FBox,
    k: usize,
    row: &[f64],
    c: f64,
    upper: bool,
    method: &Method,
) -> Result<bool, String> {
    let mut unread = row.to_vec();
    for &j in vars {
        unread[j] = 0.0;
    }
    // Lower bound f >= row . s + c holds if f >= read . x + c' with c' >= c + max unread . s (an f64
    // rounded up from the exact value); upper bound likewise with the minimum, rounded down.
    let shifted = if upper { enclose(&row_min(&unread, c, region)).0 } else { enclose(&row_max(&unread, c, region)).1 };
    let n_out = net.output_dim();
    let mut out = vec![0.0; n_out];
    out[k] = 1.0;
    let coeffs: Vec<f64> = vars.iter().map(|&j| -row[j]).collect();
    let (lo, hi) = trestle_bounds::bound_affine_of(
        net,
        input,
        method,
        &Matrix::new(1, n_out, out),
        &Matrix::new(1, vars.len(), coeffs),
        &[-shifted],
    )
    .map_err(|e| e.to_string())?;
    Ok(if upper { hi[0] <= 0.0 } else { lo[0] >= 0.0 })
}
