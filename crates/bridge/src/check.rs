//! The whole `check`: Init => Inv, Inv => Safe and inductiveness, and the verdict.

use crate::config::Config;
use crate::engine::{self, InductiveRun, Inductiveness, Progress};
use crate::error::BridgeError;
use std::time::Instant;
use trestle_ir::{FBox, OuterBox, Pred, System};
use trestle_smt::{Answer, Checker, CheckerConfig, EnvChecker, Witness};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Init => Inv, Inv => Safe and inductiveness are all proven: the system is safe forever.
    Safe,
    /// Init => Inv and Inv => Safe are proven; the MILP baseline found no violation of
    /// inductiveness, but only in floating point (HiGHS's bounds below a margin), and the exact
    /// confirmation stayed undecided. Evidence, not a proof: exit code 3.
    SafeByMilpEvidence,
    /// The candidate is not inductive: a replayed counterexample step is given.
    NotInductive,
    /// Init => Inv or Inv => Safe fails: a witness state is given.
    UnsafeCandidate,
    /// A limit was reached or a query stayed undecided; nothing is claimed.
    Unknown,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::SafeByMilpEvidence => "safe-by-milp-evidence",
            Verdict::NotInductive => "not-inductive",
            Verdict::UnsafeCandidate => "unsafe-candidate",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The answer to one of the two side conditions.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    Proven,
    /// A state violating it (exact).
    Fails(Witness),
    Unknown(String),
}

