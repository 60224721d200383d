//! Running one Z3 query: solver parameters (timeout, rlimit), the SMT-LIB dump, timing, the
//! mapping of `unknown` to a reason, and reading model values back as exact rationals.

use crate::config::{CANCEL_POLL, CheckerConfig};
use crate::dump::Dumper;
use crate::encode::VarTerm;
use crate::error::CheckError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Instant;
use trestle_core::Unknown;
use trestle_ir::Rational;
use trestle_ir::num::parse_rational;
use z3::ast::{Algebraic, Ast, Real};
use z3::{AstKind, Model, Params, SatResult, Solver};

/// What one `check-sat` said.
pub(crate) enum Outcome {
    Unsat,
    Sat(Model),
    Unknown(Unknown),
}

/// A fresh solver with the configured limits, specialised to `logic` when one is given (Z3's
/// general solver costs milliseconds of set-up per query; a logic-specific one a fraction of that).
///
/// The time limit is not Z3's `timeout` parameter: Z3 4.8.12's timer threads deadlock when
/// several threads time queries at once. [`check_again`] runs a watchdog that interrupts the
/// query's own context instead (each query has a fresh context, see [`crate::memory::isolated`]).
///
/// `ctrl_c` is off: during `check-sat` Z3 would install a SIGINT handler of its own, through one
/// process-wide pointer that concurrent queries overwrite and restore out of order, so Ctrl-C
/// either cancelled one query and was otherwise ignored, or jumped through a dangling pointer
/// (exit 139). Signals are the program's business (the CLI stops cleanly on SIGINT/SIGTERM).
pub(crate) fn new_solver(cfg: &CheckerConfig, logic: Option<&'static str>) -> Solver {
    let solver = logic.and_then(Solver::new_for_logic).unwrap_or_default();
    let mut params = Params::new();
    params.set_bool("ctrl_c", false);
    if let Some(r) = cfg.rlimit {
        params.set_u32("rlimit", r);
    }
    solver.set_params(&params);
    solver
}

/// Writes the dump (if configured) and runs `check-sat`, recording its time.
pub(crate) fn check(
    solver: &Solver,
    cfg: &CheckerConfig,
    dumper: Option<&mut Dumper>,
    comment: &str,
) -> Result<Outcome, CheckError> {
    if let Some(d) = dumper {
        d.write(comment, &solver.to_string())?;
    }
    Ok(check_again(solver, cfg))
}

/// `check-sat` without a dump (re-solves after extra assertions). A watchdog interrupts the query
/// at its time limit or when the run's cancellation token is raised (polled every
/// [`CANCEL_POLL`]).
pub(crate) fn check_again(solver: &Solver, cfg: &CheckerConfig) -> Outcome {
    let start = Instant::now();
    let fired = AtomicBool::new(false);
    let cancelled = AtomicBool::new(cfg.is_cancelled());
    let limit = cfg.query_limit();
    let result = if limit.is_some_and(|l| l.is_zero()) || cancelled.load(Ordering::SeqCst) {
        // The run's deadline has passed or it was called off: no query is started.
        fired.store(true, Ordering::SeqCst);
        SatResult::Unknown
    } else if limit.is_none() && cfg.cancel.is_none() {
        solver.check()
    } else {
        let ctx = z3::Context::thread_local();
        let handle = ctx.handle();
        let (fired, cancelled) = (&fired, &cancelled);
        let end = limit.map(|l| start + l);
        std::thread::scope(|scope| {
            let (done, finished) = std::sync::mpsc::channel::<()>();
            scope.spawn(move || {
                loop {
                    let now = Instant::now();
                    let wait = match (end, &cfg.cancel) {
                        (Some(e), None) => e.saturating_duration_since(now),
                        (Some(e), Some(_)) => e.saturating_duration_since(now).min(CANCEL_POLL),
                        (None, _) => CANCEL_POLL,
                    };
                    match finished.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => {}
                        _ => return,
                    }
                    if cfg.is_cancelled() {
                        cancelled.store(true, Ordering::SeqCst);
                    } else if !end.is_some_and(|e| Instant::now() >= e) {
                        continue;
                    }
                    fired.store(true, Ordering::SeqCst);
                    handle.interrupt();
                    return;
                }
            });
            let r = solver.check();
            drop(done);
            r
        })
    };
    cfg.stats.record_z3(start.elapsed());
    match result {
        SatResult::Unsat => Outcome::Unsat,
        SatResult::Sat => match solver.get_model() {
            Some(m) => Outcome::Sat(m),
            None => Outcome::Unknown(Unknown::Solver("sat without a model".into())),
        },
        SatResult::Unknown if cancelled.load(Ordering::SeqCst) => Outcome::Unknown(Unknown::Interrupted),
        SatResult::Unknown if fired.load(Ordering::SeqCst) => Outcome::Unknown(Unknown::Timeout),
        SatResult::Unknown => Outcome::Unknown(classify_unknown(solver.get_reason_unknown())),
    }
}

