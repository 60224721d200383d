//! How long a run may take, and whether it was called off: one [`Budget`] shared by every stage
//! of a run and every engine it calls.
//!
//! A budget is a deadline (an instant, not a duration, so that a later stage gets exactly what the
//! earlier ones left) and a [`Cancel`] token (raised by a race's winner, or by whoever started the
//! run). Engines poll [`Budget::check`] in every loop that can run long and hand
//! [`Budget::remaining`] to the solvers they call (Z3's watchdog, HiGHS's time limit and its
//! interrupt callback), so a run ends within a solver's reaction time of its limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A flag that stops a search from another thread. A [`Cancel::child`] is also stopped by its
/// parent, so a search cancelled from outside stops every part it raced.
#[derive(Clone, Debug)]
pub struct Cancel {
    /// This token's own flag last, its ancestors' before it (never empty).
    flags: Vec<Arc<AtomicBool>>,
}

impl Default for Cancel {
    fn default() -> Cancel {
        Cancel::new()
    }
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel { flags: vec![Arc::default()] }
    }

    /// A token cancelled by its own [`Cancel::cancel`] or by any of this one's.
    pub fn child(&self) -> Cancel {
        let mut flags = self.flags.clone();
        flags.push(Arc::default());
        Cancel { flags }
    }

    pub fn cancel(&self) {
        self.flags.last().expect("a token has its own flag").store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.flags.iter().any(|f| f.load(Ordering::Relaxed))
    }
}

impl PartialEq for Cancel {
    fn eq(&self, other: &Cancel) -> bool {
        self.flags.len() == other.flags.len() && self.flags.iter().zip(&other.flags).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

/// Why a run stopped before its verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Stop {
    #[error("time limit reached")]
    TimeLimit,
    #[error("cancelled")]
    Cancelled,
}

impl From<Stop> for crate::Unknown {
    fn from(s: Stop) -> crate::Unknown {
        match s {
            Stop::TimeLimit => crate::Unknown::Timeout,
            Stop::Cancelled => crate::Unknown::Interrupted,
        }
    }
}

/// A deadline and a cancellation token.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budget {
    deadline: Option<Instant>,
    cancel: Cancel,
}

impl Budget {
    /// No time limit, never cancelled (unless by its own token).
    pub fn unlimited() -> Budget {
        Budget::default()
    }

    /// `timeout` from now (`None`: no limit; nor is a time past what the clock can hold, such as
    /// `--timeout 1e19`, which overflowed `Instant + Duration` and panicked).
    pub fn new(timeout: Option<Duration>) -> Budget {
        Budget { deadline: deadline_after(timeout), cancel: Cancel::new() }
    }

    /// A budget ending at `deadline`.
    pub fn until(deadline: Option<Instant>) -> Budget {
        Budget { deadline, cancel: Cancel::new() }
    }

    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The time left (`None`: no limit; zero once the deadline has passed).
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline.map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// The time left, capped at `cap` (a per-query limit that must not outlive the run).
    pub fn remaining_capped(&self, cap: Duration) -> Duration {
        self.remaining().map_or(cap, |r| r.min(cap))
    }

    pub fn cancel_token(&self) -> &Cancel {
        &self.cancel
    }

    /// Stops this budget and every budget derived from it.
    pub fn cancel(&self) {
        self.cancel.cancel()
    }

    pub fn is_expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// `Err` once the deadline has passed or the token was raised.
    pub fn check(&self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            Err(Stop::Cancelled)
        } else if self.is_expired() {
            Err(Stop::TimeLimit)
        } else {
            Ok(())
        }
    }

    pub fn is_over(&self) -> bool {
        self.check().is_err()
    }

    /// A part of this run: it ends at the earlier of this deadline and `timeout` from now, and is
    /// cancelled with this budget (and on its own, without cancelling this one).
    pub fn sub(&self, timeout: Option<Duration>) -> Budget {
        let own = deadline_after(timeout);
        let deadline = match (self.deadline, own) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Budget { deadline, cancel: self.cancel.child() }
    }

    /// A part of this run that may use `fraction` of the time left (all of it when unlimited).
    pub fn share(&self, fraction: f64) -> Budget {
        self.sub(self.remaining().map(|r| r.mul_f64(fraction.clamp(0.0, 1.0))))
    }

    /// A part of this run cancelled with it but with its own token (a race's entrant).
    pub fn child(&self) -> Budget {
        self.sub(None)
    }
}

/// The instant `timeout` from now: `None` for no limit, and for a limit so far off that the clock
/// cannot represent it (no run lasts that long, so it is no limit either).
pub fn deadline_after(timeout: Option<Duration>) -> Option<Instant> {
    timeout.and_then(|t| Instant::now().checked_add(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_stops_with_its_parent_but_not_the_other_way() {
        let parent = Budget::unlimited();
        let child = parent.child();
        child.cancel();
        assert_eq!(child.check(), Err(Stop::Cancelled));
        assert_eq!(parent.check(), Ok(()));
        let other = parent.child();
        parent.cancel();
        assert_eq!(other.check(), Err(Stop::Cancelled));
    }

    /// `--timeout 9223372036854775808` (2^63 s) panicked in `Instant + Duration`: exit 4.
    #[test]
    fn a_limit_past_the_clock_is_no_limit() {
        for t in [Duration::MAX, Duration::from_secs(1 << 63), Duration::from_secs_f64(1e19)] {
            assert_eq!(Budget::new(Some(t)).deadline(), None, "{t:?}");
            assert_eq!(Budget::unlimited().sub(Some(t)).deadline(), None, "{t:?}");
            let whole = Budget::new(Some(Duration::from_secs(5)));
            assert_eq!(whole.sub(Some(t)).deadline(), whole.deadline(), "{t:?}");
        }
    }

    #[test]
    fn a_part_ends_no_later_than_the_whole() {
        let whole = Budget::new(Some(Duration::from_millis(50)));
        let part = whole.sub(Some(Duration::from_secs(3600)));
        assert!(part.remaining().expect("limited") <= Duration::from_millis(50));
        let unlimited = Budget::unlimited().sub(Some(Duration::from_millis(10)));
        assert!(unlimited.remaining().expect("limited") <= Duration::from_millis(10));
        let expired = Budget::new(Some(Duration::ZERO));
        assert_eq!(expired.check(), Err(Stop::TimeLimit));
        assert_eq!(expired.share(0.5).check(), Err(Stop::TimeLimit));
        assert_eq!(Budget::unlimited().remaining_capped(Duration::from_secs(2)), Duration::from_secs(2));
    }
}
