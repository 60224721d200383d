//! The options that choose among a few named values (`--method`, `--split`, ...): each value's
//! name, help and meaning written once, for the CLI's flags, [`pick`] and the Python package's
//! errors. Re-exported by [`crate::options`].

use crate::check::CheckMethod;
use crate::error::DriverError;
use trestle_bridge::config::{Queue, Split};
use trestle_cegar::{PolicyEncoding, Refine};
use trestle_ltl::Tightening;

/// One value of an option that chooses among a few: the name users write, what it means (the
/// CLI's help of the value; empty when the name says it all) and what it selects. The CLI's flags
/// offer these names and [`pick`] reads them, so each choice is written once.
#[derive(Clone, Copy, Debug)]
pub struct Choice<T: 'static> {
    pub name: &'static str,
    pub help: &'static str,
    pub value: T,
}

const fn choice<T>(name: &'static str, help: &'static str, value: T) -> Choice<T> {
    Choice { name, help, value }
}

/// `check --method`: the compositional engine or one of its baselines.
pub const CHECK_METHODS: &[Choice<CheckMethod>] = &[
    choice("bridge", "Compositional: boxes, bound propagation, the environment step in Z3", CheckMethod::Bridge),
    choice("monolithic", "The whole network encoded in Z3", CheckMethod::Monolithic),
    choice("milp", "Big-M MILP in HiGHS (floating-point evidence)", CheckMethod::Milp),
];

/// A bound propagation method (`check --post`, `bounds --method`): an index for
/// [`bound_method`].
pub const BOUND_METHODS: &[Choice<usize>] = &[
    choice("crown", "", 0),
    choice("alpha-crown", "CROWN with optimised lower slopes (default configuration)", 1),
    choice("ibp", "", 2),
    choice("forward", "", 3),
];

/// `check --split`.
pub const SPLITS: &[Choice<Split>] = &[
    choice(
        "influence",
        "The input with the largest influence by the linear bounds (from 3 state dimensions on, every one within half of the largest, at once)",
        Split::Influence,
    ),
    choice("widest", "", Split::Widest),
    choice("all", "Every dimension at once (the paper)", Split::All),
];

/// `check --queue`.
pub const QUEUES: &[Choice<Queue>] = &[
    choice("fifo", "Breadth first (the paper)", Queue::Fifo),
    choice("dfs", "", Queue::Dfs),
    choice("priority", "Largest estimated violation first", Queue::Priority),
];

/// `ctl --method`.
pub const CTL_METHODS: &[Choice<trestle_ctl::Method>] = &[
    choice(
        "auto",
        "Explicit when the states the formula looks at are few and finite, otherwise the compositional and monolithic engines raced (the first to decide wins)",
        trestle_ctl::Method::Auto,
    ),
    choice(
        "compositional",
        "A set of small MILPs built lazily depth first, pruned by bounds, solved in parallel",
        trestle_ctl::Method::Compositional,
    ),
    choice("monolithic", "One MILP for the whole formula", trestle_ctl::Method::Monolithic),
    choice(
        "explicit",
        "Exact explicit-state evaluation (finitely many initial states, finite inputs)",
        trestle_ctl::Method::Explicit,
    ),
];

/// `ltl --method`.
pub const LTL_METHODS: &[Choice<trestle_ltl::Method>] = &[
    choice(
        "auto",
        "Bound propagation first, then the recursive MILP for what it leaves open",
        trestle_ltl::Method::Auto,
    ),
    choice("bpt", "Bound propagation through time alone (exact, incomplete)", trestle_ltl::Method::Bpt),
    choice("rmilp", "The recursive MILP alone", trestle_ltl::Method::Rmilp),
    choice("lasso", "The lasso search alone (refutes unbounded F p and p U q)", trestle_ltl::Method::Lasso),
    choice("invariant", "Invariants alone (prove unbounded G p)", trestle_ltl::Method::Invariant),
];

/// `ltl --bpt`: the domain of bound propagation.
pub const LTL_DOMAINS: &[Choice<trestle_ltl::bpt::Domain>] = &[
    choice("interval", "Interval arithmetic through the networks (the notes' BPT)", trestle_ltl::bpt::Domain::Interval),
    choice(
        "crown",
        "Intervals met with CROWN's bounds of every layer (tighter, costlier)",
        trestle_ltl::bpt::Domain::Crown,
    ),
];

/// `ltl --tighten`.
pub const LTL_TIGHTENINGS: &[Choice<Tightening>] = &[
    choice("race", "Both encodings at once on two threads; the first to decide cancels the other", Tightening::Race),
    choice("on", "Every step's bounds narrowed by the LP relaxation of the steps before it", Tightening::On),
    choice("off", "Bounds propagated one step at a time only", Tightening::Off),
];

/// `cegar --method`: an index (CEGAR, BMC, explicit) for [`CegarRequest::method`].
pub const CEGAR_METHODS: &[Choice<usize>] = &[
    choice("cegar", "Policy predicate abstraction refined by CEGAR (proves and refutes)", 0),
    choice(
        "bmc",
        "Bounded model checking: the network copied per step, loop-free paths (complete once no loop-free path of the current length exists)",
        1,
    ),
    choice("explicit", "Breadth-first search of the concrete states reachable under the policy (the oracle)", 2),
];

/// `cegar --refine`.
pub const CEGAR_REFINEMENTS: &[Choice<Refine>] = &[
    choice(
        "ws",
        "Witness splitting: separate the spurious state from the abstract edge's witness",
        Refine::WitnessSplit,
    ),
    choice(
        "ce",
        "Concretisation exclusion: separate the spurious state from every other state",
        Refine::ConcretisationExclusion,
    ),
];

/// `cegar --encoding`.
pub const CEGAR_ENCODINGS: &[Choice<PolicyEncoding>] = &[
    choice(
        "lazy",
        "Z3 decides the linear part; the network runs exactly on Z3's proposals, and boxes where a label provably loses (outward-rounded CROWN bounds) are excluded",
        PolicyEncoding::Lazy,
    ),
    choice("z3", "The network inside every Z3 query, ReLUs as `ite` (the paper's encoding; slow)", PolicyEncoding::Z3),
];

/// The value among `choices` that `value` names; `flag` names the option in the error.
pub fn pick<T: Copy>(flag: &str, value: &str, choices: &[Choice<T>]) -> Result<T, DriverError> {
    choices.iter().find(|c| c.name == value).map(|c| c.value).ok_or_else(|| {
        let all: Vec<&str> = choices.iter().map(|c| c.name).collect();
        DriverError::input(format!("{flag}='{value}': expected one of {}", all.join(", ")))
    })
}
