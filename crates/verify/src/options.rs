//! The options of every question (`check`, `verify`, `ctl`, `ltl`, `cegar`, `synth`), built in one place
//! from what a front end read: the CLI's flags (`src/args.rs`) and the Python package's keyword
//! arguments (`crates/python`) fill the same request structs and call the same builders, so a value is checked, named in its error and
//! turned into the engines' options once. Choices are given by the names users write
//! (`"compositional"`, `"race"`); a front end spells a flag its own way ([`Spelling`]) in the
//! errors.

use crate::cegar::CegarMethod;
use crate::check::CheckOptions;
pub use crate::choices::*;
use crate::error::DriverError;
use crate::properties::VerifyOptions;
use std::path::PathBuf;
use std::time::Duration;
use trestle_cegar::CegarOptions;
use trestle_cegar::bmc::BmcOptions;
use trestle_cegar::explicit::ExplicitOptions;
use trestle_core::Budget;
use trestle_ctl::CtlOptions;
use trestle_ltl::LtlOptions;

/// Most worker threads a run may ask for. Results never depend on the thread count and threads
/// beyond the cores only contend; the cap turns a typo (`--threads 20000`, which spent minutes
/// starting threads whatever the time limit) into an error.
pub const MAX_THREADS: usize = 1024;

/// How a front end writes an option's name in its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// `--no-adaptive`.
    Cli,
    /// `no_adaptive`.
    Python,
}

impl Spelling {
    /// The option `name` (written with `-`) as this front end spells it.
    pub fn flag(self, name: &str) -> String {
        match self {
            Spelling::Cli => format!("--{name}"),
            Spelling::Python => name.replace('-', "_"),
        }
    }
}

/// The options every long-running question takes: a wall-clock limit and worker threads.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Seconds of the whole run (`None`: no limit).
    pub timeout: Option<f64>,
    /// Worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// The name the threads were given by (`threads`, or `jobs` where a command knows that one),
    /// for its errors.
    pub threads_flag: &'static str,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { timeout: None, threads: None, threads_flag: "threads" }
    }
}

impl Limits {
    /// The run's budget, its deadline counted from now.
    pub fn budget(&self, s: Spelling) -> Result<Budget, DriverError> {
        Ok(Budget::new(self.timeout.map(|t| seconds(t, &s.flag("timeout"))).transpose()?))
    }

    /// The worker threads asked for, checked (`None` when not given).
    pub fn threads(&self, s: Spelling) -> Result<Option<usize>, DriverError> {
        self.threads.map(|t| threads(t, &s.flag(self.threads_flag))).transpose()
    }

    /// The worker threads asked for, or all cores.
    pub fn threads_or_cores(&self, s: Spelling) -> Result<usize, DriverError> {
        Ok(self.threads(s)?.unwrap_or_else(cores))
    }
}

/// The cores of this machine (1 when unknown).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A value in seconds as a duration (non-negative and finite); `flag` names it in the error.
pub fn seconds(v: f64, flag: &str) -> Result<Duration, DriverError> {
    Duration::try_from_secs_f64(v)
        .map_err(|_| DriverError::input(format!("{flag} must be a non-negative number of seconds")))
}

/// A worker count: 1 to [`MAX_THREADS`].
pub fn threads(t: usize, flag: &str) -> Result<usize, DriverError> {
    match t {
        0 => Err(DriverError::input(format!("{flag} must be at least 1"))),
        t if t > MAX_THREADS => Err(DriverError::input(format!(
            "{flag} {t} is too many: at most {MAX_THREADS} (this machine has {} cores)",
            cores()
        ))),
        t => Ok(t),
    }
}

/// A fraction of an extent in (0, 1).
pub fn width(w: f64, flag: &str) -> Result<f64, DriverError> {
    if w > 0.0 && w < 1.0 { Ok(w) } else { Err(DriverError::input(format!("{flag} must be in (0, 1)"))) }
}

/// A bound propagation method by the name users write (`crown`, `alpha-crown`, `ibp`,
/// `forward`); `flag` names the option in the error.
pub fn bound_method(flag: &str, name: &str) -> Result<trestle_bounds::Method, DriverError> {
    Ok(match pick(flag, name, BOUND_METHODS)? {
        0 => trestle_bounds::Method::Crown,
        1 => trestle_bounds::Method::AlphaCrown(Default::default()),
        2 => trestle_bounds::Method::Ibp,
        _ => trestle_bounds::Method::Forward,
    })
}

