//! TOML text → a `toml::Table` in which every float is the literal's text.
//!
//! A TOML parser gives floats as f64: `1.00000000000000000001` arrives as 1 and `1e-400` as 0,
//! silently. Trestle's numbers are exact, so the file is parsed with `toml_edit`, which keeps the
//! text of every value, and each float becomes a string holding its literal (underscores and a
//! leading `+` removed). Strings are where exact numbers were already accepted (`"1/3"`), so the
//! rest of the reader needs no second path: numbers are parsed exactly by
//! [`trestle_ir::num::parse_rational`], and inline network weights, which are f64 by definition,
//! are read as the nearest f64 of the same text (see [`crate::raw::Weight`]). `inf` and `nan`
//! are refused here, naming the key.

/// Parses a whole document (the text of `path`). A syntax error says where it is and quotes at
/// most a short, printable excerpt of the line, only from a file named `*.toml`
/// ([`atomic_output::input::position`]): toml's own message printed the whole line, which for
/// `trestle check /etc/shadow` was a password hash and for a minified line 200 KB.
pub(crate) fn parse_table(text: &str, path: &Path) -> Result<toml::Table, String> {
    let doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let start = e.span().map(|s| s.start);
        atomic_output::input::malformed_toml(path, text, e.message(), start, atomic_output::input::SYSTEM_FILE)
    })?;
    table(doc.as_table(), &mut Vec::new()).map_err(|e| format!("malformed TOML: {e}"))
}

use std::path::Path;

/// Parses the value of a `--set KEY=VALUE` (`None` when VALUE is not a TOML value, e.g. a bare
/// path, which is then taken as a string).
pub(crate) fn parse_value(text: &str) -> Option<Result<toml::Value, String>> {
    let doc: toml_edit::DocumentMut = format!("v = {text}").parse().ok()?;
    let item = doc.as_table().get("v")?;
    let value = item_value(item, &mut Vec::new()).map(|v| v.expect("a value, not a table header"));
    // The key of a problem inside VALUE is the --set key, which the caller names.
    Some(value.map_err(|e| {
        e.strip_prefix("key `").and_then(|r| r.split_once("`: ")).map_or(e.clone(), |(_, m)| m.to_string())
    }))
}

fn table(t: &toml_edit::Table, path: &mut Vec<String>) -> Result<toml::Table, String> {
    let mut out = toml::Table::new();
    for (key, item) in t.iter() {
        path.push(key.to_string());
        if let Some(v) = item_value(item, path)? {
            out.insert(key.to_string(), v);
        }
        path.pop();
    }
    Ok(out)
}

fn item_value(item: &toml_edit::Item, path: &mut Vec<String>) -> Result<Option<toml::Value>, String> {
    Ok(match item {
        toml_edit::Item::None => None,
        toml_edit::Item::Value(v) => Some(value(v, path)?),
        toml_edit::Item::Table(t) => Some(toml::Value::Table(table(t, path)?)),
        toml_edit::Item::ArrayOfTables(a) => {
            let mut items = Vec::new();
            for (i, t) in a.iter().enumerate() {
                path.push(i.to_string());
                items.push(toml::Value::Table(table(t, path)?));
                path.pop();
            }
            Some(toml::Value::Array(items))
        }
    })
}

fn value(v: &toml_edit::Value, path: &mut Vec<String>) -> Result<toml::Value, String> {
    Ok(match v {
        toml_edit::Value::String(s) => toml::Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => toml::Value::Integer(*i.value()),
        toml_edit::Value::Float(f) => toml::Value::String(float_text(&f.display_repr(), path)?),
        toml_edit::Value::Boolean(b) => toml::Value::Boolean(*b.value()),
        toml_edit::Value::Datetime(d) => match d.value().to_string().parse() {
            Ok(d) => toml::Value::Datetime(d),
            Err(_) => toml::Value::String(d.value().to_string()),
        },
        toml_edit::Value::Array(a) => {
            let mut items = Vec::new();
            for (i, x) in a.iter().enumerate() {
                path.push(i.to_string());
                items.push(value(x, path)?);
                path.pop();
            }
            toml::Value::Array(items)
        }
        toml_edit::Value::InlineTable(t) => {
            let mut out = toml::Table::new();
            for (key, x) in t.iter() {
                path.push(key.to_string());
                out.insert(key.to_string(), value(x, path)?);
                path.pop();
            }
            toml::Value::Table(out)
        }
    })
}

/// A TOML float literal as a decimal `parse_rational` reads (`+1_000.5e-3` → `1000.5e-3`).
fn float_text(raw: &str, path: &[String]) -> Result<String, String> {
    let text: String = raw.trim().chars().filter(|&c| c != '_').collect();
    let text = text.strip_prefix('+').map(str::to_string).unwrap_or(text);
    if text.contains("inf") || text.contains("nan") {
        return Err(format!("key `{}`: {raw} is not a finite number", path.join(".")));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_their_text() {
        let t = parse_table(
            "a = 1.00000000000000000001\nb = [+1_000.5, -0.0, 1e-400]\n[c]\nd = { e = 2.5E+3 }\n",
            Path::new("t.toml"),
        )
        .unwrap();
        assert_eq!(t["a"].as_str(), Some("1.00000000000000000001"));
        let b: Vec<&str> = t["b"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(b, ["1000.5", "-0.0", "1e-400"]);
        assert_eq!(t["c"]["d"]["e"].as_str(), Some("2.5E+3"));
    }

    #[test]
    fn non_finite_floats_are_refused_with_their_key() {
        for (text, want) in [
            ("x = inf", "malformed TOML: key `x`: inf is not a finite number"),
            ("[s]\nx = [0, -nan]", "malformed TOML: key `s.x.1`: -nan is not a finite number"),
            ("[[b]]\n[[b]]\ny = { z = +inf }", "malformed TOML: key `b.1.y.z`: +inf is not a finite number"),
        ] {
            assert_eq!(parse_table(text, Path::new("t.toml")).unwrap_err(), want);
        }
        assert!(parse_table("x = 1e400", Path::new("t.toml")).unwrap_err().contains("overflowed"));
        assert!(parse_table("x = 99999999999999999999", Path::new("t.toml")).unwrap_err().contains("overflowed"));
    }

    /// Issue 39, items 15 and 16: a parse error quoted the whole line.
    #[test]
    fn syntax_errors_quote_a_short_excerpt_of_toml_files_only() {
        let shadow = "root:$y$j9T$secrethash:19000:0:99999:7:::\n";
        let e = parse_table(shadow, Path::new("/etc/shadow")).unwrap_err();
        assert!(e.starts_with("malformed TOML at line 1, column "), "{e}");
        assert!(!e.contains("secret") && !e.contains("root"), "{e}");
        let long = format!("x = [{}\u{7}", "1, ".repeat(100_000));
        let e = parse_table(&long, Path::new("big.toml")).unwrap_err();
        assert!(
            e.len() < 500 && e.contains("…") && e.starts_with("malformed TOML at line 1, column"),
            "{} bytes: {e}",
            e.len()
        );
    }

    #[test]
    fn set_values() {
        assert_eq!(parse_value("0.1").unwrap().unwrap().as_str(), Some("0.1"));
        assert_eq!(parse_value("-3").unwrap().unwrap().as_integer(), Some(-3));
        assert!(parse_value("../m/net.onnx").is_none());
        assert_eq!(parse_value("nan").unwrap().unwrap_err(), "nan is not a finite number");
        assert_eq!(parse_value("[0, -inf]").unwrap().unwrap_err(), "-inf is not a finite number");
    }
}
