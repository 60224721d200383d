//! The text syntax of expressions, predicates and temporal formulas.
//!
//! ```text
//! expr  := sum            sum := term (('+'|'-') term)*      term := unary (('*'|'/') unary)*
//! unary := '-' unary | '+' unary | power             power := atom ('^' exponent)?
//! atom  := number | name | call | '(' expr ')' | 'if' pred 'then' expr 'else' expr
//! call  := min(e, e, ..) | max(..) | relu(e) | abs(e) | clamp(e, lo, hi) | lookup(i, [e, e, ..])
//!        | sin(e) | cos(e) | tan(e) | exp(e) | log(e) | sqrt(e) | tanh(e) | sigmoid(e) | pow(e, exponent)
//! exponent := an integer 0..=64: a literal, a named constant or a parenthesised constant expression
//! pred  := or ('->' pred)?     or := and (('or'|'||') and)*     and := not (('and'|'&&') not)*
//! not   := ('not'|'!') not | 'true' | 'false' | '(' pred ')' | expr cmp expr (cmp expr)* | boolvar
//! cmp   := '<=' | '<' | '>=' | '>' | '==' | '=' | '!='
//! ctl   := like pred, with unary EX^k, AX^k, EF[^k|<=k], AF, EG, AG and E[p U q], A[p U q]
//! ltl   := like pred, with unary X[^k], F[^k|<=k], G[..], binary p U[<=k] q, p R[<=k] q
//! ```
//! Numbers are exact: `0.1` is the rational 1/10. Comparison chains (`0 <= x <= 1`) are conjunctions.
//! Division is only by constants. A power binds tighter than a unary minus (`-x^2` is `-(x^2)`) and
//! does not chain (`x^2^3` is an error: write `(x^2)^3`); `x**n` is refused with a hint. `log` is
//! the natural logarithm; `log`, `sqrt` and `tan` are partial (see [`crate::expr::Function`]).
//!
//! Limits (checked in `shape`): nesting deeper than [`MAX_NESTING`] levels, trees deeper than
//! [`MAX_TREE_DEPTH`] or larger than [`MAX_TREE_NODES`] after `let` definitions are inlined, and
//! temporal bounds above [`MAX_TEMPORAL_BOUND`] are parse errors; long flat chains are fine (they
//! are built balanced). Parsing time is polynomial in the text's length: the one place the grammar
//! backtracks (a parenthesis opening either an arithmetic group or a predicate) is memoised.

mod lex;
mod shape;

pub use shape::{MAX_NESTING, MAX_TREE_DEPTH, MAX_TREE_NODES};

use crate::expr::{Expr, Function, MAX_POWER, VarRef};
use crate::formula::{Ctl, Ltl};
use crate::num::Rational;
use crate::pred::{CmpOp, Pred};
use lex::{Tok, lex};
use num_traits::{One, Zero};
use shape::Size;
use std::collections::HashMap;

/// Largest bound of a temporal operator (`EX^k`, `F<=k`, ...): a million steps of unrolling.
pub const MAX_TEMPORAL_BOUND: u32 = 1_000_000;

/// What a name means where the text is parsed.
#[derive(Clone, Debug)]
pub enum Symbol {
    /// A variable, usable in expressions.
    Var(VarRef),
    /// A boolean variable: usable as a predicate (`b` means `b == 1`).
    BoolVar(VarRef),
    /// A named exact constant, inlined as its value.
    Const(Rational),
    /// A named expression, inlined where it is used.
    Macro(Expr),
}

/// The names a text may use and what each means (state variables, inputs, actions, constants, `let`
/// definitions): the parser knows no system, the caller says what is in scope.
pub trait Scope {
    /// What `name` means here, or `None` when it is unknown (a parse error naming
    /// [`Scope::known_names`]).
    fn lookup(&self, name: &str) -> Option<Symbol>;
    /// Names to suggest in "unknown name" messages.
    fn known_names(&self) -> Vec<String>;
}

/// A syntax or name error in a text, with the text and a caret under the place at fault (its
/// `Display` prints all three lines).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}\n  {text}\n  {caret}")]
pub struct ParseError {
    /// What is wrong, one sentence.
    pub message: String,
    /// The whole text parsed.
    pub text: String,
    /// Spaces and a `^` under the offending character (counted in characters, not bytes).
    pub caret: String,
    /// Byte offset of the fault in `text` (at most its length).
    pub offset: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Pred,
    Ctl,
    Ltl,
}

const CTL_WORDS: [&str; 8] = ["EX", "AX", "EF", "AF", "EG", "AG", "E", "A"];
const LTL_WORDS: [&str; 5] = ["X", "F", "G", "U", "R"];

struct Parser<'a> {
    text: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
    scope: &'a dyn Scope,
    mode: Mode,
    /// Current nesting (see [`MAX_NESTING`]).
    depth: usize,
    /// Nodes brought in by inlined `let` definitions so far (see [`MAX_TREE_NODES`]).
    inlined: usize,
    /// `comparison()` by start position: its result and where it ended.
    comparisons: HashMap<usize, (PResult<Pred>, usize)>,
}

