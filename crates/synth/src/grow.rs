//! Growing the merged invariant along the field (issue 38): on a controller whose field wobbles
//! the cells the search keeps follow the wobbles, and even merged they are hundreds of boxes
//! where a few boxes, aligned with where the field takes the states, would be inductive.
//!
//! Two boxes of the union that touch are replaced by their hull `H` (with every box inside `H`)
//! when `H` lies in Safe (inside Safe's boxes rounded inward, so exactly) and `H`'s one-step
//! image, computed as for a cell ([`Imager::image`], no tolerance), is covered by the union
//! with `H` in it. The union only grows, so every state already in it still maps into it (the
//! images of its cells were covered by a smaller union); the states `H` adds map into it by the
//! image of `H`. Init stays inside. Pairs are tried most compact hull first (the two boxes
//! filling most of it), each box at most once per pass, passes repeated while something grows.
//!
//! Nothing here is trusted: the grown union is proven by the bridge engine like any other, with
//! `H` as one box of the proof's cover (its image was found covered by the same postcondition
//! and successor bounds the engine's fast path computes) and the cells elsewhere.

use crate::SynthError;
use crate::image::Imager;
use trestle_core::Budget;
use trestle_ir::{FBox, InnerBox};

/// Most hulls whose image is computed, per box of the union before growing (and at least
/// [`MIN_TRIES`]): bounds the work on a union of thousands of boxes.
const TRIES_PER_BOX: usize = 8;
const MIN_TRIES: usize = 256;

/// The union after growing, and the boxes its proof covers it with.
pub(crate) struct Grown {
    pub boxes: Vec<FBox>,
    /// The grown boxes themselves, and the cells inside the boxes that did not grow.
    pub cover: Vec<FBox>,
    /// Hull images computed.
    pub images: usize,
}

struct Member {
    bx: FBox,
    /// The boxes covering it in the proof.
    pieces: Vec<FBox>,
}

/// Grows the union `merged` of the cells `cells` (module documentation). `safe`: Safe's boxes
/// rounded inward. Stops early when `budget` is over (what grew so far is kept).
pub(crate) fn grow(
    imager: &Imager<'_>,
    safe: &[InnerBox],
    merged: Vec<FBox>,
    cells: &[FBox],
    budget: &Budget,
) -> Result<Grown, SynthError> {
    let mut members: Vec<Member> = merged.into_iter().map(|bx| Member { bx, pieces: Vec::new() }).collect();
    for c in cells {
        // Every cell lies in the merged box made of it.
        if let Some(m) = members.iter_mut().find(|m| m.bx.contains_box(c)) {
            m.pieces.push(c.clone());
        }
    }
    let safe: Vec<FBox> = safe.iter().map(|b| b.clone().into_fbox()).collect();
    let mut tries = (TRIES_PER_BOX * members.len()).max(MIN_TRIES);
    let mut images = 0;
    loop {
        let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
        for i in 0..members.len() {
            for j in i + 1..members.len() {
                let (a, b) = (&members[i].bx, &members[j].bx);
                if a.touches(b) {
                    let h = hull(a, b);
                    pairs.push(((a.volume() + b.volume()) / h.volume().max(f64::MIN_POSITIVE), i, j));
                }
            }
        }
        // The most compact hulls first; the sort is stable, so equals keep their order.
        pairs.sort_by(|x, y| y.0.total_cmp(&x.0));
        let mut changed = vec![false; members.len()];
        // The members added as hulls in this pass.
        let mut hulls: Vec<usize> = Vec::new();
        for (_, i, j) in pairs {
            if tries == 0 || budget.is_over() {
                break;
            }
            if changed[i] || changed[j] {
                continue;
            }
            let h = hull(&members[i].bx, &members[j].bx);
            if !h.is_covered_by_unless(&safe, || budget.is_over()).unwrap_or(false) {
                continue;
            }
            tries -= 1;
            images += 1;
            // The union with `h` in place of the boxes inside it.
            let union: Vec<&FBox> =
                members.iter().map(|m| &m.bx).filter(|b| !h.contains_box(b)).chain(std::iter::once(&h)).collect();
            let maps_inside = imager.image(&h, false)?.iter().all(|img| {
                let near = union.iter().copied().filter(|b| b.touches(img));
                img.is_covered_by_unless(near, || budget.is_over()).unwrap_or(false)
            });
            if !maps_inside {
                continue;
            }
            for (k, m) in members.iter().enumerate() {
                if h.contains_box(&m.bx) {
                    changed[k] = true;
                }
            }
            hulls.push(members.len());
            members.push(Member { bx: h.clone(), pieces: vec![h] });
            changed.push(true);
        }
        // Boxes inside a hull of this pass leave the union, and their pieces the cover (of two
        // equal hulls the later stays).
        let inside_hull = |k: usize, members: &[Member]| {
            hulls.iter().any(|&h| {
                h != k && members[h].bx.contains_box(&members[k].bx) && (members[h].bx != members[k].bx || h > k)
            })
        };
        let keep: Vec<bool> = (0..members.len()).map(|k| !inside_hull(k, &members)).collect();
        let mut k = 0;
        members.retain(|_| {
            k += 1;
            keep[k - 1]
        });
        let grew = !hulls.is_empty();
        if !grew || tries == 0 || budget.is_over() {
            break;
        }
    }
    let boxes = members.iter().map(|m| m.bx.clone()).collect();
    let cover = members.into_iter().flat_map(|m| m.pieces).collect();
    Ok(Grown { boxes, cover, images })
}

