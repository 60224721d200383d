//! Property tests of the certificate reader and checker (issue 9, fuzzing): certificates with
//! mutated numbers, strings, arrays and keys are refused with a message in the user's words, or
//! re-checked (valid or not) without a panic; and none is ever accepted for a system it cannot be
//! true of.

mod common;
use common::*;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::LazyLock;
use trestle_bridge::certificate::{CertificateJson, certify, from_report};
use trestle_bridge::{Config, check};
use trestle_config::{Overrides, load_system_from_str};
use trestle_core::Budget;
use trestle_ir::System;

/// The safe example and its proof, and a repelling variant and its refutation.
static SEEDS: LazyLock<Vec<(System, Value)>> = LazyLock::new(|| {
    let safe = example("maze-det.toml");
    let text = std::fs::read_to_string(repo().join("examples/maze-det.toml")).unwrap();
    let text = text.replace("x = \"x + 0.1*a0\"", "x = \"x - 0.1*a0\"");
    let unsafe_ = load_system_from_str(&text, &repo().join("examples/maze-det.toml"), &Overrides::default()).unwrap();
    [safe, unsafe_]
        .into_iter()
        .map(|sys| {
            let cfg = Config::default();
            let report = check(&sys, &cfg, &Budget::unlimited(), &quiet).unwrap();
            let cert = serde_json::to_value(from_report(&sys, &report)).unwrap();
            (sys, cert)
        })
        .collect()
});

/// What a JSON value may become.
fn replacement() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(null)),
        Just(json!(true)),
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(0.5)),
        Just(json!(1e308)),
        Just(json!(-1e308)),
        Just(json!(5e-324)),
        Just(json!(u64::MAX)),
        Just(json!("")),
        Just(json!("x")),
        Just(json!("1/0")),
        Just(json!("1e99999")),
        Just(json!("-0.25")),
        Just(json!("123456789012345678901234567890/7")),
        Just(json!([])),
        Just(json!([0.5])),
        Just(json!([[0.5, 0.5]])),
        Just(json!({})),
        Just(json!({ "lo": [0.0, 0.0], "hi": [1.0, 1.0] })),
        any::<f64>().prop_filter("finite", |x| x.is_finite()).prop_map(|x| json!(x)),
    ]
}

#[derive(Clone, Debug)]
enum Edit {
    /// Replace the n-th node (in a depth-first walk, counted modulo the node count).
    Replace(usize, Value),
    /// Remove the n-th node from its array or object.
    Remove(usize),
    /// Scale the n-th number (among the numbers) by a factor.
    Scale(usize, f64),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        2 => (any::<usize>(), replacement()).prop_map(|(n, v)| Edit::Replace(n, v)),
        1 => any::<usize>().prop_map(Edit::Remove),
        4 => (any::<usize>(), prop_oneof![Just(0.0), Just(-1.0), Just(0.9), Just(0.999), Just(1.001), Just(1.1), Just(2.0)])
            .prop_map(|(n, f)| Edit::Scale(n, f)),
    ]
}

/// The JSON pointers of every node below the root, depth first.
fn pointers(v: &Value, at: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match v {
        Value::Array(a) => a.iter().enumerate().map(|(i, x)| (i.to_string(), x)).collect(),
        Value::Object(o) => o.iter().map(|(k, x)| (k.replace('~', "~0").replace('/', "~1"), x)).collect(),
        _ => vec![],
    };
    for (key, child) in children {
        let p = format!("{at}/{key}");
        out.push(p.clone());
        pointers(child, &p, out);
    }
}

fn apply(cert: &mut Value, e: &Edit) {
    let mut all = Vec::new();
    pointers(cert, "", &mut all);
    if matches!(e, Edit::Scale(..)) {
        all.retain(|p| cert.pointer(p).is_some_and(Value::is_number));
    }
    let (Edit::Replace(n, _) | Edit::Remove(n) | Edit::Scale(n, _)) = e;
    let Some(p) = all.get(n % all.len().max(1)) else { return };
    match e {
        Edit::Replace(_, r) => *cert.pointer_mut(p).expect("a listed pointer") = r.clone(),
        Edit::Scale(_, f) => {
            let v = cert.pointer_mut(p).expect("a listed pointer");
            if let Some(x) = v.as_f64() {
                *v = json!(x * f);
            }
        }
        Edit::Remove(_) => {
            let (parent, key) = p.rsplit_once('/').expect("below the root");
            match cert.pointer_mut(parent).expect("a listed pointer's parent") {
                Value::Array(a) => {
                    a.remove(key.parse::<usize>().expect("an index"));
                }
                Value::Object(o) => {
                    o.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                _ => unreachable!("a parent is an array or an object"),
            }
        }
    }
}

#[test]
fn the_seeds_are_valid() {
    for (sys, cert) in SEEDS.iter() {
        let cert: CertificateJson = serde_json::from_value(cert.clone()).unwrap();
        assert!(certify(&cert, sys).unwrap().valid);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn mutated_certificates_are_refused_or_rechecked(seed in 0..2_usize, edits in prop::collection::vec(edit(), 1..4)) {
        let (sys, cert) = &SEEDS[seed];
        let mut cert = cert.clone();
        for e in &edits {
            apply(&mut cert, e);
        }
        let text = serde_json::to_string(&cert).unwrap();
        match serde_json::from_str::<CertificateJson>(&text) {
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(!msg.contains("CertificateJson") && !msg.contains("untagged"), "{}", msg);
            }
            Ok(c) => {
                // Valid or not, or an error naming the problem: never a panic.
                if let Err(e) = certify(&c, sys) {
                    prop_assert!(!e.to_string().is_empty());
                }
                // Against the other system (same variables), whatever the mutation, it is never
                // valid: the repelling system has no proof (its runs leave Safe), and the safe
                // system's candidate is inductive, so no step out of it replays.
                let (other, _) = &SEEDS[1 - seed];
                if let Ok(r) = certify(&c, other) {
                    prop_assert!(!r.valid, "a mutated certificate was accepted for the wrong system: {:?}", r.checks);
                }
            }
        }
    }
}

/// Found by the fuzzer: a refutation whose witness lacks a value indexed past the end of the list
/// in the exact replay (a panic, exit 4 at the command line). It is a certificate error.
#[test]
fn a_witness_of_the_wrong_length_is_refused() {
    let (sys, cert) = &SEEDS[1];
    for key in ["state", "nondet"] {
        for extra in [false, true] {
            let mut cert = cert.clone();
            let values = cert["witness_exact"][key].as_array_mut().expect("an exact witness");
            if extra {
                values.push(json!("1/2"));
            } else if values.pop().is_none() {
                continue;
            }
            let cert: CertificateJson = serde_json::from_value(cert).unwrap();
            let e = certify(&cert, sys).unwrap_err().to_string();
            let want = if key == "state" { "witness state: state has" } else { "witness inputs: " };
            assert!(e.contains(want), "{e}");
        }
    }
}
