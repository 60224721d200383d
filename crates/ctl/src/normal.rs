//! Bounded CTL in the form the engines search: negation pushed to the atoms, every derived
//! operator unfolded into one-step `EX`/`AX`, predicates split into single comparisons.
//!
//! The engines look for a *counterexample*: an initial state satisfying the negation of the
//! property. [`Normal::negation`] builds that negation, so strict atoms of the property (`h > 100`)
//! become non-strict ones (`h <= 100`) that a MILP can state exactly.
//!
//! Unfoldings (the notes' definitions: `EX^k`/`AX^k` count k transitions, `EF^k = EX^1 or .. or
//! EX^k`, so `F`/`G` range over steps 1..k; `U` over steps 0..k):
//! * `EF^k p = EX (p or EF^(k-1) p)`, `EF^1 p = EX p`; `AF` with `AX`;
//! * `AG^k p = AX (p and AG^(k-1) p)`, `AG^1 p = AX p`; `EG` with `EX`;
//! * `E[p U^k q] = q or (p and EX E[p U^(k-1) q])`, `E[p U^0 q] = q`; `A[..]` with `AX`.
//!
//! Negation: `not EX = AX not`, `not EF = AG not`, `not E[p U q] = A[not q R not p]` (unfolded as
//! `not q and (not p or AX ..)`). These dualities hold when every state has a successor; the exact
//! engine checks that, and a state without one is an error, never a verdict.
//!
//! The result is a DAG: a sub-formula used at several unfolding levels is one node (nodes are
//! hash-consed, so building is linear in the unfolding). What a formula unfolds into is bounded
//! ([`MAX_NODES`], estimated before anything is built) and the budget is checked while building.

use crate::error::CtlError;
use std::collections::HashMap;
use trestle_core::Budget;
use trestle_ir::formula::Ctl;
use trestle_ir::pred::Pred;

/// Index of a node in [`Normal::nodes`].
pub type NodeId = usize;

#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    True,
    False,
    /// One comparison (`Pred::Cmp`), in negation normal form.
    Atom(Pred),
    And(Vec<NodeId>),
    Or(Vec<NodeId>),
    /// Some successor satisfies the child.
    Ex(NodeId),
    /// Every successor satisfies the child.
    Ax(NodeId),
}

/// A formula in normal form: the nodes (children before parents) and the root.
#[derive(Clone, Debug, PartialEq)]
pub struct Normal {
    pub nodes: Vec<Node>,
    pub root: NodeId,
}

const TRUE: NodeId = 0;
const FALSE: NodeId = 1;

/// Most nodes a normal form may have (about 100 MB at most): `AX^k` has about `k`, `AG^k` about
/// `2k`; formulas estimated to unfold into more are refused before anything is built.
pub const MAX_NODES: u128 = 1 << 20;

/// Nodes built between two checks of the budget.
const CHECK_EVERY: usize = 4096;

type R = Result<NodeId, CtlError>;

/// A node without its atom, for hash-consing (atoms are few, and compared by value).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Shape {
    And(Vec<NodeId>),
    Or(Vec<NodeId>),
    Ex(NodeId),
    Ax(NodeId),
}

/// A normal form under construction.
struct Builder<'b> {
    normal: Normal,
    shapes: HashMap<Shape, NodeId>,
    budget: &'b Budget,
}

impl Normal {
    /// The normal form of `phi`.
    pub fn of(phi: &Ctl, budget: &Budget) -> Result<Normal, CtlError> {
        Normal::build(phi, false, budget)
    }

    /// The normal form of `not phi`: what a counterexample satisfies. `Err(Stopped)` when the
    /// budget ends while building, `Unsupported` when the formula unfolds into more than
    /// [`MAX_NODES`] nodes.
    pub fn negation(phi: &Ctl, budget: &Budget) -> Result<Normal, CtlError> {
        Normal::build(phi, true, budget)
    }

