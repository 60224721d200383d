//! The temporal formula a front end asks about: a formula's text read in the system's scope, or a
//! property of the file by name (read again with its horizon `k` when one is given). The CLI's
//! `ctl`/`ltl` (`--formula`, `--property`, `--k`) and the Python package's `ctl`/`ltl`
//! (`formula`, `property=`, `k=`) both look it up here, so they accept and refuse the same
//! questions with the same messages (each spelling its own option names).

use crate::error::DriverError;
use crate::options::Spelling;
use crate::temporal::{Named, formula_scope};
use trestle_ir::System;
use trestle_ir::formula::{Ctl, Ltl};
use trestle_ir::parse::{ParseError, SimpleScope, parse_ctl, parse_ltl};
use trestle_ir::system::{Property, PropertyFormula};

/// A temporal logic whose formulas a property may hold.
pub trait Logic: Clone {
    /// What a property of this logic is, in an error: "a CTL formula (`ctl = ..`)".
    const WHAT: &'static str;
    fn parse(text: &str, scope: &SimpleScope) -> Result<Self, ParseError>;
    /// The formula of a property, when it is of this logic.
    fn of(formula: &PropertyFormula) -> Option<&Self>;
}

impl Logic for Ctl {
    const WHAT: &'static str = "a CTL formula (`ctl = ..`)";
    fn parse(text: &str, scope: &SimpleScope) -> Result<Ctl, ParseError> {
        parse_ctl(text, scope)
    }
    fn of(formula: &PropertyFormula) -> Option<&Ctl> {
        match formula {
            PropertyFormula::Ctl(phi) => Some(phi),
            _ => None,
        }
    }
}

impl Logic for Ltl {
    const WHAT: &'static str = "an LTL formula (`ltl = ..`)";
    fn parse(text: &str, scope: &SimpleScope) -> Result<Ltl, ParseError> {
        parse_ltl(text, scope)
    }
    fn of(formula: &PropertyFormula) -> Option<&Ltl> {
        match formula {
            PropertyFormula::Ltl(phi) => Some(phi),
            _ => None,
        }
    }
}

/// What a front end was asked: a formula's text or a property's name (exactly one), and the
/// horizon `k`.
#[derive(Clone, Copy, Debug)]
pub struct Asked<'a> {
    pub formula: Option<&'a str>,
    pub property: Option<&'a str>,
    pub k: Option<u32>,
}

/// The formula asked of `sys` (read from the file named `file`), with the system it is asked of
/// and its name and text. A property with `k` given is read again by `reload`, which reads the
/// file with one more override (`property.N.k=K`); a formula's text may use `k` as a constant.
pub fn asked<F: Logic>(
    sys: &System,
    file: &str,
    asked: Asked<'_>,
    reload: impl FnOnce(String) -> Result<System, DriverError>,
    s: Spelling,
) -> Result<(System, F, Named), DriverError> {
    let k_flag = s.flag("k");
    match (asked.formula, asked.property) {
        (Some(text), None) => {
            // Its one error is about `k`, which the front end spells its own way.
            let scope = formula_scope(sys, asked.k).map_err(|e| {
                DriverError::input(format!("{k_flag}{}", e.to_string().strip_prefix('k').unwrap_or_default()))
            })?;
            let phi = F::parse(text, &scope).map_err(|e| DriverError::input(format!("{}: {e}", s.flag("formula"))))?;
            Ok((sys.clone(), phi, Named { name: "formula".into(), text: text.into() }))
        }
        (None, Some(name)) => {
            let Some(index) = sys.properties.iter().position(|p| p.name == name) else {
                let known: Vec<&str> = sys.properties.iter().map(|p| p.name.as_str()).collect();
                return Err(DriverError::input(format!(
                    "no property '{name}' in {file} (properties: {})",
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                )));
            };
            let sys = match asked.k {
                None => sys.clone(),
                Some(_) if sys.properties[index].horizon.is_none() => {
                    return Err(DriverError::input(format!(
                        "{k_flag}: property '{name}' has no horizon parameter (give it `k = ..` in the file and use k \
                         in its formula)"
                    )));
                }
                Some(k) => reload(format!("property.{index}.k={k}"))?,
            };
            let p = &sys.properties[index];
            let phi =
                F::of(&p.formula).ok_or_else(|| DriverError::input(format!("property '{name}' is not {}", F::WHAT)))?;
            Ok((sys.clone(), phi.clone(), Named { name: name.into(), text: property_text(p) }))
        }
        _ => Err(DriverError::input(format!(
            "give {} (one of them)",
            match s {
                Spelling::Cli => "--formula or --property",
                Spelling::Python => "a formula or property=NAME",
            }
        ))),
    }
}

/// A property's formula as written, with the horizon it was read with.
pub fn property_text(p: &Property) -> String {
    match p.horizon {
        Some(k) => format!("{} (k = {k})", p.text),
        None => p.text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> String {
        format!(
            "{}\n[[property]]\nname = \"bounded\"\nk = 3\nltl = \"G<=k (x <= 10)\"\n\
             [[property]]\nname = \"plain\"\nctl = \"AG^3 x >= 0\"\n",
            trestle_testkit::WALK
        )
    }

    fn system(set: &[String]) -> System {
        let overrides = trestle_config::Overrides::parse(set).unwrap();
        trestle_config::load_system_from_str(&text(), std::path::Path::new("counter.toml"), &overrides).unwrap()
    }

    fn reload(extra: String) -> Result<System, DriverError> {
        Ok(system(&[extra]))
    }

    fn ask(formula: Option<&str>, property: Option<&str>, k: Option<u32>, s: Spelling) -> Result<String, String> {
        asked::<Ltl>(&system(&[]), "counter.toml", Asked { formula, property, k }, reload, s)
            .map(|(_, _, named)| named.text)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_property_is_read_again_with_its_horizon() {
        assert_eq!(ask(None, Some("bounded"), None, Spelling::Cli).unwrap(), "G<=k (x <= 10) (k = 3)");
        assert_eq!(ask(None, Some("bounded"), Some(7), Spelling::Cli).unwrap(), "G<=k (x <= 10) (k = 7)");
    }

    #[test]
    fn a_formula_may_use_k_when_given() {
        assert_eq!(ask(Some("G<=k (x >= 0)"), None, Some(2), Spelling::Cli).unwrap(), "G<=k (x >= 0)");
        let e = ask(Some("G<=k (x >= 0)"), None, None, Spelling::Python).unwrap_err();
        assert!(e.starts_with("formula: "), "{e}");
    }

    #[test]
    fn refusals_name_the_front_ends_options() {
        let e = ask(None, Some("nope"), None, Spelling::Cli).unwrap_err();
        assert_eq!(e, "no property 'nope' in counter.toml (properties: bounded, plain)");
        let e = ask(None, Some("plain"), Some(2), Spelling::Cli).unwrap_err();
        assert!(e.starts_with("--k: property 'plain' has no horizon"), "{e}");
        let e = ask(None, Some("plain"), Some(2), Spelling::Python).unwrap_err();
        assert!(e.starts_with("k: property 'plain' has no horizon"), "{e}");
        let e = ask(None, Some("plain"), None, Spelling::Cli).unwrap_err();
        assert_eq!(e, "property 'plain' is not an LTL formula (`ltl = ..`)");
        let e = ask(None, None, None, Spelling::Python).unwrap_err();
        assert_eq!(e, "give a formula or property=NAME (one of them)");
    }
}
