//! How a model reaches HiGHS without losing a coefficient, and when HiGHS's answer counts as
//! evidence at all.
//!
//! HiGHS reads a model with thresholds that silently change it (HiGHS 1.15, `HighsOptions.h`):
//!
//! | option | default | what HiGHS does | what this crate does |
//! | --- | --- | --- | --- |
//! | `small_matrix_value` | 1e-9 | drops matrix entries with `\|a\| <= value` when the model is passed (a warning, not an error), and uses it as the MIP solver's "zero" | set to its minimum 1e-12 *before* any row is passed; no entry below [`MIN_COEFFICIENT`] = 1e-9 is passed at all: such terms move into an interval slack ([`prepare_row`]) |
//! | `large_matrix_value` | 1e15 | refuses entries `>= value` (an error) | models with any value `>=` [`HIGHS_LIMIT`] = 1e15 are not passed |
//! | `infinite_bound` | 1e20 | treats bounds and row sides `>= value` as infinite (a relaxation) | never reached (same limit) |
//! | `infinite_cost` | 1e20 | treats costs `>= value` as infinite (small costs are kept) | no value reaches 1e15 |
//! | `primal_feasibility_tolerance`, `mip_feasibility_tolerance` | 1e-7, 1e-6 | rows, bounds and integrality may be violated by this much (absolute); presolve tightens bounds only by more than it and rounds integer bounds outward by it | both set to the caller's tolerance (1e-6 by default) |
//! | `dual_feasibility_tolerance` | 1e-7 | LP optimality; an LP bound may be off by reduced-cost errors of this size times variable ranges | left; one reason a bound is evidence and not a proof |
//! | `mip_rel_gap`, `mip_abs_gap`, `objective_target` | | when to stop; the dual bound stays a bound | 0, the caller's gap, the caller's target |
//!
//! A continuous variable whose bounds are all below 1 in magnitude is passed as a column scaled up
//! by a power of two ([`column_scale`]), so that HiGHS's presolve never fixes it for being
//! narrower than the feasibility tolerance. A row `lo <= sum k_i v_i <= hi` is then prepared as
//! follows ([`prepare_row`]):
//! 1. When its largest `|k_i|` is below 1, the row is multiplied by the power of two that brings it
//!    into `[1, 2)` (exact in f64): an absolute tolerance on a row of small coefficients would
//!    otherwise be a large tolerance on its variables. Rows are never scaled *down*, which would
//!    loosen the tolerance on the variables with the largest coefficients.
//! 2. Terms with `|k_i| < MIN_COEFFICIENT` (after scaling) are replaced by one slack variable per
//!    row whose bounds are the outward-rounded interval of their sum over the variables' bounds:
//!    every real solution of the original row is a solution of the new one (a relaxation, sound for
//!    a proof); the slack forgets the correlation, which can only cost a proof, never make one.
//!
//! A solve counts as floating-point evidence only when f64 rounding is far below the feasibility
//! tolerance in every row: `gamma(n + 1) * (sum |k_i| max(|lo_i|, |hi_i|) + |side|) <=
//! feasibility_tolerance / 16` (the `gamma` of `trestle_ir::round`; it also covers the rounding of
//! rational constants to their nearest f64). A model outside that range (huge big-M constants,
//! integer variables with huge domains) can still give counterexamples, which are replayed exactly,
//! but never a proof ([`Prepared::out_of_range`]).

use crate::error::MilpError;
use trestle_ir::Interval;
use trestle_ir::round::{add_up, gamma, mul_up};

/// Coefficients smaller than this (in absolute value, after row scaling) never reach HiGHS.
pub const MIN_COEFFICIENT: f64 = 1e-9;

/// HiGHS's `small_matrix_value` as this crate sets it (the smallest value HiGHS accepts).
pub const SMALL_MATRIX_VALUE: f64 = 1e-12;

/// No value at or above this is passed to HiGHS (its `large_matrix_value` default; below
/// `infinite_bound`).
pub const HIGHS_LIMIT: f64 = 1e15;

