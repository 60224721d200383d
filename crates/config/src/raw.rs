//! The TOML document as written, before names are resolved (serde shapes only).
//!
//! Error messages come from serde; every type says what it expects in the user's words
//! (`#[serde(expecting = ..)]`), never by its Rust name. (An untagged enum's `expecting` is the
//! whole message, hence its leading "expected".)

use indexmap::IndexMap;
use serde::Deserialize;

/// A number as a user writes it: a TOML integer, or text holding an exact decimal or fraction.
/// TOML floats arrive as their literal's text (see [`crate::document`]), so `0.1` means 1/10 and
/// `1.00000000000000000001` keeps every digit.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged, expecting = "expected a number (like 0.5, -3 or \"1/3\")")]
pub enum RawNum {
    Int(i64),
    Text(String),
}

/// An entry of `[flow]`: the period (a number) or a state variable's rate (an expression, or a
/// plain integer).
#[derive(Clone, Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "expected the period (a number) or a state variable's rate (an expression in quotes, like \"-x + u\")"
)]
pub enum RawFlowEntry {
    Int(i64),
    Text(String),
}

/// A weight or bias of an inline network: an f64 by definition (networks are f64 networks, as
/// in ONNX and NNet files). A literal is read as the nearest f64 (Rust's correctly rounded
/// parser), so `0.1` is the double nearest 1/10, as in every machine-learning framework.
#[derive(Clone, Copy, Debug)]
pub struct Weight(pub f64);

