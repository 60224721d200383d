//! The partition of Safe into cells: a grid over Safe's hull clipped to Safe's boxes, refined by
//! bisection. Every cell stays inside the grid cell it started in, which is the bucket it is
//! found by, so "the cells touching a box" costs a few buckets, not a scan.

use std::collections::HashMap;
use std::sync::Arc;
use trestle_ir::{FBox, InnerBox};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// A leaf still in the candidate set.
    Kept,
    /// A leaf removed from it.
    Dropped,
    /// Replaced by its two halves.
    Split,
}

#[derive(Clone, Debug)]
pub(crate) struct Cell {
    pub bx: FBox,
    pub status: Status,
    /// Boxes enclosing the successors of the cell, one per branch that may be enabled on it.
    pub image: Option<Arc<Vec<FBox>>>,
}

impl Cell {
    pub fn is_leaf(&self) -> bool {
        self.status != Status::Split
    }
}

pub(crate) struct Partition {
    pub cells: Vec<Cell>,
    pub hull: FBox,
    extent: Vec<f64>,
    res: usize,
    min_width: f64,
    buckets: HashMap<u64, Vec<usize>>,
    leaves: usize,
}

/// Grid line `k` of `res` over `[lo, hi]`: the same expression for both cells sharing it, so
/// neighbouring cells share their ends exactly.
fn line(lo: f64, hi: f64, k: usize, res: usize) -> f64 {
    if k == res { hi } else { (lo + (hi - lo) * (k as f64 / res as f64)).min(hi) }
}

impl Partition {
    /// The grid of `res` cells per dimension over the hull of `safe`, clipped to each box of
    /// `safe` (f64 boxes inside the exact safe region). Errors when the grid exceeds `max_cells`.
    /// `safe`: Safe's boxes rounded inward, so every cell lies in Safe exactly.
    pub fn new(safe: &[InnerBox], res: usize, max_cells: usize, min_width: f64) -> Result<Partition, String> {
        let d = safe[0].dims();
        let hull = FBox::new(
            (0..d).map(|i| safe.iter().map(|b| b.lo[i]).fold(f64::INFINITY, f64::min)).collect(),
            (0..d).map(|i| safe.iter().map(|b| b.hi[i]).fold(f64::NEG_INFINITY, f64::max)).collect(),
        );
        let grid = (res as f64).powi(d as i32);
        if grid > max_cells as f64 {
            return Err(format!(
                "a grid of {res} cells per dimension has {grid} cells in {d} dimensions, more than the {max_cells} boxes allowed: lower the resolution or raise the box limit"
            ));
        }
        let extent = hull.widths();
        let mut part = Partition {
            cells: Vec::new(),
            hull: hull.clone(),
            extent,
            res,
            min_width,
            buckets: HashMap::new(),
            leaves: 0,
        };
        let mut index = vec![0usize; d];
        let mut seen = std::collections::HashSet::new();
        loop {
            let cell = FBox::new(
                (0..d).map(|i| line(hull.lo[i], hull.hi[i], index[i], res)).collect(),
                (0..d).map(|i| line(hull.lo[i], hull.hi[i], index[i] + 1, res)).collect(),
            );
            for s in safe {
                let Some(c) = cell.intersect(s) else { continue };
                // No slivers: a clipped cell keeps a positive width wherever Safe has one.
                let thin = (0..d).any(|i| c.lo[i] == c.hi[i] && s.lo[i] < s.hi[i]);
                let key: Vec<u64> = c.lo.iter().chain(&c.hi).map(|x| x.to_bits()).collect();
                if !thin && seen.insert(key) {
                    part.push(c);
                }
            }
            // Next multi-index.
            let mut i = 0;
            while i < d {
                index[i] += 1;
                if index[i] < res {
                    break;
                }
                index[i] = 0;
                i += 1;
            }
            if i == d {
                break;
            }
        }
        if part.cells.is_empty() {
            return Err("the safe region has no volume".into());
        }
        Ok(part)
    }

    fn bucket_coord(&self, i: usize, x: f64) -> usize {
        if self.extent[i] <= 0.0 {
            return 0;
        }
        let k = ((x - self.hull.lo[i]) / self.extent[i] * self.res as f64).floor();
        if k.is_nan() { 0 } else { k.clamp(0.0, (self.res - 1) as f64) as usize }
    }

    fn bucket_key(&self, coords: &[usize]) -> u64 {
        coords.iter().rev().fold(0u64, |acc, &k| acc * self.res as u64 + k as u64)
    }

    fn push(&mut self, bx: FBox) -> usize {
        let id = self.cells.len();
        let centre = bx.center();
        let coords: Vec<usize> = (0..bx.dims()).map(|i| self.bucket_coord(i, centre[i])).collect();
        let key = self.bucket_key(&coords);
        self.buckets.entry(key).or_default().push(id);
        self.cells.push(Cell { bx, status: Status::Kept, image: None });
        self.leaves += 1;
        id
    }

    /// Leaves alive (kept or dropped).
    pub fn leaves(&self) -> usize {
        self.leaves
    }

