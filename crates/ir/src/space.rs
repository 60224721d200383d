//! The declared state space as searches see it: which exact values of a variable a box holds
//! (integers for `int`, 0 and 1 for `bool`, inside the domain), the legal state nearest to a
//! point, and the points where the step switches (guards, `if` conditions, kinks), which is where
//! counterexamples that exist only in exact arithmetic live.
//!
//! [`crate::sim::check_state`] is the definition; this module only proposes points that pass it.

use crate::expr::{Env, Expr, VarRef};
use crate::nondet::{expr_switches, pred_switches};
use crate::num::{Rational, clamp_f64_inside, rational_from_f64, rational_from_i64};
use crate::pred::FBox;
use crate::system::{DomainExit, StateVar, System, VarKind};

/// The values of the variable's kind in `[lo, hi]`, as the smallest closed interval holding them
/// (ends integral for `int` and `bool`); `None` when there is none.
pub fn kind_range(v: &StateVar, lo: &Rational, hi: &Rational) -> Option<(Rational, Rational)> {
    let (lo, hi) = match v.kind {
        VarKind::Real => (lo.clone(), hi.clone()),
        VarKind::Int => (lo.ceil(), hi.floor()),
        VarKind::Bool => (lo.ceil().max(rational_from_i64(0)), hi.floor().min(rational_from_i64(1))),
    };
    (lo <= hi).then_some((lo, hi))
}

/// The legal values of state variable `i` in `[lo, hi]`: of its kind and, unless the system
/// ignores domains, inside its domain.
pub fn legal_range(sys: &System, i: usize, lo: &Rational, hi: &Rational) -> Option<(Rational, Rational)> {
    let v = &sys.state[i];
    let (mut lo, mut hi) = (lo.clone(), hi.clone());
    if sys.domain_exit != DomainExit::Ignore {
        if let Some(l) = &v.domain.lo {
            lo = lo.max(l.clone());
        }
        if let Some(h) = &v.domain.hi {
            hi = hi.min(h.clone());
        }
    }
    kind_range(v, &lo, &hi)
}

/// A random value of `kind` in `[lo, hi]`: an f64 drawn uniformly between the nearest f64s of the
/// ends and moved to the nearest f64 inside the interval, for reals (so that an f64 run takes the
/// very value drawn; clamped exactly into the interval when it holds no f64); a uniform integer
/// for `int` and `bool`. `None` when no integer lies in the interval (or the span exceeds an
/// i64). Simulators and falsifiers draw their states and inputs with it.
pub fn draw<R: rand::Rng + ?Sized>(kind: VarKind, lo: &Rational, hi: &Rational, rng: &mut R) -> Option<Rational> {
    match kind {
        VarKind::Real => {
            let (l, h) = (crate::num::to_f64_nearest(lo), crate::num::to_f64_nearest(hi));
            let x = l + (h - l) * rng.random::<f64>();
            Some(match clamp_f64_inside(x, lo, hi) {
                Some(inside) => rational_from_f64(inside),
                None => rational_from_f64(x).max(lo.clone()).min(hi.clone()),
            })
        }
        VarKind::Int | VarKind::Bool => {
            let (l, h) = (lo.ceil().to_integer(), hi.floor().to_integer());
            if l > h {
                return None;
            }
            let span: i64 = (&h - &l).try_into().ok()?;
            Some(Rational::from_integer(l + rng.random_range(0..=span)))
        }
    }
}

/// The smallest box holding every point of `b` whose coordinates are of their variables' kinds
/// (ends of `int` and `bool` coordinates rounded inward to integers); `None` when there is none:
/// a box in which an `int` variable has no integer (or a `bool` neither 0 nor 1) holds no state,
/// and every claim about its states is vacuous. Domains are not consulted (the solvers prove
/// claims for every state of the right kinds).
pub fn kind_hull(sys: &System, b: &FBox) -> Option<FBox> {
    let mut out = b.clone();
    for (i, v) in sys.state.iter().enumerate() {
        let (lo, hi) = match v.kind {
            VarKind::Real => (b.lo[i], b.hi[i]),
            VarKind::Int => (b.lo[i].ceil(), b.hi[i].floor()),
            VarKind::Bool => (b.lo[i].ceil().max(0.0), b.hi[i].floor().min(1.0)),
        };
        if lo > hi {
            return None;
        }
        (out.lo[i], out.hi[i]) = (lo, hi);
    }
    Some(out)
}

