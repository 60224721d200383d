//! The whole `check`: Init => Inv, Inv => Safe and inductiveness, and the verdict.

use crate::config::Config;
use crate::engine::{self, InductiveRun, Inductiveness, Progress};
use crate::error::BridgeError;
use trestle_core::{Budget, Unknown, Verdict};
use trestle_ir::{FBox, OuterBox, Pred, System};
use trestle_smt::{Answer, Checker, CheckerConfig, EnvChecker, Witness};

/// The answer to one of the two side conditions.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    Proven,
    /// A state violating it (exact).
    Fails(Witness),
    Unknown(Unknown),
}

impl Condition {
    /// The condition an answer of the checker establishes.
    pub fn from_answer(a: Answer) -> Condition {
        match a {
            Answer::Valid => Condition::Proven,
            Answer::Invalid(w) => Condition::Fails(w),
            Answer::Unknown(r) => Condition::Unknown(r),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Condition::Proven => "proven",
            Condition::Fails(_) => "fails",
            Condition::Unknown(_) => "unknown",
        }
    }
}

/// What a check found. The verdict is the candidate's: `Refuted` means the candidate is not an
/// inductive invariant proving Safe (a state of Init outside it, a state of it outside Safe, or a
/// step leaving it), which says nothing about the system's runs.
#[derive(Clone, Debug)]
pub struct Report {
    pub verdict: Verdict,
    pub init: Condition,
    pub safe: Condition,
    pub inductive: InductiveRun,
    /// The invariant as checked: the outward f64 enclosure of the candidate's boxes.
    pub cover: Vec<FBox>,
    /// What a proof rests on when it is not a re-checkable bridge (the baselines).
    pub evidence: Option<String>,
}

impl Report {
    /// The engine's word for the verdict: `safe`, `safe-by-milp-evidence`, `unsafe-candidate`
    /// (a side condition fails), `not-inductive` or `unknown`.
    pub fn word(&self) -> &'static str {
        match &self.verdict {
            Verdict::Proven { .. } => "safe",
            Verdict::Evidence { .. } => "safe-by-milp-evidence",
            Verdict::Refuted { .. } if self.failed_condition().is_some() => "unsafe-candidate",
            Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => "not-inductive",
            Verdict::Unknown(_) => "unknown",
        }
    }

    /// The witness of a failing side condition, with the condition's name.
    pub fn failed_condition(&self) -> Option<(&'static str, &Witness)> {
        match (&self.init, &self.safe) {
            (Condition::Fails(w), _) => Some(("Init => Inv", w)),
            (_, Condition::Fails(w)) => Some(("Inv => Safe", w)),
            _ => None,
        }
    }

    /// The refuting witness: a failing side condition's state, or the step that leaves the
    /// invariant (`None` for a validated refutation, which has no exact successor).
    pub fn witness(&self) -> Option<&Witness> {
        self.failed_condition().map(|(_, w)| w).or(match &self.inductive.outcome {
            Inductiveness::Refuted(r) => Some(&r.witness),
            _ => None,
        })
    }
}