impl<'de> Deserialize<'de> for Weight {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Weight, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Weight;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number (a network weight)")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Weight, E> {
                Ok(Weight(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Weight, E> {
                Ok(Weight(v as f64))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Weight, E> {
                Ok(Weight(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Weight, E> {
                match v.trim().parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(Weight(x)),
                    _ => Err(E::custom(format!("'{v}' is not a finite number (a network weight)"))),
                }
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a system file (a TOML table)")]
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
    /// A continuous-time plant: `period = T` and one rate `x = "expr"` per state variable.
    pub flow: Option<IndexMap<String, RawFlowEntry>>,
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
#[serde(deny_unknown_fields, expecting = "a table like { name = \"..\", description = \"..\" }")]
pub struct RawMeta {
    pub name: Option<String>,
    #[serde(default)]
    pub description: String,
    /// "error" (default), "drop" or "ignore".
    pub on_domain_exit: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a state variable: a table like { type = \"real\" } or { type = \"int\", domain = [0, 10] }"
)]
pub struct RawStateVar {
    #[serde(rename = "type", default = "default_real")]
    pub kind: String,
    pub domain: Option<[RawNum; 2]>,
}

fn default_real() -> String {
    "real".into()
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a non-deterministic input: a table like { interval = [lo, hi] } or { values = [..] }"
)]
pub struct RawNondet {
    pub interval: Option<[RawNum; 2]>,
    pub values: Option<Vec<RawNum>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a network: a table with `path = \"FILE\"` or `layers = [..]`")]
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
#[serde(
    deny_unknown_fields,
    expecting = "a layer: a table like { weights = [[..], ..], bias = [..], activation = \"relu\" }"
)]
pub struct RawLayer {
    #[serde(rename = "type", default = "default_dense")]
    pub kind: String,
    /// Rows are output neurons.
    pub weights: Vec<Vec<Weight>>,
    pub recurrent: Option<Vec<Vec<Weight>>>,
    pub bias: Option<Vec<Weight>>,
    /// relu (default), identity, leaky_relu (with `alpha`), clip (with `min` and/or `max`), tanh
    /// or sigmoid.
    #[serde(default = "default_relu")]
    pub activation: String,
    /// The slope of a leaky ReLU for negative inputs: an exact number that must be an f64.
    pub alpha: Option<RawNum>,
    /// The bounds of a clip (either may be left out: unbounded on that side): exact numbers that
    /// must be f64 values.
    pub min: Option<RawNum>,
    pub max: Option<RawNum>,
}

fn default_dense() -> String {
    "dense".into()
}

fn default_relu() -> String {
    "relu".into()
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a controller: a table like { network = \"NAME\", actions = [..] }")]
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
#[serde(deny_unknown_fields, expecting = "a branch: a table like { guard = \"..\", update = { .. } }")]
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
#[serde(deny_unknown_fields, expecting = "a command: a table like { label = \"..\", update = { .. } }")]
pub struct RawCommand {
    pub label: String,
    pub name: Option<String>,
    pub guard: Option<String>,
    #[serde(default)]
    pub update: IndexMap<String, String>,
}

/// A state region: a predicate in text, a table of per-variable values / ranges, or boxes.
///
/// Read by the kind of value (not as an untagged enum, whose only message is "no variant
/// matched"), so a problem inside a table is reported at its own key with its own message.
#[derive(Debug)]
pub enum RawRegion {
    Text(String),
    Boxes { boxes: Vec<IndexMap<String, RawRange>> },
    Table(IndexMap<String, RawRange>),
}

impl<'de> Deserialize<'de> for RawRegion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawRegion, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawRegion;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a region: a predicate in a string (\"0 <= x <= 1\"), a table of values and ranges \
                     ({ x = [0, 1], y = 0.5 }) or { boxes = [{ .. }, ..] }",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawRegion, E> {
                Ok(RawRegion::Text(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RawRegion, A::Error> {
                let mut table = IndexMap::new();
                let mut boxes = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key == BOXES {
                        boxes = Some(map.next_value()?);
                    } else if table.insert(key.clone(), map.next_value()?).is_some() {
                        return Err(serde::de::Error::custom(format!("`{key}` is given twice")));
                    }
                }
                match (boxes, table.is_empty()) {
                    (None, _) => Ok(RawRegion::Table(table)),
                    (Some(boxes), true) => Ok(RawRegion::Boxes { boxes }),
                    (Some(_), false) => Err(serde::de::Error::custom(format!(
                        "`{BOXES}` cannot be mixed with variables ({}): put them in the boxes",
                        table.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
                    ))),
                }
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The key of a region table that holds a list of boxes. (A state variable of that name is
/// constrained in a predicate string or inside the boxes: `{ boxes = [{ boxes = [0, 1] }] }`.)
pub const BOXES: &str = "boxes";

/// One variable's part of a region: a value, a range `[lo, hi]` or a set `{ values = [..] }`.
/// Read by the kind of value, like [`RawRegion`].
#[derive(Debug)]
pub enum RawRange {
    Value(RawNum),
    Range([RawNum; 2]),
    /// A finite set of values (`{ values = [-19.5, -22.5] }`).
    Set {
        values: Vec<RawNum>,
    },
}

/// The `{ values = [..] }` form of [`RawRange`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a set like { values = [0.5, 1] }")]
struct RawSet {
    values: Vec<RawNum>,
}

impl<'de> Deserialize<'de> for RawRange {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RawRange, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = RawRange;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value (0.5), a range ([lo, hi]) or a set ({ values = [..] })")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawRange, E> {
                Ok(RawRange::Value(RawNum::Int(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawRange, E> {
                Ok(RawRange::Value(RawNum::Text(v.to_string())))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<RawRange, A::Error> {
                let ends = Vec::<RawNum>::deserialize(SeqAccessDeserializer::new(seq))?;
                let n = ends.len();
                let [lo, hi] = <[RawNum; 2]>::try_from(ends)
                    .map_err(|_| serde::de::Error::custom(format!("a range has two ends [lo, hi], not {n}")))?;
                Ok(RawRange::Range([lo, hi]))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RawRange, A::Error> {
                let set = RawSet::deserialize(MapAccessDeserializer::new(map))?;
                Ok(RawRange::Set { values: set.values })
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a property: a table like { name = \"..\", ctl = \"..\" }")]
pub struct RawProperty {
    pub name: String,
    pub ctl: Option<String>,
    pub ltl: Option<String>,
    /// A predicate that must hold in every reachable state.
    pub invariant: Option<String>,
    /// The horizon parameter: the formula may use `k` as a constant (`AG^k safe`,
    /// `AX^(k-1) ..`); `trestle ctl --k K` (or `--set property.N.k=K`) changes it.
    pub k: Option<u32>,
}
