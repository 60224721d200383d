//! Synthesis configuration.

/// How the invariant is searched for.
#[derive(Clone, Debug)]
pub struct SynthConfig {
    /// Cells per dimension of the initial grid over Safe's hull; `None`: 8, or fewer when `8^d`
    /// cells would exceed a quarter of `max_boxes` (refinement makes up for a coarse grid).
    pub resolution: Option<usize>,
    /// Most cells (boxes) the partition may hold; refinement stops there.
    pub max_boxes: usize,
    /// Cells narrower than this fraction of Safe's extent (in the dimension that would be split)
    /// are not split further.
    pub min_width: f64,
    /// Forward mode: the boxes reachable from Init until closure (refining where images leave
    /// Safe), instead of the greatest fixed point inside Safe.
    pub forward: bool,
    /// Greatest fixed point over all of Safe (the largest invariant the boxes can express), not
    /// only over what Init reaches inside it. Slower; the same verdict where both finish.
    pub full: bool,
    /// Worker threads for image computations and the proof (results do not depend on it).
    pub threads: usize,
    /// Steps simulated from Init when looking for a run that leaves Safe.
    pub attack_steps: usize,
    /// The bridge engine that proves the found invariant; its `post`, `linear_bridge` and
    /// `threads` are also those of the image computations.
    pub bridge: trestle_bridge::Config,
}

impl Default for SynthConfig {
    fn default() -> Self {
        let threads = rayon::current_num_threads();
        SynthConfig {
            resolution: None,
            max_boxes: 50_000,
            min_width: 1.0 / 4096.0,
            forward: false,
            full: false,
            threads,
            attack_steps: 200,
            bridge: trestle_bridge::Config { threads, ..trestle_bridge::Config::default() },
        }
    }
}

impl SynthConfig {
    /// The grid's cells per dimension for a state space of `dims` dimensions.
    pub fn grid_resolution(&self, dims: usize) -> usize {
        self.resolution.unwrap_or_else(|| {
            let mut r = 8usize;
            while r > 1 && (r as f64).powi(dims as i32) > self.max_boxes as f64 / 4.0 {
                r -= 1;
            }
            r
        })
    }

    pub(crate) fn validate(&self) -> Result<(), crate::SynthError> {
        let bad = |m: &str| Err(crate::SynthError::Config(m.into()));
        if self.resolution == Some(0) {
            return bad("the resolution must be at least 1");
        }
        if self.max_boxes == 0 {
            return bad("max_boxes must be at least 1");
        }
        if !(self.min_width > 0.0 && self.min_width < 1.0) {
            return bad("min_width must be in (0, 1)");
        }
        if self.threads == 0 {
            return bad("threads must be at least 1");
        }
        Ok(())
    }
}
