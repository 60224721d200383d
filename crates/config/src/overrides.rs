//! `--set KEY=VALUE` overrides applied to the TOML document before it is interpreted.

use std::collections::BTreeSet;

/// Parsed `--set` arguments, in command-line order.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `(KEY, VALUE)` pairs in command-line order, keys as written (see [`canonical_key`]); a later
    /// pair overrides an earlier one of the same key.
    pub items: Vec<(String, toml::Value)>,
}

impl Overrides {
    /// Parses `KEY=VALUE`. VALUE is read as a TOML value when it is one (`-22.5`, `[0, 1]`, `true`,
    /// `"text"`; floats keep their text, as in a file), otherwise as a plain string
    /// (`../models/net.onnx`).
    pub fn parse(args: &[String]) -> Result<Overrides, String> {
        let mut items = Vec::new();
        for a in args {
            let (key, value) =
                a.split_once('=').ok_or_else(|| format!("--set {a}: expected KEY=VALUE (e.g. init.hdot0=-22.5)"))?;
            let key = key.trim();
            if key.is_empty() || key.split('.').any(str::is_empty) {
                return Err(format!("--set {a}: malformed key '{key}'"));
            }
            let parsed = match crate::document::parse_value(value) {
                Some(v) => v.map_err(|e| format!("--set {a}: {e}"))?,
                None => toml::Value::String(value.to_string()),
            };
            items.push((key.to_string(), parsed));
        }
        Ok(Overrides { items })
    }

    /// The overridden keys in canonical form: a path among them is relative to the working
    /// directory, not to the file.
    pub fn keys(&self) -> BTreeSet<String> {
        self.items.iter().map(|(k, _)| canonical_key(k)).collect()
    }

    /// Applies every override to the document; a path segment that is a number indexes an array.
    pub fn apply(&self, doc: &mut toml::Table) -> Result<(), String> {
        for (key, value) in &self.items {
            set_path(doc, key, value.clone())?;
        }
        Ok(())
    }
}

/// `controllers.0.model` and `controllers[0].model` name the same key.
pub fn canonical_key(key: &str) -> String {
    key.replace('[', ".").replace(']', "")
}

fn set_path(doc: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let canon = canonical_key(key);
    let parts: Vec<&str> = canon.split('.').collect();
    let (first, rest) = parts.split_first().expect("keys are non-empty (checked in parse)");
    if rest.is_empty() {
        doc.insert(first.to_string(), value);
        return Ok(());
    }
    let mut cur = doc.entry(first.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
    for (i, part) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value);
                    return Ok(());
                }
                t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            toml::Value::Array(items) => {
                let idx: usize = part.parse().map_err(|_| format!("--set {key}: '{part}' must be an array index"))?;
                let len = items.len();
                let slot = items
                    .get_mut(idx)
                    .ok_or_else(|| format!("--set {key}: index {idx} out of range (length {len})"))?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => return Err(format!("--set {key}: '{}' is not a table", parts[..=i].join("."))),
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse_values_and_paths() {
        let o = Overrides::parse(&[
            "init.hdot0=-22.5".into(),
            "controller.model=../m/net.onnx".into(),
            "branch.1.name=\"b\"".into(),
        ])
        .unwrap();
        let mut doc: toml::Table = toml::from_str(
            "[init]\nhdot0 = -19.5\n[controller]\nmodel = 'a.onnx'\n[[branch]]\nname='x'\n[[branch]]\nname='y'\n",
        )
        .unwrap();
        o.apply(&mut doc).unwrap();
        assert_eq!(doc["init"]["hdot0"].as_str(), Some("-22.5"));
        assert_eq!(doc["controller"]["model"].as_str(), Some("../m/net.onnx"));
        assert_eq!(doc["branch"][1]["name"].as_str(), Some("b"));
        assert!(Overrides::parse(&["novalue".into()]).is_err());
        let bad = Overrides::parse(&["branch.7.name=1".into()]).unwrap();
        assert!(bad.apply(&mut doc).unwrap_err().contains("out of range"));
        assert_eq!(canonical_key("controllers[0].model"), "controllers.0.model");
    }
}