/// The exact legal ranges of every variable in `b`, or `None` when `b` holds no legal state.
pub fn legal_box(sys: &System, b: &FBox) -> Option<Vec<(Rational, Rational)>> {
    (0..b.dims()).map(|i| legal_range(sys, i, &rational_from_f64(b.lo[i]), &rational_from_f64(b.hi[i]))).collect()
}

/// The legal state in `ranges` (from [`legal_box`]) nearest to `x`, coordinate by coordinate:
/// integers rounded to the nearest (ties up), everything clamped into its range.
pub fn nearest(sys: &System, ranges: &[(Rational, Rational)], x: &[Rational]) -> Vec<Rational> {
    x.iter()
        .zip(ranges)
        .zip(&sys.state)
        .map(|((q, (lo, hi)), v)| {
            let q = if v.kind == VarKind::Real { q.clone() } else { q.round() };
            q.max(lo.clone()).min(hi.clone())
        })
        .collect()
}

/// The f64 point nearest to `x` whose exact value is a legal state in `ranges` (from
/// [`legal_box`]): integers rounded, reals clamped into the floats inside their range. `None`
/// when some range holds no float.
pub fn nearest_f64(sys: &System, ranges: &[(Rational, Rational)], x: &[f64]) -> Option<Vec<f64>> {
    x.iter()
        .zip(ranges)
        .zip(&sys.state)
        .map(|((&q, (lo, hi)), v)| clamp_f64_inside(if v.kind == VarKind::Real { q } else { q.round() }, lo, hi))
        .collect()
}