/// `check`: the method, the bridge engine's tuning and a flow's enclosure. Every field left at
/// its default keeps the engine's default (the best measured configuration, or the paper's with
/// `paper`).
#[derive(Clone, Debug)]
pub struct CheckRequest {
    /// `bridge`, `monolithic` or `milp`.
    pub method: String,
    /// Start from the original tool's configuration; the other fields override it.
    pub paper: bool,
    /// The postcondition's bound method (see [`bound_method`]).
    pub post: Option<String>,
    pub linear_bridge: bool,
    /// Wins over `linear_bridge` when both are set.
    pub no_linear_bridge: bool,
    /// `influence`, `widest` or `all`.
    pub split: Option<String>,
    /// `fifo`, `dfs` or `priority`.
    pub queue: Option<String>,
    pub max_splits: Option<usize>,
    /// Seconds per Z3 query.
    pub smt_timeout: Option<f64>,
    pub min_width: Option<f64>,
    pub no_fast_path: bool,
    pub no_search: bool,
    pub exact_after: Option<usize>,
    pub no_exact_leaf: bool,
    pub dump_smt: Option<PathBuf>,
    pub synthesize_on_failure: bool,
    /// The Taylor order of a flow's enclosure (1 to 30).
    pub flow_order: Option<usize>,
    /// Equal sub-steps per period (1 to the flow's `max_substeps`).
    pub flow_substeps: Option<usize>,
    /// The largest truncation remainder of an adaptive sub-step, in (0, 1).
    pub flow_tolerance: Option<f64>,
}

impl Default for CheckRequest {
    fn default() -> CheckRequest {
        CheckRequest {
            method: "bridge".into(),
            paper: false,
            post: None,
            linear_bridge: false,
            no_linear_bridge: false,
            split: None,
            queue: None,
            max_splits: None,
            smt_timeout: None,
            min_width: None,
            no_fast_path: false,
            no_search: false,
            exact_after: None,
            no_exact_leaf: false,
            dump_smt: None,
            synthesize_on_failure: false,
            flow_order: None,
            flow_substeps: None,
            flow_tolerance: None,
        }
    }
}

impl CheckRequest {
    pub fn options(&self, limits: &Limits, s: Spelling) -> Result<CheckOptions, DriverError> {
        let method = pick(&s.flag("method"), &self.method, CHECK_METHODS)?;
        let mut c = if self.paper { trestle_bridge::Config::paper() } else { trestle_bridge::Config::default() };
        if let Some(p) = &self.post {
            c.post = bound_method(&s.flag("post"), p)?;
        }
        if self.no_linear_bridge {
            c.linear_bridge = false;
        } else if self.linear_bridge {
            c.linear_bridge = true;
        }
        if let Some(name) = &self.split {
            c.split = pick(&s.flag("split"), name, SPLITS)?;
        }
        if let Some(name) = &self.queue {
            c.queue = pick(&s.flag("queue"), name, QUEUES)?;
        }
        if let Some(t) = limits.threads(s)? {
            c.threads = t;
        }
        if let Some(m) = self.max_splits {
            c.max_splits = m;
        }
        if let Some(t) = self.smt_timeout {
            c.smt_timeout = seconds(t, &s.flag("smt-timeout"))?;
        }
        if let Some(w) = self.min_width {
            c.min_width = width(w, &s.flag("min-width"))?;
        }
        c.fast_path &= !self.no_fast_path;
        c.search &= !self.no_search;
        if self.exact_after.is_some() && self.no_exact_leaf {
            return Err(DriverError::input(format!(
                "{} and {} exclude each other",
                s.flag("exact-after"),
                s.flag("no-exact-leaf")
            )));
        }
        if self.exact_after.is_some() {
            c.exact_after = self.exact_after;
        }
        if self.no_exact_leaf {
            c.exact_after = None;
        }
        c.dump_smt = self.dump_smt.clone();
        let flow = flow_settings(self.flow_order, self.flow_substeps, self.flow_tolerance, s)?;
        Ok(CheckOptions { method, bridge: c, synthesize_on_failure: self.synthesize_on_failure, flow })
    }
}