/// A parse failure inside the parser: the message and the byte offset it points at. Cheap to
/// clone (memoised failures are replayed); turned into a [`ParseError`] once, at the end.
#[derive(Clone, Debug)]
struct Failure {
    message: String,
    offset: usize,
}

type PResult<T> = Result<T, Failure>;

impl<'a> Parser<'a> {
    fn new(text: &'a str, scope: &'a dyn Scope, mode: Mode) -> Result<Self, ParseError> {
        let toks = lex(text).map_err(|(m, off)| make_error(text, m, off))?;
        Ok(Parser { text, toks, pos: 0, scope, mode, depth: 0, inlined: 0, comparisons: HashMap::new() })
    }

    fn error<T>(&self, message: impl Into<String>) -> PResult<T> {
        let offset = self.toks.get(self.pos).map_or(self.text.len(), |t| t.1);
        Err(Failure { message: message.into(), offset })
    }

    /// Runs `f` one nesting level deeper, refusing to go beyond [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            return self.error(format!(
                "nested too deeply: more than {MAX_NESTING} levels of parentheses, unary operators, \
                 if-then-else or function calls"
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.0)
    }

    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Sym(t)) if *t == s)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(t)) if t == w)
    }

    fn eat_sym(&mut self, s: &str) -> bool {
        if self.is_sym(s) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_sym(&mut self, s: &str) -> PResult<()> {
        if self.eat_sym(s) { Ok(()) } else { self.error(format!("expected '{s}'")) }
    }

    fn finish(&self) -> PResult<()> {
        if self.pos < self.toks.len() { self.error("unexpected text after the end") } else { Ok(()) }
    }

    fn is_reserved(&self, w: &str) -> bool {
        matches!(w, "and" | "or" | "not" | "if" | "then" | "else" | "true" | "false")
            || (self.mode == Mode::Ctl && CTL_WORDS.contains(&w))
            || (self.mode == Mode::Ltl && LTL_WORDS.contains(&w))
    }

    // ---------- arithmetic ----------

    /// A sum of terms, built balanced (see [`shape::sum`]).
    fn expr(&mut self) -> PResult<Expr> {
        let mut terms = vec![(false, self.term()?)];
        loop {
            if self.eat_sym("+") {
                terms.push((false, self.term()?));
            } else if self.eat_sym("-") {
                terms.push((true, self.term()?));
            } else {
                return Ok(shape::sum(terms));
            }
        }
    }

    /// A product of factors divided by constants: `(f1 * f2 * ..) / (k1 * k2 * ..)`, built
    /// balanced (see [`shape::product`]).
    fn term(&mut self) -> PResult<Expr> {
        let mut factors = vec![self.unary()?];
        let mut divisor = Rational::one();
        loop {
            if self.eat_sym("*") {
                if self.is_sym("*") {
                    return self.error("'**' is not an operator: write x^n for a power");
                }
                factors.push(self.unary()?);
            } else if self.is_sym("/") {
                self.pos += 1;
                let rhs = self.unary()?;
                let Some(k) = rhs.as_const() else { return self.error("division is only by a constant") };
                if k.is_zero() {
                    return self.error("division by zero");
                }
                divisor *= k;
            } else {
                return Ok(shape::product(factors, divisor));
            }
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.nested(Self::unary_inner)
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
        if self.eat_sym("-") {
            let e = self.unary()?;
            return Ok(match e {
                Expr::Const(c) => Expr::Const(-c),
                e => Expr::Neg(Box::new(e)),
            });
        }
        if self.eat_sym("+") {
            return self.unary();
        }
        let base = self.atom()?;
        if !self.eat_sym("^") {
            return Ok(base);
        }
        let n = self.exponent()?;
        if self.is_sym("^") {
            return self.error("a power does not chain: write (x^a)^b");
        }
        Ok(power(base, n))
    }

    /// The exponent of a power: a non-negative integer up to [`MAX_POWER`], written as a literal,
    /// a named constant or a parenthesised constant expression (like a temporal bound).
    fn exponent(&mut self) -> PResult<u32> {
        let start = self.pos;
        let value = match self.peek().cloned() {
            Some(Tok::Num(q)) => {
                self.pos += 1;
                q
            }
            Some(Tok::Sym("-")) => {
                return self.error("negative powers are not supported (division is only by constants)");
            }
            Some(Tok::Ident(name)) => match self.scope.lookup(&name) {
                Some(Symbol::Const(q)) => {
                    self.pos += 1;
                    q
                }
                _ => return self.error(format!("an exponent is an integer or a named constant; '{name}' is neither")),
            },
            Some(Tok::Sym("(")) => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect_sym(")")?;
                match e.as_const() {
                    Some(q) => q.clone(),
                    None => {
                        self.pos = start;
                        return self.error("an exponent must be a constant");
                    }
                }
            }
            _ => return self.error("expected an integer exponent after '^'"),
        };
        let end = self.pos;
        self.pos = start;
        if value < Rational::zero() {
            return self.error("negative powers are not supported (division is only by constants)");
        }
        if !value.is_integer() {
            return self
                .error(format!("an exponent is a non-negative integer, not {}", crate::num::display_rational(&value)));
        }
        match u32::try_from(value.to_integer()) {
            Ok(n) if n <= MAX_POWER => {
                self.pos = end;
                Ok(n)
            }
            _ => self.error(format!("an exponent is at most {MAX_POWER}")),
        }
    }

    fn atom(&mut self) -> PResult<Expr> {
        if self.eat_sym("(") {
            let e = self.expr()?;
            self.expect_sym(")")?;
            return Ok(e);
        }
        if self.eat_word("if") {
            let c = self.pred_or()?;
            if !self.eat_word("then") {
                return self.error("expected 'then'");
            }
            let a = self.expr()?;
            if !self.eat_word("else") {
                return self.error("expected 'else'");
            }
            let b = self.expr()?;
            return Ok(match c {
                Pred::True => a,
                Pred::False => b,
                c => Expr::Ite(Box::new(c), Box::new(a), Box::new(b)),
            });
        }
        match self.peek().cloned() {
            Some(Tok::Num(q)) => {
                self.pos += 1;
                Ok(Expr::Const(q))
            }
            Some(Tok::Ident(name)) => {
                if self.is_reserved(&name) {
                    return self.error(format!("'{name}' is a keyword here, not a value"));
                }
                if matches!(self.peek_at(1), Some(Tok::Sym("("))) {
                    self.pos += 2;
                    return self.call(&name);
                }
                self.pos += 1;
                match self.scope.lookup(&name) {
                    Some(Symbol::Var(v)) | Some(Symbol::BoolVar(v)) => Ok(Expr::Var(v)),
                    Some(Symbol::Const(c)) => Ok(Expr::Const(c)),
                    Some(Symbol::Macro(e)) => {
                        self.inlined = self.inlined.saturating_add(shape::expr_size(&e).nodes);
                        if self.inlined > MAX_TREE_NODES {
                            self.pos -= 1;
                            return self.error(format!(
                                "the `let` definitions used here expand to more than {MAX_TREE_NODES} nodes"
                            ));
                        }
                        Ok(e)
                    }
                    None => {
                        self.pos -= 1;
                        let known = self.scope.known_names();
                        self.error(format!("unknown name '{name}' (known here: {})", known.join(", ")))
                    }
                }
            }
            Some(_) => self.error("expected a number, a name or '('"),
            None => self.error("unexpected end of text, expected a value"),
        }
    }

    fn args(&mut self) -> PResult<Vec<Expr>> {
        let mut out = vec![self.expr()?];
        while self.eat_sym(",") {
            out.push(self.expr()?);
        }
        self.expect_sym(")")?;
        Ok(out)
    }

    fn call(&mut self, name: &str) -> PResult<Expr> {
        let start = self.pos - 2;
        let arity = |p: &mut Self, args: &Vec<Expr>, n: usize| -> PResult<()> {
            if args.len() != n {
                p.pos = start;
                return p.error(format!("{name}() takes {n} argument(s), {} given", args.len()));
            }
            Ok(())
        };
        match name {
            "min" | "max" => Ok(shape::extremum(self.args()?, name == "min")),
            "relu" | "abs" => {
                let args = self.args()?;
                arity(self, &args, 1)?;
                let a = Box::new(args.into_iter().next().unwrap());
                Ok(if name == "relu" { Expr::Relu(a) } else { Expr::Abs(a) })
            }
            "clamp" => {
                let args = self.args()?;
                arity(self, &args, 3)?;
                let mut it = args.into_iter();
                let (x, lo, hi) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
                Ok(Expr::Min(Box::new(Expr::Max(Box::new(x), Box::new(lo))), Box::new(hi)))
            }
            "pow" => {
                let base = self.expr()?;
                self.expect_sym(",")?;
                let n = self.exponent()?;
                self.expect_sym(")")?;
                Ok(power(base, n))
            }
            "lookup" => {
                let index = self.expr()?;
                self.expect_sym(",")?;
                self.expect_sym("[")?;
                let mut items = vec![self.expr()?];
                while self.eat_sym(",") {
                    items.push(self.expr()?);
                }
                self.expect_sym("]")?;
                self.expect_sym(")")?;
                Ok(Expr::Lookup(Box::new(index), items))
            }
            _ => match Function::from_name(name) {
                Some(f) => {
                    let args = self.args()?;
                    arity(self, &args, 1)?;
                    Ok(Expr::Apply(f, Box::new(args.into_iter().next().unwrap())))
                }
                None => {
                    self.pos = start;
                    let elementary: Vec<&str> = Function::ALL.iter().map(|f| f.name()).collect();
                    self.error(format!(
                        "unknown function '{name}' (known: min, max, relu, abs, clamp, lookup, pow, {})",
                        elementary.join(", ")
                    ))
                }
            },
        }
    }

    // ---------- predicates ----------

    fn cmp_op(&mut self) -> Option<(CmpOp, bool)> {
        let op = match self.peek() {
            Some(Tok::Sym("<=")) => (CmpOp::Le, false),
            Some(Tok::Sym("<")) => (CmpOp::Lt, false),
            Some(Tok::Sym(">=")) => (CmpOp::Ge, false),
            Some(Tok::Sym(">")) => (CmpOp::Gt, false),
            Some(Tok::Sym("==")) | Some(Tok::Sym("=")) => (CmpOp::Eq, false),
            Some(Tok::Sym("!=")) => (CmpOp::Eq, true),
            _ => return None,
        };
        self.pos += 1;
        Some(op)
    }

    /// A comparison chain, or a boolean variable, starting at the current token. Memoised: a
    /// parenthesis is first tried as an arithmetic group and re-read as a predicate when that
    /// fails, so without the memo nested groups would be read exponentially often.
    fn comparison(&mut self) -> PResult<Pred> {
        let start = self.pos;
        if let Some((result, end)) = self.comparisons.get(&start) {
            self.pos = *end;
            return result.clone();
        }
        let result = self.comparison_uncached();
        self.comparisons.insert(start, (result.clone(), self.pos));
        result
    }

    fn comparison_uncached(&mut self) -> PResult<Pred> {
        if let Some(Tok::Ident(name)) = self.peek().cloned()
            && let Some(Symbol::BoolVar(v)) = self.scope.lookup(&name)
        {
            let next_is_cmp =
                matches!(self.peek_at(1), Some(Tok::Sym(s)) if ["<=", "<", ">=", ">", "==", "=", "!="].contains(s));
            if !next_is_cmp {
                self.pos += 1;
                return Ok(Pred::Cmp(Expr::Var(v), CmpOp::Eq, Expr::Const(Rational::from_integer(1.into()))));
            }
        }
        let mut lhs = self.expr()?;
        let mut atoms = Vec::new();
        while let Some((op, negated)) = self.cmp_op() {
            let rhs = self.expr()?;
            let atom = Pred::Cmp(lhs, op, rhs.clone());
            atoms.push(if negated { Pred::Not(Box::new(atom)) } else { atom });
            lhs = rhs;
        }
        if atoms.is_empty() {
            return self.error("expected a comparison (<=, <, >=, >, ==, !=)");
        }
        Ok(Pred::and(atoms))
    }

    fn pred_or(&mut self) -> PResult<Pred> {
        let mut items = vec![self.pred_and()?];
        while self.eat_word("or") || self.eat_sym("||") {
            items.push(self.pred_and()?);
        }
        let lhs = Pred::or(items);
        if self.mode == Mode::Pred && self.eat_sym("->") {
            let rhs = self.nested(Self::pred_or)?;
            return Ok(Pred::Or(vec![Pred::Not(Box::new(lhs)), rhs]));
        }
        Ok(lhs)
    }

    fn pred_and(&mut self) -> PResult<Pred> {
        let mut items = vec![self.pred_not()?];
        while self.eat_word("and") || self.eat_sym("&&") {
            items.push(self.pred_not()?);
        }
        Ok(Pred::and(items))
    }

    fn pred_not(&mut self) -> PResult<Pred> {
        self.nested(Self::pred_not_inner)
    }

    fn pred_not_inner(&mut self) -> PResult<Pred> {
        if self.eat_word("not") || self.eat_sym("!") {
            return Ok(Pred::Not(Box::new(self.pred_not()?)));
        }
        if self.eat_word("true") {
            return Ok(Pred::True);
        }
        if self.eat_word("false") {
            return Ok(Pred::False);
        }
        if self.is_sym("(") {
            // Either an arithmetic group starting a comparison, or a parenthesised predicate.
            let save = self.pos;
            if let Ok(p) = self.comparison() {
                return Ok(p);
            }
            self.pos = save + 1;
            let p = self.pred_or()?;
            self.expect_sym(")")?;
            return Ok(p);
        }
        self.comparison()
    }

    // ---------- temporal formulas ----------

    /// `^k`, `<=k`, or nothing. `k` is a non-negative integer: a literal, a named constant
    /// (`AG^k`, with `k` a property parameter or a `[constants]` entry) or a parenthesised
    /// constant expression (`AX^(k-1)`).
    fn bound(&mut self) -> PResult<Option<u32>> {
        if !(self.eat_sym("^") || self.eat_sym("<=")) {
            return Ok(None);
        }
        let start = self.pos;
        let value = match self.peek().cloned() {
            Some(Tok::Num(q)) => {
                self.pos += 1;
                q
            }
            Some(Tok::Ident(name)) => match self.scope.lookup(&name) {
                Some(Symbol::Const(q)) => {
                    self.pos += 1;
                    q
                }
                _ => return self.error(format!("a bound is an integer or a named constant; '{name}' is neither")),
            },
            Some(Tok::Sym("(")) => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect_sym(")")?;
                match e.as_linear().filter(|l| l.is_constant()) {
                    Some(l) => l.constant,
                    None => {
                        self.pos = start;
                        return self.error("a bound expression must be constant");
                    }
                }
            }
            _ => return self.error("expected a non-negative integer bound"),
        };
        if !crate::num::is_integer(&value) || value < Rational::zero() {
            self.pos = start;
            return self.error(format!(
                "a bound must be a non-negative integer, not {}",
                crate::num::display_rational(&value)
            ));
        }
        match u32::try_from(value.numer()).ok().filter(|k| *k <= MAX_TEMPORAL_BOUND) {
            Some(k) => Ok(Some(k)),
            None => {
                self.pos = start;
                self.error(format!("bound too large (at most {MAX_TEMPORAL_BOUND})"))
            }
        }
    }

    fn ctl_or(&mut self) -> PResult<Ctl> {
        let mut items = vec![self.ctl_and()?];
        while self.eat_word("or") || self.eat_sym("||") {
            items.push(self.ctl_and()?);
        }
        let lhs = if items.len() == 1 { items.pop().unwrap() } else { Ctl::Or(items) };
        if self.eat_sym("->") {
            let rhs = self.nested(Self::ctl_or)?;
            return Ok(Ctl::Or(vec![Ctl::Not(Box::new(lhs)), rhs]));
        }
        Ok(lhs)
    }

    fn ctl_and(&mut self) -> PResult<Ctl> {
        let mut items = vec![self.ctl_unary()?];
        while self.eat_word("and") || self.eat_sym("&&") {
            items.push(self.ctl_unary()?);
        }
        Ok(if items.len() == 1 { items.pop().unwrap() } else { Ctl::And(items) })
    }

    fn ctl_unary(&mut self) -> PResult<Ctl> {
        self.nested(Self::ctl_unary_inner)
    }

    fn ctl_unary_inner(&mut self) -> PResult<Ctl> {
        if self.eat_word("not") || self.eat_sym("!") {
            return Ok(Ctl::Not(Box::new(self.ctl_unary()?)));
        }
        if let Some(Tok::Ident(w)) = self.peek().cloned() {
            match w.as_str() {
                "EX" | "AX" => {
                    self.pos += 1;
                    let k = self.bound()?.unwrap_or(1);
                    let a = Box::new(self.ctl_unary()?);
                    return Ok(if w == "EX" { Ctl::EX(k, a) } else { Ctl::AX(k, a) });
                }
                "EF" | "AF" | "EG" | "AG" => {
                    self.pos += 1;
                    let k = self.bound()?;
                    let a = Box::new(self.ctl_unary()?);
                    return Ok(match w.as_str() {
                        "EF" => Ctl::EF(k, a),
                        "AF" => Ctl::AF(k, a),
                        "EG" => Ctl::EG(k, a),
                        _ => Ctl::AG(k, a),
                    });
                }
                "E" | "A" => {
                    self.pos += 1;
                    self.expect_sym("[")?;
                    let a = Box::new(self.ctl_or()?);
                    if !self.eat_word("U") {
                        return self.error("expected 'U' inside E[..]/A[..]");
                    }
                    let k = self.bound()?;
                    let b = Box::new(self.ctl_or()?);
                    self.expect_sym("]")?;
                    return Ok(if w == "E" { Ctl::EU(k, a, b) } else { Ctl::AU(k, a, b) });
                }
                _ => {}
            }
        }
        if self.is_sym("(") {
            let save = self.pos;
            if let Ok(p) = self.comparison() {
                return Ok(Ctl::Atom(p));
            }
            self.pos = save + 1;
            let c = self.ctl_or()?;
            self.expect_sym(")")?;
            return Ok(c);
        }
        if self.eat_word("true") {
            return Ok(Ctl::Atom(Pred::True));
        }
        if self.eat_word("false") {
            return Ok(Ctl::Atom(Pred::False));
        }
        Ok(Ctl::Atom(self.comparison()?))
    }

    fn ltl_or(&mut self) -> PResult<Ltl> {
        let mut items = vec![self.ltl_and()?];
        while self.eat_word("or") || self.eat_sym("||") {
            items.push(self.ltl_and()?);
        }
        let lhs = if items.len() == 1 { items.pop().unwrap() } else { Ltl::Or(items) };
        if self.eat_sym("->") {
            let rhs = self.nested(Self::ltl_or)?;
            return Ok(Ltl::Or(vec![Ltl::Not(Box::new(lhs)), rhs]));
        }
        Ok(lhs)
    }

    fn ltl_and(&mut self) -> PResult<Ltl> {
        let mut items = vec![self.ltl_binary()?];
        while self.eat_word("and") || self.eat_sym("&&") {
            items.push(self.ltl_binary()?);
        }
        Ok(if items.len() == 1 { items.pop().unwrap() } else { Ltl::And(items) })
    }

    fn ltl_binary(&mut self) -> PResult<Ltl> {
        let lhs = self.ltl_unary()?;
        for (w, until) in [("U", true), ("R", false)] {
            if self.eat_word(w) {
                let k = self.bound()?;
                let rhs = Box::new(self.nested(Self::ltl_binary)?);
                return Ok(if until { Ltl::U(k, Box::new(lhs), rhs) } else { Ltl::R(k, Box::new(lhs), rhs) });
            }
        }
        Ok(lhs)
    }

    fn ltl_unary(&mut self) -> PResult<Ltl> {
        self.nested(Self::ltl_unary_inner)
    }

    fn ltl_unary_inner(&mut self) -> PResult<Ltl> {
        if self.eat_word("not") || self.eat_sym("!") {
            return Ok(Ltl::Not(Box::new(self.ltl_unary()?)));
        }
        if let Some(Tok::Ident(w)) = self.peek().cloned() {
            match w.as_str() {
                "X" => {
                    self.pos += 1;
                    let k = if self.is_sym("^") { self.bound()?.unwrap_or(1) } else { 1 };
                    return Ok(Ltl::X(k, Box::new(self.ltl_unary()?)));
                }
                "F" | "G" => {
                    self.pos += 1;
                    let k = self.bound()?;
                    let a = Box::new(self.ltl_unary()?);
                    return Ok(if w == "F" { Ltl::F(k, a) } else { Ltl::G(k, a) });
                }
                _ => {}
            }
        }
        if self.is_sym("(") {
            let save = self.pos;
            if let Ok(p) = self.comparison() {
                return Ok(Ltl::Atom(p));
            }
            self.pos = save + 1;
            let l = self.ltl_or()?;
            self.expect_sym(")")?;
            return Ok(l);
        }
        if self.eat_word("true") {
            return Ok(Ltl::Atom(Pred::True));
        }
        if self.eat_word("false") {
            return Ok(Ltl::Atom(Pred::False));
        }
        Ok(Ltl::Atom(self.comparison()?))
    }
}