/// The comparisons and kinks of the step that depend on the state alone (guards, `if`
/// conditions, arguments of `relu`/`abs`, differences of `min`/`max` arguments), once per system.
pub fn state_switches(sys: &System) -> Vec<Expr> {
    let mut all = Vec::new();
    for b in &sys.step.branches {
        if let Some(g) = &b.guard {
            pred_switches(g, &mut all);
        }
        b.updates.iter().for_each(|u| expr_switches(u, &mut all));
    }
    let mut out: Vec<Expr> = Vec::new();
    for e in all {
        let state_only = !e.mentions(|v| !matches!(v, VarRef::State(_)));
        if state_only && e.as_linear().is_some_and(|l| !l.is_constant()) && !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

/// Exact values of coordinate `i` in `[lo, hi]` where one of `switches` (affine in the state) is
/// zero with the other coordinates as in `at`, and the midpoints between neighbouring ones (a
/// window between two strict comparisons holds only its inside), ascending. For an integer
/// variable, the integers on both sides of each.
pub fn switch_points(
    sys: &System,
    switches: &[Expr],
    at: &[Rational],
    i: usize,
    (lo, hi): (&Rational, &Rational),
) -> Vec<Rational> {
    let mut roots: Vec<Rational> = Vec::new();
    for e in switches {
        let Some(l) = e.as_linear() else { continue };
        let k = l.coeff(VarRef::State(i));
        if k == rational_from_i64(0) {
            continue;
        }
        let mut rest = l.clone();
        rest.coeffs.remove(&VarRef::State(i));
        let r = -rest.eval_exact(&Env::new(at, &[], &[])) / k;
        if &r >= lo && &r <= hi {
            roots.push(r);
        }
    }
    roots.sort();
    roots.dedup();
    let mids: Vec<Rational> = roots.windows(2).map(|w| (&w[0] + &w[1]) / rational_from_i64(2)).collect();
    roots.extend(mids);
    if sys.state[i].kind != VarKind::Real {
        roots = roots.iter().flat_map(|r| [r.floor(), r.ceil()]).filter(|r| r >= lo && r <= hi).collect();
    }
    roots.sort();
    roots.dedup();
    roots
}

/// How far (in the max norm) `x` lies outside the union of `boxes`: > 0 outside, <= 0 inside
/// (minus the depth). A ranking for searches, in floating point; never a verdict.
pub fn distance_outside<B: AsRef<FBox>>(boxes: &[B], x: &[f64]) -> f64 {
    boxes
        .iter()
        .map(AsRef::as_ref)
        .map(|b| (0..x.len()).map(|i| (b.lo[i] - x[i]).max(x[i] - b.hi[i])).fold(f64::NEG_INFINITY, f64::max))
        .fold(f64::INFINITY, f64::min)
}

/// A deterministic pseudo-random stream (xorshift64*) for the sample points of searches: seeded
/// by data, never by time or thread, so a search proposes the same points on every run.
pub struct Stream(u64);

impl Stream {
    /// A stream from a seed (any value; scrambled, and never the all-zero state xorshift cannot
    /// leave).
    pub fn new(seed: u64) -> Stream {
        Stream(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// A stream seeded by a box's ends (a search of the box proposes the same points however the
    /// boxes are spread over threads).
    pub fn for_box(p: &FBox) -> Stream {
        let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
        for x in p.lo.iter().chain(&p.hi) {
            h = (h ^ x.to_bits()).wrapping_mul(0x100_0000_01B3).rotate_left(17);
        }
        Stream(h | 1)
    }

    /// The next 64 pseudo-random bits.
    pub fn bits(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The next value, uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.bits() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::parse_rational;
    use crate::parse::{SimpleScope, parse_expr, parse_pred};
    use crate::pred::Pred;
    use crate::sim::{self, SimError};
    use crate::system::{Branch, Domain, Step};

    fn q(s: &str) -> Rational {
        parse_rational(s).unwrap()
    }

    fn qs(xs: &[&str]) -> Vec<Rational> {
        xs.iter().map(|x| q(x)).collect()
    }

    /// x int in [0, 3], y real; one branch, enabled when `x + y < 2.5`, steps x to x + 1.
    fn counter(exit: DomainExit) -> System {
        let scope = SimpleScope::with_state(&["x", "y"]);
        let var = |name: &str, kind, domain| StateVar { name: name.into(), kind, domain };
        System {
            name: "counter".into(),
            description: String::new(),
            state: vec![
                var("x", VarKind::Int, Domain { lo: Some(q("0")), hi: Some(q("3")) }),
                var("y", VarKind::Real, Domain::default()),
            ],
            nondet: vec![],
            actions: vec![],
            constants: vec![],
            networks: vec![],
            controllers: vec![],
            step: Step {
                branches: vec![Branch {
                    name: "up".into(),
                    guard: Some(parse_pred("x + y < 2.5", &scope).unwrap()),
                    label: None,
                    updates: vec![parse_expr("x + 1", &scope).unwrap(), parse_expr("y", &scope).unwrap()],
                }],
            },
            init: Pred::True,
            safe: None,
            invariant: None,
            properties: vec![],
            domain_exit: exit,
        }
    }

    fn var(kind: VarKind) -> StateVar {
        StateVar { name: "x".into(), kind, domain: Domain::default() }
    }

    #[test]
    fn integer_kinds_hold_only_integers() {
        assert_eq!(kind_range(&var(VarKind::Int), &q("0.3"), &q("0.7")), None);
        assert_eq!(kind_range(&var(VarKind::Int), &q("-0.5"), &q("2.5")), Some((q("0"), q("2"))));
        assert_eq!(kind_range(&var(VarKind::Bool), &q("-3"), &q("0.9")), Some((q("0"), q("0"))));
        assert_eq!(kind_range(&var(VarKind::Bool), &q("1.5"), &q("3")), None);
        assert_eq!(kind_range(&var(VarKind::Real), &q("0.3"), &q("0.7")), Some((q("0.3"), q("0.7"))));
        let sys = counter(DomainExit::Error);
        assert_eq!(kind_hull(&sys, &FBox::new(vec![0.3, 0.1], vec![0.7, 0.2])), None);
        assert_eq!(
            kind_hull(&sys, &FBox::new(vec![0.3, 0.1], vec![2.7, 0.2])),
            Some(FBox::new(vec![1.0, 0.1], vec![2.0, 0.2]))
        );
    }

    /// Every step starts from a state: an int that is not an integer, or a value outside the
    /// domain (unless the system ignores domains), is refused before anything runs.
    #[test]
    fn a_step_starts_only_from_a_state() {
        let sys = counter(DomainExit::Error);
        let mut memory = sim::initial_memory::<Rational>(&sys);
        assert!(sim::successors(&sys, &qs(&["1", "0.5"]), &mut memory, &[]).is_ok());
        for (bad, why) in [(["1/2", "0"], "int [0, 3]"), (["4", "0"], "int [0, 3]")] {
            match sim::successors(&sys, &qs(&bad), &mut memory, &[]) {
                Err(e @ SimError::NotAState { .. }) => assert!(e.to_string().contains(why), "{e}"),
                other => panic!("{bad:?}: {other:?}"),
            }
            assert!(sim::check_state(&sys, &qs(&bad)).is_err());
        }
        assert!(matches!(sim::check_state(&sys, &qs(&["1"])), Err(SimError::StateDim { .. })));
        let hints = counter(DomainExit::Ignore);
        assert!(sim::check_state(&hints, &qs(&["4", "0"])).is_ok());
        assert!(sim::check_state(&hints, &qs(&["1/2", "0"])).is_err(), "kinds hold even where domains are hints");
        // x = 3 steps to 4, outside the domain: an error under Error, no successor under Drop.
        let s = sim::successors(&sys, &qs(&["3", "-1"]), &mut memory, &[]).unwrap();
        assert!(s.next.is_empty() && s.exits.len() == 1);
        assert!(matches!(sim::step(&sys, &qs(&["3", "-1"]), &mut memory, &[], 0), Err(SimError::DomainExit { .. })));
        let drop = counter(DomainExit::Drop);
        assert!(matches!(sim::step(&drop, &qs(&["3", "-1"]), &mut memory, &[], 0), Err(SimError::Deadlock)));
    }

    #[test]
    fn searches_get_legal_points_and_exact_switch_points() {
        let sys = counter(DomainExit::Error);
        let ranges = legal_box(&sys, &FBox::new(vec![-5.0, 0.0], vec![2.5, 1.0])).unwrap();
        assert_eq!(ranges, vec![(q("0"), q("2")), (q("0"), q("1"))]);
        assert_eq!(nearest(&sys, &ranges, &qs(&["0.6", "7"])), qs(&["1", "1"]));
        assert_eq!(nearest_f64(&sys, &ranges, &[1.4, -3.0]), Some(vec![1.0, 0.0]));
        assert!(legal_box(&sys, &FBox::new(vec![3.5, 0.0], vec![9.0, 1.0])).is_none(), "beyond the domain");
        // `x + y < 2.5` switches at y = 2.5 - x: y = 1/2 when x = 2 (outside [0, 1] when x = 1).
        let switches = state_switches(&sys);
        assert_eq!(switch_points(&sys, &switches, &qs(&["2", "0"]), 1, (&q("0"), &q("1"))), qs(&["1/2"]));
        assert!(switch_points(&sys, &switches, &qs(&["1", "0"]), 1, (&q("0"), &q("1"))).is_empty());
        // For the int x (y = 0.75): x = 1.75, so the integers 1 and 2 on both sides.
        assert_eq!(switch_points(&sys, &switches, &qs(&["0", "0.75"]), 0, (&q("0"), &q("3"))), qs(&["1", "2"]));
    }
}
