//! Random runs: the one sampler of start states, non-deterministic inputs and branches behind
//! every random run of a system (`trestle simulate` and the pictures' runs, LTL's falsification
//! by simulation and the runs its invariant search follows, the flow falsifier's starts). Seeded
//! ChaCha8, so a seed gives the same runs on every machine and thread; reals are drawn by
//! [`space::draw`] (floats inside their interval: an f64 run takes the very values drawn).
//!
//! The sampler proposes; it decides nothing. Its callers replay what they report exactly
//! (`trestle_core::Trace::simulate`) or enclose it.

use crate::FBox;
use crate::num::{Rational, rational_from_f64};
use crate::sim::{self, SimError};
use crate::space;
use crate::system::{NondetDomain, NondetVar, System, VarKind};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How an interval input is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ends {
    /// Uniformly over the interval.
    Uniform,
    /// At either end a quarter of the time each, uniformly otherwise: bounded disturbances do
    /// their worst at the ends.
    Often,
}

/// The inputs (exact, as drawn) and branch of every step of a run.
pub type Choices = Vec<(Vec<Rational>, usize)>;

/// A seeded source of random start states, inputs, branches and points.
pub struct RunSampler {
    rng: ChaCha8Rng,
}

impl RunSampler {
    /// The sampler of `seed`.
    pub fn new(seed: u64) -> RunSampler {
        RunSampler { rng: ChaCha8Rng::seed_from_u64(seed) }
    }

    /// One of `n` things (a box, a set member, an enabled branch), uniformly; `n` > 0.
    pub fn index(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// A value of `kind` in `[lo, hi]` ([`space::draw`]).
    pub fn value(&mut self, kind: VarKind, lo: &Rational, hi: &Rational) -> Option<Rational> {
        space::draw(kind, lo, hi, &mut self.rng)
    }

    /// A state in `ranges` (each variable's legal values, [`space::legal_range`]): every value
    /// drawn (the lower integer when the span exceeds an i64), or a random corner when `corner`
    /// (where bounded properties tend to fail).
    pub fn state(&mut self, sys: &System, ranges: &[(Rational, Rational)], corner: bool) -> Vec<Rational> {
        let corner = corner.then(|| self.rng.random::<u64>());
        ranges
            .iter()
            .enumerate()
            .map(|(i, (lo, hi))| match corner {
                Some(bits) if bits >> (i % 64) & 1 == 0 => lo.clone(),
                Some(_) => hi.clone(),
                None => self.value(sys.state[i].kind, lo, hi).unwrap_or_else(|| lo.ceil()),
            })
            .collect()
    }

    /// A value of input `v`: a member of its set, or a point of its interval drawn as `ends` says.
    pub fn input(&mut self, v: &NondetVar, ends: Ends) -> Rational {
        match &v.domain {
            NondetDomain::Interval(lo, hi) => {
                let end = if ends == Ends::Often { self.rng.random_range(0..4) } else { 2 };
                match end {
                    0 => lo.clone(),
                    1 => hi.clone(),
                    _ => self.value(VarKind::Real, lo, hi).expect("an interval input holds a value"),
                }
            }
            NondetDomain::Set(s) => s[self.index(s.len())].clone(),
        }
    }

    /// A point of `b` in f64, each coordinate uniform over its side.
    pub fn point(&mut self, b: &FBox) -> Vec<f64> {
        (0..b.dims())
            .map(|i| if b.lo[i] < b.hi[i] { self.rng.random_range(b.lo[i]..=b.hi[i]) } else { b.lo[i] })
            .collect()
    }

    /// A value uniform in `[-1, 1]` (the moves of a local search).
    pub fn signed_unit(&mut self) -> f64 {
        self.rng.random_range(-1.0..=1.0)
    }

    /// A random run of `depth` steps in f64 from `state` (inputs drawn as `ends` says, branches
    /// uniformly among the enabled ones): its choices (inputs exact, as drawn; the step gets their
    /// f64 forms inside their intervals, [`crate::nondet::f64_inputs`]) and its states as the
    /// exact values of the f64 ones. `None` when the run stops (a domain exit, a deadlock, a value
    /// that is not finite) before `depth` steps.
    pub fn f64_run(
        &mut self,
        sys: &System,
        state: &[Rational],
        depth: usize,
        ends: Ends,
    ) -> Option<(Choices, Vec<Vec<Rational>>)> {
        let mut x: Vec<f64> = state.iter().map(crate::num::to_f64_nearest).collect();
        let mut memory = sim::initial_memory::<f64>(sys);
        let mut choices = Vec::with_capacity(depth);
        let mut states = vec![state.to_vec()];
        for _ in 0..depth {
            let nondet: Vec<Rational> = sys.nondet.iter().map(|v| self.input(v, ends)).collect();
            let n64 = crate::nondet::f64_inputs(sys, &nondet);
            let pick = |enabled: &[usize]| -> Result<usize, SimError> { Ok(enabled[self.index(enabled.len())]) };
            let t = sim::step_choosing(sys, &x, &mut memory, &n64, pick).ok()?;
            if t.next.iter().any(|v| !v.is_finite()) {
                return None;
            }
            choices.push((nondet, t.branch));
            states.push(t.next.iter().map(|&v| rational_from_f64(v)).collect());
            x = t.next;
        }
        Some((choices, states))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::VarRef;
    use crate::num::parse_rational;
    use crate::parse::{SimpleScope, Symbol, parse_expr};
    use crate::pred::Pred;
    use crate::system::{Branch, DomainExit, StateVar, Step};

    /// x' = d with d in [-0.005, 0.005]: the nearest f64 of either end lies outside the interval.
    fn disturbed() -> System {
        let mut scope = SimpleScope::with_state(&["x"]);
        scope.add("d", Symbol::Var(VarRef::Nondet(0)));
        let q = |t: &str| parse_rational(t).unwrap();
        System {
            name: "disturbed".into(),
            description: String::new(),
            state: vec![StateVar { name: "x".into(), kind: VarKind::Real, domain: Default::default() }],
            nondet: vec![NondetVar { name: "d".into(), domain: NondetDomain::Interval(q("-0.005"), q("0.005")) }],
            actions: vec![],
            constants: vec![],
            networks: vec![],
            controllers: vec![],
            step: Step {
                branches: vec![Branch {
                    name: "step".into(),
                    guard: None,
                    label: None,
                    updates: vec![parse_expr("d", &scope).unwrap()],
                }],
            },
            init: Pred::True,
            safe: None,
            invariant: None,
            properties: vec![],
            domain_exit: DomainExit::Error,
        }
    }

    /// Runs that draw the ends a quarter of the time each go the whole way (the step gets floats
    /// inside the interval), every state lies in the interval exactly, both ends are drawn, and a
    /// seed gives the same run.
    #[test]
    fn f64_runs_at_the_ends_of_decimal_intervals_complete_and_repeat() {
        let sys = disturbed();
        let q = |t: &str| parse_rational(t).unwrap();
        let start = vec![q("0")];
        let (choices, states) = RunSampler::new(3).f64_run(&sys, &start, 40, Ends::Often).expect("the run completes");
        assert_eq!((choices.len(), states.len()), (40, 41));
        assert!(states.iter().flatten().all(|x| q("-0.005") <= *x && *x <= q("0.005")), "{states:?}");
        for end in [q("-0.005"), q("0.005")] {
            assert!(choices.iter().any(|(d, _)| d[0] == end), "{end} never drawn");
        }
        assert_eq!(RunSampler::new(3).f64_run(&sys, &start, 40, Ends::Often), Some((choices, states)));
    }
}