/// Fraction of the feasibility tolerance the f64 rounding of a row may use in a trusted model.
pub const ROUNDING_SHARE: f64 = 1.0 / 16.0;

/// A row `lo <= sum k v <= hi` over column indices.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub terms: Vec<(usize, f64)>,
    pub lo: f64,
    pub hi: f64,
}

/// Columns (bounds and integrality) and rows as they go to HiGHS.
#[derive(Clone, Debug, Default)]
pub struct Prepared {
    /// Bounds of every column as HiGHS sees them (scaled): the model's variables first, then the
    /// slacks.
    pub columns: Vec<(f64, f64)>,
    pub integer: Vec<bool>,
    /// A model variable is `scale * column` ([`column_scale`]); slacks have scale 1.
    pub scale: Vec<f64>,
    /// The model's own bounds of each column (before scaling), for the slack intervals.
    original: Vec<(f64, f64)>,
    pub rows: Vec<Row>,
    /// Coefficients moved into slacks.
    pub moved: usize,
    /// Largest `|value|` of any coefficient, finite bound or row side.
    pub largest: f64,
    /// Largest bound on the f64 rounding error of evaluating a row.
    pub rounding: f64,
    /// The objective: a cost per column (slack columns cost 0) and its constant.
    pub costs: Vec<f64>,
    pub offset: f64,
}

/// Largest power-of-two scaling of a column or row (keeps the products exact and finite).
const MAX_SCALE: f64 = (1u64 << 60) as f64;

/// The power of two `s <= 1` such that a continuous variable `v` in `[lo, hi]` is `s * c` with
/// `max(|lo|, |hi|) / s` in `[1, 2)` (`1` when that magnitude is already at least 1, or 0, or
/// the variable is integer). HiGHS's presolve fixes columns whose bounds are closer than its
/// feasibility tolerance (`HPresolve`, `boundDiff <= primal_feastol`): a variable in `[0, 1e-10]`
/// multiplied by 9e5 in a row would be fixed and its contribution of 9e-5 lost. Scaled, its column
/// spans `[0, 1.7]`.
pub fn column_scale(lo: f64, hi: f64, integer: bool) -> f64 {
    let m = lo.abs().max(hi.abs());
    if integer || !m.is_finite() { 1.0 } else { 1.0 / scale_up(m) }
}

impl Prepared {
    /// Starts from the model's variables: each continuous one with a magnitude below 1 is scaled.
    pub fn new(columns: Vec<(f64, f64)>, integer: Vec<bool>) -> Prepared {
        let mut p = Prepared::default();
        for (&(lo, hi), &int) in columns.iter().zip(&integer) {
            let s = column_scale(lo, hi, int);
            p.column(lo / s, hi / s, int, s);
            p.original.push((lo, hi));
        }
        p
    }

    fn column(&mut self, lo: f64, hi: f64, integer: bool, scale: f64) -> usize {
        for v in [lo, hi] {
            if v.is_finite() {
                self.largest = self.largest.max(v.abs());
            }
        }
        self.columns.push((lo, hi));
        self.integer.push(integer);
        self.scale.push(scale);
        self.columns.len() - 1
    }

    /// Sets the objective `sum k v + offset` over the model's variables. Costs are passed as they
    /// are (HiGHS drops none); the objective counts in the rounding gate like a row.
    pub fn set_objective(&mut self, terms: &[(usize, f64)], offset: f64) {
        self.costs = vec![0.0; self.columns.len()];
        let mut activity = offset.abs();
        for &(j, k) in terms {
            let k = k * self.scale[j];
            self.costs[j] += k;
            self.largest = self.largest.max(k.abs());
            let (l, h) = self.columns[j];
            activity = add_up(activity, mul_up(k.abs(), l.abs().max(h.abs())));
        }
        self.largest = self.largest.max(offset.abs());
        self.rounding = self.rounding.max(mul_up(gamma(terms.len() + 1), activity));
        self.offset = offset;
    }