/// The smallest box containing both.
fn hull(a: &FBox, b: &FBox) -> FBox {
    FBox::new(
        a.lo.iter().zip(&b.lo).map(|(x, y)| x.min(*y)).collect(),
        a.hi.iter().zip(&b.hi).map(|(x, y)| x.max(*y)).collect(),
    )
}

/// A box candidate and the pieces its image was computed on.
type Candidate = (FBox, Vec<FBox>);

/// Most image computations per round of [`box_from_init`] (the box is cut into `r^d` pieces).
const BOX_PIECES: usize = 256;

/// Most rounds of [`box_from_init`].
const BOX_ROUNDS: usize = 32;

/// How far a side that the image crossed is pushed beyond it, as a share of the box's width:
/// without it a contracting field's hulls approach their limit from inside and never close.
const BOX_WIDENING: f64 = 0.05;

/// One box grown from Init along the field: the hull of Init, then repeatedly its hull with its
/// one-step image (the hull of the images of its `r^d` pieces, each as for a cell), each crossed
/// side pushed a little further, until the image lies inside the box: a box candidate and the
/// pieces its images were computed on (the proof's cover), with the number of images computed
/// (`None` for the box when it leaves Safe
/// (rounded inward), the rounds run out or `budget` is over). On a controller whose field wobbles
/// the grid's cells follow every wobble (hundreds of boxes, or no closure in the time limit)
/// where one box around what Init reaches is inductive. Only a candidate: the bridge engine
/// proves it or not.
pub(crate) fn box_from_init(
    imager: &Imager<'_>,
    init: &[FBox],
    safe: &[InnerBox],
    budget: &Budget,
) -> Result<(Option<Candidate>, usize), SynthError> {
    let mut images = 0;
    let Some(first) = init.first() else { return Ok((None, images)) };
    let mut b = init.iter().fold(first.clone(), |h, i| hull(&h, i));
    let d = b.dims();
    let mut r = 1usize;
    while (r + 1).checked_pow(d as u32).is_some_and(|n| n <= BOX_PIECES) {
        r += 1;
    }
    let safe: Vec<FBox> = safe.iter().map(|s| s.clone().into_fbox()).collect();
    for _ in 0..BOX_ROUNDS {
        if budget.is_over() || !b.is_covered_by_unless(&safe, || budget.is_over()).unwrap_or(false) {
            return Ok((None, images));
        }
        let pieces = grid(&b, r);
        images += pieces.len();
        let mut image: Option<FBox> = None;
        for p in &pieces {
            for img in imager.image(p, false)? {
                image = Some(image.map_or(img.clone(), |h| hull(&h, &img)));
            }
        }
        let Some(image) = image else { return Ok((Some((b, pieces)), images)) };
        if image.lo.iter().chain(&image.hi).any(|v| !v.is_finite()) {
            return Ok((None, images));
        }
        if b.contains_box(&image) {
            return Ok((Some((b, pieces)), images));
        }
        let mut next = hull(&b, &image);
        let w = next.widths();
        for (i, wi) in w.iter().enumerate() {
            if image.lo[i] < b.lo[i] {
                next.lo[i] -= BOX_WIDENING * wi;
            }
            if image.hi[i] > b.hi[i] {
                next.hi[i] += BOX_WIDENING * wi;
            }
        }
        b = next;
    }
    Ok((None, images))
}

/// `b` cut into `r` equal pieces per dimension (shared ends computed once, so they match).
fn grid(b: &FBox, r: usize) -> Vec<FBox> {
    let d = b.dims();
    let line = |i: usize, k: usize| {
        if k == r { b.hi[i] } else { (b.lo[i] + (b.hi[i] - b.lo[i]) * (k as f64 / r as f64)).min(b.hi[i]) }
    };
    let mut out = Vec::new();
    for code in 0..r.pow(d as u32) {
        let mut c = code;
        let mut lo = vec![0.0; d];
        let mut hi = vec![0.0; d];
        for i in 0..d {
            let k = c % r;
            c /= r;
            lo[i] = line(i, k);
            hi[i] = line(i, k + 1);
        }
        out.push(FBox::new(lo, hi));
    }
    out
}