/// `base^n`, folded when the base is a constant (exactly: a power of a rational is rational).
fn power(base: Expr, n: u32) -> Expr {
    match base {
        Expr::Const(c) => Expr::Const(num_traits::pow(c, n as usize)),
        base => Expr::Pow(Box::new(base), n),
    }
}

fn make_error(text: &str, message: String, offset: usize) -> ParseError {
    let offset = offset.min(text.len());
    let caret = format!("{}^", " ".repeat(text[..offset].chars().count()));
    ParseError { message, text: text.to_string(), caret, offset }
}

/// Runs one parse of the whole text: `rule`, then the end of the text, then the size limits.
fn parse_all<T>(
    text: &str,
    scope: &dyn Scope,
    mode: Mode,
    rule: impl FnOnce(&mut Parser<'_>) -> PResult<T>,
    size: fn(&T) -> Size,
) -> Result<T, ParseError> {
    let mut p = Parser::new(text, scope, mode)?;
    let result = rule(&mut p).and_then(|t| p.finish().map(|()| t));
    let t = result.map_err(|f| make_error(text, f.message, f.offset))?;
    let s = size(&t);
    if s.depth > MAX_TREE_DEPTH {
        let message = format!(
            "nested too deeply: {} levels after `let` definitions are inlined (at most {MAX_TREE_DEPTH})",
            s.depth
        );
        return Err(make_error(text, message, 0));
    }
    if s.nodes > MAX_TREE_NODES {
        let message =
            format!("too large: {} nodes after `let` definitions are inlined (at most {MAX_TREE_NODES})", s.nodes);
        return Err(make_error(text, message, 0));
    }
    Ok(t)
}

/// Parses an expression (the `expr` rule of the module docs); the whole text must be one.
pub fn parse_expr(text: &str, scope: &dyn Scope) -> Result<Expr, ParseError> {
    parse_all(text, scope, Mode::Pred, |p| p.expr(), shape::expr_size)
}

/// Parses a predicate (the `pred` rule); the whole text must be one.
pub fn parse_pred(text: &str, scope: &dyn Scope) -> Result<Pred, ParseError> {
    parse_all(text, scope, Mode::Pred, |p| p.pred_or(), shape::pred_size)
}

/// Parses a CTL formula (the `ctl` rule); the whole text must be one.
pub fn parse_ctl(text: &str, scope: &dyn Scope) -> Result<Ctl, ParseError> {
    parse_all(text, scope, Mode::Ctl, |p| p.ctl_or(), shape::ctl_size)
}

/// Parses an LTL formula (the `ltl` rule); the whole text must be one.
pub fn parse_ltl(text: &str, scope: &dyn Scope) -> Result<Ltl, ParseError> {
    parse_all(text, scope, Mode::Ltl, |p| p.ltl_or(), shape::ltl_size)
}

/// A scope from plain lists, handy in tests and small tools.
#[derive(Default, Clone)]
pub struct SimpleScope {
    /// The names in scope, in the order added; a later entry shadows an earlier one of the same
    /// name.
    pub symbols: Vec<(String, Symbol)>,
}

impl SimpleScope {
    /// A scope of state variables only: `names[i]` is `State(i)`.
    pub fn with_state(names: &[&str]) -> SimpleScope {
        SimpleScope {
            symbols: names.iter().enumerate().map(|(i, n)| (n.to_string(), Symbol::Var(VarRef::State(i)))).collect(),
        }
    }

    /// Adds a name (shadowing any earlier one of the same name).
    pub fn add(&mut self, name: &str, sym: Symbol) -> &mut Self {
        self.symbols.push((name.to_string(), sym));
        self
    }
}

impl Scope for SimpleScope {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.symbols.iter().rev().find(|(n, _)| n == name).map(|(_, s)| s.clone())
    }

    fn known_names(&self) -> Vec<String> {
        self.symbols.iter().map(|(n, _)| n.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Env;
    use crate::num::{parse_rational as q, rational_from_i64};

    fn scope() -> SimpleScope {
        let mut s = SimpleScope::with_state(&["x", "y", "h", "adv"]);
        s.add("a0", Symbol::Var(VarRef::Action(0)));
        s.add("c", Symbol::Var(VarRef::Nondet(0)));
        s.add("G", Symbol::Const(q("32.2").unwrap()));
        s
    }

    fn eval(e: &Expr, state: &[&str], action: &[&str], nondet: &[&str]) -> Rational {
        let v = |xs: &[&str]| xs.iter().map(|s| q(s).unwrap()).collect::<Vec<_>>();
        let (s, a, n) = (v(state), v(action), v(nondet));
        e.eval_exact(&Env::new(&s, &a, &n)).unwrap()
    }

    #[test]
    fn arithmetic_is_exact_and_folds_constants() {
        let e = parse_expr("x + 0.1*c*a0 - G/8", &scope()).unwrap();
        let v = eval(&e, &["0.3", "0", "0", "0"], &["2"], &["0.5"]);
        assert_eq!(v, q("0.3").unwrap() + q("0.1").unwrap() - q("32.2").unwrap() / rational_from_i64(8));
        assert_eq!(parse_expr("G/4", &scope()).unwrap(), Expr::Const(q("8.05").unwrap()));
    }

    #[test]
    fn functions_and_conditionals() {
        let e = parse_expr("clamp(x + lookup(adv, [-1, 0, 1]), 1, 3)", &scope()).unwrap();
        assert_eq!(eval(&e, &["3", "0", "0", "2"], &["0"], &["0"]), rational_from_i64(3));
        assert_eq!(eval(&e, &["1", "0", "0", "0"], &["0"], &["0"]), rational_from_i64(1));
        let f = parse_expr("if x <= 0 and y > 1 then relu(h) else abs(h) + max(x, y, 2)", &scope()).unwrap();
        assert_eq!(eval(&f, &["0", "2", "-5", "0"], &["0"], &["0"]), rational_from_i64(0));
        assert_eq!(eval(&f, &["1", "2", "-5", "0"], &["0"], &["0"]), rational_from_i64(7));
    }

    #[test]
    fn predicates_chains_and_parentheses() {
        let p = parse_pred("0.25 <= x <= 0.95 and (0.55 <= y <= 0.95 or (h - 20)/40 > 1)", &scope()).unwrap();
        let env_vals = |x: &str, y: &str, h: &str| {
            let s = [q(x).unwrap(), q(y).unwrap(), q(h).unwrap(), rational_from_i64(0)];
            p.eval_exact(&Env::new(&s, &[], &[])).unwrap()
        };
        assert!(env_vals("0.3", "0.6", "0"));
        assert!(!env_vals("0.2", "0.6", "0"));
        assert!(env_vals("0.3", "0.1", "61"));
        assert!(!env_vals("0.3", "0.1", "60"));
    }

    #[test]
    fn temporal_formulas() {
        let c = parse_ctl("AX^3 (h > 100 or h < -100)", &scope()).unwrap();
        assert!(matches!(c, Ctl::AX(3, _)));
        let c = parse_ctl("A[x <= 1 U^4 y >= 2] and EF<=2 not (x == 0)", &scope()).unwrap();
        assert!(c.is_bounded());
        assert_eq!(c.depth(), Some(4));
        let l = parse_ltl("G<=5 (x <= 2) -> F y > 0 U<=3 x < 1", &scope()).unwrap();
        assert!(matches!(l, Ltl::Or(_)));
        let l = parse_ltl("X^3 (h <= 2)", &scope()).unwrap();
        assert_eq!(l.depth(), Some(3));
    }

    #[test]
    fn temporal_bounds_from_named_constants() {
        let mut s = scope();
        s.add("k", Symbol::Const(rational_from_i64(4)));
        let c = parse_ctl("AG^k (x <= 1) and AX^(k-1) (y > 0) and EF<=(2*k) x == 0", &s).unwrap();
        let Ctl::And(parts) = c else { panic!("{c:?}") };
        assert!(matches!(parts[0], Ctl::AG(Some(4), _)), "{parts:?}");
        assert!(matches!(parts[1], Ctl::AX(3, _)), "{parts:?}");
        assert!(matches!(parts[2], Ctl::EF(Some(8), _)), "{parts:?}");
        assert!(parse_ctl("AX^(k/3) x <= 1", &s).unwrap_err().message.contains("non-negative integer"));
        assert!(parse_ctl("AX^(k-5) x <= 1", &s).unwrap_err().message.contains("non-negative integer"));
        assert!(parse_ctl("AX^(x) x <= 1", &s).unwrap_err().message.contains("constant"));
        assert!(parse_ctl("AX^y x <= 1", &s).unwrap_err().message.contains("neither"));
    }

    #[test]
    fn errors_point_at_the_problem() {
        let e = parse_expr("x + zz", &scope()).unwrap_err();
        assert!(e.message.contains("unknown name 'zz'") && e.message.contains("x, y"), "{e}");
        assert_eq!(e.offset, 4);
        let e = parse_expr("x / y", &scope()).unwrap_err();
        assert!(e.message.contains("only by a constant"));
        let e = parse_pred("x <=", &scope()).unwrap_err();
        assert!(e.message.contains("end of text"), "{e}");
        assert!(parse_expr("x $ 1", &scope()).unwrap_err().message.contains("unexpected character"));
        assert!(parse_expr("foo(1)", &scope()).unwrap_err().message.contains("unknown function"));
        assert!(parse_pred("x <= 1 y", &scope()).is_err());
        let e = parse_pred("x ≤ 1", &scope()).unwrap_err();
        assert_eq!(e.message, "unexpected character '≤' (write '<=')");
        assert_eq!(e.caret, "  ^");
    }

    /// Issue 9, item 12: 10000 nested parentheses, unary minus or `not` overflowed the stack.
    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let n = 10_000;
        let texts = [
            format!("{}x{}", "(".repeat(n), ")".repeat(n)),
            format!("{}x", "-".repeat(n)),
            format!("{}x <= 1", "not ".repeat(n)),
            format!("{}x <= 1{}", "(".repeat(n), ")".repeat(n)),
            format!("{}x{}", "relu(".repeat(n), ")".repeat(n)),
            format!("{}1{}", "if x <= 1 then 1 else (".repeat(n), ")".repeat(n)),
            vec!["x <= 1"; n].join(" -> "),
        ];
        for t in &texts {
            let msg = match parse_pred(t, &scope()) {
                Err(e) => e.message,
                Ok(_) => match parse_expr(t, &scope()) {
                    Err(e) => e.message,
                    Ok(_) => panic!("accepted {} levels", n),
                },
            };
            assert!(msg.contains("nested too deeply"), "{msg}");
        }
        let formulas = [format!("{}x <= 1", "AX ".repeat(n)), format!("{}x <= 1", "not ".repeat(n))];
        for t in &formulas {
            assert!(parse_ctl(t, &scope()).unwrap_err().message.contains("nested too deeply"));
        }
        let ltl = [format!("{}x <= 1", "X ".repeat(n)), vec!["x <= 1"; n].join(" U ")];
        for t in &ltl {
            assert!(parse_ltl(t, &scope()).unwrap_err().message.contains("nested too deeply"));
        }
        // Legitimate nesting is fine.
        let ok = format!("{}x{}", "(".repeat(150), ")".repeat(150));
        assert_eq!(parse_expr(&ok, &scope()).unwrap(), Expr::Var(VarRef::State(0)));
    }

    /// Issue 9, item 12: a flat sum of 2500 terms built a tree 2500 deep.
    #[test]
    fn long_flat_chains_parse_into_shallow_trees_with_the_same_value() {
        let n = 2500;
        let sum: String = (0..n).map(|i| format!(" {} {i}*x", if i % 2 == 0 { "+" } else { "-" })).collect();
        let e = parse_expr(&sum, &scope()).unwrap();
        assert!(shape::expr_size(&e).depth <= 20);
        // Σ (-1)^i i x at x = 1: -(n/2).
        assert_eq!(eval(&e, &["1", "0", "0", "0"], &["0"], &["0"]), rational_from_i64(-(n as i64) / 2));
        let product = vec!["x"; n].join(" * ");
        let p = parse_expr(&format!("{product} / 3 / 5"), &scope()).unwrap();
        assert_eq!(eval(&p, &["1", "0", "0", "0"], &["0"], &["0"]), q("1/15").unwrap());
        let conj = vec!["x <= 1"; n].join(" and ");
        assert!(shape::pred_size(&parse_pred(&conj, &scope()).unwrap()).depth <= 4);
        let max = format!("max({})", (0..n).map(|i| format!("x - {i}")).collect::<Vec<_>>().join(", "));
        let m = parse_expr(&max, &scope()).unwrap();
        assert!(shape::expr_size(&m).depth <= 20);
        assert_eq!(eval(&m, &["3", "0", "0", "0"], &["0"], &["0"]), rational_from_i64(3));
    }

    /// The parenthesis backtracking is memoised: nested groups that are first read as arithmetic
    /// and then as predicates took 2^depth time.
    #[test]
    fn nested_groups_parse_in_polynomial_time() {
        // 40 levels: 2^40 re-reads without the memo; within the nesting limit.
        let mut p = "x <= 1".to_string();
        for _ in 0..40 {
            p = format!("((if {p} then 1 else 0) <= 1 and true)");
        }
        assert!(parse_pred(&p, &scope()).is_ok());
    }

    #[test]
    fn let_definitions_cannot_blow_up() {
        let mut s = scope();
        let mut e = parse_expr("x + y", &s).unwrap();
        for _ in 0..40 {
            s.add("m", Symbol::Macro(e));
            e = match parse_expr("m * m + m", &s) {
                Ok(e) => e,
                Err(err) => {
                    assert!(err.message.contains("expand to more than"), "{err}");
                    return;
                }
            };
        }
        panic!("the definitions grew without bound");
    }

    #[test]
    fn let_definitions_cannot_nest_without_bound() {
        let mut s = scope();
        let mut e = parse_expr("x", &s).unwrap();
        for _ in 0..1000 {
            s.add("m", Symbol::Macro(e));
            e = match parse_expr("-relu(m)", &s) {
                Ok(e) => e,
                Err(err) => {
                    assert!(err.message.contains("nested too deeply"), "{err}");
                    return;
                }
            };
        }
        panic!("the definitions nested without bound");
    }

    #[test]
    fn temporal_bounds_are_limited() {
        let e = parse_ctl("EX^4294967295 EX^4294967295 x <= 1", &scope()).unwrap_err();
        assert!(e.message.contains("bound too large"), "{e}");
        assert!(parse_ltl("F<=1000000 x <= 1", &scope()).is_ok());
    }
}