/// A flow's enclosure settings from the `--flow-*` options (`check` and `synth`), each checked.
pub fn flow_settings(
    order: Option<usize>,
    substeps: Option<usize>,
    tolerance: Option<f64>,
    s: Spelling,
) -> Result<trestle_flow::FlowSettings, DriverError> {
    let mut flow = trestle_flow::FlowSettings::default();
    if let Some(o) = order {
        if !(1..=30).contains(&o) {
            return Err(DriverError::input(format!("{} must be in 1..=30", s.flag("flow-order"))));
        }
        flow.order = Some(o);
    }
    if let Some(n) = substeps {
        if n == 0 || n > flow.max_substeps {
            return Err(DriverError::input(format!(
                "{} must be in 1..={}",
                s.flag("flow-substeps"),
                flow.max_substeps
            )));
        }
        flow.substeps = Some(n);
    }
    if let Some(t) = tolerance {
        if !(t > 0.0 && t < 1.0) {
            return Err(DriverError::input(format!("{} must be in (0, 1)", s.flag("flow-tolerance"))));
        }
        flow.tolerance = t;
    }
    Ok(flow)
}

/// `verify`: which properties and each one's time limit.
#[derive(Clone, Debug, Default)]
pub struct VerifyRequest {
    /// Only these properties (all when empty).
    pub properties: Vec<String>,
    /// Seconds per property.
    pub property_timeout: Option<f64>,
}

impl VerifyRequest {
    /// The options; every engine gets the threads asked for, or all cores.
    pub fn options(&self, limits: &Limits, s: Spelling) -> Result<VerifyOptions, DriverError> {
        Ok(VerifyOptions {
            properties: self.properties.clone(),
            threads: limits.threads_or_cores(s)?,
            per_property: self.property_timeout.map(|t| seconds(t, &s.flag("property-timeout"))).transpose()?,
        })
    }
}

/// `ctl`: the method and its tuning.
#[derive(Clone, Debug)]
pub struct CtlRequest {
    /// `auto`, `compositional`, `monolithic` or `explicit`.
    pub method: String,
    /// Sub-boxes per network input box for the big-M bounds (the engine's default when `None`).
    pub pieces: Option<usize>,
}

impl CtlRequest {
    pub fn options(&self, limits: &Limits, s: Spelling) -> Result<CtlOptions, DriverError> {
        let mut opts =
            CtlOptions { method: pick(&s.flag("method"), &self.method, CTL_METHODS)?, ..CtlOptions::default() };
        if let Some(p) = self.pieces {
            if p == 0 {
                return Err(DriverError::input(format!("{} must be at least 1", s.flag("pieces"))));
            }
            opts.pieces = Some(p);
        }
        if let Some(t) = limits.threads(s)? {
            opts.threads = t;
        }
        Ok(opts)
    }
}

/// `ltl`: the method and its tuning.
#[derive(Clone, Debug)]
pub struct LtlRequest {
    /// `auto`, `bpt`, `rmilp`, `lasso` or `invariant`.
    pub method: String,
    /// The domain of bound propagation: `interval` or `crown`.
    pub bpt: String,
    /// The horizon of unbounded formulas' bounded checks and the longest lasso.
    pub depth: usize,
    /// Adaptive splitting of the MILPs (off: the paper's RMILP-only baseline).
    pub adaptive: bool,
    /// `race`, `on` or `off`.
    pub tighten: String,
}

impl LtlRequest {
    /// The engine's options; the threads are HiGHS's per MILP (the driver's invariant chain takes
    /// [`Limits::threads_or_cores`] for its engines).
    pub fn options(&self, limits: &Limits, s: Spelling) -> Result<LtlOptions, DriverError> {
        if self.depth == 0 || self.depth > 10_000 {
            return Err(DriverError::input(format!("{} must be between 1 and 10000", s.flag("depth"))));
        }
        let mut opts = LtlOptions {
            method: pick(&s.flag("method"), &self.method, LTL_METHODS)?,
            depth: self.depth,
            bpt: pick(&s.flag("bpt"), &self.bpt, LTL_DOMAINS)?,
            ..LtlOptions::default()
        };
        opts.rmilp.adaptive = self.adaptive;
        opts.rmilp.tightening = pick(&s.flag("tighten"), &self.tighten, LTL_TIGHTENINGS)?;
        opts.rmilp.threads = limits.threads(s)?;
        Ok(opts)
    }
}

/// `cegar`: the method and its tuning.
#[derive(Clone, Debug)]
pub struct CegarRequest {
    /// `cegar`, `bmc` or `explicit`.
    pub method: String,
    /// How policy spuriousness is refined: `ws` or `ce`.
    pub refine: String,
    pub heuristic: bool,
    pub incremental: bool,
    /// `lazy` or `z3`.
    pub encoding: String,
    /// The deepest unrolling of BMC.
    pub depth: usize,
}

