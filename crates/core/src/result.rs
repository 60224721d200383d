//! The result of a whole run, as every engine returns it, the CLI prints it (`--json`) and the
//! campaign runner stores it.
//!
//! Each engine keeps its own word for the verdict (`safe`, `not-inductive`, `true`, `unsafe`), but
//! every verdict has one of four [`Status`]es, and the status alone decides the exit code and what a
//! reader may rely on: `proven` rests on an exact argument that can be re-checked, `evidence` on a
//! floating-point solver's answer (a MILP found infeasible, with its margin), `refuted` on a trace
//! replayed exactly (or validated by enclosures where values are irrational), `unknown` on nothing.

use crate::trace::{Named, TraceJson};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The schema version of [`RunResult`].
pub const RESULT_FORMAT: &str = "trestle-result/1";

/// What a verdict rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Holds, by an exact argument (Z3 on exact rationals, outward-rounded bounds, exact
    /// enumeration); re-checkable where a certificate is written.
    Proven,
    /// Holds according to floating-point evidence (a MILP infeasible within its tolerances); the
    /// result carries the margin. Not an exact proof.
    Evidence,
    /// Fails: the result carries a trace replayed in exact rational arithmetic, or validated by
    /// high-precision enclosures strictly on the wrong side (its `precision_bits` set).
    Refuted,
    /// Nothing is claimed: a limit was reached or a question stayed undecided.
    Unknown,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Proven => "proven",
            Status::Evidence => "evidence",
            Status::Refuted => "refuted",
            Status::Unknown => "unknown",
        }
    }
}

/// Counters and times of a run: names to numbers, in the order the engine reports them.
/// `seconds` (wall time of the whole run) is always present.
pub type Stats = Named;

/// One run of one engine on one system (and property).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The engine's word for the outcome (`safe`, `not-inductive`, `true`, `false`, ...).
    pub verdict: String,
    pub status: Status,
    /// Always [`RESULT_FORMAT`].
    pub format: String,
    /// The tool version that produced it.
    pub version: String,
    /// `check`, `synth`, `ctl`, `ltl`, `cegar`, ...
    pub command: String,
    /// The system's name.
    pub system: String,
    /// The property checked, when the command checks a named or given formula.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// The decision method (`bridge`, `monolithic`, `milp`, `compositional`, `explicit`, ...).
    pub method: String,
    /// Why nothing is claimed (status `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The kind of that reason ([`crate::Unknown::kind`]: `time-limit`, `limit`, `unsupported`,
    /// `runs-may-stop`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_kind: Option<String>,
    /// What a `proven` or `evidence` verdict rests on, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// For `evidence`: how far below the violation threshold the solver's bound stayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// For `refuted`: the counterexample, replayed exactly or validated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceJson>,
    /// The configuration that produced it (engine options, limits, seed).
    pub config: Named,
    pub stats: Stats,
    /// Engine-specific details (side conditions, regions, invariants found, ...).
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub details: Named,
    /// Files written by the run (`certificate`, `plot`, ...) by kind.
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub artifacts: Named,
}

impl RunResult {
    /// A result with the envelope filled and everything optional empty.
    pub fn new(command: &str, system: &str, method: &str, verdict: &str, status: Status) -> RunResult {
        RunResult {
            verdict: verdict.to_string(),
            status,
            format: RESULT_FORMAT.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            command: command.to_string(),
            system: system.to_string(),
            property: None,
            method: method.to_string(),
            reason: None,
            reason_kind: None,
            evidence: None,
            margin: None,
            trace: None,
            config: Named::new(),
            stats: Named::new(),
            details: Named::new(),
            artifacts: Named::new(),
        }
    }

    /// The result of `verdict`, the engine's word for it being `word`: status, reason, margin
    /// and trace filled from the verdict (further runs of a branching-time refutation go to
    /// `details.other_traces`).
    pub fn of_verdict(
        command: &str,
        sys: &trestle_ir::System,
        method: &str,
        word: &str,
        verdict: &crate::Verdict,
    ) -> RunResult {
        let mut r = RunResult::new(command, &sys.name, method, word, verdict.status());
        match verdict {
            crate::Verdict::Proven { .. } => {}
            crate::Verdict::Evidence { margin } => r.margin = Some(*margin).filter(|m| m.is_finite()),
            crate::Verdict::Refuted { trace, others } => {
                r.trace = Some(trace.to_json(sys));
                if !others.is_empty() {
                    let others: Vec<TraceJson> = others.iter().map(|t| t.to_json(sys)).collect();
                    r.details.insert("other_traces".into(), serde_json::to_value(others).expect("JSON"));
                }
            }
            crate::Verdict::RefutedValidated { trace } => r.trace = Some(trace.to_json(sys)),
            crate::Verdict::Unknown(u) => r.set_unknown(u),
        }
        r
    }

    /// Marks the result unknown for `why`.
    pub fn set_unknown(&mut self, why: &crate::Unknown) {
        self.status = Status::Unknown;
        self.reason = Some(why.to_string());
        self.reason_kind = Some(why.kind().to_string());
    }

    /// Adds a counter or time to `stats`.
    pub fn stat(&mut self, name: &str, value: impl Into<Value>) -> &mut RunResult {
        self.stats.insert(name.to_string(), value.into());
        self
    }
}
