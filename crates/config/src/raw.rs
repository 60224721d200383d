//! The TOML document as written, before names are resolved (serde shapes only).

use indexmap::IndexMap;
use serde::Deserialize;

/// A number as a user writes it: TOML integer, TOML float (read as the shortest decimal that
/// denotes the same double, so `0.1` means 1/10), or a string holding an exact decimal or fraction.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum RawNum {
    Int(i64),
    Float(f64),
    Text(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    #[serde(default)]
    pub system: RawMeta,
    #[serde(default)]
    pub constants: IndexMap<String, RawNum>,
    pub state: IndexMap<String, RawStateVar>,
    #[serde(default)]
    pub nondet: IndexMap<String, RawNondet>,
    #[serde(default)]
    pub networks: IndexMap<String, RawNetwork>,
    pub controller: Option<RawController>,
    #[serde(default)]
    pub controllers: Vec<RawController>,
    #[serde(default, rename = "let")]
    pub lets: IndexMap<String, String>,
    pub step: Option<IndexMap<String, String>>,
    #[serde(default)]
    pub branch: Vec<RawBranch>,
    #[serde(default)]
    pub command: Vec<RawCommand>,
    pub init: Option<RawRegion>,
    pub safe: Option<RawRegion>,
    pub invariant: Option<RawRegion>,
    #[serde(default)]
    pub property: Vec<RawProperty>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMeta {
    pub name: Option<String>,
    #[serde(default)]
    pub description: String,
    /// "error" (default), "drop" or "ignore".
    pub on_domain_exit: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStateVar {
    #[serde(rename = "type", default = "default_real")]
    pub kind: String,
    pub domain: Option<[RawNum; 2]>,
}

fn default_real() -> String {
    "real".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNondet {
    pub interval: Option<[RawNum; 2]>,
    pub values: Option<Vec<RawNum>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNetwork {
    /// A model file (.onnx or .nnet), relative to the system file (or to the working directory
    /// when given with --set).
    pub path: Option<String>,
    /// "none" (raw weights) or "header" (the NNet header's clipping and normalisation as layers).
    pub nnet_normalization: Option<String>,
    /// An inline network, layer by layer.
    pub layers: Option<Vec<RawLayer>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLayer {
    #[serde(rename = "type", default = "default_dense")]
    pub kind: String,
    /// Rows are output neurons.
    pub weights: Vec<Vec<f64>>,
    pub recurrent: Option<Vec<Vec<f64>>>,
    pub bias: Option<Vec<f64>>,
    #[serde(default = "default_relu")]
    pub activation: String,
}

fn default_dense() -> String {
    "dense".into()
}

fn default_relu() -> String {
    "relu".into()
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawController {
    pub name: Option<String>,
    /// One network by its name in [networks].
    pub network: Option<String>,
    /// One network by file path (shorthand for an entry in [networks]).
    pub model: Option<String>,
    /// With `select_by`: the networks indexed by the selector's value.
    pub networks: Option<Vec<String>>,
    pub models: Option<Vec<String>>,
    pub select_by: Option<String>,
    pub nnet_normalization: Option<String>,
    /// Observation: one expression per network input (default: the state variables in order).
    pub inputs: Option<Vec<String>>,
    /// Real actions, one per network output.
    pub actions: Option<Vec<String>>,
    /// An index action set to the argmax of the outputs.
    pub argmax: Option<String>,
    /// Names of the argmax values (usable as constants in expressions).
    pub labels: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBranch {
    pub name: Option<String>,
    pub guard: Option<String>,
    #[serde(default, rename = "let")]
    pub lets: IndexMap<String, String>,
    #[serde(default)]
    pub update: IndexMap<String, String>,
}

/// A guarded command of a discrete policy: applies when the policy picks `label` and `guard` holds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCommand {
    pub label: String,
    pub name: Option<String>,
    pub guard: Option<String>,
    #[serde(default)]
    pub update: IndexMap<String, String>,
}

/// A state region: a predicate in text, a table of per-variable values / ranges, or boxes.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawRegion {
    Text(String),
    Boxes { boxes: Vec<IndexMap<String, RawRange>> },
    Table(IndexMap<String, RawRange>),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawRange {
    Value(RawNum),
    Range([RawNum; 2]),
    /// A finite set of values (`{ values = [-19.5, -22.5] }`).
    Set {
        values: Vec<RawNum>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProperty {
    pub name: String,
    pub ctl: Option<String>,
    pub ltl: Option<String>,
    /// A predicate that must hold in every reachable state.
    pub invariant: Option<String>,
}