impl CegarRequest {
    pub fn method(&self, s: Spelling) -> Result<CegarMethod, DriverError> {
        if self.depth == 0 || self.depth > 100_000 {
            return Err(DriverError::input(format!("{} must be between 1 and 100000", s.flag("depth"))));
        }
        let encoding = pick(&s.flag("encoding"), &self.encoding, CEGAR_ENCODINGS)?;
        Ok(match pick(&s.flag("method"), &self.method, CEGAR_METHODS)? {
            0 => CegarMethod::Cegar(CegarOptions {
                refine: pick(&s.flag("refine"), &self.refine, CEGAR_REFINEMENTS)?,
                heuristic: self.heuristic,
                incremental: self.incremental,
                encoding,
            }),
            1 => CegarMethod::Bmc(BmcOptions { max_depth: self.depth, encoding }),
            _ => CegarMethod::Explicit(ExplicitOptions::default()),
        })
    }
}

/// `synth`: the search's tuning.
#[derive(Clone, Debug, Default)]
pub struct SynthRequest {
    pub resolution: Option<usize>,
    pub max_boxes: Option<usize>,
    pub min_width: Option<f64>,
    pub forward: bool,
    pub full: bool,
    pub attack_steps: Option<usize>,
    pub smt_timeout: Option<f64>,
    /// A flow's enclosure (`[flow]` systems), as `check`'s.
    pub flow_order: Option<usize>,
    pub flow_substeps: Option<usize>,
    pub flow_tolerance: Option<f64>,
    /// `--reach`: half-sides of the terminal box tried, in order.
    pub reach_margins: Option<Vec<f64>>,
    /// `--reach`: the most chains (pieces of Init).
    pub reach_max_chains: Option<usize>,
    /// `--reach`: generators per state variable kept by each step's reduction.
    pub reach_generators: Option<usize>,
}

impl SynthRequest {
    pub fn config(&self, limits: &Limits, s: Spelling) -> Result<trestle_synth::SynthConfig, DriverError> {
        let mut c = trestle_synth::SynthConfig::default();
        if let Some(r) = self.resolution {
            if r == 0 {
                return Err(DriverError::input(format!("{} must be at least 1", s.flag("resolution"))));
            }
            c.resolution = Some(r);
        }
        if let Some(m) = self.max_boxes {
            if m == 0 {
                return Err(DriverError::input(format!("{} must be at least 1", s.flag("max-boxes"))));
            }
            c.max_boxes = m;
        }
        if let Some(w) = self.min_width {
            c.min_width = width(w, &s.flag("min-width"))?;
        }
        if let Some(t) = self.smt_timeout {
            c.bridge.smt_timeout = seconds(t, &s.flag("smt-timeout"))?;
        }
        if let Some(t) = limits.threads(s)? {
            c.threads = t;
            c.bridge.threads = t;
        }
        if let Some(a) = self.attack_steps {
            c.attack_steps = a;
        }
        if self.forward && self.full {
            return Err(DriverError::input(format!("{} and {} exclude each other", s.flag("forward"), s.flag("full"))));
        }
        c.forward = self.forward;
        c.full = self.full;
        Ok(c)
    }

    /// The flow's enclosure settings (`[flow]` systems).
    pub fn flow(&self, s: Spelling) -> Result<trestle_flow::FlowSettings, DriverError> {
        flow_settings(self.flow_order, self.flow_substeps, self.flow_tolerance, s)
    }