    fn build(phi: &Ctl, negate: bool, budget: &Budget) -> Result<Normal, CtlError> {
        let estimate = unfolded_size(phi);
        if estimate > MAX_NODES {
            return Err(CtlError::Unsupported(format!(
                "the formula unfolds into about {estimate} one-step nodes; at most {MAX_NODES} are built (lower its \
                 bounds)"
            )));
        }
        let normal = Normal { nodes: vec![Node::True, Node::False], root: TRUE };
        let mut b = Builder { normal, shapes: HashMap::new(), budget };
        b.normal.root = b.tr(phi, negate)?;
        Ok(b.normal)
    }

    /// Largest number of transitions below `id` (children come before their parents, so one pass
    /// in order computes every node's, without recursion).
    pub fn depth(&self, id: NodeId) -> usize {
        let mut depth = vec![0usize; id + 1];
        for i in 0..=id {
            depth[i] = match &self.nodes[i] {
                Node::True | Node::False | Node::Atom(_) => 0,
                Node::And(xs) | Node::Or(xs) => xs.iter().map(|&x| depth[x]).max().unwrap_or(0),
                Node::Ex(a) | Node::Ax(a) => 1 + depth[*a],
            };
        }
        depth[id]
    }

    /// Whether some `AX` is reachable from the root (the explicit engine's witnesses branch there).
    pub fn has_universal(&self) -> bool {
        self.nodes.iter().any(|n| matches!(n, Node::Ax(_)))
    }

    /// The formula as text (for messages and tests; recursive, for shallow formulas).
    pub fn show(&self, id: NodeId) -> String {
        let join = |xs: &[NodeId], sep: &str| xs.iter().map(|&x| self.show(x)).collect::<Vec<_>>().join(sep);
        match &self.nodes[id] {
            Node::True => "true".into(),
            Node::False => "false".into(),
            Node::Atom(p) => format!("{p:?}"),
            Node::And(xs) => format!("({})", join(xs, " and ")),
            Node::Or(xs) => format!("({})", join(xs, " or ")),
            Node::Ex(a) => format!("EX {}", self.show(*a)),
            Node::Ax(a) => format!("AX {}", self.show(*a)),
        }
    }
}

/// An upper bound of the nodes the normal form of `phi` has (saturating): one per comparison and
/// connective of its predicates, and per unfolded step of a bounded operator its one-step nodes.
pub fn unfolded_size(phi: &Ctl) -> u128 {
    fn pred(p: &Pred) -> u128 {
        match p {
            Pred::True | Pred::False | Pred::Cmp(..) => 1,
            Pred::And(ps) | Pred::Or(ps) => ps.iter().map(pred).fold(1u128, u128::saturating_add),
            // Negation normal form: as many nodes as the predicate.
            Pred::Not(q) => pred(q),
        }
    }
    let k = |k: &Option<u32>| k.map_or(1, u128::from);
    match phi {
        Ctl::Atom(p) => pred(p),
        Ctl::Not(a) => unfolded_size(a),
        Ctl::And(xs) | Ctl::Or(xs) => xs.iter().map(unfolded_size).fold(1u128, u128::saturating_add),
        Ctl::EX(n, a) | Ctl::AX(n, a) => u128::from(*n).saturating_add(unfolded_size(a)),
        Ctl::EF(n, a) | Ctl::AF(n, a) | Ctl::EG(n, a) | Ctl::AG(n, a) => {
            k(n).saturating_mul(2).saturating_add(unfolded_size(a))
        }
        Ctl::EU(n, a, b) | Ctl::AU(n, a, b) => {
            k(n).saturating_mul(3).saturating_add(unfolded_size(a)).saturating_add(unfolded_size(b))
        }
    }
}