    /// Ids (ascending) of the leaves whose closed box touches `b` and that `keep` accepts.
    pub fn touching(&self, b: &FBox, keep: impl Fn(&Cell) -> bool) -> Vec<usize> {
        let d = b.dims();
        // Bucket ranges, widened by one against rounding at the grid lines.
        let ranges: Vec<(usize, usize)> = (0..d)
            .map(|i| {
                let lo = self.bucket_coord(i, b.lo[i]).saturating_sub(1);
                let hi = (self.bucket_coord(i, b.hi[i]) + 1).min(self.res - 1);
                (lo, hi)
            })
            .collect();
        let count: f64 = ranges.iter().map(|(l, h)| (h - l + 1) as f64).product();
        let mut out = Vec::new();
        let mut visit = |ids: &Vec<usize>| {
            for &id in ids {
                let c = &self.cells[id];
                if c.is_leaf() && c.bx.touches(b) && keep(c) {
                    out.push(id);
                }
            }
        };
        if count > self.buckets.len() as f64 {
            self.buckets.values().for_each(&mut visit);
        } else {
            let mut coords: Vec<usize> = ranges.iter().map(|r| r.0).collect();
            loop {
                if let Some(ids) = self.buckets.get(&self.bucket_key(&coords)) {
                    visit(ids);
                }
                let mut i = 0;
                while i < d {
                    coords[i] += 1;
                    if coords[i] <= ranges[i].1 {
                        break;
                    }
                    coords[i] = ranges[i].0;
                    i += 1;
                }
                if i == d {
                    break;
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// The dimension a cell is bisected in: the widest relative to Safe's extent (lowest index on
    /// ties) among those still wider than the minimum with a midpoint strictly inside.
    pub fn split_dim(&self, id: usize) -> Option<usize> {
        let b = &self.cells[id].bx;
        let rel = |i: usize| if self.extent[i] > 0.0 { (b.hi[i] - b.lo[i]) / self.extent[i] } else { 0.0 };
        (0..b.dims())
            .filter(|&i| {
                let mid = b.interval(i).mid();
                rel(i) > self.min_width && b.lo[i] < mid && mid < b.hi[i]
            })
            .max_by(|&x, &y| rel(x).total_cmp(&rel(y)).then(y.cmp(&x)))
    }

    /// Bisects a leaf (see [`Partition::split_dim`]); its halves inherit its status. `None` when
    /// it cannot be split.
    pub fn split(&mut self, id: usize) -> Option<(usize, usize)> {
        let dim = self.split_dim(id)?;
        let (l, r) = self.cells[id].bx.bisect(dim);
        let status = self.cells[id].status;
        self.cells[id].status = Status::Split;
        self.cells[id].image = None;
        self.leaves -= 1;
        let a = self.push(l);
        let b = self.push(r);
        self.cells[a].status = status;
        self.cells[b].status = status;
        Some((a, b))
    }

    /// Leaves with the given status, ascending.
    pub fn with_status(&self, s: Status) -> Vec<usize> {
        (0..self.cells.len()).filter(|&i| self.cells[i].status == s).collect()
    }
}

/// Whether `cell` and `b` share a set of positive measure within `b` (for a box `b` that is flat
/// in some dimension, touching there is enough).
pub(crate) fn overlaps(cell: &FBox, b: &FBox) -> bool {
    (0..b.dims()).all(|i| {
        let lo = cell.lo[i].max(b.lo[i]);
        let hi = cell.hi[i].min(b.hi[i]);
        if b.lo[i] == b.hi[i] { lo <= hi } else { lo < hi }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::RBox;

    /// An f64 box as the inner box of itself (its ends are exact).
    fn inner(lo: Vec<f64>, hi: Vec<f64>) -> InnerBox {
        RBox::of_fbox(&FBox::new(lo, hi)).inner_fbox().unwrap()
    }

    #[test]
    fn grid_tiles_safe_and_lookups_find_neighbours() {
        let safe = [inner(vec![0.22, 0.54], vec![0.98, 0.98])];
        let mut p = Partition::new(&safe, 4, 100, 1e-3).unwrap();
        assert_eq!(p.cells.len(), 16);
        let all: Vec<&FBox> = p.cells.iter().map(|c| &c.bx).collect();
        assert!(safe[0].is_covered_by(all));
        let centre = FBox::new(vec![0.6, 0.76], vec![0.6, 0.76]);
        assert_eq!(p.touching(&centre, |_| true).len(), 4, "the grid point is shared by four cells");
        let (a, b) = p.split(0).unwrap();
        assert_eq!(p.cells[a].bx.hi[0], p.cells[b].bx.lo[0]);
        assert_eq!(p.leaves(), 17);
        let found = p.touching(&p.cells[a].bx.clone(), |_| true);
        assert!(found.contains(&a) && found.contains(&b) && !found.contains(&0));
        assert!(p.touching(&FBox::new(vec![-5.0, -5.0], vec![5.0, 5.0]), |_| true).len() == 17);
    }

    #[test]
    fn union_safe_regions_are_clipped() {
        let safe = [inner(vec![0.0, 0.0], vec![1.0, 1.0]), inner(vec![1.0, 0.0], vec![3.0, 0.5])];
        let p = Partition::new(&safe, 3, 100, 1e-3).unwrap();
        let cells: Vec<&FBox> = p.cells.iter().map(|c| &c.bx).collect();
        for s in &safe {
            assert!(s.is_covered_by(cells.iter().copied()));
        }
        assert!(p.cells.iter().all(|c| safe.iter().any(|s| s.contains_box(&c.bx))));
        assert!(Partition::new(&safe, 20, 100, 1e-3).is_err());
    }
}
