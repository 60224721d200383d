//! Human-readable text of expressions, predicates and formulas, in the syntax `parse` reads.

use crate::expr::{Expr, VarRef};
use crate::formula::{Ctl, Ltl};
use crate::num::display_rational;
use crate::pred::Pred;
use crate::system::System;

/// Variable names for printing.
pub struct Names<'a> {
    /// State variable names, in `System::state` order.
    pub state: Vec<&'a str>,
    /// Action names, in `System::actions` order.
    pub action: Vec<&'a str>,
    /// Non-deterministic input names, in `System::nondet` order.
    pub nondet: Vec<&'a str>,
}

impl<'a> Names<'a> {
    /// The names of a system's variables.
    pub fn of(sys: &'a System) -> Names<'a> {
        Names {
            state: sys.state.iter().map(|v| v.name.as_str()).collect(),
            action: sys.actions.iter().map(|v| v.name.as_str()).collect(),
            nondet: sys.nondet.iter().map(|v| v.name.as_str()).collect(),
        }
    }

    /// The name of `v`; panics on an index past the lists.
    pub fn var(&self, v: VarRef) -> &str {
        match v {
            VarRef::State(i) => self.state[i],
            VarRef::Action(i) => self.action[i],
            VarRef::Nondet(i) => self.nondet[i],
        }
    }

    /// The expression in the text syntax, with only the parentheses precedence needs; parsing it
    /// back in a scope of the same names gives the same tree.
    pub fn expr(&self, e: &Expr) -> String {
        self.expr_prec(e, 0)
    }

    /// Precedence: 0 = sum level, 1 = product level, 2 = atom (3 asks for an atom that is not a
    /// power: a power's base).
    fn expr_prec(&self, e: &Expr, ctx: u8) -> String {
        let (s, prec) = match e {
            Expr::Const(c) => {
                let s = display_rational(c);
                let p = if s.starts_with('-') || s.contains('/') { 0 } else { 3 };
                (s, p)
            }
            Expr::Var(v) => (self.var(*v).to_string(), 3),
            Expr::Neg(a) => (format!("-{}", self.expr_prec(a, 2)), 1),
            Expr::Add(..) | Expr::Sub(..) => (self.sum(e), 0),
            Expr::Mul(..) => (self.product(e), 1),
            Expr::Div(a, k) => (format!("{}/{}", self.expr_prec(a, 1), self.expr_prec(&Expr::Const(k.clone()), 2)), 1),
            Expr::Min(a, b) => (format!("min({}, {})", self.expr(a), self.expr(b)), 3),
            Expr::Max(a, b) => (format!("max({}, {})", self.expr(a), self.expr(b)), 3),
            Expr::Relu(a) => (format!("relu({})", self.expr(a)), 3),
            Expr::Abs(a) => (format!("abs({})", self.expr(a)), 3),
            Expr::Apply(f, a) => (format!("{}({})", f.name(), self.expr(a)), 3),
            // The base as an atom: `(-x)^2`, `(x + 1)^3`, `(x^2)^3` keep their parentheses.
            Expr::Pow(a, n) => (format!("{}^{n}", self.expr_prec(a, 3)), 2),
            Expr::Ite(c, a, b) => (format!("if {} then {} else {}", self.pred(c), self.expr(a), self.expr(b)), 0),
            Expr::Lookup(i, items) => {
                let items: Vec<String> = items.iter().map(|x| self.expr(x)).collect();
                (format!("lookup({}, [{}])", self.expr(i), items.join(", ")), 3)
            }
        };
        if prec < ctx { format!("({s})") } else { s }
    }

    /// A side of a comparison: an if-then-else in parentheses (its `else` branch would swallow
    /// the comparison), anything else as is.
    fn cmp_side(&self, e: &Expr) -> String {
        let s = self.expr(e);
        if matches!(e, Expr::Ite(..)) { format!("({s})") } else { s }
    }

    /// A sum as a flat list of signed terms (`a + b - c - d`, however the tree is grouped), which
    /// the parser reads back as the same tree: it builds sums balanced from the flat list.
    fn sum(&self, e: &Expr) -> String {
        fn terms<'e>(e: &'e Expr, minus: bool, out: &mut Vec<(bool, &'e Expr)>) {
            match e {
                Expr::Add(a, b) => {
                    terms(a, minus, out);
                    terms(b, minus, out);
                }
                Expr::Sub(a, b) => {
                    terms(a, minus, out);
                    terms(b, !minus, out);
                }
                e => out.push((minus, e)),
            }
        }
        let mut list = Vec::new();
        terms(e, false, &mut list);
        let mut s = String::new();
        for (i, (minus, t)) in list.into_iter().enumerate() {
            match (i, minus) {
                (0, false) => {}
                (0, true) => s.push('-'),
                (_, false) => s.push_str(" + "),
                (_, true) => s.push_str(" - "),
            }
            // A leading constant may be negative or a fraction (`-1 + x`); other terms that are
            // not products or atoms (if-then-else) need parentheses.
            let lead_const = i == 0 && !minus && matches!(t, Expr::Const(_));
            s.push_str(&self.expr_prec(t, if lead_const { 0 } else { 1 }));
        }
        s
    }

    /// A product as a flat list of factors (`a*b*c`), read back as the same balanced tree.
    fn product(&self, e: &Expr) -> String {
        fn factors<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
            match e {
                Expr::Mul(a, b) => {
                    factors(a, out);
                    factors(b, out);
                }
                e => out.push(e),
            }
        }
        let mut list = Vec::new();
        factors(e, &mut list);
        list.iter()
            .enumerate()
            .map(|(i, f)| self.expr_prec(f, if i == 0 { 1 } else { 2 }))
            .collect::<Vec<_>>()
            .join("*")
    }