    /// Adds `lo <= sum k v <= hi` over the model's variables, prepared by [`prepare_row`].
    pub fn add_row(&mut self, terms: &[(usize, f64)], lo: f64, hi: f64) -> Result<(), MilpError> {
        let row = prepare_row(self, terms, lo, hi)?;
        let mut activity = 0.0f64;
        for &(j, k) in &row.terms {
            self.largest = self.largest.max(k.abs());
            let (l, h) = self.columns[j];
            activity = add_up(activity, mul_up(k.abs(), l.abs().max(h.abs())));
        }
        for side in [row.lo, row.hi] {
            if side.is_finite() {
                self.largest = self.largest.max(side.abs());
                activity = add_up(activity, side.abs());
            }
        }
        self.rounding = self.rounding.max(mul_up(gamma(row.terms.len() + 1), activity));
        self.rows.push(row);
        Ok(())
    }

    /// The model's variables from HiGHS's column values (exact: powers of two).
    pub fn unscale(&self, columns: &[f64], variables: usize) -> Vec<f64> {
        columns.iter().zip(&self.scale).take(variables).map(|(c, s)| c * s).collect()
    }

    /// Why HiGHS's answer on this model is no evidence (its values are too large for its absolute
    /// tolerances), or `None`.
    pub fn out_of_range(&self, feasibility_tolerance: f64) -> Option<String> {
        if self.largest >= HIGHS_LIMIT {
            return Some(format!("a value of magnitude {:.3e} reaches HiGHS's limit {HIGHS_LIMIT:.0e}", self.largest));
        }
        let budget = feasibility_tolerance * ROUNDING_SHARE;
        (self.rounding > budget).then(|| {
            format!(
                "f64 rounding of a row may reach {:.3e}, more than {budget:.1e} (1/16 of the feasibility tolerance): \
                 values up to {:.3e} (wide bounds, big-M constants or integer domains) are too large for a proof",
                self.rounding, self.largest
            )
        })
    }
}

/// The power of two that brings `m` (`0 < m < 1`) into `[1, 2)`, at most [`MAX_SCALE`]; 1 for
/// `m >= 1` or `m = 0`.
fn scale_up(m: f64) -> f64 {
    if m >= 1.0 || m == 0.0 {
        return 1.0;
    }
    let mut s = 1.0f64;
    while m * s < 1.0 && s < MAX_SCALE {
        s *= 2.0;
    }
    s
}

