//! The model IR at the centre of Trestle.
//!
//! One system, written once, is checked by every engine: the compositional bridge checker, bounded
//! CTL, LTL for memoryful agents and predicate abstraction. This crate therefore says *what* a system
//! is (variables, expressions — piecewise-linear operations, products, integer powers and the
//! elementary functions of plant dynamics —, networks, controllers, environment steps, predicates,
//! temporal formulas) and how to *execute* it, in f64, exactly, in outward-rounded intervals and in
//! high-precision enclosures for validated replay ([`enclosed`]), and nothing about how to verify
//! it.
//!
//! Architecture invariant: this crate depends on no solver and no file format.

#![deny(missing_docs)]

pub mod activation;
pub mod arith;
pub mod boxindex;
pub mod enclosed;
mod exact_affine;
pub mod explore;
pub mod expr;
pub mod formula;
pub mod interval;
pub mod lift;
pub mod linear;
pub mod lint;
pub mod network;
pub mod nondet;
pub mod num;
pub mod parse;
pub mod plant;
pub mod pred;
pub mod print;
pub mod random;
pub mod round;
pub mod sim;
pub mod space;
pub mod stops;
pub mod system;

pub use arith::{Arith, LayerArith};
pub use expr::{Env, Expr, LinearExpr, VarRef};
pub use formula::{Ctl, Ltl};
pub use interval::Interval;
pub use network::{Activation, Layer, Matrix, Network};
pub use num::Rational;
pub use pred::{CmpOp, FBox, InnerBox, OuterBox, Pred, RBox};
pub use system::System;