impl Builder<'_> {
    fn push(&mut self, n: Node) -> Result<NodeId, CtlError> {
        let nodes = &mut self.normal.nodes;
        let shape = match &n {
            Node::True => return Ok(TRUE),
            Node::False => return Ok(FALSE),
            Node::Atom(p) => {
                if let Some(i) = nodes.iter().position(|m| matches!(m, Node::Atom(q) if q == p)) {
                    return Ok(i);
                }
                None
            }
            Node::And(xs) => Some(Shape::And(xs.clone())),
            Node::Or(xs) => Some(Shape::Or(xs.clone())),
            Node::Ex(a) => Some(Shape::Ex(*a)),
            Node::Ax(a) => Some(Shape::Ax(*a)),
        };
        if let Some(shape) = &shape
            && let Some(&i) = self.shapes.get(shape)
        {
            return Ok(i);
        }
        if nodes.len().is_multiple_of(CHECK_EVERY) {
            self.budget.check().map_err(CtlError::Stopped)?;
        }
        nodes.push(n);
        let id = nodes.len() - 1;
        if let Some(shape) = shape {
            self.shapes.insert(shape, id);
        }
        Ok(id)
    }

    fn and(&mut self, xs: Vec<NodeId>) -> R {
        let mut items = Vec::new();
        for x in xs {
            match &self.normal.nodes[x] {
                Node::False => return Ok(FALSE),
                Node::True => {}
                Node::And(ys) => items.extend(ys.iter().copied()),
                _ => items.push(x),
            }
        }
        items.dedup();
        match items[..] {
            [] => Ok(TRUE),
            [x] => Ok(x),
            _ => self.push(Node::And(items)),
        }
    }

    fn or(&mut self, xs: Vec<NodeId>) -> R {
        let mut items = Vec::new();
        for x in xs {
            match &self.normal.nodes[x] {
                Node::True => return Ok(TRUE),
                Node::False => {}
                Node::Or(ys) => items.extend(ys.iter().copied()),
                _ => items.push(x),
            }
        }
        items.dedup();
        match items[..] {
            [] => Ok(FALSE),
            [x] => Ok(x),
            _ => self.push(Node::Or(items)),
        }
    }

    /// `EX a` (`exists`) or `AX a`; with every state having a successor, `EX`/`AX` of a constant
    /// is that constant.
    fn next(&mut self, exists: bool, a: NodeId) -> R {
        if a == TRUE || a == FALSE {
            return Ok(a);
        }
        self.push(if exists { Node::Ex(a) } else { Node::Ax(a) })
    }

    fn next_k(&mut self, exists: bool, k: u32, mut a: NodeId) -> R {
        for _ in 0..k {
            a = self.next(exists, a)?;
        }
        Ok(a)
    }

    /// `p` at some step 1..k on some (`exists`) or every path.
    fn eventually(&mut self, exists: bool, k: u32, p: NodeId) -> R {
        let mut f = FALSE;
        for _ in 0..k {
            let here = self.or(vec![p, f])?;
            f = self.next(exists, here)?;
        }
        Ok(f)
    }

    /// `p` at every step 1..k on some (`exists`) or every path.
    fn always(&mut self, exists: bool, k: u32, p: NodeId) -> R {
        let mut f = TRUE;
        for _ in 0..k {
            let here = self.and(vec![p, f])?;
            f = self.next(exists, here)?;
        }
        Ok(f)
    }

    /// `p U^k q` from step 0: `q or (p and X (p U^(k-1) q))`.
    fn until(&mut self, exists: bool, k: u32, p: NodeId, q: NodeId) -> R {
        let mut f = q;
        for _ in 0..k {
            let later = self.next(exists, f)?;
            let both = self.and(vec![p, later])?;
            f = self.or(vec![q, both])?;
        }
        Ok(f)
    }

    /// The dual of `until` over the negated operands: `q' and (p' or X (..))`.
    fn release(&mut self, exists: bool, k: u32, p: NodeId, q: NodeId) -> R {
        let mut f = q;
        for _ in 0..k {
            let later = self.next(exists, f)?;
            let either = self.or(vec![p, later])?;
            f = self.and(vec![q, either])?;
        }
        Ok(f)
    }

    fn pred(&mut self, p: &Pred) -> R {
        match p {
            Pred::True => Ok(TRUE),
            Pred::False => Ok(FALSE),
            Pred::Cmp(..) => self.push(Node::Atom(p.clone())),
            Pred::And(ps) => {
                let xs = ps.iter().map(|q| self.pred(q)).collect::<Result<_, _>>()?;
                self.and(xs)
            }
            Pred::Or(ps) => {
                let xs = ps.iter().map(|q| self.pred(q)).collect::<Result<_, _>>()?;
                self.or(xs)
            }
            Pred::Not(q) => {
                let n = q.nnf(true);
                self.pred(&n)
            }
        }
    }

    fn tr(&mut self, phi: &Ctl, neg: bool) -> Result<NodeId, CtlError> {
        let bound = |k: &Option<u32>, op: &str| {
            k.ok_or_else(|| CtlError::Unsupported(format!("{op} without a bound: bounded CTL needs {op}^k")))
        };
        match phi {
            Ctl::Atom(p) => {
                let n = p.nnf(neg);
                self.pred(&n)
            }
            Ctl::Not(a) => self.tr(a, !neg),
            Ctl::And(xs) | Ctl::Or(xs) => {
                let items = xs.iter().map(|x| self.tr(x, neg)).collect::<Result<Vec<_>, _>>()?;
                if matches!(phi, Ctl::And(_)) != neg { self.and(items) } else { self.or(items) }
            }
            Ctl::EX(k, a) | Ctl::AX(k, a) => {
                let body = self.tr(a, neg)?;
                // not EX = AX not.
                let exists = matches!(phi, Ctl::EX(..)) != neg;
                self.next_k(exists, *k, body)
            }
            Ctl::EF(k, a) | Ctl::AF(k, a) | Ctl::EG(k, a) | Ctl::AG(k, a) => {
                let (op, exists, finally) = match phi {
                    Ctl::EF(..) => ("EF", true, true),
                    Ctl::AF(..) => ("AF", false, true),
                    Ctl::EG(..) => ("EG", true, false),
                    _ => ("AG", false, false),
                };
                let k = bound(k, op)?;
                let body = self.tr(a, neg)?;
                // not EF p = AG not p, not AG p = EF not p, and so on.
                let (exists, finally) = if neg { (!exists, !finally) } else { (exists, finally) };
                if finally { self.eventually(exists, k, body) } else { self.always(exists, k, body) }
            }
            Ctl::EU(k, a, b) | Ctl::AU(k, a, b) => {
                let exists = matches!(phi, Ctl::EU(..));
                let k = bound(k, if exists { "E[.. U ..]" } else { "A[.. U ..]" })?;
                let (p, q) = (self.tr(a, neg)?, self.tr(b, neg)?);
                if neg { self.release(!exists, k, p, q) } else { self.until(exists, k, p, q) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::parse::{SimpleScope, parse_ctl};

    fn normal(text: &str, negate: bool) -> Normal {
        let scope = SimpleScope::with_state(&["x", "y"]);
        let phi = parse_ctl(text, &scope).unwrap();
        let budget = Budget::unlimited();
        if negate { Normal::negation(&phi, &budget).unwrap() } else { Normal::of(&phi, &budget).unwrap() }
    }

    #[test]
    fn negation_reaches_the_atoms_and_swaps_quantifiers() {
        let n = normal("AX^2 (x > 1 or y < 0)", true);
        let spelled = normal("EX EX (x <= 1 and y >= 0)", false);
        assert_eq!(n.show(n.root), spelled.show(spelled.root));
        assert!(n.show(n.root).starts_with("EX EX (") && n.show(n.root).contains(" and "));
        assert_eq!(n.depth(n.root), 2);
        assert!(!n.has_universal());
    }

    #[test]
    fn double_negation_is_the_formula() {
        // VenMAS flipped an atom visited under two negations; here it is the atom itself.
        assert_eq!(normal("not not (x > 1)", false), normal("x > 1", false));
        assert_eq!(normal("not EX not (x > 1)", false), normal("AX (x > 1)", false));
        assert_eq!(normal("not not AG^3 (x > 1)", true), normal("AG^3 (x > 1)", true));
    }

    #[test]
    fn derived_operators_unfold_over_their_steps() {
        assert_eq!(normal("EF^2 x > 1", false).show(normal("EF^2 x > 1", false).root), {
            let n = normal("EX (x > 1 or EX x > 1)", false);
            n.show(n.root)
        });
        let ag = normal("AG^3 x > 1", false);
        let spelled = normal("AX (x > 1 and AX (x > 1 and AX x > 1))", false);
        assert_eq!(ag.show(ag.root), spelled.show(spelled.root));
        // not AG^k p = EF^k not p.
        let neg = normal("AG^2 x > 1", true);
        let ef = normal("EF^2 x <= 1", false);
        assert_eq!(neg.show(neg.root), ef.show(ef.root));
        // E[p U^1 q] = q or (p and EX q); its negation A-releases.
        let eu = normal("E[x > 1 U^1 y > 0]", false);
        let spelled = normal("y > 0 or (x > 1 and EX y > 0)", false);
        assert_eq!(eu.show(eu.root), spelled.show(spelled.root));
        let neu = normal("E[x > 1 U^1 y > 0]", true);
        let spelled = normal("y <= 0 and (x <= 1 or AX y <= 0)", false);
        assert_eq!(neu.show(neu.root), spelled.show(spelled.root));
        // AF / EG.
        let af = normal("AF^2 x > 1", true);
        let eg = normal("EG^2 x <= 1", false);
        assert_eq!(af.show(af.root), eg.show(eg.root));
    }

    #[test]
    fn zero_bounds_and_constants_fold() {
        let n = normal("EF^0 x > 1", false);
        assert_eq!(n.nodes[n.root], Node::False);
        let n = normal("AG^0 x > 1", false);
        assert_eq!(n.nodes[n.root], Node::True);
        let n = normal("EX^0 x > 1", false);
        assert!(matches!(n.nodes[n.root], Node::Atom(_)));
    }

    #[test]
    fn unbounded_operators_are_refused() {
        let scope = SimpleScope::with_state(&["x"]);
        let phi = parse_ctl("AG x > 1", &scope).unwrap();
        assert!(Normal::of(&phi, &Budget::unlimited()).unwrap_err().to_string().contains("without a bound"));
    }

    /// `AX^100000` took 18.9 s to build when nodes were looked up by a linear scan (issue 39.9):
    /// hash-consed, deep formulas build in linear time, their depth is computed without
    /// recursion, those past the size cap are refused before anything is built, and the budget
    /// stops a build.
    #[test]
    fn deep_formulas_build_linearly_and_huge_ones_are_refused() {
        let n = normal("AX^100000 x > 1", true);
        assert_eq!(n.depth(n.root), 100_000);
        assert!(n.nodes.len() <= 100_004, "{}", n.nodes.len());
        let n = normal("AG^100000 (x > 1 and y > 2)", false);
        assert_eq!(n.depth(n.root), 100_000);
        let scope = SimpleScope::with_state(&["x"]);
        // The parser caps each bound at 10^6; two such chains over different atoms pass it and
        // unfold past the node cap.
        let huge = parse_ctl("AX^1000000 x > 1 and AX^1000000 x < 0", &scope).unwrap();
        let e = Normal::of(&huge, &Budget::unlimited()).unwrap_err();
        assert!(matches!(&e, CtlError::Unsupported(m) if m.contains("at most 1048576")), "{e}");
        let deep = parse_ctl("EF^500000 x > 1", &scope).unwrap();
        let expired = Budget::new(Some(std::time::Duration::ZERO));
        assert_eq!(Normal::negation(&deep, &expired), Err(CtlError::Stopped(trestle_core::Stop::TimeLimit)));
    }

    #[test]
    fn shared_subformulas_are_one_node() {
        let n = normal("AG^10 (x > 1 and y > 2)", false);
        // 2 constants + 2 atoms + 1 conjunction + 10 (and, AX) levels at most.
        assert!(n.nodes.len() <= 2 + 3 + 20, "{}", n.nodes.len());
    }
}
