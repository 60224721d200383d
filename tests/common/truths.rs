//! The planted truth table, tests/planted/truths.toml (its keys are described at its top).

use trestle_testkit::repo;

/// One planted system and its truth.
pub struct Case {
    pub file: String,
    pub kind: String,
    pub issue: Vec<i64>,
    pub inductive: bool,
    pub init_in_inv: bool,
    pub inv_in_safe: bool,
    /// The truth `synth` is held to.
    pub system_safe: bool,
    pub witness: Option<String>,
    pub unknown_ok: Vec<String>,
    pub unsupported_ok: Vec<String>,
    /// A counterexample to inductiveness (state variable = exact value).
    pub example: Vec<(String, String)>,
    /// The non-deterministic inputs of that counterexample.
    pub example_nondet: Vec<(String, String)>,
}

impl Case {
    /// Init => Inv, Inv => Safe and inductiveness all hold: `check` must say safe.
    pub fn candidate_safe(&self) -> bool {
        self.inductive && self.init_in_inv && self.inv_in_safe
    }

    pub fn candidate_truth(&self) -> String {
        let mut parts = Vec::new();
        if !self.init_in_inv {
            parts.push("Init is not inside Inv");
        }
        if !self.inv_in_safe {
            parts.push("Inv is not inside Safe");
        }
        parts.push(if self.inductive { "Inv is inductive" } else { "Inv is not inductive" });
        parts.join(", ")
    }

    /// Whether `list` names the engine or its family.
    pub fn allows(&self, list: &[String], engine: &str, family: &str) -> bool {
        list.iter().any(|t| t == engine || t == family)
    }
}

fn strings(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(|v| v.as_array())
        .map(|a| a.iter().map(|s| s.as_str().expect("a list of names").to_string()).collect())
        .unwrap_or_default()
}

fn assignments(v: Option<&toml::Value>) -> Vec<(String, String)> {
    v.and_then(|v| v.as_table())
        .map(|t| t.iter().map(|(k, v)| (k.clone(), v.as_str().expect("exact values as strings").to_string())).collect())
        .unwrap_or_default()
}

/// Every case of tests/planted/truths.toml, in the file's order.
pub fn cases() -> Vec<Case> {
    let path = repo().join("tests/planted/truths.toml");
    let text = std::fs::read_to_string(&path).expect("tests/planted/truths.toml is readable");
    let doc: toml::Table = text.parse().expect("truths.toml is TOML");
    let list = doc["case"].as_array().expect("[[case]] entries");
    list.iter()
        .map(|c| {
            let flag = |k: &str, default: bool| c.get(k).map_or(default, |v| v.as_bool().expect("a boolean"));
            let text = |k: &str| c.get(k).map(|v| v.as_str().expect("a string").to_string());
            let file = text("file").expect("every case names its file");
            let system = text("system").expect("every case states the system's truth");
            assert!(system == "safe" || system == "unsafe", "{file}: system = safe or unsafe");
            Case {
                kind: text("kind").unwrap_or_default(),
                issue: c
                    .get("issue")
                    .and_then(|v| v.as_array())
                    .map_or(vec![], |a| a.iter().map(|i| i.as_integer().expect("issue items are numbers")).collect()),
                inductive: c.get("inductive").and_then(|v| v.as_bool()).expect("every case states inductive"),
                init_in_inv: flag("init_in_inv", true),
                inv_in_safe: flag("inv_in_safe", true),
                system_safe: system == "safe",
                witness: text("witness"),
                unknown_ok: strings(c.get("unknown_ok")),
                unsupported_ok: strings(c.get("unsupported_ok")),
                example: assignments(c.get("example")),
                example_nondet: assignments(c.get("example_nondet")),
                file,
            }
        })
        .collect()
}