/// Scales the model's terms by their columns' scales, scales the row up when all its
/// coefficients are then small, and moves the tiny terms into a slack column of `prepared` (see
/// the module documentation). Errors when a tiny term's variable is unbounded (its contribution
/// could not be enclosed).
pub fn prepare_row(prepared: &mut Prepared, terms: &[(usize, f64)], lo: f64, hi: f64) -> Result<Row, MilpError> {
    let terms: Vec<(usize, f64, f64)> =
        terms.iter().filter(|&&(_, k)| k != 0.0).map(|&(j, k)| (j, k, k * prepared.scale[j])).collect();
    let largest = terms.iter().fold(0.0f64, |m, &(_, _, k)| m.max(k.abs()));
    let r = scale_up(largest);
    let (mut kept, mut tiny) = (Vec::with_capacity(terms.len()), Interval::point(0.0));
    let mut moved = 0;
    for (j, k, scaled) in terms {
        // Exact unless the product left the normal range; then it is treated as tiny.
        let scaled = scaled * r;
        if scaled.abs() >= MIN_COEFFICIENT && scaled.is_normal() {
            kept.push((j, scaled));
            continue;
        }
        let (l, h) = prepared.original[j];
        if !(l.is_finite() && h.is_finite()) {
            return Err(MilpError::Unbounded {
                what: format!("a variable with the coefficient {k:e} (too small for HiGHS)"),
                lo: l,
                hi: h,
            });
        }
        // The model's term k v with v in [l, h], times the row's scale r (exact).
        tiny = tiny.add(&Interval::point(k).mul(&Interval::new(l, h)).mul(&Interval::point(r)));
        moved += 1;
    }
    if moved > 0 {
        let slack = prepared.column(tiny.lo, tiny.hi, false, 1.0);
        prepared.original.push((tiny.lo, tiny.hi));
        kept.push((slack, 1.0));
        prepared.moved += moved;
    }
    Ok(Row { terms: kept, lo: lo * r, hi: hi * r })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_terms_become_an_outward_slack_and_small_rows_are_scaled_up() {
        let mut p = Prepared::new(vec![(0.0, 1.0), (0.0, 9e5), (-1.0, 2.0)], vec![false; 3]);
        // a = y1 + 1e-10 y2 (the network): 1e-10 y2 in [0, 9e-5].
        p.add_row(&[(0, 1.0), (1, 1e-10), (2, -1.0)], 0.0, 0.0).unwrap();
        let row = &p.rows[0];
        assert_eq!(row.terms.len(), 3);
        assert_eq!(&row.terms[..2], &[(0, 1.0), (2, -1.0)]);
        let (slack, k) = row.terms[2];
        assert_eq!((slack, k), (3, 1.0));
        let (l, h) = p.columns[3];
        assert!(l <= 0.0 && (1e-10 * 9e5..=9.0000001e-5).contains(&h), "[{l}, {h}]");
        assert_eq!(p.moved, 1);
        // A row of small coefficients is scaled by a power of two: nothing moves.
        p.add_row(&[(0, 3e-8), (2, -1e-8)], f64::NEG_INFINITY, 1e-8).unwrap();
        let row = &p.rows[1];
        assert_eq!(p.moved, 1);
        let s = row.terms[0].1 / 3e-8;
        assert!(s.log2().fract() == 0.0 && (1.0..2.0).contains(&row.terms[0].1), "{row:?}");
        assert_eq!((row.terms[1].1, row.hi), (-1e-8 * s, 1e-8 * s));
        // Unbounded variables cannot carry a tiny coefficient.
        let mut q = Prepared::new(vec![(0.0, f64::INFINITY), (0.0, 1.0)], vec![false; 2]);
        assert!(q.add_row(&[(0, 1e-12), (1, 1.0)], 0.0, 0.0).is_err());
    }

    #[test]
    fn narrow_columns_are_scaled_up_exactly() {
        // y in [0, 1e-10] next to a weight 9e5; an integer column is never scaled.
        let mut p = Prepared::new(vec![(0.0, 1e-10), (-1.0, 2.0), (0.0, 0.5)], vec![false, false, true]);
        let s = p.scale[0];
        assert!(s.log2().fract() == 0.0 && (1.0..2.0).contains(&p.columns[0].1), "{:?}", p.columns[0]);
        assert_eq!((p.scale[1], p.scale[2]), (1.0, 1.0));
        p.add_row(&[(0, 9e5), (1, -1.0)], 0.0, 0.0).unwrap();
        assert_eq!(p.rows[0].terms, vec![(0, 9e5 * s), (1, -1.0)]);
        assert_eq!(p.moved, 0);
        assert_eq!(p.unscale(&[1.5, 0.25, 1.0, 7.0], 3), vec![1.5 * s, 0.25, 1.0]);
    }

    #[test]
    fn the_rounding_gate_rejects_huge_rows() {
        let mut p = Prepared::new(vec![(0.0, 1e3), (0.0, 1.0)], vec![false, true]);
        p.add_row(&[(0, 1.0), (1, -1e3)], f64::NEG_INFINITY, 0.0).unwrap();
        assert_eq!(p.out_of_range(1e-6), None, "rounding {}", p.rounding);
        // A big-M of 1e12 next to a coefficient 1.
        let mut big = Prepared::new(vec![(0.0, 1e12), (0.0, 1.0)], vec![false, true]);
        big.add_row(&[(0, 1.0), (1, -1e12)], f64::NEG_INFINITY, 0.0).unwrap();
        assert!(big.out_of_range(1e-6).is_some());
        let mut huge = Prepared::new(vec![(0.0, 1e16)], vec![true]);
        huge.add_row(&[(0, 1.0)], 0.0, 5.0).unwrap();
        assert!(huge.out_of_range(1e-6).unwrap().contains("limit"));
    }
}
