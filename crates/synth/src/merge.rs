//! Merging adjacent boxes: two boxes with the same extent in every dimension but one, adjacent
//! (or overlapping) in that one, are replaced by their union, which is exactly a box. Repeated
//! over the dimensions until nothing merges; the union of the boxes never changes.

use std::collections::BTreeMap;
use trestle_ir::FBox;

/// The boxes merged, in a canonical order (sorted by their ends).
pub fn merge(mut boxes: Vec<FBox>) -> Vec<FBox> {
    let Some(d) = boxes.first().map(FBox::dims) else { return boxes };
    loop {
        let before = boxes.len();
        for k in 0..d {
            boxes = merge_along(boxes, k);
        }
        if boxes.len() == before {
            break;
        }
    }
    boxes.sort_by_cached_key(key);
    boxes
}

/// The ends as an exact sort key (-0.0 and 0.0 differ, which can only prevent a merge).
fn key(b: &FBox) -> Vec<u64> {
    b.lo.iter().chain(&b.hi).map(|x| ordered_bits(*x)).collect()
}

/// An order-preserving integer image of an f64.
fn ordered_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// Merges runs of boxes that agree outside dimension `k` and chain along it.
fn merge_along(boxes: Vec<FBox>, k: usize) -> Vec<FBox> {
    let mut groups: BTreeMap<Vec<u64>, Vec<FBox>> = BTreeMap::new();
    for b in boxes {
        let g: Vec<u64> =
            (0..b.dims()).filter(|&i| i != k).flat_map(|i| [ordered_bits(b.lo[i]), ordered_bits(b.hi[i])]).collect();
        groups.entry(g).or_default().push(b);
    }
    let mut out = Vec::new();
    for (_, mut group) in groups {
        group.sort_by(|a, b| a.lo[k].total_cmp(&b.lo[k]).then(a.hi[k].total_cmp(&b.hi[k])));
        let mut current: Option<FBox> = None;
        for b in group {
            current = Some(match current {
                Some(mut c) if b.lo[k] <= c.hi[k] => {
                    c.hi[k] = c.hi[k].max(b.hi[k]);
                    c
                }
                Some(c) => {
                    out.push(c);
                    b
                }
                None => b,
            });
        }
        out.extend(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(lo: [f64; 2], hi: [f64; 2]) -> FBox {
        FBox::new(lo.to_vec(), hi.to_vec())
    }

    #[test]
    fn a_grid_merges_into_one_box_and_an_l_into_two() {
        let grid: Vec<FBox> = (0..4)
            .flat_map(|i| (0..3).map(move |j| b([i as f64, j as f64], [i as f64 + 1.0, j as f64 + 1.0])))
            .collect();
        assert_eq!(merge(grid), vec![b([0.0, 0.0], [4.0, 3.0])]);
        let l = vec![b([0.0, 0.0], [1.0, 1.0]), b([1.0, 0.0], [2.0, 1.0]), b([0.0, 1.0], [1.0, 2.0])];
        let merged = merge(l.clone());
        assert_eq!(merged.len(), 2);
        for x in &l {
            assert!(x.is_covered_by(&merged));
        }
        for m in &merged {
            assert!(m.is_covered_by(&l));
        }
        // Not adjacent: nothing merges.
        let apart = vec![b([0.0, 0.0], [1.0, 1.0]), b([1.5, 0.0], [2.0, 1.0])];
        assert_eq!(merge(apart).len(), 2);
    }
}
