//! Raw TOML shapes -> the model IR: names resolved, expressions parsed, networks loaded.

use crate::error::ConfigError;
use crate::raw::*;
use indexmap::IndexMap;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network, RecurrentLayer};
use trestle_ir::num::{
    MAX_DECIMAL_EXPONENT, Rational, display_rational, exponent_out_of_range, parse_rational, rational_from_i64,
};
use trestle_ir::parse::{ParseError, Scope, SimpleScope, Symbol, parse_ctl, parse_expr, parse_ltl, parse_pred};
use trestle_ir::plant::SampledPlant;
use trestle_ir::pred::{CmpOp, Pred};
use trestle_ir::system::*;
use trestle_nn::{LoadOptions, NnetNormalization};

pub(crate) struct Resolver<'a> {
    pub file: &'a Path,
    /// Keys given with --set: their paths are relative to the working directory.
    pub overridden: &'a BTreeSet<String>,
    consts: Vec<(String, Rational)>,
    state: Vec<StateVar>,
    nondet: Vec<NondetVar>,
    actions: Vec<ActionVar>,
    networks: Vec<NamedNetwork>,
    lets: Vec<(String, Expr)>,
}

type R<T> = Result<T, ConfigError>;

impl<'a> Resolver<'a> {
    pub fn new(file: &'a Path, overridden: &'a BTreeSet<String>) -> Self {
        Resolver {
            file,
            overridden,
            consts: Vec::new(),
            state: Vec::new(),
            nondet: Vec::new(),
            actions: Vec::new(),
            networks: Vec::new(),
            lets: Vec::new(),
        }
    }

    fn err<T>(&self, key: impl Into<String>, message: impl Into<String>) -> R<T> {
        Err(ConfigError::new(self.file, Some(key.into()), message))
    }

    fn parse_err<T>(&self, key: impl Into<String>, e: ParseError) -> R<T> {
        self.err(key, format!("cannot parse: {e}"))
    }

    /// A number, exactly: TOML floats arrive as their literal's text (see [`crate::document`]).
    fn num(&self, key: &str, n: &RawNum) -> R<Rational> {
        match n {
            RawNum::Int(i) => Ok(rational_from_i64(*i)),
            RawNum::Text(t) => match parse_rational(t) {
                Some(q) => Ok(q),
                None if exponent_out_of_range(t) => self.err(
                    key,
                    format!("'{t}' is out of range: decimal exponents are limited to ±{MAX_DECIMAL_EXPONENT}"),
                ),
                None => {
                    self.err(key, format!("'{t}' is not a number (write a decimal like 0.1 or a fraction like 1/3)"))
                }
            },
        }
    }

    // ---------- scopes ----------

    fn base_scope(&self) -> SimpleScope {
        let mut s = SimpleScope::default();
        for (n, q) in &self.consts {
            s.add(n, Symbol::Const(q.clone()));
        }
        for (i, v) in self.state.iter().enumerate() {
            let sym =
                if v.kind == VarKind::Bool { Symbol::BoolVar(VarRef::State(i)) } else { Symbol::Var(VarRef::State(i)) };
            s.add(&v.name, sym);
        }
        s
    }

    fn observation_scope(&self) -> SimpleScope {
        let mut s = self.base_scope();
        for (i, v) in self.nondet.iter().enumerate() {
            s.add(&v.name, Symbol::Var(VarRef::Nondet(i)));
        }
        s
    }

    fn full_scope(&self) -> SimpleScope {
        let mut s = self.observation_scope();
        for (i, v) in self.actions.iter().enumerate() {
            s.add(&v.name, Symbol::Var(VarRef::Action(i)));
        }
        for (n, e) in &self.lets {
            s.add(n, Symbol::Macro(e.clone()));
        }
        s
    }