/// The candidate invariant of the system and its outward f64 enclosure as boxes.
pub fn invariant_cover(sys: &System) -> Result<(Pred, Vec<FBox>), BridgeError> {
    let inv = sys.invariant.clone().ok_or(BridgeError::NoInvariant)?;
    let boxes = inv
        .to_box_union(sys.state.len(), 100_000)
        .ok_or_else(|| BridgeError::InvariantShape("it is not a conjunction/disjunction of variable bounds".into()))?;
    if boxes.is_empty() {
        return Err(BridgeError::InvariantShape("it is empty".into()));
    }
    let cover = boxes
        .iter()
        .map(|b| {
            let unbounded = |i: usize| b.lo[i].is_none() || b.hi[i].is_none();
            let name = |i: usize| sys.state[i].name.as_str();
            // Outward: the boxes the engine splits must cover the candidate (each query also
            // assumes the exact candidate, so the excess adds no states).
            b.enclosing_fbox().map(OuterBox::into_fbox).ok_or_else(|| {
                let v = (0..b.dims()).find(|&i| unbounded(i)).map_or("?", name);
                BridgeError::InvariantShape(format!("a box is unbounded in {v}"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((inv, cover))
}

/// Checks the system's candidate invariant: the three conditions and the verdict. `budget`
/// bounds the whole: the side conditions' queries are capped by it, and the engine gets what
/// they leave.
pub fn check(
    sys: &System,
    cfg: &Config,
    budget: &Budget,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report, BridgeError> {
    let side = side_conditions(sys, cfg, budget)?;
    let inductive = engine::check_inductive(sys, &side.inv, &side.cover, cfg, budget, progress)?;
    Ok(side.report(sys, inductive, None))
}

/// What every method shares: the candidate, its cover, `Init => Inv` and `Inv => Safe`.
pub struct SideConditions {
    pub inv: Pred,
    pub cover: Vec<FBox>,
    pub init: Condition,
    pub safe: Condition,
}

/// The candidate and its two side conditions, decided by Z3 within `budget`.
pub fn side_conditions(sys: &System, cfg: &Config, budget: &Budget) -> Result<SideConditions, BridgeError> {
    let (inv, cover) = invariant_cover(sys)?;
    if sys.safe.is_none() {
        return Err(BridgeError::NoSafe);
    }
    let mut checker = Checker::new(sys, side_config(cfg).with_deadline(budget.deadline()))?;
    let init = Condition::from_answer(checker.check_init(&inv)?);
    let safe = Condition::from_answer(checker.check_safe(&inv)?);
    Ok(SideConditions { inv, cover, init, safe })
}

impl SideConditions {
    /// The report of a run of the engine (or a baseline) over these side conditions; `evidence`
    /// says what a proof without bridge clauses rests on.
    pub fn report(self, sys: &System, inductive: InductiveRun, evidence: Option<String>) -> Report {
        let verdict = verdict(sys, &self, &inductive);
        Report { verdict, init: self.init, safe: self.safe, inductive, cover: self.cover, evidence }
    }

    /// The report of a baseline: one answer for the whole step, no clauses.
    pub fn baseline_report(
        self,
        sys: &System,
        outcome: Inductiveness,
        stats: engine::RunStats,
        evidence: Option<String>,
    ) -> Report {
        let inductive = InductiveRun {
            outcome,
            clauses: Vec::new(),
            exact_clauses: Vec::new(),
            undecided: Vec::new(),
            falsified: Vec::new(),
            stops: None,
            stats,
        };
        self.report(sys, inductive, evidence)
    }
}

/// The paper's monolithic baseline: `Inv /\ Next => Inv'` with the whole network inside one Z3
/// query (limited by `budget`, at most one hour), plus the two side conditions.
pub fn check_monolithic(sys: &System, cfg: &Config, budget: &Budget) -> Result<Report, BridgeError> {
    use trestle_smt::InductivenessChecker;
    let start = std::time::Instant::now();
    let side = side_conditions(sys, cfg, budget)?;
    let mut whole = side_config(cfg).with_deadline(budget.deadline());
    whole.timeout = Some(budget.remaining_capped(std::time::Duration::from_secs(3600)));
    let mut z3 = trestle_smt::Z3Backend::new(sys, whole)?;
    let outcome = match z3.check_inductive(&side.inv)? {
        Answer::Valid => Inductiveness::Proven,
        Answer::Invalid(witness) => Inductiveness::Refuted(engine::Refutation { witness, region: None }),
        Answer::Unknown(r) => Inductiveness::Unknown(r),
    };
    // No runs that stop either, on the cover's boxes with the networks encoded (the baseline has
    // no postconditions).
    let mut run = InductiveRun {
        outcome,
        clauses: Vec::new(),
        exact_clauses: Vec::new(),
        undecided: Vec::new(),
        falsified: Vec::new(),
        stops: None,
        stats: engine::RunStats::default(),
    };
    let pieces: Vec<_> = side.cover.iter().map(|b| (b.clone(), None)).collect();
    engine::require_stop_free(sys, &side.inv, &pieces, cfg, budget, &mut run)?;
    let (outcome, stops) = (run.outcome, run.stops);
    let stats = engine::RunStats {
        smt_queries: 1,
        z3_queries: 1,
        seconds: start.elapsed().as_secs_f64(),
        ..Default::default()
    };
    let evidence = matches!(outcome, Inductiveness::Proven).then(|| "one monolithic Z3 query, exact".to_string());
    let mut report = side.baseline_report(sys, outcome, stats, evidence);
    report.inductive.stops = stops;
    Ok(report)
}

/// The verdict of the three conditions: refuted by a failing side condition's state (a trace of
/// no steps) or by a step leaving the invariant; proven with the bridge's clauses as the
/// certificate (none for a baseline's one query).
fn verdict(sys: &System, side: &SideConditions, run: &InductiveRun) -> Verdict {
    match (&side.init, &side.safe, &run.outcome) {
        (Condition::Fails(w), _, _) | (_, Condition::Fails(w), _) => Verdict::refuted(w.to_trace(sys)),
        (_, _, Inductiveness::Refuted(r)) => Verdict::refuted(r.witness.to_trace(sys)),
        (_, _, Inductiveness::RefutedValidated(t)) => Verdict::RefutedValidated { trace: t.clone() },
        (Condition::Proven, Condition::Proven, Inductiveness::Proven) => {
            if run.clauses.is_empty() && run.exact_clauses.is_empty() {
                Verdict::proven()
            } else {
                let proof = crate::certificate::proof(sys, &side.cover, &run.clauses, &run.exact_clauses);
                Verdict::certified(serde_json::to_value(proof).expect("certificates serialise"))
            }
        }
        (Condition::Unknown(u), _, _) | (_, Condition::Unknown(u), _) | (_, _, Inductiveness::Unknown(u)) => {
            Verdict::Unknown(u.clone())
        }
    }
}

fn side_config(cfg: &Config) -> CheckerConfig {
    let mut c = CheckerConfig::default().with_timeout(cfg.smt_timeout);
    c.dump_dir = cfg.dump_smt.clone();
    c.dump_prefix = Some("side-".into());
    c
}