impl Condition {
    /// The condition an answer of the checker establishes.
    pub fn from_answer(a: Answer) -> Condition {
        match a {
            Answer::Valid => Condition::Proven,
            Answer::Invalid(w) => Condition::Fails(w),
            Answer::Unknown(r) => Condition::Unknown(r.to_string()),
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
    /// What the MILP baseline found (`--method milp` only).
    pub milp: Option<MilpSummary>,
}

/// What the MILP baseline found, and how its floating-point evidence was confirmed.
#[derive(Clone, Debug, PartialEq)]
pub struct MilpSummary {
    /// `evidence` (no violation, in floating point), `counterexample` (replayed exactly) or
    /// `unknown`.
    pub answer: &'static str,
    /// With `evidence`: the smallest margin by which HiGHS's bound on a violation stayed below 0.
    pub margin: Option<f64>,
    /// Evidence needs every bound below `-threshold` (tolerance + feasibility tolerance).
    pub threshold: f64,
    /// MILPs solved by HiGHS, objectives decided by interval bounds alone, coefficients below
    /// `trestle_milp::numerics::MIN_COEFFICIENT` moved into interval slacks.
    pub milps: usize,
    pub decided_by_bounds: usize,
    pub moved_coefficients: usize,
    pub seconds: f64,
    /// With `evidence`: how the exact confirmation by the bridge engine ended.
    pub confirmation: Option<Confirmation>,
}

/// The exact confirmation of MILP evidence.
#[derive(Clone, Debug, PartialEq)]
pub enum Confirmation {
    /// The bridge engine proved inductiveness (its clauses are in the report: a certificate).
    Proven,
    /// The bridge engine found an exact counterexample: the MILP evidence was wrong.
    Refuted,
    /// The bridge engine stayed undecided (why); the verdict is `safe-by-milp-evidence`.
    Undecided(String),
}

impl Confirmation {
    pub fn as_str(&self) -> &'static str {
        match self {
            Confirmation::Proven => "proven",
            Confirmation::Refuted => "refuted",
            Confirmation::Undecided(_) => "undecided",
        }
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

/// Checks the system's candidate invariant: the three conditions and the verdict.
/// `cfg.timeout` bounds the whole: the side conditions' queries are capped by it, and the engine
/// gets what they leave.
pub fn check(sys: &System, cfg: &Config, progress: &(dyn Fn(Progress) + Sync)) -> Result<Report, BridgeError> {
    let deadline = cfg.deadline();
    let side = side_conditions(sys, cfg, deadline)?;
    let inductive = engine::check_inductive(sys, &side.inv, &side.cover, &cfg.until(deadline), progress)?;
    Ok(side.report(inductive, None))
}

/// What every method shares: the candidate, its cover, `Init => Inv` and `Inv => Safe`.
struct SideConditions {
    inv: Pred,
    cover: Vec<FBox>,
    init: Condition,
    safe: Condition,
}

fn side_conditions(sys: &System, cfg: &Config, deadline: Option<Instant>) -> Result<SideConditions, BridgeError> {
    let (inv, cover) = invariant_cover(sys)?;
    if sys.safe.is_none() {
        return Err(BridgeError::NoSafe);
    }
    let mut checker = Checker::new(sys, side_config(cfg).with_deadline(deadline))?;
    let init = Condition::from_answer(checker.check_init(&inv)?);
    let safe = Condition::from_answer(checker.check_safe(&inv)?);
    Ok(SideConditions { inv, cover, init, safe })
}

impl SideConditions {
    fn report(self, inductive: InductiveRun, evidence: Option<String>) -> Report {
        let verdict = verdict(&self.init, &self.safe, &inductive.outcome);
        Report { verdict, init: self.init, safe: self.safe, inductive, cover: self.cover, evidence, milp: None }
    }

    /// The report of a baseline: one answer for the whole step, no clauses.
    fn baseline_report(self, outcome: Inductiveness, stats: engine::RunStats, evidence: Option<String>) -> Report {
        let inductive = InductiveRun {
            outcome,
            clauses: Vec::new(),
            exact_clauses: Vec::new(),
            undecided: Vec::new(),
            falsified: Vec::new(),
            stats,
        };
        self.report(inductive, evidence)
    }
}

/// The paper's monolithic baseline: `Inv /\ Next => Inv'` with the whole network inside one Z3
/// query (limited by `cfg.timeout`, default one hour), plus the two side conditions.
pub fn check_monolithic(sys: &System, cfg: &Config) -> Result<Report, BridgeError> {
    use trestle_smt::InductivenessChecker;
    let start = Instant::now();
    let deadline = cfg.deadline();
    let side = side_conditions(sys, cfg, deadline)?;
    let mut whole = side_config(cfg).with_deadline(deadline);
    whole.timeout = Some(cfg.until(deadline).timeout.unwrap_or(std::time::Duration::from_secs(3600)));
    let mut z3 = trestle_smt::Z3Backend::new(sys, whole)?;
    let outcome = match z3.check_inductive(&side.inv)? {
        Answer::Valid => Inductiveness::Proven,
        Answer::Invalid(witness) => Inductiveness::Refuted(engine::Refutation { witness, region: None }),
        Answer::Unknown(r) => Inductiveness::Unknown { reason: format!("monolithic Z3 query: {r}") },
    };
    let stats = engine::RunStats {
        smt_queries: 1,
        z3_queries: 1,
        seconds: start.elapsed().as_secs_f64(),
        ..Default::default()
    };
    let evidence = matches!(outcome, Inductiveness::Proven).then(|| "one monolithic Z3 query, exact".to_string());
    Ok(side.baseline_report(outcome, stats, evidence))
}

/// The exact big-M MILP baseline (HiGHS): one MILP per box, nondet vertex, branch and face,
/// maximising the violation of Inv'. A refutation is replayed exactly. "No violation" is
/// floating-point evidence (HiGHS's bounds below a margin, see `trestle_milp`), so it is confirmed
/// by the exact bridge engine in the time left: proven gives `safe` (with the bridge's clauses, a
/// certificate), an exact counterexample gives `not-inductive`, undecided gives
/// `safe-by-milp-evidence` (exit code 3, never 0). Limited by `cfg.timeout` (total, default one
/// hour) and `cfg.smt_timeout` (per MILP).
pub fn check_milp(sys: &System, cfg: &Config) -> Result<Report, BridgeError> {
    let start = Instant::now();
    let deadline = cfg.deadline();
    let side = side_conditions(sys, cfg, deadline)?;
    // The whole run's budget: the MILPs get what the side conditions left, the exact
    // confirmation what the MILPs left.
    let total = cfg.timeout.unwrap_or(std::time::Duration::from_secs(3600));
    let mut opts = trestle_milp::MilpOptions::default().with_time_limit(cfg.smt_timeout);
    opts.total_time_limit = Some(total.saturating_sub(start.elapsed()));
    let run = trestle_milp::check_inductive_milp(sys, &side.inv, &opts).map_err(|e| match e {
        // A dimension mismatch after validation is ours; the rest says what of the system the
        // baseline cannot encode or solve (HiGHS refuses values past its limits, bounds overflow).
        trestle_milp::MilpError::Dimension { .. } => BridgeError::Internal(format!("MILP baseline: {e}")),
        _ => BridgeError::Unsupported(format!("MILP baseline: {e}")),
    })?;
    let mut summary = MilpSummary {
        answer: match run.answer {
            trestle_milp::MilpAnswer::Evidence { .. } => "evidence",
            trestle_milp::MilpAnswer::Invalid(_) => "counterexample",
            trestle_milp::MilpAnswer::Unknown(_) => "unknown",
        },
        margin: None,
        threshold: opts.threshold(),
        milps: run.stats.milps,
        decided_by_bounds: run.stats.decided_by_bounds,
        moved_coefficients: run.stats.moved_coefficients,
        seconds: start.elapsed().as_secs_f64(),
        confirmation: None,
    };
    let stats = engine::RunStats { seconds: start.elapsed().as_secs_f64(), ..Default::default() };
    let mut report = match run.answer {
        trestle_milp::MilpAnswer::Invalid(witness) => {
            let outcome = Inductiveness::Refuted(engine::Refutation { witness, region: None });
            side.baseline_report(outcome, stats, None)
        }
        trestle_milp::MilpAnswer::Unknown(r) => {
            side.baseline_report(Inductiveness::Unknown { reason: format!("MILP: {r}") }, stats, None)
        }
        trestle_milp::MilpAnswer::Evidence { margin } => {
            summary.margin = Some(margin);
            confirm_milp_evidence(sys, cfg, side, &mut summary, total.saturating_sub(start.elapsed()))?
        }
    };
    report.inductive.stats.seconds = start.elapsed().as_secs_f64();
    report.milp = Some(summary);
    Ok(report)
}

/// Confirms MILP evidence exactly with the bridge engine within `budget`.
fn confirm_milp_evidence(
    sys: &System,
    cfg: &Config,
    side: SideConditions,
    summary: &mut MilpSummary,
    budget: std::time::Duration,
) -> Result<Report, BridgeError> {
    let margin = summary.margin.unwrap_or(f64::NAN);
    let what = format!("{} MILPs, HiGHS's bounds below -{margin:.3e} (floating-point evidence)", summary.milps);
    let exact = Config { timeout: Some(budget), ..cfg.clone() };
    let mut run = engine::check_inductive(sys, &side.inv, &side.cover, &exact, &|_| {})?;
    let (confirmation, evidence) = match &run.outcome {
        Inductiveness::Proven => {
            let clauses = run.clauses.len();
            (Confirmation::Proven, format!("{what}, confirmed exactly by the bridge engine ({clauses} clauses)"))
        }
        Inductiveness::Refuted(_) => {
            (Confirmation::Refuted, format!("{what} was wrong: the bridge engine found an exact counterexample"))
        }
        Inductiveness::Unknown { reason } => {
            let why = reason.clone();
            run.outcome =
                Inductiveness::Unknown { reason: format!("{what}; the exact confirmation stayed undecided: {why}") };
            (Confirmation::Undecided(why), what)
        }
    };
    let undecided = matches!(confirmation, Confirmation::Undecided(_));
    summary.confirmation = Some(confirmation);
    let mut report = side.report(run, Some(evidence));
    if undecided && report.init == Condition::Proven && report.safe == Condition::Proven {
        report.verdict = Verdict::SafeByMilpEvidence;
    }
    Ok(report)
}

fn verdict(init: &Condition, safe: &Condition, inductive: &Inductiveness) -> Verdict {
    match (init, safe, inductive) {
        (Condition::Fails(_), _, _) | (_, Condition::Fails(_), _) => Verdict::UnsafeCandidate,
        (_, _, Inductiveness::Refuted(_)) => Verdict::NotInductive,
        (Condition::Proven, Condition::Proven, Inductiveness::Proven) => Verdict::Safe,
        _ => Verdict::Unknown,
    }
}

fn side_config(cfg: &Config) -> CheckerConfig {
    let mut c = CheckerConfig::default().with_timeout(cfg.smt_timeout);
    c.dump_dir = cfg.dump_smt.clone();
    c.dump_prefix = Some("side-".into());
    c
}