    /// The predicate in the text syntax (`and` binds tighter than `or`); parses back to the same
    /// predicate.
    pub fn pred(&self, p: &Pred) -> String {
        self.pred_prec(p, 0)
    }

    /// Precedence: 0 = or, 1 = and, 2 = atom.
    fn pred_prec(&self, p: &Pred, ctx: u8) -> String {
        let (s, prec) = match p {
            Pred::True => ("true".to_string(), 2),
            Pred::False => ("false".to_string(), 2),
            Pred::Cmp(a, op, b) => (format!("{} {} {}", self.cmp_side(a), op.symbol(), self.cmp_side(b)), 2),
            Pred::Not(a) => (format!("not {}", self.pred_prec(a, 2)), 2),
            Pred::And(ps) => (ps.iter().map(|q| self.pred_prec(q, 2)).collect::<Vec<_>>().join(" and "), 1),
            Pred::Or(ps) => (ps.iter().map(|q| self.pred_prec(q, 1)).collect::<Vec<_>>().join(" or "), 0),
        };
        if prec < ctx { format!("({s})") } else { s }
    }

    /// The CTL formula in the text syntax (`EX^k`, `AG^k`, `E[a U^k b]`), atoms and operands
    /// parenthesised.
    pub fn ctl(&self, f: &Ctl) -> String {
        let b = |k: &Option<u32>| k.map_or(String::new(), |k| format!("^{k}"));
        match f {
            Ctl::Atom(p) => format!("({})", self.pred(p)),
            Ctl::Not(a) => format!("not {}", self.ctl(a)),
            Ctl::And(xs) => format!("({})", xs.iter().map(|x| self.ctl(x)).collect::<Vec<_>>().join(" and ")),
            Ctl::Or(xs) => format!("({})", xs.iter().map(|x| self.ctl(x)).collect::<Vec<_>>().join(" or ")),
            Ctl::EX(k, a) => format!("EX^{k} {}", self.ctl(a)),
            Ctl::AX(k, a) => format!("AX^{k} {}", self.ctl(a)),
            Ctl::EF(k, a) => format!("EF{} {}", b(k), self.ctl(a)),
            Ctl::AF(k, a) => format!("AF{} {}", b(k), self.ctl(a)),
            Ctl::EG(k, a) => format!("EG{} {}", b(k), self.ctl(a)),
            Ctl::AG(k, a) => format!("AG{} {}", b(k), self.ctl(a)),
            Ctl::EU(k, a, c) => format!("E[{} U{} {}]", self.ctl(a), b(k), self.ctl(c)),
            Ctl::AU(k, a, c) => format!("A[{} U{} {}]", self.ctl(a), b(k), self.ctl(c)),
        }
    }