    /// The reach-chain search's settings (`--reach`).
    pub fn reach(&self, s: Spelling) -> Result<crate::flow_forever::ReachSettings, DriverError> {
        let mut r = crate::flow_forever::ReachSettings::default();
        if let Some(m) = &self.reach_margins {
            if m.is_empty() || m.iter().any(|&x| !(x.is_finite() && x > 0.0)) {
                return Err(DriverError::input(format!(
                    "{} must be one or more positive numbers",
                    s.flag("reach-margins")
                )));
            }
            r.terminal_radii = m.clone();
        }
        if let Some(c) = self.reach_max_chains {
            if c == 0 {
                return Err(DriverError::input(format!("{} must be at least 1", s.flag("reach-max-chains"))));
            }
            r.max_chains = c;
        }
        if let Some(g) = self.reach_generators {
            if !(1..=1000).contains(&g) {
                return Err(DriverError::input(format!("{} must be in 1..=1000", s.flag("reach-generators"))));
            }
            r.generators_per_state = g;
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CheckMethod;
    use trestle_bridge::config::Queue;
    use trestle_cegar::PolicyEncoding;

    #[test]
    fn each_front_end_names_the_option_its_way() {
        let r = LtlRequest {
            method: "auto".into(),
            bpt: "interval".into(),
            depth: 0,
            adaptive: true,
            tighten: "race".into(),
        };
        let none = Limits::default();
        assert_eq!(r.options(&none, Spelling::Cli).unwrap_err().to_string(), "--depth must be between 1 and 10000");
        assert_eq!(r.options(&none, Spelling::Python).unwrap_err().to_string(), "depth must be between 1 and 10000");
        let r = LtlRequest { depth: 10, tighten: "sometimes".into(), ..r };
        assert_eq!(
            r.options(&none, Spelling::Python).unwrap_err().to_string(),
            "tighten='sometimes': expected one of race, on, off"
        );
        let limits = Limits { timeout: Some(-1.0), threads: Some(0), ..Limits::default() };
        assert_eq!(
            limits.budget(Spelling::Cli).unwrap_err().to_string(),
            "--timeout must be a non-negative number of seconds"
        );
        assert_eq!(limits.threads(Spelling::Python).unwrap_err().to_string(), "threads must be at least 1");
        let synth = SynthRequest { max_boxes: Some(0), ..SynthRequest::default() };
        assert_eq!(
            synth.config(&Limits::default(), Spelling::Python).unwrap_err().to_string(),
            "max_boxes must be at least 1"
        );
    }

    #[test]
    fn check_requests_keep_the_engines_defaults_and_check_each_value() {
        let none = Limits::default();
        let o = CheckRequest::default().options(&none, Spelling::Cli).unwrap();
        let d = trestle_bridge::Config::default();
        assert_eq!(o.method, CheckMethod::Bridge);
        assert_eq!(
            (o.bridge.split, o.bridge.queue, o.bridge.linear_bridge, o.bridge.exact_after, o.bridge.threads),
            (d.split, d.queue, d.linear_bridge, d.exact_after, d.threads)
        );
        let paper = CheckRequest { paper: true, queue: Some("dfs".into()), ..CheckRequest::default() };
        let o = paper.options(&Limits { threads: Some(3), ..none }, Spelling::Cli).unwrap();
        let p = trestle_bridge::Config::paper();
        assert_eq!((o.bridge.split, o.bridge.queue, o.bridge.threads), (p.split, Queue::Dfs, 3));
        let both = CheckRequest { linear_bridge: true, no_linear_bridge: true, ..CheckRequest::default() };
        assert!(!both.options(&none, Spelling::Cli).unwrap().bridge.linear_bridge);
        let bad = |r: CheckRequest, s: Spelling| r.options(&none, s).unwrap_err().to_string();
        let r = CheckRequest { split: Some("random".into()), ..CheckRequest::default() };
        assert_eq!(bad(r, Spelling::Python), "split='random': expected one of influence, widest, all");
        let r = CheckRequest { exact_after: Some(3), no_exact_leaf: true, ..CheckRequest::default() };
        assert_eq!(bad(r, Spelling::Python), "exact_after and no_exact_leaf exclude each other");
        let r = CheckRequest { flow_order: Some(31), ..CheckRequest::default() };
        assert_eq!(bad(r, Spelling::Cli), "--flow-order must be in 1..=30");
        let r = CheckRequest { flow_tolerance: Some(1.0), ..CheckRequest::default() };
        assert_eq!(bad(r, Spelling::Cli), "--flow-tolerance must be in (0, 1)");
        let r = CheckRequest { method: "milp".into(), flow_substeps: Some(4), ..CheckRequest::default() };
        let o = r.options(&none, Spelling::Cli).unwrap();
        assert_eq!((o.method, o.flow.substeps), (CheckMethod::Milp, Some(4)));
    }

    #[test]
    fn the_names_users_write_choose_the_engines_options() {
        let ctl = CtlRequest { method: "explicit".into(), pieces: Some(4) };
        let o = ctl.options(&Limits { threads: Some(3), ..Limits::default() }, Spelling::Cli).unwrap();
        assert_eq!((o.method, o.pieces, o.threads), (trestle_ctl::Method::Explicit, Some(4), 3));
        let cegar = CegarRequest {
            method: "bmc".into(),
            refine: "ws".into(),
            heuristic: true,
            incremental: true,
            encoding: "z3".into(),
            depth: 7,
        };
        match cegar.method(Spelling::Cli).unwrap() {
            CegarMethod::Bmc(b) => assert_eq!((b.max_depth, b.encoding), (7, PolicyEncoding::Z3)),
            other => panic!("{other:?}"),
        }
    }
}