    fn check_name(&self, key: &str, name: &str) -> R<()> {
        let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return self
                .err(key, format!("'{name}' is not a valid name (letters, digits, _; not starting with a digit)"));
        }
        Ok(())
    }

    // ---------- declarations ----------

    pub fn constants(&mut self, raw: &IndexMap<String, RawNum>) -> R<()> {
        for (name, v) in raw {
            let key = format!("constants.{name}");
            self.check_name(&key, name)?;
            let q = self.num(&key, v)?;
            self.consts.push((name.clone(), q));
        }
        Ok(())
    }

    pub fn state(&mut self, raw: &IndexMap<String, RawStateVar>) -> R<()> {
        if raw.is_empty() {
            return self.err("state", "declare at least one state variable");
        }
        for (name, v) in raw {
            let key = format!("state.{name}");
            self.check_name(&key, name)?;
            let kind = match v.kind.as_str() {
                "real" => VarKind::Real,
                "int" => VarKind::Int,
                "bool" => VarKind::Bool,
                other => return self.err(format!("{key}.type"), format!("unknown type '{other}' (real, int or bool)")),
            };
            let mut domain = match &v.domain {
                Some([lo, hi]) => Domain {
                    lo: Some(self.num(&format!("{key}.domain"), lo)?),
                    hi: Some(self.num(&format!("{key}.domain"), hi)?),
                },
                None => Domain::default(),
            };
            if kind == VarKind::Bool {
                domain = Domain { lo: Some(rational_from_i64(0)), hi: Some(rational_from_i64(1)) };
            }
            if let (Some(l), Some(h)) = (&domain.lo, &domain.hi)
                && l > h
            {
                return self.err(format!("{key}.domain"), "lower end is above the upper end");
            }
            self.state.push(StateVar { name: name.clone(), kind, domain });
        }
        Ok(())
    }

    pub fn nondet(&mut self, raw: &IndexMap<String, RawNondet>) -> R<()> {
        for (name, v) in raw {
            let key = format!("nondet.{name}");
            self.check_name(&key, name)?;
            let domain = match (&v.interval, &v.values) {
                (Some([lo, hi]), None) => {
                    let (lo, hi) = (self.num(&key, lo)?, self.num(&key, hi)?);
                    if lo > hi {
                        return self.err(format!("{key}.interval"), "lower end is above the upper end");
                    }
                    NondetDomain::Interval(lo, hi)
                }
                (None, Some(vals)) if !vals.is_empty() => {
                    NondetDomain::Set(vals.iter().map(|x| self.num(&key, x)).collect::<R<Vec<_>>>()?)
                }
                _ => return self.err(key, "give exactly one of `interval = [lo, hi]` or a non-empty `values = [..]`"),
            };
            self.nondet.push(NondetVar { name: name.clone(), domain });
        }
        Ok(())
    }

    fn model_path(&self, key: &str, text: &str) -> PathBuf {
        let p = Path::new(text);
        if p.is_absolute() || self.overridden.contains(&crate::overrides::canonical_key(key)) {
            p.to_path_buf()
        } else {
            self.file.parent().unwrap_or(Path::new(".")).join(p)
        }
    }

    fn normalization(&self, key: &str, text: Option<&str>) -> R<NnetNormalization> {
        match text {
            None | Some("header") => Ok(NnetNormalization::Header),
            Some("none") => Ok(NnetNormalization::None),
            Some(other) => self.err(key, format!("unknown nnet_normalization '{other}' (none or header)")),
        }
    }

    /// Loads a model file as a network named after the file (made unique), or `name` if given.
    fn load_model(&mut self, name: Option<String>, key: &str, path: &str, normalization: Option<&str>) -> R<usize> {
        let name = name.unwrap_or_else(|| {
            let stem = Path::new(path).file_stem().map_or("model".into(), |s| s.to_string_lossy().into_owned());
            let mut candidate = stem.clone();
            let mut k = 2;
            while self.networks.iter().any(|n| n.name == candidate) {
                candidate = format!("{stem}_{k}");
                k += 1;
            }
            candidate
        });
        let norm = self.normalization(&format!("{key}.nnet_normalization"), normalization)?;
        let full = self.model_path(key, path);
        let network = trestle_nn::load_network(&full, &LoadOptions { nnet_normalization: norm })
            .or_else(|e| self.err(key, e.to_string()))?;
        self.networks.push(NamedNetwork { name, network });
        Ok(self.networks.len() - 1)
    }

    pub fn networks(&mut self, raw: &IndexMap<String, RawNetwork>) -> R<()> {
        for (name, n) in raw {
            let key = format!("networks.{name}");
            self.check_name(&key, name)?;
            match (&n.path, &n.layers) {
                (Some(path), None) => {
                    self.load_model(Some(name.clone()), &format!("{key}.path"), path, n.nnet_normalization.as_deref())?;
                }
                (None, Some(layers)) => {
                    let net = self.inline_network(&key, layers)?;
                    self.networks.push(NamedNetwork { name: name.clone(), network: net });
                }
                _ => return self.err(key, "give exactly one of `path` (a model file) or `layers` (inline weights)"),
            }
        }
        Ok(())
    }

    fn inline_network(&self, key: &str, layers: &[RawLayer]) -> R<Network> {
        let mut out = Vec::new();
        for (i, l) in layers.iter().enumerate() {
            let lk = format!("{key}.layers[{i}]");
            let matrix = |rows: &Vec<Vec<Weight>>, what: &str| -> R<Matrix> {
                let cols = rows.first().map_or(0, Vec::len);
                if rows.is_empty() || cols == 0 || rows.iter().any(|r| r.len() != cols) {
                    return self.err(format!("{lk}.{what}"), "must be a non-empty rectangular array of rows");
                }
                let rows: Vec<Vec<f64>> = rows.iter().map(|r| r.iter().map(|w| w.0).collect()).collect();
                Ok(Matrix::from_rows(&rows))
            };
            let w = matrix(&l.weights, "weights")?;
            let bias = l.bias.as_ref().map_or_else(|| vec![0.0; w.rows], |b| b.iter().map(|w| w.0).collect());
            let activation = self.activation(&lk, l)?;
            out.push(match (l.kind.as_str(), &l.recurrent) {
                ("dense", None) => Layer::Dense(DenseLayer { weights: w, bias, activation }),
                ("recurrent", Some(r)) => Layer::Recurrent(RecurrentLayer {
                    input_weights: w,
                    recurrent_weights: matrix(r, "recurrent")?,
                    bias,
                    activation,
                }),
                ("dense", Some(_)) => return self.err(lk, "a dense layer has no `recurrent` weights"),
                ("recurrent", None) => return self.err(lk, "a recurrent layer needs `recurrent` weights"),
                (other, _) => {
                    return self
                        .err(format!("{lk}.type"), format!("unknown layer type '{other}' (dense or recurrent)"));
                }
            });
        }
        Network::new(format!("inline:{key}"), out).or_else(|e| self.err(key, e.to_string()))
    }

    /// A layer's activation with its parameters (exact numbers that must be f64 values: the
    /// network verified is the one written), validated and in canonical form (a leaky ReLU with
    /// `alpha = 0` is a ReLU, ...).
    fn activation(&self, lk: &str, l: &RawLayer) -> R<Activation> {
        let key = format!("{lk}.activation");
        let takes = |name: &str| match name {
            "alpha" => l.activation == "leaky_relu",
            _ => l.activation == "clip",
        };
        for (name, given) in [("alpha", l.alpha.is_some()), ("min", l.min.is_some()), ("max", l.max.is_some())] {
            if given && !takes(name) {
                let owner = if name == "alpha" { "leaky_relu" } else { "clip" };
                return self.err(
                    format!("{lk}.{name}"),
                    format!("`{name}` is a parameter of {owner}, not of {}", l.activation),
                );
            }
        }
        let param = |name: &str, n: &Option<RawNum>| -> R<Option<f64>> {
            n.as_ref().map(|n| self.exact_f64(&format!("{lk}.{name}"), n)).transpose()
        };
        let act = match l.activation.as_str() {
            "relu" => Activation::Relu,
            "identity" | "linear" | "none" => Activation::Identity,
            "tanh" => Activation::Tanh,
            "sigmoid" => Activation::Sigmoid,
            "leaky_relu" => match param("alpha", &l.alpha)? {
                Some(alpha) => Activation::LeakyRelu { alpha },
                None => return self.err(key, "leaky_relu needs `alpha`, the slope for negative inputs"),
            },
            "clip" => {
                let (lo, hi) = (param("min", &l.min)?, param("max", &l.max)?);
                if lo.is_none() && hi.is_none() {
                    return self.err(key, "clip needs `min`, `max` or both (a side left out is unbounded)");
                }
                Activation::Clip { lo: lo.unwrap_or(f64::NEG_INFINITY), hi: hi.unwrap_or(f64::INFINITY) }
            }
            other => {
                return self.err(
                    key,
                    format!("unknown activation '{other}' (relu, identity, leaky_relu, clip, tanh or sigmoid)"),
                );
            }
        };
        act.validate().or_else(|e| self.err(lk, e))?;
        Ok(act.canonical())
    }

    /// An exact number that must be an f64 value (an activation's parameter).
    fn exact_f64(&self, key: &str, n: &RawNum) -> R<f64> {
        let q = self.num(key, n)?;
        let x = trestle_ir::num::to_f64_nearest(&q);
        if x.is_finite() && trestle_ir::num::rational_from_f64(x) == q {
            return Ok(x);
        }
        let nearest = if x.is_finite() {
            // Every f64 is a terminating decimal; Rust prints it exactly with enough digits.
            let exact = format!("{x:.1100}");
            let exact = exact.trim_end_matches('0').trim_end_matches('.');
            format!(" (the nearest f64 is {exact})")
        } else {
            String::new()
        };
        self.err(
            key,
            format!(
                "{} is not exactly an f64 value{nearest}: network parameters are f64 numbers, and a rounded one \
                 would make the network verified differ from the one written",
                display_rational(&q)
            ),
        )
    }

    pub fn controllers(&mut self, single: Option<&RawController>, many: &[RawController]) -> R<Vec<Controller>> {
        let list: Vec<(String, &RawController)> = match (single, many.is_empty()) {
            (Some(c), true) => vec![("controller".to_string(), c)],
            (None, _) => many.iter().enumerate().map(|(i, c)| (format!("controllers[{i}]"), c)).collect(),
            (Some(_), false) => return self.err("controllers", "use either [controller] or [[controllers]], not both"),
        };
        let mut out = Vec::new();
        for (ci, (key, raw)) in list.into_iter().enumerate() {
            out.push(self.controller(ci, &key, raw)?);
        }
        Ok(out)
    }

    fn network_by_name(&self, key: &str, name: &str) -> R<usize> {
        match self.networks.iter().position(|n| n.name == name) {
            Some(i) => Ok(i),
            None => {
                let known: Vec<_> = self.networks.iter().map(|n| n.name.as_str()).collect();
                self.err(key, format!("unknown network '{name}' (declared: {})", known.join(", ")))
            }
        }
    }

    fn controller(&mut self, ci: usize, key: &str, raw: &RawController) -> R<Controller> {
        let name =
            raw.name.clone().unwrap_or_else(|| if ci == 0 { "controller".into() } else { format!("controller{ci}") });
        let norm = raw.nnet_normalization.as_deref();
        let policy = match (&raw.network, &raw.model, &raw.networks, &raw.models, &raw.select_by) {
            (Some(n), None, None, None, None) => Policy::Network(self.network_by_name(&format!("{key}.network"), n)?),
            (None, Some(path), None, None, None) => {
                Policy::Network(self.load_model(None, &format!("{key}.model"), path, norm)?)
            }
            (None, None, nets, models, Some(by)) if nets.is_some() != models.is_some() => {
                let Some(by_index) = self.state.iter().position(|v| &v.name == by) else {
                    return self.err(format!("{key}.select_by"), format!("unknown state variable '{by}'"));
                };
                let networks = match (nets, models) {
                    (Some(nets), None) => nets
                        .iter()
                        .enumerate()
                        .map(|(i, n)| self.network_by_name(&format!("{key}.networks[{i}]"), n))
                        .collect::<R<Vec<_>>>()?,
                    (None, Some(models)) => {
                        let mut ids = Vec::new();
                        for (i, m) in models.iter().enumerate() {
                            ids.push(self.load_model(None, &format!("{key}.models.{i}"), m, norm)?);
                        }
                        ids
                    }
                    _ => unreachable!("guarded by the match arm"),
                };
                Policy::Select { by: by_index, networks }
            }
            _ => {
                return self.err(
                    key,
                    "give one network: `network = NAME`, `model = PATH`, or `select_by = VAR` with `networks = [..]` or `models = [..]`",
                );
            }
        };
        let nets: Vec<usize> = match &policy {
            Policy::Network(n) => vec![*n],
            Policy::Select { networks, .. } => networks.clone(),
        };
        let scope = self.observation_scope();
        let inputs = match &raw.inputs {
            Some(texts) => texts
                .iter()
                .enumerate()
                .map(|(i, t)| parse_expr(t, &scope).or_else(|e| self.parse_err(format!("{key}.inputs[{i}]"), e)))
                .collect::<R<Vec<_>>>()?,
            None => (0..self.state.len()).map(|i| Expr::Var(VarRef::State(i))).collect(),
        };
        let out_dim = self.networks[nets[0]].network.output_dim();
        if raw.argmax.is_none()
            && let Some(n) = nets.iter().find(|&&n| self.networks[n].network.trailing_softmax.is_some())
        {
            let named = &self.networks[*n];
            let node = named.network.trailing_softmax.as_deref().unwrap_or("");
            return self.err(
                key,
                format!(
                    "network '{}' ends in a softmax ({node}) that the loader left out; that is the same network only \
                     for an argmax controller (the softmax keeps the order of the outputs), so use `argmax = NAME`, \
                     or export the network without its softmax to use its outputs as real actions",
                    named.name
                ),
            );
        }
        let output = match (&raw.actions, &raw.argmax) {
            (Some(names), None) => {
                let mut ids = Vec::new();
                for (i, a) in names.iter().enumerate() {
                    self.check_name(&format!("{key}.actions[{i}]"), a)?;
                    self.actions.push(ActionVar { name: a.clone(), kind: ActionKind::Real, controller: ci });
                    ids.push(self.actions.len() - 1);
                }
                ControllerOutput::Actions(ids)
            }
            (None, Some(a)) => {
                self.check_name(&format!("{key}.argmax"), a)?;
                let labels = match &raw.labels {
                    Some(l) => {
                        for (i, label) in l.iter().enumerate() {
                            self.check_name(&format!("{key}.labels[{i}]"), label)?;
                            self.consts.push((label.clone(), rational_from_i64(i as i64)));
                        }
                        l.clone()
                    }
                    None => (0..out_dim).map(|i| i.to_string()).collect(),
                };
                self.actions.push(ActionVar { name: a.clone(), kind: ActionKind::Index { labels }, controller: ci });
                ControllerOutput::Argmax(self.actions.len() - 1)
            }
            _ => return self.err(key, "give either `actions = [..]` (real outputs) or `argmax = NAME` (index output)"),
        };
        Ok(Controller { name, policy, inputs, output })
    }

    pub fn lets(&mut self, raw: &IndexMap<String, String>, key: &str) -> R<()> {
        for (name, text) in raw {
            let k = format!("{key}.{name}");
            self.check_name(&k, name)?;
            let e = parse_expr(text, &self.full_scope()).or_else(|e| self.parse_err(&k, e))?;
            self.lets.push((name.clone(), e));
        }
        Ok(())
    }

    /// The message for a key that names no state variable. A top-level key written after a table
    /// header (`init = ..` below `[step]`) lands in that table, TOML's rule that surprises most
    /// first files: say so instead of only listing the state.
    fn unknown_state_variable(&self, name: &str, also: &str) -> String {
        let known: Vec<_> = self.state.iter().map(|v| v.name.as_str()).collect();
        let mut message = format!("unknown state variable '{name}' (state: {}{also})", known.join(", "));
        if ["init", "safe", "invariant"].contains(&name) {
            message.push_str(&format!(
                "; a top-level `{name} = ...` must come before the first [table] header, or TOML puts it in that table"
            ));
        }
        message
    }

    fn updates(&self, key: &str, raw: &IndexMap<String, String>) -> R<Vec<Expr>> {
        let scope = self.full_scope();
        let mut updates: Vec<Expr> = (0..self.state.len()).map(|i| Expr::Var(VarRef::State(i))).collect();
        for (var, text) in raw {
            let Some(i) = self.state.iter().position(|v| &v.name == var) else {
                return self.err(format!("{key}.{var}"), self.unknown_state_variable(var, ""));
            };
            updates[i] = parse_expr(text, &scope).or_else(|e| self.parse_err(format!("{key}.{var}"), e))?;
        }
        Ok(updates)
    }

    pub fn step(&mut self, raw: &RawFile) -> R<Step> {
        let mut branches = Vec::new();
        let forms = raw.step.is_some() as u8 + (!raw.branch.is_empty()) as u8 + (!raw.command.is_empty()) as u8;
        if forms > 1 {
            return self.err("step", "use one of [step], [[branch]] or [[command]]");
        }
        if let Some(step) = &raw.step {
            branches.push(Branch {
                name: "step".into(),
                guard: None,
                label: None,
                updates: self.updates("step", step)?,
            });
        }
        for (i, b) in raw.branch.iter().enumerate() {
            let key = format!("branch[{i}]");
            let saved = self.lets.len();
            self.lets(&b.lets, &format!("{key}.let"))?;
            let guard = match &b.guard {
                Some(g) => {
                    Some(parse_pred(g, &self.full_scope()).or_else(|e| self.parse_err(format!("{key}.guard"), e))?)
                }
                None => None,
            };
            let updates = self.updates(&format!("{key}.update"), &b.update)?;
            self.lets.truncate(saved);
            branches.push(Branch {
                name: b.name.clone().unwrap_or_else(|| format!("branch{i}")),
                guard,
                label: None,
                updates,
            });
        }
        for (i, c) in raw.command.iter().enumerate() {
            let key = format!("command[{i}]");
            let label = self.label(&format!("{key}.label"), &c.label)?;
            let guard = match &c.guard {
                Some(g) => {
                    Some(parse_pred(g, &self.full_scope()).or_else(|e| self.parse_err(format!("{key}.guard"), e))?)
                }
                None => None,
            };
            let updates = self.updates(&format!("{key}.update"), &c.update)?;
            branches.push(Branch {
                name: c.name.clone().unwrap_or_else(|| c.label.clone()),
                guard,
                label: Some(label),
                updates,
            });
        }
        if branches.is_empty() {
            return self.err("step", "the system has no environment step: add [step], [[branch]] or [[command]]");
        }
        Ok(Step { branches })
    }

    /// The `[flow]` section: the period and every state variable's rate (see
    /// [`trestle_ir::plant`] for the semantics). The step of such a system is the identity (the
    /// flow replaces it); discrete steps alongside are refused.
    pub fn plant(&self, raw: &RawFile) -> R<Option<(SampledPlant, Step)>> {
        let Some(entries) = &raw.flow else { return Ok(None) };
        if raw.step.is_some() || !raw.branch.is_empty() || !raw.command.is_empty() {
            return self.err(
                "flow",
                "[flow] together with [step], [[branch]] or [[command]] is not supported yet (discrete updates around the flow)",
            );
        }
        let scope = self.full_scope();
        let mut period = None;
        let mut rates: Vec<Option<Expr>> = vec![None; self.state.len()];
        for (name, entry) in entries {
            let key = format!("flow.{name}");
            if name == "period" {
                let n = match entry {
                    RawFlowEntry::Int(i) => RawNum::Int(*i),
                    RawFlowEntry::Text(t) => RawNum::Text(t.clone()),
                };
                let q = self.num(&key, &n)?;
                if q <= Rational::from_integer(0.into()) {
                    return self.err(key, format!("the period must be positive, not {}", display_rational(&q)));
                }
                period = Some(q);
                continue;
            }
            let Some(i) = self.state.iter().position(|v| &v.name == name) else {
                return self.err(key, self.unknown_state_variable(name, "; and `period`"));
            };
            if self.state[i].kind != VarKind::Real {
                return self
                    .err(key, format!("'{name}' is {}: only real variables follow a flow", self.state[i].kind.name()));
            }
            let text = match entry {
                RawFlowEntry::Int(v) => v.to_string(),
                RawFlowEntry::Text(t) => t.clone(),
            };
            rates[i] = Some(parse_expr(&text, &scope).or_else(|e| self.parse_err(&key, e))?);
        }
        let Some(period) = period else {
            return self.err("flow.period", "[flow] needs the control period, like `period = 0.05`");
        };
        let mut exprs = Vec::with_capacity(rates.len());
        for (v, rate) in self.state.iter().zip(rates) {
            match rate {
                Some(e) => exprs.push(e),
                None => {
                    return self.err(
                        format!("flow.{}", v.name),
                        format!(
                            "every state variable needs its rate in [flow]: '{}' has none (write 0 for a constant)",
                            v.name
                        ),
                    );
                }
            }
        }
        let identity = Branch {
            name: "flow".into(),
            guard: None,
            label: None,
            updates: (0..self.state.len()).map(|i| Expr::Var(VarRef::State(i))).collect(),
        };
        Ok(Some((SampledPlant { period, rates: exprs }, Step { branches: vec![identity] })))
    }

    /// A label of an argmax action: (action index, value index).
    fn label(&self, key: &str, text: &str) -> R<(usize, usize)> {
        for (ai, a) in self.actions.iter().enumerate() {
            if let ActionKind::Index { labels } = &a.kind
                && let Some(k) = labels.iter().position(|l| l == text)
            {
                return Ok((ai, k));
            }
        }
        self.err(key, format!("'{text}' is not a label of any argmax action"))
    }

    pub fn region(&self, key: &str, raw: &RawRegion) -> R<Pred> {
        match raw {
            RawRegion::Text(t) => parse_pred(t, &self.base_scope()).or_else(|e| self.parse_err(key, e)),
            RawRegion::Table(t) => self.region_table(key, t),
            RawRegion::Boxes { boxes } => Ok(Pred::or(
                boxes
                    .iter()
                    .enumerate()
                    .map(|(i, b)| self.region_table(&format!("{key}.boxes[{i}]"), b))
                    .collect::<R<Vec<_>>>()?,
            )),
        }
    }

    fn region_table(&self, key: &str, t: &IndexMap<String, RawRange>) -> R<Pred> {
        let mut atoms = Vec::new();
        for (var, range) in t {
            let k = format!("{key}.{var}");
            let Some(i) = self.state.iter().position(|v| &v.name == var) else {
                return self.err(k, self.unknown_state_variable(var, ""));
            };
            let x = Expr::Var(VarRef::State(i));
            match range {
                RawRange::Value(v) => atoms.push(Pred::Cmp(x, CmpOp::Eq, Expr::Const(self.num(&k, v)?))),
                RawRange::Range([lo, hi]) => {
                    let (lo, hi) = (self.num(&k, lo)?, self.num(&k, hi)?);
                    if lo > hi {
                        return self.err(k, "lower end is above the upper end");
                    }
                    atoms.push(Pred::Cmp(Expr::Const(lo), CmpOp::Le, x.clone()));
                    atoms.push(Pred::Cmp(x, CmpOp::Le, Expr::Const(hi)));
                }
                RawRange::Set { values } => {
                    if values.is_empty() {
                        return self.err(k, "empty set of values");
                    }
                    let eqs = values
                        .iter()
                        .map(|v| Ok(Pred::Cmp(x.clone(), CmpOp::Eq, Expr::Const(self.num(&k, v)?))))
                        .collect::<R<Vec<_>>>()?;
                    atoms.push(Pred::or(eqs));
                }
            }
        }
        Ok(if atoms.is_empty() { Pred::True } else { Pred::and(atoms) })
    }

    pub fn properties(&self, raw: &[RawProperty]) -> R<Vec<Property>> {
        let mut out = Vec::new();
        for (i, p) in raw.iter().enumerate() {
            let key = format!("property[{i}]");
            let mut scope = self.base_scope();
            if let Some(k) = p.k {
                if scope.lookup("k").is_some() {
                    return self.err(
                        format!("{key}.k"),
                        "the horizon parameter `k` would hide a constant or variable named k",
                    );
                }
                scope.add("k", Symbol::Const(rational_from_i64(k.into())));
            }
            let (formula, text) = match (&p.ctl, &p.ltl, &p.invariant) {
                (Some(t), None, None) => (
                    PropertyFormula::Ctl(parse_ctl(t, &scope).or_else(|e| self.parse_err(format!("{key}.ctl"), e))?),
                    t,
                ),
                (None, Some(t), None) => (
                    PropertyFormula::Ltl(parse_ltl(t, &scope).or_else(|e| self.parse_err(format!("{key}.ltl"), e))?),
                    t,
                ),
                (None, None, Some(t)) => (
                    PropertyFormula::Invariant(
                        parse_pred(t, &scope).or_else(|e| self.parse_err(format!("{key}.invariant"), e))?,
                    ),
                    t,
                ),
                _ => return self.err(key, "give exactly one of `ctl`, `ltl` or `invariant`"),
            };
            if out.iter().any(|q: &Property| q.name == p.name) {
                return self.err(format!("{key}.name"), format!("property '{}' is declared twice", p.name));
            }
            out.push(Property { name: p.name.clone(), formula, text: text.clone(), horizon: p.k });
        }
        Ok(out)
    }

    /// Assembles the system; `meta` is (name, description, domain-exit rule), `regions` is
    /// (init, safe, candidate invariant).
    pub fn finish(
        self,
        meta: (String, String, DomainExit),
        controllers: Vec<Controller>,
        step: Step,
        regions: (Pred, Option<Pred>, Option<Pred>),
        properties: Vec<Property>,
    ) -> System {
        let (name, description, domain_exit) = meta;
        let (init, safe, invariant) = regions;
        System {
            name,
            description,
            state: self.state,
            nondet: self.nondet,
            actions: self.actions,
            constants: self.consts,
            networks: self.networks,
            controllers,
            step,
            init,
            safe,
            invariant,
            properties,
            domain_exit,
        }
    }
}
