//! Clipping boxes, segments and polylines to the view window.

pub(crate) type Point = (f64, f64);

/// The closed view window `[x.0, x.1] x [y.0, y.1]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub x: (f64, f64),
    pub y: (f64, f64),
}

impl Window {
    pub fn contains(&self, p: Point) -> bool {
        self.x.0 <= p.0 && p.0 <= self.x.1 && self.y.0 <= p.1 && p.1 <= self.y.1
    }

    /// The part of the box `[lo, hi]` inside the window, if any.
    pub fn clip_box(&self, lo: Point, hi: Point) -> Option<(Point, Point)> {
        let lo = (lo.0.max(self.x.0), lo.1.max(self.y.0));
        let hi = (hi.0.min(self.x.1), hi.1.min(self.y.1));
        (lo.0 <= hi.0 && lo.1 <= hi.1).then_some((lo, hi))
    }

    /// The part of the segment `a -> b` inside the window, if any (Liang-Barsky).
    ///
    /// Works on halved coordinates so that no difference of finite inputs overflows; a cut point
    /// lies exactly on the window edge that cut it, and is clamped into the window against
    /// rounding, so the result always lies in the window.
    pub fn clip_segment(&self, a: Point, b: Point) -> Option<(Point, Point)> {
        let half = |p: Point| (p.0 / 2.0, p.1 / 2.0);
        let (ha, hb) = (half(a), half(b));
        let (lo, hi) = (half((self.x.0, self.y.0)), half((self.x.1, self.y.1)));
        let (dx, dy) = (hb.0 - ha.0, hb.1 - ha.1);
        // (p, q, edge): the segment enters or leaves the half-plane of `edge` at t = q / p.
        let edges = [
            (-dx, ha.0 - lo.0, Edge::X(self.x.0)),
            (dx, hi.0 - ha.0, Edge::X(self.x.1)),
            (-dy, ha.1 - lo.1, Edge::Y(self.y.0)),
            (dy, hi.1 - ha.1, Edge::Y(self.y.1)),
        ];
        let (mut start, mut end) = ((0.0_f64, None), (1.0_f64, None));
        for (p, q, edge) in edges {
            if p == 0.0 {
                if q < 0.0 {
                    return None;
                }
                continue;
            }
            let t = q / p;
            if p < 0.0 && t > start.0 {
                start = (t, Some(edge));
            } else if p > 0.0 && t < end.0 {
                end = (t, Some(edge));
            }
            if start.0 > end.0 {
                return None;
            }
        }
        let at = |(t, edge): (f64, Option<Edge>), end: Point| {
            // An end no edge cut is inside up to rounding (a segment from -4e275 to -6e219 "touches"
            // the window [0, 0.001] at t = 1 once rounded): clamped, it is inside exactly.
            let Some(edge) = edge else { return self.clamp(end) };
            let p = self.clamp((2.0 * (ha.0 + t * dx), 2.0 * (ha.1 + t * dy)));
            match edge {
                Edge::X(x) => (x, p.1),
                Edge::Y(y) => (p.0, y),
            }
        };
        Some((at(start, a), at(end, b)))
    }

    fn clamp(&self, p: Point) -> Point {
        (p.0.clamp(self.x.0, self.x.1), p.1.clamp(self.y.0, self.y.1))
    }

    /// The visible pieces of a polyline, each with at least two points.
    pub fn clip_polyline(&self, points: &[Point]) -> Vec<Vec<Point>> {
        let mut pieces: Vec<Vec<Point>> = Vec::new();
        let mut open = false;
        for pair in points.windows(2) {
            match self.clip_segment(pair[0], pair[1]) {
                Some((a, b)) => {
                    let continues = open && a == pair[0];
                    match pieces.last_mut() {
                        Some(piece) if continues => piece.push(b),
                        _ => pieces.push(vec![a, b]),
                    }
                    // The piece goes on only if this segment ended inside, unclipped.
                    open = b == pair[1];
                }
                None => open = false,
            }
        }
        pieces
    }
}

/// A window edge, by the coordinate it fixes.
#[derive(Debug, Clone, Copy)]
enum Edge {
    X(f64),
    Y(f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Window = Window { x: (0.0, 10.0), y: (0.0, 10.0) };

    #[test]
    fn boxes_are_intersected_with_the_window() {
        assert_eq!(W.clip_box((-5.0, 2.0), (5.0, 20.0)), Some(((0.0, 2.0), (5.0, 10.0))));
        assert_eq!(W.clip_box((11.0, 2.0), (12.0, 3.0)), None);
        assert_eq!(W.clip_box((10.0, 2.0), (12.0, 3.0)), Some(((10.0, 2.0), (10.0, 3.0))));
    }

    #[test]
    fn segments_are_cut_at_the_window_edges() {
        assert_eq!(W.clip_segment((-5.0, 5.0), (15.0, 5.0)), Some(((0.0, 5.0), (10.0, 5.0))));
        assert_eq!(W.clip_segment((1.0, 1.0), (2.0, 2.0)), Some(((1.0, 1.0), (2.0, 2.0))));
        assert_eq!(W.clip_segment((-1.0, 11.0), (11.0, 23.0)), None);
        assert_eq!(W.clip_segment((-1.0, -1.0), (-1.0, 5.0)), None);
        assert_eq!(W.clip_segment((-f64::MAX, 5.0), (f64::MAX, 5.0)), Some(((0.0, 5.0), (10.0, 5.0))));
        let diagonal = W.clip_segment((-f64::MAX, -f64::MAX), (f64::MAX, f64::MAX)).unwrap();
        assert!(W.contains(diagonal.0) && W.contains(diagonal.1));
        // Outside, but rounding makes it touch the edge at t = 1: whatever is returned is inside
        // (the uncut end was returned as is, and drawing it overflowed pixel arithmetic).
        let tiny = Window { x: (0.0, 0.001), y: (0.0, 0.001) };
        if let Some((p, q)) = tiny.clip_segment((-4.442700507102447e275, 0.0), (-6.462231252380151e219, 0.0)) {
            assert!(tiny.contains(p) && tiny.contains(q), "{p:?} {q:?}");
        }
    }

    #[test]
    fn polylines_split_where_they_leave_the_window() {
        let path = [(1.0, 1.0), (2.0, 2.0), (20.0, 2.0), (20.0, 3.0), (3.0, 3.0), (4.0, 4.0)];
        let pieces = W.clip_polyline(&path);
        assert_eq!(pieces, vec![vec![(1.0, 1.0), (2.0, 2.0), (10.0, 2.0)], vec![(10.0, 3.0), (3.0, 3.0), (4.0, 4.0)]]);
        assert!(W.clip_polyline(&[(1.0, 1.0)]).is_empty());
    }
}
