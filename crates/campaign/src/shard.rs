//! `--shard K/N`: a deterministic slice of a plan's jobs.

use crate::error::{CampaignError, Result};
use crate::job::Job;
use std::fmt;

/// Shard `index` of `count` (1-based): the jobs whose ordinal is `index - 1` modulo `count`.
/// Dealing jobs round-robin spreads the large instances of a sorted list over all shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard> {
        let bad = || CampaignError::usage(format!("--shard {text}: expected K/N with 1 <= K <= N, e.g. 2/8"));
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    pub fn contains(&self, job: &Job) -> bool {
        self.owns(job.ordinal)
    }

    /// Whether the job at this position of the plan is the shard's.
    pub fn owns(&self, ordinal: usize) -> bool {
        ordinal % self.count == self.index - 1
    }

    /// The shard's jobs, in plan order.
    pub fn select<'a>(&self, jobs: &'a [Job]) -> Vec<&'a Job> {
        jobs.iter().filter(|j| self.contains(j)).collect()
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, count: 3 });
        assert_eq!(Shard::parse("2/3").unwrap().to_string(), "2/3");
        for bad in ["0/3", "4/3", "x/3", "3", "1/0", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_partition_the_ordinals() {
        for count in 1..6 {
            let shards: Vec<Shard> = (1..=count).map(|index| Shard { index, count }).collect();
            for ordinal in 0..20usize {
                let owners: Vec<usize> = shards.iter().filter(|s| s.owns(ordinal)).map(|s| s.index).collect();
                assert_eq!(owners, [ordinal % count + 1], "ordinal {ordinal} of {count} shards");
            }
        }
    }
}