    /// The LTL formula in the text syntax (`X^k`, `F<=k`, `a U<=k b`), atoms and operands
    /// parenthesised.
    pub fn ltl(&self, f: &Ltl) -> String {
        let b = |k: &Option<u32>| k.map_or(String::new(), |k| format!("<={k}"));
        match f {
            Ltl::Atom(p) => format!("({})", self.pred(p)),
            Ltl::Not(a) => format!("not {}", self.ltl(a)),
            Ltl::And(xs) => format!("({})", xs.iter().map(|x| self.ltl(x)).collect::<Vec<_>>().join(" and ")),
            Ltl::Or(xs) => format!("({})", xs.iter().map(|x| self.ltl(x)).collect::<Vec<_>>().join(" or ")),
            Ltl::X(k, a) => format!("X^{k} {}", self.ltl(a)),
            Ltl::F(k, a) => format!("F{} {}", b(k), self.ltl(a)),
            Ltl::G(k, a) => format!("G{} {}", b(k), self.ltl(a)),
            Ltl::U(k, a, c) => format!("({} U{} {})", self.ltl(a), b(k), self.ltl(c)),
            Ltl::R(k, a, c) => format!("({} R{} {})", self.ltl(a), b(k), self.ltl(c)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::rational_from_i64;
    use crate::parse::{SimpleScope, Symbol, parse_ctl, parse_expr, parse_pred};

    #[test]
    fn printing_round_trips_through_the_parser() {
        let mut scope = SimpleScope::with_state(&["x", "y"]);
        scope.add("a", Symbol::Var(VarRef::Action(0)));
        let names = Names { state: vec!["x", "y"], action: vec!["a"], nondet: vec![] };
        let long_sum: String = (0..50).map(|i| format!("{} x*{i}", if i % 3 == 0 { "-" } else { "+" })).collect();
        let long_product = vec!["x"; 40].join("*");
        for text in [
            "x + 0.1*a - (y - 2)/3",
            "min(x, -y) * 2",
            "if x <= 1 then lookup(y, [1, 2]) else relu(x - y)",
            "max(x, y, a, 1, 2, x - y)",
            "x*y/2*a/3",
            "(if x <= 1 then 1 else 2) + y",
            "-1 + x - 1/3",
            &long_sum,
            &long_product,
        ] {
            let e = parse_expr(text, &scope).unwrap();
            assert_eq!(parse_expr(&names.expr(&e), &scope).unwrap(), e, "{text}");
        }
        // Sums print flat, whatever the grouping: the same value, and printing is a fixpoint.
        let e = parse_expr("x - (y - a) - (x + y) + -a", &scope).unwrap();
        let text = names.expr(&e);
        assert_eq!(text, "x - y + a - x - y + -a");
        let again = parse_expr(&text, &scope).unwrap();
        assert_eq!(names.expr(&again), text);
        let (s, a) = ([rational_from_i64(3), rational_from_i64(-5)], [rational_from_i64(7)]);
        let env = crate::expr::Env::new(&s, &a, &[]);
        assert_eq!(e.eval_exact(&env).unwrap(), again.eval_exact(&env).unwrap());
        for text in ["not (x <= 1 or y > 2) and x == 0", "(if x <= 1 then 1 else 2) <= y"] {
            let p = parse_pred(text, &scope).unwrap();
            assert_eq!(parse_pred(&names.pred(&p), &scope).unwrap(), p, "{text}");
        }
        let c = parse_ctl("AX^2 (x > 1 or EF^3 y < 0)", &scope).unwrap();
        assert_eq!(parse_ctl(&names.ctl(&c), &scope).unwrap(), c);
    }
}