fn classify_unknown(reason: Option<String>) -> Unknown {
    let r = reason.unwrap_or_else(|| "no reason given".into());
    let lower = r.to_ascii_lowercase();
    if lower.contains("timeout") || lower.contains("canceled") || lower.contains("cancelled") {
        Unknown::Timeout
    } else if lower.contains("resource") || lower.contains("rlimit") {
        Unknown::ResourceLimit
    } else {
        Unknown::Solver(r)
    }
}

/// A model value of a Real- or Int-sorted variable.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Exact(Rational),
    /// An irrational algebraic number, with a rational approximation and Z3's rendering.
    Irrational {
        approx: Rational,
        text: String,
    },
}

/// The value of a variable in a model (model completion on: unconstrained variables get one).
pub(crate) fn value(model: &Model, v: &VarTerm) -> Result<Value, String> {
    if let Some(i) = &v.int {
        let e = model.eval(i, true).ok_or("the model cannot evaluate an int variable")?;
        let text = e.to_string();
        return parse_numeral(&text).map(Value::Exact).ok_or(format!("unexpected int value {text}"));
    }
    let e: Real = model.eval(&v.real, true).ok_or("the model cannot evaluate a real variable")?;
    if let Some((n, d)) = e.as_rational()
        && d != 0
    {
        return Ok(Value::Exact(Rational::new(n.into(), d.into())));
    }
    let text = e.to_string();
    if let Some(q) = parse_numeral(&text) {
        return Ok(Value::Exact(q));
    }
    if e.kind() == AstKind::Numeral || Algebraic::is_value(&e) {
        let approx = parse_rational(e.approx(30).trim_end_matches('?')).ok_or(format!("cannot approximate {text}"))?;
        return Ok(Value::Irrational { approx, text });
    }
    Err(format!("the model value {text} is not a number"))
}

/// Parses Z3's rendering of a rational numeral: `3`, `1.5`, `(- 2.0)`, `(/ 1.0 3.0)`,
/// `(- (/ 1.0 3.0))`. Anything else (e.g. `(root-obj ...)`) is `None`.
pub(crate) fn parse_numeral(text: &str) -> Option<Rational> {
    let tokens: Vec<String> =
        text.replace('(', " ( ").replace(')', " ) ").split_whitespace().map(String::from).collect();
    let mut pos = 0;
    let q = numeral(&tokens, &mut pos)?;
    (pos == tokens.len()).then_some(q)
}

fn numeral(t: &[String], pos: &mut usize) -> Option<Rational> {
    let tok = t.get(*pos)?;
    *pos += 1;
    if tok != "(" {
        return parse_rational(tok);
    }
    let op = t.get(*pos)?.clone();
    *pos += 1;
    let mut args = Vec::new();
    while t.get(*pos)? != ")" {
        args.push(numeral(t, pos)?);
    }
    *pos += 1;
    match (op.as_str(), args.as_slice()) {
        ("-", [a]) => Some(-a.clone()),
        ("-", [a, b]) => Some(a - b),
        ("/", [a, b]) if *b != Rational::from_integer(0.into()) => Some(a / b),
        _ => None,
    }
}

/// Offsets tried around a rational approximation: 0, then +-10^-20, +-10^-12, +-10^-6.
fn nudges() -> Vec<Rational> {
    let mut out = vec![Rational::from_integer(0.into())];
    for k in [20u32, 12, 6] {
        let d = Rational::new(1.into(), num_traits::pow(num_bigint::BigInt::from(10), k as usize));
        out.push(d.clone());
        out.push(-d);
    }
    out
}

