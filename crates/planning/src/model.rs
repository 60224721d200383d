//! A planning domain in the small structured form the generator works in: bounded integer
//! variables, labels, guarded commands whose guards are conjunctions of comparisons of a variable
//! with a constant or another variable and whose updates copy a variable plus a constant (or set a
//! constant), and a linear observation. The same commands are executed natively here (to build
//! the state space and the expert) and printed as the system file's `[[command]]` tables, so the
//! two cannot say different things; the generator still checks every transition of the policy's
//! exact exploration against [`Domain::successors`].

/// A state: one integer per variable, in [`Domain::vars`] order.
pub type State = Vec<i64>;

/// A bounded integer state variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Var {
    pub name: String,
    pub lo: i64,
    pub hi: i64,
}

/// The comparison of an [`Atom`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Le,
    Ge,
}

/// The right side of an [`Atom`]: a constant or another variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    Const(i64),
    Var(usize),
}

/// `vars[var] op rhs`, a linear integer comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Atom {
    pub var: usize,
    pub op: Op,
    pub rhs: Term,
}

impl Atom {
    pub fn new(var: usize, op: Op, k: i64) -> Atom {
        Atom { var, op, rhs: Term::Const(k) }
    }

    pub fn holds(&self, s: &[i64]) -> bool {
        let (a, b) = (
            s[self.var],
            match self.rhs {
                Term::Const(k) => k,
                Term::Var(j) => s[j],
            },
        );
        match self.op {
            Op::Eq => a == b,
            Op::Ne => a != b,
            Op::Le => a <= b,
            Op::Ge => a >= b,
        }
    }

    /// The atom in the system file's syntax (`!=` is written `not (a == b)`).
    pub fn text(&self, vars: &[Var]) -> String {
        let a = &vars[self.var].name;
        let b = match self.rhs {
            Term::Const(k) => k.to_string(),
            Term::Var(j) => vars[j].name.clone(),
        };
        match self.op {
            Op::Eq => format!("{a} == {b}"),
            Op::Ne => format!("not ({a} == {b})"),
            Op::Le => format!("{a} <= {b}"),
            Op::Ge => format!("{a} >= {b}"),
        }
    }
}

/// Whether every atom of a conjunction holds.
pub fn all_hold(atoms: &[Atom], s: &[i64]) -> bool {
    atoms.iter().all(|a| a.holds(s))
}

/// A conjunction in the system file's syntax (`true` when empty).
pub fn conjunction_text(atoms: &[Atom], vars: &[Var]) -> String {
    if atoms.is_empty() {
        return "true".into();
    }
    atoms.iter().map(|a| a.text(vars)).collect::<Vec<_>>().join(" and ")
}

/// The new value of one variable: a constant, or a variable (read before the step) plus a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rhs {
    Const(i64),
    Shift(usize, i64),
}

impl Rhs {
    fn eval(&self, s: &[i64]) -> i64 {
        match *self {
            Rhs::Const(k) => k,
            Rhs::Shift(j, k) => s[j] + k,
        }
    }

    fn text(&self, vars: &[Var]) -> String {
        match *self {
            Rhs::Const(k) => k.to_string(),
            Rhs::Shift(j, 0) => vars[j].name.clone(),
            Rhs::Shift(j, k) if k > 0 => format!("{} + {k}", vars[j].name),
            Rhs::Shift(j, k) => format!("{} - {}", vars[j].name, -k),
        }
    }
}

/// A guarded command (an operator): applies when the policy picks `label` and the guard holds;
/// the updates are simultaneous, variables not updated keep their value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub label: usize,
    pub name: String,
    pub guard: Vec<Atom>,
    pub update: Vec<(usize, Rhs)>,
}

/// One network input: `(sum of coefficient * variable) / divisor`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub terms: Vec<(usize, i64)>,
    pub divisor: i64,
}

impl Input {
    pub fn value(&self, s: &[i64]) -> f64 {
        self.terms.iter().map(|&(v, c)| c * s[v]).sum::<i64>() as f64 / self.divisor as f64
    }

    pub fn text(&self, vars: &[Var]) -> String {
        let mut sum = String::new();
        for (k, &(v, c)) in self.terms.iter().enumerate() {
            let name = &vars[v].name;
            let (sign, mag) = if c < 0 { ("-", -c) } else { ("+", c) };
            let term = if mag == 1 { name.clone() } else { format!("{mag} * {name}") };
            match (k, sign) {
                (0, "+") => sum.push_str(&term),
                (0, _) => sum.push_str(&format!("-{term}")),
                _ => sum.push_str(&format!(" {sign} {term}")),
            }
        }
        match (self.divisor, self.terms.len()) {
            (1, _) => sum,
            (d, 1) => format!("{sum} / {d}"),
            (d, _) => format!("({sum}) / {d}"),
        }
    }
}

/// A planning domain: variables, labels (one network output each), commands, observation, goal.
#[derive(Clone, Debug)]
pub struct Domain {
    pub vars: Vec<Var>,
    pub labels: Vec<String>,
    pub commands: Vec<Command>,
    pub inputs: Vec<Input>,
    /// The goal: a conjunction of atoms.
    pub goal: Vec<Atom>,
    /// The label the expert picks in a goal state: disabled in every goal state, so a run that
    /// reaches the goal under a faithful policy ends there.
    pub stop_label: usize,
}

