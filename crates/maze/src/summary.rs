//! A generated suite's summary (`maze generate`, `arena generate`): its one result object and
//! its text. The CLI prints these.

use crate::truth::Truth;
use std::path::Path;

/// A generated suite's counts.
pub struct Generation<'a> {
    pub command: &'static str,
    pub kind: &'static str,
    pub name: &'a str,
    /// The instances the spec asks for; fewer finished when the run's `--timeout` cut it.
    pub planned: usize,
    /// The truth of every instance finished.
    pub truths: Vec<&'a Truth>,
    pub suite: &'a Path,
    pub seconds: f64,
    /// One more count of the text's parenthesis (and of the JSON's `stats`).
    pub extra: Option<(&'static str, usize)>,
}

impl Generation<'_> {
    /// Whether the run's time limit cut it (fewer instances finished than planned).
    pub fn stopped(&self) -> bool {
        self.truths.len() < self.planned
    }

    fn counts(&self) -> [(&'static str, usize); 3] {
        let count = |want: Option<&str>| self.truths.iter().filter(|t| t.expect() == want).count();
        [("safe", count(Some("safe"))), ("not-inductive", count(Some("not-inductive"))), ("not judged", count(None))]
    }

    /// One result object: `verdict` `complete` or `incomplete`, `status` `done`, or `unknown`
    /// with the time limit as its reason when the run's `--timeout` cut it. `version`: the
    /// binary's.
    pub fn to_json(&self, version: &str) -> serde_json::Value {
        let stopped = self.stopped();
        let mut out = serde_json::json!({
            "format": trestle_core::RESULT_FORMAT,
            "version": version,
            "command": self.command,
            "system": self.name,
            "verdict": if stopped { "incomplete" } else { "complete" },
            "status": if stopped { "unknown" } else { "done" },
            "stats": { "instances": self.planned, "generated": self.truths.len(), "seconds": self.seconds },
            "details": { "suite": self.suite.display().to_string() },
        });
        for (name, n) in self.counts() {
            out["stats"]["by_truth"][name] = n.into();
        }
        if let Some((name, n)) = self.extra {
            out["stats"][name.replace(' ', "_")] = n.into();
        }
        if stopped {
            let why = trestle_core::Unknown::Timeout;
            out["reason"] = why.to_string().into();
            out["reason_kind"] = why.kind().into();
        }
        out
    }

    /// The summary's text (and, when the time limit cut the run, the line that says so).
    pub fn text(&self) -> String {
        let counts = self.counts();
        let extra = self.extra.map(|(name, n)| format!("; {n} {name}")).unwrap_or_default();
        let mut out = format!(
            "{} suite '{}': {} instances ({} safe, {} not-inductive, {} not judged{extra}) in {:.1} s\nsuite: {}\n",
            self.kind,
            self.name,
            self.truths.len(),
            counts[0].1,
            counts[1].1,
            counts[2].1,
            self.seconds,
            self.suite.display()
        );
        if self.stopped() {
            out.push_str(&format!(
                "unknown: {}: {} of {} instances finished\n",
                trestle_core::Unknown::Timeout,
                self.truths.len(),
                self.planned
            ));
        }
        out
    }
}