/// Reads the variable groups of a satisfying model as exact rationals. When some are irrational
/// (nonlinear arithmetic), fixes them to nearby rationals (the approximation, then nudged by
/// 10^-20, 10^-12, 10^-6 either way) and re-solves: first only the variables
/// of `groups[0]` (the non-deterministic inputs, whose products with actions make the maze
/// nonlinear: once they are fixed the query is linear and its models rational), then all of them.
/// Returns the values and the model they come from.
pub(crate) fn rational_model(
    solver: &Solver,
    cfg: &CheckerConfig,
    mut model: Model,
    groups: &[&[VarTerm]],
) -> Result<(Vec<Vec<Rational>>, Model), Unknown> {
    const ROUNDS: usize = 4;
    for _ in 0..ROUNDS {
        let mut exact = Vec::new();
        let mut irrational = Vec::new();
        for (g, terms) in groups.iter().enumerate() {
            let mut vals = Vec::new();
            for (i, t) in terms.iter().enumerate() {
                match value(&model, t).map_err(Unknown::ReplayFailed)? {
                    Value::Exact(q) => vals.push(q),
                    Value::Irrational { approx, text } => {
                        irrational.push((g, i, approx.clone(), text));
                        vals.push(approx);
                    }
                }
            }
            exact.push(vals);
        }
        if irrational.is_empty() {
            return Ok((exact, model));
        }
        let first_group_only = irrational.iter().any(|(g, ..)| *g == 0);
        let scopes: Vec<bool> = if first_group_only { vec![true, false] } else { vec![false] };
        let mut next_model = None;
        'search: for only_first in scopes {
            // The approximation itself, then nudged either way (solution sets often have width).
            for offset in nudges() {
                solver.push();
                for (g, i, approx, _) in &irrational {
                    if !only_first || *g == 0 {
                        solver.assert(groups[*g][*i].real.eq(crate::encode::num(&(approx + &offset))));
                    }
                }
                match check_again(solver, cfg) {
                    Outcome::Sat(m) => {
                        next_model = Some(m);
                        break 'search;
                    }
                    Outcome::Unknown(r) => return Err(r),
                    Outcome::Unsat => solver.pop(1),
                }
            }
        }
        match next_model {
            Some(m) => model = m,
            None => {
                let texts: Vec<&str> = irrational.iter().map(|(.., t)| t.as_str()).collect();
                return Err(Unknown::IrrationalModel(format!(
                    "no rational counterexample near the algebraic values {}",
                    texts.join(", ")
                )));
            }
        }
    }
    Err(Unknown::IrrationalModel(format!("values still irrational after {ROUNDS} re-solves")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numerals_parse_exactly() {
        let q = |s: &str| parse_rational(s).unwrap();
        assert_eq!(parse_numeral("3"), Some(q("3")));
        assert_eq!(parse_numeral("(- 3)"), Some(q("-3")));
        assert_eq!(parse_numeral("(/ 1.0 3.0)"), Some(q("1/3")));
        assert_eq!(parse_numeral("(- (/ 1.0 3.0))"), Some(q("-1/3")));
        assert_eq!(parse_numeral("(/ (- 7.0) 2.0)"), Some(q("-3.5")));
        assert_eq!(parse_numeral("(root-obj (+ (^ x 2) (- 2)) 2)"), None);
        assert_eq!(parse_numeral("(/ 1.0 0.0)"), None);
    }

    #[test]
    fn irrational_models_are_replaced_by_nearby_rational_ones() {
        use crate::encode::num;
        let q = |s: &str| parse_rational(s).unwrap();
        let y = VarTerm::new("y", false);
        let square = y.real.clone() * y.real.clone();
        // A model with y = sqrt 2 (the only positive solution of y^2 = 2).
        let exact = Solver::new();
        exact.assert(square.eq(num(&q("2"))));
        exact.assert(y.real.gt(num(&q("0"))));
        assert_eq!(exact.check(), SatResult::Sat);
        let model = exact.get_model().unwrap();
        assert!(matches!(value(&model, &y), Ok(Value::Irrational { .. })));
        // A band around it has rational points: the re-solve finds one near sqrt 2.
        let band = Solver::new();
        band.assert(square.ge(num(&q("2"))));
        band.assert(square.le(num(&q("2.000001"))));
        let cfg = CheckerConfig::default();
        let (values, _) = rational_model(&band, &cfg, model, &[std::slice::from_ref(&y)]).unwrap();
        let v = &values[0][0];
        assert!(q("2") <= v * v && v * v <= q("2.000001"), "{v}");
        // Without a band there is none: IrrationalModel, never a rounded value.
        let model = exact.get_model().unwrap();
        let r = rational_model(&exact, &cfg, model, &[std::slice::from_ref(&y)]);
        assert!(matches!(r, Err(Unknown::IrrationalModel(_))), "{:?}", r.map(|v| v.0));
    }
}