impl Domain {
    pub fn var(&self, name: &str) -> usize {
        self.vars.iter().position(|v| v.name == name).unwrap_or_else(|| panic!("no variable {name}"))
    }

    pub fn label(&self, name: &str) -> usize {
        self.labels.iter().position(|l| l == name).unwrap_or_else(|| panic!("no label {name}"))
    }

    pub fn in_domain(&self, s: &[i64]) -> bool {
        self.vars.iter().zip(s).all(|(v, &x)| v.lo <= x && x <= v.hi)
    }

    pub fn is_goal(&self, s: &[i64]) -> bool {
        all_hold(&self.goal, s)
    }

    /// Every transition from `s`: (label, command index, successor), in command order. A successor
    /// outside the domains does not exist (`on_domain_exit = "drop"`).
    pub fn successors(&self, s: &[i64]) -> Vec<(usize, usize, State)> {
        let mut out = Vec::new();
        for (ci, c) in self.commands.iter().enumerate() {
            if !all_hold(&c.guard, s) {
                continue;
            }
            let mut next = s.to_vec();
            for &(v, rhs) in &c.update {
                next[v] = rhs.eval(s);
            }
            if self.in_domain(&next) {
                out.push((c.label, ci, next));
            }
        }
        out
    }

    pub fn observe(&self, s: &[i64]) -> Vec<f64> {
        self.inputs.iter().map(|i| i.value(s)).collect()
    }

    /// `init` as a predicate: the disjunction of the given states.
    pub fn states_text(&self, states: &[State]) -> String {
        states
            .iter()
            .map(|s| {
                let eqs: Vec<Atom> = s.iter().enumerate().map(|(v, &x)| Atom::new(v, Op::Eq, x)).collect();
                format!("({})", conjunction_text(&eqs, &self.vars))
            })
            .collect::<Vec<_>>()
            .join(" or ")
    }

    /// The `[state]`, `[[command]]` text of the system file (TOML).
    pub fn state_text(&self) -> String {
        let mut s = String::from("[state]\n");
        for v in &self.vars {
            s.push_str(&format!("{} = {{ type = \"int\", domain = [{}, {}] }}\n", v.name, v.lo, v.hi));
        }
        s
    }

    pub fn commands_text(&self) -> String {
        let mut s = String::new();
        for c in &self.commands {
            s.push_str(&format!("\n[[command]]\nlabel = \"{}\"\nname = \"{}\"\n", self.labels[c.label], c.name));
            if !c.guard.is_empty() {
                s.push_str(&format!("guard = \"{}\"\n", conjunction_text(&c.guard, &self.vars)));
            }
            let updates: Vec<String> = c
                .update
                .iter()
                .map(|&(v, rhs)| format!("{} = \"{}\"", self.vars[v].name, rhs.text(&self.vars)))
                .collect();
            s.push_str(&format!("update = {{ {} }}\n", updates.join(", ")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vec<Var> {
        ["x", "y"].iter().map(|n| Var { name: n.to_string(), lo: 0, hi: 3 }).collect()
    }

    #[test]
    fn texts_are_the_file_syntax() {
        let v = vars();
        assert_eq!(Atom::new(0, Op::Ne, 2).text(&v), "not (x == 2)");
        assert_eq!(Atom { var: 1, op: Op::Eq, rhs: Term::Var(0) }.text(&v), "y == x");
        assert_eq!(Rhs::Shift(1, -1).text(&v), "y - 1");
        assert_eq!(Rhs::Shift(1, 0).text(&v), "y");
        assert_eq!(Input { terms: vec![(0, 1)], divisor: 4 }.text(&v), "x / 4");
        assert_eq!(Input { terms: vec![(1, 1), (0, -1)], divisor: 5 }.text(&v), "(y - x) / 5");
        assert_eq!(Input { terms: vec![(0, -2)], divisor: 1 }.text(&v), "-2 * x");
        assert_eq!(conjunction_text(&[], &v), "true");
    }

    #[test]
    fn successors_are_simultaneous_and_dropped_outside_the_domain() {
        let d = Domain {
            vars: vars(),
            labels: vec!["swap".into(), "inc".into()],
            commands: vec![
                Command {
                    label: 0,
                    name: "swap".into(),
                    guard: vec![],
                    update: vec![(0, Rhs::Shift(1, 0)), (1, Rhs::Shift(0, 0))],
                },
                Command {
                    label: 1,
                    name: "inc".into(),
                    guard: vec![Atom::new(0, Op::Le, 2)],
                    update: vec![(1, Rhs::Shift(1, 2))],
                },
            ],
            inputs: vec![],
            goal: vec![],
            stop_label: 0,
        };
        assert_eq!(d.successors(&[1, 2]), vec![(0, 0, vec![2, 1])]);
        assert_eq!(d.successors(&[0, 1]), vec![(0, 0, vec![1, 0]), (1, 1, vec![0, 3])]);
        assert_eq!(d.successors(&[3, 0]), vec![(0, 0, vec![0, 3])]);
    }
}
